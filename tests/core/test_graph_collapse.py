"""The one-pass collapse of a kernel graph (core/kernel/collapse.py, for speed) gives exactly the
regions, latencies and edge ends of the general two passes (place_edges, build_regions), and
declines (None) every graph the general way must handle: those it rejects and those whose
regions are not chains."""
from __future__ import annotations

import random

import pytest

from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.collapse import collapse
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.latency_tables import get_table
from gpumodeler.core.kernel.loop_regions import build_regions, loop_structure, place_edges

from test_graph_linear import random_kernel


def _general(g, table):
    order = g.order()
    parent, depth, innermost = loop_structure(g)
    try:
        lat, ends, forward, carried = place_edges(g, table, order, parent, depth, innermost)
        return lat, ends, build_regions(g, parent, innermost, forward, carried)
    except ModelError as exc:
        return exc


def _one_pass(g, table):
    order = g.order()
    parent, depth, innermost = loop_structure(g)
    return collapse(g, table, order, parent, depth, innermost)


def _same(got, want):
    assert list(got[0].items()) == list(want[0].items())
    assert list(got[1].items()) == list(want[1].items())
    assert list(got[2]) == list(want[2])
    for rid, region in got[2].items():
        other = want[2][rid]
        assert (region.id, region.topo, region.carried) == (other.id, other.topo, other.carried)
        assert list(region.preds.items()) == list(other.preds.items())


@pytest.mark.parametrize("seed", range(60))
def test_collapse_is_the_two_passes(seed):
    rng = random.Random(seed)
    data = random_kernel(seed, n=rng.randint(5, 80), loops=rng.randint(0, 10),
                         ids=seed % 2 == 0, scattered=seed % 3 == 0)
    if seed % 5 == 1:  # an incomplete ILP chain: some regions are not chains
        data["edges"] = [e for e in data["edges"] if e["kind"] != "ilp" or rng.random() < 0.8]
    g = from_dict(data)
    table = get_table("maxwell-volkov")
    got, want = _one_pass(g, table), _general(g, table)
    if got is None:  # declined: the general way raises, or a region is not a chain
        assert isinstance(want, ModelError) or seed % 5 == 1 or seed % 3 == 0
    else:
        _same(got, want)


def test_complete_chains_are_collapsed_in_one_pass():
    """Graphs with complete ILP chains (the usual imported kernel) never fall back."""
    for seed in range(20):
        g = from_dict(random_kernel(seed, n=60, loops=8, ids=seed % 2 == 0))
        table = get_table("maxwell-volkov")
        got = _one_pass(g, table)
        assert got is not None
        _same(got, _general(g, table))


@pytest.mark.parametrize("edit", ["no_table", "backwards_top", "negative", "store_dependency"])
def test_graphs_the_analysis_rejects_are_declined(edit):
    from dataclasses import replace
    g = from_dict(random_kernel(4, n=40, loops=3))
    table = get_table("maxwell-volkov")
    first = next(iter(g.edges))
    if edit == "no_table":
        table = None
    elif edit == "backwards_top":
        e = g.edges[first]
        g.edges[first] = replace(e, src=e.dst, dst=e.src)
    elif edit == "negative":
        object.__setattr__(g.edges[first], "latency", -1.0)
    else:
        g.instructions["n0"] = replace(g.instructions["n0"], opcode="STG", unit="ldst",
                                       space="global", is_load=False, latency_class=None)
        g.edges[first] = replace(g.edges[first], kind="dependency", latency=None)
    assert _one_pass(g, table) is None
    assert isinstance(_general(g, table), ModelError)


@pytest.mark.parametrize("data", [
    {"instructions": [], "edges": [], "loops": []},
    {"instructions": [{"id": "a", "opcode": "FADD"}], "edges": [], "loops": []},
    {"instructions": [{"id": "a", "opcode": "FADD"}], "edges": [],
     "loops": [{"id": "L", "members": ["a"], "iterations": "4"}]},
    {"instructions": [{"id": "a", "opcode": "FADD"}, {"id": "b", "opcode": "FADD"}],
     "edges": [{"from": "a", "to": "b", "kind": "ilp"}, {"from": "b", "to": "a", "kind": "branch",
                                                                 "latency": 12}],
     "loops": [{"id": "L", "members": ["a", "b"], "iterations": "4"}]},
], ids=["empty", "one instruction", "a loop of one", "a loop of two"])
def test_small_graphs_are_the_two_passes(data):
    """Graphs without edges or instructions (a new kernel in the editor) collapse as the
    general way does them."""
    g = from_dict({"format": "gpumodeler-kernel", "version": 1, "latency_table": "maxwell-volkov",
                   **data})
    table = get_table("maxwell-volkov")
    got = _one_pass(g, table)
    assert got is not None
    _same(got, _general(g, table))


def test_instructions_with_many_different_numbers_of_predecessors():
    """Instruction i depends on the i - 1 before it (and on one twice, the heavier edge
    counting), in shuffled edge order, inside and outside a loop: every number of
    predecessors from 0 to 39 at once, each instruction's predecessors in the order of
    their first edge, as the general way lists them."""
    rng = random.Random(11)
    n = 40
    ins = [{"id": f"n{i}", "opcode": "FADD"} for i in range(n)]
    edges = [{"from": f"n{i - 1}", "to": f"n{i}", "kind": "ilp"} for i in range(1, n)]
    edges += [{"from": f"n{j}", "to": f"n{i}", "kind": "dependency", "latency": rng.choice([3, 5])}
              for i in range(2, n) for j in range(i - 1)]
    edges += [{"from": f"n{i // 2}", "to": f"n{i}", "kind": "dependency", "latency": 7}
              for i in range(2, n, 3)]
    edges.append({"from": "n29", "to": "n20", "kind": "branch", "latency": 12})
    rng.shuffle(edges)
    g = from_dict({"format": "gpumodeler-kernel", "version": 2, "latency_table": "maxwell-volkov",
                   "instructions": ins, "edges": edges,
                   "loops": [{"id": "L", "members": [f"n{i}" for i in range(20, 30)],
                              "iterations": "4"}]})
    table = get_table("maxwell-volkov")
    got = _one_pass(g, table)
    assert got is not None
    _same(got, _general(g, table))
    sizes = {len(p) for region in got[2].values() for p in region.ipreds}
    assert len(sizes) > 20
    for region in got[2].values():
        where = {node: k for k, node in enumerate(region.topo)}
        assert list(region.ipreds) == [tuple((where[p], w, s) for p, w, s in region.preds.get(node, ()))
                                       for node in region.topo]
