"""A kernel execution graph with its loops collapsed, and the numeric longest path through it
(Volkov §3.7; Gajger §4.4.2).

The latency bound of a warp is the longest path through its execution graph; the semantics
are in :mod:`gpumodeler.core.kernel.latency_bound`. There each loop is collapsed into an *entry* and
an *exit* inside its parent, so that the graph becomes one DAG per level: a :class:`Region`,
the body of a loop or the top level. This module holds that structure: the loop nesting
(:func:`loop_structure`), the regions, and the numeric longest path through a region
(:func:`longest_path`, vectorised over numpy arrays of iteration counts), which the exact numeric
pass and the critical path use. :func:`gpumodeler.core.kernel.latency_bound.analyze` builds the
regions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, filterfalse, repeat
from typing import Iterable, Mapping
import math
from operator import itemgetter

import numpy as np

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.edge_latency import latency_key, resolve_edge_latency
from gpumodeler.core.kernel.graph import KernelGraph


_first = itemgetter(0)


@dataclass(frozen=True)
class Region:
    """One level of the collapsed graph: the body of a loop, or the top level (id None).

    ``preds`` is keyed by node; the passes over a region read :attr:`ipreds`, the same
    predecessors by position in ``topo`` (list indexing costs a third of a dict look-up by
    node, which is most of a pass's time on 10^5 instructions)."""

    id: object
    topo: tuple  # DAG nodes in topological order: instruction ids, ("in", L), ("out", L)
    preds: Mapping  # node -> tuple of (pred, weight, step); weight is cycles or ("loop", L)
    carried: tuple  # ((start node, end node, weight, edge id), ...) for loops
    #: ``preds`` by position (see :attr:`ipreds`) when the builder made it on the way
    given_ipreds: list | None = field(default=None, compare=False, repr=False)

    @property
    def ipreds(self) -> list:
        """For each position in ``topo``, its predecessors as in ``preds``, each
        ``(position of pred, weight, step)`` (``()`` for none)."""
        made = self.__dict__.get("_ipreds")
        if made is None:
            made = self.given_ipreds
            if made is None:
                position = self.index.__getitem__
                made = [tuple([(position(p), w, s) for p, w, s in ps]) if ps else ()
                        for ps in map(self.preds.get, self.topo)]
            self.__dict__["_ipreds"] = made
        return made

    @property
    def index(self) -> dict:
        """Each node's position in ``topo``."""
        made = self.__dict__.get("_index")
        if made is None:
            made = self.__dict__["_index"] = dict(zip(self.topo, range(len(self.topo))))
        return made


def longest_path(region: Region, loop_weight: dict, source=None, track=False, scalar=False):
    """Numeric longest path in a region; values may be numpy arrays (vectorised).

    Returns each position's arrival, a list in ``topo`` order (and each position's
    ``(pred position, step)`` or None when ``track``); with ``source`` (a position) only
    that node may start a path (others start unreachable, -inf). ``scalar`` says every
    loop weight is a number (not an array): the same arithmetic without numpy."""
    if scalar:
        return _longest_scalar(region, loop_weight, source, track)
    dist: list = []
    back: list = []
    neg = -np.inf
    for i, preds in enumerate(region.ipreds):
        best = 0.0 if source is None or i == source else neg
        choice = None
        for pred, w, step in preds:
            d = dist[pred]
            cand = d + (loop_weight[w[1]] if isinstance(w, tuple) else w)
            if track:
                if cand >= best:  # ties prefer arriving paths (longer in edges) over starting here
                    best, choice = cand, (pred, step)
            else:
                best = np.maximum(best, cand) if (np.ndim(cand) or np.ndim(best)) else max(best, cand)
        dist.append(best)
        if track:
            back.append(choice)
    return (dist, back) if track else dist


def _longest_scalar(region: Region, loop_weight: dict, source, track):
    """:func:`longest_path` when every value is a number: ``max(best, cand)`` is ``cand`` only
    when ``cand > best``, as written here."""
    dist: list = []
    arrive = dist.append
    ipreds = region.ipreds
    starts: Iterable[float]
    if source is None:
        starts = repeat(0.0, len(ipreds))
    else:  # only ``source`` starts a path
        from_source = [-math.inf] * len(ipreds)
        from_source[source] = 0.0
        starts = from_source
    if track:
        back: list = []
        step_back = back.append
        for best, preds in zip(starts, ipreds):
            choice = None
            for pred, w, step in preds:
                cand = dist[pred] + (loop_weight[w[1]] if w.__class__ is tuple else w)
                if cand >= best:  # ties prefer arriving paths (longer in edges) over starting here
                    best, choice = cand, (pred, step)
            step_back(choice)
            arrive(best)
        return dist, back
    for best, preds in zip(starts, ipreds):
        for pred, w, _ in preds:
            cand = dist[pred] + (loop_weight[w[1]] if w.__class__ is tuple else w)
            if cand > best:
                best = cand
        arrive(best)
    return dist


def loop_structure(graph: KernelGraph):
    """parent loop of each loop, innermost loop of each node, depth of each loop
    (:func:`gpumodeler.core.kernel.loop_nesting.loop_nesting`, linear in the memberships)."""
    nesting = graph.nesting()
    return nesting.parent, nesting.depth, nesting.innermost


def _sinks(region: Region):
    """Nodes nothing leaves: with non-negative latencies, the longest paths end there."""
    return list(map(region.topo.__getitem__, sink_positions(region)))


def sink_positions(region: Region) -> list:
    """The positions in ``topo`` of :func:`_sinks`, in order."""
    has_succ = set(map(_first, chain.from_iterable(region.ipreds)))
    return list(filterfalse(has_succ.__contains__, range(len(region.topo))))


def build_regions(graph: KernelGraph, parent: dict, innermost: dict, forward: dict,
                   carried: dict) -> dict:
    """The collapsed regions: {loop id (None = top): Region}.

    ``forward``/``carried`` map a region to its edges ``(src item, dst item, cycles, edge
    id)``, items being instruction ids and ``("in"|"out", loop)`` for the loops nested
    directly in the region (:func:`region_items`). Between two items only the heaviest
    edge counts."""
    regions = {}
    for region_id, nodes in region_items(graph, parent, innermost).items():
        regions[region_id] = _region(region_id, nodes, forward.get(region_id, ()),
                                     tuple(carried.get(region_id, ())))
    return regions


def region_items(graph: KernelGraph, parent: dict, innermost: dict) -> dict:
    """Each region's items, in program order of their first instruction, in one pass over
    the instructions (each loop is placed when its first instruction is met)."""
    items: dict = {None: []}
    for lid in graph.loops:
        items[lid] = []
    placed = set()
    for n in graph.instructions:
        lid = innermost.get(n)
        items[lid].append(n)
        while lid is not None and lid not in placed:
            placed.add(lid)
            items[parent[lid]].extend((("in", lid), ("out", lid)))
            lid = parent[lid]
    return items


def _region(region_id, nodes: list, edges, carried: tuple) -> Region:
    """One region from its items (program order of their first instruction) and forward
    edges. Between two items only the heaviest edge counts (the first of equal ones); a
    node's predecessors are listed in the order of their first edge, and the nodes with
    predecessors in the order of their first incoming edge, then the loop exits."""
    preds: dict = {}
    first: dict = {}  # (src, dst) -> (list of dst's preds, position in it)
    pairs = []
    position = {n: i for i, n in enumerate(nodes)}
    backwards = False
    steps = 0  # pairs joining neighbours in ``nodes``
    for src, dst, w, eid in edges:
        key = (src, dst)
        seen = first.get(key)
        if seen is None:
            bucket = preds.get(dst)
            if bucket is None:
                bucket = preds[dst] = []
            first[key] = (bucket, len(bucket))
            bucket.append((src, w, eid))
            pairs.append(key)
            gap = position[dst] - position[src]
            if gap == 1:
                steps += 1
            elif gap < 1:
                backwards = True
        else:
            bucket, k = seen
            if bucket[k][1] < w:
                bucket[k] = (src, w, eid)
    entries = sum(1 for n in nodes if n.__class__ is tuple and n[0] == "in")
    # Every pair going forwards in ``nodes`` and neighbours joined (an entry to its exit
    # always): ``nodes`` is a path through the DAG, its only topological order.
    chain = not backwards and steps + entries == len(nodes) - 1
    return _finish_region(region_id, nodes, {k: tuple(v) for k, v in preds.items()}, carried,
                          None if chain else pairs)


def _finish_region(region_id, nodes: list, preds: dict, carried: tuple,
                   pairs: list | None = None) -> Region:
    """The region from its items, ``preds`` (item -> tuple of its (pred, cycles, edge id),
    heaviest per pred, in order of first edge) and, unless ``nodes`` is known to be a path
    through the region (its only topological order), ``pairs`` (pred, item) in order of
    their first edge."""
    topo = tuple(nodes) if pairs is None else _topological_order(nodes, pairs)
    add_loop_preds(preds, topo)
    return Region(region_id, topo, preds, carried)


def add_loop_preds(preds: dict, topo: tuple, exits=None) -> None:
    """Join each loop's exit to its entry in ``preds`` (the loop itself: weight and step
    ``("loop", L)``), after the exit's other predecessors, the exits in ``topo`` order.
    ``exits``, when given, are the loop exits in ``topo`` (a set)."""
    if exits is None:
        exits = [n for n in topo if n.__class__ is tuple and n[0] == "out"]
    else:  # in topological order, looped in C
        exits = filter(exits.__contains__, topo) if exits else ()
    for n in exits:
        loop = ("loop", n[1])
        preds[n] = preds.get(n, ()) + ((("in", n[1]), loop, loop),)


def _topological_order(nodes: list, edges) -> tuple:
    """Kahn's algorithm by generations over ``nodes`` (a loop's entry directly followed by
    its exit, each entry joined to its exit) and ``edges`` (pairs), in time linear in both.

    Generations are visited in the order the nodes and edges are given, which is the order
    ``networkx.topological_sort`` gives for a DiGraph built from them in that order (this
    module used it before). Raises GraphError naming a cycle when there is one."""
    succ: dict = {n: [] for n in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for n in nodes:
        if n.__class__ is tuple and n[0] == "in":
            out = ("out", n[1])
            succ[n].append(out)
            indegree[out] += 1
    for src, dst in edges:
        succ[src].append(dst)
        indegree[dst] += 1
    zero = [n for n in nodes if not indegree[n]]
    topo: list = []
    while zero:
        generation, zero = zero, []
        append = zero.append
        for n in generation:
            for child in succ[n]:
                k = indegree[child] - 1
                indegree[child] = k
                if not k:
                    append(child)
        topo.extend(generation)
    if len(topo) < len(nodes):
        _raise_cycle(nodes, edges)
    return tuple(topo)


def _raise_cycle(nodes: list, edges) -> None:
    """Name one cycle of the region (an error path: networkx finds it)."""
    import networkx as nx

    dag = nx.DiGraph()
    for n in nodes:
        if isinstance(n, tuple):
            if n[0] == "in":
                dag.add_edge(n, ("out", n[1]))
        else:
            dag.add_node(n)
    dag.add_edges_from(edges)
    cycle = nx.find_cycle(dag)
    names = " -> ".join(str(u[1] if isinstance(u, tuple) else u) for u, _ in cycle)
    raise GraphError(f"the graph has a cycle outside a loop ({names}); put it inside a loop")


def climb(src, dst, a, b, parent: dict, depth: dict) -> tuple:
    """An edge from ``src`` (innermost loop ``a``) to ``dst`` (innermost loop ``b != a``)
    as an edge between items of the loop holding both ends: (source item, destination
    item, that loop or None for the top level). Leaving a loop ``L`` the source becomes
    ``("out", L)``; entering one the destination becomes ``("in", L)``."""
    da = -1 if a is None else depth[a]
    db = -1 if b is None else depth[b]
    s_item, d_item = src, dst
    while da > db:
        s_item, a, da = ("out", a), parent[a], da - 1
    while db > da:
        d_item, b, db = ("in", b), parent[b], db - 1
    while a != b:
        s_item, a = ("out", a), parent[a]
        d_item, b = ("in", b), parent[b]
    return s_item, d_item, a


def place_edges(graph: KernelGraph, table, order, parent, depth, innermost):
    """Every edge's latency (``{edge id: cycles}``), its ends, and its place in the collapsed
    regions: ``forward``/``carried`` map a region (loop id, None = top) to its edges
    ``(src item, dst item, cycles, edge id)`` (carried ones from the edge's target to its
    source). Raises for the first edge, in order, whose latency cannot be resolved or that
    goes backwards outside any loop.

    The edge lives in the innermost loop containing both ends (None: the top level); an end
    inside a loop nested there is that loop's exit (source) or entry (target). Climbing from
    both innermost loops costs the loop boundaries the edge crosses; most edges cross none.
    Table latencies are looked up once per kind of edge and producer."""
    edge_latency: dict = {}
    edge_ends: dict = {}
    forward: dict = {}
    carried: dict = {}
    memo: dict = {}
    instructions = graph.instructions
    inner = innermost.get
    isfinite = math.isfinite
    for e in graph.edges.values():
        eid, src, dst = e.id, e.src, e.dst
        explicit = e.latency
        if explicit is not None:
            w = float(explicit)  # as resolve_edge_latency
        elif e.kind == "dual":
            w = 0.0
        else:
            key = latency_key(e, instructions.get(src), order)
            memoised = memo.get(key)
            if memoised is not None:
                w = memoised
            else:
                w = resolve_edge_latency(graph, e, table, order)
                if key is not None:
                    memo[key] = w
        if w < 0 or not isfinite(w):
            raise GraphError(f"edge {eid}: latency must be a finite number >= 0, got {w}", item=eid)
        edge_latency[eid] = w
        edge_ends[eid] = (src, dst)
        a, b = inner(src), inner(dst)
        s_item, d_item = src, dst
        if a != b:
            s_item, d_item, a = climb(src, dst, a, b, parent, depth)
        if order[src] >= order[dst]:
            if a is None:
                raise GraphError(
                    f"edge {eid} from {src} back to {dst} makes a cycle outside any loop; "
                    f"put both instructions in a loop, or draw the edge forwards", item=eid)
            bucket = carried.get(a)
            if bucket is None:
                bucket = carried[a] = []
            bucket.append((d_item, s_item, w, eid))
        else:
            bucket = forward.get(a)
            if bucket is None:
                bucket = forward[a] = []
            bucket.append((s_item, d_item, w, eid))
    return edge_latency, edge_ends, forward, carried
