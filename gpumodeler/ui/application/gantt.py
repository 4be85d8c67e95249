"""The application's Gantt chart: one row per engine and link, a bar per step, the critical
path outlined, a tooltip with each step's prediction on hover; for an application imported
from a trace, each step's measured interval as a grey strip under its bar. It renders a timeline result
(:func:`gpumodeler.service.application.run_application`); it computes nothing. Export: SVG
(vector text, the same chart as the report), PNG (that SVG rendered at a chosen scale) and
CSV of the steps."""
from __future__ import annotations

import bisect
import csv

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QToolTip

from gpumodeler.core.units_format import time_unit
from gpumodeler.report.svg import PALETTE, CRITICAL

MERGED = "#8c8c8c"  # a run of steps narrower than a pixel, drawn as one bar


#: the measured strip under each imported step's bar: its height (of a row's 1) and colour
MEASURED_STRIP = 0.18
MEASURED_COLOR = "#9e9e9e"


class GanttChart(pg.PlotWidget):
    def __init__(self, parent=None):
        super().__init__(parent, background="w")
        self.setMinimumHeight(160)
        self.plotItem.showGrid(x=True, y=False, alpha=0.3)
        self.plotItem.setMouseEnabled(x=True, y=False)
        self.plotItem.hideButtons()
        self.result: dict | None = None
        self.rows: list[str] = []
        self.bars: list[dict] = []
        self.measured_strips: list = []   # (row, x0, x1) of the measured intervals drawn
        self._items = []
        self._bar_items = []  # the bars' items, redrawn with the level of detail
        self._lod_paused = False
        self._lanes: list = []  # per row, its bars by start
        self._lane_starts: list = []
        self._lane_widest: list = []
        self.scene().sigMouseMoved.connect(self._hover)
        self.plotItem.vb.sigXRangeChanged.connect(self._view_changed)
        self.plotItem.vb.sigResized.connect(self._view_changed)
        self.setLabel("bottom", "time")

    def show_result(self, result: dict | None) -> None:
        for item in self._items + self._bar_items:
            self.plotItem.removeItem(item)
        self._items, self._bar_items, self.rows, self.bars = [], [], [], []
        self._lanes, self._lane_starts, self._lane_widest = [], [], []
        self.measured_strips: list = []
        self.result = result
        if not result or not result["steps"]:
            self.getAxis("left").setTicks([[]])
            self.setTitle("")
            return
        unit, scale = time_unit(result["makespan_s"] if result["makespan_s"] > 0 else 1.0)
        self.setLabel("bottom", f"time ({unit})")
        colors: dict = {}
        row_of: dict = {}
        for s in result["steps"]:
            for r in s["engines"] + s["links"] or ["(no engine)"]:
                if r not in row_of:
                    row_of[r] = len(self.rows)
                    self.rows.append(r)
                group = s["kind"] + (s["device"] or "")
                color = colors.setdefault(group, PALETTE[len(colors) % len(PALETTE)])
                self.bars.append({"row": row_of[r], "x0": s["start_s"] / scale, "x1": s["end_s"] / scale,
                                  "step": s, "color": color})
        # per row, the bars by start (level of detail and hover look them up there)
        self._lanes = [[] for _ in self.rows]
        for b in self.bars:
            self._lanes[b["row"]].append(b)
        for lane in self._lanes:
            lane.sort(key=lambda b: (b["x0"], b["x1"]))
        self._lane_starts = [[b["x0"] for b in lane] for lane in self._lanes]
        self._lane_widest = [max((b["x1"] - b["x0"] for b in lane), default=0.0) for lane in self._lanes]
        for b in self.bars:
            width = max(b["x1"] - b["x0"], 0.0)
            if width > 0.08 * (result["makespan_s"] / scale):  # room for its name
                label = pg.TextItem(b["step"]["name"], color="w", anchor=(0.5, 0.5))
                label.setPos(b["x0"] + width / 2, -b["row"])
                self.plotItem.addItem(label)
                self._items.append(label)
        right = max(b["x1"] for b in self.bars) or 1.0
        right = max(right, self._measured_overlay(scale))
        self.getAxis("left").setTicks([[(-i, name) for i, name in enumerate(self.rows)]])
        self.plotItem.setYRange(-len(self.rows) + 0.4, 0.6, padding=0.02)
        self._lod_paused = True  # one drawing once the ranges are set, not one per range
        try:
            self.plotItem.setXRange(0, right, padding=0.02)
        finally:
            self._lod_paused = False
        measured = result.get("measured_makespan_s")
        self.setTitle(f"makespan {result['makespan_s']:.6g} s"
                      + ("" if measured is None else
                         f" · measured {measured:.6g} s (grey strips, from the trace)"))
        self._draw_bars()

    def _measured_overlay(self, scale: float) -> float:
        """For steps imported from a trace: the measured interval as a grey strip under the
        predicted bar, on the same row (one item for all strips); the right end drawn."""
        strips = [(b["row"], b["step"]["measured_start_s"] / scale,
                   b["step"]["measured_end_s"] / scale)
                  for b in self.bars if b["step"].get("measured_start_s") is not None]
        if not strips:
            return 0.0
        item = pg.BarGraphItem(x0=[x0 for _, x0, _ in strips],
                               y0=[-row - 0.45 for row, _, _ in strips],
                               width=[max(x1 - x0, 0.0) for _, x0, x1 in strips],
                               height=[MEASURED_STRIP] * len(strips),
                               brush=QColor(MEASURED_COLOR), pen=pg.mkPen(None))
        self.plotItem.addItem(item)
        self._items.append(item)
        self.measured_strips = strips
        return max(x1 for _, _, x1 in strips)

    # -- drawing with level of detail ----------------------------------------------------
    def _pixel(self) -> float:
        """The width of one screen pixel in the chart's time units (0 before it is shown)."""
        (x0, x1), _ = self.plotItem.vb.viewRange()
        pixels = self.plotItem.vb.width()
        return (x1 - x0) / pixels if pixels > 0 and x1 > x0 else 0.0

    def _draw_bars(self) -> None:
        """Draw the bars: one item per colour and outline (not one per step), and on each row
        a run of steps narrower than a pixel that touch within a pixel as one bar (level of
        detail, :func:`gpumodeler.report.application.merged_runs`), so 10^5 steps draw
        as fast as a screenful. Redrawn when the time axis is zoomed or panned."""
        from gpumodeler.report.application import merged_runs

        for item in self._bar_items:
            self.plotItem.removeItem(item)
        self._bar_items = []
        if not self.bars:
            return
        pixel = self._pixel()
        (v0, v1), _ = self.plotItem.vb.viewRange()
        groups: dict = {}  # (colour, critical) -> x0s, y0s, widths
        for row, lane in enumerate(self._lanes):
            # only the bars that can reach the visible range
            lo = bisect.bisect_left(self._lane_starts[row], v0 - self._lane_widest[row])
            hi = bisect.bisect_right(self._lane_starts[row], v1)
            for run in merged_runs(lane[lo:hi], pixel, start="x0", end="x1", presorted=True):
                if len(run) == 1:
                    b = run[0]
                    color, critical, x0, x1 = b["color"], b["step"]["critical"], b["x0"], b["x1"]
                else:
                    color, x0 = MERGED, run[0]["x0"]
                    x1 = max(b["x1"] for b in run)
                    critical = any(b["step"]["critical"] for b in run)
                g = groups.setdefault((color, critical), ([], [], []))
                g[0].append(x0)
                g[1].append(-row - 0.4)
                g[2].append(max(x1 - x0, pixel))
        for (color, critical), (x0s, y0s, widths) in groups.items():
            pen = pg.mkPen(CRITICAL, width=2) if critical else pg.mkPen("#444444", width=0.5)
            item = pg.BarGraphItem(x0=np.array(x0s), y0=np.array(y0s), width=np.array(widths), height=0.8,
                                   brush=QColor(color), pen=pen)
            self.plotItem.addItem(item)
            self._bar_items.append(item)

    def _view_changed(self, *_args) -> None:
        if self.bars and not self._lod_paused:
            self._draw_bars()

    def step_at(self, x: float, y: float) -> dict | None:
        """The step whose bar covers data point (x, y), or None (the first by start on its row
        when bars overlap; a bisection on the row, not a scan of every bar)."""
        row = round(-y)
        if not (0 <= row < len(self._lanes)) or abs(y + row) > 0.4:
            return None
        starts, lane = self._lane_starts[row], self._lanes[row]
        lo = bisect.bisect_left(starts, x - self._lane_widest[row])
        hi = bisect.bisect_right(starts, x)
        for b in lane[lo:hi]:
            if b["x0"] <= x <= b["x1"]:
                return b["step"]
        return None

    def tooltip(self, step: dict) -> str:
        text = (f"{step['name']} ({step['kind']})\nstart {step['start_s']:.6g} s, end {step['end_s']:.6g} s\n"
                f"alone {step['alone_s']:.6g} s")
        if step["waited_s"] > 1e-15:
            text += f", queued {step['waited_s']:.6g} s"
        if step["stretched_s"] > 1e-15:
            text += f", slowed by sharing {step['stretched_s']:.6g} s"
        detail = step.get("prediction") or {}
        if detail.get("mode") == "measured":
            text += (f"\nthe measured time × {detail.get('scale', 1.0):.4g} "
                     f"({detail.get('rule', '')})")
        elif step["kind"] == "kernel" and detail:
            text += (f"\n{detail.get('mode')}-bound, limited by {detail.get('limiting_resource')}; "
                     f"occupancy {detail.get('occupancy_warps_per_sm'):g} warps/SM")
        if step.get("measured_s") is not None:
            text += f"\nmeasured {step['measured_s']:.6g} s"
            if step.get("measured_start_s") is not None:
                text += f" from {step['measured_start_s']:.6g} s"
        if step["energy_j"]:
            text += f"\nenergy {step['energy_j']:.4g} J"
        if step["critical"]:
            text += "\non the critical path"
        return text

    def _hover(self, pos) -> None:
        if not self.bars:
            return
        point = self.plotItem.vb.mapSceneToView(pos)
        step = self.step_at(point.x(), point.y())
        if step is not None:
            QToolTip.showText(self.mapToGlobal(self.mapFromScene(pos).toPoint()), self.tooltip(step), self)
        else:
            QToolTip.hideText()

    # -- export -------------------------------------------------------------------------
    def svg_text(self) -> str:
        from gpumodeler.report.application import timeline_svg
        if not self.result:
            raise ValueError("nothing to export: the application has no steps that run")
        return timeline_svg(self.result)

    def export_svg(self, path: str) -> None:
        from gpumodeler.report.files import write_text_atomically
        write_text_atomically(path, self.svg_text())

    def export_png(self, path: str, scale: float = 2.0) -> None:
        from PySide6.QtCore import QByteArray
        from PySide6.QtSvg import QSvgRenderer

        from gpumodeler.ui.screenshot import save_png
        renderer = QSvgRenderer(QByteArray(self.svg_text().encode("utf-8")))
        size = renderer.defaultSize() * scale
        image = QImage(size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.white)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        save_png(image, path)

    def export_csv(self, path: str) -> None:
        if not self.result:
            raise ValueError("nothing to export: the application has no steps that run")
        from gpumodeler.db.atomic_files import output_file
        with output_file(path, newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "name", "kind", "engine", "start_s", "end_s", "alone_s", "energy_j", "critical"])
            for s in self.result["steps"]:
                w.writerow([s["id"], s["name"], s["kind"], s["engine"] or "", repr(s["start_s"]),
                            repr(s["end_s"]), repr(s["alone_s"]),
                            "" if s["energy_j"] is None else repr(s["energy_j"]), int(s["critical"])])
