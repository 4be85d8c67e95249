"""The collapsed regions of a kernel graph in one pass over its edges (issue #11).

:func:`gpumodeler.core.kernel.latency_bound.analyze` collapses every loop into an entry and an
exit inside its parent (Volkov §3.7; Gajger §4.4.2 and eq. 5.1; the semantics are in
:mod:`gpumodeler.core.kernel.latency_bound`). The general way is two passes over the edges:
:func:`~gpumodeler.core.kernel.loop_regions._place_edges` resolves each edge's latency and
places it in a region, then :func:`~gpumodeler.core.kernel.loop_regions._region` keeps the
heaviest edge between two items. :func:`collapse` gives the same result in one pass: the
edges' fields are read as columns, their latencies resolved once per kind of edge (a
dependency's once per producing instruction), and each edge goes straight into its region's
predecessor lists, with the loop-boundary climb only for the few edges that cross one.

It covers the graphs the analysis accepts. For a graph it rejects (an edge whose latency
cannot be resolved, or is negative or not finite, or that goes backwards outside every loop)
it returns None and the general way runs, which raises for the first such edge, as before.
"""
from __future__ import annotations

from itertools import repeat
from operator import attrgetter, contains, ge

from gpumodeler.core.kernel.edge_latency import (_PRODUCER_LATENCY as producer_latency,
                                                 latency_key, resolve_edge_latency)
from gpumodeler.core.kernel.loop_regions import _finish_region, _region_items, climb

#: edge kinds whose table latency is one value for the whole graph
_CONSTANT_KINDS = ("ilp", "replacement", "barrier")


def collapse(graph, table, order: dict, parent: dict, depth: dict, innermost: dict):
    """``(edge_latency, edge_ends, regions)`` as ``_place_edges`` and ``_build_regions``
    give them, or None when the general way must run (see the module docstring; also when
    a region's items are not joined in a chain, whose topological order the general way
    finds)."""
    edges = list(graph.edges.values())
    eids, srcs, dsts = _ID(edges), _SRC(edges), _DST(edges)
    weights = _weights(graph, table, order, edges, srcs) if edges else []
    if weights is None:
        return None
    src_order, dst_order = list(map(order.get, srcs)), list(map(order.get, dsts))
    if None in src_order or None in dst_order:
        return None  # an edge to no instruction of the graph: the general way says so
    items = _region_items(graph, parent, innermost)
    position: dict | None = None  # of every item in its region, once an edge crosses a loop
    preds = {rid: {} for rid in items}  # region -> item -> {pred item: (pred, cycles, edge)}
    carried: dict = {}
    inner = innermost.get
    ahead = map(ge, src_order, dst_order)
    for eid, src, dst, w, a, b, back in zip(eids, srcs, dsts, weights, map(inner, srcs),
                                            map(inner, dsts), ahead):
        s_item, d_item = src, dst
        if a != b:  # the edge crosses loop boundaries: climb to the loop holding both ends
            s_item, d_item, a = climb(src, dst, a, b, parent, depth)
            if not back:
                if position is None:
                    position = {n: i for nodes in items.values() for i, n in enumerate(nodes)}
                if position[d_item] <= position[s_item]:
                    return None  # backwards in the region's items: not a chain
        if back:
            if a is None:
                return None  # a cycle outside any loop: the general way names it
            bucket = carried.get(a)
            if bucket is None:
                bucket = carried[a] = []
            bucket.append((d_item, s_item, w, eid))
            continue
        # Between two items only the heaviest edge counts (the first of equal ones). Plain
        # instructions of one region are in program order there, so only an edge crossing
        # a loop can go backwards in it (checked above).
        into = preds[a]
        have = into.get(d_item)
        if have is None:
            into[d_item] = {s_item: (s_item, w, eid)}
        else:
            old = have.get(s_item)
            if old is None or old[1] < w:
                have[s_item] = (s_item, w, eid)
    children: dict = {}  # region -> the loops nested directly in it
    for lid, up in parent.items():
        children.setdefault(up, []).append(lid)
    regions = {}
    for rid, nodes in items.items():
        into = preds[rid]
        # a chain: each item joined to the one before it (an exit to its entry always)
        exits = {("out", lid): {("in", lid): None} for lid in children.get(rid, ())}
        joined = {**into, **exits} if exits else into
        if not all(map(contains, map(joined.get, nodes[1:], repeat(())), nodes[:-1])):
            return None
        final = dict(zip(into, map(tuple, map(dict.values, into.values()))))
        regions[rid] = _finish_region(rid, nodes, final, tuple(carried.get(rid, ())),
                                      exits=exits.keys())
    return dict(zip(eids, weights)), dict(zip(eids, zip(srcs, dsts))), regions


def _ID(edges):
    return list(map(_id, edges))


def _SRC(edges):
    return list(map(_src, edges))


def _DST(edges):
    return list(map(_dst, edges))


_id, _src, _dst = attrgetter("id"), attrgetter("src"), attrgetter("dst")
_latency, _kind = attrgetter("latency"), attrgetter("kind")


def _weights(graph, table, order, edges, srcs) -> list | None:
    """Each edge's latency in cycles, as ``_place_edges`` resolves it; None when one cannot
    be resolved or is not a finite number >= 0 (the general way then says which)."""
    instructions = graph.instructions
    constant = {"dual": 0.0}  # kind -> its table latency, once looked up
    memo: dict = {}
    out = []
    append = out.append
    try:
        for e, explicit, kind, src in zip(edges, map(_latency, edges), map(_kind, edges), srcs):
            if explicit is not None:
                append(float(explicit))
                continue
            w = constant.get(kind)
            if w is None:
                if kind == "dependency" or kind == "memory":
                    key = (kind, producer_latency(instructions[src]))  # as latency_key
                else:
                    key = latency_key(e, instructions.get(src), order)
                w = memo.get(key) if key is not None else None
                if w is None:
                    w = resolve_edge_latency(graph, e, table, order)
                    if key is not None:
                        memo[key] = w
                if kind in _CONSTANT_KINDS:
                    constant[kind] = w
            append(w)
    except Exception:  # noqa: BLE001 - the general way raises it again, for the right edge
        return None
    if out:
        total = sum(out)
        if not (min(out) >= 0.0 and total - total == 0.0):  # NaN or inf make the sum so
            return None
    return out
