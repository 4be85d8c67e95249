"""The property panel of the kernel editor: the selected instruction, edge or loop (or the
kernel itself when nothing is selected). It shows values and announces edits
(``edit_requested(kind, id, changes)``); the editor turns them into commands.
"""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFormLayout, QGroupBox, QLabel, QStackedWidget, QVBoxLayout,
                               QWidget)

from gpumodeler.core.kernel.graph import ACCESS_PATTERNS, EDGE_KINDS
from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES, MEMORY_LEVELS, TABLES
from gpumodeler.core.kernel.opcodes import SPACES, UNITS, classify

from ..launch_panel.fields import Form, FieldError, message_label, parse_float, parse_int
from .scene import KIND_NAMES


def _expression(text: str) -> str:
    """A loop's iteration count: an expression that parses and, with every variable at 1,
    gives a finite count >= 0 (``1/0`` and ``-1`` are refused here, not at prediction)."""
    if not text.strip():
        raise FieldError("iterations: give a count or an expression such as a or N/256")
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.kernel.expressions import parse
    try:
        expr = parse(text.strip())
        value = float(expr.evaluate({name: 1 for name in expr.variables}))
    except ModelError as exc:
        raise FieldError(f"iterations {text.strip()!r}: {exc}") from None
    if not math.isfinite(value) or (not expr.variables and value < 0):
        raise FieldError(f"iterations {text.strip()!r}: give a finite count >= 0 "
                         f"(a number, or an expression such as a or N/256)")
    return text.strip()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


class PropertiesPanel(QWidget):
    edit_requested = Signal(str, str, dict)  # kind, id, changes

    def __init__(self, parent=None):
        super().__init__(parent)
        self.kind, self.item_id = "", ""
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold; padding: 2px 0 4px 0;")
        self.title.setWordWrap(True)
        self.stack = QStackedWidget()
        self.message = message_label()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.title)
        lay.addWidget(self.stack)
        lay.addWidget(self.message)
        lay.addStretch(1)
        self.forms: dict[str, Form] = {}
        self._pages: dict[str, QWidget] = {}
        self._build_kernel()
        self._build_instruction()
        self._build_edge()
        self._build_loop()
        for page in self._pages.values():  # short pages sit at the top of the tall stack
            page.layout().addStretch(1)
        self.show_nothing()

    def _page(self, kind: str) -> tuple[QWidget, QFormLayout, Form]:
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 0, 0, 0)
        form_layout = QFormLayout()
        form_layout.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        v.addLayout(form_layout)
        form = Form(form_layout, self.message, self)
        form.committed.connect(lambda name, value, k=kind: self._committed(k, name, value))
        self.forms[kind] = form
        self._pages[kind] = page
        self.stack.addWidget(page)
        return page, form_layout, form

    def _build_kernel(self):
        page, lay, f = self._page("kernel")
        f.line("name", "Name", help_text="the kernel's name")
        f.line("description", "Description")
        f.combo("latency_table", "Latencies",
                [("(none: explicit latencies)", None)] + [(t.name, k) for k, t in TABLES.items()],
                help_text="the architecture's latencies that fill the edges (built in, or a "
                          "table of the device database)")
        self.kernel_summary = QLabel()
        self.kernel_summary.setWordWrap(True)
        self.kernel_summary.setStyleSheet("color: #5f6368;")
        page.layout().addWidget(self.kernel_summary)

    def _build_instruction(self):
        page, lay, f = self._page("instruction")
        f.line("opcode", "Opcode", lambda t: t.strip().upper(),
               help_text="SASS mnemonic; the unit follows it when the opcode is known")
        f.line("label", "Label", lambda t: t.strip())
        f.combo("unit", "Unit", [(u, u) for u in UNITS])
        f.combo("latency_class", "Latency class", [("(none)", None)] + [(c, c) for c in INSTRUCTION_CLASSES])
        box = QGroupBox("Memory access")
        mem = QFormLayout(box)
        mem.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        page.layout().addWidget(box)
        self.memory_box = box
        m = Form(mem, self.message, self)
        m.committed.connect(lambda name, value: self._committed("instruction", name, value))
        self.forms["memory"] = m
        m.combo("space", "State space", [("(none)", None)] + [(s, s) for s in SPACES])
        m.check("is_load", "Load", help_text="a load produces a register (memory edges start here)")
        m.combo("memory_level", "Level", [("(by space)", None)] + [(lv, lv) for lv in MEMORY_LEVELS],
                help_text="latency-table row; default DRAM for global/local, shared for shared")
        m.combo("width_bytes", "Width", [(f"{w} B", w) for w in (1, 2, 4, 8, 16)],
                help_text="bytes per thread")
        m.line("stride", "Stride", lambda t: parse_float(t, "stride", 0.0, strict_minimum=True),
               help_text="elements between consecutive threads (1 = coalesced; below 1: "
                         "lanes share elements)")
        m.combo("pattern", "Pattern", [(p, p) for p in ACCESS_PATTERNS])
        m.line("hit_ratio", "Hit ratio", lambda t: parse_float(t, "cache hit ratio", 0.0, 1.0),
               help_text="fraction of the bytes served by a cache (0..1)")
        m.combo("segment_bytes", "Transaction", [(f"{s} B", s) for s in (32, 64, 128)])
        m.line("bank_conflict_degree", "Bank conflicts",
               lambda t: parse_int(t, "bank conflict degree", 1, 32),
               help_text="shared memory: wavefronts (bank cycles) per request; 1 = a 32-bit "
                         "access without conflict, n = an n-way conflict; a 64-bit access "
                         "takes at least 2, a 128-bit one at least 4")
        # what the SASS import followed, and what one warp's request costs (read-only)
        self.access_summary = QLabel()
        self.access_summary.setWordWrap(True)
        self.access_summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        mem.addRow("Address", self.access_summary)

    def _build_edge(self):
        page, lay, f = self._page("edge")
        self.edge_ends = QLabel()
        lay.addRow("From → to", self.edge_ends)
        f.combo("kind", "Kind", [(KIND_NAMES[k], k) for k in EDGE_KINDS])
        f.line("latency", "Latency",
               lambda t: parse_float(t, "latency (cycles)", 0.0, allow_empty=True),
               help_text="cycles; leave empty to take the latency table's value")
        f.combo("taken", "Branch", [("taken if it goes back", None), ("taken", True), ("not taken", False)])

    def _build_loop(self):
        page, lay, f = self._page("loop")
        f.line("name", "Name", lambda t: t.strip())
        f.line("iterations", "Iterations", _expression, fmt=str,
               help_text="a count or an expression of the launch variables, e.g. a or N/256")
        self.loop_members = QLabel()
        self.loop_members.setWordWrap(True)
        lay.addRow("Instructions", self.loop_members)

    # -- showing ---------------------------------------------------------------------------
    def _show(self, kind: str, item_id: str, title: str) -> None:
        self.kind, self.item_id = kind, item_id
        self.title.setText(title)
        self.stack.setCurrentWidget(self._pages[kind])

    def set_table_choices(self, choices) -> None:
        """[(text, key)]: the latency tables a kernel may name (see KernelEditor)."""
        self.forms["kernel"].set_choices("latency_table",
                                         [("(none: explicit latencies)", None)] + list(choices))

    def show_nothing(self, graph=None, kernel_id: str = "") -> None:
        if graph is None:
            self.kind, self.item_id = "", ""
            self.title.setText("No kernel")
            self.stack.setCurrentWidget(self._pages["kernel"])
            self._pages["kernel"].setEnabled(False)
            return
        self._pages["kernel"].setEnabled(True)
        self._show("kernel", kernel_id, f"Kernel {graph.name}")
        self.forms["kernel"].set_values({"name": graph.name, "description": graph.description,
                                         "latency_table": graph.latency_table})
        counts = ", ".join(_count(len(items), noun) for items, noun in (
            (graph.instructions, "instruction"), (graph.edges, "edge"), (graph.loops, "loop")))
        self.kernel_summary.setText(f"{counts}.\nSelect an instruction, edge or loop to edit it.")

    def show_instruction(self, ins) -> None:
        self._show("instruction", ins.id, f"Instruction {ins.id}")
        self.forms["instruction"].set_values({"opcode": ins.opcode, "label": ins.label, "unit": ins.unit,
                                              "latency_class": ins.latency_class})
        self.forms["memory"].set_values({
            "space": ins.space, "is_load": ins.is_load, "memory_level": ins.memory_level,
            "width_bytes": ins.width_bytes, "stride": ins.stride, "pattern": ins.pattern,
            "hit_ratio": ins.hit_ratio, "segment_bytes": ins.segment_bytes,
            "bank_conflict_degree": ins.bank_conflict_degree})
        self.memory_box.setEnabled(ins.unit == "ldst")
        self.access_summary.setText(_access_summary(ins))

    def show_edge(self, edge, table_latency) -> None:
        self._show("edge", edge.id, f"Edge {edge.id}")
        self.edge_ends.setText(f"{edge.src} → {edge.dst}")
        f = self.forms["edge"]
        f.set_values({"kind": edge.kind, "latency": edge.latency, "taken": edge.taken})
        f.widgets["latency"].setPlaceholderText(
            f"table: {table_latency:g} cycles" if table_latency is not None else "table: none — give one")
        f.widgets["taken"].setEnabled(edge.kind == "branch")

    def show_loop(self, loop, graph) -> None:
        self._show("loop", loop.id, f"Loop {loop.name}" if loop.name else f"Loop × {loop.iterations.text}")
        self.forms["loop"].set_values({"name": loop.name, "iterations": loop.iterations.text})
        members = [n for n in graph.instructions if n in loop.members]
        self.loop_members.setText(", ".join(members))

    def show_refusal(self, message: str, field: str | None = None) -> None:
        """Show a refused edit at its field (or under the form)."""
        form = self.forms.get(self.kind)
        if form is None:
            return
        for f in (form, self.forms["memory"]):
            if field in f.widgets:
                f.show_error(field, message)
                return
        form.show_error(None, message)

    # -- editing ---------------------------------------------------------------------------
    def _committed(self, kind: str, name: str, value) -> None:
        changes = {name: value}
        if kind == "instruction" and name == "opcode":
            info = classify(value)
            if info is not None:  # the unit and its attributes follow a known opcode
                changes.update(unit=info.unit, latency_class=info.latency_class, space=info.space,
                               is_load=info.is_load)
        self.edit_requested.emit(kind, self.item_id, changes)


def _access_summary(ins) -> str:
    """The address the import followed and the cost of one warp's request, as text."""
    from gpumodeler.core.kernel.warp_counts import access_cost
    cost = access_cost(ins)
    if cost is None:
        return ""
    parts = [ins.address or "(not known)"]
    if ins.space in ("global", "local"):
        parts.append(f"{cost['sectors_per_request']:g} × {ins.segment_bytes} B per request, "
                     f"{cost['bytes_per_warp']:g} B per warp from DRAM")
        if cost["l2_bytes_per_warp"]:
            parts.append(f"{cost['l2_bytes_per_warp']:g} B per warp from L2 (hit ratio "
                         f"{ins.hit_ratio:.0%}: re-read by neighbouring loads)")
    elif ins.space == "shared":
        ways = cost["bank_conflict_ways"]
        parts.append(f"{cost['bank_conflict_degree']} wavefront(s) per request"
                     + (f", {ways}-way bank conflict" if ways > 1 else ", no bank conflict"))
    return "\n".join(parts)
