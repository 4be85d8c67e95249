"""Build a kernel execution graph (:class:`~gpumodeler.core.kernel.graph.KernelGraph`) from
one function of a SASS listing.

The graph follows Volkov 2016 §3.7 and Gajger 2017 §4.4.2/§5.2.2 as the hand-drawn saxpy2
graph does (tools/make_saxpy2_graph.py): one node per instruction, edges for issue order,
register dependencies, branches and barriers, loops as regions. The rules, with their
sources, are in docs/sass-import.md; in short:

* **Nodes**: every reachable instruction, classified by :func:`~..opcodes.classify`.
  Unknown opcodes are kept as CUDA-core instructions without a latency class and listed in
  ``ImportReport.unknown_opcodes`` (their result edges carry a placeholder latency, the
  listing's stall count, listed in ``ImportReport.placeholder_edges`` for the user to
  correct; without control words no latency, and the analysis names the edge).
* **Issue order**: an ``ilp`` edge to the next instruction; its latency is the
  instruction's stall count (at least 1) where the listing has control words (sm_70+: the
  second encoding word; sm_5x/6x: the bundle's control word, :mod:`.control`), else the
  table's ILP latency. On sm_5x/6x the second of two dual-issued instructions (a stall of 0
  before it, or nvdisasm's ``{ A ; B }``) is reached by a ``dual`` edge (0 cycles, as in
  Gajger's saxpy2 graph). After a conditional branch the edge is a not-taken ``branch``
  edge, after ``BAR`` a ``barrier`` edge (Volkov §3.7 rule 4).
* **Branches and barriers**: a taken ``branch`` edge to the target (backwards: a loop's
  back edge). On sm_70+ branch and barrier edges take the branch's or barrier's stall
  count: no source publishes branch or barrier latencies for Volta and later, and the stall
  count is the spacing the compiler scheduled, so the bound is a lower bound there
  (docs/sass-import.md). On sm_5x/6x branch edges take the table's latencies (Gajger's
  Maxwell values), barrier edges the stall count (no Maxwell or Pascal barrier latency is
  published); without control words both come from the table.
* **Register dependencies**: reaching definitions over the control-flow graph (a guarded
  write does not hide the earlier one), one edge per producer/consumer pair, ``memory`` from
  a load, else ``dependency`` (the producer's latency from the table).
* **Scoreboards** (sm_5x and later, with control words): a wait on scoreboard *n* depends
  on the instructions that may have set *n* last as their write barrier (reaching
  definitions over the scoreboards); added when the registers did not already give that
  edge. A wait on a *read* barrier (the
  source registers of a load or store may be overwritten) is a write-after-read
  ``dependency`` edge with the producer's issue spacing (:mod:`.ordering`).
* **Memory order**: a load after a store that may touch the same state space keeps its
  order, an ``ilp`` edge with the store's issue spacing (:mod:`.ordering`).
* **Loops**: :func:`~.cfg.find_loops`; loop *k* gets iterations ``loopk`` (default
  :data:`DEFAULT_ITERATIONS`); the loops of one unrolled source loop (nvcc's unrolled body
  and remainder, and ptxas' second unrolling of that body) share one variable, the source
  loop's trip count, and each loop's name says what its variable counts (:mod:`.unrolling`);
  counts the listing decides are read off it (:mod:`.trip_counts`).
"""
from __future__ import annotations


import heapq
from collections import Counter
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any
from functools import lru_cache

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop
from gpumodeler.core.kernel.item_table import make_instances
from gpumodeler.core.kernel.mma import decode_mma
from gpumodeler.core.kernel.opcodes import classify
from gpumodeler.core.kernel.graph_items import block_trip_value
from gpumodeler.core.kernel.sass import (addresses, block_tests, block_values, cfg,
                                        grid_stride, guards, neighbours, ordering,
                                        parameter_trips, trip_counts, unrolling)
from gpumodeler.core.kernel.sass.control import instruction_control
from gpumodeler.core.kernel.sass.launch_shape import trip_step_text
from gpumodeler.core.kernel.sass.listing import BRANCHES, SassFunction, arch_number, is_128bit
from gpumodeler.core.kernel.sass.operands import n_destinations, reg_access

#: Default iteration count of an imported loop (set the real one with --set loopN=...).
DEFAULT_ITERATIONS = 1
#: The block a trip count from the block's dimensions takes as its variable's default (the
#: guards' default block, guards.DEFAULT_WARPS_PER_BLOCK warps along x): each launch sets
#: its own
_DEFAULT_BLOCK = (32 * guards.DEFAULT_WARPS_PER_BLOCK, 1, 1)
#: Canvas layout: program order downwards, a loop's body indented per nesting level, and a
#: gap between basic blocks so that they stand apart in the kernel editor.
_X_STEP, _Y_STEP, _BLOCK_GAP = 260.0, 56.0, 28.0


@dataclass
class ImportReport:
    """What the import found, for the user (CLI summary, GUI message)."""

    function: str
    arch: str | None
    instructions: int = 0
    dropped_padding: int = 0
    unknown_opcodes: list = field(default_factory=list)
    loops: list = field(default_factory=list)  # (loop id, header address, latch address, iterations)
    blocks: list = field(default_factory=list)  # basic blocks: (first id, last id)
    has_control: bool = False
    skipped_edges: int = 0  # backward dependencies outside any loop (not representable)
    class_counts: dict = field(default_factory=dict)
    # tensor instructions whose shape the SASS does not show (tcgen05: in a descriptor)
    tensor_shape_unknown: list = field(default_factory=list)
    # result edges of unknown opcodes: (edge id, mnemonic, placeholder latency or None)
    placeholder_edges: list = field(default_factory=list)
    # memory instructions whose address is not affine in the thread index: (id, opcode)
    not_affine: list = field(default_factory=list)
    # copies of an unrolled loop's body ptxas peels as straight code before that loop: (first
    # and last id of the code between the loops, how often the copies run, the loop's id,
    # its iterations with them)
    peeled: list = field(default_factory=list)
    # the values each ISETP compares (its two sources), by address, where the address
    # analysis followed either: polynomials the guards' thread tests read (guards.py)
    compared: dict = field(default_factory=dict)
    # the guards of the function as guards.find_guards gives them (the graph's, added by
    # importer.add_guards)
    guards: list = field(default_factory=list)
    # the guard variables of the graph: name -> its thread test ("" a variable for --set);
    # set by importer.import_from_listing once the guards are in the graph
    guard_variables: dict = field(default_factory=dict)
    # the guards on a thread value against a loop's halving counter: their signature ->
    # the graph's trip test (guards.find_guards fills it, importer.add_guards reads it)
    trip_specs: dict = field(default_factory=dict)
    # loop variables whose trip count the listing decides: name -> what sets it
    # ("floor(block_x / 4) from each launch's block", "100 (the listing's count)")
    loop_trips: dict = field(default_factory=dict)

    def summary(self) -> str:
        loops = ", ".join(f"{lid} 0x{h:04x}-0x{l:04x} ({it})" for lid, h, l, it in self.loops) or "none"
        parts = [f"{self.function} ({self.arch or 'arch unknown'}): {self.instructions} instructions",
                 f"loops: {loops}"]
        if self.loop_trips:
            parts.append("trip counts: " + ", ".join(f"{v} = {t}" for v, t in self.loop_trips.items()))
        if self.unknown_opcodes:
            parts.append(f"warning: unknown opcodes kept and flagged: "
                         f"{', '.join(sorted(set(self.unknown_opcodes)))}")
            if self.placeholder_edges:
                shown = ", ".join(f"{eid} {m} {'no latency' if lat is None else f'{lat:g}'}"
                                  for eid, m, lat in self.placeholder_edges[:8])
                more = len(self.placeholder_edges) - 8
                parts.append(f"their result edges carry the listing's stall count as a "
                             f"placeholder latency (none without control words: set one) - "
                             f"check and set the real latency: {shown}"
                             f"{f' and {more} more' if more > 0 else ''}")
        if self.tensor_shape_unknown:
            parts.append(f"tensor instructions whose shape SASS does not show (left out of the "
                         f"tensor-core bound): {', '.join(sorted(set(self.tensor_shape_unknown)))}")
        if self.not_affine:
            shown = ", ".join(f"{i} {op}" for i, op in self.not_affine[:6])
            more = len(self.not_affine) - 6
            parts.append(f"addresses not affine in the thread index, taken as coalesced (set "
                         f"stride or pattern): {shown}{f' and {more} more' if more > 0 else ''}")
        if not self.has_control:
            parts.append("no control words (nvdisasm without -hex): issue spacing from the "
                         "latency table")
        if self.guard_variables:
            by_block = [f"{v} ({t})" for v, t in self.guard_variables.items()
                        if t and not t.startswith("= ")]
            by_parameter = [f"{v} {t}" for v, t in self.guard_variables.items()
                            if t.startswith("= ")]
            free = [v for v, t in self.guard_variables.items() if not t]
            said = ([f"{', '.join(by_block)} from each launch's block"] if by_block else []) + \
                ([f"{', '.join(by_parameter)} from the kernel parameter each launch gives "
                  f"(until then 1)"] if by_parameter else []) + \
                ([f"{', '.join(free)} default 1 (a parameter or data decides: --set)"]
                 if free else [])
            parts.append(f"guards: {'; '.join(said)}")
        return "; ".join(parts)


def _latency_class_key(info) -> str:
    if info is None:
        return "unknown"
    if info.unit == "ldst":
        return f"{info.space}_{'load' if info.is_load else 'store'}"
    return info.latency_class or info.unit


class _IdOf(Mapping):
    """address -> the graph id of the instruction there, for the instructions of the graph
    (a view of ``index_of`` and ``ids``: no second dictionary of every instruction)."""

    def __init__(self, index_of: dict, ids: list):
        self.index_of, self.ids = index_of, ids

    def __contains__(self, address) -> bool:
        return address in self.index_of

    def __getitem__(self, address) -> str:
        return self.ids[self.index_of[address]]

    def __iter__(self):
        return iter(self.index_of)

    def __len__(self) -> int:
        return len(self.index_of)


def build_graph(func: SassFunction, *, name: str | None = None, latency_table: str | None = None,
                end_node: bool = False,
                parameter_names: dict | None = None) -> tuple[KernelGraph, ImportReport]:
    """The kernel graph of one listing function, and a report of what was found.
    ``parameter_names``: ``{constant-bank offset: name}`` of the kernel's parameters (from
    its source: parameters.py), the names of the variables the import makes for them."""
    all_ins = list(func.instructions)
    index_of = {ins.address: i for i, ins in enumerate(all_ins)}
    succ = cfg.successors(all_ins, index_of)
    pad = cfg.trailing_padding(all_ins, succ)
    ins_list = all_ins[:len(all_ins) - pad] if pad else all_ins
    if not ins_list:
        raise GraphError(f"function {func.display_name} has no reachable instructions")
    n = len(ins_list)
    if pad:
        index_of = {ins.address: i for i, ins in enumerate(ins_list)}
        succ = [[j for j in s if j < n] for s in succ[:n]]
    step = ins_list[1].address - ins_list[0].address if n > 1 else None
    wide = is_128bit(func.arch, step)
    controls = [instruction_control(i) for i in ins_list]
    has_control = all(c is not None for c in controls)
    # issued together with the instruction before it: nvdisasm's braces, or (sm_5x/6x
    # control words) a stall count of 0 on the instruction before
    stalls = [None if c is None else c.stall for c in controls]
    dual = [i > 0 and (ins.dual_issued or (not wide and stalls[i - 1] == 0))
            for i, ins in enumerate(ins_list)]
    report = ImportReport(function=func.display_name, arch=func.arch, instructions=n,
                          dropped_padding=pad, has_control=has_control)

    # -- loops --------------------------------------------------------------------------
    ranges = cfg.find_loops(ins_list, index_of)
    loop_ids = [f"loop{k + 1}" for k in range(len(ranges))]
    member_of: list[list[int]] = [[] for _ in range(n)]  # loop indices containing each instruction
    for k, r in enumerate(ranges):
        for i in range(r.header, r.latch + 1):
            member_of[i].append(k)
    depth = [len(m) for m in member_of]
    infos = [classify(ins.opcode) for ins in ins_list]
    iterations, loop_notes, peeled, loop_groups = unrolling.iteration_expressions(
        ins_list, ranges, loop_ids, infos)

    # -- nodes ----------------------------------------------------------------------------
    graph = KernelGraph(name=name or func.display_name, latency_table=latency_table,
                        description="")
    ids = [f"i{ins.address:04x}" for ins in ins_list]
    access = [reg_access(ins, info.unit if info else None) for ins, info in zip(ins_list, infos)]
    blocks = cfg.basic_blocks(succ, ins_list)
    report.blocks = [(ids[a], ids[z]) for a, z in blocks]
    block_no = [0] * n
    for b, (a, z) in enumerate(blocks):
        block_no[a:z + 1] = [b] * (z - a + 1)
    n_dest = lambda ins, unit: n_destinations(ins.mnemonic, unit, ins.operands)  # noqa: E731
    snapshots: dict = {}
    # the value each integer compare tests, as the address analysis follows it: the guards'
    # thread tests (guards.py, thread_tests.py)
    probes = {i: (ins.operands[2], ins.operands[3]) for i, ins in enumerate(ins_list)
              if ins.mnemonic == "ISETP" and len(ins.operands) >= 4}
    # and the two values a min/max takes (Blackwell folds tx < 12 && ty < 12 into
    # max(tx, ty) < 12: guards.py follows it)
    probes.update({i: srcs for i, ins in enumerate(ins_list) if ins.mnemonic in guards.MIN_MAX
                   and len(srcs := guards.min_max_sources(ins)) == 2})
    probed: dict = {}
    addressed = addresses.analyse(ins_list, infos, arch_number(func.arch), n_dest, access,
                                  snapshots, ranges, probes=probes, probed=probed)
    report.compared = {ins_list[i].address: v for i, v in probed.items()
                       if any(p is not None for p in v)}
    # how far each global load's address moves from one trip of its innermost loop to the
    # next (the reuse across trips is worked out per launch: core.kernel.sass.reuse)
    innermost = [min(m, key=lambda k: ranges[k].latch - ranges[k].header) if m else None
                 for m in member_of]
    steps = addresses.trip_steps(
        ins_list, infos, n_dest, access, ranges, innermost,
        {i: a for i, a in addressed.items()
         if infos[i] is not None and infos[i].space == "global" and infos[i].is_load},
        snapshots)
    # the guards (how often guarded code runs: guards.py), found once here for the graph
    # (importer.add_guards) and for the neighbour reuse below: loads under different guards
    # do not share sectors (a stencil's halo load, run by one warp in eight, brings nothing
    # for the main load of the other seven)
    # compares of the block's dimensions the address analysis does not follow (bit fields:
    # blockDim.x % 4, the checks around an unrolled loop over blockDim.x): exact values,
    # whatever the trip (trip_counts.py)
    # one follower of the block's values for the block tests, the trip tests and the trip
    # counts (block_values.py)
    values = block_values.Follower(
        ins_list, access, lambda j: n_dest(ins_list[j], getattr(infos[j], "unit", None)),
        ranges, addresses.block_dim_offsets(arch_number(func.arch)))
    compares = [i for i, ins in enumerate(ins_list) if ins.mnemonic == "ISETP"]
    by_block = block_tests.block_compares(values, compares)
    report.compared.update((ins_list[i].address, v) for i, v in by_block.items())
    # a thread value against a loop's halving counter (a reduction tree's if (tid < s)):
    # its share of the warps averaged over the trips, per launch (trip_counts.py)
    against_counter = block_tests.trip_tests(values, loop_groups, report.compared,
                                             compares) if ranges else {}
    report.guards = guards.find_guards(
        func, _IdOf(index_of, ids), report.compared,
        exact={ins_list[i].address for i in by_block},
        trip_tests={ins_list[i].address: v for i, v in against_counter.items()},
        trip_specs=report.trip_specs, infos=infos, access=access,
        decided=parameter_trips.guard_deciders(values, arch_number(func.arch),
                                               parameter_names or {}, graph.variables))
    guarded: dict = {}
    for kind, members, fraction, signature, _ in report.guards:
        for m in members:
            guarded.setdefault(index_of[int(m[1:], 16)], []).append((kind, fraction, signature))
    reused = neighbours.reuse_hits(
        addressed, {i: _access_width(ins_list[i]) or 4 for i in addressed},
        {i: (tuple(member_of[i]), tuple(guarded.get(i, ()))) for i in addressed},
        {i for i in addressed if infos[i].is_load})
    # the fields every instruction has, as columns; ``extra`` the memory attributes of the
    # loads and stores (most instructions have none)
    labels = [f"{ins.text}  /*{ins.address:04x}*/" for ins in ins_list]
    xs = [_X_STEP * d for d in depth]
    ys = [_Y_STEP * i + _BLOCK_GAP * b for i, b in enumerate(block_no)]
    units: list = []
    classes: list = []
    spaces: list = []
    loads: list = []
    extra: list = []
    counts: Counter[str] = Counter()
    for i, (ins, info) in enumerate(zip(ins_list, infos)):
        kw: dict[str, Any] = {}
        if info is None:
            report.unknown_opcodes.append(ins.mnemonic)
            labels[i] = f"? {labels[i]}"
            units.append("cuda_core")
            classes.append(None)
            spaces.append(None)
            loads.append(False)
        else:
            is_load = info.is_load
            if info.unit == "ldst":
                width = _access_width(ins)
                if width:
                    kw["width_bytes"] = width
                if not is_load and access[i][0] and ins.mnemonic in ("ATOM", "ATOMG", "ATOMS"):
                    is_load = True  # an atomic that returns the old value
                if i in addressed:  # lane stride, broadcast, bank conflicts (addresses.py)
                    kw.update(addresses.instruction_attributes(addressed[i], width or 4))
                    if not addressed[i].affine and info.space != "constant":
                        report.not_affine.append((ids[i], ins.opcode))
                if i in steps:
                    loop, step = steps[i]
                    kw["address"] += f"; {trip_step_text(step, loop_ids[loop])}"
                if i in reused:  # a stencil neighbour: its sectors already read (neighbours.py)
                    kw["hit_ratio"], first, *rows = reused[i]
                    kw["address"] += (f"{neighbours.OVERLAPS_NOTE}{ids[first]}"
                                      f"{neighbours.rows_note(*rows) if rows else ''}: "
                                      f"{kw['hit_ratio']:.0%} served by L2")
            elif info.unit == "tensor":
                work = decode_mma(ins.opcode)
                if work is None or work.macs_per_warp is None:
                    report.tensor_shape_unknown.append(ins.opcode)
            units.append(info.unit)
            classes.append(info.latency_class)
            spaces.append(info.space)
            loads.append(is_load)
        counts[_latency_class_key(info)] += 1
        extra.append(kw)
    # valid by construction (classes from the opcode table, widths 1-16): inserted without
    # add_instruction's per-item checks, and made column by column (make_instances: a
    # frozen dataclass's __init__ costs a Python-level call per field), for speed; the
    # tests check every fixture's graph through from_dict, which checks every item
    graph.instructions.update(zip(ids, _made(
        Instruction, extra, id=ids, opcode=[ins.opcode for ins in ins_list], label=labels,
        x=xs, y=ys, unit=units, latency_class=classes, space=spaces, is_load=loads)))
    report.class_counts = dict(counts)

    # -- edges ----------------------------------------------------------------------------
    # the edges as columns (made into Edge objects at the end, by make_instances)
    e_src: list = []
    e_dst: list = []
    e_kind: list = []
    e_latency: list = []
    e_taken: list = []
    pairs: set = set()

    def add(src, dst, kind, latency=None, taken=None):
        if src == dst:
            return
        e_src.append(src)
        e_dst.append(dst)
        e_kind.append(kind)
        e_latency.append(latency)
        e_taken.append(taken)

    def spacing(i):
        c = controls[i]
        return None if c is None else float(max(c.stall, 1))

    def control_latency(i):
        """A branch's latency: sm_70+ its stall count (no published value); before Volta
        the latency table's (Gajger's Maxwell values)."""
        return spacing(i) if wide else None

    for i, ins in enumerate(ins_list):
        s = succ[i]
        if i + 1 in s:
            if ins.mnemonic in BRANCHES and cfg.is_conditional(ins):
                add(i, i + 1, "branch", latency=control_latency(i), taken=False)
            elif ins.mnemonic == "BAR":  # no source publishes a barrier latency from
                # Maxwell on: the barrier's stall count, where the listing gives it
                add(i, i + 1, "barrier", latency=spacing(i))
            elif dual[i + 1]:
                add(i, i + 1, "dual")
            else:
                add(i, i + 1, "ilp", latency=spacing(i))
        for j in s:
            if j != i + 1 and ins.mnemonic in BRANCHES:
                add(i, j, "branch", latency=control_latency(i), taken=True)
            elif j != i + 1:  # a call into a subroutine
                add(i, j, "ilp", latency=spacing(i))

    shared: dict = {}  # one set per distinct loop membership
    loops_of = [shared.setdefault(tuple(m), frozenset(m)) for m in member_of]

    # what an edge from each producer is: "memory" (a load), "dependency", or None (a
    # store, branch, barrier or exit produces no register value)
    nodes = graph.instructions
    edge_kind: list[str | None] = []
    for i, info in enumerate(infos):
        if info is None:
            edge_kind.append("dependency")
        elif info.unit == "ldst":
            edge_kind.append("memory" if nodes[ids[i]].is_load else None)
        elif info.unit in ("branch", "barrier", "exit"):
            edge_kind.append(None)
        else:
            edge_kind.append("dependency")

    def dep(d, u):
        kind = edge_kind[d]
        if kind is None or d == u or (d, u) in pairs:
            return
        if d > u and not (loops_of[d] & loops_of[u]):
            report.skipped_edges += 1
            return
        pairs.add((d, u))
        # an unknown producer has no latency class: its stall count stands in, where the
        # listing gives one (a visible placeholder, listed); else no latency, and the
        # analysis names the edge that needs one
        placeholder = infos[d] is None
        add(d, u, kind, latency=spacing(d) if placeholder else None)
        if placeholder:
            report.placeholder_edges.append((f"e{len(e_src)}", ins_list[d].mnemonic,
                                             spacing(d)))

    # dep() inlined for the common case (the most numerous edges: a known producer, an edge
    # forwards), the rest through dep()
    add_pair = pairs.add
    src_append, dst_append, kind_append = e_src.append, e_dst.append, e_kind.append
    n_plain = 0  # edges with no latency and no taken flag added here (appended below)
    for pair in _reaching_dependencies(ins_list, succ, access, blocks):
        d, u = pair
        kind = edge_kind[d]
        if kind is None or d >= u or infos[d] is None:
            if kind is not None:
                if n_plain:  # keep the columns aligned before dep() appends to them
                    e_latency.extend([None] * n_plain)
                    e_taken.extend([None] * n_plain)
                    n_plain = 0
                dep(d, u)
            continue
        if pair in pairs:
            continue
        add_pair(pair)
        src_append(d)
        dst_append(u)
        kind_append(kind)
        n_plain += 1
    e_latency.extend([None] * n_plain)
    e_taken.extend([None] * n_plain)
    ordered: set = set()

    def order(d, u, kind):
        """A WAR or store->load ordering edge with the producer's issue spacing (ordering.py)."""
        if d == u or (d, u) in pairs or (d, u) in ordered or (u == d + 1 and u in succ[d]):
            return
        if d > u and not (loops_of[d] & loops_of[u]):
            report.skipped_edges += 1
            return
        ordered.add((d, u))
        add(d, u, kind, latency=spacing(d))

    if has_control:
        sb_pairs = _reaching_dependencies(ins_list, succ, _scoreboard_access(controls), blocks)
        for d, u in sb_pairs:
            # through the setter's write barrier: the variable-latency RAW dependency
            if controls[d].write_barrier in controls[u].waits:
                dep(d, u)
        for d, u in ordering.read_barrier_waits(controls, sb_pairs):
            order(d, u, "dependency")  # write-after-read
    mem_access, stores = ordering.memory_access(ins_list, infos,
                                                [nodes[k].is_load for k in ids])
    for d, u in _reaching_dependencies(ins_list, succ, mem_access, blocks):
        if stores[d]:
            order(d, u, "ilp")  # store -> first load of a state space both may touch

    # endpoints exist, ids are fresh and kinds valid by construction: no per-item checks
    n_edges = len(e_src)
    edge_ids = list(map("e{}".format, range(1, n_edges + 1)))
    id_of = ids.__getitem__
    graph.edges.update(zip(edge_ids, make_instances(
        Edge, n_edges, {"id": edge_ids, "src": list(map(id_of, e_src)),
                        "dst": list(map(id_of, e_dst)), "kind": e_kind,
                        "latency": e_latency, "taken": e_taken}, {})))

    if end_node:
        graph.add_instruction(Instruction.make("end", "END", label="end",
                                               y=_Y_STEP * n + _BLOCK_GAP * len(blocks)))
        for i, ins in enumerate(ins_list):
            if ins.mnemonic in cfg.ENDS:
                graph.add_edge(Edge(id=f"e{len(graph.edges) + 1}", src=ids[i], dst="end",
                                    kind="replacement"))

    # trip counts the listing decides: from the block's dimensions or a number
    # (trip_counts.py)
    found = trip_counts.loop_trip_counts(values, loop_groups) if ranges else {}
    variable_of = {k: v for v, members in loop_groups.items() for k, _ in members}
    for var, tc in found.items():
        if tc.formula:
            graph.block_trips[var] = tc.formula
            graph.variables[var] = block_trip_value(tc.formula, _DEFAULT_BLOCK) or 0.0
            report.loop_trips[var] = f"{tc.formula} from each launch's block"
        else:
            graph.variables[var] = tc.number
            report.loop_trips[var] = f"{tc.number} (the listing's count)"
    # loops a kernel parameter decides: a grid-stride loop (grid_stride.py, with each
    # launch's block and grid) and a loop to a parameter (parameter_trips.py)
    arch, names = arch_number(func.arch), parameter_names or {}
    left = {v: m for v, m in loop_groups.items() if v not in found} if ranges else {}
    strided = grid_stride.grid_stride_counts(values, left, arch,
                                             addresses.launch_dim_offsets(arch), names,
                                             graph.variables)
    to_parameter = parameter_trips.parameter_trip_counts(
        values, {v: m for v, m in left.items() if v not in strided}, arch, names,
        graph.variables)
    for var, (text, named, offset) in {**strided, **to_parameter}.items():
        if named is None:  # a number once the block index cancels
            graph.variables[var] = int(text)
            report.loop_trips[var] = f"{text} (the listing's count, the same in every block)"
            continue
        graph.block_trips[var] = text
        graph.variables.setdefault(named, 0)
        graph.variables[var] = DEFAULT_ITERATIONS
        how = " from each launch's block and grid," if "grid_" in text else \
            " from each launch's block," if "block_" in text else ","
        report.loop_trips[var] = (f"{text}{how} {named} the kernel parameter at "
                                  f"c[0x0][{offset:#x}] (0: not given, the loop keeps its "
                                  f"value; set it with --set {named}=N)")
    for k, r in enumerate(ranges):
        lid = loop_ids[k]
        where = f"loop at 0x{ins_list[r.header].address:04x}"
        note = loop_notes[k]
        said = report.loop_trips.get(variable_of.get(k, ""))
        if said:
            note = f"{note}; " if note else ""
            note += f"{variable_of[k]} = {said}"
        graph.add_loop(Loop.make(lid, ids[r.header:r.latch + 1], iterations[k],
                                 name=f"{where}: {note}" if note else where))
        report.loops.append((lid, ins_list[r.header].address, ins_list[r.latch].address,
                             iterations[k]))
    report.peeled = [(ids[a], ids[z], runs, loop_ids[k], trips) for a, z, runs, k, trips in peeled]
    for expr in iterations:
        for var in _variables(expr):
            graph.variables.setdefault(var, DEFAULT_ITERATIONS)
    graph.description = (f"imported from a SASS listing of {func.display_name}"
                         f"{' (' + func.name + ')' if func.demangled else ''}"
                         f" for {func.arch or 'an unknown architecture'}; " + report.summary())
    return graph, report


def _made(cls, kws: list, **columns) -> list:
    """Instances of the frozen, slotted dataclass ``cls``, one per dict of ``kws`` (field
    values; the fields a dict lacks take their defaults), or from ``columns`` (a list per
    field), made column by column (:func:`~gpumodeler.core.kernel.item_table.make_instances`)."""
    lists: dict = dict(columns)
    consts: dict = {}
    given = set().union(*kws)
    for f in fields(cls):
        if f.name in lists:
            continue
        default = f.default
        if f.name not in given:
            if default is MISSING:
                raise TypeError(f"{cls.__name__}: no value for field {f.name!r}")
            consts[f.name] = default
        else:
            lists[f.name] = [kw.get(f.name, default) for kw in kws]
            if default is MISSING and any(v is MISSING for v in lists[f.name]):
                raise TypeError(f"{cls.__name__}: no value for field {f.name!r}")
    return make_instances(cls, len(kws), lists, consts)


def _variables(expr: str) -> list[str]:
    import re
    return [v for v in re.findall(r"[A-Za-z_]\w*", expr) if v not in ("floor", "ceil", "min", "max")]


def _access_width(ins) -> int | None:
    mods = ins.modifiers
    for tok, width in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if tok in mods:
            return width
    return None


def _reaching_dependencies(ins_list, succ, access, blocks):
    """(def index, use index) pairs by reaching definitions over the basic blocks."""
    block_of = {}
    for b, (a, z) in enumerate(blocks):
        block_of[a] = b
    bsucc = [[block_of[j] for j in succ[z]] for a, z in blocks]
    bpred = [[] for _ in blocks]
    for b, ss in enumerate(bsucc):
        for s in ss:
            bpred[s].append(b)

    # a guarded write may not happen: it adds to the reaching definitions, replaces none;
    # except one that also reads the register it writes (``@P0 IMAD R5, R5, ...``): it
    # waits for the earlier definitions whether or not it runs, so a later reader depends
    # on them through it, by a path no shorter than a direct edge (their latency plus its
    # own); it replaces them, and a chain of k such writes gives k edges, not k²/2
    guarded_at = [ins.guard is not None and ins.guard != "@PT" and not set(a[0]) & set(a[1])
                  for ins, a in zip(ins_list, access)]

    def transfer(b, state, out_pairs):
        a, z = blocks[b]
        cur = dict(state)
        get, append = cur.get, out_pairs.append  # bound once: the innermost loop
        for i in range(a, z + 1):
            written, read = access[i]
            for reg in read:
                for d in get(reg, ()):
                    append((d, i))
            if guarded_at[i]:
                for reg in written:
                    cur[reg] = get(reg, frozenset()) | {i}
            elif written:
                only = frozenset((i,))  # one set for every register the write replaces
                for reg in written:
                    cur[reg] = only

    # per block: the definitions it leaves (gen) and whether they replace those coming in
    summary = []
    for a, z in blocks:
        gen: dict = {}
        kills: set = set()
        for i in range(a, z + 1):
            g = guarded_at[i]
            for reg in access[i][0]:
                if g:
                    gen[reg] = gen.get(reg, frozenset()) | {i}
                else:
                    gen[reg] = frozenset((i,))
                    kills.add(reg)
        summary.append((gen, kills))

    def out_of(b, state):
        gen, kills = summary[b]
        out = {reg: defs for reg, defs in state.items() if reg not in kills}
        for reg, defs in gen.items():
            out[reg] = defs if reg in kills else out.get(reg, frozenset()) | defs
        return out

    # the worklist in program order (a heap of block numbers): blocks are numbered by
    # address, so a change flows forward through a whole loop body in one pass and goes
    # round a loop once per level of nesting; in arrival order it went round a loop once
    # per block changed, which made the analysis grow faster than the listing
    ins_state = [dict() for _ in blocks]
    out_state = [None] * len(blocks)
    work = list(range(len(blocks)))
    in_work = set(work)
    while work:
        b = heapq.heappop(work)
        in_work.discard(b)
        incoming = [out_state[p] for p in bpred[b] if out_state[p] is not None]
        if len(incoming) == 1:
            merged = incoming[0]  # shared, not copied: nothing changes a state in place
        else:
            merged = dict(incoming[0]) if incoming else {}
            for state in incoming[1:]:
                for reg, defs in state.items():
                    old = merged.get(reg)
                    merged[reg] = defs if old is None or old is defs else old | defs
        ins_state[b] = merged
        new = out_of(b, merged)
        if new != out_state[b]:
            out_state[b] = new
            for s in bsucc[b]:
                if s not in in_work:
                    heapq.heappush(work, s)
                    in_work.add(s)
    pairs = []
    for b in range(len(blocks)):
        transfer(b, ins_state[b], pairs)
    return pairs


def _scoreboard_access(controls):
    """Scoreboards as pseudo-registers ``SB0``..``SB5``: an instruction "writes" the ones it
    sets (write or read barrier) and "reads" the ones it waits on, so that reaching
    definitions pair each wait with the instructions that may have set it."""
    return [_sb_access(c) for c in controls]


@lru_cache(maxsize=4096)
def _sb_access(c):
    written = tuple(f"SB{b}" for b in (c.write_barrier, c.read_barrier) if b is not None)
    return written, tuple(f"SB{b}" for b in c.waits)
