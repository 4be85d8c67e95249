"""The launch panel's "Kernel terms" box: every kernel-time term of
:mod:`gpumodeler.core.models.kernel_terms` as a control, so no message needs a command-line
flag.

* **Under-filled GPU** (on by default): a grid smaller than one wave limits each SM's
  occupancy (Volkov 2016 §3.4, the mean occupancy; §5.6, whole blocks).
* **Tail of the last wave** (off by default): the partial last wave is its own step (Volkov
  2016 §5.6–5.9); Gajger's eq. 4.1 and its λ (eq. 4.4) keep the mean occupancy instead.
* **Launch overhead**: a fixed time per launch, the GPU's ``launch_overhead_s``; the field
  gives it when the device database does not (no document gives one for any GPU).
* **L2 bandwidth**: the rate of the throughput worksheet's ``l2`` row (the global-memory
  bytes the L2 serves: re-reads of an imported kernel's reuse), the GPU's
  ``l2_bandwidth_bytes_per_s``, which the field gives when the device database has none. (The
  old "working set in L2" term is replaced by the reuse model: no control.)

The switches and values are the launch's (``LaunchConfig.terms``, a
:class:`~gpumodeler.core.project.LaunchTerms`), saved with the project: the box shows the
current launch's (:meth:`KernelTermsBox.show_terms`) and a change is one undoable edit of the
launch (the panel pushes it), which applies to its prediction, its models table, its sweeps,
``project predict`` and the timeline alike.
"""
from __future__ import annotations

import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLineEdit

from gpumodeler.core.models.result import KernelTerms
from gpumodeler.core.project import LaunchTerms

from ..units import QuantityError, format_quantity, parse_quantity
from .fields import FieldError, clear_error, mark_error, message_label

#: the fields typed with a unit: (attribute, label, unit, help)
VALUE_FIELDS = (
    ("launch_overhead_s", "Overhead per launch", "s",
     "fixed time per kernel launch, e.g. 5 µs (empty: the GPU's value from the device database)"),
    ("l2_bandwidth_bytes_per_s", "L2 bandwidth", "B/s",
     "the L2's bandwidth for the bytes it serves (the l2 row), e.g. 3 TB/s (empty: the GPU's "
     "value from the device database)"),
)

#: what a core note's hint at a command-line option means in this panel
FLAG_WORDS = {
    " (--launch-overhead SECONDS)": " — give it under Kernel terms",
    " (--l2-bandwidth)": " — give it under Kernel terms",
    "; --tail)": "; switch it on under Kernel terms)",
    "--launch-overhead SECONDS": "give it under Kernel terms › Overhead per launch",
    "--launch-overhead": "Kernel terms › Overhead per launch",
    "--l2-bandwidth": "give it under Kernel terms › L2 bandwidth",
    "--tail": "Kernel terms › Tail of the last wave",
    "--no-underfill": "Kernel terms › Under-filled GPU",
}


_SET = re.compile(r"--set (\w+)=\S+?(?=[);,]|$)")


def panel_words(text: str) -> str:
    """``text`` (a core note or error) with each command-line option it names replaced by
    the control of this panel that gives the same value ("--set a=128": the loop variable's
    field)."""
    text = _SET.sub(lambda m: f"type {m.group(1)} under Loop variables", text)
    for flag in sorted(FLAG_WORDS, key=len, reverse=True):
        text = text.replace(flag, FLAG_WORDS[flag])
    return text


class KernelTermsBox(QGroupBox):
    """Check boxes for the switches and unit fields for the values; ``changed`` when one of
    them changes to a valid value. A value that does not parse stays in its field, red, with
    the reason under the box, and the terms keep their last valid value."""

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__("Kernel terms", parent)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.underfill = QCheckBox("under-filled GPU (a grid under one wave)")
        self.underfill.setChecked(True)
        self.underfill.setToolTip("On: a grid that does not fill one wave limits each SM's "
                                  "occupancy (Volkov 2016 §3.4, §5.6)")
        self.tail = QCheckBox("tail of the last wave")
        self.tail.setToolTip("On: the partial last wave is a step of its own (Volkov 2016 "
                             "§5.6–5.9); off: eq. 4.1's mean occupancy (Gajger)")
        self.overhead = QCheckBox("launch overhead")
        self.overhead.setChecked(True)
        self.overhead.setToolTip("On: a fixed time per launch is added when it is known")
        for box in (self.underfill, self.tail, self.overhead):
            box.toggled.connect(lambda _on: self.changed.emit())
        form.addRow("Switches", self.underfill)
        form.addRow("", self.tail)
        form.addRow("", self.overhead)
        self.edits: dict[str, QLineEdit] = {}
        self.values: dict[str, float | None] = {name: None for name, *_ in VALUE_FIELDS}
        for name, label, _unit, help_text in VALUE_FIELDS:
            edit = QLineEdit()
            edit.setObjectName(f"term_{name}")
            edit.setToolTip(help_text)
            edit.setProperty("help_text", help_text)
            edit.editingFinished.connect(lambda n=name: self._edited(n))
            form.addRow(label, edit)
            self.edits[name] = edit
        self.message = message_label()
        form.addRow(self.message)

    def show_terms(self, terms: LaunchTerms) -> None:
        """Show a launch's terms without telling ``changed``. A field that holds a refused
        value keeps it (red) while the launch's value is the one it refused to replace."""
        boxes = ((self.underfill, terms.underfill), (self.tail, terms.tail),
                 (self.overhead, terms.launch_overhead))
        for box, on in boxes:
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)
        for name, _label, unit, _help in VALUE_FIELDS:
            value = getattr(terms, name)
            edit = self.edits[name]
            if edit.property("error_message") and value == self.values[name]:
                continue
            self.values[name] = value
            edit.setText("" if value is None else format_quantity(value, unit, digits=12))
            clear_error(edit)
        if not any(self.edits[n].property("error_message") for n in self.edits):
            self.message.hide()

    def launch_terms(self) -> LaunchTerms:
        """The terms the box shows, as a launch keeps them."""
        return LaunchTerms(underfill=self.underfill.isChecked(), tail=self.tail.isChecked(),
                           launch_overhead=self.overhead.isChecked(),
                           launch_overhead_s=self.values["launch_overhead_s"],
                           l2_bandwidth_bytes_per_s=self.values["l2_bandwidth_bytes_per_s"])

    def set_gpu(self, gpu) -> None:
        """Show the GPU's own values (``GPUSpec`` or None) as the empty fields' placeholders."""
        known = {"launch_overhead_s": getattr(gpu, "launch_overhead_s", None),
                 "l2_bandwidth_bytes_per_s": getattr(gpu, "l2_bandwidth_bytes_per_s", None)}
        for name, _label, unit, _help in VALUE_FIELDS:
            if known[name] is not None:
                text = f"GPU's: {format_quantity(known[name], unit)}"
            else:
                text = "unknown for this GPU: type one"
            self.edits[name].setPlaceholderText(text)

    def _edited(self, name: str) -> None:
        edit = self.edits[name]
        unit = next(u for n, _l, u, _h in VALUE_FIELDS if n == name)
        text = edit.text().strip()
        try:
            value = None if not text else self.parse(name, text, unit)
        except FieldError as exc:
            mark_error(edit, str(exc))
            self.message.setText(str(exc))
            self.message.show()
            return
        clear_error(edit)
        self.message.hide()
        if value != self.values[name]:
            self.values[name] = value
            self.changed.emit()

    @staticmethod
    def parse(name: str, text: str, unit: str) -> float:
        """The value of field ``name`` typed as ``text`` (in ``unit``); FieldError when it is
        not a finite number >= 0 (> 0 for the L2 bandwidth)."""
        label = next(lbl for n, lbl, _u, _h in VALUE_FIELDS if n == name)
        try:
            value = float(parse_quantity(text, unit))
        except QuantityError as exc:
            raise FieldError(f"{label}: {exc}") from None
        if value < 0 or (name == "l2_bandwidth_bytes_per_s" and value == 0):
            raise FieldError(f"{label} must be {'> 0' if value == 0 else '>= 0'}, got {text}")
        return value

    def terms(self) -> KernelTerms:
        return KernelTerms(underfill=self.underfill.isChecked(), tail=self.tail.isChecked(),
                           launch_overhead=self.overhead.isChecked())

    def gpu_overrides(self) -> dict:
        """The GPU fields the box gives (``GPUSpec.with_overrides`` keywords; None: the GPU's)."""
        return {"launch_overhead_s": self.values["launch_overhead_s"],
                "l2_bandwidth_bytes_per_s": self.values["l2_bandwidth_bytes_per_s"]}

    def lookups(self, lookups: dict) -> dict:
        """``lookups`` (core's resolvers) whose GPUs carry this box's values."""
        overrides = {k: v for k, v in self.gpu_overrides().items() if v is not None}
        if not overrides:
            return dict(lookups)
        gpu_lookup = lookups["gpu_lookup"]
        return dict(lookups, gpu_lookup=lambda name: gpu_lookup(name).with_overrides(**overrides))
