"""Undoable edits of a :class:`~gpumodeler.core.project.Project` (house style: commands with undo).

Each command has ``do(project)``, ``undo(project)`` and a ``text`` for the Edit menu. A
command validates in ``do`` and raises :class:`~gpumodeler.core.errors.ModelError` before
changing anything, so a refused edit leaves the document untouched. Commands with the same
non-None ``merge_key`` pushed one after another merge into one step (a drag is one step).
:class:`UndoStack` is the pure-Python stack the CLI and tests use; the GUI wraps the same
commands in QUndoCommand adapters on one QUndoStack.
"""
from __future__ import annotations

from dataclasses import replace

from gpumodeler.core.errors import GraphError, InvalidParameter
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop
from gpumodeler.core.project import Connection, Project, connection_refusal


class Command:
    text = "edit"
    merge_key = None

    def do(self, project: Project) -> None:
        raise NotImplementedError

    def undo(self, project: Project) -> None:
        raise NotImplementedError

    def merge(self, other: "Command") -> bool:
        """Absorb ``other`` (pushed right after, same merge key); True if merged."""
        return False


class Macro(Command):
    """Several commands as one undo step (paste, delete of a selection)."""

    def __init__(self, text: str, commands: list[Command]):
        self.text, self.commands, self._done = text, list(commands), 0

    def do(self, project):
        self._done = 0
        try:
            for c in self.commands:
                c.do(project)
                self._done += 1
        except Exception:
            for c in reversed(self.commands[:self._done]):
                c.undo(project)
            raise

    def undo(self, project):
        for c in reversed(self.commands):
            c.undo(project)


# -- generic collection edits --------------------------------------------------------------
class AddItem(Command):
    def __init__(self, collection: str, item, text: str | None = None):
        self.collection, self.item = collection, item
        self.text = text or f"add {collection.rstrip('s')}"

    def do(self, project):
        if hasattr(self.item, "checked"):
            self.item.checked()
        if self.item.id in getattr(project, self.collection):
            raise InvalidParameter(f"id {self.item.id!r} is already used", item=self.item.id)
        project.put(self.collection, self.item)

    def undo(self, project):
        project.drop(self.collection, self.item.id)


class RemoveItem(Command):
    def __init__(self, collection: str, item_id: str, text: str | None = None):
        self.collection, self.item_id, self.item = collection, item_id, None
        self.text = text or f"remove {collection.rstrip('s')}"

    def do(self, project):
        self.item = project.drop(self.collection, self.item_id)

    def undo(self, project):
        project.put(self.collection, self.item)


class UpdateItem(Command):
    """Change fields of a frozen item; ``merge_key`` merges consecutive edits (drags)."""

    def __init__(self, collection: str, item_id: str, text: str = "edit", merge_key=None, **changes):
        self.collection, self.item_id, self.changes = collection, item_id, changes
        self.text, self.merge_key, self.old = text, merge_key, None

    def do(self, project):
        table = getattr(project, self.collection)
        if self.item_id not in table:
            raise InvalidParameter(f"no {self.collection.rstrip('s')} {self.item_id!r}", item=self.item_id)
        old = table[self.item_id]
        new = replace(old, **self.changes)
        if hasattr(new, "checked"):
            new.checked()
        if self.old is None:
            self.old = old
        project.put(self.collection, new)

    def undo(self, project):
        project.put(self.collection, self.old)

    def merge(self, other):
        if not (isinstance(other, UpdateItem) and other.merge_key == self.merge_key
                and other.item_id == self.item_id and other.collection == self.collection):
            return False
        self.changes.update(other.changes)
        return True


class MoveDevices(Command):
    """New canvas positions of placed devices; consecutive moves with one key merge."""

    text = "move"

    def __init__(self, positions: dict, merge_key=None):
        self.positions, self.merge_key = dict(positions), merge_key
        self.old: dict = {}

    def do(self, project):
        for did, (x, y) in self.positions.items():
            d = project.devices[did]
            self.old.setdefault(did, (d.x, d.y))
            project.put("devices", replace(d, x=float(x), y=float(y)))

    def undo(self, project):
        for did, (x, y) in self.old.items():
            project.put("devices", replace(project.devices[did], x=x, y=y))

    def merge(self, other):
        if isinstance(other, MoveDevices) and other.merge_key == self.merge_key:
            for did, old in other.old.items():
                self.old.setdefault(did, old)
            self.positions.update(other.positions)
            return True
        return False


class SetOverride(Command):
    """Override one catalog value of a placed device or connection for this project;
    ``value=None`` reverts to the catalog value."""

    def __init__(self, collection: str, item_id: str, field: str, value):
        self.collection, self.item_id, self.field, self.value = collection, item_id, field, value
        self.text = f"revert {field}" if value is None else f"override {field}"
        self.old = None

    def do(self, project):
        item = getattr(project, self.collection)[self.item_id]
        self.old = item
        overrides = dict(item.overrides)
        if self.value is None:
            overrides.pop(self.field, None)
        else:
            overrides[self.field] = self.value
        project.put(self.collection, replace(item, overrides=overrides))

    def undo(self, project):
        project.put(self.collection, self.old)


class RemoveDevice(Command):
    """Remove a placed device with its links; launches that ran on it lose their GPU."""

    def __init__(self, device_id: str):
        self.device_id = device_id
        self.text = "delete device"
        self.device = None
        self.links: list = []
        self.launches: list = []

    def do(self, project):
        self.links = project.connections_of(self.device_id)
        for c in self.links:
            project.drop("connections", c.id)
        self.launches = [l for l in project.launches.values() if l.gpu == self.device_id]
        for l in self.launches:
            project.put("launches", replace(l, gpu=None))
        self.device = project.drop("devices", self.device_id)

    def undo(self, project):
        project.put("devices", self.device)
        for c in self.links:
            project.put("connections", c)
        for l in self.launches:
            project.put("launches", l)


class AddConnection(Command):
    text = "connect"

    def __init__(self, connection: Connection):
        self.connection = connection

    def do(self, project):
        reason = connection_refusal(project, self.connection.a, self.connection.b, self.connection.link_type)
        if reason:
            raise InvalidParameter(f"cannot connect: {reason}", item=self.connection.id)
        project.put("connections", self.connection)

    def undo(self, project):
        project.drop("connections", self.connection.id)


# -- kernels ---------------------------------------------------------------------------------
class AddKernel(Command):
    text = "add kernel"

    def __init__(self, kernel_id: str, graph: KernelGraph):
        self.kernel_id, self.graph = kernel_id, graph

    def do(self, project):
        if self.kernel_id in project.kernels:
            raise InvalidParameter(f"kernel id {self.kernel_id!r} is already used", item=self.kernel_id)
        project.put_kernel(self.kernel_id, self.graph)

    def undo(self, project):
        project.drop_kernel(self.kernel_id)


class RemoveKernel(Command):
    text = "delete kernel"

    def __init__(self, kernel_id: str):
        self.kernel_id, self.graph = kernel_id, None
        self.launches: list = []

    def do(self, project):
        self.launches = [l for l in project.launches.values() if l.kernel == self.kernel_id]
        for l in self.launches:
            project.put("launches", replace(l, kernel=None))
        self.graph = project.drop_kernel(self.kernel_id)

    def undo(self, project):
        project.put_kernel(self.kernel_id, self.graph)
        for l in self.launches:
            project.put("launches", l)


class SetKernelProperties(Command):
    """Name, description, latency table or default variables of a kernel.

    A latency table must be one of ``known_tables`` (keys; default: the built-in ones —
    a caller with a device database passes its tables' keys too)."""

    text = "edit kernel"

    def __init__(self, kernel_id: str, *, known_tables=None, **changes):
        allowed = {"name", "description", "latency_table", "variables"}
        bad = set(changes) - allowed
        if bad:
            raise InvalidParameter(f"kernel property {', '.join(sorted(bad))} cannot be set; valid: {', '.join(sorted(allowed))}")
        self.kernel_id, self.changes = kernel_id, changes
        self.old: dict = {}
        self.known_tables = known_tables

    def do(self, project):
        g = project.kernels[self.kernel_id]
        key = self.changes.get("latency_table")
        if key:
            from gpumodeler.core.kernel.latency_tables import TABLES
            known = TABLES if self.known_tables is None else self.known_tables
            if key not in known:
                raise GraphError(f"unknown latency table {key!r}; valid: {', '.join(known)}")
        for k, v in self.changes.items():
            self.old[k] = getattr(g, k)
            setattr(g, k, dict(v) if k == "variables" else v)
        g._emit("properties_changed", dict(self.changes))

    def undo(self, project):
        g = project.kernels[self.kernel_id]
        for k, v in self.old.items():
            setattr(g, k, v)
        g._emit("properties_changed", dict(self.old))


class AddInstruction(Command):
    text = "add instruction"

    def __init__(self, kernel_id: str, instruction: Instruction, index: int | None = None):
        self.kernel_id, self.instruction, self.index = kernel_id, instruction, index

    def do(self, project):
        project.kernels[self.kernel_id].add_instruction(self.instruction, self.index)

    def undo(self, project):
        project.kernels[self.kernel_id].remove_instruction(self.instruction.id)


class RemoveInstruction(Command):
    text = "delete instruction"

    def __init__(self, kernel_id: str, node_id: str):
        self.kernel_id, self.node_id, self.saved = kernel_id, node_id, None

    def do(self, project):
        self.saved = project.kernels[self.kernel_id].remove_instruction(self.node_id)

    def undo(self, project):
        g = project.kernels[self.kernel_id]
        ins, index, edges, loops = self.saved
        g.add_instruction(ins, index)
        for lp in loops:
            if lp.id in g.loops:
                g.update_loop(lp.id, members=lp.members)
            else:
                g.add_loop(lp)
        for e in edges:
            g.add_edge(e)


class UpdateInstruction(Command):
    text = "edit instruction"

    def __init__(self, kernel_id: str, node_id: str, merge_key=None, **changes):
        self.kernel_id, self.node_id, self.changes, self.merge_key = kernel_id, node_id, changes, merge_key
        self.old = None

    def do(self, project):
        g = project.kernels[self.kernel_id]
        if self.old is None:
            self.old = g.instructions[self.node_id]
        g.update_instruction(self.node_id, **self.changes)

    def undo(self, project):
        g = project.kernels[self.kernel_id]
        old = self.old
        g.update_instruction(self.node_id, **{f: getattr(old, f) for f in old.__dataclass_fields__ if f != "id"})

    def merge(self, other):
        if isinstance(other, UpdateInstruction) and other.merge_key == self.merge_key \
                and other.node_id == self.node_id and other.kernel_id == self.kernel_id:
            self.changes.update(other.changes)
            return True
        return False


class MoveInstructions(Command):
    text = "move instructions"

    def __init__(self, kernel_id: str, positions: dict, merge_key=None):
        self.kernel_id, self.positions, self.merge_key = kernel_id, dict(positions), merge_key
        self.old: dict = {}

    def do(self, project):
        g = project.kernels[self.kernel_id]
        for nid, (x, y) in self.positions.items():
            ins = g.instructions[nid]
            self.old.setdefault(nid, (ins.x, ins.y))
            g.update_instruction(nid, x=float(x), y=float(y))

    def undo(self, project):
        g = project.kernels[self.kernel_id]
        for nid, (x, y) in self.old.items():
            g.update_instruction(nid, x=x, y=y)

    def merge(self, other):
        if isinstance(other, MoveInstructions) and other.merge_key == self.merge_key \
                and other.kernel_id == self.kernel_id:
            for nid, old in other.old.items():
                self.old.setdefault(nid, old)
            self.positions.update(other.positions)
            return True
        return False


class AddEdge(Command):
    text = "add edge"

    def __init__(self, kernel_id: str, edge: Edge):
        self.kernel_id, self.edge = kernel_id, edge

    def do(self, project):
        project.kernels[self.kernel_id].add_edge(self.edge)

    def undo(self, project):
        project.kernels[self.kernel_id].remove_edge(self.edge.id)


class RemoveEdge(Command):
    text = "delete edge"

    def __init__(self, kernel_id: str, edge_id: str):
        self.kernel_id, self.edge_id, self.edge = kernel_id, edge_id, None

    def do(self, project):
        self.edge = project.kernels[self.kernel_id].remove_edge(self.edge_id)

    def undo(self, project):
        project.kernels[self.kernel_id].add_edge(self.edge)


class UpdateEdge(Command):
    text = "edit edge"

    def __init__(self, kernel_id: str, edge_id: str, **changes):
        self.kernel_id, self.edge_id, self.changes, self.old = kernel_id, edge_id, changes, None

    def do(self, project):
        g = project.kernels[self.kernel_id]
        self.old = g.edges[self.edge_id]
        g.update_edge(self.edge_id, **self.changes)

    def undo(self, project):
        old = self.old
        project.kernels[self.kernel_id].update_edge(
            self.edge_id, kind=old.kind, latency=old.latency, taken=old.taken, src=old.src, dst=old.dst)


class AddLoop(Command):
    text = "make loop"

    def __init__(self, kernel_id: str, loop: Loop):
        self.kernel_id, self.loop = kernel_id, loop

    def do(self, project):
        project.kernels[self.kernel_id].add_loop(self.loop)

    def undo(self, project):
        project.kernels[self.kernel_id].remove_loop(self.loop.id)


class RemoveLoop(Command):
    text = "remove loop"

    def __init__(self, kernel_id: str, loop_id: str):
        self.kernel_id, self.loop_id, self.loop = kernel_id, loop_id, None

    def do(self, project):
        self.loop = project.kernels[self.kernel_id].remove_loop(self.loop_id)

    def undo(self, project):
        project.kernels[self.kernel_id].add_loop(self.loop)


class UpdateLoop(Command):
    text = "edit loop"

    def __init__(self, kernel_id: str, loop_id: str, **changes):
        self.kernel_id, self.loop_id, self.changes, self.old = kernel_id, loop_id, changes, None

    def do(self, project):
        g = project.kernels[self.kernel_id]
        self.old = g.loops[self.loop_id]
        g.update_loop(self.loop_id, **self.changes)

    def undo(self, project):
        old = self.old
        project.kernels[self.kernel_id].update_loop(self.loop_id, members=old.members,
                                                    iterations=old.iterations, name=old.name)


class UndoStack:
    """A plain undo stack over a project (the GUI uses QUndoStack with the same commands)."""

    def __init__(self, project: Project):
        self.project = project
        self.commands: list[Command] = []
        self.index = 0
        self.clean_index = 0

    def push(self, command: Command) -> None:
        command.do(self.project)  # raises before changing anything on invalid input
        del self.commands[self.index:]
        if self.commands and command.merge_key is not None and self.index > self.clean_index \
                and self.commands[-1].merge_key == command.merge_key and self.commands[-1].merge(command):
            return
        self.commands.append(command)
        self.index += 1

    def undo(self) -> None:
        if self.index == 0:
            raise InvalidParameter("nothing to undo")
        self.index -= 1
        self.commands[self.index].undo(self.project)

    def redo(self) -> None:
        if self.index == len(self.commands):
            raise InvalidParameter("nothing to redo")
        self.commands[self.index].do(self.project)
        self.index += 1

    @property
    def can_undo(self) -> bool:
        return self.index > 0

    @property
    def can_redo(self) -> bool:
        return self.index < len(self.commands)

    def is_clean(self) -> bool:
        return self.index == self.clean_index

    def set_clean(self) -> None:
        self.clean_index = self.index


__all__ = [n for n in dir() if not n.startswith("_")]
