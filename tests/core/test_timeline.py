"""Timeline simulation: hand-computed cases and properties (docs/timeline.md)."""
from fractions import Fraction
import math
import operator
import random

import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.core.application.energy import DevicePower, energy
from gpumodeler.core.application.link_sharing import integer_fair_rates
from gpumodeler.core.application.timeline import Activity, fair_rates, simulate
from gpumodeler.core.errors import InvalidParameter


def copy(id, engine, nbytes, link, startup=0.0, cap=10.0, after=()):
    return Activity(id, id, engines=(engine,), after=tuple(after), fixed_s=startup, bytes=nbytes,
                    links=(link,), rate_cap=cap)


def kernel(id, engine, seconds, after=()):
    return Activity(id, id, engines=(engine,), after=tuple(after), fixed_s=seconds)


def times(tl):
    return {a.id: (a.start_s, a.end_s) for a in tl.activities}


def test_two_streams_overlap_copy_and_compute():
    # stream A: c1 -> k1, stream B: c2 -> k2; one copy engine, one compute engine.
    # c1: 1 s startup + 10 B at 10 B/s = 2 s. c2 waits for the copy engine: 2..4.
    # k1 (3 s) runs 2..5 while c2 copies; k2 is ready at 4 but the compute engine is busy
    # until 5: 5..8. Critical path c1 -> k1 -> k2.
    acts = [copy("c1", "g/copy", 10, "pcie:htod", startup=1), kernel("k1", "g/compute", 3, ["c1"]),
            copy("c2", "g/copy", 10, "pcie:htod", startup=1), kernel("k2", "g/compute", 3, ["c2"])]
    tl = simulate(acts, {"pcie:htod": 10})
    assert times(tl) == {"c1": (0, 2), "k1": (2, 5), "c2": (2, 4), "k2": (5, 8)}
    assert tl.makespan_s == 8
    assert tl.critical_path == ("c1", "k1", "k2")
    assert tl.busy_fraction["g/compute"] == 6 / 8
    assert tl.busy_fraction["g/copy"] == 4 / 8
    # the link carries data 1..2 and 3..4 (startups use no bandwidth)
    assert tl.busy_s["pcie:htod"] == 2


def test_two_copies_share_one_link():
    # a: 100 B, b: 50 B, both from t=0 on their own engines over one 10 B/s link: 5 B/s each
    # until b ends at 10; a has 50 B left, alone at 10 B/s: ends at 15 (= 150 B / 10 B/s).
    tl = simulate([copy("a", "g1/copy", 100, "root"), copy("b", "g2/copy", 50, "root")], {"root": 10})
    assert times(tl) == {"a": (0, 15), "b": (0, 10)}
    # with a 1 s startup on a: b alone 0..1 (10 B), shared 1..9 (40 B each),
    # a's last 60 B alone 9..15.
    tl = simulate([copy("a", "g1/copy", 100, "root", startup=1), copy("b", "g2/copy", 50, "root")],
                  {"root": 10})
    assert times(tl) == {"a": (0, 15), "b": (0, 9)}


def test_rate_caps_are_max_min_fair():
    rates = fair_rates({"a": (("l",), Fraction(4)), "b": (("l",), Fraction(10))}, {"l": Fraction(10)})
    assert rates == {"a": 4, "b": 6}
    # three flows, two links: x crosses both
    rates = fair_rates({"x": (("l1", "l2"), None), "y": (("l1",), None), "z": (("l2",), None)},
                       {"l1": Fraction(10), "l2": Fraction(4)})
    assert rates == {"x": 2, "z": 2, "y": 8}


def test_four_gpu_scatter_compute_gather():
    # host root 20 B/s each way; four GPUs, each its own link (10 B/s) and engines.
    # scatter: 4 x 100 B share the root at 5 B/s -> all end at 20; kernels 10 s: 20..30;
    # gather 4 x 100 B share the root's other direction: 30..50.
    acts, caps = [], {"root:htod": 20, "root:dtoh": 20}
    for g in range(4):
        caps[f"l{g}:htod"] = caps[f"l{g}:dtoh"] = 10
    for g in range(4):
        acts.append(Activity(f"s{g}", engines=(f"g{g}/copy-htod",), bytes=100,
                             links=(f"l{g}:htod", "root:htod"), rate_cap=10))
    for g in range(4):
        acts.append(kernel(f"k{g}", f"g{g}/compute", 10, [f"s{g}"]))
    for g in range(4):
        acts.append(Activity(f"t{g}", engines=(f"g{g}/copy-dtoh",), after=(f"k{g}",), bytes=100,
                             links=(f"l{g}:dtoh", "root:dtoh"), rate_cap=10))
    tl = simulate(acts, caps)
    got = times(tl)
    for g in range(4):
        assert got[f"s{g}"] == (0, 20) and got[f"k{g}"] == (20, 30) and got[f"t{g}"] == (30, 50)
    assert tl.makespan_s == 50
    assert tl.critical_path == ("s0", "k0", "t0")
    assert tl.busy_fraction["root:htod"] == 20 / 50


def test_single_engine_makespan_is_the_sum():
    acts = [kernel("a", "e", 1.5), copy("b", "e", 30, "l", startup=0.25), kernel("c", "e", 2)]
    tl = simulate(acts, {"l": 10})
    assert tl.makespan_s == 1.5 + 0.25 + 3 + 2
    assert tl.critical_path == ("a", "b", "c")


def test_in_order_engine_queue_and_greedy():
    # x (engine E1, 1 s); a (engine E, 10 s) after x; c (engine E, 1 s) independent.
    acts = [kernel("x", "E1", 1), kernel("a", "E", 10, ["x"]), kernel("c", "E", 1)]
    inorder = simulate(acts)  # c waits behind a in E's queue
    assert times(inorder)["c"] == (11, 12)
    greedy = simulate(acts, policy="greedy")  # c overtakes a
    assert times(greedy)["c"] == (0, 1) and times(greedy)["a"] == (1, 11)


def test_bandwidth_sharing_anomaly_is_documented():
    # Delaying a competing copy leaves the critical copy the whole link: the makespan
    # shrinks from 120 to 115. This is physics, not a bug (docs/timeline.md).
    base = [kernel("w", "h", 5), copy("y", "g1/copy", 100, "l"), kernel("k", "g1/compute", 100, ["y"]),
            copy("x", "g2/copy", 100, "l")]
    assert simulate(base, {"l": 10}).makespan_s == 120
    delayed = base[:3] + [copy("x", "g2/copy", 100, "l", after=["w"])]
    assert simulate(delayed, {"l": 10}).makespan_s == 115


def test_concurrent_kernels_and_zero_durations():
    acts = [Activity("k1", fixed_s=2), Activity("k2", fixed_s=3), Activity("sync", after=("k1", "k2")),
            kernel("k3", "g/compute", 1, ["sync"])]
    tl = simulate(acts)
    assert times(tl) == {"k1": (0, 2), "k2": (0, 3), "sync": (3, 3), "k3": (3, 4)}
    assert tl.critical_path == ("k2", "sync", "k3")


@pytest.mark.parametrize("acts, caps, message", [
    ([Activity("a", after=("b",)), Activity("b", after=("a",))], {}, "cycle: a -> b -> a"),
    ([Activity("a", after=("zz",))], {}, "depends on 'zz'"),
    ([Activity("a"), Activity("a")], {}, "unique"),
    ([Activity("a", bytes=5, links=("nope",))], {}, "link 'nope' has no bandwidth"),
    ([Activity("a", fixed_s=-1)], {}, ">= 0"),
    ([Activity("a", fixed_s=float("inf"))], {}, "finite"),
    ([Activity("a", bytes=1, links=("l",))], {"l": 0}, "> 0"),
])
def test_bad_input_is_named(acts, caps, message):
    with pytest.raises(InvalidParameter, match=message.replace("(", r"\(")):
        simulate(acts, caps)


def test_energy_busy_idle_and_unknown():
    acts = [kernel("k1", "g1/compute", 2), kernel("k2", "g1/compute", 3, ["k1"]), kernel("k3", "g2/compute", 1)]
    tl = simulate(acts)
    e = energy(tl, {"k1": "g1", "k2": "g1", "k3": "g2"},
               {"g1": DevicePower(300, 50), "g2": DevicePower(200, 40)}, host_power_w=100)
    assert e.step_j == {"k1": 600, "k2": 900, "k3": 200}
    assert e.device_j == {"g1": 1500, "g2": 200 + 40 * 4}
    assert e.host_j == 500
    assert e.energy_j == 1500 + 360 + 500
    assert e.energy_delay_js == e.energy_j * 5
    e = energy(tl, {"k1": "g1", "k2": "g1", "k3": "g2"}, {"g1": DevicePower(300, 50), "g2": DevicePower(200)})
    assert e.energy_j is None and e.unknown == ("g2: idle power is unknown",)
    assert e.step_j["k3"] == 200  # a step needs only the busy power


def _random_app(rnd, n, share):
    acts = []
    for i in range(n):
        after = tuple(f"a{j}" for j in range(i) if rnd.random() < 0.2)
        engine = f"e{rnd.randrange(3)}"
        if rnd.random() < 0.5:
            link = "shared" if share else f"l{i}"
            acts.append(Activity(f"a{i}", engines=(engine,), after=after, fixed_s=rnd.randint(0, 3),
                                 bytes=rnd.randint(1, 40), links=(link,), rate_cap=rnd.choice([5, 10])))
        else:
            acts.append(Activity(f"a{i}", engines=(engine,), after=after, fixed_s=rnd.randint(1, 9)))
    caps = {"shared": 10, **{f"l{i}": 10 for i in range(n)}}
    return acts, caps


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 12))
def test_adding_a_dependency_never_shortens_without_shared_links(seed, n):
    rnd = random.Random(seed)
    acts, caps = _random_app(rnd, n, share=False)
    before = simulate(acts, caps).makespan_s
    i = rnd.randrange(1, n)
    j = rnd.randrange(i)
    a = acts[i]
    acts[i] = Activity(a.id, a.name, a.engines, tuple(dict.fromkeys(a.after + (acts[j].id,))),
                       a.fixed_s, a.bytes, a.links, a.rate_cap)
    assert simulate(acts, caps).makespan_s >= before


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 12))
def test_a_faster_link_never_lengthens_without_sharing(seed, n):
    rnd = random.Random(seed)
    acts, caps = _random_app(rnd, n, share=False)
    slow = simulate(acts, caps).makespan_s
    faster = {k: v * 2 for k, v in caps.items()}
    acts2 = [Activity(a.id, a.name, a.engines, a.after, a.fixed_s, a.bytes, a.links,
                      None if a.rate_cap is None else a.rate_cap * 2) for a in acts]
    assert simulate(acts2, faster).makespan_s <= slow


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 10))
def test_one_engine_no_overlap_is_the_sum(seed, n):
    rnd = random.Random(seed)
    acts = [Activity(f"a{i}", engines=("e",), fixed_s=rnd.randint(0, 5), bytes=rnd.randint(0, 50),
                     links=("l",), rate_cap=7) for i in range(n)]
    # on the picosecond grid each phase is its model time rounded up to a whole ps
    ps = 10 ** 12
    total_ps = sum(math.ceil(Fraction(a.fixed_s) * ps) + math.ceil(Fraction(a.bytes, 7) * ps) for a in acts)
    got = simulate(acts, {"l": 7}).makespan_s
    assert got == total_ps / ps
    exact = sum(Fraction(a.fixed_s) + Fraction(a.bytes, 7) for a in acts)
    assert exact <= Fraction(got) + Fraction(1, ps) and Fraction(got) - exact <= Fraction(2 * n, ps)


@pytest.mark.parametrize("seed", range(200))
def test_the_integer_fair_rates_are_progressive_filling_rounded_down(seed):
    """The simulation's integer max-min allocation (first round from the caller's counts,
    caps-fit shortcut) equals the general progressive filling with shares rounded down, and
    never puts a link over its capacity."""
    rnd = random.Random(seed)
    # capacities of at least 2**50 quanta, as the simulation makes them, so no share is 0
    caps = {f"l{k}": rnd.randint(2 ** 50, 2 ** 50 * 10 ** rnd.randint(0, 6)) for k in range(rnd.randint(1, 4))}
    links, rate_cap = [], []
    for _ in range(rnd.randint(1, 8)):
        path = tuple(rnd.sample(sorted(caps), rnd.randint(0, len(caps))))
        cap = rnd.choice([None, rnd.randint(2 ** 50, max(caps.values()))])
        links.append(path)
        rate_cap.append(cap if path else cap or 2 ** 50)  # a copy without links has a cap
    active = list(range(len(links)))
    users, load = {}, {}
    for i in active:
        for link in links[i]:
            users[link] = users.get(link, 0) + 1
            load[link] = load.get(link, 0) + (caps[link] + 1 if rate_cap[i] is None else rate_cap[i])
    got = integer_fair_rates(active, links, rate_cap, caps, users, load)
    flows = {i: (links[i], rate_cap[i]) for i in active}
    assert got == fair_rates(flows, caps, operator.floordiv)
    for link, capacity in caps.items():
        assert sum(got[i] for i in active if link in links[i]) <= capacity
    assert all(r > 0 for r in got.values())


def test_the_grid_rounds_durations_up_to_a_picosecond_and_bytes_to_whole_bytes():
    # 2.5 B at 1 B/s: 3 whole bytes, 3 s; a 1.5 ps kernel takes 2 ps, then 0.25 ps takes 1 ps
    tl = simulate([copy("c", "g/copy", 2.5, "l", cap=1.0), kernel("k", "g/compute", 1.5e-12, ["c"]),
                   kernel("k2", "g/compute", 0.25e-12, ["k"])], {"l": 1.0})
    assert times(tl) == {"c": (0, 3), "k": (3, 3 + 2e-12), "k2": (3 + 2e-12, 3 + 3e-12)}
    # never less than the model's time: 1/3 s rounds up to 333333333334 ps
    tl = simulate([copy("c", "g/copy", 1, "l", cap=3.0)], {"l": 3.0})
    assert tl.makespan_s == 333_333_333_334 / 10 ** 12 > 1 / 3


def test_the_collector_is_restored_after_a_simulation_even_a_refused_one():
    import gc
    assert gc.isenabled()
    simulate([kernel("k", "g/compute", 1.0)])
    assert gc.isenabled()
    with pytest.raises(InvalidParameter):
        simulate([Activity("a", fixed_s=-1)])
    assert gc.isenabled()
    gc.disable()
    try:
        simulate([kernel("k", "g/compute", 1.0)])
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
