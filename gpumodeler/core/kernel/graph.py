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
is read and written by :func:`from_dict` / :func:`to_dict`
(:mod:`gpumodeler.core.kernel.kernel_format`); the items (:class:`Instruction`, :class:`Edge`,
:class:`Loop`) are in :mod:`gpumodeler.core.kernel.graph_items`. Both are importable from here.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from operator import is_

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.graph_items import (  # noqa: F401  (re-exported)
    ACCESS_PATTERNS, EDGE_KINDS, Edge, Instruction, Loop)
from gpumodeler.core.kernel.item_table import plain
from gpumodeler.core.kernel.kernel_format import (  # noqa: F401  (re-exported)
    FORMAT_NAME, FORMAT_VERSION, read_graph, to_dict)
from gpumodeler.core.kernel.loop_nesting import LoopNesting, first_conflict, loop_nesting, nesting_or_none


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
    # what the compiler allocated, where the graph came from a listing that says so
    # (cuobjdump -res-usage's REG and SHARED, nvdisasm's SHI_REGISTERS): the occupancy's
    # inputs when a launch gives none; None = unknown
    registers_per_thread: int | None = None
    static_shared_bytes: int | None = None
    # instructions that run only a fraction of the time (core.kernel.sass.guards): id -> Guard
    guards: dict = field(default_factory=dict)
    # loop variables each launch's block sets unless the user does (a loop that runs
    # blockDim.x times: core.kernel.sass.trip_counts): variable -> its formula of block_x,
    # block_y, block_z (text)
    block_trips: dict = field(default_factory=dict)
    # guard variables each launch sets to the share of the block's warps passing a thread
    # test whose bound halves each trip of a loop (a reduction tree's if (tid < s):
    # core.kernel.sass.trip_counts): variable -> {"value", "op", "first", "shift", "trips"}
    trip_tests: dict = field(default_factory=dict)
    listeners: list = field(default_factory=list, repr=False, compare=False)
    # (the loops as objects, their LoopNesting) when last worked out (:meth:`nesting`): a
    # cache, not document state, so not a dataclass field (an instance sets its own)
    _nesting = None
    # what reading an older file changed or could not decide (kernel_format.read_graph,
    # core.kernel.format_upgrade), one line each, for the CLI and the editor to show: a note
    # of the read, not document state (not compared, not written, not copied)
    read_notes = ()

    # -- queries ---------------------------------------------------------------------------
    def order(self) -> dict[str, int]:
        """Program order index of each instruction."""
        return dict(zip(self.instructions, range(len(self.instructions))))

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

    def nesting(self) -> LoopNesting:
        """How the loops nest (:func:`gpumodeler.core.kernel.loop_nesting.loop_nesting`).

        Worked out once for as long as ``loops`` holds the same loop objects (loops are
        immutable values, so the same objects nest the same way): reading a file, the
        latency bound and the counts each need it, and it costs a look at every member."""
        loops = tuple(self.loops.values())
        cached = self._nesting
        if cached is not None and len(cached[0]) == len(loops) and all(map(is_, cached[0], loops)):
            return cached[1]
        nesting = loop_nesting(loops)
        self._nesting = (loops, nesting)
        return nesting

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

    def _plain(self, name: str) -> dict:
        """The table ``name`` ("instructions" or "edges") as a plain dict, before a change: a
        table read from a file keeps its items as columns
        (:class:`~gpumodeler.core.kernel.item_table.ItemTable`), and the graph holds the dict
        of its items from the first change on."""
        table = getattr(self, name)
        if table.__class__ is not dict:
            table = plain(table)
            setattr(self, name, table)
        return table

    def make_items(self) -> "KernelGraph":
        """Make every instruction and edge object now (a graph read from a file makes them
        when first asked for) and hold them as plain dicts; returns the graph. For a view
        that shows every item: made column by column at once, not one by one as asked."""
        self._plain("instructions")
        self._plain("edges")
        return self

    def add_instruction(self, ins: Instruction, index: int | None = None) -> Instruction:
        ins.checked()
        self._plain("instructions")
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
        self._plain("instructions")[node_id] = new
        self._emit("instruction_changed", new)
        return new

    def remove_instruction(self, node_id: str):
        """Remove an instruction with its edges and loop memberships.

        Returns ``(instruction, index, edges, loops_before)`` so a command can undo it."""
        ins = self._need(self._plain("instructions"), node_id, "instruction")
        index = list(self.instructions).index(node_id)
        removed_edges = self.edges_of(node_id)
        loops_before = [lp for lp in self.loops.values() if node_id in lp.members]
        # The loops first, innermost first: a loop left without the instruction still lies
        # inside the loops around it, which have it until their turn. One may be refused (it
        # would be left with another loop's instructions): then the loops done are put back
        # and nothing else was touched.
        shrunk: list = []
        try:
            for lp in sorted(loops_before, key=lambda lp: len(lp.members)):
                if len(lp.members) > 1:
                    self.update_loop(lp.id, members=lp.members - {node_id})
                    shrunk.append(lp)
        except GraphError:
            for lp in reversed(shrunk):
                self.update_loop(lp.id, members=lp.members)
            raise
        for lp in loops_before:
            if len(lp.members) == 1:
                self.remove_loop(lp.id)
        for e in removed_edges:
            self.remove_edge(e.id)
        del self.instructions[node_id]
        self._emit("instruction_removed", ins)
        return ins, index, removed_edges, loops_before

    def add_edge(self, edge: Edge) -> Edge:
        edge.checked()
        self._plain("edges")
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
        self._plain("edges")[edge_id] = new
        self._emit("edge_changed", new)
        return new

    def remove_edge(self, edge_id: str) -> Edge:
        edge = self._need(self._plain("edges"), edge_id, "edge")
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
                if not self.instructions.keys() >= loop.members:  # as _check_loop would,
                    unknown = sorted(m for m in loop.members if m not in self.instructions)
                    raise GraphError(f"loop {loop.id}: no instruction(s) {', '.join(unknown)}",
                                     item=loop.id)  # before comparing with other loops
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
        nesting = nesting_or_none(existing + added)
        if nesting is not None:  # they nest: keep it for nesting()
            self._nesting = (tuple(existing + added), nesting)
            return
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
                           instructions=dict(plain(self.instructions)),
                           edges=dict(plain(self.edges)),
                           loops=dict(self.loops),
                           registers_per_thread=self.registers_per_thread,
                           static_shared_bytes=self.static_shared_bytes,
                           guards=dict(self.guards), block_trips=dict(self.block_trips),
                           trip_tests=dict(self.trip_tests))

    def __eq__(self, other):
        if not isinstance(other, KernelGraph):
            return NotImplemented
        return to_dict(self) == to_dict(other)


def from_dict(data: dict) -> KernelGraph:
    """Read a graph from a dict (parsed JSON, format ``gpumodeler-kernel``); raises
    FormatError/GraphError naming the item (:func:`gpumodeler.core.kernel.kernel_format.read_graph`)."""
    return read_graph(data, KernelGraph)
