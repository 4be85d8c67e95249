"""Timeline simulation of an application on a system: kernels and copies on engines, copies
sharing link bandwidth, dependencies, on an integer picosecond grid (docs/timeline.md).

MERPSYS (the simulator gpumodeler replaces) simulated applications as sequences of
computations and communications on the devices of a system (Gajger 2017 ch. 3, 5); here the
durations come from the Gajger/Volkov model (kernels: eq. 4.1; copies: eq. 5.5,
``T = t_s + n / (bw × λ)``) and the simulation adds what one launch at a time cannot show:
overlap of copy and compute on different engines, copies sharing a link, and waiting.

Rules (each tested in ``tests/core/test_timeline.py`` on hand-computed cases):

* **Activities** are given in program order. One may start once every activity in its
  ``after`` has ended (streams are expressed as ``after`` = the previous step of the stream).
* **Engines are exclusive.** An activity holds each engine it names from its start to its
  end; an engine runs one activity at a time. Two queueing policies:

  - ``in-order`` (the default): each engine takes its activities in program order, like one
    hardware queue per engine (the GPUs before Hyper-Q; on later GPUs, work issued
    breadth-first across streams). An activity starts when its dependencies have ended and
    every earlier activity on its engines has started and its engines are free. With
    durations that do not depend on the schedule, each start is then the longest path to it
    through dependencies and engine order, so adding a dependency or slowing a step can never
    shorten the makespan (no Graham anomaly).
  - ``greedy``: when engines free up, ready activities start in program order, each as soon
    as all its engines are free, so a later ready activity may overtake an earlier one that
    still waits (independent queues, Hyper-Q). Better packing, but a list schedule: adding a
    dependency can shorten it (Graham's anomalies).

  Bandwidth sharing (below) makes durations depend on the schedule, and then no policy is
  monotone: delaying a competing copy leaves more bandwidth to a critical one (a documented
  case in the tests).
* **A copy** is a fixed phase (its startup time ``t_s``: the engine is held, no bandwidth is
  used) followed by a data phase moving ``bytes`` through the bandwidth resources it names
  (``links``, e.g. one direction of a PCIe link, or a host's PCIe root). While data phases
  overlap, each resource's capacity is shared max-min fairly (progressive filling) among the
  copies crossing it, and no copy exceeds its own ``rate_cap`` (the bandwidth × λ it reaches
  alone); rates are recomputed whenever a copy starts or ends. Alone on its path a copy takes
  exactly ``t_s + n / min(rate_cap, capacities)`` — eq. 5.5 when the capacity is bw × λ.
* **A kernel** is a fixed phase only (its predicted time). Kernels on one GPU share its
  compute engine, so they run one at a time; a kernel marked concurrent names no engine
  and runs alongside (without slowing the others: the model has no contention between
  concurrent kernels, a documented simplification).
* **A picosecond grid.** Every duration that enters the simulation — a kernel's time, a
  copy's startup, a copy's data phase — is converted once to whole picoseconds, rounding up
  (a step never takes less than its model time), bytes to whole bytes (rounded up), and every
  event time is then a Python ``int``: sums, ties and comparisons are exact and
  deterministic, and the cost of an event does not grow with the trace. While copies share
  bandwidth, the work left of each data phase is an exact integer (bytes × 10^12 × 2^k, in
  units of one rate quantum 2^-k B/s times 1 ps; rates are integers of that quantum, the
  fair shares of progressive filling rounded down, k chosen so every capacity and rate cap
  is a whole number of quanta and the smallest holds at least 2^50 of them); each finish time
  is rounded up to the grid. The rounding adds less than 1 ps per event on a step's chain of
  events (a shared rate is at most 2^-50 of itself low, far below that), so a timeline is
  within (number of events) ps of the exact one; results are converted to float seconds once,
  at the end. ``tests/core/test_timeline_event_driven.py`` checks the bound against the exact
  rational algorithm on random applications.

The critical path is traced back from the activity that ends last: each activity's start is
explained by the dependency that ended last before it (when a dependency ended exactly then),
otherwise by the activity that released the engine it waited for; a step started at time 0 or
immediately when ready ends the chain.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from fractions import Fraction
import heapq
import itertools
import math
import operator
from typing import NamedTuple

import numpy as np

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.kernel.collector import collector_paused


@dataclass(frozen=True)
class Activity:
    """One step to simulate. ``engines``: engine ids it holds while it runs (e.g.
    ``"gpu1/compute"``, ``"gpu1/copy-htod"``). ``after``: ids that must end first.
    ``fixed_s``: the fixed part of its duration (a kernel's time, a copy's startup).
    ``bytes``: data moved after the fixed part through ``links`` (bandwidth resource ids,
    capacities given to :func:`simulate`), at most ``rate_cap`` bytes/s."""

    id: str
    name: str = ""
    engines: tuple = ()
    after: tuple = ()
    fixed_s: float = 0.0
    bytes: float = 0.0
    links: tuple = ()
    rate_cap: float | None = None


class ScheduledActivity(NamedTuple):
    """One simulated step (a named tuple: 10^5 of them are made in a large application)."""

    id: str
    name: str
    engines: tuple
    links: tuple
    start_s: float
    end_s: float
    ready_s: float  # when its dependencies had all ended (start - ready = time queued for an engine)
    cause: str | None  # the activity whose end let it start (None: started when ready at t=0)

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class Timeline:
    activities: tuple  # ScheduledActivity, in program order
    makespan_s: float
    critical_path: tuple  # activity ids, first to last
    busy_s: dict  # engine or link id -> seconds busy
    busy_fraction: dict  # engine or link id -> busy seconds / makespan (0 for a zero makespan)
    # (activities, ids, start_s, end_s): the simulation's columns, for readers in bulk (the
    # energy); valid only while ``activities`` is that very tuple (see :func:`columns_of`)
    columns: tuple | None = field(default=None, compare=False, repr=False)

    def by_id(self) -> dict:
        return {a.id: a for a in self.activities}


def columns_of(timeline) -> tuple:
    """(ids, start_s, end_s) of the timeline's activities, as lists: the simulation's own
    when it made them for these activities, else read from them."""
    columns = getattr(timeline, "columns", None)
    if columns is not None and columns[0] is timeline.activities:
        return columns[1:]
    acts = timeline.activities
    return ([a.id for a in acts], [a.start_s for a in acts], [a.end_s for a in acts])


_FINITE = (int, float)


def _exact(value, what: str, allow_none=False, positive=False) -> Fraction | None:
    """``value`` checked by :func:`_number`, as an exact ``Fraction`` (None stays None)."""
    value = _number(value, what, allow_none, positive)
    return None if value is None else Fraction(value)


def _number(value, what, allow_none=False, positive=False):
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
RATE_BITS = 50  # the smallest capacity or rate cap holds at least 2**RATE_BITS rate quanta


def _ps(seconds) -> int:
    """Whole picoseconds of ``seconds`` (a checked number), rounded up, exactly."""
    p, q = seconds.as_integer_ratio()
    return -((-p * PS_PER_S) // q)


_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitting of a double into two halves of 26 bits


def _ps_of_floats(seconds) -> list:
    """:func:`_ps` of every float of the array ``seconds`` (finite, >= 0), in numpy where it
    is exact: Dekker's product (Dekker 1971, "A floating-point technique for extending the
    available precision", mul12) gives x·10^12 = p + err exactly; below 2^53 ps (2.5 hours)
    the ceiling of p + err is ceil(p), plus 1 when p is a whole number and err > 0 (the error
    is at most half a unit of p, so it crosses a whole number only from one). Values out of
    that range (below 10^-200 s but not 0, or from 9000 s) take :func:`_ps` one by one."""
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
    ps = (whole + ((whole == p) & (err > 0))).astype(np.int64).tolist()
    for i in np.flatnonzero(odd).tolist():
        ps[i] = _ps(float(original[i]))
    return ps


def _rate_quantum_bits(rates) -> int:
    """k such that every rate (bytes/s) is a whole number of quanta of 2^-k B/s when its
    denominator is a power of two (every float), and the smallest rate holds at least
    2**RATE_BITS quanta, so rounding a fair share down to a quantum changes it by less than
    2^-50 of itself."""
    k = 0
    for r in rates:
        p, q = r.as_integer_ratio()
        k = max(k, q.bit_length() - 1, RATE_BITS + 1 - (p.bit_length() - q.bit_length()))
    return k


def _check(activities, capacities):
    ids = {}
    for i, a in enumerate(activities):
        if not isinstance(a.id, str) or not a.id:
            raise InvalidParameter(f"activity {i + 1} has no id")
        if a.id in ids:
            raise InvalidParameter(f"two activities have the id {a.id!r}; ids must be unique")
        ids[a.id] = i
    caps = {k: _exact(v, f"capacity of {k!r}", positive=True) for k, v in capacities.items()}
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
            b = _number(b, f"{a.name or a.id}: bytes")
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


def fair_rates(flows: dict, capacities: dict, divide=operator.truediv) -> dict:
    """Max-min fair rates by progressive filling. ``flows``: id -> (links, cap or None);
    ``capacities``: link -> capacity. Exact when given Fractions; with integers and
    ``divide=operator.floordiv`` every share is rounded down to a whole unit (so no link is
    ever over its capacity), as the simulation's integer rates are."""
    users: dict = {}  # link -> flows not yet frozen that cross it
    for links, _cap in flows.values():
        for link in links:
            users[link] = users.get(link, 0) + 1
    remaining = {link: capacities[link] for link in users}
    rates = {}
    unfrozen = list(flows.items())
    while unfrozen:
        # the level of this round: the smallest equal share of a link, or a smaller cap
        share = {link: divide(remaining[link], n) for link, n in users.items() if n}
        level = min(share.values(), default=None)
        for _f, (_links, cap) in unfrozen:
            if cap is not None and (level is None or cap < level):
                level = cap
        if level is None:
            raise InvalidParameter("a copy has neither a link nor a rate cap")
        # flows limited at the level (by their cap or one of their links) are frozen there
        keep = []
        for item in unfrozen:
            f, (links, cap) = item
            if cap == level or any(share[link] == level for link in links):
                rates[f] = level
                for link in links:
                    remaining[link] -= level
                    users[link] -= 1
            else:
                keep.append(item)
        unfrozen = keep
    return rates


def _integer_fair_rates(active, links, caps, capacities, users, load) -> dict:
    """:func:`fair_rates` with ``divide=operator.floordiv``, for the simulation's integer
    rates: the same allocation (a test compares them), in fewer steps, since it runs at every
    start and end of a data phase. ``active``: flow indices; ``links``/``caps``: per index;
    ``capacities``: link -> integer capacity; ``users``/``load``: link -> the active flows
    crossing it / the sum of their caps (an uncapped flow counts more than the capacity),
    kept up to date by the caller. When the caps fit on every link, every flow runs at its
    cap (the max-min fair allocation); otherwise progressive filling, one level per round."""
    # the caps-fit test and the first round in one pass over the links in use
    fits = True
    level = None
    tight = []  # the links whose equal share is the level
    for link, n in users.items():
        capacity = capacities[link]
        if fits and load[link] > capacity:
            fits = False
        share = capacity // n
        if level is None or share < level:
            level = share
            tight = [link]
        elif share == level:
            tight.append(link)
    if fits:
        return {i: caps[i] for i in active}
    for i in active:
        c = caps[i]
        if c is not None and (level is None or c < level):
            level = c
            tight = []
    # often every flow is frozen in the first round: all cross one tight link, or each is
    # at its cap or crosses one
    everyone = len(active)
    for link in tight:
        if users[link] == everyone:
            return dict.fromkeys(active, level)
    tight_set = set(tight)
    for i in active:
        if caps[i] != level and tight_set.isdisjoint(links[i]):
            break
    else:
        return dict.fromkeys(active, level)
    users = dict(users)
    remaining = {link: capacities[link] for link in users}
    rates = {}
    unfrozen = list(active)
    while unfrozen:
        level = None
        for link, n in users.items():
            if n:
                share = remaining[link] // n
                if level is None or share < level:
                    level = share
        for i in unfrozen:
            c = caps[i]
            if c is not None and (level is None or c < level):
                level = c
        if level is None:
            raise InvalidParameter("a copy has neither a link nor a rate cap")
        tight_now = {link for link, n in users.items() if n and remaining[link] // n == level}
        frozen = [i for i in unfrozen if caps[i] == level or not tight_now.isdisjoint(links[i])]
        for i in frozen:
            rates[i] = level
        if len(frozen) == len(unfrozen):
            break
        for i in frozen:
            for link in links[i]:
                remaining[link] -= level
                users[link] -= 1
        frozen_set = set(frozen)
        unfrozen = [i for i in unfrozen if i not in frozen_set]
    return rates


POLICIES = ("in-order", "greedy")




def simulate(activities, capacities: dict | None = None, policy: str = "in-order") -> Timeline:
    """Simulate ``activities`` (program order) with link ``capacities`` (bytes/s per
    bandwidth resource id) under an engine queueing ``policy`` (see the module docstring).
    See :func:`_simulate` for the method."""
    # the collector paused: about ten short-lived containers per step, no cycles to free
    with collector_paused():
        return _simulate(activities, capacities, policy)


_NAME = operator.attrgetter("name")
_FIELDS = operator.attrgetter("id", "after", "engines", "links", "fixed_s", "bytes", "rate_cap")


def _fast_columns(activities, capacities):
    """The columns the simulation needs — ids, index, capacities, the number of dependencies
    of each activity and all of them (indices, flat), engines, links, fixed durations (whole
    ps), rate caps and bytes — read in one go (each
    field of every activity through C, the checks on sets of types and of distinct values),
    or None when anything is unusual (not a plain float, a dependency on a later step, an
    id, link or dependency unknown, ...): then :func:`_checked_columns` reads them one
    activity at a time and raises the error the plain reading raises, at the same activity."""
    n = len(activities)
    if not n:
        return None
    ids, afters, engs, lnks, fixed_s, nbytes, rcaps = zip(*map(_FIELDS, activities))
    if set(map(type, ids)) != {str} or set(map(type, fixed_s)) != {float} \
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
        if not set().union(*lnks) <= capacities.keys():
            return None
    except (KeyError, TypeError):
        return None
    for i in [i for i, b in enumerate(nbytes) if b]:  # the copies
        if not 0 <= nbytes[i] < math.inf or (not lnks[i] and rcaps[i] is None):
            return None
    seconds = np.array(fixed_s, dtype=np.float64)
    if not bool(((seconds >= 0) & (seconds < math.inf)).all()):
        return None
    fixed = _ps_of_floats(seconds)
    for c in set(rcaps):
        if c is not None and not 0.0 < c < math.inf:
            return None
    if set(map(type, engs)) != {tuple}:
        engs = tuple(map(tuple, engs))
    if set(map(type, lnks)) != {tuple}:
        lnks = tuple(map(tuple, lnks))
    return ids, index, dict(capacities), list(map(len, afters)), dep_flat, engs, lnks, fixed, list(rcaps), nbytes


def _checked_columns(activities, capacities):
    """The columns of :func:`_fast_columns`, read one activity at a time with every check
    (:func:`_check`, then each duration and rate cap in program order)."""
    index, caps = _check(activities, capacities)
    fixed, cap_in = [], []
    for a in activities:
        x = a.fixed_s
        if type(x) is not float or not 0.0 <= x < math.inf:
            x = _number(x, f"{a.name or a.id}: duration")
        fixed.append(_ps(x))
        c = a.rate_cap
        if c is not None and (type(c) is not float or not 0.0 < c < math.inf):
            c = _number(c, f"{a.name or a.id}: bandwidth", positive=True)
        cap_in.append(c)
    position = index.__getitem__
    deps = [tuple(map(position, a.after)) for a in activities]
    return ([a.id for a in activities], index, caps, list(map(len, deps)), list(itertools.chain.from_iterable(deps)),
            [tuple(a.engines) for a in activities],
            [tuple(a.links) for a in activities], fixed, cap_in, [a.bytes for a in activities])


def _groups(key, member, size: int) -> list:
    """For each key 0..size-1 the list of the members paired with it, in the order given
    (``key``, ``member``: integer arrays of the pairs)."""
    order = np.argsort(key, kind="stable")
    members = member[order].tolist()
    bounds = [0, *np.cumsum(np.bincount(key, minlength=size)).tolist()]
    return [members[a:b] for a, b in zip(bounds, bounds[1:])]


def _simulate(activities, capacities: dict | None = None, policy: str = "in-order") -> Timeline:
    """Simulate ``activities`` (program order) with link ``capacities`` (bytes/s per
    bandwidth resource id) under an engine queueing ``policy`` (see the module docstring).

    Event-driven in O(n log n) for n activities (plus the max-min sharing among the copies
    in their data phase at once): a heap of phase ends, per-engine queues, and a set of the
    activities whose start conditions changed, visited in program order in passes exactly as
    a full rescan would visit them; busy time is summed per resource when it is taken and
    released, not per event. For speed (10^5 steps): the fields are read once into columns,
    engines are numbered, the event loop visits a step without a call (only a step's end,
    and the start of a data phase, are functions), a step's cause is kept as its index, and
    the results are converted in bulk (:func:`_grid_timeline`)."""
    if policy not in POLICIES:
        raise InvalidParameter(f"engine policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    activities = list(activities)
    capacities = capacities or {}
    columns = _fast_columns(activities, capacities)
    checked = columns is None
    if checked:
        columns = _checked_columns(activities, capacities)
    ids, index, caps, dep_count, dep_flat, engine_names, links, fixed, cap_in, nbytes = columns
    n = len(activities)
    in_order = policy == "in-order"
    WAITING, FIXED, DATA, DONE = 0, 1, 2, 3
    # each activity's dependents, in program order (with repetitions)
    owner = np.repeat(np.arange(n, dtype=np.int64), np.array(dep_count, dtype=np.int64))
    flat = np.array(dep_flat, dtype=np.int64)
    if not checked and bool((flat >= owner).any()):
        _check(activities, capacities)  # a dependency on a later step: look for a cycle
    dependents = _groups(flat, owner, n)
    # engines numbered; per step a tuple of engine numbers, per engine its steps in order
    number: dict = {}
    for es in set(engine_names):
        for e in es:
            number.setdefault(e, len(number))
    numbered = {es: tuple(number[e] for e in es) for es in set(engine_names)}
    engines = list(map(numbered.__getitem__, engine_names))
    queue = _groups(np.array(list(itertools.chain.from_iterable(engines)), dtype=np.int64),
                    np.repeat(np.arange(n, dtype=np.int64), np.array(list(map(len, engines)), dtype=np.int64)),
                    len(number))  # engine -> activity indices using it, program order
    missing = list(dep_count)  # dependencies not yet ended (with repetitions)
    # the integer grid: rates in whole quanta of 2^-k B/s, the work of a data phase in
    # quanta x ps (whole bytes, rounded up)
    qbits = _rate_quantum_bits(set(caps.values()) | {c for c in set(cap_in) if c is not None})

    def quanta(rate):
        p, q = rate.as_integer_ratio()
        return (p << qbits) // q

    work_per_byte = PS_PER_S << qbits
    in_quanta = {c: quanta(c) for c in set(cap_in) if c is not None}
    in_quanta[None] = None
    rate_cap = list(map(in_quanta.__getitem__, cap_in))
    caps = {link: quanta(c) for link, c in caps.items()}
    head = [0] * len(number)  # engine -> position of the first activity not yet started
    waiting_on: list[set] = [set() for _ in number]  # engine -> ready activities not yet started (greedy)
    holder = [-1] * len(number)  # engine -> the activity holding it (-1: free)
    released_t = [-1] * len(number)  # engine -> time of its last release
    released_i = [-1] * len(number)  # engine -> the activity released then
    busy_e = [0] * len(number)

    t = 0
    heappush, heappop = heapq.heappush, heapq.heappop
    phase = bytearray(n)  # WAITING -> FIXED -> DATA -> DONE
    start: list = [None] * n
    end: list = [None] * n
    ready: list = [None] * n
    cause: list = [n] * n  # index of the activity whose end let it start (n: none)
    # the dependency that ended last so far (the latest in program order on a tie), and when:
    # once all have ended, what explains the start if it starts when ready
    decider: list = [None] * n
    latest: list = [-1] * n
    busy_l: dict = dict.fromkeys(set().union(*links), 0)  # every link in use by a step
    link_users: dict = {}  # link -> data phases crossing it now (links in use only)
    link_load: dict = {}  # link -> sum of the rate caps of those (an uncapped one: capacity + 1)
    link_since: dict = {}  # link -> when its current busy period began
    # heap of the ends of fixed phases, each (end << shift) | activity index: an int
    # ordered as the pair (end, index), cheaper than a tuple
    fixed_ends: list = []
    shift = n.bit_length()
    low = (1 << shift) - 1
    alone: list = [None] * n  # a data phase's rate alone on its path: min(rate cap, capacities)
    sharing = [0]  # links crossed by two data phases or more: max-min sharing needed
    data: dict = {}  # activity index in its data phase -> work left (as of its since[i])
    rate_of: list = [None] * n  # a data phase's rate since since[i] (None: not yet given)
    since: list = [0] * n
    data_end: list = [0] * n  # when a data phase ends at its rate, rounded up to the grid
    rates_stale = False  # a data phase began or ended: the rates are given again
    done_count = 0
    # activities whose start conditions changed: visited in program order, in passes
    pending: list = []  # this pass (heap)
    later: set = set()  # the next pass
    pos = -1  # program-order position of the pass under way

    # (the two functions below take what they use as default arguments: local variables,
    # faster than a closure's cells, here and in the loop)
    def finish(i, t, pos, phase=phase, data=data, rate_cap=rate_cap, links=links, link_users=link_users,
               link_load=link_load, busy_l=busy_l, link_since=link_since, caps=caps, sharing=sharing,
               end=end, engines=engines, start=start, holder=holder, released_t=released_t,
               released_i=released_i, busy_e=busy_e, in_order=in_order, head=head, queue=queue,
               ready=ready, pending=pending, later=later, heappush=heappush, dependents=dependents,
               latest=latest, decider=decider, missing=missing, waiting_on=waiting_on):
        """End activity ``i`` at ``t`` (``pos``: the pass's position); True when it ended a
        data phase (the rates change)."""
        ended_data = phase[i] == DATA
        if ended_data:
            del data[i]
            c = rate_cap[i]
            for link in links[i]:
                u = link_users[link]
                if u == 1:
                    del link_users[link], link_load[link]
                    busy_l[link] += t - link_since[link]
                else:
                    if u == 2:
                        sharing[0] -= 1
                    link_users[link] = u - 1
                    link_load[link] -= caps[link] + 1 if c is None else c
        phase[i] = DONE
        end[i] = t
        es = engines[i]
        if es:
            s = start[i]
            for e in es:
                holder[e] = -1
                released_t[e] = t
                released_i[e] = i
                busy_e[e] += t - s
                # the steps it lets start are tried once this instant's ends are in
                if in_order:
                    h = head[e]
                    q = queue[e]
                    if h < len(q):
                        j = q[h]
                        if ready[j] is not None and phase[j] == WAITING:
                            if j > pos:
                                heappush(pending, j)
                            else:
                                later.add(j)
                else:
                    for j in waiting_on[e]:
                        if j > pos:
                            heappush(pending, j)
                        else:
                            later.add(j)
        for j in dependents[i]:
            if t > latest[j] or i > decider[j]:  # (t never decreases)
                latest[j] = t
                decider[j] = i
            m = missing[j] - 1
            missing[j] = m
            if not m:  # ready: its dependencies have all ended
                ready[j] = t
                if not in_order:
                    for e in engines[j]:
                        waiting_on[e].add(j)
                if j > pos:
                    heappush(pending, j)
                else:
                    later.add(j)
        return ended_data

    def begin_data(i, t, phase=phase, data=data, nbytes=nbytes, work_per_byte=work_per_byte,
                   rate_cap=rate_cap, links=links, caps=caps, link_users=link_users, link_load=link_load,
                   link_since=link_since, sharing=sharing, alone=alone, rate_of=rate_of, since=since,
                   data_end=data_end):
        """Begin the data phase of copy ``i`` at ``t`` (the rates change), at its rate alone
        until the rates are given (at this instant: only a shared link changes it)."""
        b = nbytes[i]
        phase[i] = DATA
        w = data[i] = math.ceil(b) * work_per_byte
        c = rate_cap[i]
        a = c
        for link in links[i]:
            x = caps[link]
            if a is None or x < a:
                a = x
            if link in link_users:
                u = link_users[link] + 1
                if u == 2:
                    sharing[0] += 1
                link_users[link] = u
                link_load[link] += caps[link] + 1 if c is None else c
            else:
                link_users[link] = 1
                link_load[link] = caps[link] + 1 if c is None else c
                link_since[link] = t
        alone[i] = rate_of[i] = a
        since[i] = t
        data_end[i] = t - (-w // a)  # the end at this rate, rounded up to the grid

    for i in range(n):
        if not dep_count[i]:
            ready[i] = 0
            if not in_order:
                for e in engines[i]:
                    waiting_on[e].add(i)
            pending.append(i)  # (in order: a heap)
    was_shared = False  # whether the rates last given were shared ones
    data_next = None  # when the first data phase ends at the current rates
    data_first: list = []  # the data phases that end then
    while done_count < n:
        # start everything that can start now, in program order, pass after pass
        while pending or later:
            if not pending:
                pending.extend(sorted(later))  # (a sorted list is a heap)
                later.clear()
                pos = -1
            while pending:
                i = heappop(pending)
                if i == pos:
                    continue
                pos = i
                if phase[i] or missing[i]:
                    continue
                es = engines[i]
                last_dep = decider[i]
                if not es:
                    cause[i] = n if last_dep is None else last_dep
                elif len(es) == 1:  # (the common case: one engine)
                    e = es[0]
                    if holder[e] >= 0 or (in_order and queue[e][head[e]] != i):
                        continue
                    head[e] += 1
                    holder[e] = i
                    if not in_order:
                        waiting_on[e].discard(i)
                    if last_dep is not None and end[last_dep] == t:
                        cause[i] = last_dep
                    elif t > ready[i] and released_t[e] == t:  # it waited for the engine
                        cause[i] = released_i[e]
                    else:
                        cause[i] = n if last_dep is None else last_dep
                else:
                    for e in es:
                        if holder[e] >= 0 or (in_order and queue[e][head[e]] != i):
                            break
                    else:
                        for e in es:
                            head[e] += 1
                            holder[e] = i
                            if not in_order:
                                waiting_on[e].discard(i)
                        if last_dep is not None and end[last_dep] == t:
                            cause[i] = last_dep
                        else:
                            # the engine released now, last in program order, when it waited
                            c = -1
                            if t > ready[i]:
                                for e in es:
                                    if released_t[e] == t and released_i[e] > c:
                                        c = released_i[e]
                            cause[i] = c if c >= 0 else (n if last_dep is None else last_dep)
                    if holder[es[0]] != i:  # (blocked)
                        continue
                start[i] = t
                f = fixed[i]
                if f > 0:
                    phase[i] = FIXED
                    heappush(fixed_ends, (t + f) << shift | i)
                elif nbytes[i]:
                    begin_data(i, t)
                    rates_stale = True
                else:
                    finish(i, t, pos)
                    done_count += 1
            pos = -1
        if done_count == n:
            break
        if rates_stale:
            # the work left of a data phase is brought up to date only when its rate changes
            # (a rate unchanged keeps its end: t + ceil((w - r·dt)/r) = t - dt + ceil(w/r))
            shared = sharing[0]
            if shared or was_shared:
                if shared:
                    new = _integer_fair_rates(data, links, rate_cap, caps, link_users, link_load)
                else:  # every data phase alone on its links: each at its rate alone, what the
                    # max-min filling gives then (tests/core/test_timeline_fast_paths.py)
                    new = {i: alone[i] for i in data}
                data_next = None
                for i, r in new.items():
                    old = rate_of[i]
                    if r == old:  # (its end stays)
                        e = data_end[i]
                    else:
                        w = data[i]
                        if old is not None:
                            w -= old * (t - since[i])
                            data[i] = w
                        rate_of[i] = r
                        since[i] = t
                        e = data_end[i] = t - (-w // r)  # the end at this rate, rounded up to the grid
                    if data_next is None or e < data_next:
                        data_next = e
                        data_first = [i]
                    elif e == data_next:
                        data_first.append(i)
                was_shared = shared > 0
            else:  # alone before and now: every rate and end stays (those just begun have theirs)
                data_next = None
                for i in data:
                    e = data_end[i]
                    if data_next is None or e < data_next:
                        data_next = e
                        data_first = [i]
                    elif e == data_next:
                        data_first.append(i)
            rates_stale = False
        if fixed_ends and (data_next is None or fixed_ends[0] >> shift < data_next):
            k = heappop(fixed_ends)
            t = k >> shift
            if not fixed_ends or fixed_ends[0] >> shift != t:  # one fixed phase ends alone (most)
                i = k & low
                if nbytes[i]:
                    begin_data(i, t)
                    rates_stale = True
                else:
                    finish(i, t, -1)
                    done_count += 1
                continue
            ending = [k & low]
        elif data_next is not None:
            t = data_next
            ending = []
        else:  # cannot happen after _check (no cycles), but never spin
            stuck = [ids[i] for i in range(n) if phase[i] == WAITING]
            raise InvalidParameter(f"steps that can never start: {', '.join(stuck)}")
        while fixed_ends and fixed_ends[0] >> shift == t:
            ending.append(heappop(fixed_ends) & low)
        if t == data_next:  # the data phases ending now (their end changes the rates)
            ending += data_first
            data_next = None
        if len(ending) > 1:
            ending.sort()
        for i in ending:
            if phase[i] == FIXED and nbytes[i]:
                begin_data(i, t)
                rates_stale = True
            else:
                if finish(i, t, -1):
                    rates_stale = True
                done_count += 1

    makespan = max(end, default=0)
    busy = {}
    if makespan > 0:  # (engines and links that exist but idle appear, with 0)
        busy = dict(zip(number, busy_e))
        for link, x in busy_l.items():  # (a link named like an engine: one resource)
            busy[link] = busy.get(link, 0) + x
    names = list(map(_NAME, activities))
    if not all(names):  # (a step without a name is shown by its id)
        names = [x or y for x, y in zip(names, ids)]
    return _grid_timeline(ids, names, engine_names, links, start, end, ready, cause, busy, makespan)


def _grid_timeline(ids, names, engines, links, start, end, ready, cause, busy, makespan) -> Timeline:
    """:func:`_timeline` for the columns of :func:`_simulate`: integer picoseconds, causes as
    indices (``n``: none)."""
    n = len(ids)
    path = []
    if n:
        # (a cause ended before its step started, which was before the step ended: the
        # chain goes back in time and has no cycle)
        cur = end.index(makespan)  # the first of the activities that end last
        while cur != n:
            path.append(ids[cur])
            cur = cause[cur]
        path.reverse()
    start, end, ready = ([x / PS_PER_S for x in v] for v in (start, end, ready))  # (int / int: correctly rounded)
    ids_or_none = [*ids, None]
    causes = map(ids_or_none.__getitem__, cause)
    make = functools.partial(tuple.__new__, ScheduledActivity)  # a named tuple without a call in Python
    scheduled = tuple(map(make, zip(ids, names, engines, links, start, end, ready, causes)))
    busy_s = {k: float(v / PS_PER_S) for k, v in sorted(busy.items())}
    fraction = {k: (float(v / makespan) if makespan > 0 else 0.0) for k, v in sorted(busy.items())}
    return Timeline(scheduled, float(makespan / PS_PER_S), tuple(path), busy_s, fraction,
                    columns=(scheduled, list(ids), start, end))


def _timeline(activities, index, start, end, ready, cause, busy, makespan, unit=PS_PER_S) -> Timeline:
    """The result of a simulation: float seconds (times are counted in ``unit`` per second:
    picoseconds, or 1 for seconds), the critical path traced back through ``cause``."""
    n = len(activities)
    path = []
    if n:
        last = end.index(max(end))  # the first of the activities that end last
        seen = set()
        cur = activities[last].id
        while cur is not None and cur not in seen:
            seen.add(cur)
            path.append(cur)
            cur = cause[index[cur]]
        path.reverse()
    if unit != 1:  # integer times: int / int is the correctly rounded float
        start, end, ready = ([x / unit for x in v] for v in (start, end, ready))
    else:
        start, end, ready = ([float(x) for x in v] for v in (start, end, ready))
    make = functools.partial(tuple.__new__, ScheduledActivity)  # a named tuple without a call in Python
    scheduled = tuple(map(make, zip([a.id for a in activities], [a.name or a.id for a in activities],
                                    [tuple(a.engines) for a in activities], [tuple(a.links) for a in activities],
                                    start, end, ready, cause)))
    busy_s = {k: float(v / unit) for k, v in sorted(busy.items())}
    fraction = {k: (float(v / makespan) if makespan > 0 else 0.0) for k, v in sorted(busy.items())}
    return Timeline(scheduled, float(makespan / unit), tuple(path), busy_s, fraction)
