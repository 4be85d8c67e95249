"""A kernel read column by column keeps copies of the parsed file's texts, not the parser's
own string objects (core/kernel/bulk_read.py, ``_fresh``): those lie scattered among the
parsed items, and kept by a graph they pinned the parse's memory, so that the next kernel
read in the same session was parsed into the gaps and read twice as slowly."""
from __future__ import annotations

import json

from gpumodeler.core.kernel import bulk_read
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.graph_items import EDGE_KINDS

from test_graph_fast_paths import one_by_one
from test_graph_linear import random_kernel


def _parsed(seed: int, **kw) -> dict:
    return json.loads(json.dumps(random_kernel(seed, n=300, loops=3, **kw)))


def test_fresh_copies_are_equal_and_new():
    texts = ["n1", "a longer label with spaces", "", "é ü 漢字", "n1"]
    copies = bulk_read._fresh(texts)
    assert copies == texts
    assert all(c is not t for c, t in zip(copies, texts) if len(t) > 1)
    assert bulk_read._fresh(["x"]) == ["x"] and bulk_read._fresh([]) == []


def test_a_text_holding_the_separator_is_kept_as_it_is():
    texts = ["a\x00b", "c"]
    assert bulk_read._fresh(texts) is texts


def test_the_tables_keep_no_parsed_string():
    data = _parsed(7)
    for d in data["instructions"]:
        d["label"] = f"label of {d['id']}"
    parsed = {id(v) for item in data["instructions"] + data["edges"] for v in item.values()
              if isinstance(v, str) and len(v) > 1}
    graph = from_dict(data)
    assert graph.instructions.__class__.__name__ == "ItemTable"  # the column reader took it
    kept = [ins.id for ins in graph.instructions.values()]
    kept += [ins.label for ins in graph.instructions.values()]
    kept += [e.id for e in graph.edges.values()]
    kept += [e.kind for e in graph.edges.values()]
    kept += [e.src for e in graph.edges.values()] + [e.dst for e in graph.edges.values()]
    assert not [t for t in kept if id(t) in parsed]
    # every kind is the one text object of its name
    names = {k: k for k in EDGE_KINDS}
    assert all(e.kind is names[e.kind] for e in graph.edges.values())


def test_the_graph_read_is_the_same():
    for seed in range(5):
        data = _parsed(seed, ids=seed % 2 == 0)
        graph = from_dict(data)
        again = from_dict(json.loads(json.dumps(data)))
        assert list(graph.instructions.items()) == list(again.instructions.items())
        assert list(graph.edges.items()) == list(again.edges.items())
        assert [e.id for e in graph.edges.values()] == \
            [e.get("id") or e_id for e, e_id in zip(data["edges"], graph.edges)]


def test_a_kind_of_a_text_subclass_keeps_its_type():
    """Only plain text is made the one text of its name: a subclass (a script's own data)
    is left to the item-by-item reader, which keeps it as it is."""
    class Kind(str):
        pass

    data = _parsed(3)
    data["edges"][0]["kind"] = Kind(data["edges"][0]["kind"])
    got, want = from_dict(data), one_by_one(data)
    first = next(iter(data["edges"]))["id"]
    assert type(got.edges[first].kind) is type(want.edges[first].kind)
    assert list(got.edges.items()) == list(want.edges.items())
