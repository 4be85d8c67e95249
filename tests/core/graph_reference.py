"""The kernel-graph algorithms as they were before they were made linear (speed targets), kept
as the reference the linear ones must agree with exactly: pairwise loop checks, per-node
scans of every loop, a networkx DAG and topological sort per region.

One deliberate difference: the old analysis listed a loop region's instructions in the
iteration order of the loop's frozenset of members (which depends on the string hash seed);
here they are listed in program order, which is one of the orders that iteration could give
and the order the new code uses.
"""
from __future__ import annotations

import math

import networkx as nx

from gpumodeler.core.errors import FormatError, GraphError
from gpumodeler.core.kernel.edge_latency import resolve_edge_latency
from gpumodeler.core.kernel.graph import FORMAT_NAME, FORMAT_VERSION, Edge, Instruction, KernelGraph, Loop
from gpumodeler.core.kernel.kernel_format import INSTRUCTION_KEYS, check_keys
from gpumodeler.core.kernel.latency_bound import MAX_FORMS, WORK_PER_NODE, LatencyBound
from gpumodeler.core.kernel.latency_forms import symbolic_forms
from gpumodeler.core.kernel.latency_tables import LatencyTable, get_table
from gpumodeler.core.kernel.loop_regions import Region
from gpumodeler.core.kernel.warp_counts import WarpCounts, COUNT_NAMES, access_bytes_per_warp, \
    lines_touched


def old_new_id(graph: KernelGraph, prefix: str) -> str:
    taken = set(graph.instructions) | set(graph.edges) | set(graph.loops)
    n = len(taken) + 1
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def old_check_loop(graph: KernelGraph, loop: Loop, ignore=None) -> None:
    unknown = sorted(set(loop.members) - set(graph.instructions))
    if unknown:
        raise GraphError(f"loop {loop.id}: no instruction(s) {', '.join(unknown)}", item=loop.id)
    for other in graph.loops.values():
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


def old_add_loop(graph: KernelGraph, loop: Loop) -> Loop:
    if loop.id in graph.loops or loop.id in graph.instructions or loop.id in graph.edges:
        raise GraphError(f"id {loop.id!r} is already used in this graph", item=loop.id)
    old_check_loop(graph, loop)
    graph.loops[loop.id] = loop
    return loop


def old_from_dict(data: dict) -> KernelGraph:
    """from_dict as it was (edges and loops one at a time, ids from old_new_id)."""
    check_keys(data, {"format", "version", "name", "description", "latency_table", "variables",
                       "instructions", "edges", "loops"}, "kernel file")
    if data.get("format") != FORMAT_NAME or data.get("version") not in range(1, FORMAT_VERSION + 1):
        raise FormatError(f"reference reads versions 1 to {FORMAT_VERSION} only")
    graph = KernelGraph(name=str(data.get("name", "kernel")), latency_table=data.get("latency_table"),
                        description=str(data.get("description", "")),
                        variables=dict(data.get("variables", {})))
    for i, d in enumerate(data.get("instructions", [])):
        check_keys(d, INSTRUCTION_KEYS, f"instruction #{i + 1}")
        kw = {k: v for k, v in d.items() if k not in ("id", "opcode")}
        graph.add_instruction(Instruction.make(str(d["id"]), str(d["opcode"]), **kw))
    for i, d in enumerate(data.get("edges", [])):
        graph.add_edge(Edge(id=str(d.get("id") or old_new_id(graph, "e")), src=str(d["from"]),
                            dst=str(d["to"]), kind=d["kind"], latency=d.get("latency"),
                            taken=d.get("taken")))
    for i, d in enumerate(data.get("loops", [])):
        check_keys(d, {"id", "name", "iterations", "members"}, f"loop #{i + 1}")
        if "iterations" not in d or "members" not in d:
            raise FormatError(f"loop #{i + 1} needs 'iterations' and 'members'")
        old_add_loop(graph, Loop.make(str(d.get("id") or old_new_id(graph, "loop")), d["members"],
                                      d["iterations"], str(d.get("name", ""))))
    return graph


def old_loop_structure(graph: KernelGraph):
    loops = sorted(graph.loops.values(), key=lambda lp: (len(lp.members), lp.id))
    parent = {}
    for i, lp in enumerate(loops):
        parent[lp.id] = next((o.id for o in loops[i + 1:] if lp.members < o.members), None)
    depth = {}
    for lp in loops:
        d, p = 0, parent[lp.id]
        while p is not None:
            d, p = d + 1, parent[p]
        depth[lp.id] = d
    innermost = {}
    for lp in loops:
        for n in lp.members:
            innermost.setdefault(n, lp.id)
    return parent, depth, innermost


def old_weights(graph: KernelGraph) -> dict:
    """warp_counts.count's monomial of each instruction, as it was computed."""
    loops_sorted = {lid: len(lp.members) for lid, lp in graph.loops.items()}
    weight = {}
    for nid in graph.instructions:
        containing = [lid for lid, lp in graph.loops.items() if nid in lp.members]
        weight[nid] = tuple(sorted(containing, key=lambda l: (-loops_sorted[l], l)))
    return weight


def old_count(graph: KernelGraph, warp_size: int = 32, control_on_cuda_cores: bool = True) -> WarpCounts:
    weight = old_weights(graph)
    forms = {name: {} for name in COUNT_NAMES}

    def add(name, mono, amount):
        if amount:
            forms[name][mono] = forms[name].get(mono, 0.0) + amount

    cuda_units = {"cuda_core"} | ({"branch", "exit"} if control_on_cuda_cores else set())
    for nid, ins in graph.instructions.items():
        if ins.unit == "virtual":
            continue
        mono = weight[nid]
        add("instructions", mono, 1)
        add("issued_instructions", mono, 1)
        if ins.unit in cuda_units:
            add("cuda_core_instructions", mono, 1)
        elif ins.unit == "sfu":
            add("sfu_instructions", mono, 1)
        elif ins.unit == "fp64":
            add("fp64_instructions", mono, 1)
        elif ins.unit == "ldst":
            add("memory_instructions", mono, 1)
            if ins.space in ("global", "local"):
                nbytes = access_bytes_per_warp(ins.width_bytes, ins.stride, ins.pattern,
                                               ins.segment_bytes, warp_size)
                add("gmem_accesses", mono, 1)
                add("gmem_bytes", mono, nbytes * (1.0 - ins.hit_ratio))
                lines = lines_touched(ins.width_bytes, ins.stride, ins.pattern, warp_size)
                add("l1_wavefronts", mono, lines)  # the L1's data stage: a cycle a line
                add("lsu_instructions", mono, 1)  # the load/store units: one instruction
                extra = lines - 1
            elif ins.space == "shared":
                add("smem_accesses", mono, 1)
                add("lsu_instructions", mono, 1)
                add("smem_bank_cycles", mono, ins.bank_conflict_degree)
                # the conflict beyond the 1, 2 or 4 wavefronts a 32-, 64- or 128-bit access
                # takes anyway
                extra = -(-ins.bank_conflict_degree // max(1, ins.width_bytes // 4)) - 1
            else:
                extra = 0
            add("reissues", mono, extra)
            add("issued_instructions", mono, extra)
    for e in graph.edges.values():
        if e.kind == "dual":
            mono = weight[e.dst] if len(weight[e.dst]) <= len(weight[e.src]) else weight[e.src]
            add("dual_issues", mono, 1)
            add("issued_instructions", mono, -1)
    return WarpCounts(forms={k: {m: c for m, c in v.items() if c} for k, v in forms.items()},
                      iterations={lid: lp.iterations for lid, lp in graph.loops.items()})


def old_analyze(graph: KernelGraph, table: LatencyTable | str | None = None) -> LatencyBound:
    if table is None and graph.latency_table:
        table = graph.latency_table
    if isinstance(table, str):
        table = get_table(table)
    order = graph.order()
    parent, depth, innermost = old_loop_structure(graph)

    def chain(node):
        out, lid = [], innermost.get(node)
        while lid is not None:
            out.append(lid)
            lid = parent[lid]
        out.append(None)
        return out

    chains = {n: chain(n) for n in graph.instructions}

    def item_at(node, region):
        prev = node
        for lid in chains[node]:
            if lid == region:
                return prev
            prev = ("L", lid)
        raise AssertionError("node not in region")

    def out_end(item):
        return ("out", item[1]) if isinstance(item, tuple) else item

    def in_end(item):
        return ("in", item[1]) if isinstance(item, tuple) else item

    edge_latency = {}
    forward: dict = {}
    carried: dict = {}
    for e in graph.edges.values():
        w = resolve_edge_latency(graph, e, table, order)
        if w < 0 or not math.isfinite(w):
            raise GraphError(f"edge {e.id}: latency must be a finite number >= 0, got {w}", item=e.id)
        edge_latency[e.id] = w
        dst_set = set(chains[e.dst])
        region = next(l for l in chains[e.src] if l in dst_set)
        s_item, d_item = item_at(e.src, region), item_at(e.dst, region)
        if order[e.src] >= order[e.dst]:
            if region is None:
                raise GraphError(
                    f"edge {e.id} from {e.src} back to {e.dst} makes a cycle outside any loop; "
                    f"put both instructions in a loop, or draw the edge forwards", item=e.id)
            carried.setdefault(region, []).append((in_end(d_item), out_end(s_item), w, e.id))
        else:
            forward.setdefault(region, []).append((out_end(s_item), in_end(d_item), w, e.id))

    members_of = {None: graph.instructions}
    # program order instead of frozenset order (see the module docstring)
    members_of.update({lid: [n for n in graph.instructions if n in lp.members]
                       for lid, lp in graph.loops.items()})
    regions = {}
    for region_id, members in members_of.items():
        dag = nx.DiGraph()
        for n in members:
            item = item_at(n, region_id)
            if isinstance(item, tuple):
                dag.add_edge(("in", item[1]), ("out", item[1]))
            else:
                dag.add_node(item)
        best_edge = {}
        for src, dst, w, eid in forward.get(region_id, ()):
            if (src, dst) not in best_edge or best_edge[(src, dst)][0] < w:
                best_edge[(src, dst)] = (w, eid)
        dag.add_edges_from(best_edge)
        try:
            topo = tuple(nx.topological_sort(dag))
        except nx.NetworkXUnfeasible:
            cycle = nx.find_cycle(dag)
            names = " -> ".join(str(u[1] if isinstance(u, tuple) else u) for u, _ in cycle)
            raise GraphError(f"the graph has a cycle outside a loop ({names}); put it inside a loop") from None
        preds: dict = {}
        for (src, dst), (w, eid) in best_edge.items():
            preds.setdefault(dst, []).append((src, w, eid))
        for n in topo:
            if isinstance(n, tuple) and n[0] == "out":
                preds.setdefault(n, []).append((("in", n[1]), ("loop", n[1]), ("loop", n[1])))
        regions[region_id] = Region(region_id, topo, {k: tuple(v) for k, v in preds.items()},
                                     tuple(carried.get(region_id, ())))

    loop_order = tuple(sorted(graph.loops, key=lambda l: -depth[l]))
    iterations = {lid: lp.iterations for lid, lp in graph.loops.items()}
    forms, per_iteration = symbolic_forms(regions, loop_order, iterations, MAX_FORMS, WORK_PER_NODE)
    return LatencyBound(
        forms=forms, iterations=iterations,
        loop_names={lid: lp.name for lid, lp in graph.loops.items()},
        per_iteration=per_iteration, edge_latency=edge_latency,
        edge_ends={e.id: (e.src, e.dst) for e in graph.edges.values()},
        regions=regions, loop_order=loop_order,
    )
