"""The collapsed regions of a kernel graph, computed a column at a time (for speed).

:func:`gpumodeler.core.kernel.latency_bound.analyze` collapses every loop into an entry and an
exit inside its parent (Volkov §3.7; Gajger §4.4.2 and eq. 5.1; the semantics are in
:mod:`gpumodeler.core.kernel.latency_bound`). The general way is two passes over the edges:
:func:`~gpumodeler.core.kernel.loop_regions.place_edges` resolves each edge's latency and
places it in a region, then :func:`~gpumodeler.core.kernel.loop_regions._region` keeps the
heaviest edge between two items. :func:`collapse` gives the same result with numpy over
whole columns:

* every item of every region (instructions, loop entries and exits, see
  :func:`~gpumodeler.core.kernel.loop_regions.region_items`) gets one global number, the
  regions' items laid end to end, so an edge is two numbers and the region holding them;
* latencies are resolved once per kind of edge (a dependency's once per kind of producing
  instruction) and spread to the edges by index;
* only the few edges that cross a loop boundary climb it in Python
  (:func:`~gpumodeler.core.kernel.loop_regions.climb`);
* the heaviest edge between two items (the first of equal ones) is found by one sort, and
  the predecessors are listed in the order of their first edge, the items with predecessors
  in the order of their first incoming edge, as the general way lists them.

It covers the graphs the analysis accepts whose regions are chains (each item joined to the
one before it, the usual imported kernel with its complete ILP chain). For any other graph
(an edge whose latency cannot be resolved, or is negative or not finite, an edge going
backwards outside every loop, a region whose items are not a chain) it returns None and the
general way runs, which raises for the first bad edge or finds the topological order.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from itertools import chain

import numpy as np

from gpumodeler.core.kernel.edge_latency import (PRODUCER_LATENCY as producer_latency,
                                                 resolve_edge_latency)
from gpumodeler.core.kernel.graph_items import EDGE_KINDS
from gpumodeler.core.kernel.item_table import (columns, end_positions, id_positions, item_at,
                                               kind_codes)
from gpumodeler.core.kernel.loop_regions import Region, add_loop_preds, region_items, climb

_KIND_CODE = {k: i for i, k in enumerate(EDGE_KINDS)}
_DEPENDENCY, _MEMORY, _BRANCH = _KIND_CODE["dependency"], _KIND_CODE["memory"], _KIND_CODE["branch"]
#: edge kinds whose latency (without an explicit one) is one value for the whole graph
_CONSTANT_KINDS = tuple(_KIND_CODE[k] for k in ("ilp", "dual", "barrier", "replacement"))

_COLUMNS = ("id", "src", "dst", "kind", "latency", "taken")


def collapse(graph, table, order: dict, parent: dict, depth: dict, innermost: dict):
    """``(edge_latency, edge_ends, regions)`` as ``place_edges`` and ``build_regions``
    give them, or None when the general way must run (see the module docstring)."""
    m = len(graph.edges)
    items = region_items(graph, parent, innermost)
    rids = list(items)
    if m:
        eids, srcs, dsts, kinds, explicit, taken = columns(graph.edges, _COLUMNS)
        ends = end_positions(graph.edges, graph.instructions)  # = ``order`` of the ends
        try:
            kind = np.fromiter(map(_KIND_CODE.__getitem__, kinds), np.int8, m)
            if ends is None:
                src_o = np.fromiter(map(order.__getitem__, srcs), np.int64, m)
                dst_o = np.fromiter(map(order.__getitem__, dsts), np.int64, m)
            else:
                src_o, dst_o = np.array(ends[0], np.int64), np.array(ends[1], np.int64)
        except KeyError:  # an unknown kind, or an edge to no instruction of the graph
            return None
        weights = _weights(graph, table, order, item_at(graph.edges), kind, explicit, taken,
                           src_o, dst_o)
        if weights is None:
            return None
    else:
        eids = srcs = dsts = []
        weights = np.zeros(0)
        src_o = dst_o = np.zeros(0, np.int64)
    # every item of every region numbered, the regions laid end to end in ``items`` order
    flat = list(chain.from_iterable(items.values()))
    sizes = np.fromiter(map(len, items.values()), np.int64, len(items))
    starts = np.concatenate(([0], np.cumsum(sizes)))
    region_of = np.repeat(np.arange(len(items)), sizes)  # item number -> region number
    number = dict(zip(flat, range(len(flat))))
    rnum = dict(zip(rids, range(len(rids))))
    # each instruction's item number, by program order (``order`` numbers them 0, 1, ...)
    node_number = np.fromiter(map(number.__getitem__, graph.instructions), np.int64,
                              len(graph.instructions))
    s_g, d_g = node_number[src_o], node_number[dst_o]
    reg = region_of[s_g]  # an instruction is an item of its innermost loop's region
    back = src_o >= dst_o
    crossing = np.flatnonzero(reg != region_of[d_g])
    for i in crossing.tolist():  # climb to the loop holding both ends
        src, dst = srcs[i], dsts[i]
        s_item, d_item, a = climb(src, dst, innermost.get(src), innermost.get(dst), parent, depth)
        s_g[i], d_g[i], reg[i] = number[s_item], number[d_item], rnum[a]
    if crossing.size and (d_g[crossing] <= s_g[crossing])[~back[crossing]].any():
        return None  # a forward edge backwards in its region's items: not a chain
    carried: dict = {}
    for i in np.flatnonzero(back).tolist():
        a = rids[reg[i]]
        if a is None:
            return None  # a cycle outside any loop: the general way names it
        carried.setdefault(a, []).append((flat[d_g[i]], flat[s_g[i]], float(weights[i]), eids[i]))
    forward = np.flatnonzero(~back)
    ipreds, by_item, joined = _heaviest_preds(forward, s_g[forward], d_g[forward],
                                              weights[forward], reg[forward], flat, eids, starts)
    # a chain: each item joined to the one before it, but a region's first item and a loop's
    # exit (joined to its entry, just before it, by the loop itself)
    joined[starts[:-1][sizes > 0]] = True
    exits_of: dict = {rid: [] for rid in rids}
    exit_numbers = []
    for lid, up in parent.items():
        exits_of[up].append(("out", lid))
        exit_numbers.append(number[("out", lid)])
    joined[exit_numbers] = True
    if not joined.all():
        return None
    # the loops themselves, by position: an exit's entry is the item just before it
    for lid, exit_number in zip(parent, exit_numbers):
        loop = ("loop", lid)
        ipreds[exit_number] += ((exit_number - int(starts[region_of[exit_number]]) - 1, loop, loop),)
    tables = _Once(by_item)
    regions = {}
    bounds = starts.tolist()
    for k, (rid, nodes) in enumerate(items.items()):
        topo = tuple(nodes)  # a chain: its items' order is its only topological order
        regions[rid] = Region(rid, topo, _PredsTable(tables, k, topo, set(exits_of[rid])),
                               tuple(carried.get(rid, ())), ipreds[bounds[k]:bounds[k + 1]])
    index = id_positions(graph.edges)  # positions in ``eids`` (they are in table order)
    return (LazyTable(eids, weights.tolist(), index), LazyTable(eids, (srcs, dsts), index, pairs=True),
            regions)


def as_dict(table) -> dict:
    """The dict behind a :class:`LazyTable` (made now if it was not), or ``table`` itself:
    look-ups in a loop then cost no Python call each."""
    return table._made() if table.__class__ is LazyTable else table


# Making a table, or reading the columns it is made from, is done under this lock: the
# columns go once the table is made, and two threads sharing a latency bound (a sweep's
# workers and the editor) must get one table, made once.
_MAKING = threading.Lock()


class _MadeOnUse(Mapping):
    """A dict made by :meth:`_make` the first time it is used, then that dict (read-only):
    the same keys, values, order and equality."""

    __slots__ = ("_table",)
    _table: dict | None

    def _make(self) -> dict:  # pragma: no cover - each table says how it is made
        raise NotImplementedError

    def _made(self) -> dict:
        table = self._table
        if table is None:
            with _MAKING:
                table = self._table
                if table is None:
                    table = self._table = self._make()
        return table

    def __getitem__(self, key):
        return self._made()[key]

    def get(self, key, default=None):
        return self._made().get(key, default)

    def __iter__(self):
        return iter(self._made())

    def __len__(self):
        return len(self._made())

    def __eq__(self, other):
        if isinstance(other, _MadeOnUse):
            other = other._made()
        return self._made() == other if isinstance(other, Mapping) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a read-only mapping compared by value, like dict


class LazyTable(_MadeOnUse):
    """``dict(zip(keys, values))``, made when first used: the latency bound keeps every
    edge's latency and ends for the editor and the critical path, which a sweep of the
    bound never asks for (building the two tables of 2·10^5 edges costs 0.08 s). With
    ``index`` (each key's position in ``keys``), :meth:`many` looks keys up without making
    the dict (the critical path's ends of 5·10^4 edges among 2·10^5). With ``pairs``,
    ``values`` is two sequences and each value the pair of their items (an edge's ends):
    :meth:`many` then pairs only the values asked for."""

    __slots__ = ("_keys", "_values", "_index", "_pairs")

    def __init__(self, keys, values, index: dict | None = None, pairs: bool = False):
        self._keys, self._values, self._table, self._index = keys, values, None, index
        self._pairs = pairs

    def _make(self) -> dict:
        values = zip(*self._values) if self._pairs else self._values
        table = dict(zip(self._keys, values))
        self._keys = self._values = self._index = None
        return table

    def many(self, keys) -> list:
        """``[self[k] for k in keys]``."""
        if self._table is None:
            with _MAKING:
                index = self._index
                if self._table is None and index is not None:
                    at = list(map(index.__getitem__, keys))
                    if self._pairs:
                        firsts, seconds = self._values
                        return list(zip(map(firsts.__getitem__, at), map(seconds.__getitem__, at)))
                    values = self._values
                    if values.__class__ is not list:
                        values = self._values = list(values)
                    return list(map(values.__getitem__, at))
        return list(map(self._made().__getitem__, keys))

    def __repr__(self):
        return f"LazyTable({self._made()!r})"


class _Once:
    """``make()``, called the first time it is asked for (by a table being made, under the
    lock)."""

    __slots__ = ("_make", "_value")

    def __init__(self, make):
        self._make, self._value = make, None

    def __call__(self):
        if self._make is not None:
            self._value, self._make = self._make(), None
        return self._value


class _PredsTable(_MadeOnUse):
    """A region's ``preds`` (item -> tuple of ``(pred item, cycles, edge id)``) as
    :func:`~gpumodeler.core.kernel.loop_regions._finish_region` makes it, made when first
    used: the analysis reads the predecessors by position (``Region.ipreds``), so the table
    by item (0.07 s for 2·10^5 edges) is made only for whoever asks for it. Copies and
    pickles as the dict."""

    __slots__ = ("_tables", "_k", "_topo", "_exits")

    def __init__(self, tables: _Once, k: int, topo: tuple, exits: set):
        self._tables: _Once | None = tables
        self._topo: tuple | None = topo
        self._exits: set | None = exits
        self._k, self._table = k, None

    def _make(self) -> dict:
        assert self._tables is not None and self._topo is not None and self._exits is not None
        table = self._tables()[self._k]
        add_loop_preds(table, self._topo, self._exits)
        self._tables = self._topo = self._exits = None
        return table

    def __reduce__(self):
        return (dict, (self._made(),))

    def __repr__(self):
        return repr(self._made())


def _heaviest_preds(forward, s_g, d_g, w, reg, flat, eids, starts):
    """From the forward edges (edge numbers ``forward``, in edge order, with their item
    numbers, weights and regions; ``starts``: each region's first item number, and one past
    the last): every item's predecessors by position in its region (``(pred position,
    cycles, edge id)``, a list over all items, see ``Region.ipreds``), a function making
    each region's predecessor table by item (a list of dicts, item -> tuple of ``(pred
    item, cycles, edge id)``), and which items are joined to the item numbered just before
    them.

    Between two items only the heaviest edge counts, the first of equal ones; a node's
    predecessors are in the order of their first edge, the nodes in the order of their first
    incoming edge (as :func:`~gpumodeler.core.kernel.loop_regions._region` lists them)."""
    joined = np.zeros(len(flat), bool)
    n_regions = len(starts) - 1
    ipreds = [()] * len(flat)
    if not forward.size:
        return ipreds, lambda: [{} for _ in range(n_regions)], joined
    span = len(flat)
    pair = d_g * span + s_g
    # by pair, heaviest first, then by edge: the first of each pair is the edge that counts
    by_pair = np.lexsort((forward, -w, pair))
    pair_sorted = pair[by_pair]
    first = np.flatnonzero(np.concatenate(([True], pair_sorted[1:] != pair_sorted[:-1])))
    chosen = by_pair[first]
    first_edge = np.minimum.reduceat(forward[by_pair], first)  # each pair's first edge
    # pairs by their destination, then by their first edge
    o = np.lexsort((first_edge, d_g[chosen]))
    chosen, first_edge = chosen[o], first_edge[o]
    d_c, s_c = d_g[chosen], s_g[chosen]
    joined[d_c[d_c - s_c == 1]] = True
    # each destination with its run of pairs, by item number
    head = np.flatnonzero(np.concatenate(([True], d_c[1:] != d_c[:-1])))
    bounds = np.append(head, len(chosen))
    weights = w[chosen].tolist()
    steps = list(map(eids.__getitem__, forward[chosen].tolist()))
    # by position: an item's number less its region's first
    entries = list(zip((s_c - starts[reg[chosen]]).tolist(), weights, steps))
    # each destination's tuple of entries, the destinations with k of them together (sorted
    # by k: linear however many different k there are): their tuples zipped from k columns
    # (in C: no slice and no list per destination)
    sizes = np.diff(bounds)
    # (numpy sorts 16-bit integers by radix: a fifth of the time of 64-bit ones)
    by_size = np.argsort(sizes.astype(np.int16) if sizes.max() < 1 << 15 else sizes,
                         kind="stable")
    sizes = sizes[by_size]
    cuts = (np.flatnonzero(sizes[1:] != sizes[:-1]) + 1).tolist()
    for a, b in zip([0] + cuts, cuts + [len(by_size)]):
        at = head[by_size[a:b]]
        places = [map(entries.__getitem__, (at + j).tolist()) for j in range(int(sizes[a]))]
        list(map(ipreds.__setitem__, d_c[at].tolist(), zip(*places)))

    def by_item() -> list:
        """The regions' tables by item: in a region, the destinations in the order of
        their first incoming edge."""
        runs = list(map(slice, head.tolist(), bounds[1:].tolist()))
        order = np.argsort(first_edge[head], kind="stable")
        region = reg[chosen[head]][order]
        order = order[np.argsort(region, kind="stable")]
        items = list(zip(map(flat.__getitem__, s_c.tolist()), weights, steps))
        preds = list(map(tuple, map(items.__getitem__, map(runs.__getitem__, order.tolist()))))
        dest = list(map(flat.__getitem__, d_c[head][order].tolist()))
        cut = np.concatenate(([0], np.cumsum(np.bincount(region, minlength=n_regions)))).tolist()
        return [dict(zip(dest[a:b], preds[a:b])) for a, b in zip(cut, cut[1:])]

    return ipreds, by_item, joined


def _weights(graph, table, order, edge_at, kind, explicit, taken, src_o, dst_o):
    """Each edge's latency in cycles (a float array), as ``place_edges`` resolves it: the
    explicit one, else the table's, looked up once per kind of edge (per kind of producing
    instruction for dependencies, per direction for branches); None when one cannot be
    resolved or is not a finite number >= 0 (the general way then says which).
    ``edge_at(i)`` is edge number ``i`` (:func:`~gpumodeler.core.kernel.item_table.item_at`)."""
    m = len(kind)
    w = np.full(m, np.nan)
    given = np.zeros(m, bool)
    if explicit.count(None) != m:
        at = [i for i, x in enumerate(explicit) if x is not None]
        try:
            w[at] = list(map(float, map(explicit.__getitem__, at)))
        except (TypeError, ValueError, OverflowError):
            return None
        given[at] = True
    try:
        for code in _CONSTANT_KINDS:
            idx = np.flatnonzero((kind == code) & ~given)
            if idx.size:
                w[idx] = resolve_edge_latency(graph, edge_at(int(idx[0])), table, order)
        dep = np.flatnonzero(((kind == _DEPENDENCY) | (kind == _MEMORY)) & ~given)
        if dep.size:
            # the kind of each producing instruction (what its dependency latency depends on)
            # (worked out on the first instruction of each kind, see kind_codes)
            kinds_of, firsts = kind_codes(graph.instructions, producer_latency)
            instruction_at = item_at(graph.instructions)
            producers = [producer_latency(instruction_at(p)) for p in firsts]
            code = dict.fromkeys(producers)
            for k, key in enumerate(code):
                code[key] = k
            per_node = np.array(list(map(code.__getitem__, producers)), np.int64)[kinds_of]
            key = per_node[src_o[dep]] * 2 + (kind[dep] == _MEMORY)
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            values = [resolve_edge_latency(graph, edge_at(int(dep[f])), table, order)
                      for f in first.tolist()]
            w[dep] = np.asarray(values, float)[inverse]
        br = np.flatnonzero((kind == _BRANCH) & ~given)
        if br.size:
            backwards = src_o[br] >= dst_o[br]
            said = [taken[i] for i in br.tolist()]
            is_taken = np.array([b if t is None else t for t, b in zip(said, backwards.tolist())], bool)
            for value in (True, False):
                idx = br[is_taken == value]
                if idx.size:
                    w[idx] = resolve_edge_latency(graph, edge_at(int(idx[0])), table, order)
    except Exception:  # noqa: BLE001 - the general way raises it again, for the right edge
        return None
    if m and not (np.isfinite(w).all() and w.min() >= 0.0):
        return None
    return w
