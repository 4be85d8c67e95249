"""The gajger model in the registry, its kernel-time terms and the physical sanity checks."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import LaunchError
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.core.models.registry import MODELS, evaluate, evaluate_all, spread
from gpumodeler.core.models.result import ImplausiblePrediction, KernelTerms, ModelInputs, ModelResult

GTX970 = GPUSpec("GeForce GTX 970", compute_capability="5.2", sms=13, sm_clock_hz=1253e6,
                 cuda_cores_per_sm=128, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=13.78)
SAXPY2 = KernelInputs(latency_bound=4014, issued_instructions=538, cuda_core_instructions=535, gmem_bytes=384)
SM15 = GPUSpec("15 SMs", compute_capability="3.5", sms=15, sm_clock_hz=1e9, cuda_cores_per_sm=192,
               schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=20)


def gajger(gpu, kernel, grid, block=256, occupancy=64, **kw):
    return evaluate("gajger", ModelInputs(gpu, kernel, grid_size=grid, block_size=block,
                                          occupancy=occupancy, **kw))


def test_fig_5_24_number_unchanged():
    """Gajger Fig. 5.24: 0.1466549 s, exactly as gajger.predict (no term applies)."""
    r = gajger(GTX970, SAXPY2, 1562500, lam=0.703787)
    p = predict(GTX970, SAXPY2, grid_size=1562500, block_size=256, occupancy=64, lam=0.703787)
    assert r.time_s == pytest.approx(0.1466549, rel=1e-6)
    assert r.time_s == p.kernel.time_s
    assert r.bound == "throughput" and r.binding_resource == "issue"
    assert not any(t.applied for t in r.terms)


@pytest.mark.parametrize("latency, cycles", [(1000, 1000), (100, 600)])
def test_36_blocks_on_15_sms_is_one_wave_of_3_blocks(latency, cycles):
    """36 blocks of 8 warps, 64 warps/SM: the busiest SM holds 3 blocks (24 warps) for one
    wave, max(L, 24 / TB) cycles — not eq. 4.1's 36/15 blocks at a full SM's throughput."""
    kernel = KernelInputs(latency_bound=latency, issued_instructions=100)  # TB = 4/100 warps/cycle
    r = gajger(SM15, kernel, 36)
    eq41 = 36 * 8 / 15 * max(latency / 64, 25)
    assert r.quantities["eq_4_1_cycles"] == pytest.approx(eq41)
    assert r.time_cycles == pytest.approx(cycles)
    assert r.quantities["occupancy_limited_by_grid"] == 24
    under = next(t for t in r.terms if t.name == "under-filled GPU")
    assert under.applied and under.fraction == pytest.approx(cycles / eq41 - 1)
    assert "+" in under.describe() and "%" in under.describe()
    off = gajger(SM15, kernel, 36, terms=KernelTerms(underfill=False))
    assert off.time_cycles == pytest.approx(eq41)


def test_tail_of_the_last_wave_shows_the_step():
    """15 SMs × 8 blocks = 120 blocks a wave; 2 waves vs 2.1 waves (252 blocks)."""
    kernel = KernelInputs(latency_bound=1000, issued_instructions=100)
    tail = KernelTerms(tail=True)
    two = gajger(SM15, kernel, 240, terms=tail)
    two_tenth = gajger(SM15, kernel, 252, terms=tail)
    # a full wave: max(1000, 64·25) = 1600 cycles; the last wave of 1 block: max(1000, 200)
    assert two.time_cycles == pytest.approx(3200)
    assert two_tenth.time_cycles == pytest.approx(2 * 1600 + 1000)
    plain = gajger(SM15, kernel, 252)
    assert plain.time_cycles == pytest.approx(252 * 8 / 15 * 25)  # eq. 4.1: linear in the grid
    effect = next(t for t in two_tenth.terms if t.name == "tail effect")
    assert effect.applied and effect.fraction == pytest.approx(4200 / 3360 - 1)
    assert effect.describe().startswith("tail effect: +25 %")
    assert not next(t for t in plain.terms if t.name == "tail effect").applied


def test_launch_overhead_is_a_gpu_parameter_off_when_unknown():
    kernel = KernelInputs(latency_bound=1000, issued_instructions=100)
    base = gajger(SM15, kernel, 1200)
    assert not next(t for t in base.terms if t.name == "launch overhead").applied
    gpu = SM15.with_overrides(launch_overhead_s=5e-6)
    on = gajger(gpu, kernel, 1200)
    assert on.time_s == pytest.approx(base.time_s + 5e-6)
    assert gajger(gpu, kernel, 1200, terms=KernelTerms(launch_overhead=False)).time_s == base.time_s


def test_a_working_set_that_fits_no_longer_serves_every_byte_from_l2():
    """A working set in L2 is no longer read only from L2: the first load comes from DRAM.
    The DRAM row keeps the compulsory bytes, the L2 hits are the l2 row (at the GPU's L2
    bandwidth)."""
    kernel = KernelInputs(latency_bound=100, issued_instructions=10, gmem_bytes=1024)
    gpu = SM15.with_overrides(l2_bytes=1.5e6, l2_bandwidth_bytes_per_s=1.2e12)
    dram = gajger(gpu, kernel, 12000)
    assert dram.binding_resource == "memory"
    fits = gajger(gpu, kernel, 12000, parameters={"working_set_bytes": 1e6})
    assert fits.time_s == dram.time_s
    term = next(t for t in fits.terms if t.name == "working set in L2")
    assert not term.applied and "reuse model" in term.note
    l2_per_cycle = 1.2e12 / (15 * 1e9)
    reused = KernelInputs(latency_bound=100, issued_instructions=10, gmem_bytes=256,
                          l2_bytes=768)   # 3/4 of the bytes re-read from L2
    r = gajger(gpu, reused, 12000)
    assert r.quantities["cycles_per_warp"]["l2"] == pytest.approx(768 / l2_per_cycle)
    assert r.quantities["cycles_per_warp"]["memory"] == pytest.approx(
        dram.quantities["cycles_per_warp"]["memory"] / 4)
    unknown = gajger(SM15.with_overrides(l2_bytes=1.5e6), reused, 12000)
    assert unknown.quantities["cycles_per_warp"]["l2"] == 0


def test_infinite_time_is_an_error_not_a_result():
    with pytest.raises(ImplausiblePrediction, match="not a finite positive time"):
        gajger(GTX970, SAXPY2, 1562500, lam=1e-320)


def test_time_below_the_peak_rate_floor_is_flagged():
    ok = gajger(GTX970, SAXPY2, 1562500, lam=0.703787)
    assert not ok.warnings and ok.time_s > ok.floor_s
    fast = gajger(GTX970, SAXPY2, 1562500, lam=100)
    assert fast.warnings and "below" in fast.warnings[0]
    # the floor: 535 CUDA-core instructions per warp at 128 cores: 133.75 cycles per warp
    assert fast.floor_s == pytest.approx(1562500 * 8 * 133.75 / (13 * 1253e6))


def test_occupancy_above_the_maximum_is_refused():
    with pytest.raises(LaunchError, match="64 warps per SM"):
        gajger(SM15, SAXPY2, 100, occupancy=65)
    with pytest.raises(LaunchError):
        evaluate_all(ModelInputs(SM15, SAXPY2, grid_size=100, block_size=256, occupancy=80))


def test_evaluate_all_lists_every_model_and_the_spread():
    results = evaluate_all(ModelInputs(SM15, SAXPY2, grid_size=10_000, block_size=256, occupancy=64,
                                       counts={"memory_instructions": 3},
                                       parameters={"critical_dram_accesses": 3, "contention_b_cycles": 32,
                                                   "contention_c_bytes_per_s": 400e9,
                                                   "dram_latency_cycles": 300}))
    assert list(results) == list(MODELS) and len(MODELS) == 5
    assert all(isinstance(r, ModelResult) for r in results.values())
    s = spread(results)
    times = [r.time_s for r in results.values()]
    assert s.min_s == min(times) and s.max_s == max(times) and s.ratio == pytest.approx(max(times) / min(times))
