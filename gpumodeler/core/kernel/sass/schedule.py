"""Latencies from the compiler's schedule for edges the latency table cannot give
(sm_5x and later; docs/sass-import.md, "Latencies from the schedule").

From Volta on, each instruction's control word carries a stall count: the cycles the
compiler makes the warp wait before issuing its next instruction (Jia et al.,
arXiv:1804.06826 §2.1); on Maxwell and Pascal the bundle's control word carries the same
field for each of its three instructions (Gray, maxas wiki, "Control Codes"), a stall of 0
meaning the next instruction is dual-issued (a ``dual`` edge, 0 cycles here). The importer turns them into the latencies of the issue-order edges
(``ilp``, and the fall-through ``branch``/``barrier`` edges). For a fixed-latency producer
the compiler places its consumer only after the producer's pipeline latency has passed, so
the sum of the stall counts from producer to consumer is at least that latency — the value
the compiler itself relied on. For a variable-latency producer (a load, ``S2R``: it sets a
scoreboard the consumer waits on) the sum is only the part of the wait the schedule shows.

Where the published table has no value for what an edge needs (no source measured it: e.g.
``S2R`` on Hopper, FP32 on Ada, DRAM on Blackwell), :func:`fill_from_schedule` gives that
edge the stall-count sum as an explicit latency — a **lower bound** — and returns what it
filled, so the import says which edges, for which table row. Values a source gives are never
replaced. A graph without control words (an nvdisasm listing without ``-hex``) is left
unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.edge_latency import latency_key, resolve_edge_latency
from gpumodeler.core.kernel.graph_items import Edge
from gpumodeler.core.kernel.item_table import make_instances
from gpumodeler.core.kernel.collector import collector_paused

ISSUE_ORDER_KINDS = ("ilp", "branch", "barrier")


@dataclass(frozen=True, slots=True)
class ScheduledLatency:
    edge: str
    producer: str  # the producer's opcode
    needed: str  # what the table lacks (its message)
    latency_cycles: float


def _issue_offsets(graph) -> tuple[dict | None, dict]:
    """Cycle at which each instruction issues along program order (sums of issue-order edge
    latencies), or None when the graph has no scheduled issue spacing (no control words); and
    the smallest latency of each instruction's issue-order edges (one pass over the edges)."""
    order = list(graph.instructions)
    spacing = {}
    issue_after: dict = {}
    for e in graph.edges.values():
        kind = e.kind
        if kind in ISSUE_ORDER_KINDS and e.latency is not None:
            lat = e.latency
            spacing[(e.src, e.dst)] = float(lat)
            if e.src not in issue_after or lat < issue_after[e.src]:
                issue_after[e.src] = lat
        elif kind == "dual":  # sm_5x/6x: issued in the same cycle as the one before
            spacing[(e.src, e.dst)] = 0.0
    if not spacing:
        return None, issue_after
    offsets, t = {}, 0.0
    for a, b in zip(order, order[1:] + [None]):
        offsets[a] = t
        if b is not None:
            t += spacing.get((a, b), 1.0)
    return offsets, issue_after


@collector_paused()  # many small objects, no cycles (core/kernel/collector.py)
def fill_from_schedule(graph, table) -> list[ScheduledLatency]:
    """Give each dependency or memory edge whose latency ``table`` lacks the stall-count
    distance from its producer to its consumer (a loop-carried edge: the producer's own
    spacing, at least 1). Changes ``graph`` in place; returns what it filled."""
    # issue_after: the issue spacing after each producer, indexed once: a loop-carried edge
    # takes the smallest latency of its producer's issue-order edges (scanning every edge of
    # the graph for each such edge made the fill quadratic: 18 000 loop-carried edges times
    # 220 000 edges in an unrolled sm_90 listing)
    if table is None:
        return []
    offsets, issue_after = _issue_offsets(graph)
    if offsets is None:
        return []
    order = {iid: k for k, iid in enumerate(graph.instructions)}
    # what the table says for each kind of edge (latency_key: edges alike share one look-up;
    # a dependency or memory edge's key is its producer's, so it is also kept per producer)
    looked_up: dict = {}
    of_producer: dict = {}  # (kind, producer id) -> what the table lacks ('' = nothing)
    instructions = graph.instructions
    changed = []  # (edge, its latency from the schedule)
    needs = []  # what the table lacks for each of them
    for e in list(graph.edges.values()):
        kind = e.kind
        if e.latency is not None or (kind != "dependency" and kind != "memory"):
            continue
        needed = of_producer.get((kind, e.src))
        if needed is None:
            producer = instructions.get(e.src)
            key = latency_key(e, producer, order)
            needed = looked_up.get(key) if key is not None else None
            if needed is None:
                try:
                    resolve_edge_latency(graph, e, table, order)
                    needed = ""
                except GraphError as exc:
                    needed = str(exc).split(": ", 1)[-1]
                if key is not None:
                    looked_up[key] = needed
            if key is not None:
                of_producer[(kind, e.src)] = needed
        if not needed:
            continue
        if order[e.dst] > order[e.src]:
            cycles = offsets[e.dst] - offsets[e.src]
        else:
            cycles = issue_after.get(e.src, 1.0)
        cycles = max(1.0, float(cycles))
        changed.append((e, cycles))
        needs.append(needed)
    # the edges with their new latency, made at once (make_instances: a frozen dataclass's
    # replace() costs a Python-level call per field, a twelfth of the import)
    made = make_instances(Edge, len(changed), {
        "id": [e.id for e, _ in changed], "src": [e.src for e, _ in changed],
        "dst": [e.dst for e, _ in changed], "kind": [e.kind for e, _ in changed],
        "latency": [c for _, c in changed], "taken": [e.taken for e, _ in changed]}, {})
    edges = graph.edges
    for new in made:
        edges[new.id] = new
    return make_instances(ScheduledLatency, len(changed), {
        "edge": [e.id for e, _ in changed],
        "producer": [instructions[e.src].opcode for e, _ in changed],
        "needed": needs, "latency_cycles": [c for _, c in changed]}, {})


def summary(filled: list[ScheduledLatency], table_key: str) -> str:
    """One line: how many edges took schedule latencies, for which missing rows."""
    if not filled:
        return ""
    import re
    rows: dict = {}
    row_of: dict = {}  # the row of each message (a few messages, thousands of edges)
    for f in filled:
        key = row_of.get(f.needed)
        if key is None:
            m = re.search(r"(instruction class|memory level) '([^']+)'", f.needed)
            key = row_of[f.needed] = (
                f"{'class' if m.group(1).startswith('instr') else 'memory'} {m.group(2)}" if m
                else f.needed.split(";")[0][:60])
        rows[key] = rows.get(key, 0) + 1
    listed = "; ".join(f"{n}× {k}" for k, n in sorted(rows.items()))
    return (f"{len(filled)} edge(s) take their latency from the compiler's schedule (a lower bound) "
            f"because table '{table_key}' has no value: {listed}")
