"""Kernels that run at the same time on one GPU share its busy power for the time they
overlap: the GPU draws its board power once, not once per kernel."""
from fractions import Fraction
import random

import pytest

from gpumodeler.core.application.energy import DevicePower, energy
from gpumodeler.core.application.timeline import Activity, ScheduledActivity, Timeline, simulate


def _kernel(aid, start, end, engine):
    return ScheduledActivity(aid, aid, (engine,), (), start, end, start, None)


def _timeline(*acts):
    makespan = max(a.end_s for a in acts)
    return Timeline(tuple(acts), makespan, (), {}, {})


def test_overlapping_kernels_share_the_board_power():
    # k1 runs 0..4 s, k2 2..6 s on the same GPU (two streams): 2 s alone each, 2 s together
    tl = _timeline(_kernel("k1", 0, 4, "g1/s1"), _kernel("k2", 2, 6, "g1/s2"))
    e = energy(tl, {"k1": "g1", "k2": "g1"}, {"g1": DevicePower(busy_w=100, idle_w=10)})
    # each: 2 s alone at 100 W + half of 2 s together at 100 W = 300 J (not 400 J)
    assert e.step_j == {"k1": 300, "k2": 300}
    # the GPU is busy 6 s: the steps' energies add up to its busy energy
    assert e.device_j == {"g1": 600}
    assert sum(e.step_j.values()) == e.device_j["g1"]


def test_three_kernels_overlapping_share_in_thirds():
    tl = _timeline(_kernel("a", 0, 3, "g/s1"), _kernel("b", 0, 3, "g/s2"), _kernel("c", 0, 3, "g/s3"))
    e = energy(tl, {"a": "g", "b": "g", "c": "g"}, {"g": DevicePower(busy_w=90, idle_w=0)})
    assert e.step_j == {"a": 90, "b": 90, "c": 90}
    assert e.energy_j == 270


def test_kernels_on_different_gpus_do_not_share():
    tl = _timeline(_kernel("k1", 0, 4, "g1/s1"), _kernel("k2", 0, 4, "g2/s1"))
    e = energy(tl, {"k1": "g1", "k2": "g2"},
               {"g1": DevicePower(busy_w=100, idle_w=0), "g2": DevicePower(busy_w=50, idle_w=0)})
    assert e.step_j == {"k1": 400, "k2": 200}


def _energy_by_rescan(timeline, kernel_device, busy_w):
    """Per-step energy as the rescan of every kernel per elementary interval computed it."""
    acts = timeline.by_id()
    step_j = {a.id: 0.0 for a in timeline.activities}
    for dev in dict.fromkeys(kernel_device.values()):
        kernels = [acts[k] for k, d in kernel_device.items() if d == dev]
        points = sorted({Fraction(k.start_s) for k in kernels} | {Fraction(k.end_s) for k in kernels})
        for lo, hi in zip(points, points[1:]):
            running = [k for k in kernels if Fraction(k.start_s) <= lo and Fraction(k.end_s) >= hi]
            for k in running:
                step_j[k.id] += float(Fraction(busy_w) * (hi - lo) / len(running))
    return step_j


@pytest.mark.parametrize("seed", range(60))
def test_the_sweep_gives_the_energies_of_the_rescan(seed):
    """Overlapping concurrent kernels (engine-free), zero-duration ones splitting intervals,
    on two GPUs: the per-step energies are equal, float for float, to the rescan's."""
    rng = random.Random(seed)
    acts, kernel_device = [], {}
    for i in range(rng.randint(1, 12)):
        after = (f"k{rng.randrange(i)}",) if i and rng.random() < 0.4 else ()
        acts.append(Activity(f"k{i}", after=after, fixed_s=rng.choice([0.0, 1.0, 0.5, rng.uniform(0, 2)])))
        kernel_device[f"k{i}"] = rng.choice(["g0", "g1"])
    tl = simulate(acts)
    powers = {"g0": DevicePower(busy_w=rng.uniform(50, 300), idle_w=20.0),
              "g1": DevicePower(busy_w=150.0, idle_w=20.0)}
    got = energy(tl, kernel_device, powers, devices=("g0", "g1")).step_j
    for dev in ("g0", "g1"):
        ids = {k for k, d in kernel_device.items() if d == dev}
        want = _energy_by_rescan(tl, {k: d for k, d in kernel_device.items() if d == dev}, powers[dev].busy_w)
        assert {k: got[k] for k in ids} == {k: want[k] for k in ids}


def test_a_zero_duration_kernel_still_splits_the_interval_it_falls_in():
    """The energy of a step is a sum of float terms, one per elementary interval; a kernel of
    zero duration at 0.7 s splits a's 0..3 s into two terms, as the rescan did (a single term
    would round differently: 0.30000000000000004 J instead of 0.3 J)."""
    tl = _timeline(_kernel("a", 0.0, 3.0, "g/s1"), _kernel("z", 0.7, 0.7, "g/s2"))
    kernel_device = {"a": "g", "z": "g"}
    got = energy(tl, kernel_device, {"g": DevicePower(busy_w=0.1, idle_w=0.0)}).step_j
    assert got == _energy_by_rescan(tl, kernel_device, 0.1)
    assert got["a"] == float(Fraction(0.1) * Fraction(0.7)) + float(Fraction(0.1) * (3 - Fraction(0.7)))


@pytest.mark.parametrize("seed", range(30))
def test_kernels_one_after_another_give_the_energies_of_the_rescan(seed):
    """Kernels on one compute engine (one after another, some of zero duration, so the
    energy takes its path for kernels that never overlap) and sometimes one concurrent
    kernel (so it sweeps): float for float the rescan's energies."""
    rng = random.Random(seed)
    acts, kernel_device = [], {}
    for i in range(rng.randint(1, 30)):
        engine = () if rng.random() < 0.03 else ("g0/compute",)
        acts.append(Activity(f"k{i}", engines=engine,
                             fixed_s=rng.choice([0.0, 1.0, 0.1, rng.uniform(0, 2)])))
        kernel_device[f"k{i}"] = "g0"
    tl = simulate(acts)
    busy_w = rng.choice([0.1, 250.0, rng.uniform(50, 300)])
    got = energy(tl, kernel_device, {"g0": DevicePower(busy_w=busy_w, idle_w=20.0)},
                 devices=("g0",))
    assert got.step_j == _energy_by_rescan(tl, kernel_device, busy_w)
    busy = sum(Fraction(a.end_s) - Fraction(a.start_s) for a in tl.activities
               if not any(Fraction(b.start_s) <= Fraction(a.start_s) < Fraction(b.end_s)
                          for b in tl.activities if b is not a and b.start_s < a.start_s))
    if all(a.engines for a in acts):
        assert got.device_j["g0"] == float(Fraction(busy_w) * busy + Fraction(20.0)
                                           * (Fraction(tl.makespan_s) - busy))
