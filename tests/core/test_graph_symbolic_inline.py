"""The symbolic pass's inline pruning of the usual node (core/kernel/latency_forms.py, for speed)
is the general pruning of every node's candidate forms: the same forms, and the same point at
which the work budget or the form limit makes it give up."""
from __future__ import annotations

import random

import pytest

import gpumodeler.core.kernel.latency_forms as lf
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.loop_regions import _sinks

from test_graph_linear import random_kernel


def naive_symbolic(regions, loop_order, iterations, max_forms, work_per_node):
    """symbolic_forms with every node's candidates pruned by the general lf._prune."""
    budget = [work_per_node * sum(len(r.topo) for r in regions.values()) + 10_000]

    def longest(region, loop_weight, sources=None):
        best = {}
        for n in region.topo:
            cands = [lf._ZERO] if sources is None or n in sources else []
            for pred, w, _ in region.preds.get(n, ()):
                if isinstance(w, tuple):
                    cands.extend(lf._add_forms(f, lw) for f in best[pred] for lw in loop_weight[w[1]])
                else:
                    cands.extend(lf._add_const(f, w) for f in best[pred])
            best[n] = lf._prune(cands, max_forms, budget)
        return best

    loop_weight, per_iteration = {}, {}
    try:
        for lid in loop_order:
            region = regions[lid]
            frontier = []
            if region.carried:
                for start, end, w, _ in region.carried:
                    frontier.extend(lf._add_const(f, w)
                                    for f in longest(region, loop_weight, {start}).get(end, []))
            else:
                best = longest(region, loop_weight)
                for n in _sinks(region):
                    frontier.extend(best[n])
            frontier = lf._prune(frontier, max_forms) or [lf._ZERO]
            per_iteration[lid] = tuple(frontier)
            loop_weight[lid] = [lf._scale(f, iterations[lid].text) for f in frontier]
        top = []
        best = longest(regions[None], loop_weight)
        for n in _sinks(regions[None]):
            top.extend(best[n])
        return tuple(lf._prune(top, max_forms, budget)), per_iteration, budget[0]
    except lf._TooManyForms:
        return None, {}, None


@pytest.mark.parametrize("seed", range(40))
def test_inline_pruning_is_the_general_pruning(seed):
    rng = random.Random(seed)
    g = from_dict(random_kernel(seed, n=rng.randint(20, 120), loops=rng.randint(0, 12),
                                latencies=seed % 2 == 0))
    bound = analyze(g)
    for max_forms, work in [(16, 40), (1, 40), (16, 0), (2, 1), (0, 40), (4, 3)]:
        got = lf.symbolic_forms(bound.regions, bound.loop_order, bound.iterations, max_forms, work)
        want = naive_symbolic(bound.regions, bound.loop_order, bound.iterations, max_forms, work)
        assert got == want[:2], (max_forms, work)


def _two_long_loops(n: int) -> dict:
    """A kernel whose instructions are nearly all in two long loops (bodies of constants)."""
    data = random_kernel(11, n=n, loops=0)
    names = [d["id"] for d in data["instructions"]]
    half, end = n // 2, n - 10
    data["loops"] = [{"id": "L0", "iterations": "a", "members": names[10:half]},
                     {"id": "L1", "iterations": "b", "members": names[half + 5:end]}]
    data["edges"] += [
        {"id": "back0", "from": names[half - 1], "to": names[10], "kind": "branch", "latency": 12},
        {"id": "back1", "from": names[end - 1], "to": names[half + 5], "kind": "branch",
         "latency": 12}]
    return data


@pytest.mark.parametrize("kernel, works", [
    (lambda: random_kernel(3, n=3000, loops=0), range(0, 12)),
    (lambda: random_kernel(3, n=3000, loops=3), range(40, 72, 3)),
    (lambda: _two_long_loops(8000), range(0, 5))])
def test_a_tight_budget_gives_up_at_the_same_point(kernel, works):
    """Budgets around what the pass needs: it gives up for the same ones (in the top level,
    and in loop bodies, whose forms are constants)."""
    g = from_dict(kernel())
    bound = analyze(g)
    outcomes = []
    for work in works:
        got = lf.symbolic_forms(bound.regions, bound.loop_order, bound.iterations, 16, work)
        want = naive_symbolic(bound.regions, bound.loop_order, bound.iterations, 16, work)
        assert got == want[:2], work
        outcomes.append(got[0] is None)
    assert True in outcomes and False in outcomes  # the boundary is among them
