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
import heapq
import itertools
import math
from typing import NamedTuple

import numpy as np

from gpumodeler.core.application.link_sharing import fair_rates, integer_fair_rates, rate_quantum_bits
from gpumodeler.core.application.one_pass import links_never_shared, longest_paths
from gpumodeler.core.application.timeline_input import PS_PER_S, check_activities, checked_columns, fast_columns
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.lazy_fields import LazyFields, build, pending

__all__ = ["POLICIES", "PS_PER_S", "Activity", "ScheduledActivity", "Timeline", "columns_of", "fair_rates",
           "positions_of", "simulate", "step_columns"]


@dataclass(frozen=True, slots=True)
class Activity:
    """One step to simulate. ``engines``: engine ids it holds while it runs (e.g.
    ``"gpu1/compute"``, ``"gpu1/copy-htod"``). ``after``: ids that must end first.
    ``fixed_s``: the fixed part of its duration (a kernel's time, a copy's startup).
    ``bytes``: data moved after the fixed part through ``links`` (bandwidth resource ids,
    capacities given to :func:`simulate`), at most ``rate_cap`` bytes/s.

    Slotted (no ``__dict__``): an application's build makes 10^5 of them by setting the
    slots (app.ActivitySlots), and a slot is read as fast as an attribute."""

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
class Timeline(LazyFields):
    """A simulated application. The simulation's own timeline makes ``activities`` when it
    is first read (:mod:`gpumodeler.core.lazy_fields`: the same tuple of named tuples, in
    ``==``, ``repr`` and copies): its readers in bulk (the energy, the document) read the
    columns, and 10^5 named tuples cost as much as the simulation's last tenth."""

    activities: tuple  # ScheduledActivity, in program order
    makespan_s: float
    critical_path: tuple  # activity ids, first to last
    busy_s: dict  # engine or link id -> seconds busy
    busy_fraction: dict  # engine or link id -> busy seconds / makespan (0 for a zero makespan)
    # (a list that holds the activities once they are made from the columns, then the
    # columns of ScheduledActivity: ids, names, engines, links, start_s, end_s, ready_s,
    # causes, then id -> position): the simulation's own, for readers in bulk (the energy,
    # the document); valid only for the activities made from them (see :func:`_own_columns`)
    columns: tuple | None = field(default=None, compare=False, repr=False)

    def by_id(self) -> dict:
        return {a.id: a for a in self.activities}


def _own_columns(timeline) -> tuple | None:
    """The timeline's ``columns`` when they are its activities' (the simulation's own
    timeline, its activities not made yet or made from them), else None."""
    columns = getattr(timeline, "columns", None)
    if columns is None:
        return None
    made = columns[0]
    recipe = pending(timeline, "activities")
    if recipe is not None:
        return columns if recipe[1] is made else None
    return columns if made and made[0] is timeline.activities else None


def columns_of(timeline) -> tuple:
    """(ids, start_s, end_s) of the timeline's activities, as lists: the simulation's own
    when it made them for these activities, else read from them."""
    columns = _own_columns(timeline)
    if columns is not None:
        return columns[1], columns[5], columns[6]
    acts = timeline.activities
    return ([a.id for a in acts], [a.start_s for a in acts], [a.end_s for a in acts])


def positions_of(timeline) -> dict | None:
    """id -> position (program order) of the timeline's activities, the simulation's own
    (ids unique, times plain floats), or None when the timeline is not the simulation's own
    for these activities."""
    columns = _own_columns(timeline)
    return None if columns is None else columns[9]


def step_columns(timeline) -> tuple:
    """The columns of the timeline's activities in the order of :class:`ScheduledActivity`'s
    fields (ids, names, engines, links, start_s, end_s, ready_s, causes), as lists: the
    simulation's own when it made them for these activities (read them, do not change them),
    else read from the activities."""
    columns = _own_columns(timeline)
    if columns is not None:
        return columns[1:9]
    if not timeline.activities:
        return tuple([] for _ in ScheduledActivity._fields)
    return tuple(map(list, zip(*timeline.activities)))


POLICIES = ("in-order", "greedy")


def simulate(activities, capacities: dict | None = None, policy: str = "in-order") -> Timeline:
    """Simulate ``activities`` (program order) with link ``capacities`` (bytes/s per
    bandwidth resource id) under an engine queueing ``policy`` (see the module docstring).
    See :func:`_simulate` for the method."""
    # the collector paused: about ten short-lived containers per step, no cycles to free
    with collector_paused():
        return _simulate(activities, capacities, policy)


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
    the results are converted in bulk (:func:`_grid_timeline`). In order, when no link can
    be shared and no step depends on a later one, every duration is known beforehand and
    one pass over longest paths replaces the event loop (:func:`~gpumodeler.core.application.one_pass.longest_paths`)."""
    if policy not in POLICIES:
        raise InvalidParameter(f"engine policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    activities = list(activities)
    capacities = capacities or {}
    columns = fast_columns(activities, capacities)
    checked = columns is None
    if checked:
        columns = checked_columns(activities, capacities)
    ids, index, caps, dep_count, dep_flat, engine_names, links, fixed, cap_in, nbytes, names, pairs, copies = columns
    n = len(activities)
    in_order = policy == "in-order"
    WAITING, FIXED, DATA, DONE = 0, 1, 2, 3
    # engines numbered; per step a tuple of engine numbers, per engine its steps in order
    number: dict = {}
    distinct = {es for es, _ls in pairs}
    for es in distinct:
        for e in es:
            number.setdefault(e, len(number))
    numbered = {es: tuple(number[e] for e in es) for es in distinct}
    # the integer grid: rates in whole quanta of 2^-k B/s, the work of a data phase in
    # quanta x ps (whole bytes, rounded up)
    distinct_caps = set(cap_in)
    qbits = rate_quantum_bits(set(caps.values()) | {c for c in distinct_caps if c is not None})

    def quanta(rate):
        p, q = rate.as_integer_ratio()
        return (p << qbits) // q

    work_per_byte = PS_PER_S << qbits
    in_quanta = {c: quanta(c) for c in distinct_caps if c is not None}
    in_quanta[None] = None
    caps = {link: quanta(c) for link, c in caps.items()}
    used_links = set().union(*[ls for _es, ls in pairs])  # every link a step names
    if in_order and links_never_shared(pairs):
        times = longest_paths(n, dep_count, dep_flat, engine_names, numbered, number, fixed, links, used_links,
                               nbytes, copies, cap_in, in_quanta, caps, work_per_byte)
        if times is not None:  # (None: a dependency on a later step)
            return _grid_timeline(ids, index, names, engine_names, links, *times)
    engines = list(map(numbered.__getitem__, engine_names))
    # each activity's dependents, in program order (with repetitions)
    owner = np.repeat(np.arange(n, dtype=np.int64), np.array(dep_count, dtype=np.int64))
    flat = np.array(dep_flat, dtype=np.int64)
    if not checked and bool((flat >= owner).any()):
        check_activities(activities, capacities)  # a dependency on a later step: look for a cycle
    dependents = _groups(flat, owner, n)
    rate_cap = list(map(in_quanta.__getitem__, cap_in))
    queue = _groups(np.array(list(itertools.chain.from_iterable(engines)), dtype=np.int64),
                    np.repeat(np.arange(n, dtype=np.int64), np.array(list(map(len, engines)), dtype=np.int64)),
                    len(number))  # engine -> activity indices using it, program order
    missing = list(dep_count)  # dependencies not yet ended (with repetitions)
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
    busy_l: dict = dict.fromkeys(used_links, 0)  # every link in use by a step
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
                    new = integer_fair_rates(data, links, rate_cap, caps, link_users, link_load)
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
        else:  # cannot happen after check_activities (no cycles), but never spin
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
    return _grid_timeline(ids, index, names, engine_names, links, start, end, ready, cause, busy, makespan)


def _grid_timeline(ids, index, names, engines, links, start, end, ready, cause, busy, makespan) -> Timeline:
    """:func:`_timeline` for the columns of :func:`_simulate`: integer picoseconds, causes as
    indices (``n``: none); ``index``: id -> position."""
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
    causes = list(map(ids_or_none.__getitem__, cause))
    ids, names, engines, links = (c if type(c) is list else list(c) for c in (ids, names, engines, links))
    busy_s = {k: float(v / PS_PER_S) for k, v in sorted(busy.items())}
    fraction = {k: (float(v / makespan) if makespan > 0 else 0.0) for k, v in sorted(busy.items())}
    made: list = []   # (the activities, once made)
    columns = (made, ids, names, engines, links, start, end, ready, causes)
    return build(Timeline, {"makespan_s": float(makespan / PS_PER_S), "critical_path": tuple(path),
                            "busy_s": busy_s, "busy_fraction": fraction, "columns": (*columns, index)},
                 {"activities": (_scheduled, *columns)})


def _scheduled(made: list, *columns) -> tuple:
    """The timeline's activities from its columns (ids, names, engines, links, start_s,
    end_s, ready_s, causes), kept in ``made`` too: named tuples without a call in Python
    (tuple.__new__ straight from map)."""
    activities = tuple(map(tuple.__new__, itertools.repeat(ScheduledActivity), zip(*columns)))
    made.append(activities)
    return activities


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
