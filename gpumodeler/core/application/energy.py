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
import itertools
import operator
import numpy as np

from gpumodeler.core.application.timeline import columns_of, positions_of
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
    makespan = Fraction(timeline.makespan_s)
    all_devices = list(dict.fromkeys(list(devices) + list(kernel_device.values())))
    unknown = []
    all_ids, starts_l, ends_l = columns_of(timeline)
    positions = positions_of(timeline)  # (the simulation's own: ids unique, in program order)
    step_j: dict[str, float | None] = dict.fromkeys(all_ids if positions is None else positions, 0.0)
    device_j: dict[str, float | None] = {}
    # exact arithmetic on integers: every time (a float) is a whole number of 2^-g s for one
    # g (floats are binary fractions), so sums and differences are exact and cost the same
    # at any length of the timeline; a result is a quotient of integers, correctly rounded
    columns = _kernel_columns(timeline, all_ids, starts_l, ends_l, kernel_device, len(step_j), positions)
    if columns is None:  # (times that are not plain floats, a kernel not in the timeline...)
        acts = timeline.by_id()
        by_device: dict = {}
        for k, d in kernel_device.items():
            by_device.setdefault(d, []).append(acts[k])
        times = [timeline.makespan_s] + [x for ks in by_device.values() for k in ks for x in (k.start_s, k.end_s)]
        grid_bits = max(((x.as_integer_ratio()[1]).bit_length() - 1 for x in times), default=0)
    else:
        grid_bits, by_device = columns
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
        if columns is None:
            kernels = by_device.get(dev, [])
            ids = [k.id for k in kernels]
            busy = _busy_plain(kernels, on_grid, grid, p.busy_w, step_j)
        else:
            ids, starts, ends = by_device.get(dev, ([], None, None))
            busy = _busy_columns(ids, starts, ends, grid_bits, p.busy_w, step_j) if ids else 0
        if ids and p.busy_w is None:
            unknown.append(f"{dev}: busy (board) power is unknown")
            for k in ids:
                step_j[k] = None
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


_MAX_GRID_BITS = 960  # a time of up to 2^60 s times 2^grid_bits stays a finite float


def _kernel_columns(timeline, all_ids: list, starts_l: list, ends_l: list, kernel_device: dict,
                    distinct_ids: int, positions: dict | None = None):
    """(grid bits, device -> (kernel ids, start and end float arrays)), read in bulk; None
    when the plain reading is needed: ids repeated, a kernel not in the timeline, a time
    that is not a float >= 0 below 2^60 s, or a grid finer than 2^-960 s. ``positions``:
    the simulation's id -> position (:func:`positions_of`), when the timeline is its own:
    then the kernels are found by their ids (fewer than the steps) and the times are floats."""
    makespan = timeline.makespan_s
    if distinct_ids != len(all_ids) or type(makespan) is not float or not 0.0 <= makespan < 2.0 ** 60:
        return None
    kernel: np.ndarray | list
    if positions is not None:
        at = list(map(positions.get, kernel_device))
        if None in at:  # (a kernel not in the timeline)
            return None
        kernel = sorted(at)  # (their positions, in program order: only the kernels are read)
        ids = list(map(all_ids.__getitem__, kernel))
        devs = list(map(kernel_device.__getitem__, ids))
    else:
        dev_of = list(map(kernel_device.get, all_ids))  # None: not a kernel
        mask = list(map(operator.is_not, dev_of, itertools.repeat(None)))
        devs = list(itertools.compress(dev_of, mask))
        if len(devs) != len(kernel_device):
            return None
        ids = list(itertools.compress(all_ids, mask))
        kernel = np.array(mask, dtype=bool)
    if not kernel_device:
        return _denominator_bits(np.array([makespan])), {}
    if positions is None and set(map(type, starts_l)) | set(map(type, ends_l)) != {float}:
        return None
    if positions is not None:
        starts = np.fromiter(map(starts_l.__getitem__, kernel), dtype=np.float64, count=len(kernel))
        ends = np.fromiter(map(ends_l.__getitem__, kernel), dtype=np.float64, count=len(kernel))
    else:
        starts = np.fromiter(starts_l, dtype=np.float64, count=len(starts_l))[kernel]
        ends = np.fromiter(ends_l, dtype=np.float64, count=len(ends_l))[kernel]
    if not (bool((starts >= 0).all()) and bool((ends >= starts).all()) and float(ends.max()) < 2.0 ** 60):
        return None
    bits = max(_denominator_bits(np.array([makespan])), _denominator_bits(starts), _denominator_bits(ends))
    if bits > _MAX_GRID_BITS:
        return None
    by_device = {}
    distinct = list(dict.fromkeys(devs))
    if len(distinct) == 1:
        by_device[distinct[0]] = (ids, starts, ends)
        return bits, by_device
    for d in distinct:
        mine = np.array(list(map(operator.eq, devs, itertools.repeat(d))), dtype=bool)
        by_device[d] = (list(itertools.compress(ids, mine.tolist())), starts[mine], ends[mine])
    return bits, by_device


def _denominator_bits(x) -> int:
    """The largest g such that some float of ``x`` (finite) is an odd multiple of 2^-g, or 0:
    x = m·2^e (frexp, 0.5 <= m < 1), M = m·2^53 an integer, x = (M / 2^z)·2^(e-53+z) with z
    the trailing zero bits of M."""
    x = x[x != 0]
    if not x.size:
        return 0
    m, e = np.frexp(x)
    whole = np.ldexp(m, 53).astype(np.int64)
    lowest = whole & -whole
    zeros = np.frexp(lowest.astype(np.float64))[1] - 1
    return max(0, int((53 - e - zeros).max()))


def _busy_columns(ids: list, starts, ends, grid_bits: int, busy_w, step_j: dict) -> int:
    """:func:`_busy_plain` on float arrays: the alone kernels found with numpy (sorted by
    start and end, a run starts where the start reaches the largest end before it), their
    busy time summed as integers on the grid, their energy busy power × (end − start) as a
    float product where the difference is exact (Fast2Sum's error term is 0: then the
    product is the correctly rounded quotient :func:`_busy_plain` computes), the others
    (overlapping kernels, or a difference that is not exact) as there."""
    scale = 2.0 ** grid_bits  # (a power of two: a time times it is its exact integer on the grid)
    order = np.lexsort((ends, starts))
    s_sorted, e_sorted = starts[order], ends[order]
    new_run = np.ones(len(order), dtype=bool)
    new_run[1:] = s_sorted[1:] >= np.maximum.accumulate(e_sorted)[:-1]
    run = np.cumsum(new_run) - 1
    alone = np.empty(len(order), dtype=bool)
    alone[order] = (np.bincount(run)[run] == 1) & (e_sorted > s_sorted)
    busy = sum(map(int, (ends[alone] * scale).tolist())) - sum(map(int, (starts[alone] * scale).tolist()))
    others = np.flatnonzero(~alone)
    if busy_w is not None:
        diff = ends - starts
        w = float(busy_w)
        exact = ((ends - diff) - starts == 0) & (diff > 1e-290) & alone  # (no subnormal product)
        if not (w == busy_w and (w == 0 or 1e-15 < w < 1e200)):
            exact[:] = False
        step_j.update(zip(itertools.compress(ids, exact.tolist()), (w * diff[exact] + 0.0).tolist()))
        watts, per = busy_w.as_integer_ratio()
        per <<= grid_bits
        for j in np.flatnonzero(alone & ~exact).tolist():
            step_j[ids[j]] += watts * (int(ends[j] * scale) - int(starts[j] * scale)) / per
    if others.size:
        spans = list(zip(map(int, (starts[others] * scale).tolist()), map(int, (ends[others] * scale).tolist())))
        busy += _sweep(spans, [ids[j] for j in others.tolist()], busy_w, grid_bits, step_j)
    return busy


def _busy_plain(kernels: list, on_grid, grid: int, busy_w, step_j: dict) -> int:
    """Busy time on the grid of a device's ``kernels`` (the union of their intervals), each
    kernel's energy added to ``step_j`` when ``busy_w`` is known."""
    spans = [(on_grid(k.start_s), on_grid(k.end_s)) for k in kernels]
    busy = 0
    if busy_w is not None:
        watts, per = busy_w.as_integer_ratio()
        per *= grid
    # a kernel that overlaps no other and has no other's instant inside its run (one
    # compute engine runs kernels one after another) is an interval of its own: busy
    # power × its duration, the very float the sweep below gives it
    alone = _alone(spans)
    rest = []
    for j, (s, e) in enumerate(spans):
        if alone[j]:
            busy += e - s
            if busy_w is not None:
                step_j[kernels[j].id] += watts * (e - s) / (per * 1)
        else:
            rest.append(j)
    return busy + _sweep([spans[j] for j in rest], [kernels[j].id for j in rest], busy_w,
                         grid.bit_length() - 1, step_j)


def _sweep(spans: list, ids: list, busy_w, grid_bits: int, step_j: dict) -> int:
    """Busy time on the grid of kernels that overlap (``spans`` on the grid), and their
    energies: the elementary intervals between all their start/end points, swept in order;
    a kernel runs over (lo, hi) when it started at or before lo and ends after lo (a kernel
    of zero duration runs over no interval, but its instant still splits one); the busy
    power over an interval is shared equally among the kernels running."""
    starts: dict = {}
    ends: dict = {}
    instants: set = set()
    for j, (s, e) in enumerate(spans):
        if e <= s:
            instants.add(s)
        else:
            instants.update((s, e))
            starts.setdefault(s, []).append(j)
            ends.setdefault(e, []).append(j)
    if busy_w is not None:
        watts, per = busy_w.as_integer_ratio()
        per <<= grid_bits
    busy = 0
    points = sorted(instants)
    running: dict = {}  # kernel position -> kernel id, while it runs
    for lo, hi in zip(points, points[1:]):
        for j in ends.get(lo, ()):
            del running[j]
        for j in starts.get(lo, ()):
            running[j] = ids[j]
        if not running:
            continue
        busy += hi - lo
        if busy_w is not None:
            share = watts * (hi - lo) / (per * len(running))  # busy power × time ÷ kernels
            for k in running.values():
                step_j[k] += share
    return busy


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
