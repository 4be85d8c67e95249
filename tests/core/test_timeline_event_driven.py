"""The event-driven timeline simulation on its picosecond grid agrees with the exact rational
rescanning one it replaced (kept here as the reference: every activity rescanned per event,
busy time accumulated per event, every time a ``Fraction``) on random small applications:
both engine policies, shared and multi-engine steps, zero-duration steps, copies sharing
links, repeated dependencies. The grid rounds every duration up to a whole picosecond, so
each time may differ from the exact one by at most 1 ps per event (docs/timeline.md): the
check allows (number of events) ps, 2 per step (the end of its fixed phase and of its data
phase), and is tight enough to fail on any real difference."""
from fractions import Fraction
import random

import pytest

from gpumodeler.core.application.timeline import POLICIES, Activity, Timeline, _timeline, fair_rates, simulate
from gpumodeler.core.application.timeline_input import check_activities, exact
from gpumodeler.core.errors import InvalidParameter


def random_application(rng):
    n = rng.randint(1, 14)
    engines = [f"e{k}" for k in range(rng.randint(1, 4))]
    links = [f"l{k}" for k in range(rng.randint(1, 3))]
    capacities = {link: rng.choice([1.0, 2.0, 3.0, 0.75, rng.uniform(0.5, 4.0)]) for link in links}
    order = list(range(n))  # dependencies follow a random order, not always program order
    if rng.random() < 0.7:
        rng.shuffle(order)
    rank = {i: r for r, i in enumerate(order)}
    acts = []
    for i in range(n):
        r = rank[i]
        after = tuple(f"a{order[rng.randrange(r)]}" for _ in range(rng.randint(0, min(r, 3))))
        held = tuple(rng.sample(engines, rng.choice([0, 1, 1, 1, 2][: len(engines) + 1])))
        copy = rng.random() < 0.5
        fixed = rng.choice([0.0, 0.0, 1.0, 0.5, 2.0, rng.uniform(0, 3)])
        nbytes = rng.choice([0, 1, 2, 3, rng.randint(0, 5)]) if copy else 0  # whole bytes
        path = tuple(rng.sample(links, rng.randint(0, len(links)))) if copy else ()
        cap = rng.choice([None, 1.0, rng.uniform(0.3, 3.0)]) if copy else None
        if nbytes and not path and cap is None:
            cap = 1.5
        acts.append(Activity(f"a{i}", engines=held, after=after, fixed_s=fixed, bytes=nbytes,
                             links=path, rate_cap=cap))
    return acts, capacities


def outcome(run, acts, capacities, policy):
    """The timeline, or the message of the error (in-order engine queues can deadlock when a
    step waits for a later one on its engine)."""
    try:
        return run(acts, capacities, policy=policy)
    except InvalidParameter as exc:
        return str(exc)


def differences(got, ref) -> tuple:
    """(largest difference of a start, end or ready time or of the makespan in ps, whether
    the critical paths and the busy resources are the same)."""
    ps = 1e12
    worst = abs(got.makespan_s - ref.makespan_s) * ps
    for a, b in zip(got.activities, ref.activities, strict=True):
        assert a.id == b.id
        worst = max(worst, abs(a.start_s - b.start_s) * ps, abs(a.end_s - b.end_s) * ps,
                    abs(a.ready_s - b.ready_s) * ps)
    return worst, got.critical_path == ref.critical_path and set(got.busy_s) == set(ref.busy_s)


def agree_within_the_grid(got, ref, n_steps) -> bool:
    if isinstance(got, str) or isinstance(ref, str):
        return got == ref
    worst, same = differences(got, ref)
    # 1 ps per event, 2 events per step, and a little for the float seconds of the results
    return same and worst <= 2 * n_steps + 1e-3 * max(1.0, ref.makespan_s) * 1e12 * 2 ** -40


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", range(300))
def test_event_driven_simulation_agrees_with_the_exact_rescanning_one(policy, seed):
    rng = random.Random(seed * 2 + (policy == "greedy"))
    acts, capacities = random_application(rng)
    got = outcome(simulate, acts, capacities, policy)
    ref = outcome(reference_simulate, acts, capacities, policy)
    assert agree_within_the_grid(got, ref, len(acts)), (got, ref)


def test_whole_picosecond_times_are_exact_on_the_grid():
    """Durations that are whole picoseconds are not rounded: the grid gives the exact
    timeline, bit for bit. a: 0.25 s, then 300 B at min(3, 2) B/s alone; b from 0.5 s shares
    the link (1 B/s each): b ends at 200.5 s, a's last 99.5 B at 2 B/s end at 250.25 s."""
    acts = [Activity("a", engines=("e1",), fixed_s=0.25, bytes=300, links=("l",), rate_cap=3),
            Activity("b", engines=("e2",), fixed_s=0.5, bytes=200, links=("l",)),
            Activity("c", engines=("e1",), after=("b",), fixed_s=0.125)]
    caps = {"l": 2}
    got = simulate(acts, caps)
    assert got == reference_simulate(acts, caps)
    assert [(a.start_s, a.end_s) for a in got.activities] == [(0, 250.25), (0, 200.5), (250.25, 250.375)]


def test_a_step_readied_within_an_instant_waits_for_the_next_pass():
    """Greedy: z (zero duration) readies a, earlier in program order, while the pass is past
    it; b, later, takes the engine in the same pass, and a waits for it, as in the rescan."""
    acts = [Activity("a", engines=("e",), after=("z",), fixed_s=1.0), Activity("z"),
            Activity("b", engines=("e",), fixed_s=1.0)]
    got = simulate(acts, policy="greedy")
    assert got == reference_simulate(acts, policy="greedy")
    assert (got.by_id()["b"].start_s, got.by_id()["a"].start_s) == (0.0, 1.0)


def test_the_comparison_can_fail():
    acts, capacities = random_application(random.Random(3))
    assert isinstance(outcome(reference_simulate, acts, capacities, "greedy"), Timeline)
    # a step 50 ps longer than its model time is a real difference, beyond the grid's bound
    slower = [Activity(a.id, engines=a.engines, after=a.after, fixed_s=a.fixed_s + 50e-12 * (i == 0),
                       bytes=a.bytes, links=a.links, rate_cap=a.rate_cap) for i, a in enumerate(acts)]
    ref = reference_simulate(acts, capacities, policy="greedy")
    assert agree_within_the_grid(simulate(acts, capacities, policy="greedy"), ref, len(acts))
    assert not agree_within_the_grid(simulate(slower, capacities, policy="greedy"), ref, len(acts))


def reference_simulate(activities, capacities=None, policy="in-order"):
    """The rescanning simulation the event-driven one replaced, kept as the reference."""
    if policy not in POLICIES:
        raise InvalidParameter(f"engine policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    activities = list(activities)
    capacities = capacities or {}
    index, caps = check_activities(activities, capacities)
    n = len(activities)
    fixed = [exact(a.fixed_s, f"{a.name or a.id}: duration") for a in activities]
    volume = [exact(a.bytes, f"{a.name or a.id}: bytes") for a in activities]
    rate_cap = [exact(a.rate_cap, f"{a.name or a.id}: bandwidth", allow_none=True, positive=True)
                for a in activities]
    deps = [[index[d] for d in a.after] for a in activities]
    queue: dict = {}  # engine -> activity indices using it, program order
    for i, a in enumerate(activities):
        for e in a.engines:
            queue.setdefault(e, []).append(i)
    head = {e: 0 for e in queue}  # engine -> position of the first activity not yet started

    t = Fraction(0)
    phase = ["waiting"] * n  # waiting -> fixed -> data -> done
    start = [None] * n
    end = [None] * n
    ready = [None] * n
    cause: list = [None] * n
    fixed_end = [None] * n
    left = list(volume)
    engine_holder: dict = {}
    engine_released: dict = {}  # engine -> (time, activity index) of the last release
    busy: dict = {}
    done_count = 0

    def finish(i):
        nonlocal done_count
        phase[i] = "done"
        end[i] = t
        done_count += 1
        for e in activities[i].engines:
            engine_holder.pop(e, None)
            engine_released[e] = (t, i)

    def begin_data_or_finish(i):
        if left[i] > 0:
            phase[i] = "data"
        else:
            finish(i)

    while done_count < n:
        # start everything that can start now, in program order, until nothing changes
        changed = True
        while changed:
            changed = False
            for i, a in enumerate(activities):
                if phase[i] != "waiting" or any(phase[d] != "done" for d in deps[i]):
                    continue
                if ready[i] is None:
                    ready[i] = max((end[d] for d in deps[i]), default=Fraction(0))
                if any(e in engine_holder for e in a.engines):
                    continue
                if policy == "in-order" and any(queue[e][head[e]] != i for e in a.engines):
                    continue
                for e in a.engines:
                    head[e] += 1
                start[i] = t
                last_dep = max(deps[i], key=lambda d: (end[d], d), default=None)
                if last_dep is not None and end[last_dep] == t:
                    cause[i] = activities[last_dep].id
                else:
                    released = [engine_released[e] for e in a.engines
                                if e in engine_released and engine_released[e][0] == t and t > ready[i]]
                    cause[i] = activities[max(released)[1]].id if released else (
                        activities[last_dep].id if last_dep is not None else None)
                for e in a.engines:
                    engine_holder[e] = i
                if fixed[i] > 0:
                    phase[i] = "fixed"
                    fixed_end[i] = t + fixed[i]
                else:
                    begin_data_or_finish(i)
                changed = True
        if done_count == n:
            break
        flows = {i: (activities[i].links, rate_cap[i]) for i in range(n) if phase[i] == "data"}
        rates = fair_rates(flows, caps) if flows else {}
        candidates = [fixed_end[i] for i in range(n) if phase[i] == "fixed"]
        candidates += [t + left[i] / r for i, r in rates.items()]
        if not candidates:  # cannot happen after check_activities (no cycles), but never spin
            stuck = [activities[i].id for i in range(n) if phase[i] == "waiting"]
            raise InvalidParameter(f"steps that can never start: {', '.join(stuck)}")
        t_next = min(candidates)
        dt = t_next - t
        for i, r in rates.items():
            left[i] -= r * dt
        _account_busy(busy, activities, phase, rates, t, t_next)
        t = t_next
        for i in range(n):
            if phase[i] == "fixed" and fixed_end[i] == t:
                begin_data_or_finish(i)
            elif phase[i] == "data" and i in rates and left[i] <= 0:
                left[i] = Fraction(0)
                finish(i)

    makespan = max(end, default=Fraction(0))
    return _timeline(activities, index, start, end, ready, cause, busy, makespan, unit=1)


def _account_busy(busy, activities, phase, rates, t0, t1):
    """Engines are busy while held; a link while at least one data phase crosses it."""
    dt = t1 - t0
    if dt <= 0:
        return
    engines, links = set(), set()
    for i, a in enumerate(activities):
        if phase[i] in ("fixed", "data"):
            engines.update(a.engines)
        if phase[i] == "data" and i in rates:
            links.update(a.links)
    for k in engines | links:
        busy[k] = busy.get(k, Fraction(0)) + dt
    for i, a in enumerate(activities):  # engines and links that exist but idle still appear
        for k in tuple(a.engines) + tuple(a.links):
            busy.setdefault(k, Fraction(0))
