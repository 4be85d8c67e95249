"""CalibrationPlot: measured copies and the fitted transfer model on log-log axes, and the
relative residuals (in-sample and leave-one-out) against size. Built once, updated with
``setData``; it renders the fit it is given and computes nothing but the curve's samples."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpumodeler.ui.plots.sweep_plot import LogLabelAxis


def log_log_plot(widget: QWidget, **where) -> tuple:
    """``(graphics, plot)``: a white graphics layout filling ``widget`` and its first plot,
    both axes logarithmic with readable labels (``where``: row and col of the plot)."""
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(0, 0, 0, 0)
    graphics = pg.GraphicsLayoutWidget()
    graphics.setBackground("w")
    layout.addWidget(graphics)
    plot = graphics.addPlot(**where, axisItems={"bottom": LogLabelAxis("bottom"),
                                                "left": LogLabelAxis("left")})
    plot.setLogMode(x=True, y=True)
    return graphics, plot


class CalibrationPlot(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.graphics, self.time_plot = log_log_plot(self, row=0, col=0)
        self.time_plot.setLabel("bottom", "copy size", units="B")
        self.time_plot.setLabel("left", "time", units="s")
        self.time_plot.showGrid(x=True, y=True, alpha=0.3)
        self.time_plot.addLegend(offset=(10, 10))
        self.measured = self.time_plot.plot([], [], pen=None, symbol="o", symbolSize=6,
                                            symbolBrush="#1f77b4", name="measured")
        self.model = self.time_plot.plot([], [], pen=pg.mkPen("#d62728", width=2), name="model")
        self.residual_plot = self.graphics.addPlot(
            row=1, col=0, axisItems={"bottom": LogLabelAxis("bottom")})
        self.residual_plot.setLogMode(x=True, y=False)
        self.residual_plot.setLabel("left", "residual (%)")
        self.residual_plot.setLabel("bottom", "copy size", units="B")
        self.residual_plot.showGrid(x=True, y=True, alpha=0.3)
        self.residual_plot.addLegend(offset=(10, 10))
        self.residual_plot.addLine(y=0, pen=pg.mkPen("#7f7f7f"))
        self.residuals = self.residual_plot.plot([], [], pen=None, symbol="o", symbolSize=5,
                                                 symbolBrush="#1f77b4", name="fit")
        self.loo = self.residual_plot.plot([], [], pen=None, symbol="x", symbolSize=7,
                                           symbolPen="#ff7f0e", name="left out")
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)

    def show_fit(self, fit) -> None:
        """Plot a TransferFit (core/transfers/fit.py); None clears the plot."""
        if fit is None:
            for item in (self.measured, self.model, self.residuals, self.loo):
                item.setData([], [])
            return
        n = fit.sizes_bytes
        pos = n > 0
        self.measured.setData(n[pos], fit.measured_s[pos])
        lo, hi = np.log10(n[pos].min()), np.log10(n[pos].max())
        grid = np.logspace(lo, hi, 400)
        self.model.setData(grid, np.asarray(fit.model.time_s(grid)))
        self.residuals.setData(n[pos], fit.relative_residuals[pos] * 100.0)
        self.loo.setData(n[pos], fit.loo_relative_errors[pos] * 100.0)
