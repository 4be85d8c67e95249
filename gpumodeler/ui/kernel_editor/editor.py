"""KernelEditor: edit a kernel execution graph and see its latency bound live.

Layout: a tool bar (kernel, latency table, tool mode, edge kind, loop, layout), the
instruction palette on the left, the canvas in the middle, the property panel on the right
(in the main window: its Kernel Properties dock, :meth:`KernelEditor.detach_properties`),
and under the canvas the latency bound (formula in the loop variables and its value for
the kernel's default variables) with a message strip for validation errors.

Every user intent becomes one core command pushed through the Document (:mod:`.editing`);
the scene follows the model's events. After every change the graph is analysed again (it
takes milliseconds) and the critical path is highlighted. The tool bar is built in
:mod:`.toolbar`.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton,
                               QSplitter, QVBoxLayout, QWidget)

from gpumodeler.core.commands import RemoveKernel
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.graph import Edge, KernelGraph
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.graph_items import (default_block, formula_inputs, launch_set_text,
                                                 trip_test_step)
from gpumodeler.core.kernel.latency_bound import resolve_edge_latency

from ..binding import DocumentBinding, current_or_first, fill_item_combo
from ..launch_panel.fields import clear_error, fmt_number
from .editing import GraphEditing
from .editor_analysis import EditorAnalysis
from .palette import Palette
from .properties import PropertiesPanel
from .scene import KernelScene
from .toolbar import build_toolbar
from .view import KernelView

STRIP_ERROR = "background: #fde8e8; color: #a00000; padding: 4px 8px; border-top: 1px solid #f3b4b4;"
STRIP_INFO = "background: #eef3fb; color: #34495e; padding: 4px 8px; border-top: 1px solid #d5deea;"


#: What the kernel editor selects in the document (other editors select devices, links).
_KERNEL_KINDS = ("instruction", "edge", "loop")

class KernelEditor(EditorAnalysis, GraphEditing, DocumentBinding, QWidget):
    """The kernel graph editor for the kernels of ``document.project``."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.kernel_id: str | None = None
        self.bound = None
        self.path = None
        self.errors: dict[str, str] = {}
        self._analysis_pending = False
        # what the last analysis saw: its graph and instructions, and whether anything it
        # depends on changed since (a move or a label does not: commands that only place
        # instructions, on a kernel of 10^4 instructions, are not analysed again)
        self._analysed = (None, {})
        self._analysis_stale = True
        self._generation = 0  # of the analysis last asked for
        self._jobs: dict = {}  # generation -> analysis running in the background
        self._waiting = None  # the analysis made for the last edit, started after the paint
        self._start_timer = QTimer(self)
        self._start_timer.setSingleShot(True)
        self._start_timer.timeout.connect(self._start_waiting_job)
        self._selecting = False
        self._variable_fields: dict[str, QLineEdit] = {}
        self._build_ui()
        self.set_document(document)

    # -- construction ----------------------------------------------------------------------
    def _build_ui(self) -> None:
        build_toolbar(self)  # kernel_combo, table_combo, kind_combo, ... and their actions

        self.scene = KernelScene(self)
        self.view = KernelView(self.scene)
        self.view.painted.connect(self._start_waiting_job)
        self.view.addAction(self.delete_action)
        self.view.addAction(self.fit_action)
        self.palette = Palette()
        self.palette.setMinimumWidth(150)
        self.properties = PropertiesPanel()
        self.properties.setMinimumWidth(270)

        self.bound_label = QLabel()
        self.bound_label.setTextFormat(Qt.RichText)
        self.bound_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.variables_box = QHBoxLayout()
        self.variables_box.setSpacing(4)
        bound_row = QHBoxLayout()
        bound_row.setContentsMargins(8, 4, 8, 4)
        bound_row.addWidget(self.bound_label, 1)
        bound_row.addLayout(self.variables_box)
        self.message_strip = QLabel()
        self.message_strip.setWordWrap(True)
        self.message_strip.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.message_strip.setVisible(False)
        # while a big kernel's edges are drawn in turns: how far, and a way out
        self.drawing_row = QWidget()
        dl = QHBoxLayout(self.drawing_row)
        dl.setContentsMargins(8, 2, 8, 2)
        self.drawing_label = QLabel()
        self.drawing_bar = QProgressBar()
        self.drawing_bar.setTextVisible(False)
        self.drawing_cancel = QPushButton("Cancel")
        self.drawing_cancel.setToolTip("Stop drawing and remove this kernel from the project "
                                       "(Undo brings it back)")
        dl.addWidget(self.drawing_label)
        dl.addWidget(self.drawing_bar, 1)
        dl.addWidget(self.drawing_cancel)
        self.drawing_row.setVisible(False)

        centre = QWidget()
        cl = QVBoxLayout(centre)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.view, 1)
        cl.addLayout(bound_row)
        cl.addWidget(self.message_strip)
        cl.addWidget(self.drawing_row)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.palette)
        self.splitter.addWidget(centre)
        self.splitter.addWidget(self.properties)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([170, 640, 300])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.toolbar)
        lay.addWidget(self.splitter, 1)

        self.palette.activated.connect(lambda op: self.add_instruction(op))
        self.scene.instruction_dropped.connect(lambda op, pos: self.add_instruction(op, pos))
        self.scene.edge_requested.connect(self.add_edge)
        self.scene.nodes_moved.connect(self.move_instructions)
        self.scene.latency_edited.connect(self._on_latency_edited)
        self.scene.selectionChanged.connect(self._on_scene_selection)
        self.scene.drawing_progress.connect(self._on_drawing_progress)
        self.drawing_cancel.clicked.connect(self.cancel_drawing)
        self.properties.edit_requested.connect(self._on_property_edit)

    def detach_properties(self):
        """The property panel, out of the editor's splitter, for the main window's dock
        (:mod:`gpumodeler.ui.docks`); the editor keeps driving it."""
        self.properties.setParent(None)
        self.splitter.setSizes([170, 640])
        return self.properties

    def document_connections(self, document):
        # a command or its undo done: the instructions it placed take their edges and loops
        return ((document.changed, self._on_changed), (document.refused, self._on_refused),
                (document.selection_changed, self._on_document_selection),
                (document.undo_stack.indexChanged, self._command_finished))

    def _command_finished(self, _index: int) -> None:
        self.scene.flush_moves()

    def show_project(self) -> None:
        self.kernel_id = None
        self._fill_table_choices()
        self.rebuild()

    @property
    def graph(self) -> KernelGraph | None:
        return self.project.kernels.get(self.kernel_id) if self.kernel_id else None

    # -- whole-document refresh ------------------------------------------------------------
    def rebuild(self) -> None:
        """Re-read the project: kernel list, the current kernel's graph, the analysis."""
        self.kernel_id = current_or_first(self.project.kernels, self.kernel_id)
        self._fill_kernel_combo()
        self._show_kernel()

    def _fill_kernel_combo(self) -> None:
        fill_item_combo(self.kernel_combo, self.project.kernels, self.kernel_id)

    def set_kernel(self, kernel_id: str | None) -> None:
        """Edit another kernel of the project (the one shown already: nothing to redo)."""
        self.kernel_id = kernel_id if kernel_id in self.project.kernels else None
        self._fill_kernel_combo()
        if self.scene.graph is not self.graph or self.graph is None:
            self._show_kernel()

    def _show_kernel(self) -> None:
        g = self.graph
        analysis = self._analyse()  # done now: each label is made once, with its value
        self.drawing_row.setVisible(False)  # (the scene says when a big graph is drawn in turns)
        self.scene.set_graph(g, latencies=analysis.latencies if analysis else None)
        for w in (self.palette, self.view, self.table_combo, self.kind_combo, self.loop_iterations):
            w.setEnabled(g is not None)
        for a in (self.export_action, self.select_action, self.connect_action, self.loop_action,
                  self.layout_action, self.delete_action):
            a.setEnabled(g is not None)
        self._sync_kernel_properties()
        self._show_analysis(g, analysis)
        self._on_scene_selection()
        QTimer.singleShot(0, self.view, self.view.show_graph)  # cancelled if the view goes

    def _fill_table_choices(self) -> None:
        """The latency tables to choose from: built in, then the device database's; a key
        the graph names that no table has stays listed, marked, so it is not lost."""
        tables = self.document.latency_tables()
        choices = [(t.name, k, t.source) for k, t in tables.items()]
        for g in self.project.kernels.values():
            if g.latency_table and g.latency_table not in tables:
                choices.append((f"{g.latency_table} (not in the device database)",
                                g.latency_table, "no table of this key is built in or in the "
                                                 "device database"))
        self.table_combo.clear()
        self.table_combo.addItem("(no table)", None)
        for text, key, tip in choices:
            self.table_combo.addItem(text, key)
            self.table_combo.setItemData(self.table_combo.count() - 1, tip, Qt.ToolTipRole)
        self.properties.set_table_choices([(text, key) for text, key, _ in choices])

    def _table(self, g):
        """The latency table ``g`` names, or None (no table, or one nobody has)."""
        return self.document.table_for(g.latency_table) if g is not None else None

    def _sync_kernel_properties(self) -> None:
        g = self.graph
        table = self._table(g)
        if g is not None and g.latency_table and self.table_combo.findData(g.latency_table) < 0:
            self._fill_table_choices()      # a graph imported or pasted with another key
        self.table_combo.setCurrentIndex(max(self.table_combo.findData(g.latency_table if g else None), 0))
        self.palette.set_table(table)
        i = self.kernel_combo.findData(self.kernel_id)
        if i >= 0 and g is not None:
            self.kernel_combo.setItemText(i, f"{g.name}  ({self.kernel_id})")

    # -- model events ----------------------------------------------------------------------
    def _on_changed(self, event: str, payload) -> None:
        if event == "project_replaced":
            self.show_project()
        elif event == "kernel_edited":
            kid, graph_event, item = payload
            if kid != self.kernel_id:
                return
            self.scene.apply(graph_event, item)
            if graph_event == "properties_changed":
                self._sync_kernel_properties()
            if graph_event == "instruction_changed" and self._placed_only(item):
                if self.properties.kind == "instruction" and self.properties.item_id == item.id:
                    self.properties.show_instruction(item)  # its label may be shown there
            else:
                self._analysis_stale = True
                self._schedule_analysis()
        elif event == "catalog_changed":
            # the database's latency tables may have changed: list them and analyse again
            self._fill_table_choices()
            self._sync_kernel_properties()
            self._analysis_stale = True
            self._schedule_analysis()
        elif event in ("kernels_added", "kernels_removed", "kernels_changed"):
            if event == "kernels_added" and (self.pushing or self.kernel_id is None):
                self.kernel_id = payload[0]
            self.kernel_id = current_or_first(self.project.kernels, self.kernel_id)
            self._fill_kernel_combo()
            if self.scene.graph is not self.graph:
                self._show_kernel()

    def _on_refused(self, message: str, item: str) -> None:
        if not self.pushing:
            return
        self.show_message(message, error=True)
        if self.refusal_field is not None:
            self.properties.show_refusal(message, self.refusal_field)

    def _fill_variables(self, names: set) -> None:
        g = self.graph
        if set(self._variable_fields) != names:
            while self.variables_box.count():
                w = self.variables_box.takeAt(0).widget()
                if w is not None:
                    w.hide()  # gone now, not at the next event loop turn
                    w.deleteLater()
            self._variable_fields = {}
            for name in sorted(names):
                label = QLabel(f"{name} =")
                field = QLineEdit()
                field.setMaximumWidth(80)
                field.setToolTip(_variable_tip(g, name))
                field.editingFinished.connect(lambda n=name: self._on_variable_edited(n))
                self.variables_box.addWidget(label)
                self.variables_box.addWidget(field)
                self._variable_fields[name] = field
        for name, field in self._variable_fields.items():
            if not field.hasFocus():
                field.setText(fmt_number(g.variables.get(name)) if g else "")
            field.setPlaceholderText("value?")
            clear_error(field)

    def show_message(self, text: str, error: bool = False) -> None:
        self.message_strip.setText(text)
        self.message_strip.setStyleSheet(STRIP_ERROR if error else STRIP_INFO)
        self.message_strip.setVisible(bool(text))

    def _on_drawing_progress(self, done: int, total: int) -> None:
        self.drawing_row.setVisible(done < total)
        self.drawing_label.setText(f"Drawing edges: {done:,} of {total:,}")
        self.drawing_bar.setRange(0, total)
        self.drawing_bar.setValue(done)

    def cancel_drawing(self) -> None:
        """Stop drawing the kernel shown and remove it from the project (one undoable
        step: Undo brings it back, drawn again)."""
        kid, g = self.kernel_id, self.graph
        self.scene.stop_drawing()
        self.drawing_row.setVisible(False)
        if kid is not None and self.push(RemoveKernel(kid)):
            self.show_message(f"Stopped drawing {g.name}: it is removed from the project; "
                              f"Undo brings it back")

    # -- user input handlers ---------------------------------------------------------------
    def _set_mode(self, mode: str) -> None:
        self.scene.mode = mode
        self.view.setDragMode(KernelView.RubberBandDrag if mode == "select" else KernelView.NoDrag)

    def _on_kernel_chosen(self, index: int) -> None:
        self.set_kernel(self.kernel_combo.itemData(index))

    # -- selection -------------------------------------------------------------------------
    def _on_scene_selection(self) -> None:
        if self._selecting:
            return
        self._refresh_selection_panel()
        kind, item_id = self._selected_single()
        if not kind and self.document.selected[0] not in _KERNEL_KINDS:
            return  # nothing of ours was selected: another editor's selection stands
        self._selecting = True
        try:
            self.document.select(kind, item_id)
        finally:
            self._selecting = False

    def _selected_single(self) -> tuple[str, str]:
        """The one instruction, edge or loop selected (a kind of _KERNEL_KINDS), else
        ("", "")."""
        try:
            nodes, edges, loops = self.scene.selected_ids()
        except RuntimeError:  # the scene is being torn down
            return "", ""
        if len(nodes) + len(edges) + len(loops) != 1:
            return "", ""
        if nodes:
            return "instruction", nodes[0]
        if edges:
            return "edge", edges[0]
        return "loop", loops[0]

    def _refresh_selection_panel(self) -> None:
        g = self.graph
        kind, item_id = self._selected_single()
        if g is None:
            self.properties.show_nothing()
        elif kind == "instruction" and item_id in g.instructions:
            self.properties.show_instruction(g.instructions[item_id])
        elif kind == "edge" and item_id in g.edges:
            e = g.edges[item_id]
            table_value, table = None, self._table(g)
            if table is not None:
                try:
                    table_value = resolve_edge_latency(g, Edge(e.id, e.src, e.dst, e.kind, None, e.taken),
                                                       table)
                except ModelError:
                    table_value = None
            self.properties.show_edge(e, table_value)
        elif kind == "loop" and item_id in g.loops:
            self.properties.show_loop(g.loops[item_id], g)
        else:
            self.properties.show_nothing(g, self.kernel_id)

    def _on_document_selection(self, kind: str, item_id: str) -> None:
        if self._selecting or self.graph is None:
            return
        if kind in ("instruction", "edge", "loop") and (
                item_id in self.graph.instructions or item_id in self.graph.edges
                or item_id in self.graph.loops):
            self._selecting = True
            try:
                self.scene.select_ids([item_id])
            finally:
                self._selecting = False
            self._refresh_selection_panel()


def _variable_tip(g, name: str) -> str:
    """The tooltip of the variable ``name`` of graph ``g`` (None: no graph): what it is
    and, where a launch sets it, from what (its block, a kernel parameter, a trip test)."""
    tip = f"default value of {name} for this kernel (launches may override it)"
    if g is None:
        return tip
    guards = [x for x in g.guards.values() if x.fraction.text == name]
    tests = sorted({x.test for x in guards if x.test})
    shape = "×".join(map(str, default_block(g)))  # where the defaults were worked out
    if guards:
        tip += (f"; the fraction of the time {len(guards)} guarded piece(s) of code run "
                f"(0..1, 1 = always)")
    if tests:
        tip += (f"; each launch sets it from its block: the share of the block's warps with "
                f"a thread where {' or '.join(tests)} (this value: a {shape} block)")
    if name in g.block_trips:
        reads = formula_inputs(g) & parse(g.block_trips[name]).variables
        what = "fraction" if guards else "loop's trip count"
        tip += (f"; each launch sets it {launch_set_text(g, name)}: the {what} "
                f"{g.block_trips[name]} (this value: "
                + ("its own, until the kernel parameter is given)" if reads
                   else f"a {shape} block)"))
    # a kernel parameter: the loops' counts and the guards' fractions that read it
    readers = sorted(v for v, t in g.block_trips.items() if name in parse(t).variables)
    if readers:
        fractions = {x.fraction.text for x in g.guards.values()}
        counts = [v for v in readers if v not in fractions]
        shares = [v for v in readers if v in fractions]
        said = " and ".join(([f"the trip count of {', '.join(counts)}"] if counts else []) +
                            ([f"the fraction of {', '.join(shares)}"] if shares else []))
        tip += (f"; a kernel parameter: {said} read{'s' if len(readers) == 1 else ''} it (0: "
                f"not given, the variable keeps its value)")
    if name in g.trip_tests:
        spec = g.trip_tests[name]
        tip += (f"; each launch sets it from its block: the mean share of the block's warps "
                f"with a thread where {spec['value']} {spec['op']} s over the trips of "
                f"{spec['trips']}, s starting at {spec['first']} and {trip_test_step(spec)} "
                f"each trip (this value: a {shape} block)")
    return tip
