"""The collapsed regions' predecessors by position (``_Region.ipreds``, issue #11): the passes
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
from gpumodeler.core.kernel.loop_regions import _Region, _loop_structure, _sinks

from test_graph_linear import random_kernel


def _positions_from(region: _Region) -> list:
    """``ipreds`` worked out from the table by item, the slow and obvious way."""
    where = {n: i for i, n in enumerate(region.topo)}
    return [tuple((where[p], w, s) for p, w, s in region.preds.get(n, ())) for n in region.topo]


def _one_pass(g):
    order = g.order()
    parent, depth, innermost = _loop_structure(g)
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
        plain = _Region(region.id, region.topo, dict(region.preds), region.carried)
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
