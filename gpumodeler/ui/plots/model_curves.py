"""The models overlaid on a sweep plot (:mod:`gpumodeler.core.models.overlay`): one dotted
curve per model and GPU, its own colour and legend entry, its tooltip the model's equations.
Items are pooled and updated with ``setData``; they render the sweep's ``model_times``."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

# one colour each, dotted, so they read apart from the sweep's own kernel/total pairs
MODEL_COLOURS = {"gajger": "#000000", "volkov-contention": "#e6550d", "mwp-cwp": "#31a354",
                 "bsp": "#756bb1", "roofline": "#de2d26"}
MODEL_PEN = dict(width=2, style=Qt.DotLine)
# with several GPUs, a model's curves share its colour and differ in dash, GPU by GPU
GPU_DASHES = (Qt.DotLine, Qt.DashDotDotLine, Qt.DashDotLine)


def short_name(gpu: str) -> str:
    """A GPU's name without the brand ("GTX 970"), for legends that must fit a column."""
    for brand in ("GeForce ", "NVIDIA ", "Tesla ", "Quadro "):
        if gpu.startswith(brand) and len(gpu) > len(brand):
            return gpu[len(brand):]
    return gpu


class ModelCurves:
    """The overlay's curves on ``plot``, listed in ``legend``."""

    def __init__(self, plot, legend):
        self.plot, self.legend = plot, legend
        self.items: dict = {}  # (curve index, model) -> PlotDataItem
        self._legend_key = None

    def visible(self) -> dict:
        return {k: item for k, item in self.items.items() if item.isVisible()}

    def show(self, result, models, scale: float, several: bool, rebuilt: bool) -> None:
        """Draw ``models``' times of sweep ``result`` (in the plot's unit ``scale``); a model
        with no computed point is not drawn. ``rebuilt``: the legend was cleared."""
        from gpumodeler.core.models.registry import MODELS
        shown = []
        if result.variable != "gpu":
            for i, curve in enumerate(result.curves):
                for m in models:
                    t = getattr(curve, "model_times", {}).get(m)
                    if t is not None and np.isfinite(t).any():
                        shown.append((i, m))
        for key, item in self.items.items():
            if key not in shown and item.isVisible():
                item.setData([], [])
                item.hide()
        legend_key = (tuple(shown), several)
        relabel = rebuilt or legend_key != self._legend_key
        if relabel:
            for item in self.items.values():
                self.legend.removeItem(item)
        for i, m in shown:
            item = self.items.get((i, m))
            if item is None:
                pen = dict(MODEL_PEN, style=GPU_DASHES[i % len(GPU_DASHES)])
                item = self.plot.plot([], [], pen=pg.mkPen(MODEL_COLOURS.get(m, "#444"), **pen),
                                      antialias=True)
                item.setToolTip(f"{m}: {MODELS[m][1]}")
                self.items[(i, m)] = item
            y = np.asarray(result.curves[i].model_times[m], dtype=float) / scale
            item.setData(result.x, y, connect="finite")
            item.show()
            if relabel:
                name = f"{short_name(result.curves[i].label)}: " if several else ""
                self.legend.addItem(item, f"{name}{m}")
        self._legend_key = legend_key
