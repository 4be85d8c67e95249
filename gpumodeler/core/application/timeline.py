"""Timeline simulation of an application on a system: kernels and copies on engines, copies
sharing link bandwidth, dependencies, with exact event arithmetic (docs/timeline.md).

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
* **Exact arithmetic.** Times, byte counts and rates are ``fractions.Fraction`` inside the
  simulation (a float converts to a Fraction exactly), so event times are exact and ties are
  decided exactly, deterministically; results are converted to float once, at the end.

The critical path is traced back from the activity that ends last: each activity's start is
explained by the dependency that ended last before it (when a dependency ended exactly then),
otherwise by the activity that released the engine it waited for; a step started at time 0 or
immediately when ready ends the chain.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
import heapq
import math

from gpumodeler.core.errors import InvalidParameter


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


@dataclass(frozen=True)
class ScheduledActivity:
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

    def by_id(self) -> dict:
        return {a.id: a for a in self.activities}


def _exact(value, what: str, allow_none=False, positive=False) -> Fraction | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise InvalidParameter(f"{what} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidParameter(f"{what} must be a finite number, got {value!r}")
    q = Fraction(value)
    if q < 0 or (positive and q == 0):
        raise InvalidParameter(f"{what} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return q


def _check(activities, capacities):
    ids = {}
    for i, a in enumerate(activities):
        if not isinstance(a.id, str) or not a.id:
            raise InvalidParameter(f"activity {i + 1} has no id")
        if a.id in ids:
            raise InvalidParameter(f"two activities have the id {a.id!r}; ids must be unique")
        ids[a.id] = i
    caps = {k: _exact(v, f"capacity of {k!r}", positive=True) for k, v in capacities.items()}
    for a in activities:
        for d in a.after:
            if d not in ids:
                raise InvalidParameter(f"{a.name or a.id}: depends on {d!r}, which is not a step of the "
                                       f"application (steps: {', '.join(ids)})")
        for link in a.links:
            if link not in caps:
                raise InvalidParameter(f"{a.name or a.id}: link {link!r} has no bandwidth "
                                       f"(known: {', '.join(caps) or 'none'})")
        b = _exact(a.bytes, f"{a.name or a.id}: bytes")
        if b and not a.links and a.rate_cap is None:
            raise InvalidParameter(f"{a.name or a.id}: a copy of {a.bytes} bytes needs a link or a rate cap")
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


def fair_rates(flows: dict, capacities: dict) -> dict:
    """Max-min fair rates by progressive filling. ``flows``: id -> (links, cap or None);
    ``capacities``: link -> capacity. Exact when given Fractions."""
    rates = {}
    remaining = dict(capacities)
    unfrozen = dict(flows)
    while unfrozen:
        users: dict = {}
        for f, (links, _cap) in unfrozen.items():
            for link in links:
                users[link] = users.get(link, 0) + 1
        level = None
        for link, n in users.items():
            share = remaining[link] / n
            level = share if level is None or share < level else level
        for f, (_links, cap) in unfrozen.items():
            if cap is not None and (level is None or cap < level):
                level = cap
        if level is None:
            raise InvalidParameter("a copy has neither a link nor a rate cap")
        frozen = []
        for f, (links, cap) in unfrozen.items():
            limit = cap
            for link in links:
                share = remaining[link] / users[link]
                limit = share if limit is None or share < limit else limit
            if limit == level:
                frozen.append(f)
        for f in frozen:
            links, _cap = unfrozen.pop(f)
            rates[f] = level
            for link in links:
                remaining[link] -= level
    return rates


def _fair_rates_fast(flows: dict, capacities: dict) -> dict:
    """:func:`fair_rates`, answered without the filling when every flow has a cap and the
    caps fit on every link: the max-min fair allocation is then every flow at its cap."""
    load: dict = {}
    for links, cap in flows.values():
        if cap is None:
            return fair_rates(flows, capacities)
        for link in links:
            load[link] = load.get(link, 0) + cap
    if all(total <= capacities[link] for link, total in load.items()):
        return {f: cap for f, (_links, cap) in flows.items()}
    return fair_rates(flows, capacities)


POLICIES = ("in-order", "greedy")


def simulate(activities, capacities: dict | None = None, policy: str = "in-order") -> Timeline:
    """Simulate ``activities`` (program order) with link ``capacities`` (bytes/s per
    bandwidth resource id) under an engine queueing ``policy`` (see the module docstring).

    Event-driven in O(n log n) for n activities (plus the max-min sharing among the copies
    in their data phase at once): a heap of phase ends, per-engine queues, and a set of the
    activities whose start conditions changed, visited in program order in passes exactly as
    a full rescan would visit them; busy time is summed per resource when it is taken and
    released, not per event."""
    if policy not in POLICIES:
        raise InvalidParameter(f"engine policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    activities = list(activities)
    capacities = capacities or {}
    index, caps = _check(activities, capacities)
    n = len(activities)
    in_order = policy == "in-order"
    fixed = [_exact(a.fixed_s, f"{a.name or a.id}: duration") for a in activities]
    volume = [_exact(a.bytes, f"{a.name or a.id}: bytes") for a in activities]
    rate_cap = [_exact(a.rate_cap, f"{a.name or a.id}: bandwidth", allow_none=True, positive=True)
                for a in activities]
    deps = [[index[d] for d in a.after] for a in activities]
    engines = [tuple(a.engines) for a in activities]
    links = [tuple(a.links) for a in activities]
    dependents: list = [[] for _ in range(n)]
    for i, ds in enumerate(deps):
        for d in ds:
            dependents[d].append(i)
    missing = [len(ds) for ds in deps]  # dependencies not yet ended (with repetitions)
    queue: dict = {}  # engine -> activity indices using it, program order
    for i in range(n):
        for e in engines[i]:
            queue.setdefault(e, []).append(i)
    head = {e: 0 for e in queue}  # engine -> position of the first activity not yet started
    waiting_on: dict = {e: set() for e in queue}  # engine -> ready activities not yet started

    zero = Fraction(0)
    t = zero
    phase = ["waiting"] * n  # waiting -> fixed -> data -> done
    start = [None] * n
    end = [None] * n
    ready = [None] * n
    cause: list = [None] * n
    left = list(volume)
    engine_holder: dict = {}
    engine_released: dict = {}  # engine -> (time, activity index) of the last release
    busy: dict = {}
    link_users: dict = {}  # link -> data phases crossing it now
    link_since: dict = {}  # link -> when its current busy period began
    fixed_ends: list = []  # heap of (end of the fixed phase, activity index)
    data: dict = {}  # activity index -> rate (None until the rates are recomputed)
    rates_stale = False
    done_count = 0
    # activities whose start conditions changed: visited in program order, in passes
    pending: list = []  # this pass (heap)
    later: set = set()  # the next pass
    pos = -1  # program-order position of the pass under way

    def mark(i):
        if i > pos:
            heapq.heappush(pending, i)
        else:
            later.add(i)

    def became_ready(i):
        ready[i] = max((end[d] for d in deps[i]), default=zero)
        for e in engines[i]:
            waiting_on[e].add(i)
        mark(i)

    def engine_changed(e):
        if in_order:
            h = head[e]
            q = queue[e]
            if h < len(q) and ready[q[h]] is not None and phase[q[h]] == "waiting":
                mark(q[h])
        else:
            for j in waiting_on[e]:
                mark(j)

    def finish(i):
        nonlocal done_count, rates_stale
        if phase[i] == "data":
            del data[i]
            rates_stale = True
            for link in links[i]:
                link_users[link] -= 1
                if not link_users[link]:
                    busy[link] = busy.get(link, zero) + (t - link_since[link])
        phase[i] = "done"
        end[i] = t
        done_count += 1
        for e in engines[i]:
            engine_holder.pop(e, None)
            engine_released[e] = (t, i)
            busy[e] = busy.get(e, zero) + (t - start[i])
        for e in engines[i]:
            engine_changed(e)
        for j in dependents[i]:
            missing[j] -= 1
            if not missing[j]:
                became_ready(j)

    def begin_data_or_finish(i):
        nonlocal rates_stale
        if left[i] > 0:
            phase[i] = "data"
            data[i] = None
            rates_stale = True
            for link in links[i]:
                if not link_users.get(link):
                    link_users[link] = 0
                    link_since[link] = t
                link_users[link] += 1
        else:
            finish(i)

    def try_start(i):
        a = engines[i]
        if phase[i] != "waiting" or missing[i]:
            return
        if any(e in engine_holder for e in a):
            return
        if in_order and any(queue[e][head[e]] != i for e in a):
            return
        for e in a:
            head[e] += 1
            waiting_on[e].discard(i)
        start[i] = t
        last_dep = max(deps[i], key=lambda d: (end[d], d), default=None)
        if last_dep is not None and end[last_dep] == t:
            cause[i] = activities[last_dep].id
        else:
            released = [engine_released[e] for e in a
                        if e in engine_released and engine_released[e][0] == t and t > ready[i]]
            cause[i] = activities[max(released)[1]].id if released else (
                activities[last_dep].id if last_dep is not None else None)
        for e in a:
            engine_holder[e] = i
        if fixed[i] > 0:
            phase[i] = "fixed"
            heapq.heappush(fixed_ends, (t + fixed[i], i))
        else:
            begin_data_or_finish(i)
        if in_order:
            for e in a:
                engine_changed(e)

    for i in range(n):
        if not missing[i]:
            became_ready(i)
    rates: dict = {}
    rates_since = zero
    data_end: dict = {}  # activity index -> when its data phase ends at the current rates
    while done_count < n:
        # start everything that can start now, in program order, pass after pass
        while pending or later:
            if not pending:
                pending = sorted(later)
                later = set()
                pos = -1
            while pending:
                i = heapq.heappop(pending)
                if i == pos:
                    continue
                pos = i
                try_start(i)
            pos = -1
        if done_count == n:
            break
        if rates_stale:  # bytes left are brought up to date only when the rates change
            for i, r in rates.items():
                if i in data:
                    left[i] -= r * (t - rates_since)
            flows = {i: (links[i], rate_cap[i]) for i in sorted(data)}
            rates = _fair_rates_fast(flows, caps) if flows else {}
            rates_since = t
            data_end = {i: t + left[i] / r for i, r in rates.items()}
            rates_stale = False
        candidates = [fixed_ends[0][0]] if fixed_ends else []
        if data_end:
            candidates.append(min(data_end.values()))
        if not candidates:  # cannot happen after _check (no cycles), but never spin
            stuck = [activities[i].id for i in range(n) if phase[i] == "waiting"]
            raise InvalidParameter(f"steps that can never start: {', '.join(stuck)}")
        t = min(candidates)
        ending = []
        while fixed_ends and fixed_ends[0][0] == t:
            ending.append(heapq.heappop(fixed_ends)[1])
        ending += [i for i, e in data_end.items() if e == t]
        for i in ending:
            data_end.pop(i, None)
        for i in sorted(ending):
            if phase[i] == "fixed":
                begin_data_or_finish(i)
            else:
                left[i] = zero
                finish(i)

    makespan = max(end, default=zero)
    if makespan > 0:  # engines and links that exist but idle still appear
        for i in range(n):
            for k in engines[i] + links[i]:
                busy.setdefault(k, zero)
    else:
        busy = {}
    return _timeline(activities, index, start, end, ready, cause, busy, makespan)


def _timeline(activities, index, start, end, ready, cause, busy, makespan) -> Timeline:
    """The result of a simulation: floats, the critical path traced back through ``cause``."""
    n = len(activities)
    path = []
    if n:
        last = max(range(n), key=lambda i: (end[i], -i))
        seen = set()
        cur = activities[last].id
        while cur is not None and cur not in seen:
            seen.add(cur)
            path.append(cur)
            cur = cause[index[cur]]
        path.reverse()
    scheduled = tuple(
        ScheduledActivity(a.id, a.name or a.id, tuple(a.engines), tuple(a.links), float(start[i]),
                          float(end[i]), float(ready[i]), cause[i])
        for i, a in enumerate(activities))
    busy_s = {k: float(v) for k, v in sorted(busy.items())}
    fraction = {k: (float(v / makespan) if makespan > 0 else 0.0) for k, v in sorted(busy.items())}
    return Timeline(scheduled, float(makespan), tuple(path), busy_s, fraction)
