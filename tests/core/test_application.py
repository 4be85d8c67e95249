"""Applications in a project: steps -> activities (routes, engines, streams), data-parallel
splits, and the bundled example's timeline equal to its launch's prediction."""
import pytest

from gpumodeler.core.application.app import Application, Step, build, data_parallel_steps, run
from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph
from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice, Project

GPUS = {
    "fast": GPUSpec("fast", "8.0", sms=100, sm_clock_hz=1e9, cuda_cores_per_sm=64, schedulers_per_sm=4,
                    gmem_bytes_per_cycle_per_sm=16.0, copy_engines=2, board_power_w=400, idle_power_w=50),
    "slow": GPUSpec("slow", "8.0", sms=50, sm_clock_hz=1e9, cuda_cores_per_sm=64, schedulers_per_sm=4,
                    gmem_bytes_per_cycle_per_sm=16.0, board_power_w=250),
}
LINKS = {
    "pcie": LinkSpec("pcie", 10e9, 5e-6, 6e-6, 1.0, 0.5),
    "nvlink": LinkSpec("nvlink", 100e9, 1e-6, 2e-6, 1.0, 1.0, kind="nvlink"),
}
LOOKUPS = {"gpu_lookup": GPUS.__getitem__, "link_lookup": LINKS.__getitem__}


def graph():
    g = KernelGraph(name="k", latency_table="maxwell-gajger")
    g.add_instruction(Instruction.make("i1", "FFMA"))
    g.add_instruction(Instruction.make("i2", "FFMA"))
    g.add_edge(Edge("e1", "i1", "i2", "dependency", latency=6))
    return g


def system():
    p = Project("t")
    p.put("devices", PlacedDevice("h", "host", "host"))
    p.put("devices", PlacedDevice("g1", "gpu", "fast"))
    p.put("devices", PlacedDevice("g2", "gpu", "slow"))
    p.put("connections", Connection("c1", "pcie", "h", "g1", "pcie"))
    p.put("connections", Connection("c2", "pcie", "h", "g2", "pcie"))
    p.put_kernel("k", graph())
    p.put("launches", LaunchConfig("l", gpu="g1", kernel="k", block_size=256, grid_size=10000,
                                   occupancy_override=32, lam=1.0))
    return p


def test_copy_routes_engines_and_durations():
    p = system()
    app = Application("a", steps=(
        Step("up", "copy", src="h", dst="g1", size="1e9"),
        Step("down", "copy", src="g1", dst="h", size="N", stream="1"),
        Step("up2", "copy", src="h", dst="g2", size="1e9", stream="2"),
        Step("down2", "copy", src="g2", dst="h", size="1e9", stream="3"),
        Step("peer", "copy", src="g1", dst="g2", size="1e9", stream="4")), variables={"N": 2e9})
    b = build(p, app, **LOOKUPS)
    acts = {a.id: a for a in b.activities}
    # g1 has two copy engines (one per direction); g2's count is unknown -> one, with a note
    assert acts["up"].engines == ("g1/copy-htod",) and acts["down"].engines == ("g1/copy-dtoh",)
    assert acts["up2"].engines == acts["down2"].engines == ("g2/copy",)
    assert any("g2: number of copy engines unknown" in n for n in b.notes)
    # eq. 5.5 alone: t_s + n / (bw × λ)
    assert b.predictions["up"].alone_s == pytest.approx(5e-6 + 1e9 / 10e9)
    assert b.predictions["down"].alone_s == pytest.approx(6e-6 + 2e9 / (10e9 * 0.5))
    # no direct link between the GPUs: staged through the host, both links and engines
    assert acts["peer"].links == ("c1:g1>h", "c2:h>g2")
    assert acts["peer"].engines == ("g1/copy-dtoh", "g2/copy")
    assert acts["peer"].fixed_s == pytest.approx(6e-6 + 5e-6) and acts["peer"].rate_cap == 5e9
    assert b.capacities["c1:h>g1"] == 10e9 and b.capacities["c1:g1>h"] == 5e9


def test_direct_nvlink_peer_copy_and_streams():
    p = system()
    p.put("connections", Connection("nv", "nvlink", "g1", "g2", "nvlink"))
    app = Application("a", steps=(
        Step("k1", "kernel", launch="l"), Step("peer", "copy", src="g1", dst="g2", size="1e8"),
        Step("back", "copy", src="g2", dst="g1", size="1e8", stream="x", after=("k1",)),
        Step("s", "sync", stream="y")))
    b = build(p, app, **LOOKUPS)
    acts = {a.id: a for a in b.activities}
    assert acts["peer"].after == ("k1",)  # the previous step of stream "0"
    assert acts["peer"].links == ("nv:g1>g2",) and acts["peer"].fixed_s == 1e-6
    assert acts["back"].links == ("nv:g2>g1",) and acts["back"].fixed_s == 2e-6
    # a sync waits for every earlier step: named through each stream's last step
    assert acts["s"].after == ("peer", "back")


def test_kernel_step_time_is_the_launch_kernel_time_and_fraction_scales_the_grid():
    from gpumodeler.core.pipeline import evaluate_launch
    p = system()
    full = float(evaluate_launch(p, "l", **LOOKUPS).prediction.kernel.time_s)
    app = Application("a", steps=(Step("k", "kernel", launch="l"),
                                  Step("h", "kernel", launch="l", fraction=0.5, gpu="g2", stream="1")))
    b = build(p, app, **LOOKUPS)
    assert b.predictions["k"].alone_s == full
    assert b.predictions["h"].detail["grid_size"] == 5000
    assert p.launches["l"].grid_size == 10000  # the project is not changed


def test_data_parallel_proportional_split_finishes_together():
    p = system()
    steps = data_parallel_steps(p, "l", ["g1", "g2"], host="h", split="proportional",
                                scatter_size="4e8", gather_size="4e8", **LOOKUPS)
    shares = [s.fraction for s in steps if s.kind == "kernel"]
    assert sum(shares) == pytest.approx(1) and shares[0] > shares[1]
    app = Application("a", steps=steps)
    built, tl, _e = run(p, app, **LOOKUPS)
    kernels = [a for a in tl.activities if a.id.endswith("-kernel")]
    durations = [a.duration_s for a in kernels]
    assert durations[0] == pytest.approx(durations[1], rel=0.02)  # up to grid rounding
    assert [s.kind for s in steps] == ["copy", "kernel", "copy"] * 2 + ["sync"]
    even = data_parallel_steps(p, "l", ["g1", "g2"], host="h")
    assert [s.fraction for s in even if s.kind == "kernel"] == [0.5, 0.5]


def test_energy_of_the_run_uses_the_gpus_powers():
    p = system()
    app = Application("a", steps=(Step("k", "kernel", launch="l"),), host_power_w=100)
    built, tl, e = run(p, app, **LOOKUPS)
    t = tl.makespan_s
    assert e.step_j["k"] == pytest.approx(400 * t)
    # g2 has no idle power: the application's energy is unknown and says why
    assert e.energy_j is None and e.unknown == ("g2: idle power is unknown",)
    p.put("devices", PlacedDevice("g2", "gpu", "slow", overrides={"idle_power_w": 30}))
    _b, _t, e = run(p, app, **LOOKUPS)
    assert e.energy_j == pytest.approx(400 * t + 30 * t + 100 * t)


@pytest.mark.parametrize("steps, message", [
    ((Step("a", "kernel", launch="nope"),), "choose a launch"),
    ((Step("a", "copy", src="h", dst="h"),), "two different devices"),
    ((Step("a", "copy", src="h", dst="zz"),), "choose a destination device"),
    ((Step("a", "copy", src="h", dst="g1"), Step("b", "copy", src="h", dst="g1", after=("c",))),
     "not an earlier step"),
    ((Step("a", "kernel", launch="l", fraction=0),), r"\(0, 1\]"),
    ((Step("a", "fly"),), "kind must be one of"),
    ((Step("a", "copy", src="h", dst="g1", size="1/0"),), "step a"),
])
def test_bad_steps_are_named(steps, message):
    with pytest.raises(InvalidParameter, match=message):
        run(system(), Application("a", "app", steps), **LOOKUPS)


def test_no_route_is_explained():
    p = system()
    p.drop("connections", "c2")
    with pytest.raises(InvalidParameter, match="no link joins g1 and g2"):
        build(p, Application("a", steps=(Step("x", "copy", src="g1", dst="g2", size="8"),)), **LOOKUPS)


def test_copies_of_one_route_are_planned_once_but_each_has_its_own_hops():
    """(a route's hops, startup and rate are found once; each step's prediction still holds
    its own hop objects, equal to the first's: a document of the timeline shares none)"""
    steps = tuple(Step(f"c{i}", "copy", "up", "s", src="h", dst=["g1", "g2"][i % 2],
                       size=str(1000 * (i + 1))) for i in range(6))
    built = build(system(), Application("a", steps=steps), **LOOKUPS)
    hops = [built.predictions[f"c{i}"].detail["route"] for i in range(6)]
    for i in range(2, 6):
        assert hops[i] == hops[i % 2] and hops[i] is not hops[i % 2]
        assert all(h is not g for h, g in zip(hops[i], hops[i % 2]))
        a, b = built.activities[i], built.activities[i % 2]
        assert (a.links, a.engines, a.fixed_s, a.rate_cap) == (b.links, b.engines, b.fixed_s, b.rate_cap)
        assert a.bytes == 1000.0 * (i + 1)


def test_step_predictions_are_named_tuples_of_their_fields():
    from gpumodeler.core.application.app import StepPrediction
    b = build(system(), Application("a", steps=(Step("k", "kernel", launch="l"),)), **LOOKUPS)
    p = b.predictions["k"]
    assert type(p) is StepPrediction and p._fields == ("step", "kind", "device", "alone_s", "detail")
    assert (p.step, p.kind, p.device) == ("k", "kernel", "g1") and p.alone_s > 0
    assert p == StepPrediction(p.step, p.kind, p.device, p.alone_s, p.detail)


def test_build_makes_each_activity_as_its_class_does():
    """(build makes an activity as a class of the same slots that becomes an Activity: the
    same object, every slot set to the value and type __init__ sets, slotted, still frozen)"""
    import dataclasses

    from gpumodeler.core.application import app as app_module
    from gpumodeler.core.application.timeline import Activity

    assert app_module.make_activity is app_module._activity
    values = ("c1", "copy one", ("gpu1/copy",), ("k1",), 2e-6, 4096.0, ("l1:a>b",), 1e10)
    made, plain = app_module.make_activity(*values), Activity(*values)
    assert type(made) is Activity and made == plain
    assert [(getattr(made, f), type(getattr(made, f))) for f in Activity.__slots__] == \
        [(getattr(plain, f), type(getattr(plain, f))) for f in Activity.__slots__]
    assert not hasattr(made, "__dict__") and hash(made) == hash(plain)
    assert dataclasses.astuple(made) == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.fixed_s = 1.0


def test_activities_are_made_by_their_class_when_its_slots_differ(monkeypatch):
    """(a class of other fields, order or layout, or with a __post_init__, is not made by
    setting slots: build then calls the class itself)"""
    import dataclasses

    from gpumodeler.core.application import app as app_module

    assert app_module._activity_slots_fit()
    Other = dataclasses.make_dataclass("Activity", app_module._ACTIVITY_FIELDS, frozen=True)
    Reordered = dataclasses.make_dataclass("Activity", app_module._ACTIVITY_FIELDS[::-1],
                                           frozen=True, slots=True)
    Checked = dataclasses.make_dataclass("Activity", app_module._ACTIVITY_FIELDS, frozen=True,
                                         slots=True, namespace={"__post_init__": lambda self: None})
    Weak = dataclasses.make_dataclass("Activity", app_module._ACTIVITY_FIELDS, frozen=True,
                                      slots=True, weakref_slot=True)
    for cls in (Other, Reordered, Checked, Weak):
        monkeypatch.setattr(app_module, "Activity", cls)
        assert not app_module._activity_slots_fit()


@pytest.mark.parametrize("seed", range(5))
def test_a_sync_waits_for_each_streams_last_step_in_program_order(seed):
    """(a sync without ``after`` waits for each stream's last earlier step, in the order of
    those steps, however the streams take turns: the order its prediction's waits_for
    shows)"""
    import random
    rnd = random.Random(seed)
    steps, expected = [], []
    for i in range(200):
        stream = rnd.choice(["0", "1", "2", "x"])
        if rnd.random() < 0.1:
            last = {}
            for s in steps:
                last.pop(s.stream, None)
                last[s.stream] = s.id
            expected.append(tuple(last.values()))
            steps.append(Step(f"s{i}", "sync", stream=stream))
        else:
            steps.append(Step(f"c{i}", "copy", src="h", dst=rnd.choice(["g1", "g2"]), size="8",
                              stream=stream))
    built = build(system(), Application("a", steps=tuple(steps)), **LOOKUPS)
    syncs = [a for a in built.activities if a.id.startswith("s")]
    assert len(syncs) > 3 and [a.after for a in syncs] == expected
    assert [built.predictions[a.id].detail["waits_for"] for a in syncs] == [list(e) for e in expected]
