"""The application's Gantt chart: one lane per engine and link, a bar per step coloured by
its kind (legend in the title), the critical path outlined in red with every other bar faded,
a tooltip with each step's prediction on hover; for an application imported from a trace,
each step's measured interval as a grey strip under its bar. It renders a timeline result
(:func:`gpumodeler.service.application.run_application`); it computes nothing. Export: SVG
(vector text, the same chart as the report), PNG (that SVG rendered at a chosen scale) and
CSV of the steps.

Readable at any size: lanes take the view's height (at least
:data:`~gpumodeler.ui.application.gantt_labels.MIN_LANE_PX` each; more lanes scroll by
dragging up and down), the wheel or :meth:`GanttChart.zoom` zooms the time axis and a drag
pans it, and the bar and lane names are placed again after every change of the view by the
pure :mod:`gpumodeler.ui.application.gantt_labels` (shortened, moved beside the bar, or
hidden; never overlapping)."""
from __future__ import annotations

import bisect
import csv

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import QToolTip

from gpumodeler.core.units_format import format_time, time_unit
from gpumodeler.report.svg import PALETTE, CRITICAL
from gpumodeler.ui.application.gantt_labels import (lane_names, lanes_in_view,
                                                     place_bar_labels)

#: a bar's colour by its step's kind (the legend in the chart's title says which)
KIND_COLORS = {"kernel": PALETTE[1], "copy": PALETTE[0], "sync": PALETTE[5]}
OTHER_COLOR = PALETTE[3]
FADED_ALPHA = 110      # bars off the critical path, out of 255
AXIS_PX = 132          # the lane names' column
LABEL_MARGIN_PX = 1    # around a bar's name (its item's bounding rect)

MERGED = "#8c8c8c"  # a run of steps narrower than a pixel, drawn as one bar
MAX_NAMED = 2000    # more bars in view than this: only those a pixel wide or more get a name


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
        self.plotItem.setMenuEnabled(False)
        self.getAxis("left").setWidth(AXIS_PX)
        self.result: dict | None = None
        self.rows: list[str] = []
        self.bars: list[dict] = []
        self.measured_strips: list = []   # (row, x0, x1) of the measured intervals drawn
        self._items = []
        self.label_items: list[pg.TextItem] = []   # the bars' names as drawn now
        self._bar_items: list = []  # the bars' items, redrawn with the level of detail
        self._lod_paused = False
        self._fitting = False
        self._lanes: list = []  # per row, its bars by start
        self._lane_starts: list = []
        self._lane_widest: list = []
        self.show_links = True   # a lane per link direction besides the engines' lanes
        self.font = QFont()
        self.font.setPointSizeF(max(self.font.pointSizeF() - 1, 7.0))
        self.scene().sigMouseMoved.connect(self._hover)
        self.plotItem.vb.sigRangeChanged.connect(lambda *_a: self._view_changed())
        self.plotItem.vb.sigResized.connect(lambda *_a: self._resized())
        self.setLabel("bottom", "time")

    def show_result(self, result: dict | None) -> None:
        # a live edit of the same application keeps the user's zoom and lane scroll
        same = bool(self.result and result and self.result.get("name") == result.get("name")
                    and self.bars)
        kept = self.plotItem.vb.viewRange()[0] if same and not self._showing_whole() else None
        for item in self._items + self.label_items + self._bar_items:
            self.plotItem.removeItem(item)
        self._items, self.rows, self.bars, self.label_items = [], [], [], []
        self._bar_items, self._lanes, self._lane_starts, self._lane_widest = [], [], [], []
        self.measured_strips = []
        self.result = result
        if not result or not result["steps"]:
            self.getAxis("left").setTicks([[]])
            self.setTitle("")
            return
        unit, scale = time_unit(result["makespan_s"] if result["makespan_s"] > 0 else 1.0)
        self.setLabel("bottom", f"time ({unit})")
        row_of: dict = {}
        for s in result["steps"]:
            for r in s["engines"] + (s["links"] if self.show_links else []) or ["(no engine)"]:
                if r not in row_of:
                    row_of[r] = len(self.rows)
                    self.rows.append(r)
                self.bars.append({"row": row_of[r], "x0": s["start_s"] / scale, "x1": s["end_s"] / scale,
                                  "step": s, "color": KIND_COLORS.get(s["kind"], OTHER_COLOR)})
        # per row, the bars by start (level of detail, names and hover look them up there)
        self._lanes = [[] for _ in self.rows]
        for b in self.bars:
            self._lanes[b["row"]].append(b)
        for lane in self._lanes:
            lane.sort(key=lambda b: (b["x0"], b["x1"]))
        self._lane_starts = [[b["x0"] for b in lane] for lane in self._lanes]
        self._lane_widest = [max((b["x1"] - b["x0"] for b in lane), default=0.0) for lane in self._lanes]
        end = max(max(b["x1"] for b in self.bars), self._measured_overlay(scale)) or 1.0
        self._lod_paused = True  # one drawing once the ranges are set, not one per range
        try:
            self.plotItem.setLimits(xMin=-0.02 * end, xMax=1.02 * end, minXRange=end * 1e-6,
                                    maxXRange=1.04 * end)
            if kept is not None and kept[0] < end:
                self.plotItem.setXRange(kept[0], min(kept[1], 1.02 * end), padding=0)
            else:
                self.plotItem.setXRange(0, end, padding=0.02)
        finally:
            self._lod_paused = False
        self.setTitle(self._title(result))
        self._draw_bars()
        self._fit_lanes(to_top=not same)

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

    def set_show_links(self, on: bool) -> None:
        """Show the links' lanes (each direction of a link that carries a copy) or only the
        engines' (fewer lanes: a copy also shows on its devices' copy engines)."""
        if on != self.show_links:
            self.show_links = on
            result, self.result = self.result, None   # drawn again from the top
            self.show_result(result)

    def _title(self, result: dict) -> str:
        """The makespan (and the measured one of an imported trace) and the legend: a swatch
        per step kind present, and the critical path's outline."""
        kinds = sorted({s["kind"] for s in result["steps"]})
        swatches = "".join(f'&nbsp;&nbsp;<span style="color:{KIND_COLORS.get(k, OTHER_COLOR)}">&#9632;</span>'
                           f'&nbsp;{k}' for k in kinds)
        measured = result.get("measured_makespan_s")
        measured_text = ("" if measured is None else
                         f' · measured <b>{format_time(measured)}</b> (grey strips, from the trace)')
        return (f'<span style="color:#222">makespan <b>{format_time(result["makespan_s"])}</b>'
                f'{measured_text}&nbsp;&nbsp;&nbsp;{swatches}&nbsp;&nbsp;&nbsp;'
                f'<span style="color:{CRITICAL}">&#9633;</span>'
                f'&nbsp;critical path (others faded)</span>')

    # -- drawing with level of detail ----------------------------------------------------
    def _pixel(self) -> float:
        """The width of one screen pixel in the chart's time units (0 before it is shown)."""
        (x0, x1), _ = self.plotItem.vb.viewRange()
        pixels = self.plotItem.vb.width()
        return (x1 - x0) / pixels if pixels > 0 and x1 > x0 else 0.0

    def _visible(self, row: int, x_lo: float, x_hi: float) -> list:
        """The bars of lane ``row`` that can reach [x_lo, x_hi] (a bisection, not a scan)."""
        lo = bisect.bisect_left(self._lane_starts[row], x_lo - self._lane_widest[row])
        hi = bisect.bisect_right(self._lane_starts[row], x_hi)
        return self._lanes[row][lo:hi]

    def _draw_bars(self) -> None:
        """Draw the bars: one item per colour and outline (not one per step), and on each row
        a run of steps narrower than a pixel that touch within a pixel as one bar (level of
        detail, :func:`gpumodeler.report.application.merged_runs`), so 10^5 steps draw
        as fast as a screenful. Bars off the critical path are faded; a sync (no length)
        still shows a pixel wide. Redrawn when the time axis is zoomed or panned."""
        from gpumodeler.report.application import merged_runs

        for item in self._bar_items:
            self.plotItem.removeItem(item)
        self._bar_items = []
        if not self.bars:
            return
        pixel = self._pixel()
        thinnest = pixel if pixel > 0 else 0.002 * (max(b["x1"] for b in self.bars) or 1.0)
        (v0, v1), _ = self.plotItem.vb.viewRange()
        groups: dict = {}  # (colour, critical) -> x0s, y0s, widths
        for row in range(len(self._lanes)):
            for run in merged_runs(self._visible(row, v0, v1), pixel, start="x0", end="x1",
                                   presorted=True):
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
                g[2].append(max(x1 - x0, thinnest))
        for (color, critical), (x0s, y0s, widths) in groups.items():
            brush = QColor(color)
            if critical:
                pen = pg.mkPen(CRITICAL, width=2.5)
            else:
                brush.setAlpha(FADED_ALPHA)
                pen = pg.mkPen("#666666", width=0.5)
            item = pg.BarGraphItem(x0=np.array(x0s), y0=np.array(y0s), width=np.array(widths), height=0.8,
                                   brush=brush, pen=pen)
            self.plotItem.addItem(item)
            self._bar_items.append(item)

    def _view_changed(self) -> None:
        if self.bars and not self._lod_paused:
            self._draw_bars()
            self._place_labels()

    def _resized(self) -> None:
        if self.bars:
            self._draw_bars()
        self._fit_lanes()

    # -- the view: lanes and names ------------------------------------------------------
    def _fit_lanes(self, to_top: bool = False) -> None:
        """Lanes sized to the view: as many as fit at a readable height, the rest reached by
        dragging vertically (the left axis then says which lanes are shown); the first lane
        at the top after ``to_top``, else the top lane shown stays; then the names are placed
        again."""
        vb = self.plotItem.vb
        n = len(self.rows)
        if not n:
            return
        shown = lanes_in_view(n, vb.height())
        top = 0.5
        bottom = min(top - shown, top - n)
        high = top if to_top else min(max(vb.viewRange()[1][1], bottom + shown), top)
        high = top - round(top - high)   # whole lanes: none cut at the top edge
        self._fitting = True   # the range changes below place the names once, at the end
        try:
            self.plotItem.setLimits(yMin=bottom, yMax=top, minYRange=shown, maxYRange=shown)
            self.plotItem.setMouseEnabled(x=True, y=n > shown)
            self.plotItem.setYRange(high - shown, high, padding=0)
        finally:
            self._fitting = False
        self.setLabel("left", f"{int(shown)} of {n} lanes: drag up or down" if n > shown else "")
        self._place_labels()

    def _place_labels(self) -> None:
        """Put the bars' and lanes' names where they fit in the view as it is now."""
        if self._fitting:
            return
        for item in self.label_items:
            self.plotItem.removeItem(item)
        self.label_items = []
        if not self.bars:
            return
        vb = self.plotItem.vb
        (x_lo, x_hi), (y_lo, y_hi) = vb.viewRange()
        if vb.width() <= 0 or vb.height() <= 0 or x_hi <= x_lo or y_hi <= y_lo:
            return
        px_per_x = vb.width() / (x_hi - x_lo)
        lane_px = vb.height() / (y_hi - y_lo)
        metrics = QFontMetricsF(self.font)
        text_px = metrics.height() + 2 * LABEL_MARGIN_PX

        def measure(text: str) -> float:
            return metrics.horizontalAdvance(text) + 2 * LABEL_MARGIN_PX

        axis_metrics = QFontMetricsF(self.getAxis("left").style.get("tickFont") or QFont())
        names = lane_names(self.rows, lane_px=lane_px, text_px=axis_metrics.height(),
                           room_px=AXIS_PX - 12, measure=axis_metrics.horizontalAdvance)
        self.getAxis("left").setTicks([[(-i, name) for i, name in enumerate(names)]])
        # bars of lanes in view, the critical path's first (they win a contested place)
        # (only the bars that can be in view; of a crowd, those at least a pixel wide)
        cands = [b for row in range(len(self._lanes)) if y_lo <= -row - 0.4 and -row + 0.4 <= y_hi
                 for b in self._visible(row, x_lo, x_hi)]
        if len(cands) > MAX_NAMED:
            cands = [b for b in cands if (b["x1"] - b["x0"]) * px_per_x >= 1.0]
        cands.sort(key=lambda b: not b["step"]["critical"])
        spans = [(b["row"], (b["x0"] - x_lo) * px_per_x, (b["x1"] - x_lo) * px_per_x,
                  b["step"]["name"]) for b in cands]
        placed = place_bar_labels(spans, lane_px=lane_px, text_px=text_px,
                                  view_px=(0.0, vb.width()), measure=measure)
        for p in placed:
            on_strong_bar = p.inside and cands[p.bar]["step"]["critical"]
            label = pg.TextItem(p.text, color="w" if on_strong_bar else "#1a1a1a", anchor=(0.5, 0.5))
            label.setFont(self.font)
            label.textItem.document().setDocumentMargin(LABEL_MARGIN_PX)
            label.setPos(x_lo + p.x_px / px_per_x, -p.lane)
            label.setToolTip(cands[p.bar]["step"]["name"])
            self.plotItem.addItem(label, ignoreBounds=True)
            self.label_items.append(label)

    def _showing_whole(self) -> bool:
        """Whether the time axis shows (about) the whole timeline."""
        (x_lo, x_hi), _ = self.plotItem.vb.viewRange()
        end = max(b["x1"] for b in self.bars) or 1.0
        return x_lo <= 0.01 * end and x_hi >= 0.99 * end

    def zoom(self, factor: float) -> None:
        """Zoom the time axis by ``factor`` (2: twice as close) around the view's middle."""
        (x_lo, x_hi), _ = self.plotItem.vb.viewRange()
        mid, half = (x_lo + x_hi) / 2, (x_hi - x_lo) / 2 / factor
        self.plotItem.setXRange(mid - half, mid + half, padding=0)

    def whole(self) -> None:
        """Show the whole timeline again."""
        if self.bars:
            self.plotItem.setXRange(0, max(b["x1"] for b in self.bars) or 1.0, padding=0.02)

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
        t = lambda seconds: format_time(seconds, 6)  # noqa: E731
        text = (f"{step['name']} ({step['kind']})\nstart {t(step['start_s'])}, end {t(step['end_s'])}\n"
                f"alone {t(step['alone_s'])}")
        if step["waited_s"] > 1e-15:
            text += f", queued {t(step['waited_s'])}"
        if step["stretched_s"] > 1e-15:
            text += f", slowed by sharing {t(step['stretched_s'])}"
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
