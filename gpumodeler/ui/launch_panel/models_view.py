"""The launch panel's "Models side by side" box: one row per registered model (time, bound,
binding resource, the kernel terms it applied) and the spread; each row's tooltip gives the
model's equations, its notes and its intermediate quantities.

It shows what :func:`gpumodeler.core.models.graph_inputs.compare_launch` returns and
computes nothing.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QGroupBox, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout)

from gpumodeler.core.models.registry import MODELS, spread
from gpumodeler.core.models.result import ModelResult

from ..plots.units import fmt_time
from .results import RESOURCE_NAMES

COLUMNS = ("Model", "Kernel time", "Bound", "Limited by", "Terms")


def _quantity_lines(result: ModelResult, limit: int = 12) -> list[str]:
    lines = []
    for key, value in result.quantities.items():
        if isinstance(value, float):
            lines.append(f"{key} = {value:.6g}")
        elif isinstance(value, (int, str)) and not isinstance(value, bool):
            lines.append(f"{key} = {value}")
        if len(lines) >= limit:
            break
    return lines


def tooltip_for(name: str, outcome) -> str:
    """The equations a model implements, then its notes, terms and quantities (or its error)."""
    parts = [f"<b>{name}</b>: {MODELS[name][1]}"]
    if not isinstance(outcome, ModelResult):
        parts.append(f"not computed: {outcome}")
        return "<br>".join(parts)
    parts.append(f"<i>{outcome.equations}</i>")
    parts += [f"• {n}" for n in outcome.notes]
    parts += [f"• {t.describe()}" for t in outcome.terms]
    parts += [f"<span style='color:#b3261e'>⚠ {w}</span>" for w in outcome.warnings]
    parts += _quantity_lines(outcome)
    return "<br>".join(parts)


class ModelsView(QGroupBox):
    """``table`` (a row per model, in registry order) and ``spread_label``."""

    def __init__(self, parent=None):
        super().__init__("Models side by side", parent)
        lay = QVBoxLayout(self)
        self.table = QTableWidget(len(MODELS), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        for row, name in enumerate(MODELS):
            self._set(row, 0, name, tooltip_for(name, "no launch yet"))
        lay.addWidget(self.table)
        self.spread_label = QLabel("—")
        self.spread_label.setTextFormat(Qt.RichText)
        lay.addWidget(self.spread_label)

    def _set(self, row: int, col: int, text: str, tooltip: str) -> None:
        item = QTableWidgetItem(text)
        item.setToolTip(tooltip)
        self.table.setItem(row, col, item)

    def show_results(self, results: dict | None, message: str = "") -> None:
        """Show ``{model: ModelResult or error}``, or dashes and ``message``."""
        for row, name in enumerate(MODELS):
            outcome = (results or {}).get(name, message or "no prediction")
            tip = tooltip_for(name, outcome)
            if isinstance(outcome, ModelResult):
                flag = " ⚠" if outcome.warnings else ""
                terms = "; ".join(t.describe() for t in outcome.terms if t.applied) or "none"
                cells = (name, fmt_time(outcome.time_s) + flag, outcome.bound,
                         RESOURCE_NAMES.get(outcome.binding_resource, outcome.binding_resource), terms)
            else:
                cells = (name, "—", "", "", str(outcome))
            for col, text in enumerate(cells):
                self._set(row, col, text, tip)
        s = spread(results or {})
        if s is None:
            self.spread_label.setText(message or "—")
        else:
            self.spread_label.setText(
                f"spread: {fmt_time(s.min_s)} ({s.fastest}) to {fmt_time(s.max_s)} ({s.slowest}), "
                f"<b>max/min {s.ratio:.3g}</b> over {s.models} model(s)")
