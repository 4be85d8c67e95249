"""The application's Gantt chart: one lane per engine and link, a bar per step coloured by
its kind (legend in the title), the critical path outlined in red with every other bar faded,
a tooltip with each step's prediction on hover. It renders a timeline result
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

import csv

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
        self._items = []
        self.label_items: list[pg.TextItem] = []   # the bars' names as drawn now
        self._fitting = False
        self.show_links = True   # a lane per link direction besides the engines' lanes
        self.font = QFont()
        self.font.setPointSizeF(max(self.font.pointSizeF() - 1, 7.0))
        self.scene().sigMouseMoved.connect(self._hover)
        self.plotItem.vb.sigRangeChanged.connect(lambda *_a: self._place_labels())
        self.plotItem.vb.sigResized.connect(lambda *_a: self._fit_lanes())
        self.setLabel("bottom", "time")

    def show_result(self, result: dict | None) -> None:
        # a live edit of the same application keeps the user's zoom and lane scroll
        same = bool(self.result and result and self.result.get("name") == result.get("name")
                    and self.bars)
        kept = self.plotItem.vb.viewRange()[0] if same and not self._showing_whole() else None
        for item in self._items + self.label_items:
            self.plotItem.removeItem(item)
        self._items, self.rows, self.bars, self.label_items = [], [], [], []
        self.result = result
        if not result or not result["steps"]:
            self.getAxis("left").setTicks([[]])
            self.setTitle("")
            return
        unit, scale = time_unit(result["makespan_s"] if result["makespan_s"] > 0 else 1.0)
        self.setLabel("bottom", f"time ({unit})")
        for s in result["steps"]:
            for r in s["engines"] + (s["links"] if self.show_links else []) or ["(no engine)"]:
                if r not in self.rows:
                    self.rows.append(r)
                row = self.rows.index(r)
                color = KIND_COLORS.get(s["kind"], OTHER_COLOR)
                self.bars.append({"row": row, "x0": s["start_s"] / scale, "x1": s["end_s"] / scale,
                                  "step": s, "color": color})
        thinnest = 0.002 * (max(b["x1"] for b in self.bars) or 1.0)   # a sync still shows
        for b in self.bars:
            width = max(b["x1"] - b["x0"], thinnest)
            brush = QColor(b["color"])
            if b["step"]["critical"]:
                pen = pg.mkPen(CRITICAL, width=2.5)
            else:
                brush.setAlpha(FADED_ALPHA)
                pen = pg.mkPen("#666666", width=0.5)
            item = pg.BarGraphItem(x0=[b["x0"]], y0=[-b["row"] - 0.4], width=[width], height=[0.8],
                                   brush=brush, pen=pen)
            self.plotItem.addItem(item)
            self._items.append(item)
        end = max(b["x1"] for b in self.bars) or 1.0
        self.plotItem.setLimits(xMin=-0.02 * end, xMax=1.02 * end, minXRange=end * 1e-6,
                                maxXRange=1.04 * end)
        if kept is not None and kept[0] < end:
            self.plotItem.setXRange(kept[0], min(kept[1], 1.02 * end), padding=0)
        else:
            self.plotItem.setXRange(0, end, padding=0.02)
        self.setTitle(self._title(result))
        self._fit_lanes(to_top=not same)

    def set_show_links(self, on: bool) -> None:
        """Show the links' lanes (each direction of a link that carries a copy) or only the
        engines' (fewer lanes: a copy also shows on its devices' copy engines)."""
        if on != self.show_links:
            self.show_links = on
            result, self.result = self.result, None   # drawn again from the top
            self.show_result(result)

    def _title(self, result: dict) -> str:
        """The makespan and the legend: a swatch per step kind present, and the critical
        path's outline."""
        kinds = sorted({s["kind"] for s in result["steps"]})
        swatches = "".join(f'&nbsp;&nbsp;<span style="color:{KIND_COLORS.get(k, OTHER_COLOR)}">&#9632;</span>'
                           f'&nbsp;{k}' for k in kinds)
        return (f'<span style="color:#222">makespan <b>{format_time(result["makespan_s"])}</b>'
                f'&nbsp;&nbsp;&nbsp;{swatches}&nbsp;&nbsp;&nbsp;<span style="color:{CRITICAL}">&#9633;</span>'
                f'&nbsp;critical path (others faded)</span>')

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
        order = sorted((i for i, b in enumerate(self.bars) if y_lo <= -b["row"] - 0.4 and -b["row"] + 0.4 <= y_hi),
                       key=lambda i: not self.bars[i]["step"]["critical"])
        spans = [(self.bars[i]["row"], (self.bars[i]["x0"] - x_lo) * px_per_x,
                  (self.bars[i]["x1"] - x_lo) * px_per_x, self.bars[i]["step"]["name"]) for i in order]
        placed = place_bar_labels(spans, lane_px=lane_px, text_px=text_px,
                                  view_px=(0.0, vb.width()), measure=measure)
        for p in placed:
            on_strong_bar = p.inside and self.bars[order[p.bar]]["step"]["critical"]
            label = pg.TextItem(p.text, color="w" if on_strong_bar else "#1a1a1a", anchor=(0.5, 0.5))
            label.setFont(self.font)
            label.textItem.document().setDocumentMargin(LABEL_MARGIN_PX)
            label.setPos(x_lo + p.x_px / px_per_x, -p.lane)
            label.setToolTip(self.bars[order[p.bar]]["step"]["name"])
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
        """The step whose bar covers data point (x, y), or None."""
        for b in self.bars:
            if b["x0"] <= x <= b["x1"] and abs(y + b["row"]) <= 0.4:
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
        if step["kind"] == "kernel" and detail:
            text += (f"\n{detail.get('mode')}-bound, limited by {detail.get('limiting_resource')}; "
                     f"occupancy {detail.get('occupancy_warps_per_sm'):g} warps/SM")
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
