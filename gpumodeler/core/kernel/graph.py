"""The kernel execution graph: instructions as nodes, latencies as edges, loops as regions.

This is the document object behind Volkov's latency bound (PhD 2016, §3.7–3.8) as adapted
by Gajger (MSc 2017, §4.4.2 and §5.2.2): each SASS instruction of one warp is a node; edges
carry the latency that separates two issues. Edge kinds:

``ilp``
    issue spacing between consecutive independent instructions of a warp (ILP latency).
``dual``
    the second instruction of a dual-issued pair: 0 cycles.
``dependency``
    register dependency; carries the producer's instruction latency (for a load, the
    latency of the memory level it reads, like ``memory``).
``memory``
    register dependency on a load; carries the memory access latency of the producer's
    memory level (global DRAM, L2, L1, shared, ...).
``branch``
    control dependency after a branch: taken or not-taken branch latency.
``barrier``
    barrier pipeline latency (Volkov §3.7 rule 4).
``replacement``
    block replacement at the end of the warp (Gajger: "inbound edge of the virtual end node").

An edge without an explicit ``latency`` takes it from the architecture's latency table
(:mod:`gpumodeler.core.kernel.latency_tables`); an explicit one overrides the table.

Loops are regions (sets of instructions) with an iteration-count expression in launch
variables (``a``, ``N/256``); regions nest but must not partly overlap. Program order is the
order of ``instructions``: an edge that goes backwards in program order is loop-carried and
must lie inside a loop. The analysis is in :mod:`gpumodeler.core.kernel.latency_bound`.

JSON format ``gpumodeler-kernel`` version 1 (``docs/kernel-format.md`` has the full text)
is read and written by :func:`from_dict` / :func:`to_dict`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
import math
import numbers

from gpumodeler.core.errors import FormatError, GraphError, shown
from gpumodeler.core.kernel.expressions import Expression, parse
from gpumodeler.core.kernel.latency_tables import MEMORY_LEVELS, INSTRUCTION_CLASSES
from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.kernel.loop_nesting import first_conflict
from gpumodeler.core.kernel.opcodes import SPACES, UNITS, classify

EDGE_KINDS = ("ilp", "dual", "dependency", "memory", "branch", "barrier", "replacement")
ACCESS_PATTERNS = ("strided", "random", "broadcast")
FORMAT_NAME = "gpumodeler-kernel"
FORMAT_VERSION = 1


def is_finite_number(value) -> bool:
    """True for an int or float (not a bool) whose value a float holds finitely."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond a float
        return False


@dataclass(frozen=True, slots=True)
class Instruction:
    """One SASS instruction of a warp.

    ``unit``/``latency_class``/``space``/``is_load`` default from the opcode
    (:func:`gpumodeler.core.kernel.opcodes.classify`) and may be set explicitly for opcodes the
    classifier does not know. Memory attributes (``ldst`` unit only): ``memory_level`` picks
    the latency-table row (default ``dram`` for global/local, ``shared`` for shared);
    ``width_bytes`` per thread, ``stride`` in elements between consecutive threads,
    ``pattern`` (strided, random, broadcast), ``hit_ratio`` of cache hits (these bytes do not
    reach DRAM), ``segment_bytes`` the DRAM transaction size, and for shared memory
    ``bank_conflict_degree`` (1 = no conflict).
    """

    id: str
    opcode: str
    unit: str = ""
    latency_class: str | None = None
    space: str | None = None
    is_load: bool = False
    label: str = ""
    memory_level: str | None = None
    width_bytes: int = 4
    stride: float = 1.0
    pattern: str = "strided"
    hit_ratio: float = 0.0
    segment_bytes: int = 32
    bank_conflict_degree: int = 1
    x: float = 0.0
    y: float = 0.0

    @classmethod
    def make(cls, id: str, opcode: str, **kw) -> "Instruction":
        """An instruction with unit, latency class and space filled from the opcode."""
        info = classify(opcode)
        if not kw.get("unit"):
            if info is None:
                raise GraphError(
                    f"instruction {id}: unknown opcode {opcode!r}; give its unit explicitly "
                    f"(one of {', '.join(UNITS)})", item=id)
            kw["unit"] = info.unit
            kw.setdefault("latency_class", info.latency_class)
            kw.setdefault("space", info.space)
            kw.setdefault("is_load", info.is_load)
        return cls(id=id, opcode=opcode, **kw).checked()

    def checked(self) -> "Instruction":
        """Validate attribute values; returns self or raises GraphError."""
        def bad(msg):
            raise GraphError(f"instruction {self.id} ({self.opcode}): {msg}", item=self.id)
        if not self.id:
            bad("id must not be empty")
        for name in ("stride", "hit_ratio", "x", "y"):
            value = getattr(self, name)
            if not is_finite_number(value):
                bad(f"{name} must be a finite number, got {shown(value)}")
        for name in ("label", "opcode"):
            if not isinstance(getattr(self, name), str):
                bad(f"{name} must be text, got {shown(getattr(self, name))}")
        if not isinstance(self.is_load, bool):
            bad(f"is_load must be true or false, got {shown(self.is_load)}")
        if self.unit not in UNITS:
            bad(f"unit {shown(self.unit)} is not one of {', '.join(UNITS)}")
        if self.latency_class is not None and self.latency_class not in INSTRUCTION_CLASSES:
            bad(f"latency class {shown(self.latency_class)} is not one of {', '.join(INSTRUCTION_CLASSES)}")
        if self.unit == "ldst" and self.space not in SPACES:
            bad(f"a load/store needs a state space, one of {', '.join(SPACES)}; got {shown(self.space)}")
        if self.memory_level is not None and self.memory_level not in MEMORY_LEVELS:
            bad(f"memory level {shown(self.memory_level)} is not one of {', '.join(MEMORY_LEVELS)}")
        if self.pattern not in ACCESS_PATTERNS:
            bad(f"access pattern {shown(self.pattern)} is not one of {', '.join(ACCESS_PATTERNS)}")
        if not (isinstance(self.width_bytes, int) and self.width_bytes in (1, 2, 4, 8, 16)):
            bad(f"access width must be 1, 2, 4, 8 or 16 bytes, got {shown(self.width_bytes)}")
        if not (math.isfinite(self.stride) and self.stride >= 1):
            bad(f"stride must be a number >= 1 element, got {shown(self.stride)}")
        if not (0.0 <= self.hit_ratio <= 1.0):
            bad(f"cache hit ratio must be within 0..1, got {shown(self.hit_ratio)}")
        if not (isinstance(self.segment_bytes, int) and self.segment_bytes in (32, 64, 128)):
            bad(f"memory transaction size must be 32, 64 or 128 bytes, got {shown(self.segment_bytes)}")
        if not (isinstance(self.bank_conflict_degree, int) and 1 <= self.bank_conflict_degree <= 32):
            bad(f"bank conflict degree must be an integer 1..32, got {shown(self.bank_conflict_degree)}")
        return self

    def latency_key(self) -> str:
        """Latency-table memory row for a load, else ''."""
        if self.memory_level:
            return self.memory_level
        return {"shared": "shared", "constant": "constant"}.get(self.space or "", "dram")


@dataclass(frozen=True, slots=True)
class Edge:
    id: str
    src: str
    dst: str
    kind: str
    latency: float | None = None
    taken: bool | None = None  # branch edges: None = taken iff the edge goes backwards

    def checked(self) -> "Edge":
        if self.kind not in EDGE_KINDS:
            raise GraphError(f"edge {self.id}: kind {shown(self.kind)} is not one of {', '.join(EDGE_KINDS)}",
                             item=self.id)
        if self.latency is not None:
            if not is_finite_number(self.latency):
                raise GraphError(f"edge {self.id}: latency must be a number of cycles, got "
                                 f"{shown(self.latency)}", item=self.id)
            if self.latency < 0:
                raise GraphError(f"edge {self.id}: latency must be >= 0 cycles, got {self.latency}",
                                 item=self.id)
        if self.taken is not None and not isinstance(self.taken, bool):
            raise GraphError(f"edge {self.id}: taken must be true, false or absent, got "
                             f"{shown(self.taken)}", item=self.id)
        if self.src == self.dst:
            raise GraphError(f"edge {self.id}: an edge from {self.src} to itself is a cycle; "
                             f"loop-carried latencies go from a later to an earlier instruction",
                             item=self.id)
        return self


@dataclass(frozen=True)
class Loop:
    id: str
    members: frozenset
    iterations: Expression
    name: str = ""

    @classmethod
    def make(cls, id: str, members, iterations, name: str = "") -> "Loop":
        if not members:
            raise GraphError(f"loop {id}: a loop needs at least one instruction", item=id)
        if not isinstance(members, (list, tuple, set, frozenset)) \
                or not all(isinstance(m, str) for m in members):
            raise GraphError(f"loop {id}: members must be a list of instruction ids, got "
                             f"{shown(members)}", item=id)
        return cls(id=id, members=frozenset(members), iterations=parse(iterations), name=name)


@dataclass
class KernelGraph:
    """A kernel's execution graph. Mutations go through the methods (the GUI wraps them in
    commands); listeners are called with ``(event, payload)`` after each change."""

    name: str = "kernel"
    latency_table: str | None = None
    description: str = ""
    variables: dict = field(default_factory=dict)
    instructions: dict = field(default_factory=dict)
    edges: dict = field(default_factory=dict)
    loops: dict = field(default_factory=dict)
    listeners: list = field(default_factory=list, repr=False, compare=False)

    # -- queries ---------------------------------------------------------------------------
    def order(self) -> dict[str, int]:
        """Program order index of each instruction."""
        return {nid: i for i, nid in enumerate(self.instructions)}

    def new_id(self, prefix: str) -> str:
        """``prefix`` + the first free number from (number of ids + 1) on.

        Ids are unique across instructions, edges and loops, so the count is the sum of
        the three tables' sizes and each candidate is looked up in them: no set of all ids
        is built (reading a file whose edges have no ids stays linear)."""
        n = len(self.instructions) + len(self.edges) + len(self.loops) + 1
        while self._id_taken(f"{prefix}{n}"):
            n += 1
        return f"{prefix}{n}"

    def _id_taken(self, item_id: str) -> bool:
        return item_id in self.instructions or item_id in self.edges or item_id in self.loops

    def edges_of(self, node_id: str) -> list[Edge]:
        return [e for e in self.edges.values() if node_id in (e.src, e.dst)]

    def loops_containing(self, node_id: str) -> list[Loop]:
        """Loops containing the node, outermost first."""
        found = [lp for lp in self.loops.values() if node_id in lp.members]
        return sorted(found, key=lambda lp: -len(lp.members))

    # -- mutations -------------------------------------------------------------------------
    def _emit(self, event, payload):
        for fn in list(self.listeners):
            fn(event, payload)

    def add_instruction(self, ins: Instruction, index: int | None = None) -> Instruction:
        ins.checked()
        if ins.id in self.instructions or ins.id in self.edges or ins.id in self.loops:
            raise GraphError(f"id {ins.id!r} is already used in this graph", item=ins.id)
        if index is None or index >= len(self.instructions):
            self.instructions[ins.id] = ins
        else:
            items = list(self.instructions.items())
            items.insert(max(index, 0), (ins.id, ins))
            self.instructions = dict(items)
        self._emit("instruction_added", ins)
        return ins

    def update_instruction(self, node_id: str, **changes) -> Instruction:
        old = self._need(self.instructions, node_id, "instruction")
        new = replace(old, **changes).checked()
        self.instructions[node_id] = new
        self._emit("instruction_changed", new)
        return new

    def remove_instruction(self, node_id: str):
        """Remove an instruction with its edges and loop memberships.

        Returns ``(instruction, index, edges, loops_before)`` so a command can undo it."""
        ins = self._need(self.instructions, node_id, "instruction")
        index = list(self.instructions).index(node_id)
        removed_edges = self.edges_of(node_id)
        for e in removed_edges:
            self.remove_edge(e.id)
        loops_before = [lp for lp in self.loops.values() if node_id in lp.members]
        for lp in loops_before:
            if len(lp.members) == 1:
                self.remove_loop(lp.id)
            else:
                self.update_loop(lp.id, members=lp.members - {node_id})
        del self.instructions[node_id]
        self._emit("instruction_removed", ins)
        return ins, index, removed_edges, loops_before

    def add_edge(self, edge: Edge) -> Edge:
        edge.checked()
        for end in (edge.src, edge.dst):
            if end not in self.instructions:
                raise GraphError(f"edge {edge.id}: no instruction {end!r} in this graph", item=edge.id)
        if edge.id in self.edges or edge.id in self.instructions or edge.id in self.loops:
            raise GraphError(f"id {edge.id!r} is already used in this graph", item=edge.id)
        self.edges[edge.id] = edge
        self._emit("edge_added", edge)
        return edge

    def update_edge(self, edge_id: str, **changes) -> Edge:
        old = self._need(self.edges, edge_id, "edge")
        new = replace(old, **changes).checked()
        self.edges[edge_id] = new
        self._emit("edge_changed", new)
        return new

    def remove_edge(self, edge_id: str) -> Edge:
        edge = self._need(self.edges, edge_id, "edge")
        del self.edges[edge_id]
        self._emit("edge_removed", edge)
        return edge

    def _check_loop(self, loop: Loop, ignore: str | None = None) -> None:
        unknown = sorted(m for m in loop.members if m not in self.instructions)
        if unknown:
            raise GraphError(f"loop {loop.id}: no instruction(s) {', '.join(unknown)}", item=loop.id)
        for other in self.loops.values():
            if other.id == ignore:
                continue
            inter = loop.members & other.members
            if inter and not (loop.members <= other.members or other.members <= loop.members):
                raise GraphError(
                    f"loop {loop.id} partly overlaps loop {other.id} (shared: "
                    f"{', '.join(sorted(inter))}); loops must nest or be disjoint", item=loop.id)
            if loop.members == other.members:
                raise GraphError(f"loop {loop.id} has the same instructions as loop {other.id}; "
                                 f"multiply their iteration counts instead", item=loop.id)

    def add_loop(self, loop: Loop) -> Loop:
        if loop.id in self.loops or loop.id in self.instructions or loop.id in self.edges:
            raise GraphError(f"id {loop.id!r} is already used in this graph", item=loop.id)
        self._check_loop(loop)
        self.loops[loop.id] = loop
        self._emit("loop_added", loop)
        return loop

    def add_loops(self, loops) -> list[Loop]:
        """Add loops in order, as :meth:`add_loop` one after the other would — the same
        checks, the same first error, the loops before it kept — but checking how they nest
        in one pass over their members instead of against every other loop (a file with
        thousands of loops). ``loops`` may be a generator; an error it raises counts as
        that loop's."""
        existing = list(self.loops.values())
        added: list[Loop] = []
        try:
            for loop in loops:
                if self._id_taken(loop.id):
                    raise GraphError(f"id {loop.id!r} is already used in this graph", item=loop.id)
                unknown = sorted(m for m in loop.members if m not in self.instructions)
                if unknown:  # as _check_loop would, before comparing with other loops
                    raise GraphError(f"loop {loop.id}: no instruction(s) {', '.join(unknown)}",
                                     item=loop.id)
                self.loops[loop.id] = loop
                added.append(loop)
        except Exception:
            self._raise_first_nesting_conflict(existing, added)
            self._emit_added(added)
            raise
        self._raise_first_nesting_conflict(existing, added)
        self._emit_added(added)
        return added

    def _raise_first_nesting_conflict(self, existing, added):
        k = first_conflict(existing + added, start=len(existing))
        if k is None:
            return
        k -= len(existing)
        for loop in added[k:]:
            del self.loops[loop.id]
        self._emit_added(added[:k])
        self._check_loop(added[k])  # the pairwise message; raises
        raise AssertionError("loop nesting conflict not confirmed pairwise")  # pragma: no cover

    def _emit_added(self, added):
        for loop in added:
            self._emit("loop_added", loop)

    def update_loop(self, loop_id: str, **changes) -> Loop:
        old = self._need(self.loops, loop_id, "loop")
        if "iterations" in changes:
            changes["iterations"] = parse(changes["iterations"])
        if "members" in changes:
            changes["members"] = frozenset(changes["members"])
            if not changes["members"]:
                raise GraphError(f"loop {loop_id}: a loop needs at least one instruction", item=loop_id)
        new = replace(old, **changes)
        self._check_loop(new, ignore=loop_id)
        self.loops[loop_id] = new
        self._emit("loop_changed", new)
        return new

    def remove_loop(self, loop_id: str) -> Loop:
        loop = self._need(self.loops, loop_id, "loop")
        del self.loops[loop_id]
        self._emit("loop_removed", loop)
        return loop

    @staticmethod
    def _need(table, key, what):
        try:
            return table[key]
        except KeyError:
            raise GraphError(f"no {what} {key!r} in this graph", item=key) from None

    def copy(self) -> "KernelGraph":
        """An independent copy without listeners (a snapshot for a worker thread)."""
        return KernelGraph(name=self.name, latency_table=self.latency_table,
                           description=self.description, variables=dict(self.variables),
                           instructions=dict(self.instructions), edges=dict(self.edges),
                           loops=dict(self.loops))

    def __eq__(self, other):
        if not isinstance(other, KernelGraph):
            return NotImplemented
        return to_dict(self) == to_dict(other)


# -- JSON format ---------------------------------------------------------------------------
_INS_DEFAULTS = {f.name: f.default for f in fields(Instruction) if f.name not in ("id", "opcode")}
_INS_KEYS = {"id", "opcode"} | set(_INS_DEFAULTS)
_EDGE_KEYS = {"id", "from", "to", "kind", "latency", "taken"}


def to_dict(graph: KernelGraph) -> dict:
    """The graph as a JSON-ready dict (format ``gpumodeler-kernel`` v1), defaults omitted
    except the classifier-derived unit fields, which are always written so a file stays
    readable by a version whose opcode table differs."""
    out = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "name": graph.name}
    if graph.description:
        out["description"] = graph.description
    if graph.latency_table:
        out["latency_table"] = graph.latency_table
    if graph.variables:
        out["variables"] = dict(graph.variables)
    ins_out = []
    for ins in graph.instructions.values():
        d = {"id": ins.id, "opcode": ins.opcode, "unit": ins.unit}
        for key, default in _INS_DEFAULTS.items():
            if key == "unit":
                continue
            value = getattr(ins, key)
            if value != default:
                d[key] = value
        ins_out.append(d)
    out["instructions"] = ins_out
    out["edges"] = []
    for e in graph.edges.values():
        d = {"id": e.id, "from": e.src, "to": e.dst, "kind": e.kind}
        if e.latency is not None:
            d["latency"] = e.latency
        if e.taken is not None:
            d["taken"] = e.taken
        out["edges"].append(d)
    order = graph.order()
    out["loops"] = [{"id": lp.id, "name": lp.name, "iterations": lp.iterations.text,
                     "members": sorted(lp.members, key=order.__getitem__)}
                    for lp in graph.loops.values()]
    return out


def _check_keys(obj, allowed, what):
    if not isinstance(obj, dict):
        raise FormatError(f"{what} must be a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise FormatError(f"{what}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(allowed))}")


def _list_of(data: dict, key: str) -> list:
    """``data[key]``, a JSON list (an absent key is an empty one)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise FormatError(f"{key!r} must be a list of objects, got {shown(value)}")
    return value


@collector_paused()
def from_dict(data: dict) -> KernelGraph:
    """Read a graph from a dict (parsed JSON); raises FormatError/GraphError with the item."""
    _check_keys(data, {"format", "version", "name", "description", "latency_table", "variables",
                       "instructions", "edges", "loops"}, "kernel file")
    if data.get("format") != FORMAT_NAME:
        raise FormatError(f"not a gpumodeler kernel file (format is {data.get('format')!r}, "
                          f"expected {FORMAT_NAME!r})")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise FormatError(f"kernel file version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise FormatError(f"kernel file is version {version}, written by a newer gpumodeler; "
                          f"this one reads up to version {FORMAT_VERSION}")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
            isinstance(k, str) and is_finite_number(v) for k, v in variables.items()):
        raise FormatError("variables must map names to finite numbers, e.g. {\"a\": 128}")
    if data.get("latency_table") is not None and not isinstance(data["latency_table"], str):
        raise FormatError(f"latency_table must be a table name, got {shown(data['latency_table'])}")
    graph = KernelGraph(name=str(data.get("name", "kernel")), latency_table=data.get("latency_table"),
                        description=str(data.get("description", "")), variables=dict(variables))
    for i, d in enumerate(_list_of(data, "instructions")):
        if type(d) is not dict or not d.keys() <= _INS_KEYS:  # the label only when needed
            _check_keys(d, _INS_KEYS, f"instruction #{i + 1}")
        if "id" not in d or "opcode" not in d:
            raise FormatError(f"instruction #{i + 1} needs 'id' and 'opcode'")
        kw = {k: v for k, v in d.items() if k not in ("id", "opcode")}
        if "stride" in kw and is_finite_number(kw["stride"]):  # else checked() says why
            kw["stride"] = float(kw["stride"])
        graph.add_instruction(Instruction.make(str(d["id"]), str(d["opcode"]), **kw))
    for i, d in enumerate(_list_of(data, "edges")):
        if type(d) is not dict or not d.keys() <= _EDGE_KEYS:
            _check_keys(d, _EDGE_KEYS, f"edge #{i + 1}")
        missing = [k for k in ("from", "to", "kind") if k not in d]
        if missing:
            raise FormatError(f"edge #{i + 1} needs {', '.join(missing)}")
        graph.add_edge(Edge(id=str(d.get("id") or graph.new_id("e")), src=str(d["from"]),
                            dst=str(d["to"]), kind=d["kind"], latency=d.get("latency"),
                            taken=d.get("taken")))
    graph.add_loops(_loops_from(_list_of(data, "loops"), graph))
    return graph


def _loops_from(items, graph: KernelGraph):
    """Loops of a kernel file in order (a generator: a new id counts the loops added)."""
    for i, d in enumerate(items):
        _check_keys(d, {"id", "name", "iterations", "members"}, f"loop #{i + 1}")
        if "iterations" not in d or "members" not in d:
            raise FormatError(f"loop #{i + 1} needs 'iterations' and 'members'")
        yield Loop.make(str(d.get("id") or graph.new_id("loop")), d["members"],
                        d["iterations"], str(d.get("name", "")))
