"""The launch panel's "Models side by side" box: one row per registered model (its status,
time, bound, binding resource, the kernel terms it applied) and the spread; each row's tooltip
gives the model's equations, its notes and its intermediate quantities.

The status is in the table itself, not only in a tooltip (:func:`model_status`): a model
that runs on a default it should be calibrated for (Amarís' λ = 1; Gajger's λ = 1, eq. 4.4)
is "uncalibrated", one that lacks an input says which, and those rows are coloured so a
spread that comes from them reads as such.

It shows what :func:`gpumodeler.core.models.graph_inputs.compare_launch` returns and
computes nothing, except the row of a learned model: chosen among the user database's
stored learned models (``learn fit --save``, ``learn import``) or none, it predicts the launch
as ``predict --learned`` does (:mod:`gpumodeler.core.learn.launch`), its training data (GPUs,
kernels, rows) in its row and tooltip, flagged when the launch lies outside the trained
ranges.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
import sqlite3

from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QGroupBox, QHBoxLayout, QHeaderView,
                               QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout)

from gpumodeler.core.errors import ModelError

from gpumodeler.core.models.registry import MODELS, spread
from gpumodeler.core.models.result import MissingModelInput, ModelResult

from ..plots.units import fmt_time
from .results import RESOURCE_NAMES
from .terms_box import panel_words

#: the learned-model chooser's entry for none
NO_LEARNED = "(none)"
COLUMNS = ("Model", "Status", "Kernel time", "Bound", "Limited by", "Terms")
#: status kinds: the text colour of their rows
STATUS_COLOURS = {"ok": "#1b1b1b", "uncalibrated": "#a04a00", "missing": "#6b6b6b",
                  "warning": "#a04a00", "error": "#b3261e"}

#: a missing model input (MissingModelInput.item) in a few words
INPUT_NAMES = {"contention_b_cycles": "a contention fit", "contention_c_bytes_per_s": "a contention fit",
               "memory_instructions": "memory counts", "critical_dram_accesses": "DRAM accesses",
               "dram_latency_cycles": "the DRAM latency"}


def model_status(name: str, outcome, lam: float | None = None) -> tuple[str, str]:
    """(kind, text) of a model's row: kind one of :data:`STATUS_COLOURS`.

    ``lam``: the launch's λ, which only the gajger model applies; at its default of 1 the
    model is Gajger's eq. 4.1 without its calibration (eq. 4.4), so it is "uncalibrated" —
    as Amarís' bsp is at its λ = 1 (its note says so). A model that needs an input nobody
    gave (MissingModelInput) is "missing" with the input named."""
    if isinstance(outcome, MissingModelInput):
        item = getattr(outcome, "item", "") or ""
        what = INPUT_NAMES.get(item, item.replace("_", " ") or "an input")
        return "missing", f"✗ needs {what}"
    if not isinstance(outcome, ModelResult):
        return "error", "✗ not computed"
    if any("uncalibrated" in note for note in outcome.notes):
        return "uncalibrated", "⚠ uncalibrated (λ = 1)"
    if name == "gajger" and lam is not None and lam == 1.0:
        return "uncalibrated", "⚠ uncalibrated (λ = 1)"
    if outcome.warnings:
        return "warning", "⚠ warning (see its tooltip)"
    return "ok", "✓"


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
        parts.append(f"not computed: {panel_words(str(outcome))}")
        return "<br>".join(parts)
    parts.append(f"<i>{outcome.equations}</i>")
    parts += [f"• {panel_words(n)}" for n in outcome.notes]
    parts += [f"• {panel_words(t.describe())}" for t in outcome.terms]
    parts += [f"<span style='color:#b3261e'>⚠ {panel_words(w)}</span>" for w in outcome.warnings]
    parts += _quantity_lines(outcome)
    return "<br>".join(parts)


class ModelsView(QGroupBox):
    """``table`` (a row per model, in registry order) and ``spread_label``; ``statuses``
    the (kind, text) of each model's row (:func:`model_status`)."""

    def __init__(self, parent=None):
        super().__init__("Models side by side", parent)
        lay = QVBoxLayout(self)
        self.table = QTableWidget(len(MODELS), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)  # one line per model: five rows fit a short screen
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        # every model's row on screen: the table never shrinks below them (the splitter gives
        # the room to the prediction's detail rows below, which scroll)
        self.table.setMinimumHeight(self.table.verticalHeader().defaultSectionSize() * len(MODELS)
                                    + self.table.horizontalHeader().sizeHint().height() + 6)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        for row, name in enumerate(MODELS):
            self._set(row, 0, name, tooltip_for(name, "no launch yet"))
        # the chooser beside the table, not below it: the box is no taller (the launch tab
        # fits a 720-pixel-high screen)
        beside = QHBoxLayout()
        beside.addWidget(self.table, 1)
        chooser = QVBoxLayout()
        chooser.addWidget(QLabel("Learned model:"))
        self.learned_combo = QComboBox()
        self.learned_combo.addItem(NO_LEARNED)
        self.learned_combo.setToolTip("a stored learned model (gpumodeler learn fit --save, learn "
                                      "import) shown as the table's last row, or none")
        self.learned_combo.currentTextChanged.connect(self._choose_learned)
        chooser.addWidget(self.learned_combo)
        chooser.addStretch(1)
        beside.addLayout(chooser)
        lay.addLayout(beside)
        self.catalog = None
        self.learned_name = ""
        self._learned = None  # the chosen model, or the text of why it cannot be loaded
        self._shown: tuple = (None, "", None)  # the last (results, message, launch_row)
        self.learned_status: tuple[str, str] = ("", "")
        self.statuses: dict[str, tuple[str, str]] = {}
        self.spread_label = QLabel("—")
        self.spread_label.setTextFormat(Qt.RichText)
        self.spread_label.setWordWrap(True)
        lay.addWidget(self.spread_label)

    def _set(self, row: int, col: int, text: str, tooltip: str, colour: str = "") -> None:
        item = QTableWidgetItem(text)
        item.setToolTip(tooltip)
        if colour:
            item.setForeground(QBrush(QColor(colour)))
        self.table.setItem(row, col, item)

    def set_catalog(self, catalog) -> None:
        """List the stored learned models of ``catalog``'s user database in the chooser (the
        chosen one stays chosen while it is stored)."""
        from gpumodeler.db.learned_models import list_models
        self.catalog = catalog
        try:
            names = [m.name for m in list_models(catalog)] if catalog is not None else []
        except (ModelError, sqlite3.Error) as exc:
            names = []
            self.learned_combo.setToolTip(f"the stored learned models cannot be read: {exc}")
        keep = self.learned_name if self.learned_name in names else ""
        self.learned_combo.blockSignals(True)
        self.learned_combo.clear()
        self.learned_combo.addItems([NO_LEARNED] + names)
        self.learned_combo.setCurrentText(keep or NO_LEARNED)
        self.learned_combo.blockSignals(False)
        if keep != self.learned_name:
            self._choose_learned(keep or NO_LEARNED)

    def _choose_learned(self, name: str) -> None:
        from gpumodeler.db.learned_models import get_model
        self.learned_name = "" if name == NO_LEARNED else name
        self._learned = None
        if self.learned_name:
            try:
                stored = get_model(self.catalog, self.learned_name)
                self._learned = (stored, stored.load())
            except (ModelError, sqlite3.Error) as exc:
                self._learned = str(exc)
        self._show_learned(*self._shown)

    def show_results(self, results: dict | None, message: str = "", lam: float | None = None,
                     launch_row=None) -> None:
        """Show ``{model: ModelResult or error}``, or dashes and ``message``; ``lam`` the
        launch's λ (:func:`model_status`); ``launch_row()`` the launch as a learning row
        (:func:`gpumodeler.core.learn.launch.project_launch_row`), asked for only when a
        learned model is chosen."""
        self._shown = (results, message, launch_row)
        self.statuses = {}
        for row, name in enumerate(MODELS):
            outcome = (results or {}).get(name, message or "no prediction")
            tip = tooltip_for(name, outcome)
            if results is None:
                kind, status = "missing", ""
            else:
                kind, status = self.statuses[name] = model_status(name, outcome, lam)
            if isinstance(outcome, ModelResult):
                terms = "; ".join(panel_words(t.describe()) for t in outcome.terms if t.applied) or "none"
                cells = (name, status, fmt_time(outcome.time_s), outcome.bound,
                         RESOURCE_NAMES.get(outcome.binding_resource, outcome.binding_resource), terms)
            else:
                cells = (name, status, "—", "", "", panel_words(str(outcome)))
            for col, text in enumerate(cells):
                self._set(row, col, text, tip, STATUS_COLOURS[kind] if kind != "ok" else "")
        self.spread_label.setText(spread_text(results, self.statuses) or message or "—")
        self._show_learned(results, message, launch_row)

    def _show_learned(self, results, message, launch_row) -> None:
        """The learned model's row after the models' (none when no model is chosen)."""
        row = len(MODELS)
        if not self.learned_name:
            self.table.setRowCount(row)
            self.learned_status = ("", "")
            return
        self.table.setRowCount(row + 1)
        name = f"learned: {self.learned_name}"
        if isinstance(self._learned, str) or self._learned is None:
            why = self._learned or "not loaded"
            kind, status = "error", "✗ cannot be loaded"
            cells, tip = (name, status, "—", "", "", panel_words(why)), f"<b>{name}</b><br>{why}"
        else:
            stored, model = self._learned
            kind, status, cells, tip = _learned_cells(name, stored, model, results, message, launch_row)
        self.learned_status = (kind, status)
        for col, text in enumerate(cells):
            self._set(row, col, text, tip, STATUS_COLOURS[kind] if kind != "ok" else "")


def _training_text(stored) -> str:
    gpus = ", ".join(stored.gpus) or "(none)"
    return f"trained on {stored.rows} row(s), {len(stored.kernels)} kernel(s), GPUs {gpus}"


def _learned_cells(name, stored, model, results, message, launch_row):
    """(kind, status, cells, tooltip) of the learned model's row."""
    from gpumodeler.core.learn.launch import learned_entry
    training = _training_text(stored)
    tip = [f"<b>{name}</b>: {model.method} on {model.features} features (Amarís 2018 ch. 4; "
           f"docs/learning.md)", training, f"kernels: {', '.join(stored.kernels) or '(none)'}",
           f"digest {stored.training_digest[:12]}"]
    if results is None or launch_row is None:
        why = message or "no prediction"
        return "missing", "", (name, "", "—", "", "", panel_words(why)), "<br>".join(tip + [why])
    try:
        entry = learned_entry(model, launch_row())
    except ModelError as exc:
        why = panel_words(str(exc))
        return "error", "✗ not computed", (name, "✗ not computed", "—", "", "", why), \
            "<br>".join(tip + [why])
    if entry["time_s"] is None:
        why = entry["error"]
        return "missing", "✗ no base model time", (name, "✗ no base model time", "—", "", "", why), \
            "<br>".join(tip + [why])
    outside = entry["outside_trained_ranges"]
    if outside:
        kind, status = "warning", "⚠ outside the trained ranges"
        tip.append(f"<span style='color:#b3261e'>⚠ outside the trained ranges (an "
                   f"extrapolation): {', '.join(outside)}</span>")
    else:
        kind, status = "ok", "✓ within the trained ranges"
    return kind, status, (name, status, fmt_time(entry["time_s"]), "learned", "", training), \
        "<br>".join(tip)


def spread_text(results: dict | None, statuses: dict) -> str:
    """The models' spread, fastest to slowest, each named with its status when it is not
    plain (''  without a time)."""
    s = spread(results or {})
    if s is None:
        return ""

    def named(model):
        kind = statuses.get(model, ("ok", ""))[0]
        return model if kind == "ok" else f"{model}, {kind}"
    return (f"spread: {fmt_time(s.min_s)} ({named(s.fastest)}) to {fmt_time(s.max_s)} "
            f"({named(s.slowest)}), <b>max/min {s.ratio:.3g}</b> over {s.models} model(s)")
