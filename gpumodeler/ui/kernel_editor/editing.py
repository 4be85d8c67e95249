"""The kernel editor's commands: each user intent on the graph becomes one core command
pushed through the document (one undo step), or a message that says why not.

:class:`GraphEditing` is a mixin of :class:`~.editor.KernelEditor`; it uses the editor's
``graph``, ``kernel_id``, ``project``, ``scene``, ``view``, ``push`` and ``show_message``
and its tool-bar fields (``loop_iterations``, ``table_combo``).
"""
from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QFileDialog

from gpumodeler.core.commands import (AddEdge, AddInstruction, AddKernel, AddLoop, Macro,
                                      MoveInstructions, RemoveEdge, RemoveInstruction, RemoveLoop,
                                      SetKernelProperties, UpdateEdge, UpdateInstruction, UpdateLoop)
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop, from_dict, to_dict

from ..launch_panel.fields import FieldError, clear_error, mark_error, parse_float
from .items import NODE_H
from gpumodeler.core.kernel.layout import ROW_SPACING, view_aspect, wrapped_layout

DEFAULT_TABLE = "maxwell-gajger"


class GraphEditing:
    """Adding, changing and deleting kernels, instructions, edges and loops."""

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
        viewport = self.view.viewport()
        positions = wrapped_layout(g, view_aspect(viewport.width(), viewport.height()))
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
        return self.push(SetKernelProperties(self.kernel_id, latency_table=key,
                                             known_tables=self.document.latency_tables()))

    # -- import / export -------------------------------------------------------------------
    def import_kernel(self, path: str) -> str | None:
        """Read a gpumodeler-kernel JSON file into the project; a bad file is refused with
        the reason in the message strip."""
        name = Path(path).name
        try:
            text = Path(path).read_text(encoding="utf-8")
            # Parsing and reading with the cyclic collector paused, as from_dict alone was:
            # the ~10^6 objects a big file parses into cannot be freed meanwhile, and with it
            # running each full pass also walks every graph already open, so each further
            # import got slower (measured: the fifth of five 10^5-instruction imports
            # 1.8 s CPU, with it paused 1.35 s). The editor shows every item: they are
            # made here too, at once (a file's graph makes them when first asked for).
            with collector_paused():
                graph = from_dict(json.loads(text)).make_items()
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
        if len(graph.instructions) > 1 and not any(
                ins.x or ins.y for ins in graph.instructions.values()):
            # a file without positions (written by a script): every instruction would sit
            # on one spot; laid out as an imported listing is, in the view's proportions
            viewport = self.view.viewport()
            for nid, (x, y) in wrapped_layout(graph, view_aspect(viewport.width(),
                                                                 viewport.height())).items():
                graph.update_instruction(nid, x=x, y=y)
        kid = self.project.new_id("k")
        if not self.push(AddKernel(kid, graph)):
            return None
        self.set_kernel(kid)
        # what reading a file of an older format version changed or left undecided
        # (core.kernel.format_upgrade), a line each, the first few shown
        notes = list(graph.read_notes)
        shown_notes = notes[:3] + ([f"… and {len(notes) - 3} more"] if len(notes) > 3 else [])
        self.show_message("\n".join([f"Imported {graph.name} from {name}"] + shown_notes))
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

    # -- edits in fields -------------------------------------------------------------------
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
            cmd = SetKernelProperties(self.kernel_id, **changes,
                                      known_tables=self.document.latency_tables())
        elif kind == "instruction":
            cmd = UpdateInstruction(self.kernel_id, item_id, **changes)
        elif kind == "edge":
            cmd = UpdateEdge(self.kernel_id, item_id, **changes)
        elif kind == "loop":
            cmd = UpdateLoop(self.kernel_id, item_id, **changes)
        else:
            return
        self.push(cmd, field=field)
