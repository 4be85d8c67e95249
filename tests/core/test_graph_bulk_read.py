"""Reading a kernel file column by column (core/kernel/bulk_read.py, for speed) makes exactly
the graph the item-by-item reader makes, and leaves every file it cannot vouch for to it."""
from __future__ import annotations

import random
import re

import numpy as np

import pytest

from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel import bulk_read, kernel_format
from gpumodeler.core.kernel.graph import KernelGraph, from_dict

from test_graph_fast_paths import _ODD_EDGES, _ODD_VALUES, one_by_one
from test_graph_linear import random_kernel


def _result(fn, data):
    try:
        return fn(data), None
    except ModelError as exc:
        return None, (type(exc).__name__, str(exc), exc.item)


def _same_graph(got, want):
    assert list(got.instructions.items()) == list(want.instructions.items())
    assert list(got.edges.items()) == list(want.edges.items())
    for a, b in zip(list(got.instructions.values()) + list(got.edges.values()),
                    list(want.instructions.values()) + list(want.edges.values())):
        assert [type(getattr(a, f)) for f in a.__slots__] == \
            [type(getattr(b, f)) for f in b.__slots__]
        assert hash(a) == hash(b)


@pytest.fixture
def bulk_only(monkeypatch):
    """from_dict with the item-by-item readers switched off: the bulk readers must take it."""
    def refuse(*args):
        raise AssertionError("the bulk reader refused a valid file")
    monkeypatch.setattr(kernel_format, "_read_instructions", refuse)
    monkeypatch.setattr(kernel_format, "_read_edges", refuse)


def _decorated(seed: int, ids) -> dict:
    """A valid random kernel with labels, positions (ints and floats), explicit latencies
    (ints and floats), explicit branch directions and, with ``ids`` None, some edges with and
    some without an id."""
    rng = random.Random(seed)
    data = random_kernel(seed, n=150, loops=0, ids=ids is not False)
    for d in data["instructions"]:
        if rng.random() < 0.3:
            d["label"] = rng.choice(["", "head", "tail"])
        if rng.random() < 0.5:
            d["x"], d["y"] = rng.choice([0, 3, -2.5, 1e300]), rng.choice([0.0, 7, 2.25])
        if d["opcode"] == "LDG" and rng.random() < 0.5:
            d["hit_ratio"] = rng.choice([0, 0.5, 1])
        if d["opcode"] == "LDG" and rng.random() < 0.5:
            d["address"] = rng.choice(["", "c[0x0][0x160] + 4·tid.x", f"{rng.random()}"])
    for e in data["edges"]:
        if rng.random() < 0.2:
            e["latency"] = rng.choice([0, 4, 2.5])
        if e["kind"] == "branch":
            e["taken"] = rng.choice([True, False])
        if ids is None and rng.random() < 0.5:
            e.pop("id", None)
    data["loops"] = []
    return data


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("ids", [True, False, None])
def test_valid_files_are_read_in_bulk_as_item_by_item(seed, ids, bulk_only):
    data = _decorated(seed, ids)
    got = from_dict(data)
    _same_graph(got, one_by_one(data))


def test_mixed_number_types_keep_their_types(bulk_only):
    """1, 1.0 and True are equal dict keys: the kinds of instructions keep each one's type."""
    data = _decorated(1, True)
    loads = [d for d in data["instructions"] if d["opcode"] == "LDG"]
    assert len(loads) >= 3
    for d, ratio in zip(loads, [0, 0.0, 1, 1.0]):
        d["hit_ratio"] = ratio
    got = from_dict(data)
    _same_graph(got, one_by_one(data))
    assert {type(got.instructions[d["id"]].hit_ratio) for d in loads[:4]} == {int, float}


@pytest.mark.parametrize("given", [True, False])
def test_generated_edge_ids_that_collide_are_skipped_as_one_by_one(given):
    """An edge without an id gets e<N>; a given id or an instruction id equal to a candidate
    makes the reader count on, as KernelGraph.new_id does."""
    data = random_kernel(3, n=40, loops=0, ids=False)
    data["instructions"][5]["id"] = f"e{len(data['instructions']) + 3}"
    for e in data["edges"]:
        for end in ("from", "to"):
            if e[end] == "n5":
                e[end] = data["instructions"][5]["id"]
    if given:
        data["edges"][7]["id"] = f"e{len(data['instructions']) + 12}"
    data["loops"] = []
    got, want = _result(from_dict, data), _result(one_by_one, data)
    assert got[1] == want[1]
    _same_graph(got[0], want[0])


@pytest.mark.parametrize("seed", range(150))
def test_one_odd_value_in_a_large_file_gives_the_first_error(seed):
    """One odd value among 150 instructions: the bulk reader leaves the file to the
    item-by-item reader, which says what is wrong (or reads it, when it is valid)."""
    rng = random.Random(seed)
    data = _decorated(seed, [True, False, None][seed % 3])
    if seed % 2:
        d, table = rng.choice(data["instructions"]), _ODD_VALUES
    else:
        d, table = rng.choice(data["edges"]), _ODD_EDGES
    key = rng.choice(sorted(table))
    d[key] = rng.choice(table[key])
    got, want = _result(from_dict, data), _result(one_by_one, data)
    assert got[1] == want[1]
    if got[0] is not None:
        _same_graph(got[0], want[0])


def test_bulk_readers_refuse_what_they_cannot_vouch_for():
    g = KernelGraph()
    ins = [{"id": "a", "opcode": "FADD"}, {"id": "b", "opcode": "FADD", "x": float("nan")}]
    assert not bulk_read.read_instructions(ins, g, kernel_format.INSTRUCTION_KEYS, kernel_format._OWN,
                                           kernel_format._prototype)
    assert not g.instructions
    ins[1]["x"] = 2
    assert bulk_read.read_instructions(ins, g, kernel_format.INSTRUCTION_KEYS, kernel_format._OWN,
                                       kernel_format._prototype)
    positions = {n: i for i, n in enumerate(g.instructions)}
    for bad in ({"latency": -1}, {"latency": [1]}, {"taken": 1}, {"to": "ghost"}, {"to": "a"},
                {"id": "a"}, {"kind": "bogus"}, {"extra": 1}, {"from": ["a"]}, {"from": None},
                {"to": 0}):
        edges = [{"id": "e1", "from": "a", "to": "b", "kind": "ilp"},
                 {"id": "e2", "from": "a", "to": "b", "kind": "dependency", **bad}]
        assert not bulk_read.read_edges(edges, g, kernel_format.EDGE_KEYS, positions), bad
        assert not g.edges


def test_an_address_is_text_and_files_without_one_still_load():
    base = {"format": "gpumodeler-kernel", "version": 1, "name": "k", "edges": [],
            "instructions": [{"id": "a", "opcode": "LDG"}, {"id": "b", "opcode": "LDG",
                                                            "address": "4·tid.x"}]}
    g = from_dict(base)
    assert [i.address for i in g.instructions.values()] == ["", "4·tid.x"]
    assert kernel_format.to_dict(g)["instructions"][0].keys() >= {"id", "opcode"}
    assert "address" not in kernel_format.to_dict(g)["instructions"][0]
    assert from_dict(kernel_format.to_dict(g)) == g
    bad = dict(base, instructions=[{"id": "a", "opcode": "LDG", "address": 4}])
    with pytest.raises(ModelError, match="address must be text"):
        from_dict(bad)


@pytest.mark.parametrize("first", [np.float64(1.0), np.int64(1), 1, 1.0, True, "x"])
def test_equal_numbers_of_other_types_first_keep_every_type(first):
    """A kind whose first value in a column is not a plain number (a numpy number given by a
    caller) still has the column's plain 1, 1.0 and True told apart (the bulk reader looks
    at every column where a kind holds anything but text), or leaves the file to the
    item-by-item reader: either way the graph that reader makes."""
    data = _decorated(2, True)
    loads = [d for d in data["instructions"] if d["opcode"] == "LDG"]
    assert len(loads) >= 5
    for k, d in enumerate(loads):  # every load of one kind, whose first holds ``first``
        for key in set(d) - {"id", "opcode", "label", "x", "y"}:
            del d[key]
        d["hit_ratio"] = [1, 1.0][k % 2] if k else first
    try:
        want = one_by_one(data)
    except ModelError as exc:
        with pytest.raises(ModelError, match=re.escape(str(exc))):
            from_dict(data)
        return
    got = from_dict(data)
    _same_graph(got, want)
    assert [type(got.instructions[d["id"]].hit_ratio) for d in loads[:5]] == \
        [type(want.instructions[d["id"]].hit_ratio) for d in loads[:5]]
