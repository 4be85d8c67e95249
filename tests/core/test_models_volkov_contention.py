"""volkov-contention: Volkov 2016 §6.3–6.5 with the thesis' own numbers (§6.4–6.5)."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.registry import evaluate
from gpumodeler.core.models.result import MissingModelInput, ModelInputs
from gpumodeler.core.models.volkov_contention import (CONTENTION_FITS, loaded_latency,
                                                      solve_warp_throughput)

# Volkov's GTX 680 as Table 4.1 states it: mem_thru 0.1338 IPC/SM = 0.1338 · 128 B/cycle/SM,
# issue 4 IPC/SM; c = 170 GB/s is 0.1477 IPC/SM at 8 SMs · 1.124 GHz · 128 B (§6.5).
KEPLER = GPUSpec("Kepler (Volkov Table 4.1)", compute_capability="3.0", sms=8, sm_clock_hz=1.124e9,
                 cuda_cores_per_sm=192, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=0.1338 * 128)
FIT = {"critical_dram_accesses": 1, "contention_b_cycles": 32, "contention_c_bytes_per_s": 170e9}


def simple_workload(alpha, n, gpu=KEPLER, a=300.0, alu_lat=9.0, params=FIT, **kw):
    """One LD + α dependent FADDs per warp (§4.1): Latency = a + α·alu_lat."""
    kernel = KernelInputs(latency_bound=a + alpha * alu_lat, issued_instructions=alpha + 1,
                          cuda_core_instructions=alpha, gmem_bytes=128)
    return evaluate("volkov-contention", ModelInputs(gpu, kernel, grid_size=8 * 64 * 100, block_size=32,
                                                    occupancy=n, parameters=dict(params), **kw))


# §6.5 refined Kepler equation x = min(n/(300 + 32x/(0.1477−x) + 9α), 0.1338, 4/(α+1)),
# solved (Volkov 2016 §6.5, the refined Kepler equation's solutions)
@pytest.mark.parametrize("alpha, n, x", [
    (0, 8, 0.0261), (0, 16, 0.0505), (0, 32, 0.0911), (0, 48, 0.1156), (0, 64, 0.1275),
    (32, 8, 0.0135), (32, 16, 0.0269), (32, 32, 0.0528), (32, 48, 0.0771), (32, 64, 0.0982),
    (128, 8, 0.0055), (128, 16, 0.0110), (128, 32, 0.0220), (128, 48, 0.0310), (128, 64, 0.0310),
])
def test_refined_kepler_equation(alpha, n, x):
    r = simple_workload(alpha, n)
    assert r.quantities["warp_throughput"] == pytest.approx(x, abs=5e-5)
    # the solution is self-consistent: x = min(n / L(x), caps)
    w = r.quantities["warp_throughput"]
    L = r.quantities["latency_loaded_cycles"]
    assert w == pytest.approx(min(n / L, 0.1338, 4 / (alpha + 1)), rel=1e-9)


@pytest.mark.parametrize("alpha, n, x", [(0, 8, 0.0266), (0, 32, 0.1063), (0, 48, 0.1338),
                                         (32, 64, 0.1087)])
def test_without_contention_it_is_the_basic_model(alpha, n, x):
    """b = 0 leaves Volkov's basic model (§4.1, with mem_lat 301): the 'basic' column."""
    r = simple_workload(alpha, n, a=301.0, params=dict(FIT, contention_b_cycles=0))
    assert r.quantities["warp_throughput"] == pytest.approx(x, abs=5e-5)


@pytest.mark.parametrize("fraction, per_scheduler", [(0.90, 13.3), (0.95, 15.8)])
def test_needed_occupancy_kepler_table_6_4(fraction, per_scheduler):
    """n(x*) = x*·L(x*) at α = 0: 13.3 (measured 14) and 15.8 (16) warps per scheduler."""
    r = simple_workload(0, 8)
    key = "occupancy_for_90pct" if fraction == 0.9 else "occupancy_for_95pct"
    assert r.quantities[key] / 4 == pytest.approx(per_scheduler, abs=0.05)


def test_needed_occupancy_maxwell():
    """Maxwell (a 372, b 22, c 221 GB/s; 16 SMs · 1.266 GHz; mem_thru 0.0814): 9.3 and 11.35."""
    maxwell = GPUSpec("GeForce GTX 980", sms=16, sm_clock_hz=1.266e9, cuda_cores_per_sm=128,
                      schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=0.0814 * 128)
    kernel = KernelInputs(latency_bound=372, issued_instructions=1, gmem_bytes=128)
    r = evaluate("volkov-contention", ModelInputs(maxwell, kernel, grid_size=10**5, block_size=32,
                                                  occupancy=8, parameters={"critical_dram_accesses": 1}))
    assert r.quantities["contention_fit_source"] == "Volkov Table 6.5"
    assert r.quantities["occupancy_for_90pct"] / 4 == pytest.approx(9.3, abs=0.05)
    assert r.quantities["occupancy_for_95pct"] / 4 == pytest.approx(11.35, abs=0.05)


def test_sustained_bandwidth_from_the_database_gives_table_4_1_mem_thru():
    """§6.3: the measured 154 GB/s of the GTX 680 is Table 4.1's mem_thru 0.1338 IPC/SM."""
    gtx680 = GPUSpec("GeForce GTX 680", sms=8, sm_clock_hz=1.124e9, cuda_cores_per_sm=192,
                     schedulers_per_sm=4, memory_bandwidth_bytes_per_s=192.2e9,
                     memory_bandwidth_measured_bytes_per_s=154e9)
    kernel = KernelInputs(latency_bound=301, issued_instructions=1, gmem_bytes=128)
    r = evaluate("volkov-contention", ModelInputs(gtx680, kernel, grid_size=10**5, block_size=32,
                                                  occupancy=64, parameters={"critical_dram_accesses": 1}))
    assert r.quantities["throughput_bound_warps_per_cycle"] == pytest.approx(0.1338, abs=5e-5)
    assert r.quantities["contention_fit"] == [[32.0, 170e9]]
    assert any("sustained" in n for n in r.notes)
    # at 64 warps the refined model is below the bound: latency rose with throughput
    assert r.bound == "latency" and r.quantities["latency_loaded_cycles"] > 301


def test_g80_two_term_fit_never_crosses_its_pole():
    """441 + 4x/(71−x) + 156x/(121−x): the pole at 71 GB/s is below the 74 GB/s peak."""
    a, fit = CONTENTION_FITS["GeForce 8800 GTX"]
    per_w = 128 * 16 * 1.35e9
    tb = 74e9 / per_w
    for n in (1, 8, 24, 100, 1e4):
        w = solve_warp_throughput(n, a, 1.0, fit, tb, per_w)
        assert 0 < w * per_w < 71e9
        assert loaded_latency(a, 1.0, fit, w * per_w) < float("inf")


def test_an_under_filled_launch_solves_against_its_active_sms_bound():
    """One block of 32 warps on one of Kepler's 8 SMs: global memory serves that SM alone
    (8 × 0.1338 IPC), so the fixed point x = 32 / (100 + 32x/(c − x)) is not capped at a
    full launch's 0.1338; capping it there held the loaded latency low, and twice the
    bandwidth (a higher cap) then predicted a slower kernel."""
    kernel = KernelInputs(latency_bound=100, issued_instructions=1, gmem_bytes=128)
    runs = []
    for factor in (1.0, 2.0):
        gpu = KEPLER.with_overrides(gmem_bytes_per_cycle_per_sm=0.1338 * 128 * factor)
        runs.append(evaluate("volkov-contention", ModelInputs(gpu, kernel, grid_size=1, block_size=1024,
                                                             occupancy=32, parameters=dict(FIT))))
    for r in runs:
        w, L = r.quantities["warp_throughput"], r.quantities["latency_loaded_cycles"]
        assert r.quantities["active_sms"] == 1 and r.quantities["occupancy_warps_per_sm"] == 32
        assert w > 0.1338 * 2
        assert w == pytest.approx(32 / L, rel=1e-9)            # self-consistent, no cap binds
        c = 170e9 / (128 * 1 * 1.124e9)                          # the pole in warps/cycle of one SM
        assert L == pytest.approx(100 + 32 * w / (c - w), rel=1e-9)
        assert r.time_cycles == pytest.approx(L, rel=1e-9)       # one wave: max(L, 32 / TB)
        assert r.bound == "latency"
    assert runs[1].time_s == pytest.approx(runs[0].time_s, rel=1e-12)


def test_unknown_gpu_asks_for_the_fit():
    with pytest.raises(MissingModelInput, match="Table 6.5") as exc:
        simple_workload(0, 8, gpu=GPUSpec("Tesla K40", sms=15, sm_clock_hz=745e6, cuda_cores_per_sm=192,
                                          schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=20),
                        params={"critical_dram_accesses": 1})
    assert exc.value.item == "contention_b_cycles"
    with pytest.raises(MissingModelInput) as exc:
        simple_workload(0, 8, params={"contention_b_cycles": 32, "contention_c_bytes_per_s": 170e9})
    assert exc.value.item == "critical_dram_accesses"


def test_kernel_without_dram_traffic_needs_no_fit():
    kernel = KernelInputs(latency_bound=100, issued_instructions=10, cuda_core_instructions=10)
    gpu = GPUSpec("x", sms=15, sm_clock_hz=1e9, cuda_cores_per_sm=192, schedulers_per_sm=4,
                  gmem_bytes_per_cycle_per_sm=20)
    r = evaluate("volkov-contention", ModelInputs(gpu, kernel, grid_size=1000, block_size=256, occupancy=64))
    g = evaluate("gajger", ModelInputs(gpu, kernel, grid_size=1000, block_size=256, occupancy=64))
    assert r.time_s == pytest.approx(g.time_s, rel=1e-12)


def test_the_intercept_a_replaces_the_tables_dram_latency():
    """§6.5 writes Latency = a + b·λ/(c−λ) + α·alu_lat where §4.1 had mem_lat: with the
    bound's own DRAM latency known (from the graph), each of the k critical DRAM accesses
    takes Table 6.5's a (GTX 680: 300) instead of the table's latency (here 301)."""
    from gpumodeler.core.models.volkov_contention import with_intercept
    assert with_intercept(1000.0, 2.0, 300.0, 301.0)[0] == 998.0
    assert with_intercept(1000.0, 2.0, None, 301.0)[0] == 1000.0
    assert with_intercept(1000.0, 2.0, 300.0, None)[0] == 1000.0
    gtx680 = GPUSpec("GeForce GTX 680", sms=8, sm_clock_hz=1.124e9, cuda_cores_per_sm=192,
                     schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=0.1338 * 128)
    kernel = KernelInputs(latency_bound=1000, issued_instructions=1, gmem_bytes=128)

    def run(counts):
        return evaluate("volkov-contention", ModelInputs(gtx680, kernel, grid_size=10**5,
                                                         block_size=32, occupancy=16,
                                                         counts=counts))
    graph = run({"critical_dram_accesses": 2, "bound_dram_latency_cycles": 320.0})
    assert graph.quantities["latency_bound_unloaded_cycles"] == 1000 + 2 * (300 - 320)
    assert graph.quantities["latency_bound_of_table_cycles"] == 1000
    assert any("intercept a = 300" in n for n in graph.notes)
    number = run({"critical_dram_accesses": 2})   # a bound given as a number
    assert number.quantities["latency_bound_unloaded_cycles"] == 1000
    assert any("not applied" in n for n in number.notes)
    # a lower unloaded latency gives a higher throughput at the same occupancy
    assert graph.quantities["warp_throughput"] > number.quantities["warp_throughput"]


def test_a_given_intercept_is_used_with_given_b_and_c():
    gpu = GPUSpec("x", sms=8, sm_clock_hz=1e9, cuda_cores_per_sm=192, schedulers_per_sm=4,
                  gmem_bytes_per_cycle_per_sm=16)
    kernel = KernelInputs(latency_bound=500, issued_instructions=1, gmem_bytes=128)
    r = evaluate("volkov-contention", ModelInputs(
        gpu, kernel, grid_size=10**5, block_size=32, occupancy=16,
        counts={"critical_dram_accesses": 1, "bound_dram_latency_cycles": 400.0},
        parameters={"contention_a_cycles": 350, "contention_b_cycles": 20,
                    "contention_c_bytes_per_s": 200e9}))
    assert r.quantities["latency_bound_unloaded_cycles"] == 450
    assert r.quantities["contention_fit_source"] == "given"
