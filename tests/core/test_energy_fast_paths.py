"""The energy's bulk path (numpy for the kernels that run alone, Fast2Sum for exact
differences) gives exactly the energies of the plain algorithm kept here — every step's,
every device's, the total — on random timelines: kernels alone, overlapping, of zero
duration, on several GPUs, with busy or idle power unknown, times that are not plain floats."""
from __future__ import annotations

import random
from fractions import Fraction

import pytest
from repetitions import repetitions

from gpumodeler.core.application.energy import ApplicationEnergy, DevicePower, energy
from gpumodeler.core.application.timeline import Activity, ScheduledActivity, Timeline, simulate
from gpumodeler.core.physical import require_physical

POWER_NAMES = {"board_power_w": "board power", "idle_power_w": "idle power"}


def reference_energy(timeline, kernel_device: dict, powers: dict, host_power_w: float | None = None,
           devices: tuple = ()) -> ApplicationEnergy:
    """The energy computed one kernel at a time on the integer grid (the plain algorithm)."""
    acts = timeline.by_id()
    makespan = Fraction(timeline.makespan_s)
    all_devices = list(dict.fromkeys(list(devices) + list(kernel_device.values())))
    unknown = []
    step_j: dict[str, float | None] = {a.id: 0.0 for a in timeline.activities}
    device_j: dict[str, float | None] = {}
    by_device: dict = {}
    for k, d in kernel_device.items():
        by_device.setdefault(d, []).append(acts[k])
    # exact arithmetic on integers: every time (a float) is a whole number of 2^-g s for one
    # g (floats are binary fractions), so sums and differences are exact and cost the same
    # at any length of the timeline; a result is a quotient of integers, correctly rounded
    times = [timeline.makespan_s] + [x for ks in by_device.values() for k in ks for x in (k.start_s, k.end_s)]
    grid_bits = max(((x.as_integer_ratio()[1]).bit_length() - 1 for x in times), default=0)
    grid = 1 << grid_bits

    def on_grid(x: float) -> int:
        p, q = x.as_integer_ratio()
        return p << (grid_bits - (q.bit_length() - 1))

    makespan_g = on_grid(timeline.makespan_s)
    for dev in all_devices:
        p = powers.get(dev, DevicePower())
        for name, value in (("board_power_w", p.busy_w), ("idle_power_w", p.idle_w)):
            if value is not None:  # a negative power would give a negative energy
                require_physical(value, f"the {POWER_NAMES[name]} of {dev}", "W", kind="power",
                                 cause=f"give {name} in W, a finite number >= 0 (in the device "
                                       f"database or as a project override)", item=name)
        kernels = by_device.get(dev, [])
        spans = [(on_grid(k.start_s), on_grid(k.end_s)) for k in kernels]
        busy = 0
        if p.busy_w is not None:
            watts, per = p.busy_w.as_integer_ratio()
            per *= grid
        # a kernel that overlaps no other and has no other's instant inside its run (one
        # compute engine runs kernels one after another) is an interval of its own: busy
        # power × its duration, the very float the sweep below gives it
        alone = reference_alone(spans)
        # the others: elementary intervals between all their start/end points, swept in
        # order: a kernel runs over (lo, hi) when it started at or before lo and ends after lo
        # (a kernel of zero duration runs over no interval, but its instant still splits one)
        starts: dict = {}
        ends: dict = {}
        instants: set = set()
        for j, (s, e) in enumerate(spans):
            if alone[j]:
                busy += e - s
                if p.busy_w is not None:
                    step_j[kernels[j].id] += watts * (e - s) / (per * 1)
            elif e <= s:
                instants.add(s)
            else:
                instants.update((s, e))
                starts.setdefault(s, []).append(j)
                ends.setdefault(e, []).append(j)
        points = sorted(instants)
        running: dict = {}  # kernel position -> kernel, while it runs
        for lo, hi in zip(points, points[1:]):
            for j in ends.get(lo, ()):
                del running[j]
            for j in starts.get(lo, ()):
                running[j] = kernels[j]
            if not running:
                continue
            busy += hi - lo
            if p.busy_w is not None:
                share = watts * (hi - lo) / (per * len(running))  # busy power × time ÷ kernels
                for k in running.values():
                    step_j[k.id] += share
        if kernels and p.busy_w is None:
            unknown.append(f"{dev}: busy (board) power is unknown")
            for k in kernels:
                step_j[k.id] = None
        idle = makespan_g - busy
        if idle > 0 and p.idle_w is None:
            unknown.append(f"{dev}: idle power is unknown")
        if (busy > 0 and p.busy_w is None) or (idle > 0 and p.idle_w is None):
            device_j[dev] = None
        else:
            device_j[dev] = float(Fraction(p.busy_w or 0) * Fraction(busy, grid)
                                  + Fraction(p.idle_w or 0) * Fraction(idle, grid))
    if host_power_w is not None:
        require_physical(host_power_w, "the host's power", "W", kind="power",
                         cause="give host_power_w in W, a finite number >= 0", item="host_power_w")
    host_j = None if host_power_w is None else float(Fraction(host_power_w) * makespan)
    if any(v is None for v in device_j.values()):
        total = None
    else:
        total = sum(v for v in device_j.values() if v is not None) + (host_j or 0.0)
    edp = None if total is None else total * timeline.makespan_s
    return ApplicationEnergy(step_j, device_j, host_j, total, edp, tuple(unknown))


def reference_alone(spans: list) -> list:
    """For each (start, end) span: True when it has a positive length, overlaps no other
    span and holds no other's instant strictly inside it (the spans sorted, grouped into
    runs of spans that overlap or fall inside one another: a run of one)."""
    alone = [False] * len(spans)
    run: list = []
    run_end = 0
    for j in sorted(range(len(spans)), key=spans.__getitem__):
        s, e = spans[j]
        if run and s < run_end:
            run.append(j)
            run_end = max(run_end, e)
            continue
        if len(run) == 1 and spans[run[0]][1] > spans[run[0]][0]:
            alone[run[0]] = True
        run = [j]
        run_end = e
    if len(run) == 1 and spans[run[0]][1] > spans[run[0]][0]:
        alone[run[0]] = True
    return alone


def random_case(rng):
    gpus = [f"g{k}" for k in range(rng.randint(1, 3))]
    acts, kernel_device = [], {}
    t = 0.0
    for i in range(rng.randint(1, 40)):
        if rng.random() < 0.7:
            t += rng.choice([0.0, 1e-6, rng.uniform(0, 3e-5), 0.1])
        start = t
        end = start + rng.choice([0.0, 2.5e-6, rng.uniform(0, 5e-5), rng.uniform(0, 1)])
        if rng.random() < 0.5:
            t = end
        kind = rng.random()
        aid = f"a{i}"
        acts.append(ScheduledActivity(aid, aid, (), (), start, end, start, None))
        if kind < 0.8:
            kernel_device[aid] = rng.choice(gpus)
    makespan = max(a.end_s for a in acts)
    powers = {g: DevicePower(busy_w=rng.choice([None, 300.0, 250, 0.1 + rng.random() * 400]),
                             idle_w=rng.choice([None, 50.0, rng.random() * 60])) for g in gpus}
    return Timeline(tuple(acts), makespan, (), {}, {}), kernel_device, powers, gpus


@pytest.mark.parametrize("seed", range(repetitions(40, 300)))   # random draws: repetitions
def test_energy_equals_the_plain_algorithm(seed):
    rng = random.Random(seed)
    timeline, kernel_device, powers, gpus = random_case(rng)
    host = rng.choice([None, 95.0])
    got = energy(timeline, kernel_device, powers, host_power_w=host, devices=tuple(gpus))
    ref = reference_energy(timeline, kernel_device, powers, host_power_w=host, devices=tuple(gpus))
    assert got == ref


def test_energy_of_a_simulated_application_equals_the_plain_algorithm():
    rng = random.Random(4)
    acts = []
    for i in range(2000):
        gpu = rng.randrange(2)
        after = (f"s{i - 1}",) if i else ()
        acts.append(Activity(f"s{i}", engines=(f"g{gpu}/compute",) if rng.random() < 0.8 else (),
                             after=after if rng.random() < 0.7 else (), fixed_s=rng.uniform(1e-6, 1e-4)))
    timeline = simulate(acts)
    kernel_device = {a.id: a.engines[0].split("/")[0] for a in acts if a.engines}
    powers = {"g0": DevicePower(400.0, 50.0), "g1": DevicePower(300.0, 45.0)}
    got = energy(timeline, kernel_device, powers, devices=("g0", "g1"))
    assert got == reference_energy(timeline, kernel_device, powers, devices=("g0", "g1"))
    assert got.energy_j is not None and got.energy_j > 0


@pytest.mark.parametrize("seed", range(repetitions(20, 150)))   # random draws: repetitions
def test_energy_of_random_simulated_applications_equals_the_plain_algorithm(seed):
    """The simulation's own timeline (its kernels found by their positions): kernels on
    several GPUs, some concurrent (no engine: they overlap), the kernels named in any order."""
    rng = random.Random(seed)
    acts, kernels = [], []
    for i in range(rng.randint(1, 60)):
        gpu = f"g{rng.randrange(3)}"
        engines = (f"{gpu}/compute",) if rng.random() < 0.7 else ()
        after = (f"s{rng.randrange(i)}",) if i and rng.random() < 0.6 else ()
        acts.append(Activity(f"s{i}", engines=engines, after=after,
                             fixed_s=rng.choice([0.0, 1e-6, rng.uniform(1e-6, 1e-4)])))
        if engines or rng.random() < 0.5:
            kernels.append((f"s{i}", gpu))
    rng.shuffle(kernels)
    kernel_device = dict(kernels)
    gpus = ("g0", "g1", "g2")
    powers = {g: DevicePower(busy_w=rng.choice([None, 300.0, rng.uniform(0.1, 400)]),
                             idle_w=rng.choice([None, 50.0])) for g in gpus}
    timeline = simulate(acts)
    got = energy(timeline, kernel_device, powers, host_power_w=95.0, devices=gpus)
    assert got == reference_energy(timeline, kernel_device, powers, host_power_w=95.0, devices=gpus)


def test_the_comparison_can_fail():
    """A kernel a little longer changes its energy as the comparison sees it."""
    timeline, kernel_device, powers, gpus = random_case(random.Random(1))
    k = next(iter(kernel_device))
    powers = {g: DevicePower(300.0, 50.0) for g in gpus}
    ref = reference_energy(timeline, kernel_device, powers, devices=tuple(gpus))
    longer = Timeline(tuple(a._replace(end_s=a.end_s + 1e-9) if a.id == k else a for a in timeline.activities),
                      timeline.makespan_s + 1e-9, (), {}, {})
    assert energy(longer, kernel_device, powers, devices=tuple(gpus)) != ref


def test_times_that_are_not_floats_take_the_plain_path():
    acts = (ScheduledActivity("k", "k", (), (), Fraction(1, 3), 1, 0, None),
            ScheduledActivity("c", "c", (), (), 0.0, 2.0, 0.0, None))
    timeline = Timeline(acts, 2.0, (), {}, {})
    args = (timeline, {"k": "g"}, {"g": DevicePower(300.0, 50.0)})
    assert energy(*args) == reference_energy(*args)
    assert isinstance(energy(*args), ApplicationEnergy)
