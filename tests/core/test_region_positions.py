"""The collapsed regions' predecessors by position (``Region.ipreds``, for speed): the passes
over a region read them instead of the table by item. The one-pass collapse makes them from its
columns and makes the table by item only when asked; both must say exactly what the table by
item says, in the same order (the order breaks ties on the critical path)."""
from __future__ import annotations

import copy
import pickle
import random

import pytest

from gpumodeler.core.kernel.collapse import _PredsTable, collapse
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.latency_tables import get_table
from gpumodeler.core.kernel.loop_regions import Region, loop_structure, _sinks

from test_graph_linear import random_kernel


def _positions_from(region: Region) -> list:
    """``ipreds`` worked out from the table by item, the slow and obvious way."""
    where = {n: i for i, n in enumerate(region.topo)}
    return [tuple((where[p], w, s) for p, w, s in region.preds.get(n, ())) for n in region.topo]


def _one_pass(g):
    order = g.order()
    parent, depth, innermost = loop_structure(g)
    return collapse(g, get_table("maxwell-volkov"), order, parent, depth, innermost)


@pytest.mark.parametrize("seed", range(40))
def test_positions_say_what_the_table_by_item_says(seed):
    rng = random.Random(seed)
    data = random_kernel(seed, n=rng.randint(5, 80), loops=rng.randint(0, 10),
                         ids=seed % 2 == 0, scattered=False)
    got = _one_pass(from_dict(data))
    assert got is not None  # complete ILP chains, nothing scattered: the one pass takes it
    for region in got[2].values():
        made_here = list(region.ipreds)
        assert isinstance(region.preds, _PredsTable)
        assert made_here == _positions_from(region)
        # and a region given only the table by item works the same positions out itself
        plain = Region(region.id, region.topo, dict(region.preds), region.carried)
        assert plain.ipreds == made_here
        assert plain == region


def test_analysis_makes_no_table_by_item():
    data = random_kernel(7, n=300, loops=12, ids=True, scattered=False)
    g = from_dict(data)
    bound = analyze(g)
    values = {name: 5.0 for name in bound.variables}
    bound.evaluate(values)
    path = bound.critical_path(values)
    path.describe(g)
    for region in bound.regions.values():
        assert _sinks(region) is not None
        assert isinstance(region.preds, _PredsTable) and region.preds._table is None


def test_table_by_item_copies_and_pickles_as_its_dict():
    g = from_dict(random_kernel(3, n=60, loops=4, ids=True, scattered=False))
    regions = _one_pass(g)[2]
    for region in regions.values():
        table = region.preds
        want = dict(table)
        assert pickle.loads(pickle.dumps(table)) == want
        assert type(pickle.loads(pickle.dumps(table))) is dict
        assert copy.deepcopy(table) == want
        assert table == want and want == table
        missing = ("no", "such item")
        assert table.get(missing) is None and table.get(missing, ()) == ()
        with pytest.raises(KeyError):
            table[missing]
        again = pickle.loads(pickle.dumps(region))
        assert again == region and again.ipreds == region.ipreds


# -- the critical path's edge ends -----------------------------------------------------------
def test_edge_ends_table_of_pairs_is_the_dict():
    from gpumodeler.core.kernel.collapse import LazyTable

    keys, srcs, dsts = ["e1", "e2", "e3"], ["a", "b", "c"], ["b", "c", "d"]
    index = {k: i for i, k in enumerate(keys)}
    want = {"e1": ("a", "b"), "e2": ("b", "c"), "e3": ("c", "d")}
    table = LazyTable(keys, (srcs, dsts), index, pairs=True)
    assert table.many(["e3", "e1", "e3"]) == [("c", "d"), ("a", "b"), ("c", "d")]
    assert table._table is None  # many() made no dict
    assert table == want and dict(table) == want and list(table) == keys
    assert table.many(["e2"]) == [("b", "c")]  # and after the dict is made
    assert LazyTable(keys, (srcs, dsts), pairs=True) == want


@pytest.mark.parametrize("seed", range(12))
def test_description_from_the_recorded_ends_is_the_graphs(seed):
    """The critical path records its edges' ends; describing it from them says what
    describing it from the graph says, and its edges and instructions are as before."""
    g = from_dict(random_kernel(seed, n=120, loops=6, ids=seed % 2 == 0))
    bound = analyze(g)
    values = {name: 3.0 + seed for name in bound.variables}
    path = bound.critical_path(values)
    assert set(path.edge_ends) == set(path.edge_ids)
    assert all(path.edge_ends[e] == (g.edges[e].src, g.edges[e].dst) for e in path.edge_ids)
    without = type(path)(path.steps, path.edge_ids, path.node_ids, path.loop_ids, path.loop_paths)
    assert without == path and without.describe(g) == path.describe(g)
    nodes = dict.fromkeys(n for e in path.edge_ids for n in (g.edges[e].src, g.edges[e].dst))
    assert path.node_ids == tuple(nodes)


def test_threads_sharing_a_region_get_one_table_by_item(monkeypatch):
    """Two threads asking for a region's table by item at once: it is made once (the loops'
    own predecessors added once), as the general way makes it."""
    import threading
    import time

    import gpumodeler.core.kernel.collapse as collapse_module
    from gpumodeler.core.kernel.loop_regions import build_regions, place_edges

    g = from_dict(random_kernel(5, n=60, loops=6, ids=True, scattered=False))
    regions = _one_pass(g)[2]
    order = g.order()
    parent, depth, innermost = loop_structure(g)
    _, _, forward, carried = place_edges(g, get_table("maxwell-volkov"), order, parent, depth,
                                          innermost)
    want = build_regions(g, parent, innermost, forward, carried)
    slow_add = collapse_module.add_loop_preds

    def add_slowly(*args):
        time.sleep(0.05)  # the other thread asks meanwhile
        return slow_add(*args)

    monkeypatch.setattr(collapse_module, "add_loop_preds", add_slowly)
    with_loops = [r for r in regions.values() if any(isinstance(n, tuple) for n in r.topo)]
    assert with_loops
    for region in with_loops:
        seen = []
        threads = [threading.Thread(target=lambda: seen.append(dict(region.preds)))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen[0] == seen[1] == dict(want[region.id].preds)
        assert list(region.preds.items()) == list(want[region.id].preds.items())
