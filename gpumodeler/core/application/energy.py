"""Energy of a simulated application (docs/timeline.md, "Energy").

MERPSYS reported an application's energy next to its time from each device's power while
busy and idle; gpumodeler does the same on the simulated timeline:

* a GPU draws its **busy power** while its compute engine runs a kernel (the union of its
  kernels' intervals) and its **idle power** the rest of the makespan. Copies are counted in
  the idle power: the model has no separate power for copy engines (a documented
  simplification — a copy-bound application's energy is a lower bound);
* a **step's energy** is what its GPU draws while it runs: busy power × its duration, shared
  equally among kernels that overlap on one GPU (concurrent kernels); a copy's is 0 (in idle);
* the **application's energy** is the sum over GPUs of busy power × busy time + idle power ×
  idle time, plus the host's power × makespan when given; the **energy-delay product** is
  energy × makespan.

Busy power defaults to the board power (TDP) from the device database; an idle power is
only known where a source gives one. A value that is needed and unknown leaves the energy
unknown (``None``) and :attr:`ApplicationEnergy.unknown` says which device lacks which value.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gpumodeler.core.physical import require_physical

POWER_NAMES = {"board_power_w": "board power", "idle_power_w": "idle power"}


@dataclass(frozen=True)
class DevicePower:
    """Power of one device in W (``None`` = unknown)."""

    busy_w: float | None = None
    idle_w: float | None = None


@dataclass(frozen=True)
class ApplicationEnergy:
    step_j: dict  # activity id -> J (None when the step's GPU has no busy power)
    device_j: dict  # device -> J (None when unknown)
    host_j: float | None
    energy_j: float | None
    energy_delay_js: float | None
    unknown: tuple  # messages naming each missing value


def energy(timeline, kernel_device: dict, powers: dict, host_power_w: float | None = None,
           devices: tuple = ()) -> ApplicationEnergy:
    """Energy of ``timeline``. ``kernel_device``: kernel activity id -> device id (copies are
    absent); ``powers``: device id -> :class:`DevicePower`; ``devices``: every GPU of the
    system (a GPU that runs nothing still draws idle power)."""
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
        alone = _alone(spans)
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


def _alone(spans: list) -> list:
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
