"""The linear-time graph algorithms (speed targets) agree exactly with the ones they replaced
(tests/core/graph_reference.py) on random graphs: ids given to edges and loops without one,
the first error for bad loops, per-warp counts, the symbolic bound, its formula, the exact
numeric bound and the critical path."""
from __future__ import annotations

import random

import numpy as np
import pytest

from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.graph import KernelGraph, Loop, from_dict, to_dict
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.loop_nesting import first_conflict, loop_nesting
from gpumodeler.core.kernel.warp_counts import PIPE_COUNT_NAMES, TENSOR_MAC_COUNT_NAMES, count

import graph_reference as ref

OPS = ["FADD", "FFMA", "IADD", "LDG", "STG", "MOV", "ISETP", "MUFU", "LDS", "STS", "DADD", "BRA"]
ITERATIONS = ["a", "b", "2*a", "N/256", "3", "a", "0"]


def _loop_sets(rng, ids, count, scattered):
    """Nested (or disjoint) member sets; with ``scattered`` some skip instructions."""
    sets = []
    spans = [(0, len(ids))]
    for _ in range(count):
        lo, hi = rng.choice(spans)
        if hi - lo < 2:
            continue
        a = rng.randrange(lo, hi - 1)
        b = rng.randrange(a + 1, min(hi, a + 1 + rng.randint(1, 12)) + 1)
        members = ids[a:b]
        if scattered and len(members) > 2 and rng.random() < 0.5:
            members = [m for m in members if rng.random() < 0.7] or members[:1]
        if set(members) in [set(s) for s in sets]:
            continue
        # nested in or disjoint from every earlier set
        if all(set(members) <= set(s) or set(s) <= set(members) or not set(s) & set(members)
               for s in sets):
            sets.append(members)
            spans.append((a, b))
    return sets


def random_kernel(seed, n=60, loops=8, ids=True, scattered=False, latencies=True) -> dict:
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(n)]
    ins = []
    for nid in names:
        op = rng.choice(OPS)
        d = {"id": nid, "opcode": op}
        if op in ("LDG", "STG") and rng.random() < 0.5:
            d["stride"] = rng.choice([1, 2, 4, 8])
        if op == "LDG" and rng.random() < 0.3:
            d["pattern"] = "random"
        if op in ("LDS", "STS") and rng.random() < 0.5:
            d["bank_conflict_degree"] = rng.choice([2, 4])
        ins.append(d)
    load = {d["id"] for d in ins if d["opcode"] in ("LDG", "LDS")}
    edges = []

    def edge(src, dst, kind, **kw):
        e = {"from": src, "to": dst, "kind": kind, **kw}
        if ids:
            e = {"id": f"x{len(edges)}", **e}
        edges.append(e)

    for i in range(1, n):
        edge(names[i - 1], names[i], "dual" if rng.random() < 0.05 else "ilp")
        for _ in range(rng.randint(0, 2)):
            j = i - rng.randint(1, min(i, 10))
            kind = "memory" if names[j] in load else "dependency"
            if names[j] in load or ins[j]["opcode"] not in ("STG", "STS", "BRA"):
                explicit = ins[j]["opcode"] == "DADD" or (latencies and rng.random() < 0.3)
                kw = {"latency": float(rng.randint(0, 40))} if explicit else {}
                edge(names[j], names[i], kind, **kw)
    sets = _loop_sets(rng, names, loops, scattered)
    for members in sets:
        if len(members) > 1:
            edge(members[-1], members[0], "branch", latency=float(rng.choice([0, 5, 12, 30])))
        if len(members) > 3 and rng.random() < 0.4:  # a loop-carried dependency
            edge(members[-2], members[1], "dependency", latency=float(rng.randint(1, 30)))
    loop_list = []
    for k, members in enumerate(sets):
        rng.shuffle(members)  # the file's member order is free
        d = {"name": f"loop {k}", "iterations": rng.choice(ITERATIONS), "members": members}
        if ids:
            d = {"id": f"L{k}", **d}
        loop_list.append(d)
    rng.shuffle(loop_list)
    return {"format": "gpumodeler-kernel", "version": 1, "name": f"random {seed}",
            "latency_table": "maxwell-volkov", "variables": {"a": 7, "b": 3, "N": 4096},
            "instructions": ins, "edges": edges, "loops": loop_list}


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except ModelError as exc:
        return None, (type(exc).__name__, str(exc), exc.item)


def _same_bound(new, old, values):
    assert new.forms == old.forms
    assert list(new.per_iteration.items()) == list(old.per_iteration.items())
    assert new.edge_latency == old.edge_latency and new.loop_order == old.loop_order
    assert list(new.regions) == list(old.regions)
    for lid, region in new.regions.items():
        other = old.regions[lid]
        assert region.topo == other.topo and region.carried == other.carried
        assert list(region.preds.items()) == list(other.preds.items())
    assert new.formula() == old.formula()
    assert new.evaluate(values) == old.evaluate(values)
    arrays = {k: np.asarray([0, 1, v, 10 * v + 3], dtype=float) for k, v in values.items()}
    np.testing.assert_array_equal(new.evaluate(arrays), old.evaluate(arrays))
    np.testing.assert_array_equal(new._numeric(new._loop_values(arrays)),
                                  old._numeric(old._loop_values(arrays)))
    assert new.critical_path(values) == old.critical_path(values)


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_match_the_reference(seed):
    rng = random.Random(1000 + seed)
    data = random_kernel(seed, n=rng.randint(5, 90), loops=rng.randint(0, 12), ids=seed % 3 != 0,
                         scattered=seed % 4 == 1)
    g, err = _outcome(from_dict, data)
    g_old, err_old = _outcome(ref.old_from_dict, data)
    assert err == err_old is None
    assert to_dict(g) == to_dict(g_old)
    assert list(g.loops) == list(g_old.loops) and list(g.edges) == list(g_old.edges)
    parent, depth, innermost = ref.old_loop_structure(g)
    nesting = loop_nesting(g.loops)
    assert (nesting.parent, nesting.depth, nesting.innermost) == (parent, depth, innermost)
    assert {n: nesting.enclosing(n) for n in g.instructions} == ref.old_weights(g)
    c, c_old = count(g), ref.old_count(g)
    # the reference predates the per-pipe counts (warp_counts.PIPE_COUNT_NAMES); every other
    # count must be the same, and the pipes must split the CUDA-core instructions
    pipes = set(PIPE_COUNT_NAMES.values()) | set(TENSOR_MAC_COUNT_NAMES.values())
    assert {k: list(v.items()) for k, v in c.forms.items() if k not in pipes} == \
        {k: list(v.items()) for k, v in c_old.forms.items() if k not in pipes}
    bound, err = _outcome(analyze, g)
    bound_old, err_old = _outcome(ref.old_analyze, g)
    assert err == err_old
    if bound is not None:
        _same_bound(bound, bound_old, {"a": 7.0, "b": 3.0, "N": 4096.0})


@pytest.mark.parametrize("seed", range(5))
def test_forced_numeric_pass_matches_the_reference(seed, monkeypatch):
    """With the symbolic pass given up, the exact numeric pass decides everything."""
    import gpumodeler.core.kernel.latency_bound as lb
    monkeypatch.setattr(lb, "MAX_FORMS", 0)
    g = from_dict(random_kernel(100 + seed, n=80, loops=10))
    new = lb.analyze(g)
    monkeypatch.setattr(ref, "MAX_FORMS", 0)
    old = ref.old_analyze(g)
    assert new.forms is None and old.forms is None
    _same_bound(new, old, {"a": 5.0, "b": 2.0, "N": 1e6})


def _messy_loops(rng, names):
    """Loop lists with overlaps, duplicates, unknown members, reused ids, bad counts."""
    out = []
    for k in range(rng.randint(1, 9)):
        lo = rng.randrange(len(names))
        members = names[lo:lo + rng.randint(1, 6)]
        roll = rng.random()
        if roll < 0.05:
            members = members + ["ghost"]
        d = {"id": f"L{rng.randint(0, 12)}" if rng.random() < 0.3 else f"L{k}",
             "iterations": "a" if rng.random() > 0.05 else "a +", "members": members}
        if rng.random() < 0.2:
            del d["id"]
        if rng.random() < 0.03:
            del d["iterations"]
        out.append(d)
    return out


@pytest.mark.parametrize("seed", range(150))
def test_bad_loops_give_the_same_first_error(seed):
    rng = random.Random(seed)
    data = random_kernel(seed, n=30, loops=0)
    data["loops"] = _messy_loops(rng, [d["id"] for d in data["instructions"]])
    g, err = _outcome(from_dict, data)
    g_old, err_old = _outcome(ref.old_from_dict, data)
    assert err == err_old
    if g is not None:
        assert to_dict(g) == to_dict(g_old)


@pytest.mark.parametrize("seed", range(60))
def test_add_loops_is_add_loop_in_turn(seed):
    """Same loops kept, same error, same events as add_loop for each loop in turn."""
    rng = random.Random(seed)
    data = random_kernel(seed, n=25, loops=3)
    base = from_dict(data)
    names = list(base.instructions)
    batch = [Loop.make(d.get("id", f"M{i}"), d["members"], "a")
             for i, d in enumerate(_messy_loops(rng, names)) if "ghost" not in d["members"]]
    g, g_old = base.copy(), base.copy()
    events, events_old = [], []
    g.listeners.append(lambda ev, p: events.append((ev, p.id)))
    _, err = _outcome(g.add_loops, batch)
    err_old = None
    for loop in batch:
        _, err_old = _outcome(ref.old_add_loop, g_old, loop)
        if err_old:
            break
        events_old.append(("loop_added", loop.id))
    assert err == err_old
    assert list(g.loops) == list(g_old.loops) and events == events_old


def test_first_conflict_finds_the_first_bad_loop():
    mk = lambda i, m: Loop.make(f"L{i}", m, "a")
    loops = [mk(0, ["a", "b", "c"]), mk(1, ["a"]), mk(2, ["d"]), mk(3, ["c", "d"]), mk(4, ["d"])]
    assert first_conflict(loops) == 3
    assert first_conflict(loops[:3]) is None
    assert first_conflict([mk(0, ["a"]), mk(1, ["a"])]) == 1


def test_new_id_counts_without_building_the_set():
    g = from_dict(random_kernel(3, n=20, loops=2, ids=False))
    for prefix in ("e", "loop", "n", "x"):
        assert g.new_id(prefix) == ref.old_new_id(g, prefix)
    g2 = KernelGraph()
    assert g2.new_id("i") == "i1"


def test_loops_that_skip_instructions_make_the_same_cycle_error():
    """A loop {n0, n2} with n0 -> n1 -> n2 outside it collapses to a cycle."""
    data = random_kernel(1, n=3, loops=0)
    data["edges"] = [{"from": "n0", "to": "n1", "kind": "ilp"}, {"from": "n1", "to": "n2", "kind": "ilp"},
                     {"from": "n2", "to": "n0", "kind": "branch", "latency": 3}]
    data["loops"] = [{"id": "L", "iterations": "a", "members": ["n0", "n2"]}]
    g = from_dict(data)
    assert _outcome(analyze, g)[1] == _outcome(ref.old_analyze, g)[1]
    assert "cycle outside a loop" in _outcome(analyze, g)[1][1]
