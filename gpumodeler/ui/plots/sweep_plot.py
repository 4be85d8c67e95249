"""SweepPlot: predicted kernel and total time against a swept variable, with measured
points overlaid.

Built once; :meth:`SweepPlot.show_result` updates the curves with ``setData`` (items are
pooled, one pair per GPU). It renders values it is given and computes nothing but the
display unit. Exports: PNG and SVG (pyqtgraph exporters) and CSV of the data shown.

The legend on screen is placed by the exported figure's rule
(:func:`.legend_place.place_legend`: a corner no data crosses, else headroom, else above
the plot), after every new result and every resize, so it never covers the first points.
A sweep whose totals equal its kernel times (a launch without transfers) draws no
"kernel + transfers" curve: it would lie on the kernel's.
"""
from __future__ import annotations

import csv
import importlib
import math
from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers pg.exporters)
from pathlib import Path

from PySide6.QtCore import QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QLabel, QStackedLayout, QWidget

from .legend_place import legend_state, place_legend, restore_legend
from .model_curves import MODEL_COLOURS, ModelCurves, short_name  # noqa: F401  (re-exported)
from .units import time_unit

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22")
# (kernel, total) colours per GPU: the two curves of one GPU differ in colour as well as in
# dash (a printed figure in grey still tells them apart by the dash)
PAIRS = (("#1f77b4", "#ff7f0e"), ("#2ca02c", "#d62728"), ("#9467bd", "#8c564b"),
         ("#17becf", "#e377c2"), ("#7f7f7f", "#bcbd22"))
BASE_PEN = dict(color="#666", width=1.2, style=Qt.DashDotLine)


def axis_title(variable: str, label: str) -> str:
    """The x-axis title with its unit: "Data size N (threads)", "n (loop iterations)",
    "guard1 (share of the warps)" for a guard's variable (``label`` says "(guard)")."""
    units = {"data_size": "Data size N (threads)", "gpu": "GPU"}
    if variable in units:
        return units[variable]
    if variable in ("block_size", "occupancy"):
        return label  # "Block size (threads)", "Occupancy (warps per SM)"
    if label.endswith(" (guard)"):
        return f"{variable} (share of the warps)"
    if label.endswith(" (warps in a block)"):
        return label
    return f"{variable} (loop iterations)"


# a linear axis of large numbers: one prefix for all its ticks, chosen by the largest
LINEAR_PREFIXES = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
# a log axis labels these mantissas between its decades when they have room
LOG_LABELS_ROOMY = (1, 2, 5)
ROOMY_DECADE_PX = 200


class LogLabelAxis(pg.AxisItem):
    """pyqtgraph labels every minor tick of a log axis (2·10¹ 3·10¹ 4·10¹ ...), so the
    labels run into each other. This axis labels the decades, and 2 and 5 between them when
    a decade is wide enough; numbers from 0.001 to 99999 read as plain numbers (20, 500)."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        # pyqtgraph's minor level repeats the decades of the major one: drawn twice, their
        # labels look bold
        levels = super().logTickValues(minVal, maxVal, size, stdTicks)
        major = {round(v, 9) for spacing, values in levels if spacing is not None for v in values}
        return [(spacing, values if spacing is not None else [v for v in values if round(v, 9) not in major])
                for spacing, values in levels]

    def tickStrings(self, values, scale, spacing):
        """Linear ticks of large numbers with a prefix each ("250M", "1G"), not pyqtgraph's
        "(x1e+09)" after the axis title (the plot turns that automatic prefix off)."""
        big = max((abs(v * scale) for v in values), default=0.0)
        if self.logMode or big < 1e5:
            return super().tickStrings(values, scale, spacing)
        name, unit = next((n, u) for n, u in LINEAR_PREFIXES if big >= u)
        return [f"{round(v * scale / unit, 6):g}{name}" if v else "0" for v in values]

    def logTickStrings(self, values, scale, spacing):
        strings = super().logTickStrings(values, scale, spacing)
        lo, hi = self.range
        width = self.geometry().width() if self.orientation in ("bottom", "top") else self.geometry().height()
        roomy = width / max(hi - lo, 1e-9) >= ROOMY_DECADE_PX
        keep = LOG_LABELS_ROOMY if roomy else (1,)
        out = []
        for v, text in zip(values, strings):
            x = 10.0 ** v * scale
            mantissa = round(10.0 ** (v - math.floor(v + 1e-9)))
            if mantissa not in keep:
                out.append("")
            elif 1e-3 <= x < 1e5:
                out.append(f"{x:g}")
            else:
                out.append(text)
        return out


class SweepPlot(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.widget = pg.PlotWidget(background="w", axisItems={"bottom": LogLabelAxis("bottom")})
        self.plot = self.widget.getPlotItem()
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setPen(pg.mkPen("#444"))
            axis.setTextPen(pg.mkPen("#222"))
            f = QFont()
            f.setPointSize(9)
            axis.setStyle(tickFont=f, maxTickLevel=1)  # no third tick level: fewer grid lines
        self.plot.getAxis("left").enableAutoSIPrefix(False)  # the unit is chosen from the data
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)  # prefixed ticks instead (LogLabelAxis)
        # a legend in rows across the top left, over headroom kept free above the curves
        self.legend = self.plot.addLegend(offset=(8, 4), labelTextColor="#222", colCount=3,
                                          brush=pg.mkBrush(255, 255, 255, 220), pen=pg.mkPen("#ccc"))
        self._curves: list[tuple[pg.PlotDataItem, pg.PlotDataItem]] = []
        self.measured = pg.ScatterPlotItem(size=9, symbol="o", pen=pg.mkPen("#000", width=1.2),
                                           brush=pg.mkBrush(255, 255, 255, 230), hoverable=True,
                                           tip=self._measured_tip)
        self.measured.setZValue(20)
        self.plot.addItem(self.measured)
        self._measured_in_legend = False
        # a GPU comparison is categorical: bars (kernel, total) instead of lines
        self.kernel_bars = pg.BarGraphItem(x=[], height=[], width=0.36, brush=pg.mkBrush(PALETTE[0]),
                                           pen=pg.mkPen(None))
        self.total_bars = pg.BarGraphItem(x=[], height=[], width=0.36, brush=pg.mkBrush(PALETTE[0] + "55"),
                                          pen=pg.mkPen(PALETTE[0], width=1.5, style=Qt.DashLine))
        for bars in (self.kernel_bars, self.total_bars):
            self.plot.addItem(bars)
            bars.hide()
        # the launch's own value: in the legend, and never widening the x range (ignoreBounds)
        self.base_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(**BASE_PEN))
        self.base_line.setZValue(-5)
        self.plot.addItem(self.base_line, ignoreBounds=True)
        # the figure export sets these labels' font for print (plots.figure)
        self.plot.figure_texts = lambda: [line for line in self.knee_lines if line.isVisible()]
        self.base_line.hide()
        self.base_sample = pg.PlotDataItem([], [], pen=pg.mkPen(**BASE_PEN))  # its legend sample
        self.knee_lines: list[pg.InfiniteLine] = []  # one per GPU of an occupancy sweep
        self.empty = QLabel()
        self.empty.setObjectName("empty_plot_message")
        self.empty.setAlignment(Qt.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setStyleSheet("color: #5f6368; background: white; border: 1px solid #ddd;")
        self._log_y = False
        self._kernel_only = False
        self.unit = ("s", 1.0)
        self.x_title = ""
        self.title = ""
        self.result = None
        self._log_x = False
        self._legend = None  # what the legend shows, to rebuild it only when that changes
        self.models: tuple = ()  # names of the models to overlay (set_models)
        self._model_curves = ModelCurves(self.plot, self.legend)
        self._ticks = False
        self._shown_labels = None
        self.measurements = None  # (x, measured_s, predicted_s, rel_error, what)
        self.stack = QStackedLayout(self)
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.widget)
        self.set_labels("", "")
        self.show_message("No sweep yet: choose a variable and a range, then Run sweep.")
        #: the legend before it was placed (legend_state) and the y range the data asked for
        self._legend_home = None
        self._base_y_range = None
        #: where the on-screen legend went (place_legend's answer; "" before a result)
        self.legend_corner = ""
        self._placed_size = None
        self.plot.getViewBox().sigResized.connect(self._resized)

    # -- the legend, placed as in an exported figure ------------------------------------------
    def _resized(self, *args) -> None:
        size = self.plot.geometry().size()
        if self.result is not None and size != self._placed_size:
            QTimer.singleShot(0, self, self.place_legend)

    def place_legend(self) -> str:
        """Put the legend where it covers no data (the figure's rule), from where it was
        before any placement and the data's own y range; returns the corner chosen."""
        if self.result is None:
            return self.legend_corner
        if self._legend_home is not None:
            restore_legend(self.plot, self._legend_home)
        if self._base_y_range is not None:
            self.plot.setYRange(*self._base_y_range, padding=0)
        self.plot.layout.activate()
        self.legend_corner = place_legend(self.plot)
        self._placed_size = self.plot.geometry().size()
        return self.legend_corner

    def show_message(self, text: str) -> None:
        """An empty plot: the message instead of 0–1 axes and an empty legend."""
        self.empty.setText(text)
        self.stack.setCurrentWidget(self.empty)

    def is_empty(self) -> bool:
        return self.stack.currentWidget() is self.empty

    def message_text(self) -> str:
        return self.empty.text() if self.is_empty() else ""

    # -- labels ----------------------------------------------------------------------------
    def set_labels(self, x_title: str, title: str) -> None:
        self.x_title, self.title = x_title, title
        style = {"color": "#222", "font-size": "10pt"}
        self.plot.setLabel("bottom", x_title or " ", **style)
        self.plot.setLabel("left", f"Predicted time ({self.unit[0]})", **style)
        self.plot.setTitle(title or None, color="#222", size="10pt")

    def y_label(self) -> str:
        return f"Predicted time ({self.unit[0]})"

    # -- data ------------------------------------------------------------------------------
    def _pair(self, i: int):
        while len(self._curves) <= i:
            k_colour, t_colour = PAIRS[len(self._curves) % len(PAIRS)]
            # antialiased curves only (a global pyqtgraph option would also smooth the axes
            # and grid, which costs more than the curves and is not sharper)
            kernel = self.plot.plot([], [], pen=pg.mkPen(k_colour, width=2), antialias=True)
            total = self.plot.plot([], [], pen=pg.mkPen(t_colour, width=2, style=Qt.DashLine), antialias=True)
            self._curves.append((kernel, total))
        return self._curves[i]

    def show_result(self, result, x_title: str, title: str = "", log_x: bool = False,
                    measurements=None, kernel_only: bool = False, log_y: bool = False) -> None:
        """Show a SweepResult. ``measurements``: (x, measured_s, predicted_s, rel_error, what)
        arrays, predicted at the measured x by the sweep itself. ``kernel_only``: the
        transfers could not be predicted, so no total is drawn. ``log_y``: logarithmic time
        axis. Only what changed is touched (legend, labels, log mode, ticks), so a replot is
        mostly setData."""
        self.stack.setCurrentWidget(self.widget)
        if self._legend_home is not None:  # the legend as it was before it was placed
            restore_legend(self.plot, self._legend_home)
        self.result, self.measurements = result, measurements
        self._kernel_only = kernel_only
        # no transfers: every total is its kernel time, and a second curve would hide under it
        kernel_only = kernel_only or all(
            np.array_equal(np.asarray(c.total_time_s, float), np.asarray(c.kernel_time_s, float),
                           equal_nan=True) for c in result.curves)
        self._kernel_only = kernel_only
        values = ([] if kernel_only else [c.total_time_s for c in result.curves]) \
            + [c.kernel_time_s for c in result.curves]
        has_measured = measurements is not None and len(measurements[0]) > 0
        if has_measured:
            values.append(np.asarray(measurements[1]))
        overlaid = [] if result.variable == "gpu" else [  # overlaid models stay inside the y range
            c.model_times[m] for c in result.curves for m in self.models if m in getattr(c, "model_times", {})]
        values += overlaid
        self.unit = time_unit(np.concatenate([np.ravel(v) for v in values]) if values else 1.0)
        scale = self.unit[1]
        gpu_sweep = result.variable == "gpu"
        log_x = bool(log_x and not gpu_sweep)
        if log_x != self._log_x:
            positive = result.x[result.x > 0]
            if log_x and positive.size:
                # move the view to log coordinates first: in log mode the axis takes 10**range,
                # which overflows for a linear range such as 0..1e8
                self.plot.setXRange(math.log10(positive.min()), math.log10(positive.max()), padding=0)
            self.plot.setLogMode(x=log_x, y=self._log_y)
            self._log_x = log_x
        log_y = bool(log_y and not gpu_sweep)
        if log_y != self._log_y:
            self.plot.setLogMode(x=self._log_x, y=log_y)
            self._log_y = log_y
        several = len(result.curves) > 1
        # a GPU that cannot run the launch at all has no curve (the panel says why)
        drawable = [bool(np.isfinite(np.asarray(c.total_time_s, dtype=float)).any()) for c in result.curves]
        in_range = result.base_x is not None and not gpu_sweep and result.x.size > 0 \
            and float(np.min(result.x)) <= result.base_x <= float(np.max(result.x))
        legend = tuple(f"{c.label}: " if several else "" for c, ok in zip(result.curves, drawable) if ok) \
            + (has_measured, gpu_sweep, kernel_only, in_range and _short(result.base_x))
        if legend != self._legend:
            self.legend.clear()
            self.legend.setColumnCount(2 if several else 3)  # one GPU per row
        symbol = "o" if gpu_sweep or result.x.size <= 40 else None
        if gpu_sweep:
            self._show_bars(result, scale, legend != self._legend, kernel_only)
        else:
            self.kernel_bars.hide()
            self.total_bars.hide()
        for i, curve in enumerate(result.curves):
            kernel, total = self._pair(i)
            if not drawable[i] or gpu_sweep:
                for item in (kernel, total):
                    item.setData([], [])
                    item.hide()
                continue
            if kernel_only:
                total.setData([], [])
                total.hide()
            for item, data in ((kernel, curve.kernel_time_s),) + (() if kernel_only else ((total, curve.total_time_s),)):
                y = np.asarray(data, dtype=float) / scale
                finite = bool(np.isfinite(y).all())
                if symbol != item.opts["symbol"]:
                    item.setSymbol(symbol)
                    item.setSymbolSize(6)
                    item.setSymbolBrush(item.opts["pen"].color())
                    item.setSymbolPen(None)
                item.setData(result.x, y, connect="all" if finite else "finite", skipFiniteCheck=finite)
                item.show()
            if legend != self._legend and not gpu_sweep:
                name = f"{short_name(curve.label)}: " if several else ""
                self.legend.addItem(kernel, f"{name}kernel")
                if not kernel_only:
                    self.legend.addItem(total, f"{name}kernel + transfers")
        for kernel, total in self._curves[len(result.curves):]:
            if kernel.isVisible():
                kernel.setData([], [])
                total.setData([], [])
                kernel.hide()
                total.hide()
        axis = self.plot.getAxis("bottom")
        if gpu_sweep:
            ticks = []
            for i, name in enumerate(result.x_labels):
                runs = bool(np.isfinite(result.curves[0].total_time_s[i]))
                ticks.append((float(i), name if runs else f"{name} (cannot run)"))
            axis.setTicks([ticks])
            self._ticks = True
        elif self._ticks:
            axis.setTicks(None)
            self._ticks = False
        if in_range and not (log_x and result.base_x <= 0):
            self.base_line.setPos(math.log10(result.base_x) if log_x else result.base_x)
            self.base_line.show()
            if legend != self._legend:
                self.legend.addItem(self.base_sample, f"this launch ({_short(result.base_x)})")
        else:
            self.base_line.hide()
        self._show_knees(result, log_x, several)
        if has_measured:
            x, measured = np.asarray(measurements[0], float), np.asarray(measurements[1], float)
            data = [(float(p), float(e)) for p, e in zip(measurements[2], measurements[3])]
            self.measured.setData(x=np.log10(x) if log_x else x, y=measured / scale, data=data)
            self.measured.show()
            if legend != self._legend:
                self.legend.addItem(self.measured, "measured")
        elif self.measured.isVisible():
            self.measured.setData(x=[], y=[])
            self.measured.hide()
        self._model_curves.show(result, self.models, scale, several, rebuilt=legend != self._legend)
        self._legend = legend
        if (x_title, title, self.unit) != self._shown_labels:
            self.set_labels(x_title, title)
            self._shown_labels = (x_title, title, self.unit)
        self._set_y_range(values, scale, len(legend) - 4 + int(has_measured) + int(in_range)
                          + len(self.model_items()))
        if gpu_sweep:
            self.plot.setXRange(-0.6, len(result.x_labels) - 0.4, padding=0)
        else:
            self.plot.enableAutoRange(x=True, y=False)
        self._legend_home = legend_state(self.plot)
        self._base_y_range = tuple(self.plot.getViewBox().viewRange()[1])
        self.place_legend()

    def set_models(self, names) -> None:
        """The models whose curves :meth:`show_result` overlays (those the result has)."""
        self.models = tuple(names)

    def model_items(self) -> dict:
        """{(curve index, model): PlotDataItem} of the overlaid model curves on show."""
        return self._model_curves.visible()

    def _show_bars(self, result, scale: float, relabel: bool, kernel_only: bool = False) -> None:
        """A bar per GPU for the kernel, and one for the total beside it unless there are
        no transfers (``kernel_only``: the kernel's bar is then centred on its GPU)."""
        c = result.curves[0]
        x = np.arange(len(result.x_labels), dtype=float)
        ok = np.isfinite(c.total_time_s)
        shift = 0.0 if kernel_only else 0.19
        self.kernel_bars.setOpts(x=x[ok] - shift, height=np.asarray(c.kernel_time_s)[ok] / scale)
        self.total_bars.setOpts(x=x[ok] + shift, height=np.asarray(c.total_time_s)[ok] / scale)
        self.kernel_bars.show()
        self.total_bars.setVisible(not kernel_only)
        if relabel:
            self.legend.addItem(self.kernel_bars, "kernel")
            if not kernel_only:
                self.legend.addItem(self.total_bars, "kernel + transfers")

    def _show_knees(self, result, log_x: bool, several: bool) -> None:
        """The occupancy where the mode changes, one line per GPU, labelled below the legend
        (the legend sits in the headroom at the top)."""
        knees = [(c, c.knee_occupancy) for c in result.curves] if result.variable == "occupancy" else []
        knees = [(c, k) for c, k in knees if math.isfinite(k) and not (log_x and k <= 0)]
        while len(self.knee_lines) < len(knees):
            i = len(self.knee_lines)
            line = pg.InfiniteLine(angle=90, pen=pg.mkPen(PAIRS[i % len(PAIRS)][0], width=1, style=Qt.DotLine),
                                   label="", labelOpts={"position": 0.55 - 0.08 * (i % 5),
                                                        "color": PAIRS[i % len(PAIRS)][0], "fill": (255, 255, 255, 200)})
            line.setZValue(-5)
            self.plot.addItem(line, ignoreBounds=True)
            self.knee_lines.append(line)
        for i, line in enumerate(self.knee_lines):
            if i < len(knees):
                curve, knee = knees[i]
                line.setPos(math.log10(knee) if log_x else knee)
                line.label.setFormat(f"{short_name(curve.label) + ': ' if several else ''}mode changes at {knee:.3g}")
                line.show()
            else:
                line.hide()

    def _set_y_range(self, values, scale: float, entries: int) -> None:
        """Times start at zero (log axis: at the smallest time); headroom above the curves for
        the legend rows."""
        finite = [np.asarray(v, dtype=float) for v in values]
        finite = [v[np.isfinite(v)] for v in finite]
        top = max((float(v.max()) for v in finite if v.size), default=1.0 * scale) / scale
        rows = max(1, entries) if entries > 1 else 1
        if self._log_y:
            positive = [v[v > 0] for v in finite]
            low = min((float(v.min()) for v in positive if v.size), default=top * scale / 10) / scale
            top = max(top, low * 1.0001)
            lo, hi = math.log10(low), math.log10(top)
            span = max(hi - lo, 0.3)
            self.plot.setYRange(lo - 0.05 * span, hi + span * (0.08 + 0.09 * rows), padding=0)
            return
        self.plot.setYRange(0, top * (1.08 + 0.07 * rows), padding=0)

    def clear(self, message: str = "No sweep yet: choose a variable and a range, then Run sweep.") -> None:
        """Drop the curves and show ``message`` instead of empty axes."""
        self.result = self.measurements = None
        for kernel, total in self._curves:
            kernel.setData([], [])
            total.setData([], [])
        self.measured.setData(x=[], y=[])
        self.kernel_bars.hide()
        self.total_bars.hide()
        self.legend.clear()
        self._legend = None
        if self._legend_home is not None:
            restore_legend(self.plot, self._legend_home)
        self._legend_home = self._base_y_range = self._placed_size = None
        self.legend_corner = ""
        self.base_line.hide()
        for line in self.knee_lines:
            line.hide()
        self.show_message(message)

    def _measured_tip(self, x, y, data):
        unit = self.unit[0]
        if data is None:
            return f"measured {y:.4g} {unit}"
        predicted, error = data
        xv = 10 ** x if self._log_x else x
        return (f"x = {xv:.6g}\nmeasured {y:.4g} {unit}\npredicted {predicted / self.unit[1]:.4g} {unit}\n"
                f"error {error * 100:+.1f} %")

    # -- export ----------------------------------------------------------------------------
    # Every export writes in one step (db.atomic_files.output_file: a temporary file renamed
    # over ``path``), never over one of ``inputs`` (the open project, the device databases);
    # a failure is an OutputError or OSError naming the file, and leaves ``path`` as it was.
    def export_figure(self, path: str, size, inputs=()) -> None:
        """PNG or SVG at a printed size (:mod:`.figure`): fonts in points for that size."""
        from .figure import export_figure
        if self.result is None:
            raise ValueError("nothing to export: run a sweep first")
        export_figure(self.plot, path, size, self.title, self.widget.logicalDpiX() or 96,
                      inputs=inputs)

    def export_png(self, path: str, inputs=()) -> None:
        """PNG at the plot's size on screen (pyqtgraph scales the legend badly when the
        width is changed)."""
        from gpumodeler.ui.screenshot import save_png
        save_png(pg.exporters.ImageExporter(self.plot).export(toBytes=True), path, inputs)

    def export_svg(self, path: str, inputs=()) -> None:
        """SVG through pyqtgraph's exporter. That exporter (0.14) cannot parse the closed
        paths newer Qt writes ("Z"; pyqtgraph bug, github issues/3495), so during the export its
        coordinate fixer gets the paths without the "Z" and closes them again afterwards.
        Should it still fail, the plot is rendered straight into a QSvgGenerator."""
        from gpumodeler.db.atomic_files import output_file
        with output_file(path, inputs=inputs, mode="path") as tmp:
            try:
                with _closed_paths_fix():
                    pg.exporters.SVGExporter(self.plot).export(str(tmp))
            except ValueError:
                self._render_svg(str(tmp))
            if Path(tmp).stat().st_size == 0:
                raise OSError(f"could not write {path}")

    def _render_svg(self, path: str) -> None:
        rect = self.plot.sceneBoundingRect()
        size = QSize(int(math.ceil(rect.width())), int(math.ceil(rect.height())))
        generator = QSvgGenerator()
        generator.setFileName(path)
        generator.setSize(size)
        generator.setViewBox(QRect(0, 0, size.width(), size.height()))
        generator.setTitle(self.title or "gpumodeler sweep")
        generator.setDescription(f"{self.x_title}; {self.y_label()}")
        painter = QPainter(generator)
        try:
            painter.fillRect(QRectF(0, 0, size.width(), size.height()), QColor("white"))
            self.plot.scene().render(painter, QRectF(0, 0, size.width(), size.height()), rect)
        finally:
            painter.end()

    def export_csv(self, path: str, x_name: str, inputs=()) -> None:
        """Predicted points (and measured ones with their error), one row each, times in s."""
        from gpumodeler.db.atomic_files import output_file
        r = self.result
        if r is None:
            raise ValueError("nothing to export: run a sweep first")
        with output_file(path, inputs=inputs, newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            # the overlaid models' kernel times, a column each (time_s_<model>), when shown
            models = [m for m in self.models if any(m in getattr(c, "model_times", {}) for c in r.curves)]
            w.writerow(["series", "device", x_name, "kernel_time_s", "total_time_s", "mode",
                        "limiting_resource", "measured_s", "relative_error"]
                       + [f"time_s_{m}" for m in models])
            for curve in r.curves:
                for i, x in enumerate(r.x):
                    device = r.x_labels[i] if r.variable == "gpu" else curve.label
                    xv = device if r.variable == "gpu" else _num(x)
                    w.writerow(["predicted", device, xv, _num(curve.kernel_time_s[i]),
                                _num(curve.total_time_s[i]), curve.mode[i], curve.limiting_resource[i], "", ""]
                               + [_num(curve.model_times[m][i]) if m in curve.model_times else ""
                                  for m in models])
            if self.measurements is not None:
                x, measured, predicted, error, what = self.measurements
                label = r.curves[0].label if r.curves else ""
                for i in range(len(x)):
                    w.writerow(["measured", label, _num(x[i]),
                                _num(predicted[i]) if what[i] == "kernel" else "",
                                _num(predicted[i]) if what[i] == "total" else "", "", "",
                                _num(measured[i]), _num(error[i])] + [""] * len(models))


@contextmanager
def _closed_paths_fix():
    """Scoped workaround for a pyqtgraph bug (github issues/3495; see SweepPlot.export_svg)."""
    module = importlib.import_module("pyqtgraph.exporters.SVGExporter")
    original = getattr(module, "correctCoordinates", None)
    if original is None:
        yield
        return

    def correct(node, defs, item, options):
        closed = []
        for element in node.getElementsByTagName("path"):
            tokens = element.getAttribute("d").split()
            if any(t in ("Z", "z") for t in tokens):
                element.setAttribute("d", " ".join(t for t in tokens if t not in ("Z", "z")))
                closed.append(element)
        result = original(node, defs, item, options)
        for element in closed:
            element.setAttribute("d", element.getAttribute("d").rstrip() + " Z")
        return result

    module.correctCoordinates = correct
    try:
        yield
    finally:
        module.correctCoordinates = original


def _short(v: float) -> str:
    return f"{v:,.0f}".replace(",", " ") if float(v).is_integer() and abs(v) < 1e9 else f"{v:.4g}"


def _num(v) -> str:
    v = float(v)
    return "" if not math.isfinite(v) else repr(v)
