"""The sweep's "Models" list: which registered models to overlay on the sweep plot.

One checkable row per model of :data:`gpumodeler.core.models.registry.MODELS`, none checked
at first. Each row's tooltip is the model's detail: its equations, and after a sweep how
many points it computed or why it could not (the value it lacks). The sweep panel re-runs
the sweep (in its worker) when a model it has not computed is checked, and only replots
when one is unchecked.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from gpumodeler.core.models.registry import MODELS


def model_tooltip(name: str, computed: int | None = None, total: int | None = None, error=None) -> str:
    """The detail of an overlaid model: equations, then what the last sweep got from it."""
    parts = [f"<b>{name}</b>: {MODELS[name][1]}"]
    if computed is not None:
        parts.append(f"computed at {computed} of {total} point(s)")
    if error is not None:
        exc, points = error
        parts.append(f"<span style='color:#b3261e'>{points} point(s) not computed: {exc}</span>")
    return "<br>".join(parts)


class ModelOverlayList(QListWidget):
    """``checked()`` the model names to overlay; ``changed`` when the user ticks one."""

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("model_overlay_list")
        self.setToolTip("Models to overlay on the sweep (one curve each; docs/models.md)")
        for name in MODELS:
            item = QListWidgetItem(name)
            item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Unchecked)
            item.setToolTip(model_tooltip(name))
            self.addItem(item)
        self.setMaximumWidth(170)
        self.itemChanged.connect(lambda _item: self.changed.emit())

    def checked(self) -> tuple:
        return tuple(self.item(i).text() for i in range(self.count())
                     if self.item(i).checkState() == Qt.Checked)

    def set_checked(self, names) -> None:
        names = set(names)
        self.blockSignals(True)
        for i in range(self.count()):
            self.item(i).setCheckState(Qt.Checked if self.item(i).text() in names else Qt.Unchecked)
        self.blockSignals(False)
        self.changed.emit()

    def show_outcome(self, result) -> None:
        """Each model's tooltip with what sweep ``result`` computed (or why not)."""
        curves = result.curves if result is not None else ()
        for i in range(self.count()):
            name = self.item(i).text()
            times = [c.model_times[name] for c in curves if name in c.model_times]
            if not times:
                self.item(i).setToolTip(model_tooltip(name))
                continue
            errors = [c.model_errors[name] for c in curves if name in c.model_errors]
            computed = sum(int((t == t).sum()) for t in times)
            total = sum(t.size for t in times)
            self.item(i).setToolTip(model_tooltip(name, computed, total, errors[0] if errors else None))
