"""Kernels that run at the same time on one GPU share its busy power for the time they
overlap: the GPU draws its board power once, not once per kernel."""
from gpumodeler.core.application.energy import DevicePower, energy
from gpumodeler.core.application.timeline import ScheduledActivity, Timeline


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
