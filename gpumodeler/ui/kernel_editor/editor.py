"""KernelEditor: edit a kernel execution graph and see its latency bound live.

Layout: a tool bar (kernel, latency table, tool mode, edge kind, loop, layout), the
instruction palette on the left, the canvas in the middle, the property panel on the right,
and under the canvas the latency bound (formula in the loop variables and its value for
the kernel's default variables) with a message strip for validation errors.

Every user intent becomes one core command pushed through the Document; the scene follows
the model's events. After every change the graph is analysed again (it takes milliseconds)
and the critical path is highlighted.
"""
from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QPointF, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QColor, QIcon, QKeySequence, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (QComboBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QSplitter,
                               QToolBar, QVBoxLayout, QWidget)

from gpumodeler.core.commands import (AddEdge, AddInstruction, AddKernel, AddLoop, Macro,
                                      MoveInstructions, RemoveEdge, RemoveInstruction, RemoveLoop,
                                      SetKernelProperties, UpdateEdge, UpdateInstruction, UpdateLoop)
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel_graph import EDGE_KINDS, Edge, Instruction, KernelGraph, Loop, from_dict, to_dict
from gpumodeler.core.latency_bound import analyze, resolve_edge_latency
from gpumodeler.core.latency_tables import TABLES, get_table

from ..binding import DocumentBinding, current_or_first, fill_item_combo
from ..launch_panel.fields import FieldError, clear_error, fmt_number, mark_error, parse_float
from .items import EDGE_STYLES, NODE_H
from .layout import ROW_SPACING, layered_layout
from .palette import Palette
from .properties import PropertiesPanel
from .scene import KIND_NAMES, KernelScene
from .view import KernelView

DEFAULT_TABLE = "maxwell-gajger"
STRIP_ERROR = "background: #fde8e8; color: #a00000; padding: 4px 8px; border-top: 1px solid #f3b4b4;"
STRIP_INFO = "background: #eef3fb; color: #34495e; padding: 4px 8px; border-top: 1px solid #d5deea;"


def _kind_icon(kind: str) -> QIcon:
    colour, style = EDGE_STYLES[kind]
    pm = QPixmap(28, 12)
    pm.fill(Qt.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.Antialiasing)
    p.setPen(QPen(colour, 2.2, style))
    p.drawLine(2, 6, 26, 6)
    p.end()
    return QIcon(pm)


class KernelEditor(DocumentBinding, QWidget):
    """The kernel graph editor for the kernels of ``document.project``."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.kernel_id: str | None = None
        self.bound = None
        self.path = None
        self.errors: dict[str, str] = {}
        self._analysis_pending = False
        self._selecting = False
        self._variable_fields: dict[str, QLineEdit] = {}
        self._build_ui()
        self.set_document(document)

    # -- construction ----------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.toolbar = QToolBar("Kernel")
        self.toolbar.setIconSize(QSize(28, 12))
        self.kernel_combo = QComboBox()
        self.kernel_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.kernel_combo.setMinimumContentsLength(12)
        self.kernel_combo.setToolTip("The kernel to edit")
        self.kernel_combo.activated.connect(self._on_kernel_chosen)
        self.toolbar.addWidget(QLabel(" Kernel "))
        self.toolbar.addWidget(self.kernel_combo)
        self.new_action = self.toolbar.addAction("New", self.new_kernel)
        self.new_action.setToolTip("Add an empty kernel to the project")
        self.import_action = self.toolbar.addAction("Import…", self._on_import)
        self.import_action.setToolTip("Read a kernel graph (gpumodeler-kernel JSON) into the project")
        self.export_action = self.toolbar.addAction("Export…", self._on_export)
        self.export_action.setToolTip("Write this kernel graph as gpumodeler-kernel JSON")
        self.toolbar.addSeparator()
        self.table_combo = QComboBox()
        self.table_combo.addItem("(no table)", None)
        for key, table in TABLES.items():
            self.table_combo.addItem(table.name, key)
            self.table_combo.setItemData(self.table_combo.count() - 1, table.source, Qt.ToolTipRole)
        self.table_combo.setToolTip("Latency table: the architecture whose latencies fill the edges")
        self.table_combo.activated.connect(self._on_table_chosen)
        self.table_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.table_combo.setMinimumContentsLength(16)
        self.toolbar.addWidget(self.table_combo)
        self.toolbar.addSeparator()
        group = QActionGroup(self)
        self.select_action = QAction("Select", self, checkable=True, checked=True)
        self.select_action.setToolTip("Select and move (Shift+drag from an instruction draws an edge)")
        self.connect_action = QAction("Connect", self, checkable=True)
        self.connect_action.setToolTip("Drag from one instruction to another to add an edge of the chosen kind")
        for a in (self.select_action, self.connect_action):
            group.addAction(a)
            self.toolbar.addAction(a)
        self.select_action.toggled.connect(lambda on: self._set_mode("select" if on else "connect"))
        self.kind_combo = QComboBox()
        for kind in EDGE_KINDS:
            self.kind_combo.addItem(_kind_icon(kind), kind, kind)
            self.kind_combo.setItemData(self.kind_combo.count() - 1, KIND_NAMES[kind], Qt.ToolTipRole)
        self.kind_combo.setToolTip("Kind of the edges you draw")
        self.kind_combo.currentIndexChanged.connect(
            lambda i: setattr(self.scene, "edge_kind", self.kind_combo.itemData(i)))
        self.toolbar.addWidget(self.kind_combo)
        self.toolbar.addSeparator()
        self.loop_iterations = QLineEdit("a")
        self.loop_iterations.setMaximumWidth(60)
        self.loop_iterations.setToolTip("Iterations of the loop to make: a count or an expression (a, N/256)")
        self.loop_action = QAction("Loop ×", self)
        self.loop_action.setToolTip("Make the selected instructions a loop with this many iterations")
        self.loop_action.triggered.connect(lambda: self.make_loop())
        self.toolbar.addAction(self.loop_action)
        self.toolbar.addWidget(self.loop_iterations)
        self.toolbar.addSeparator()
        self.layout_action = self.toolbar.addAction("Auto-layout", self.auto_layout)
        self.layout_action.setToolTip("Program order downwards, loop bodies indented (undoable)")
        self.fit_action = QAction("Fit", self)
        self.fit_action.setShortcut(QKeySequence(Qt.Key_F))
        self.fit_action.setShortcutContext(Qt.WidgetWithChildrenShortcut)
        self.fit_action.setToolTip("Fit the graph in the view (F)")
        self.fit_action.triggered.connect(lambda: self.view.fit())
        self.toolbar.addAction(self.fit_action)
        self.delete_action = QAction("Delete", self)
        self.delete_action.setShortcuts([QKeySequence(QKeySequence.Delete), QKeySequence(Qt.Key_Backspace)])
        self.delete_action.setShortcutContext(Qt.WidgetShortcut)
        self.delete_action.setToolTip("Delete the selection (Del)")
        self.delete_action.triggered.connect(self.delete_selection)
        self.toolbar.addAction(self.delete_action)

        self.scene = KernelScene(self)
        self.view = KernelView(self.scene)
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

        centre = QWidget()
        cl = QVBoxLayout(centre)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.view, 1)
        cl.addLayout(bound_row)
        cl.addWidget(self.message_strip)
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
        self.properties.edit_requested.connect(self._on_property_edit)

    def document_connections(self, document):
        return ((document.changed, self._on_changed), (document.refused, self._on_refused),
                (document.selection_changed, self._on_document_selection))

    def show_project(self) -> None:
        self.kernel_id = None
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
        """Edit another kernel of the project."""
        self.kernel_id = kernel_id if kernel_id in self.project.kernels else None
        self._fill_kernel_combo()
        self._show_kernel()

    def _show_kernel(self) -> None:
        g = self.graph
        self.scene.set_graph(g)
        for w in (self.palette, self.view, self.table_combo, self.kind_combo, self.loop_iterations):
            w.setEnabled(g is not None)
        for a in (self.export_action, self.select_action, self.connect_action, self.loop_action,
                  self.layout_action, self.delete_action):
            a.setEnabled(g is not None)
        self._sync_kernel_properties()
        self.refresh_analysis()
        self._on_scene_selection()
        QTimer.singleShot(0, self.view, self.view.show_graph)  # cancelled if the view goes

    def _sync_kernel_properties(self) -> None:
        g = self.graph
        table = None
        if g is not None and g.latency_table in TABLES:
            table = TABLES[g.latency_table]
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

    def _schedule_analysis(self) -> None:
        if not self._analysis_pending:
            self._analysis_pending = True
            QTimer.singleShot(0, self, self._deferred_analysis)

    def _deferred_analysis(self) -> None:
        if self._analysis_pending:
            self.refresh_analysis()

    # -- analysis --------------------------------------------------------------------------
    def refresh_analysis(self) -> None:
        """Analyse the graph again: edge latencies, the bound, the critical path, errors."""
        self._analysis_pending = False
        g = self.graph
        self.errors = {}
        self.bound = None
        if g is None:
            self.scene.set_errors({})
            self.bound_label.setText("No kernel: add one with <b>New</b> or <b>Import…</b>")
            self._fill_variables(set())
            self.show_message("")
            return
        try:
            self.bound = analyze(g)
        except ModelError as exc:
            self.errors[exc.item or ""] = str(exc)
        latencies = dict(self.bound.edge_latency) if self.bound else self._resolve_latencies(g)
        self.scene.set_latencies(latencies)
        variables = set(g.variables)
        value_text = ""
        critical = ((), (), ())
        if self.bound is not None:
            variables |= set(self.bound.variables)
            try:
                value = float(self.bound.evaluate(dict(g.variables)))
                path = self.bound.critical_path(dict(g.variables))
                critical = (path.node_ids, path.edge_ids, path.loop_ids)
                value_text = f" = <b>{value:,.6g}</b> cycles" if value >= 1e6 else f" = <b>{value:g}</b> cycles"
                given = ", ".join(f"{k} = {fmt_number(v)}" for k, v in g.variables.items()
                                  if k in self.bound.variables)
                if given:
                    value_text += f" <span style='color:#5f6368'>({given})</span>"
                self.bound_label.setToolTip("Critical path: " + path.describe(g))
            except ModelError as exc:
                missing = sorted(set(self.bound.variables) - set(g.variables))
                if missing:  # not an error of the graph: the number needs values
                    value_text = (f" <span style='color:#5f6368'>(give {', '.join(missing)} a value "
                                  f"for the number)</span>")
                else:
                    self.errors[""] = str(exc)
            formula = self.bound.formula()
            self.bound_label.setText(f"Latency bound: <b>{formula}</b>{value_text}")
        else:
            self.bound_label.setText("Latency bound: <span style='color:#a00000'>—</span> (see the message)")
            self.bound_label.setToolTip("")
        self.scene.set_critical(*critical)
        self.scene.set_errors({k: v for k, v in self.errors.items() if k})
        self._fill_variables(variables)
        if self.errors:
            self.show_message("  ".join(self.errors.values()), error=True)
        elif not self.pushing:
            self.show_message("")
        self._refresh_selection_panel()

    def _resolve_latencies(self, g) -> dict:
        table = None
        if g.latency_table in TABLES:
            table = get_table(g.latency_table)
        order = g.order()
        out = {}
        for e in g.edges.values():
            try:
                out[e.id] = resolve_edge_latency(g, e, table, order)
            except ModelError:
                out[e.id] = None
        return out

    def latency_bound_formula(self) -> str:
        return self.bound.formula() if self.bound else ""

    def _fill_variables(self, names: set) -> None:
        g = self.graph
        if set(self._variable_fields) != names:
            while self.variables_box.count():
                w = self.variables_box.takeAt(0).widget()
                if w is not None:
                    w.deleteLater()
            self._variable_fields = {}
            for name in sorted(names):
                label = QLabel(f"{name} =")
                field = QLineEdit()
                field.setMaximumWidth(80)
                field.setToolTip(f"default value of {name} for this kernel (launches may override it)")
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

    # -- pushing commands ------------------------------------------------------------------
    def command_done(self) -> None:
        self.refresh_analysis()

    def new_kernel(self) -> bool:
        kid = self.project.new_id("k")
        table = self.graph.latency_table if self.graph is not None else DEFAULT_TABLE
        graph = KernelGraph(name=f"kernel {len(self.project.kernels) + 1}", latency_table=table)
        return self.push(AddKernel(kid, graph))

    def add_instruction(self, opcode: str, pos: QPointF | None = None) -> str | None:
        """Place an instruction: at ``pos`` (its program order follows its height) or after
        the last one."""
        g = self.graph
        if g is None:
            self.show_message("Add a kernel first (New or Import…)", error=True)
            return None
        nid = g.new_id("i")
        if pos is None:
            ys = [ins.y for ins in g.instructions.values()]
            xs = [ins.x for ins in g.instructions.values()]
            x, y, index = (min(xs) if xs else 0.0), (max(ys) + ROW_SPACING if ys else 0.0), None
        else:
            x, y = pos.x() - 60, pos.y() - NODE_H / 2
            index = sum(1 for ins in g.instructions.values() if ins.y < y)
        try:
            ins = Instruction.make(nid, opcode, x=float(round(x)), y=float(round(y)))
        except ModelError as exc:
            self.show_message(str(exc), error=True)
            return None
        return nid if self.push(AddInstruction(self.kernel_id, ins, index)) else None

    def add_edge(self, src: str, dst: str, kind: str | None = None) -> str | None:
        g = self.graph
        if g is None:
            return None
        eid = g.new_id("e")
        edge = Edge(eid, src, dst, kind or self.scene.edge_kind)
        return eid if self.push(AddEdge(self.kernel_id, edge)) else None

    def move_instructions(self, positions: dict, merge_key=None) -> bool:
        return self.push(MoveInstructions(self.kernel_id, positions, merge_key=merge_key))

    def make_loop(self, iterations: str | None = None) -> str | None:
        g = self.graph
        if g is None:
            return None
        nodes, _, _ = self.scene.selected_ids()
        if not nodes:
            self.show_message("Select the instructions of the loop body first", error=True)
            return None
        text = (iterations if iterations is not None else self.loop_iterations.text()).strip()
        lid = g.new_id("loop")
        try:
            loop = Loop.make(lid, nodes, text or "1")
        except ModelError as exc:
            mark_error(self.loop_iterations, str(exc))
            self.show_message(f"Loop iterations: {exc}", error=True)
            return None
        clear_error(self.loop_iterations)
        return lid if self.push(AddLoop(self.kernel_id, loop)) else None

    def delete_selection(self) -> bool:
        nodes, edges, loops = self.scene.selected_ids()
        if not (nodes or edges or loops):
            return False
        commands = [RemoveEdge(self.kernel_id, e) for e in edges]
        commands += [RemoveLoop(self.kernel_id, lp) for lp in loops]
        commands += [RemoveInstruction(self.kernel_id, n) for n in nodes]
        count = len(commands)
        return self.push(Macro(f"delete {count} item{'s' if count > 1 else ''}", commands))

    def auto_layout(self) -> bool:
        g = self.graph
        if g is None or not g.instructions:
            return False
        positions = layered_layout(g)
        if all((g.instructions[n].x, g.instructions[n].y) == p for n, p in positions.items()):
            return False
        cmd = MoveInstructions(self.kernel_id, positions)
        cmd.text = "auto-layout"
        ok = self.push(cmd)
        if ok:
            self.view.fit()
        return ok

    def set_variable(self, name: str, value: float | None) -> bool:
        g = self.graph
        variables = dict(g.variables)
        if value is None:
            variables.pop(name, None)
        else:
            variables[name] = int(value) if float(value).is_integer() else value
        if variables == g.variables:
            return False
        return self.push(SetKernelProperties(self.kernel_id, variables=variables))

    def set_latency_table(self, key: str | None) -> bool:
        g = self.graph
        if g is None or g.latency_table == key:
            return False
        return self.push(SetKernelProperties(self.kernel_id, latency_table=key))

    # -- import / export -------------------------------------------------------------------
    def import_kernel(self, path: str) -> str | None:
        """Read a gpumodeler-kernel JSON file into the project; a bad file is refused with
        the reason in the message strip."""
        name = Path(path).name
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            graph = from_dict(data)
        except OSError as exc:
            self.show_message(f"Cannot read {name}: {exc.strerror or exc}", error=True)
            return None
        except json.JSONDecodeError as exc:
            self.show_message(f"{name} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
                              error=True)
            return None
        except (ModelError, TypeError, ValueError, AttributeError) as exc:
            self.show_message(f"{name} is not a valid kernel graph: {exc}", error=True)
            return None
        kid = self.project.new_id("k")
        if not self.push(AddKernel(kid, graph)):
            return None
        self.set_kernel(kid)
        self.show_message(f"Imported {graph.name} from {name}")
        return kid

    def export_kernel(self, path: str) -> bool:
        g = self.graph
        if g is None:
            return False
        try:
            Path(path).write_text(json.dumps(to_dict(g), indent=2, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
        except OSError as exc:
            self.show_message(f"Cannot write {Path(path).name}: {exc.strerror or exc}", error=True)
            return False
        self.show_message(f"Exported {g.name} to {path}")
        return True

    def _on_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import kernel graph", "",
                                              "Kernel graphs (*.json);;All files (*)")
        if path:
            self.import_kernel(path)

    def _on_export(self) -> None:
        g = self.graph
        if g is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export kernel graph", f"{g.name}.json",
                                              "Kernel graphs (*.json)")
        if path:
            self.export_kernel(path)

    # -- user input handlers ---------------------------------------------------------------
    def _set_mode(self, mode: str) -> None:
        self.scene.mode = mode
        self.view.setDragMode(KernelView.RubberBandDrag if mode == "select" else KernelView.NoDrag)

    def _on_kernel_chosen(self, index: int) -> None:
        self.set_kernel(self.kernel_combo.itemData(index))

    def _on_table_chosen(self, index: int) -> None:
        self.set_latency_table(self.table_combo.itemData(index))

    def _on_latency_edited(self, edge_id: str, text: str) -> None:
        try:
            value = parse_float(text, "latency (cycles)", 0.0, allow_empty=True)
        except FieldError as exc:
            self.show_message(str(exc), error=True)
            return
        if self.graph is not None and edge_id in self.graph.edges \
                and self.graph.edges[edge_id].latency != value:
            self.push(UpdateEdge(self.kernel_id, edge_id, latency=value), field="latency")

    def _on_variable_edited(self, name: str) -> None:
        field = self._variable_fields[name]
        try:
            value = parse_float(field.text(), f"variable {name}", allow_empty=True)
        except FieldError as exc:
            mark_error(field, str(exc))
            self.show_message(str(exc), error=True)
            return
        clear_error(field)
        self.set_variable(name, value)

    def _on_property_edit(self, kind: str, item_id: str, changes: dict) -> None:
        field = next(iter(changes))
        if kind == "kernel":
            cmd = SetKernelProperties(self.kernel_id, **changes)
        elif kind == "instruction":
            cmd = UpdateInstruction(self.kernel_id, item_id, **changes)
        elif kind == "edge":
            cmd = UpdateEdge(self.kernel_id, item_id, **changes)
        elif kind == "loop":
            cmd = UpdateLoop(self.kernel_id, item_id, **changes)
        else:
            return
        self.push(cmd, field=field)

    # -- selection -------------------------------------------------------------------------
    def _on_scene_selection(self) -> None:
        if self._selecting:
            return
        self._refresh_selection_panel()
        kind, item_id = self._selected_single()
        self._selecting = True
        try:
            self.document.select(kind, item_id)
        finally:
            self._selecting = False

    def _selected_single(self) -> tuple[str, str]:
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
            table_value = None
            if g.latency_table in TABLES:
                try:
                    table_value = resolve_edge_latency(g, Edge(e.id, e.src, e.dst, e.kind, None, e.taken),
                                                       get_table(g.latency_table))
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
