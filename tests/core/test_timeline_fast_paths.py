"""The simulation's fast paths (columns read once, the event loop without per-event calls,
integer engine ids, cached fair rates, the results converted in bulk) give the very timeline
of the plain event-driven algorithm on the picosecond grid, kept here as the reference: every
start, end and ready time, cause, busy time and the makespan equal, not merely close, on
random applications of every kind — both policies, shared links and multi-engine steps,
zero durations, dependencies on later steps, ties — and the same message for bad input."""
from __future__ import annotations

import heapq
import math
import operator
import random
from dataclasses import replace

import numpy as np
import pytest
from repetitions import repetitions

from gpumodeler.core.application.link_sharing import rate_quantum_bits
from gpumodeler.core.application.timeline import (
    POLICIES, PS_PER_S, Activity, ScheduledActivity, Timeline, columns_of, fair_rates, positions_of, simulate,
    step_columns)
from gpumodeler.core.application.timeline_input import check_activities, number, ps_of_floats
from gpumodeler.core.errors import InvalidParameter


def reference_simulate(activities, capacities=None, policy="in-order"):
    """The event-driven simulation on the integer grid written plainly (docs/timeline.md):
    a heap of phase ends, per-engine queues, the steps whose start conditions changed
    visited in program order in passes; rates from :func:`fair_rates` with floor division."""
    if policy not in POLICIES:
        raise InvalidParameter(f"engine policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    activities = list(activities)
    capacities = capacities or {}
    index, caps = check_activities(activities, capacities)
    n = len(activities)
    in_order = policy == "in-order"
    fixed, cap_in = [], []
    for a in activities:
        x = number(a.fixed_s, f"{a.name or a.id}: duration")
        p, q = x.as_integer_ratio()
        fixed.append(-((-p * PS_PER_S) // q))
        cap_in.append(number(a.rate_cap, f"{a.name or a.id}: bandwidth", allow_none=True, positive=True))
    deps = [[index[d] for d in a.after] for a in activities]
    missing = [len(ds) for ds in deps]
    dependents = [[] for _ in range(n)]
    queue = {}
    for i, a in enumerate(activities):
        for d in deps[i]:
            dependents[d].append(i)
        for e in a.engines:
            queue.setdefault(e, []).append(i)
    qbits = rate_quantum_bits(set(caps.values()) | {c for c in cap_in if c is not None})

    def quanta(rate):
        p, q = rate.as_integer_ratio()
        return (p << qbits) // q

    left = [math.ceil(a.bytes) * (PS_PER_S << qbits) if a.bytes else 0 for a in activities]
    rate_cap = [None if c is None else quanta(c) for c in cap_in]
    caps = {link: quanta(c) for link, c in caps.items()}
    links = [tuple(a.links) for a in activities]
    head = dict.fromkeys(queue, 0)
    waiting_on = {e: set() for e in queue}
    phase = ["waiting"] * n
    start, end, ready, cause, decider = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    holder, released = {}, {}
    busy = dict.fromkeys(set(queue).union(*links), 0)
    link_users, link_since = {}, {}
    fixed_ends, data = [], {}
    st = {"t": 0, "stale": False, "done": 0, "pos": -1}
    pending, later = [], set()

    def mark(i):
        if i > st["pos"]:
            heapq.heappush(pending, i)
        else:
            later.add(i)

    def became_ready(i):
        r, last_dep = 0, None
        for d in deps[i]:
            if last_dep is None or end[d] > r or (end[d] == r and d > last_dep):
                r, last_dep = end[d], d
        ready[i], decider[i] = r, last_dep
        if not in_order:
            for e in activities[i].engines:
                waiting_on[e].add(i)
        mark(i)

    def finish(i):
        t = st["t"]
        if phase[i] == "data":
            del data[i]
            st["stale"] = True
            for link in links[i]:
                link_users[link] -= 1
                if not link_users[link]:
                    del link_users[link]
                    busy[link] += t - link_since[link]
        phase[i], end[i] = "done", t
        st["done"] += 1
        for e in activities[i].engines:
            holder.pop(e, None)
            released[e] = (t, i)
            busy[e] += t - start[i]
            if in_order:
                h, q = head[e], queue[e]
                if h < len(q) and ready[q[h]] is not None and phase[q[h]] == "waiting":
                    mark(q[h])
            else:
                for j in waiting_on[e]:
                    mark(j)
        for j in dependents[i]:
            missing[j] -= 1
            if not missing[j]:
                became_ready(j)

    def begin_data_or_finish(i):
        if left[i] > 0:
            phase[i] = "data"
            data[i] = None
            st["stale"] = True
            for link in links[i]:
                if link not in link_users:
                    link_users[link] = 0
                    link_since[link] = st["t"]
                link_users[link] += 1
        else:
            finish(i)

    def try_start(i):
        t = st["t"]
        es = activities[i].engines
        if phase[i] != "waiting" or missing[i]:
            return
        if any(e in holder or (in_order and queue[e][head[e]] != i) for e in es):
            return
        for e in es:
            head[e] += 1
            waiting_on[e].discard(i)
        start[i] = t
        last_dep = decider[i]
        if last_dep is not None and end[last_dep] == t:
            cause[i] = activities[last_dep].id
        else:
            rel = [released[e] for e in es if e in released and released[e][0] == t and t > ready[i]]
            cause[i] = activities[max(rel)[1]].id if rel else (
                activities[last_dep].id if last_dep is not None else None)
        for e in es:
            holder[e] = i
        if fixed[i] > 0:
            phase[i] = "fixed"
            heapq.heappush(fixed_ends, (t + fixed[i], i))
        else:
            begin_data_or_finish(i)

    for i in range(n):
        if not missing[i]:
            became_ready(i)
    rates, rates_since, data_next, data_first = {}, 0, None, []
    while st["done"] < n:
        while pending or later:
            if not pending:
                pending[:] = sorted(later)
                later.clear()
                st["pos"] = -1
            while pending:
                i = heapq.heappop(pending)
                if i != st["pos"]:
                    st["pos"] = i
                    try_start(i)
            st["pos"] = -1
        if st["done"] == n:
            break
        t = st["t"]
        if st["stale"]:
            flows = {i: (links[i], rate_cap[i]) for i in data}
            new = fair_rates(flows, caps, divide=operator.floordiv) if flows else {}
            data_next = None
            for i, r in new.items():
                if i in rates:
                    left[i] -= rates[i] * (t - rates_since)
                e = t - (-left[i] // r)
                if data_next is None or e < data_next:
                    data_next, data_first = e, [i]
                elif e == data_next:
                    data_first.append(i)
            rates, rates_since, st["stale"] = new, t, False
        candidates = [x for x in (fixed_ends[0][0] if fixed_ends else None, data_next) if x is not None]
        if not candidates:
            stuck = [activities[i].id for i in range(n) if phase[i] == "waiting"]
            raise InvalidParameter(f"steps that can never start: {', '.join(stuck)}")
        t = st["t"] = min(candidates)
        ending = []
        while fixed_ends and fixed_ends[0][0] == t:
            ending.append(heapq.heappop(fixed_ends)[1])
        if t == data_next:
            ending += data_first
            data_next = None
        for i in sorted(ending):
            if phase[i] == "fixed":
                begin_data_or_finish(i)
            else:
                finish(i)
    makespan = max(end, default=0)
    if not makespan > 0:
        busy = {}
    path = []
    if n:
        cur = activities[end.index(makespan)].id
        while cur is not None and cur not in path:
            path.append(cur)
            cur = cause[index[cur]]
    scheduled = tuple(ScheduledActivity(a.id, a.name or a.id, tuple(a.engines), tuple(a.links),
                                        start[i] / PS_PER_S, end[i] / PS_PER_S, ready[i] / PS_PER_S,
                                        cause[i]) for i, a in enumerate(activities))
    return Timeline(scheduled, makespan / PS_PER_S, tuple(reversed(path)),
                    {k: v / PS_PER_S for k, v in sorted(busy.items())},
                    {k: (v / makespan if makespan > 0 else 0.0) for k, v in sorted(busy.items())})


def random_application(rng, n=None, forward=0.03):
    """Steps on streams (each after its stream's last) with extra dependencies, some on
    later steps; durations from a few values so that ends coincide; copies over shared
    links, with and without caps, staged ones holding two engines."""
    n = n or rng.randint(1, 60)
    engines = [f"e{k}" for k in range(rng.randint(1, 4))]
    links = [f"l{k}" for k in range(rng.randint(1, 3))]
    capacities = {link: rng.choice([1.0, 2.0, 3.0, 0.75, 1e10, rng.uniform(0.5, 4.0)]) for link in links}
    streams = rng.randint(1, 4)
    last: dict = {}
    acts = []
    for i in range(n):
        s = rng.randrange(streams)
        after = (f"a{last[s]}",) if s in last and rng.random() < 0.9 else ()
        for _ in range(rng.choice([0, 0, 0, 1, 2])):
            after += (f"a{rng.randrange(n)}" if rng.random() < forward else f"a{rng.randrange(i)}",) if i else ()
        after = tuple(d for d in after if d != f"a{i}")
        held = tuple(rng.sample(engines, rng.choice([0, 1, 1, 1, 1, 2][: len(engines) + 2])))
        copy = rng.random() < 0.5
        fixed = rng.choice([0.0, 0.0, 1.0, 0.5, 2.0, 1e-20, rng.uniform(0, 3)])
        nbytes = rng.choice([0, 1, 2, 3.5, rng.randint(0, 5), rng.uniform(0, 4)]) if copy else 0.0
        path = tuple(rng.sample(links, rng.randint(0, len(links)))) if copy else ()
        cap = rng.choice([None, 1.0, 1e10, rng.uniform(0.3, 3.0)]) if copy else None
        if nbytes and not path and cap is None:
            cap = 1.5
        acts.append(Activity(f"a{i}", name=rng.choice(["", "k", "copy"]), engines=held, after=after,
                             fixed_s=fixed, bytes=nbytes, links=path, rate_cap=cap))
        last[s] = i
    return acts, capacities


def outcome(run, acts, capacities, policy):
    """The timeline, or the message of the error (a cycle, a deadlock of in-order queues)."""
    try:
        return run(acts, capacities, policy=policy)
    except InvalidParameter as exc:
        return str(exc)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", range(repetitions(30, 200)))   # random draws: repetitions
def test_the_simulation_equals_the_plain_algorithm(policy, seed):
    rng = random.Random(seed * 2 + (policy == "greedy"))
    acts, capacities = random_application(rng)
    assert outcome(simulate, acts, capacities, policy) == outcome(reference_simulate, acts, capacities, policy)


def test_most_random_applications_simulate():
    """(The comparison above is mostly of timelines, not of error messages.)"""
    results = [outcome(simulate, *random_application(random.Random(seed)), "in-order") for seed in range(100)]
    assert sum(isinstance(r, Timeline) for r in results) > 60


@pytest.mark.parametrize("policy", POLICIES)
def test_a_long_application_equals_the_plain_algorithm(policy):
    acts, capacities = random_application(random.Random(7), n=3000, forward=0)
    got = simulate(acts, capacities, policy=policy)
    assert got == reference_simulate(acts, capacities, policy=policy)


def exclusive_links_application(rng, n=None, forward=0):
    """:func:`random_application`'s steps (by default without dependencies on later steps),
    each link's copies holding one engine of that link (like a GPU's copy engine per
    direction), so no two data phases ever share a link and every duration is known before
    the simulation: in order, each start is found by one pass over longest paths."""
    acts, capacities = random_application(rng, n=n, forward=forward)
    named = rng.choice(["engine of {}", "{}"])  # (an engine named like its link: one resource's busy time)
    acts = [replace(a, engines=tuple(dict.fromkeys((*a.engines, *map(named.format, a.links)))))
            if a.links else a for a in acts]
    return acts, capacities


@pytest.mark.parametrize("seed", range(repetitions(30, 200)))   # random draws: repetitions
def test_links_never_shared_equal_the_plain_algorithm(seed):
    acts, capacities = exclusive_links_application(random.Random(seed))
    for policy in POLICIES:
        assert simulate(acts, capacities, policy=policy) == reference_simulate(acts, capacities, policy=policy)


def with_dependencies_on_later_steps(rng, acts):
    """``acts`` with a few dependencies on later steps that make no cycle (a step may wait for
    a later one its own successors do not lead to)."""
    acts = list(acts)
    for _ in range(rng.randint(1, 3) if len(acts) > 1 else 0):
        i, j = sorted(rng.sample(range(len(acts)), 2))
        by_id = {a.id: a for a in acts}
        reach, todo = set(), [acts[j].id]  # what j waits for, through dependencies
        while todo:
            for d in by_id[todo.pop()].after:
                if d not in reach:
                    reach.add(d)
                    todo.append(d)
        if acts[i].id not in reach:
            acts[i] = replace(acts[i], after=(*acts[i].after, acts[j].id))
    return acts


@pytest.mark.parametrize("seed", range(repetitions(30, 200)))   # random draws: repetitions
def test_links_never_shared_and_dependencies_on_later_steps_equal_the_plain_algorithm(seed):
    """(A dependency on a later step: the event loop, or the in-order queues' deadlock named.)"""
    rng = random.Random(seed)
    acts, capacities = exclusive_links_application(rng)
    acts = with_dependencies_on_later_steps(rng, acts)
    assert outcome(simulate, acts, capacities, "in-order") == outcome(reference_simulate, acts, capacities, "in-order")


def test_a_long_application_with_links_never_shared_equals_the_plain_algorithm():
    acts, capacities = exclusive_links_application(random.Random(11), n=3000)
    assert simulate(acts, capacities) == reference_simulate(acts, capacities)


def test_a_link_shared_once_is_simulated_with_its_fair_share():
    """Two copies on one link holding different engines share it (the one-pass path would
    give each its rate alone): each takes 2 s for 1 byte at 1 B/s shared, not 1 s."""
    acts = [Activity("a", engines=("e1",), bytes=1.0, links=("l",)),
            Activity("b", engines=("e2",), bytes=1.0, links=("l",))]
    got = simulate(acts, {"l": 2.0})
    assert [(x.start_s, x.end_s) for x in got.activities] == [(0.0, 1.0), (0.0, 1.0)]
    got = simulate(acts, {"l": 1.0})
    assert [(x.start_s, x.end_s) for x in got.activities] == [(0.0, 2.0), (0.0, 2.0)]
    assert got == reference_simulate(acts, {"l": 1.0})


def test_a_step_naming_an_engine_twice_equals_the_plain_algorithm():
    acts = [Activity("a", engines=("e",), fixed_s=1.0), Activity("b", engines=("e", "e"), after=("a",), fixed_s=2.0),
            Activity("c", engines=("e",), fixed_s=1.0), Activity("d", engines=("e", "f"), fixed_s=0.5)]
    for policy in POLICIES:
        assert simulate(acts, {}, policy=policy) == reference_simulate(acts, {}, policy=policy)


def test_step_columns_are_the_columns_of_the_activities():
    """The simulation's own columns (kept with its timeline) are its activities' fields, and
    a timeline made otherwise, or with other activities, is read from its activities."""
    acts, capacities = random_application(random.Random(3), n=50, forward=0)
    for policy in POLICIES:
        got = simulate(acts, capacities, policy=policy)
        read = tuple(map(list, zip(*got.activities)))
        assert len(read) == len(ScheduledActivity._fields) and got.columns is not None
        assert step_columns(got) == read
        assert columns_of(got) == (read[0], read[4], read[5])
        plain = Timeline(got.activities, got.makespan_s, got.critical_path, got.busy_s, got.busy_fraction)
        assert step_columns(plain) == read and columns_of(plain) == (read[0], read[4], read[5])
        assert list(positions_of(got).items()) == [(a.id, i) for i, a in enumerate(got.activities)]
        assert positions_of(plain) is None
        fewer = replace(got, activities=got.activities[:-1])  # (columns of other activities: not used)
        assert step_columns(fewer) == tuple(c[:-1] for c in read) and positions_of(fewer) is None
    assert step_columns(Timeline((), 0.0, (), {}, {})) == ([],) * len(ScheduledActivity._fields)


def test_the_activities_are_made_when_first_read():
    """The simulation's timeline makes its named tuples only when they are read (the
    energy and the document read its columns): the same tuple, equal to the plain
    algorithm's, its columns its own before and after, in copies and pickles too."""
    import pickle

    from gpumodeler.core.application.energy import DevicePower, energy
    from gpumodeler.core.lazy_fields import pending

    acts, capacities = random_application(random.Random(7), n=60, forward=0)
    acts.append(Activity("k", name="kernel", engines=("gpu/compute",), fixed_s=0.5))
    got = simulate(acts, capacities)
    assert pending(got, "activities") is not None
    ids = [a.id for a in acts]
    energy(got, {"k": "gpu"}, {"gpu": DevicePower(100.0, 10.0)})
    assert step_columns(got)[0] == ids and columns_of(got)[0] == ids and positions_of(got)
    assert pending(got, "activities") is not None   # (read in bulk: not made)
    made = got.activities
    assert type(made) is tuple and all(type(a) is ScheduledActivity for a in made)
    assert got.activities is made and pending(got, "activities") is None
    assert [a.id for a in made] == ids and positions_of(got) is not None
    assert step_columns(got) == tuple(map(list, zip(*made)))
    assert got == reference_simulate(acts, capacities) == simulate(acts, capacities)
    assert repr(got) == repr(reference_simulate(acts, capacities))
    again = simulate(acts, capacities)
    assert pickle.loads(pickle.dumps(again)).activities == made
    other = replace(again, activities=made[:-1])   # (columns of other activities: not used)
    assert positions_of(other) is None and step_columns(other)[0] == ids[:-1]


def test_the_comparison_can_fail():
    """One step a picosecond longer changes the timeline the comparison sees."""
    acts, capacities = random_application(random.Random(5), n=40)
    acts = [Activity(a.id, engines=a.engines, after=tuple(d for d in a.after if int(d[1:]) < i),
                     fixed_s=a.fixed_s, bytes=a.bytes, links=a.links, rate_cap=a.rate_cap)
            for i, a in enumerate(acts)]
    ref = reference_simulate(acts, capacities, policy="greedy")
    assert simulate(acts, capacities, policy="greedy") == ref
    last = acts[-1]
    acts[-1] = Activity(last.id, engines=last.engines, after=last.after, fixed_s=last.fixed_s + 1e-12,
                        bytes=last.bytes, links=last.links, rate_cap=last.rate_cap)
    assert simulate(acts, capacities, policy="greedy") != ref


@pytest.mark.parametrize("bad", [
    dict(fixed_s=-1.0), dict(fixed_s=float("nan")), dict(fixed_s=True), dict(fixed_s="1"),
    dict(rate_cap=0.0, bytes=1.0, links=("l",)), dict(rate_cap=float("inf"), bytes=1.0, links=("l",)),
    dict(bytes=-2.0, links=("l",)), dict(bytes=float("inf"), links=("l",)), dict(bytes=1.0),
    dict(links=("nowhere",)), dict(after=("nobody",)), dict(after=("b",)), dict(id=""), dict(id="a"),
    dict(fixed_s=2, bytes=3, links=("l",), rate_cap=2), dict(id=3), dict(id=None), dict(id=b"c"),
    dict(id=type("Label", (str,), {})("c")), dict(bytes=1.0, rate_cap=2.0), dict(bytes=1.0, links=("l",)),
    dict(bytes=0.0, rate_cap=None)])
def test_bad_and_unusual_input_gives_the_same_answer(bad):
    """Each field bad (or unusual but valid: integers, a subclass of str as an id, a copy with
    a rate cap and no link or a link and no rate cap) in the third of three steps, with a
    later bad duration that must not be the one named."""
    fields = dict(id="c", engines=("e",), after=("a",), fixed_s=1.0)
    fields.update(bad)
    acts = [Activity("a", engines=("e",), fixed_s=1.0), Activity("b", engines=("e",), after=("c",), fixed_s=0.5),
            Activity(**fields), Activity("d", fixed_s=-5.0 if "fixed_s" in bad else 1.0)]
    caps = {"l": 2.0}
    for policy in POLICIES:
        got, ref = outcome(simulate, acts, caps, policy), outcome(reference_simulate, acts, caps, policy)
        assert got == ref


def test_picoseconds_of_floats_in_bulk_are_the_exact_ceiling():
    """Every duration's whole picoseconds (rounded up) in numpy equal the exact integer
    arithmetic: whole nanoseconds and picoseconds as a trace gives them (their products
    by 10^12 fall on or next to whole numbers), random floats, tiny and huge ones."""
    rng = random.Random(2)
    values = [0.0, 1e-12, 3e-12, 1.9042121528914125e-20, 5e-324, 1e-210, 2.0 ** -1000, 9007.2, 1e6, 1e300]
    values += [k * 1e-9 for k in range(1, 3000)] + [k * 1e-12 for k in range(1, 3000)]
    values += [k / 1e9 for k in range(1, 3000)] + [rng.uniform(0, 1e-3) for _ in range(5000)]
    values += [rng.uniform(0, 10) for _ in range(2000)] + [math.ldexp(rng.random(), -rng.randint(0, 80)) for _ in range(3000)]
    exact = [-((-p * PS_PER_S) // q) for p, q in map(float.as_integer_ratio, values)]
    assert ps_of_floats(np.array(values)) == exact


@pytest.mark.parametrize("odd_id", [7, None, b"b", 2.5, type("Label", (str,), {})("b")])
def test_an_id_that_is_not_a_plain_string_gives_the_same_answer(odd_id):
    """An id no step depends on, of another type (refused) or a subclass of str (taken)."""
    acts = [Activity("a", engines=("e",), fixed_s=1.0), Activity(odd_id, engines=("e",), fixed_s=0.5),
            Activity("c", after=("a",), fixed_s=1.0)]
    for policy in POLICIES:
        assert outcome(simulate, acts, {}, policy) == outcome(reference_simulate, acts, {}, policy)
