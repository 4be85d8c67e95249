"""Edges read from a file keep the positions of their ends among the instructions
(item_table.end_positions, for speed): the collapse reads them instead of looking every end up
in the program order. They must be those positions exactly, and be given up as soon as either
table is no longer the one read."""
from __future__ import annotations

import pytest

from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.graph_items import Instruction
from gpumodeler.core.kernel.item_table import ItemTable, end_positions
from gpumodeler.core.kernel.latency_bound import analyze

from test_graph_linear import random_kernel


def _by_order(g):
    order = g.order()
    return ([order[e.src] for e in g.edges.values()], [order[e.dst] for e in g.edges.values()])


@pytest.mark.parametrize("seed", range(10))
def test_positions_are_the_program_order_of_the_ends(seed):
    g = from_dict(random_kernel(seed, n=80, loops=5, ids=seed % 2 == 0))
    got = end_positions(g.edges, g.instructions)
    assert got is not None
    assert (list(got[0]), list(got[1])) == _by_order(g)
    # the ends are the instructions' own id objects, as before
    ids = {id(k) for k in g.instructions}
    assert all(id(e.src) in ids and id(e.dst) in ids for e in g.edges.values())


def test_positions_are_given_up_when_a_table_changes():
    data = random_kernel(4, n=40, loops=3)
    g = from_dict(data)
    g.add_instruction(Instruction("new", "IADD", unit="cuda_core"), index=0)  # every position moves by one
    assert end_positions(g.edges, g.instructions) is None
    # the same graph read from a file with the instruction in it (positions kept)
    want = from_dict(dict(data, instructions=[{"id": "new", "opcode": "IADD", "unit": "cuda_core"}]
                          + data["instructions"]))
    assert end_positions(want.edges, want.instructions) is not None
    got_bound, want_bound = analyze(g), analyze(want)
    assert got_bound.regions == want_bound.regions
    assert got_bound.formula() == want_bound.formula()

    g = from_dict(data)
    first = next(iter(g.edges))
    g.remove_edge(first)
    assert end_positions(g.edges, g.instructions) is None

    g = from_dict(data)
    assert isinstance(g.instructions, ItemTable)
    g.instructions.plain()  # made into its dict (as a change would)
    assert end_positions(g.edges, g.instructions) is None
    g = from_dict(data)
    g.edges.plain()
    assert end_positions(g.edges, g.instructions) is None


def test_ends_that_are_not_text_are_read_item_by_item_as_before():
    data = random_kernel(5, n=20, loops=0)
    for d in data["instructions"]:
        d["id"] = d["id"][1:]  # "n7" -> "7"
    for e in data["edges"]:
        e["from"], e["to"] = int(e["from"][1:]), e["to"][1:]  # a number for a number's text
    g = from_dict(data)
    assert end_positions(g.edges, g.instructions) is None
    assert all(type(e.src) is str and e.src in g.instructions for e in g.edges.values())
    for bad in ([1], {"x": 1}):
        data["edges"][0]["from"] = bad
        with pytest.raises(Exception) as info:
            from_dict(data)
        assert "edge" in str(info.value)
