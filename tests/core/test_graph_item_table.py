"""A graph read from a file keeps its instructions and edges as columns
(core/kernel/item_table.py, for speed): it behaves as the dict of items, the analysis reads
the columns without making the items, and a change makes them first."""
from __future__ import annotations

import copy
import pickle
from operator import attrgetter

import pytest

from gpumodeler.core.kernel.graph import Edge, KernelGraph, from_dict
from gpumodeler.core.kernel.item_table import (ItemTable, columns, item_at, kind_codes,
                                               values_of)
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.warp_counts import COUNT_NAMES, _kind_of, count

from test_graph_linear import random_kernel

VALUES = {"a": 7.0, "b": 3.0, "N": 4096.0}


def _read(seed=1, **kw) -> KernelGraph:
    graph = from_dict(random_kernel(seed, **kw))
    assert type(graph.instructions) is ItemTable and type(graph.edges) is ItemTable
    return graph


def test_a_table_is_the_dict_of_its_items():
    graph, plain = _read(), _read()
    want_ins, want_edges = dict(plain.instructions.items()), dict(plain.edges.items())
    ins = graph.instructions
    assert len(ins) == len(want_ins) and list(ins) == list(want_ins)
    assert list(ins.keys()) == list(want_ins) and "n3" in ins and "nope" not in ins
    with pytest.raises(TypeError):  # as a dict says
        [] in ins
    one = ins["n3"]
    assert one == want_ins["n3"] and ins.get("n3") is one and ins.get("nope", 5) == 5
    with pytest.raises(KeyError):
        ins["nope"]
    assert not ins.is_made  # looking up one item made only that one
    assert ins == want_ins and want_ins == ins and not (ins != want_ins)
    assert ins.is_made and ins["n3"] is one  # made whole, keeping the item made before
    assert list(ins.values()) == list(want_ins.values())
    assert graph.edges == want_edges and repr(graph.edges) == repr(want_edges)
    assert ins != {"n3": one}


def test_copies_and_pickles_are_plain_dicts():
    graph = _read(2)
    for table in (graph.instructions, graph.edges):
        want = dict(table.items())
        for got in (copy.copy(table), copy.deepcopy(table), pickle.loads(pickle.dumps(table)),
                    table.copy()):
            assert type(got) is dict and got == want
    clone = copy.deepcopy(_read(2))
    assert clone == graph and type(graph.copy().edges) is dict


@pytest.mark.parametrize("seed", range(6))
def test_the_columns_are_the_items_fields(seed):
    graph = _read(seed, n=80, loops=5)
    plain = {"instructions": dict(_read(seed, n=80, loops=5).instructions.items()),
             "edges": dict(_read(seed, n=80, loops=5).edges.items())}
    for name in ("instructions", "edges"):
        table, items = getattr(graph, name), list(plain[name].values())
        fields = list(items[0].__slots__)
        assert columns(table, fields) == [list(map(attrgetter(f), items)) for f in fields]
        keys = list(plain[name])[::-3]
        for f in fields:
            assert values_of(table, f, keys) == [getattr(plain[name][k], f) for k in keys]
        at = item_at(table)
        assert [at(i) for i in (0, len(items) - 1, 5)] == [items[0], items[-1], items[5]]
        assert not table.is_made
    # kinds: one number per kind, numbered in order of first appearance, each number's
    # instructions alike in everything the counts read (and the helpers agree on a dict)
    codes, firsts = kind_codes(graph.instructions, _kind_of)
    items = list(plain["instructions"].values())
    sigs = list(map(_kind_of, items))
    assert all(sigs[i] == sigs[firsts[c]] for i, c in enumerate(codes.tolist()))
    assert firsts == sorted(firsts) and codes[firsts].tolist() == list(range(len(firsts)))
    distinct = list(dict.fromkeys(sigs))
    d_codes, d_firsts = kind_codes(plain["instructions"], _kind_of)
    assert [sigs[f] for f in d_firsts] == distinct and len(distinct) <= len(firsts)
    assert d_codes.tolist() == [distinct.index(s) for s in sigs]
    # worked out once for the table: the same answer again, its numbers read-only and its
    # list of firsts the caller's own; once the items are made, from the items
    firsts.append(-1)
    again, again_firsts = kind_codes(graph.instructions, _kind_of)
    assert again is codes and again_firsts == firsts[:-1]
    with pytest.raises(ValueError):
        codes[0] = 5
    graph.instructions.plain()
    made, made_firsts = kind_codes(graph.instructions, _kind_of)
    assert made.tolist() == d_codes.tolist() and made_firsts == d_firsts


@pytest.mark.parametrize("seed", range(8))
def test_the_analysis_makes_no_items_and_gives_the_same_results(seed):
    """The latency bound, the counts and the critical path of a graph read from a file make
    none of its items but a few looked at (one per kind), and equal those of the same graph
    held as plain dicts."""
    plain = _read(seed, n=120, loops=8).copy()
    assert type(plain.instructions) is dict and type(plain.edges) is dict
    graph = _read(seed, n=120, loops=8)
    results = []
    for g in (graph, plain):
        bound, counts = analyze(g), count(g)
        path = bound.critical_path(VALUES)
        results.append((bound.formula(), float(bound.evaluate(VALUES)), path, path.describe(g),
                        counts.forms, counts.evaluate(VALUES), dict(bound.edge_latency),
                        dict(bound.edge_ends)))
    assert results[0] == results[1]
    assert set(COUNT_NAMES) == set(results[0][4])
    # made: the first instruction of each kind, and the producer of the first edge of each
    # kind of dependency latency; an edge per kind of latency (of ~65 on the path, of ~200)
    kinds = len(kind_codes(graph.instructions, _kind_of)[1])
    assert not graph.instructions.is_made and kinds <= len(graph.instructions._some) <= 2 * kinds
    assert not graph.edges.is_made and len(graph.edges._some) <= 15


def test_a_change_makes_the_items_first():
    graph = _read(3, n=60, loops=4)
    before = graph.copy()
    ins, edges = graph.instructions, graph.edges
    e = graph.add_edge(Edge(graph.new_id("e"), "n0", "n9", "dependency", 4.0))
    assert type(graph.edges) is dict and graph.edges is edges.plain()
    assert type(graph.instructions) is ItemTable  # untouched: still columns
    graph.remove_edge(e.id)
    assert graph == before
    graph.update_instruction("n5", label="five")
    assert type(graph.instructions) is dict and graph.instructions is ins.plain()
    assert graph.instructions["n5"].label == "five" and ins["n5"].label == "five"


def test_writing_to_a_table_directly_writes_its_dict():
    graph = _read(4, n=40, loops=0)
    table = graph.edges
    first = next(iter(table))
    old = table[first]
    table[first] = Edge(old.id, old.src, old.dst, old.kind, 99.0, old.taken)
    assert table.is_made and graph.edges[first].latency == 99.0
    del table[first]
    assert first not in table and first not in graph.edges
    assert analyze(graph).formula()  # analysed from the dict now


def test_the_rest_of_a_dicts_ways():
    graph, other = _read(3), _read(3)
    ins, want = graph.instructions, dict(other.instructions.items())
    keys = ins.keys()
    assert list(reversed(ins)) == list(reversed(want)) and not ins.is_made
    assert (ins | {}) == want and ({} | ins) == want and type(ins | {}) is dict
    first = next(iter(want))
    assert ins.setdefault(first) == want[first] and ins.is_made
    graph.add_instruction(replace_id(want[first], "fresh"))
    assert "fresh" in keys and len(keys) == len(want) + 1  # the view follows, as a dict's
    assert ins.popitem()[0] == "fresh"
    edges = graph.edges
    edges.clear()
    assert len(edges) == 0


def replace_id(ins, new_id):
    from dataclasses import replace
    return replace(ins, id=new_id, label="")


def test_make_items_holds_plain_dicts_of_the_same_items():
    graph, other = _read(4), _read(4)
    one = graph.instructions[next(iter(graph.instructions))]
    assert graph.make_items() is graph
    assert type(graph.instructions) is dict and type(graph.edges) is dict
    assert graph.instructions[one.id] is one and graph == other


def test_threads_sharing_a_table_get_one_object_per_item(monkeypatch):
    import threading
    import time

    from gpumodeler.core.kernel import item_table
    slow = item_table.make_instances

    def making_slowly(*args):  # the other threads get to run while the items are made
        time.sleep(0.02)
        return slow(*args)
    monkeypatch.setattr(item_table, "make_instances", making_slowly)
    table = _read(5).instructions
    ids = list(table)
    got, errors = [], []

    def work(k):  # two make the whole dict, two look up one item each
        try:
            got.append(table.plain() if k % 2 else table[ids[k]])
        except Exception as exc:  # noqa: BLE001 - any error fails the test below
            errors.append(repr(exc))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    made = table.plain()
    assert not errors and len(got) == 4
    for one in got:
        assert one is made if type(one) is dict else one is made[one.id]
