"""The kernel-graph fast paths (speed targets) give exactly what the general code gives: pruning of
linear forms, reading instructions and edges, the counts summed per kind of instruction, the
regions' topological order and the scalar numeric pass."""
from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

from gpumodeler.core.errors import GraphError, ModelError
import gpumodeler.core.kernel.latency_forms as lf
from gpumodeler.core.kernel.graph import KernelGraph, from_dict
from gpumodeler.core.kernel.graph_items import Edge, Instruction
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.loop_regions import _region, _topological_order
from gpumodeler.core.kernel.warp_counts import (COUNT_NAMES, PIPE_COUNT_NAMES, WarpCounts,
                                                access_bytes_per_warp, count, instruction_pipe,
                                                lines_touched)

from test_graph_linear import random_kernel
from repetitions import repetitions


# -- pruning -------------------------------------------------------------------------------
def naive_prune(forms, max_forms, budget=None):
    """_prune as it was: every pair of distinct forms compared."""
    if len(forms) <= 1:
        return forms
    unique = list(dict.fromkeys(forms))
    if len(unique) == 1:
        return unique
    if budget is not None:
        budget[0] -= len(unique) * len(unique)
        if budget[0] < 0:
            raise lf._TooManyForms
    kept = [f for i, f in enumerate(unique)
            if not any(j != i and lf._dominates(g, f) for j, g in enumerate(unique))]
    if len(kept) > max_forms:
        raise lf._TooManyForms
    return kept


def _outcome(fn, forms, max_forms, budget):
    box = None if budget is None else [budget]
    try:
        return fn(list(forms), max_forms, box), box
    except lf._TooManyForms:
        return "too many", box


_TERMS = [(), ((("a",), 2.0),), ((("a",), 1.0), (("b",), 3.0)), ((("b",), 3.0),),
          ((("a",), 1.0), (("a", "b"), 0.5))]


@st.composite
def form_lists(draw):
    """Candidate lists as the analysis makes them: few terms objects shared by many forms
    (sometimes an equal tuple that is another object), small integer constants."""
    pool = draw(st.lists(st.sampled_from(range(len(_TERMS))), min_size=1, max_size=3))
    objects = [_TERMS[k] if draw(st.booleans()) else tuple(list(_TERMS[k])) for k in pool]
    n = draw(st.integers(1, 8))
    consts = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.0, 12.0]), min_size=n, max_size=n))
    which = draw(st.lists(st.integers(0, len(objects) - 1), min_size=n, max_size=n))
    return [(c, objects[k]) for c, k in zip(consts, which)]


@settings(max_examples=repetitions(120, 400), deadline=None)
@given(forms=form_lists(), max_forms=st.integers(0, 3),
       budget=st.one_of(st.none(), st.integers(0, 80)))
def test_prune_is_the_pairwise_prune(forms, max_forms, budget):
    assert _outcome(lf._prune, forms, max_forms, budget) == \
        _outcome(naive_prune, forms, max_forms, budget)


@settings(max_examples=repetitions(120, 400), deadline=None)
@given(consts=st.lists(st.sampled_from([0.0, 1.0, 3.0, 7.5]), min_size=1, max_size=5),
       k=st.integers(0, len(_TERMS) - 1), copy=st.booleans(), starts=st.booleans(),
       max_forms=st.integers(0, 2), budget=st.one_of(st.none(), st.integers(0, 40)))
def test_prune_simple_is_prune_of_the_candidates(consts, k, copy, starts, max_forms, budget):
    terms = tuple(list(_TERMS[k])) if copy else _TERMS[k]
    cands = ([lf._ZERO] if starts else []) + [(c, terms) for c in consts]

    def simple(_, m, b):
        return lf._prune_simple(list(consts), terms, starts, m, b)

    assert _outcome(simple, cands, max_forms, budget) == \
        _outcome(naive_prune, cands, max_forms, budget)


# -- reading a file ------------------------------------------------------------------------
def one_by_one(data):
    """from_dict's work as add_instruction / add_edge for each item in turn."""
    g = KernelGraph(name=data["name"], latency_table=data.get("latency_table"))
    for d in data["instructions"]:
        kw = {k: v for k, v in d.items() if k not in ("id", "opcode")}
        if "stride" in kw and isinstance(kw["stride"], (int, float)) \
                and not isinstance(kw["stride"], bool):
            kw["stride"] = float(kw["stride"])
        g.add_instruction(Instruction.make(str(d["id"]), str(d["opcode"]), **kw))
    for d in data["edges"]:
        g.add_edge(Edge(id=str(d.get("id") or g.new_id("e")), src=str(d["from"]),
                        dst=str(d["to"]), kind=d["kind"], latency=d.get("latency"),
                        taken=d.get("taken")))
    return g


_ODD_VALUES = {
    "width_bytes": [4, 4.0, True, 3, 8], "stride": [1, 2, 2.5, 0, float("inf"), "2", True],
    "hit_ratio": [0, 0.5, 1, 1.5, float("nan")], "x": [0, 1.5, -3, float("inf"), 10**400, "a"],
    "y": [0.0, 2, None], "label": ["", "loop head", 3], "unit": ["cuda_core", "ldst", "gpu", ""],
    "space": ["global", "shared", None, "texture"], "pattern": ["strided", "random", "zigzag"],
    "segment_bytes": [32, 128, 96], "bank_conflict_degree": [1, 2, 33],
    "memory_level": [None, "l2", "disk"], "is_load": [True, False, 1],
    "opcode": ["FADD", "LDG", "NOPE", 7], "id": ["", "n1", 5],
}
_ODD_EDGES = {"latency": [None, 0, 3.5, -1, float("inf"), True, "4", 10**400],
              "taken": [None, True, False, 1], "kind": ["ilp", "dependency", "dual", "bogus", 3],
              "id": [None, "", "n2", "e1", "x9"], "to": ["n0", "ghost"]}


@pytest.mark.parametrize("seed", range(120))
def test_reading_validates_like_adding_one_by_one(seed):
    rng = random.Random(seed)
    data = random_kernel(seed, n=12, loops=0, ids=seed % 2 == 0)
    for _ in range(rng.randint(0, 2)):
        d = rng.choice(data["instructions"])
        key = rng.choice(sorted(_ODD_VALUES))
        d[key] = rng.choice(_ODD_VALUES[key])
    for _ in range(rng.randint(0, 2)):
        d = rng.choice(data["edges"])
        key = rng.choice(sorted(_ODD_EDGES))
        d[key] = rng.choice(_ODD_EDGES[key])
    data["loops"] = []
    got, want = _result(from_dict, data), _result(one_by_one, data)
    assert got[1] == want[1]
    if got[0] is not None:
        assert list(got[0].instructions.values()) == list(want[0].instructions.values())
        assert list(got[0].edges.values()) == list(want[0].edges.values())
        for a, b in zip(got[0].instructions.values(), want[0].instructions.values()):
            assert [type(getattr(a, f)) for f in a.__slots__] == \
                [type(getattr(b, f)) for f in b.__slots__]


def _result(fn, data):
    try:
        return fn(data), None
    except ModelError as exc:
        return None, (type(exc).__name__, str(exc), exc.item)


# -- counts --------------------------------------------------------------------------------
def sequential_count(graph, warp_size=32, control_on_cuda_cores=True) -> WarpCounts:
    """count() as it was: every amount added in turn, one instruction after the other."""
    from gpumodeler.core.kernel.loop_nesting import loop_nesting
    nesting = loop_nesting(graph.loops)
    weight = {n: nesting.enclosing(n) for n in graph.instructions}
    forms = {name: {} for name in COUNT_NAMES}

    def add(name, mono, amount):
        if amount:
            forms[name][mono] = forms[name].get(mono, 0.0) + amount

    cuda_units = {"cuda_core"} | ({"branch", "exit"} if control_on_cuda_cores else set())
    for nid, ins in graph.instructions.items():
        if ins.unit == "virtual":
            continue
        mono = weight[nid]
        add("instructions", mono, 1)
        add("issued_instructions", mono, 1)
        pipe_count = PIPE_COUNT_NAMES.get(instruction_pipe(ins))
        if pipe_count is not None:
            add(pipe_count, mono, 1)
        if ins.unit in cuda_units:
            add("cuda_core_instructions", mono, 1)
        elif ins.unit == "sfu":
            add("sfu_instructions", mono, 1)
        elif ins.unit == "fp64":
            add("fp64_instructions", mono, 1)
        elif ins.unit == "ldst":
            add("memory_instructions", mono, 1)
            if ins.space in ("global", "local"):
                nbytes = access_bytes_per_warp(ins.width_bytes, ins.stride, ins.pattern,
                                               ins.segment_bytes, warp_size)
                add("gmem_accesses", mono, 1)
                add("gmem_bytes", mono, nbytes * (1.0 - ins.hit_ratio))
                add("l2_bytes", mono, nbytes * ins.hit_ratio)
                lines = lines_touched(ins.width_bytes, ins.stride, ins.pattern, warp_size)
                add("l1_wavefronts", mono, lines)
                add("lsu_instructions", mono, 1)  # the load/store units: one instruction
                extra = lines - 1
            elif ins.space == "shared":
                add("smem_accesses", mono, 1)
                add("lsu_instructions", mono, 1)
                add("smem_bank_cycles", mono, ins.bank_conflict_degree)
                extra = ins.bank_conflict_degree - 1
            else:
                extra = 0
            add("reissues", mono, extra)
            add("issued_instructions", mono, extra)
    for e in graph.edges.values():
        if e.kind == "dual":
            mono = weight[e.dst] if len(weight[e.dst]) <= len(weight[e.src]) else weight[e.src]
            add("dual_issues", mono, 1)
            add("issued_instructions", mono, -1)
    return WarpCounts(forms={k: {m: c for m, c in v.items() if c} for k, v in forms.items()},
                      iterations={lid: lp.iterations for lid, lp in graph.loops.items()})


@pytest.mark.parametrize("seed", range(30))
def test_counts_are_the_amounts_added_in_turn(seed):
    """Fractional bytes (hit ratios, strides) included: the same floats, the same order."""
    rng = random.Random(seed)
    data = random_kernel(seed, n=rng.randint(5, 120), loops=rng.randint(0, 10))
    for d in data["instructions"]:
        if d["opcode"] in ("LDG", "STG") and rng.random() < 0.6:
            d["hit_ratio"] = rng.choice([0.1, 0.3, 0.7, 1 / 3])
            d["stride"] = rng.choice([1.0, 1.5, 2.7, 3.3])
        if rng.random() < 0.05:
            d["unit"] = "virtual"
    g = from_dict(data)
    for warp_size, control in ((32, True), (64, False)):
        got, want = count(g, warp_size, control), sequential_count(g, warp_size, control)
        assert {k: list(v.items()) for k, v in got.forms.items()} == \
            {k: list(v.items()) for k, v in want.forms.items()}


# -- regions and the numeric pass ----------------------------------------------------------
@pytest.mark.parametrize("seed", range(200))
def test_region_order_is_kahns(seed):
    """A region whose items form a path skips Kahn's algorithm; the order is the same, and a
    cycle is still found."""
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randint(1, 12)):
        nodes += [("in", f"L{i}"), ("out", f"L{i}")] if rng.random() < 0.2 else [f"n{i}"]
    sources = [n for n in nodes if not (isinstance(n, tuple) and n[0] == "in")]
    targets = [n for n in nodes if not (isinstance(n, tuple) and n[0] == "out")]
    at = {n: i for i, n in enumerate(nodes)}
    edges = []
    if rng.random() < 0.7:  # the chain of neighbours (an entry to its exit is implied)
        edges += [(u, v) for u, v in zip(nodes, nodes[1:]) if u in sources and v in targets]
    for _ in range(rng.randint(0, 10)):
        u, v = rng.choice(sources), rng.choice(targets)
        if at[u] < at[v] or rng.random() < 0.1:
            edges.append((u, v))
    rng.shuffle(edges)
    weighted = [(u, v, float(rng.randint(0, 9)), f"e{k}") for k, (u, v) in enumerate(edges)]
    pairs = list(dict.fromkeys(edges))
    try:
        want = _topological_order(nodes, pairs)
    except GraphError as exc:
        with pytest.raises(GraphError) as got:
            _region(None, nodes, weighted, ())
        assert str(got.value) == str(exc)
        return
    assert _region(None, nodes, weighted, ()).topo == want


@pytest.mark.parametrize("seed", range(20))
def test_scalar_numeric_pass_is_the_array_pass(seed):
    data = random_kernel(200 + seed, n=60, loops=8)
    bound = analyze(from_dict(data))
    values = {"a": 7.0, "b": 3.0, "N": 4096.0}
    scalar = bound._numeric(bound._loop_values(values))
    arrays = bound._numeric(bound._loop_values({k: np.asarray([v]) for k, v in values.items()}))
    assert type(scalar) is type(np.maximum(0.0, 1.0)) and scalar == arrays[0]


# -- the latency bound's edge tables ------------------------------------------------------
def test_lazy_edge_tables_are_the_dicts():
    """The latency bound's edge tables, made when first used, are the dicts they stand for."""
    from gpumodeler.core.kernel.collapse import LazyTable, as_dict

    table = LazyTable(["e1", "e2", "e3"], iter([3.0, 0.0, 12.0]))
    want = {"e1": 3.0, "e2": 0.0, "e3": 12.0}
    assert table == want and want == table and table == LazyTable(list(want), want.values())
    assert table != {"e1": 3.0} and dict(table) == want and list(table) == list(want)
    assert len(table) == 3 and table["e3"] == 12.0 and table.get("x") is None
    assert as_dict(table) == want and type(as_dict(table)) is dict and as_dict(want) is want
    with pytest.raises(KeyError):
        table["x"]
    bound = analyze(from_dict(random_kernel(3, n=40, loops=3)))
    assert type(bound.edge_latency) is LazyTable and type(as_dict(bound.edge_ends)) is dict
