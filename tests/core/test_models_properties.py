"""Invariants every registered model keeps (hypothesis): contention never speeds a kernel up,
more bandwidth never slows any model down, and every model is monotone in the work."""
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.registry import MODELS, evaluate
from gpumodeler.core.models.result import KernelTerms, ModelInputs
from repetitions import repetitions

GPU = GPUSpec("prop", compute_capability="3.5", sms=15, sm_clock_hz=745e6, cuda_cores_per_sm=192,
              schedulers_per_sm=4, sfu_per_sm=32, fp64_units_per_sm=64,
              memory_bandwidth_bytes_per_s=288e9, memory_bandwidth_measured_bytes_per_s=183.5e9,
              smem_accesses_per_cycle_per_sm=1.0)
PARAMS = {"critical_dram_accesses": 2.0, "contention_b_cycles": 32.0, "contention_c_bytes_per_s": 300e9,
          "dram_latency_cycles": 400.0, "departure_delay_cycles": 4.0}


@st.composite
def launches(draw):
    mem = draw(st.integers(1, 40))
    issued = draw(st.floats(mem + 1, 5e3))
    kernel = KernelInputs(latency_bound=draw(st.floats(20, 5e4)), issued_instructions=issued,
                          cuda_core_instructions=draw(st.floats(0, issued - mem)),
                          gmem_bytes=mem * draw(st.sampled_from([4.0, 32.0, 128.0])),
                          smem_bank_cycles=draw(st.sampled_from([0.0, 2.0])))
    wpb = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    occupancy = wpb * draw(st.integers(1, 64 // wpb))
    return dict(kernel=kernel, grid_size=draw(st.integers(1, 200_000)), block_size=32 * wpb,
                occupancy=float(occupancy), counts={"memory_instructions": float(mem),
                                                    "synch_instructions": draw(st.sampled_from([0.0, 1.0]))},
                terms=KernelTerms(tail=draw(st.booleans())))


def run(name, gpu, launch, **params):
    return evaluate(name, ModelInputs(gpu, launch["kernel"], grid_size=launch["grid_size"],
                                      block_size=launch["block_size"], occupancy=launch["occupancy"],
                                      counts=launch["counts"], parameters=dict(PARAMS, **params),
                                      terms=launch["terms"]))


@settings(max_examples=repetitions(50, 150), deadline=None)
@given(launch=launches(), b=st.floats(0, 500), more=st.floats(0, 500))
def test_contention_never_makes_a_kernel_faster(launch, b, more):
    none = run("volkov-contention", GPU, launch, contention_b_cycles=0.0)
    some = run("volkov-contention", GPU, launch, contention_b_cycles=b)
    worse = run("volkov-contention", GPU, launch, contention_b_cycles=b + more)
    assert none.time_s <= some.time_s * (1 + 1e-9)
    assert some.time_s <= worse.time_s * (1 + 1e-9)
    assert some.quantities["latency_loaded_cycles"] >= launch["kernel"].latency_bound


def faster_memory(factor):
    return GPU.with_overrides(memory_bandwidth_bytes_per_s=288e9 * factor,
                              memory_bandwidth_measured_bytes_per_s=183.5e9 * factor)


@pytest.mark.parametrize("name", [m for m in MODELS if m != "mwp-cwp"])
@settings(max_examples=repetitions(40, 120), deadline=None)
@given(launch=launches(), factor=st.floats(1.0, 20.0))
def test_more_bandwidth_never_makes_a_model_slower(name, launch, factor):
    assert run(name, faster_memory(factor), launch).time_s <= run(name, GPU, launch).time_s * (1 + 1e-9)


@settings(max_examples=repetitions(60, 200), deadline=None)
@given(launch=launches(), blocks=st.integers(1, 40), factor=st.floats(1.0, 20.0))
def test_more_bandwidth_never_slows_volkov_contention_on_few_sms(launch, blocks, factor):
    """A grid short of one wave (at most 40 blocks on 15 SMs) runs on the active SMs only:
    the fixed point of Volkov's refined model is solved against the bound those SMs see,
    so a higher bandwidth can only lift it (a grid of one warp on one SM was slower with
    twice the bandwidth while the fixed point was capped at a full launch's share)."""
    launch = dict(launch, grid_size=blocks)
    slow, fast = run("volkov-contention", GPU, launch), run("volkov-contention", faster_memory(factor), launch)
    assert fast.time_s <= slow.time_s * (1 + 1e-9)
    assert fast.quantities["warp_throughput"] >= slow.quantities["warp_throughput"] * (1 - 1e-9)


@settings(max_examples=repetitions(70, 200), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(launch=launches(), factor=st.floats(1.0, 3.0))
def test_more_bandwidth_never_slows_mwp_cwp_within_a_case(launch, factor):
    """Hong & Kim's cases are separate formulas (H17a–c) that do not meet where the case
    changes, and the synchronisation cost (H18) grows with MWP; within one case, with MWP
    bound by bandwidth (2 <= MWP <= N − 2), CWP >= MWP when memory-bound and no barriers,
    more bandwidth never slows it."""
    launch = dict(launch, counts=dict(launch["counts"], synch_instructions=0.0))
    slow_gpu = GPU.with_overrides(memory_bandwidth_measured_bytes_per_s=10e9)  # MWP bandwidth-bound
    fast_gpu = GPU.with_overrides(memory_bandwidth_measured_bytes_per_s=10e9 * factor)
    slow, fast = run("mwp-cwp", slow_gpu, launch), run("mwp-cwp", fast_gpu, launch)
    assume(slow.quantities["case"] == fast.quantities["case"])
    n = slow.quantities["N_active_warps_per_sm"]
    assume(slow.quantities["MWP"] >= 2 and fast.quantities["MWP"] <= n - 2)
    # H17b also serves Comp_cycles > Mem_cycles with CWP < MWP, where its Comp_p·(MWP − 1)
    # grows with MWP: only the genuinely memory-bound side (CWP >= MWP) is monotone
    assume(fast.quantities["case"] != "memory-bound" or fast.quantities["CWP"] >= fast.quantities["MWP"])
    assert fast.time_s <= slow.time_s * (1 + 1e-9)


def test_mwp_cwp_case_change_can_make_more_bandwidth_slower():
    """The documented exception: at the memory-/compute-bound boundary H17b meets H17c with
    a jump, so raising the bandwidth past MWP = CWP lengthens the predicted time."""
    # Mem_L 400, Comp 0.25·40 = 10 cycles, one load: CWP = 41; N = 64. MWP_peak_BW = 40 at
    # 142.8 GB/s (H10: 142.8e9 / (0.745e9·128/400 · 15)), 44 at 10 % more
    kernel = KernelInputs(latency_bound=1.0, issued_instructions=40.0, gmem_bytes=128.0)
    launch = dict(kernel=kernel, grid_size=15 * 64, block_size=32, occupancy=64.0,
                  counts={"memory_instructions": 1.0}, terms=KernelTerms())
    slow = run("mwp-cwp", GPU.with_overrides(memory_bandwidth_measured_bytes_per_s=142.8e9), launch)
    fast = run("mwp-cwp", GPU.with_overrides(memory_bandwidth_measured_bytes_per_s=157.1e9), launch)
    assert slow.quantities["case"] == "memory-bound" and fast.quantities["case"] == "compute-bound"
    assert slow.time_cycles == pytest.approx(400 * 64 / 40 + 10 * 39, rel=1e-3)  # H17b: 1030
    assert fast.time_cycles == pytest.approx(400 + 10 * 64)  # H17c: 1040
    assert fast.time_s > slow.time_s


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=repetitions(30, 80), deadline=None)
@given(launch=launches(), extra_blocks=st.integers(0, 200_000))
def test_more_blocks_never_take_less_time(name, launch, extra_blocks):
    more = dict(launch, grid_size=launch["grid_size"] + extra_blocks)
    assert run(name, GPU, more).time_s >= run(name, GPU, launch).time_s * (1 - 1e-9)


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=repetitions(30, 80), deadline=None)
@given(launch=launches(), k=st.floats(1.0, 10.0))
def test_more_work_per_warp_never_takes_less_time(name, launch, k):
    """Every per-warp count (and the latency bound) scaled by k >= 1."""
    kin = launch["kernel"]
    scaled = replace(kin, latency_bound=kin.latency_bound * k, issued_instructions=kin.issued_instructions * k,
                     cuda_core_instructions=kin.cuda_core_instructions * k, gmem_bytes=kin.gmem_bytes * k,
                     smem_bank_cycles=kin.smem_bank_cycles * k)
    counts = {c: v * k for c, v in launch["counts"].items()}
    more = dict(launch, kernel=scaled, counts=counts)
    assert run(name, GPU, more).time_s >= run(name, GPU, launch).time_s * (1 - 1e-9)
