"""The latency bound in symbolic form: the max of linear forms in the loops' iteration counts
(Volkov §3.7; Gajger §4.4.2).

Loops follow Gajger eq. 5.1 (latency bound = 942 + 24a for saxpy2): a loop contributes
``iterations × per-iteration critical path``. Because iteration counts are expressions, the
bound is a set of linear forms ``c0 + Σ c_k · Π iterations`` (one per path that can be
critical for some values of the variables; dominated forms are pruned, iteration counts being
>= 0; loops with the same iteration expression share a term). :func:`symbolic_forms` computes them
over the collapsed regions of :mod:`gpumodeler.core.kernel.loop_regions`; when more than
``max_forms`` candidate forms arise at some instruction, or the dominance comparisons run past
a budget of ``work_per_node`` per instruction, it gives up. :mod:`gpumodeler.core.kernel.latency_bound` sets both
(``MAX_FORMS``, ``WORK_PER_NODE``) and then evaluates the bound by its exact numeric pass.
"""
from __future__ import annotations

from gpumodeler.core.kernel.loop_regions import sink_positions

# A linear form is (constant, ((monomial, coefficient), ...)): a monomial is a sorted tuple of
# iteration-expression texts (a product of iteration counts), monomials are sorted.
_ZERO = (0.0, ())
_NO_TERMS = _ZERO[1]


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
    terms, other = forms[0][1], None
    for f in forms:
        t = f[1]
        if t is not terms:
            if other is None:
                other = t
            elif t is not other:
                break
    else:  # the usual cases: one or two sets of terms (e.g. the path starting here)
        if other is None or other == terms:
            return _prune_constants(forms, max_forms, budget)
        return _prune_two(forms, terms, other, max_forms, budget)
    unique = list(dict.fromkeys(forms))
    if len(unique) == 1:
        return unique
    if budget is not None:
        budget[0] -= len(unique) * len(unique)
        if budget[0] < 0:
            raise _TooManyForms
    # Of forms with the same terms only the one with the largest constant can be kept (it
    # dominates the others), and it is dominated iff another such form dominates it
    # (dominance is transitive): compare those pairwise, in the order of ``unique``.
    top: dict = {}
    for i, f in enumerate(unique):
        j = top.get(f[1])
        if j is None or unique[j][0] < f[0]:
            top[f[1]] = i
    reps = [unique[i] for i in sorted(top.values())]
    if len(reps) > 1:
        coefs = [dict(f[1]) for f in reps]
        reps = [f for i, f in enumerate(reps)
                if not any(j != i and g[0] >= f[0] and _covers(coefs[j], f[1])
                           for j, g in enumerate(reps))]
    if len(reps) > max_forms:
        raise _TooManyForms
    return reps


def _covers(coefs: dict, terms) -> bool:
    """Every coefficient of ``terms`` is at most the one in ``coefs`` (see _dominates)."""
    for m, c in terms:
        if coefs.get(m, 0.0) < c:
            return False
    return True


def _prune_constants(forms, max_forms, budget):
    """:func:`_prune` of forms sharing one terms tuple: the same result, the same comparisons
    charged to the budget, without comparing them pairwise. Constants are finite (latencies
    are), so of distinct ones exactly the largest is not dominated."""
    distinct = len({f[0] for f in forms})
    if distinct == 1:
        return [forms[0]]
    if budget is not None:
        budget[0] -= distinct * distinct
        if budget[0] < 0:
            raise _TooManyForms
    if max_forms < 1:
        raise _TooManyForms
    return [max(forms, key=_constant)]


def _prune_two(forms, terms, other, max_forms, budget):
    """:func:`_prune` of forms with two different terms tuples (every form's is one of the two
    objects): the same result and budget, comparing only the largest form of each."""
    first = [f for f in forms if f[1] is terms]
    second = [f for f in forms if f[1] is other]
    distinct = len({f[0] for f in first}) + len({f[0] for f in second})
    if budget is not None:
        budget[0] -= distinct * distinct
        if budget[0] < 0:
            raise _TooManyForms
    a, b = max(first, key=_constant), max(second, key=_constant)
    if forms.index(b) < forms.index(a):  # keep the order of first appearance
        a, b = b, a
    keep_a = not (b[0] >= a[0] and _covers(dict(b[1]), a[1]))
    keep_b = not (a[0] >= b[0] and _covers(dict(a[1]), b[1]))
    kept = [f for f, keep in ((a, keep_a), (b, keep_b)) if keep]
    if len(kept) > max_forms:
        raise _TooManyForms
    return kept


def _prune_simple(consts, terms, starts: bool, max_forms, budget):
    """``_prune([_ZERO] * starts + [(c, terms) for c in consts], ...)`` without building the
    candidates (``consts`` is not empty)."""
    if not starts or terms is _ZERO[1]:  # one set of terms
        if starts:
            consts = [0.0] + consts
        if len(consts) == 1:
            return [(consts[0], terms)]
        distinct = len(set(consts))
        if distinct == 1:
            return [(consts[0], terms)]
        if budget is not None:
            budget[0] -= distinct * distinct
            if budget[0] < 0:
                raise _TooManyForms
        if max_forms < 1:
            raise _TooManyForms
        return [(max(consts), terms)]
    if terms == _ZERO[1]:  # an empty terms tuple that is another object
        return _prune([_ZERO] + [(c, terms) for c in consts], max_forms, budget)
    # _ZERO (first) and the largest (c, terms): see _prune_two
    distinct = 1 + len(set(consts))
    if budget is not None:
        budget[0] -= distinct * distinct
        if budget[0] < 0:
            raise _TooManyForms
    top = max(consts)
    kept = []
    if not top >= 0.0:  # else (top, terms) dominates _ZERO, which has no terms
        kept.append(_ZERO)
    if not (0.0 >= top and _covers({}, terms)):
        kept.append((top, terms))
    if len(kept) > max_forms:
        raise _TooManyForms
    return kept


def _constant(form):
    return form[0]


def symbolic_forms(regions, loop_order, iterations, max_forms, work_per_node):
    """Pareto sets of linear forms (see module docstring); (None, {}) when they grow too big.

    ``max_forms`` and ``work_per_node`` are latency_bound's MAX_FORMS and WORK_PER_NODE."""
    budget = [work_per_node * sum(len(r.topo) for r in regions.values()) + 10_000]

    def longest(region, loop_weight, source=None):
        """Each position's forms, as a function of the position; with ``source`` (a
        position) only that node may start a path.

        Most nodes have one form: it is kept as two numbers' worth, its constant in
        ``consts`` and its terms in ``terms_of`` (the same object as its predecessor's, so
        that "same terms" is an identity test); a node with none or several has None there
        and its list of forms in ``many``."""
        consts_of: list = []
        terms_of: list = []
        many: dict = {}
        one_const, one_terms = consts_of.append, terms_of.append
        everywhere = source is None

        def forms_at(i):
            terms = terms_of[i]
            return many[i] if terms is None else [(consts_of[i], terms)]

        def keep(i, forms):
            if len(forms) == 1:
                one_const(forms[0][0])
                one_terms(forms[0][1])
            else:
                one_const(None)
                one_terms(None)
                many[i] = forms

        for n, preds in enumerate(region.ipreds):
            starts = everywhere or n == source
            if preds:  # the usual node: one form per predecessor, all with the same terms
                terms = None
                consts = []
                for pred, w, _ in preds:
                    t = terms_of[pred]
                    if t is None or w.__class__ is tuple:
                        break
                    if terms is None:
                        terms = t
                    elif t is not terms:
                        break
                    consts.append(consts_of[pred] + w)
                else:
                    if starts and terms is not _NO_TERMS:
                        if terms == _NO_TERMS:
                            keep(n, _prune_simple(consts, terms, True, max_forms, budget))
                            continue
                        # _prune_simple's last case, inline: _ZERO and the largest form
                        if len(consts) == 1:
                            distinct, top = 2, consts[0]
                        else:
                            distinct, top = 1 + len(set(consts)), max(consts)
                        budget[0] -= distinct * distinct
                        if budget[0] < 0:
                            raise _TooManyForms
                        covered = 0.0 >= top and _covers({}, terms)  # by _ZERO
                        if top >= 0.0 and not covered:  # the usual case: (top, terms) alone
                            if max_forms < 1:
                                raise _TooManyForms
                            one_const(top)
                            one_terms(terms)
                            continue
                        kept = [] if top >= 0.0 else [_ZERO]
                        if not covered:
                            kept.append((top, terms))
                        if len(kept) > max_forms:
                            raise _TooManyForms
                        keep(n, kept)
                        continue
                    # _prune_simple's first case, inline, with the path starting here
                    if starts:
                        consts.insert(0, 0.0)
                    if len(consts) == 1:
                        one_const(consts[0])
                        one_terms(terms)
                        continue
                    distinct = len(set(consts))
                    if distinct == 1:
                        one_const(consts[0])
                        one_terms(terms)
                        continue
                    budget[0] -= distinct * distinct
                    if budget[0] < 0 or max_forms < 1:
                        raise _TooManyForms
                    one_const(max(consts))
                    one_terms(terms)
                    continue
            cands = [_ZERO] if starts else []
            if preds:
                for pred, w, _ in preds:
                    forms = forms_at(pred)
                    if w.__class__ is tuple:
                        cands.extend(_add_forms(f, lw) for f in forms for lw in loop_weight[w[1]])
                    elif len(forms) == 1:
                        f = forms[0]
                        cands.append((f[0] + w, f[1]))  # _add_const
                    else:
                        cands.extend(_add_const(f, w) for f in forms)
            keep(n, _prune(cands, max_forms, budget))
        return forms_at

    def constant(region, source=None):
        """``longest`` of a region without loops in it, whose forms are all constants: a
        node's forms as its one constant (None: no form). The same pruning, in numbers:
        of distinct candidates only the largest is kept, charging the budget as _prune."""
        dist: list = []
        done = dist.append
        everywhere = source is None
        for n, preds in enumerate(region.ipreds):
            cands = [0.0] if everywhere or n == source else []
            for pred, w, _ in preds:
                d = dist[pred]
                if d is not None:
                    cands.append(d + w)
            if len(cands) > 1:
                distinct = len(set(cands))
                if distinct > 1:
                    budget[0] -= distinct * distinct
                    if budget[0] < 0 or max_forms < 1:
                        raise _TooManyForms
                    done(max(cands))
                    continue
            done(cands[0] if cands else None)
        return dist

    loop_weight, per_iteration = {}, {}
    try:
        for lid in loop_order:
            region = regions[lid]
            frontier = []
            if tuple not in set(map(type, region.topo)):  # no loop inside: constants only
                if region.carried:
                    index = region.index
                    for start, end, w, _ in region.carried:
                        d = constant(region, index[start])[index[end]]
                        if d is not None:
                            frontier.append((d + w, _NO_TERMS))
                else:
                    dist = constant(region)
                    frontier.extend((dist[n], _NO_TERMS) for n in sink_positions(region)
                                    if dist[n] is not None)
            elif region.carried:
                index = region.index
                for start, end, w, _ in region.carried:
                    frontier.extend(_add_const(f, w)
                                    for f in longest(region, loop_weight, index[start])(index[end]))
            else:
                forms_at = longest(region, loop_weight)
                for n in sink_positions(region):
                    frontier.extend(forms_at(n))
            frontier = _prune(frontier, max_forms) or [_ZERO]
            per_iteration[lid] = tuple(frontier)
            loop_weight[lid] = [_scale(f, iterations[lid].text) for f in frontier]
        top = []
        forms_at = longest(regions[None], loop_weight)
        for n in sink_positions(regions[None]):
            top.extend(forms_at(n))
        return tuple(_prune(top, max_forms, budget)), per_iteration
    except _TooManyForms:
        return None, {}
