"""The timeline's input read into columns: each activity's fields checked (numbers finite and
non-negative, ids unique, dependencies and links known, no cycle) and its durations converted
exactly to the simulation's grid of whole picoseconds, rounded up (docs/timeline.md, "The
picosecond grid"; Gajger 2017 eq. 4.1 and eq. 5.5 give the durations converted here)."""
from __future__ import annotations

from fractions import Fraction
import itertools
import math
import operator

import numpy as np

from gpumodeler.core.errors import InvalidParameter

_FINITE = (int, float)


def exact(value, what: str, allow_none=False, positive=False) -> Fraction | None:
    """``value`` checked by :func:`number`, as an exact ``Fraction`` (None stays None)."""
    value = number(value, what, allow_none, positive)
    return None if value is None else Fraction(value)


def number(value, what, allow_none=False, positive=False):
    """``value`` checked — a number (not a bool), finite, >= 0 (> 0 when ``positive``) —
    and returned unconverted (no Fraction per activity: the simulation converts once, to
    integers). ``what``: the name of the value in a message."""
    if type(value) in _FINITE and (0 < value < math.inf or value == 0 and not positive):
        return value  # the common case, without building a message
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise InvalidParameter(f"{what} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidParameter(f"{what} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise InvalidParameter(f"{what} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return value


PS_PER_S = 10 ** 12  # the simulation's time grid: 1 ps


def ps(seconds) -> int:
    """Whole picoseconds of ``seconds`` (a checked number), rounded up, exactly."""
    p, q = seconds.as_integer_ratio()
    return -((-p * PS_PER_S) // q)


_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitting of a double into two halves of 26 bits


def ps_of_floats(seconds) -> list:
    """:func:`ps` of every float of the array ``seconds`` (finite, >= 0), in numpy where it
    is exact: Dekker's product (Dekker 1971, "A floating-point technique for extending the
    available precision", mul12) gives x·10^12 = p + err exactly; below 2^53 ps (2.5 hours)
    the ceiling of p + err is ceil(p), plus 1 when p is a whole number and err > 0 (the error
    is at most half a unit of p, so it crosses a whole number only from one). Values out of
    that range (below 10^-200 s but not 0, or from 9000 s) take :func:`ps` one by one."""
    original = seconds
    odd = ((seconds < 1e-200) & (seconds != 0)) | (seconds >= 9000.0)
    if odd.any():
        seconds = np.where(odd, 0.0, seconds)
    p = seconds * float(PS_PER_S)
    high = seconds * _SPLIT
    a_hi = high - (high - seconds)
    a_lo = seconds - a_hi
    high = float(PS_PER_S) * _SPLIT
    b_hi = high - (high - float(PS_PER_S))
    b_lo = float(PS_PER_S) - b_hi
    err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    whole = np.ceil(p)
    out = (whole + ((whole == p) & (err > 0))).astype(np.int64).tolist()
    for i in np.flatnonzero(odd).tolist():
        out[i] = ps(float(original[i]))
    return out


def check_activities(activities, capacities):
    """Every activity checked one at a time (ids, dependencies, links, bytes; the capacities
    as exact numbers), a dependency cycle named: (id -> index, link -> exact capacity)."""
    ids = {}
    for i, a in enumerate(activities):
        if not isinstance(a.id, str) or not a.id:
            raise InvalidParameter(f"activity {i + 1} has no id")
        if a.id in ids:
            raise InvalidParameter(f"two activities have the id {a.id!r}; ids must be unique")
        ids[a.id] = i
    caps = {k: exact(v, f"capacity of {k!r}", positive=True) for k, v in capacities.items()}
    forward = False  # a dependency on a later activity: then look for cycles
    for i, a in enumerate(activities):
        for d in a.after:
            j = ids.get(d)
            if j is None:
                raise InvalidParameter(f"{a.name or a.id}: depends on {d!r}, which is not a step of the "
                                       f"application (steps: {', '.join(ids)})")
            if j >= i:
                forward = True
        for link in a.links:
            if link not in caps:
                raise InvalidParameter(f"{a.name or a.id}: link {link!r} has no bandwidth "
                                       f"(known: {', '.join(caps) or 'none'})")
        b = a.bytes
        if type(b) not in _FINITE or not 0 <= b < math.inf:
            b = number(b, f"{a.name or a.id}: bytes")
        if b and not a.links and a.rate_cap is None:
            raise InvalidParameter(f"{a.name or a.id}: a copy of {a.bytes} bytes needs a link or a rate cap")
    if not forward:  # every dependency on an earlier activity: program order is topological
        return ids, caps
    # cycles in 'after' would deadlock: find one and name it
    state = {}
    for start in ids:
        stack = [(start, iter(activities[ids[start]].after))]
        if state.get(start):
            continue
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = [n for n, _ in stack][[n for n, _ in stack].index(nxt):] + [nxt]
                raise InvalidParameter("the dependencies form a cycle: " + " -> ".join(cycle))
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(activities[ids[nxt]].after)))
    return ids, caps


_ENGINES = operator.attrgetter("engines")
_LINKS = operator.attrgetter("links")


def fast_columns(activities, capacities):
    """The columns the simulation needs — ids, index, capacities, the number of dependencies
    of each activity and all of them (indices, flat), engines, links, fixed durations (whole
    ps), rate caps, bytes, names (the id where there is none), the distinct pairs (engines,
    links) and the indices of the copies (bytes not 0) — read in one go (each
    field of every activity through C, the checks on sets of types and of distinct values),
    or None when anything is unusual (not a plain float, a dependency on a later step, an
    id, link or dependency unknown, ...): then :func:`checked_columns` reads them one
    activity at a time and raises the error the plain reading raises, at the same activity."""
    n = len(activities)
    if not n:
        return None
    # (one field of every activity at a time, in a comprehension, whose attribute reads are
    # specialised: faster than reading every field of an activity at once and transposing
    # 10^5 rows, and than a getter mapped over them)
    ids = [a.id for a in activities]
    afters = [a.after for a in activities]
    engs = [a.engines for a in activities]
    lnks = [a.links for a in activities]
    fixed_s = [a.fixed_s for a in activities]
    nbytes = [a.bytes for a in activities]
    rcaps = [a.rate_cap for a in activities]
    names = [a.name for a in activities]
    try:
        "".join(ids)  # (every id a string, the check the plain reading makes)
    except TypeError:
        return None
    if operator.countOf(map(type, fixed_s), float) != n \
            or not set(map(type, rcaps)) <= {float, type(None)} or not set(map(type, nbytes)) <= {float, int}:
        return None
    index = dict(zip(ids, range(n)))
    if len(index) != n or "" in index:
        return None
    for v in capacities.values():
        if type(v) not in _FINITE or not 0 < v < math.inf:
            return None
    try:
        position = index.__getitem__
        dep_flat = list(map(position, itertools.chain.from_iterable(afters)))
        if set(map(type, engs)) != {tuple}:
            engs = tuple(map(tuple, engs))
        if set(map(type, lnks)) != {tuple}:
            lnks = tuple(map(tuple, lnks))
        pairs = set(zip(engs, lnks))
        amounts = np.array(nbytes, dtype=np.float64)
    except (KeyError, TypeError, OverflowError):
        return None
    if not set().union(*[ls for _es, ls in pairs]) <= capacities.keys():
        return None
    if not bool(((amounts >= 0) & (amounts < math.inf)).all()):
        return None
    copies = np.flatnonzero(amounts).tolist()
    if None in rcaps and None in map(rcaps.__getitem__, copies):  # a copy without a rate cap needs a link
        if not all(lnks[i] for i in copies if rcaps[i] is None):
            return None
    seconds = np.array(fixed_s, dtype=np.float64)
    if not bool(((seconds >= 0) & (seconds < math.inf)).all()):
        return None
    fixed = ps_of_floats(seconds)
    for c in set(rcaps):
        if c is not None and not 0.0 < c < math.inf:
            return None
    if not all(names):  # (a step without a name is shown by its id)
        names = tuple(x or y for x, y in zip(names, ids))
    return (ids, index, dict(capacities), list(map(len, afters)), dep_flat, engs, lnks, fixed, rcaps, nbytes, names,
            pairs, copies)


def checked_columns(activities, capacities):
    """The columns of :func:`fast_columns`, read one activity at a time with every check
    (:func:`check_activities`, then each duration and rate cap in program order)."""
    index, caps = check_activities(activities, capacities)
    fixed, cap_in = [], []
    for a in activities:
        x = a.fixed_s
        if type(x) is not float or not 0.0 <= x < math.inf:
            x = number(x, f"{a.name or a.id}: duration")
        fixed.append(ps(x))
        c = a.rate_cap
        if c is not None and (type(c) is not float or not 0.0 < c < math.inf):
            c = number(c, f"{a.name or a.id}: bandwidth", positive=True)
        cap_in.append(c)
    position = index.__getitem__
    deps = [tuple(map(position, a.after)) for a in activities]
    return ([a.id for a in activities], index, caps, list(map(len, deps)), list(itertools.chain.from_iterable(deps)),
            [tuple(a.engines) for a in activities],
            [tuple(a.links) for a in activities], fixed, cap_in, [a.bytes for a in activities],
            [a.name or a.id for a in activities],
            set(zip(map(tuple, map(_ENGINES, activities)), map(tuple, map(_LINKS, activities)))),
            [i for i, a in enumerate(activities) if a.bytes])
