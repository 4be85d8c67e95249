"""The latency bound in symbolic form: the max of linear forms in the loops' iteration counts
(Volkov §3.7; Gajger §4.4.2).

Loops follow Gajger eq. 5.1 (latency bound = 942 + 24a for saxpy2): a loop contributes
``iterations × per-iteration critical path``. Because iteration counts are expressions, the
bound is a set of linear forms ``c0 + Σ c_k · Π iterations`` (one per path that can be
critical for some values of the variables; dominated forms are pruned, iteration counts being
>= 0; loops with the same iteration expression share a term). :func:`_symbolic` computes them
over the collapsed regions of :mod:`gpumodeler.core.kernel.loop_regions`; when more than
``max_forms`` candidate forms arise at some instruction, or the dominance comparisons run past
a budget of ``work_per_node`` per instruction, it gives up. :mod:`gpumodeler.core.kernel.latency_bound` sets both
(``MAX_FORMS``, ``WORK_PER_NODE``) and then evaluates the bound by its exact numeric pass.
"""
from __future__ import annotations

from gpumodeler.core.kernel.loop_regions import _sinks

# A linear form is (constant, ((monomial, coefficient), ...)): a monomial is a sorted tuple of
# iteration-expression texts (a product of iteration counts), monomials are sorted.
_ZERO = (0.0, ())


class _TooManyForms(Exception):
    pass


def _add_const(form, c):
    return (form[0] + c, form[1])


def _add_forms(a, b):
    if not b[1]:
        return (a[0] + b[0], a[1])
    if not a[1]:
        return (a[0] + b[0], b[1])
    terms = dict(a[1])
    for m, c in b[1]:
        terms[m] = terms.get(m, 0.0) + c
    return (a[0] + b[0], tuple(sorted(terms.items())))


def _scale(form, factor: str):
    """form × (iteration expression ``factor``)."""
    terms = {}
    if form[0]:
        terms[(factor,)] = form[0]
    for m, c in form[1]:
        mono = tuple(sorted(m + (factor,)))
        terms[mono] = terms.get(mono, 0.0) + c
    return (0.0, tuple(sorted(terms.items())))


def _dominates(a, b) -> bool:
    """a >= b for every non-negative value of the iteration counts."""
    if a[0] < b[0]:
        return False
    ta = dict(a[1])
    return all(ta.get(m, 0.0) >= c for m, c in b[1])


def _prune(forms, max_forms, budget=None):
    """Drop dominated forms (and duplicates). ``budget`` is a one-element list counting the
    comparisons still allowed; running out (or keeping more than ``max_forms``) raises."""
    if len(forms) <= 1:
        return forms
    unique = list(dict.fromkeys(forms))
    if len(unique) == 1:
        return unique
    if budget is not None:
        budget[0] -= len(unique) * len(unique)
        if budget[0] < 0:
            raise _TooManyForms
    kept = [f for i, f in enumerate(unique)
            if not any(j != i and _dominates(g, f) for j, g in enumerate(unique))]
    if len(kept) > max_forms:
        raise _TooManyForms
    return kept


def _symbolic(regions, loop_order, iterations, max_forms, work_per_node):
    """Pareto sets of linear forms (see module docstring); (None, {}) when they grow too big.

    ``max_forms`` and ``work_per_node`` are latency_bound's MAX_FORMS and WORK_PER_NODE."""
    budget = [work_per_node * sum(len(r.topo) for r in regions.values()) + 10_000]

    def longest(region, loop_weight, sources=None):
        best: dict = {}
        for n in region.topo:
            cands = [_ZERO] if sources is None or n in sources else []
            for pred, w, _ in region.preds.get(n, ()):
                if isinstance(w, tuple):
                    cands.extend(_add_forms(f, lw) for f in best[pred] for lw in loop_weight[w[1]])
                else:
                    cands.extend(_add_const(f, w) for f in best[pred])
            best[n] = _prune(cands, max_forms, budget)
        return best

    loop_weight, per_iteration = {}, {}
    try:
        for lid in loop_order:
            region = regions[lid]
            frontier = []
            if region.carried:
                for start, end, w, _ in region.carried:
                    frontier.extend(_add_const(f, w) for f in longest(region, loop_weight, {start}).get(end, []))
            else:
                best = longest(region, loop_weight)
                for n in _sinks(region):
                    frontier.extend(best[n])
            frontier = _prune(frontier, max_forms) or [_ZERO]
            per_iteration[lid] = tuple(frontier)
            loop_weight[lid] = [_scale(f, iterations[lid].text) for f in frontier]
        top = []
        best = longest(regions[None], loop_weight)
        for n in _sinks(regions[None]):
            top.extend(best[n])
        return tuple(_prune(top, max_forms, budget)), per_iteration
    except _TooManyForms:
        return None, {}
