"""mwp-cwp: Hong & Kim 2009 as Volkov §7.1 restates it on the GTX 280, and Sánchez Gil's K40."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.registry import evaluate
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.models.result import KernelTerms, MissingModelInput, ModelInputs

# Volkov §7.1: GT200, 434-cycle memory latency, 141.7 GB/s, 1.296 GHz, 30 SMs, 4 CPI/SM
GT200 = GPUSpec("GTX 280 (Volkov §7.1)", sms=30, sm_clock_hz=1.296e9, cuda_cores_per_sm=8,
                schedulers_per_sm=1, issue_per_scheduler_per_cycle=0.5,
                memory_bandwidth_bytes_per_s=141.7e9)
GROUPS = 10_000  # repeating groups (1 LD + α FADD) per warp: ε₁, ε₂ vanish per group


def workload(alpha, n, gpu=GT200, groups=GROUPS, gmem_per_load=128, params=None, counts=None, **kw):
    kernel = KernelInputs(latency_bound=1.0, issued_instructions=(alpha + 1) * groups,
                          cuda_core_instructions=alpha * groups, gmem_bytes=gmem_per_load * groups)
    p = {"dram_latency_cycles": 434.0}
    p.update(params or {})
    c = {"memory_instructions": groups}
    c.update(counts or {})
    # one warp per block, n blocks per SM, one wave on every SM: #Rep = 1
    return evaluate("mwp-cwp", ModelInputs(gpu, kernel, grid_size=gpu.sms * n, block_size=32,
                                           occupancy=n, parameters=p, counts=c, **kw))


def test_mwp_peak_bw_and_cwp_of_section_7_1():
    """MWP_peak_bw = 434·141.7/(1.296·30·128) ≈ 12.4; CWP = 434/(4·33) + 1 ≈ 4.3 (α = 32)."""
    r = workload(32, 16)
    assert r.quantities["issue_cycles"] == 4
    assert r.quantities["MWP_peak_BW"] == pytest.approx(12.36, abs=0.01)
    assert round(r.quantities["MWP_peak_BW"], 1) == 12.4
    assert r.quantities["CWP_full"] == pytest.approx(4.288, abs=1e-3)
    assert r.quantities["CWP"] == pytest.approx(4.288, abs=1e-3)
    assert r.quantities["MWP"] == pytest.approx(12.36, abs=0.01)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_latency_bound_case_time_per_group_is_566(n):
    """n ≤ 4.3: 'not enough warps', Time = 434 + 4·(α+1) + ε₁ per group (H&K eq. 22)."""
    r = workload(32, n)
    assert r.quantities["case"] == "not enough warps" and r.bound == "latency"
    assert r.time_cycles / GROUPS == pytest.approx(566, abs=0.05)


@pytest.mark.parametrize("n", [8, 16, 32])
def test_compute_bound_case_time_is_4_n_alpha_plus_1(n):
    """n ≥ 4.3: MWP > CWP, compute-bound, Time = 4·n·(α+1) + ε₂ (H&K eq. 24)."""
    r = workload(32, n)
    assert r.quantities["case"] == "compute-bound"
    assert r.time_cycles / GROUPS == pytest.approx(4 * n * 33, abs=0.05)


def test_overestimate_of_2_1_against_volkovs_latency_bound():
    """§7.1: H&K overestimate throughput by 2.1× at small n; Volkov's Time = 434 + 24·α."""
    hk = workload(32, 4)
    kernel = KernelInputs(latency_bound=(434 + 24 * 32) * GROUPS, issued_instructions=33 * GROUPS,
                          cuda_core_instructions=32 * GROUPS, gmem_bytes=128 * GROUPS)
    volkov = evaluate("gajger", ModelInputs(GT200, kernel, grid_size=30 * 4, block_size=32, occupancy=4))
    assert volkov.bound == "latency"
    assert volkov.time_s / hk.time_s == pytest.approx(1202 / 566, rel=1e-4)
    assert round(volkov.time_s / hk.time_s, 1) == 2.1


def test_memory_bound_case_is_volkovs_basic_model_at_alpha_0():
    """α = 0: CWP ≥ MWP, memory-bound; throughput = MWP_peak_BW / 434 = pin mem_thru."""
    r = workload(0, 32)
    assert r.quantities["case"] == "memory-bound" and r.bound == "memory"
    ipc = 32 * GROUPS / r.time_cycles
    assert ipc == pytest.approx(141.7e9 / (30 * 1.296e9 * 128), rel=1e-3)


def test_synchronisation_cost_h18():
    """Synch_cost = Departure_delay·(MWP − 1)·#Synch_insts·#Active_blocks_per_SM·#Rep."""
    plain = workload(32, 8, params={"departure_delay_cycles": 4})
    synced = workload(32, 8, params={"departure_delay_cycles": 4}, counts={"synch_instructions": 50})
    mwp = synced.quantities["MWP"]
    assert mwp == 8  # MWP_Without_BW = 434/4 = 108.5 and 12.36 are both above N
    assert synced.quantities["synch_cost_cycles"] == pytest.approx(4 * (mwp - 1) * 50 * 8 * 1)
    assert synced.time_cycles - plain.time_cycles == pytest.approx(4 * 7 * 50 * 8)
    with pytest.raises(MissingModelInput) as exc:
        workload(32, 8, counts={"synch_instructions": 1})
    assert exc.value.item == "departure_delay_cycles"


def test_wide_accesses_use_the_departure_delay():
    """H2/H6: 2 transactions per memory warp: Mem_L = 434 + Δ, Departure_delay = 2Δ."""
    r = workload(32, 8, gmem_per_load=256, params={"departure_delay_cycles": 40})
    assert r.quantities["Mem_L"] == 474 and r.quantities["departure_delay"] == 80
    assert r.quantities["MWP_Without_BW"] == pytest.approx(474 / 80)
    with pytest.raises(MissingModelInput) as exc:
        workload(32, 8, gmem_per_load=256)
    assert exc.value.item == "departure_delay_coal_cycles"


# Hong & Kim 2009, GTX 280: Departure_del_coal 4, Departure_del_uncoal 40 cycles
HK_GTX280 = {"departure_delay_coal_cycles": 4, "departure_delay_uncoal_cycles": 40}


def test_each_access_kind_takes_its_own_departure_delay():
    """H1–H6 with both delays: coalesced accesses (the default, share 0) depart 4 cycles
    apart, uncoalesced ones 40 cycles apart over 32 transactions (one per thread)."""
    coal = workload(32, 8, params=HK_GTX280)
    assert coal.quantities["Mem_L"] == 434 and coal.quantities["departure_delay"] == 4
    assert coal.quantities["MWP_Without_BW"] == pytest.approx(434 / 4)
    unc = workload(32, 8, params={**HK_GTX280, "uncoalesced_share": 1.0})
    assert unc.quantities["Mem_L"] == 434 + 31 * 40                      # H1
    assert unc.quantities["departure_delay"] == 40 * 32                  # H6
    half = workload(32, 8, params={**HK_GTX280, "uncoalesced_share": 0.5})
    assert half.quantities["Mem_L"] == pytest.approx(0.5 * (434 + 31 * 40) + 0.5 * 434)   # H5
    assert half.quantities["departure_delay"] == pytest.approx(0.5 * 40 * 32 + 0.5 * 4)
    assert unc.time_s > half.time_s > coal.time_s
    with pytest.raises(MissingModelInput) as exc:
        workload(32, 8, params={"departure_delay_coal_cycles": 4, "uncoalesced_share": 0.5})
    assert exc.value.item == "departure_delay_uncoal_cycles"
    with pytest.raises(InvalidParameter):
        workload(32, 8, params={**HK_GTX280, "uncoalesced_share": 1.5})


def test_rep_and_tail():
    """#Rep = #Blocks/(#Active_blocks_per_SM·#Active_SMs) (H16); the tail term rounds it up."""
    kw = dict(issued_instructions=33 * 100, cuda_core_instructions=3200, gmem_bytes=12800)
    kernel = KernelInputs(latency_bound=1.0, **kw)
    inputs = dict(grid_size=30 * 8 * 2 + 24, block_size=32, occupancy=8,
                  parameters={"dram_latency_cycles": 434.0}, counts={"memory_instructions": 100})
    r = evaluate("mwp-cwp", ModelInputs(GT200, kernel, **inputs))
    t = evaluate("mwp-cwp", ModelInputs(GT200, kernel, terms=KernelTerms(tail=True), **inputs))
    assert r.quantities["rep"] == pytest.approx(2.1)
    assert t.quantities["rep"] == 3
    assert t.time_cycles / r.time_cycles == pytest.approx(3 / 2.1)


K40 = GPUSpec("Tesla K40", compute_capability="3.5", sms=15, sm_clock_hz=745e6, cuda_cores_per_sm=192,
              schedulers_per_sm=4, memory_bandwidth_bytes_per_s=288e9,
              memory_bandwidth_measured_bytes_per_s=183.5e9, latency_table="kepler-gajger")


K40_PARAMS = {"dram_latency_model": "sanchez-gil-7.1"}


@pytest.mark.parametrize("grid, occupancy, mem_ld", [
    (15 * 64 * 100, 64, 0.466 * 30720 - 1911.2),  # 12404.32 cycles at 30720 resident threads
    (625, 64, 0.466 * 20000 - 1911.2),            # 7408.8 at 20000 threads
])
def test_k40_dram_latency_from_sanchez_gil_regression_by_name(grid, occupancy, mem_ld):
    """Sánchez Gil eq. 7.1, named: his benchmark (§5.4.2) loads one address from every thread."""
    kernel = KernelInputs(latency_bound=1.0, issued_instructions=20, gmem_bytes=128)
    r = evaluate("mwp-cwp", ModelInputs(K40, kernel, grid_size=grid, block_size=32, occupancy=occupancy,
                                        counts={"memory_instructions": 1}, parameters=K40_PARAMS))
    assert r.quantities["Mem_LD"] == pytest.approx(mem_ld)
    assert any("contention" in n for n in r.notes)
    assert r.quantities["mem_bandwidth_bytes_per_s"] == 183.5e9  # Sánchez Gil §5.2
    assert r.quantities["issue_cycles"] == 0.25  # 4 schedulers issue 1 each: > 32/192


@pytest.mark.parametrize("grid, block, occupancy", [(15 * 64 * 100, 32, 64), (625, 32, 64),
                                                    (15 * 100, 512, 16)])
def test_k40_default_dram_latency_is_the_tables_constant(grid, block, occupancy):
    """Hong & Kim's Mem_LD is a constant: the K40's table (Gajger Table 4.2, Kepler 300
    cycles) at every thread count, not the one-address contention of eq. 7.1."""
    kernel = KernelInputs(latency_bound=1.0, issued_instructions=20, gmem_bytes=128)
    r = evaluate("mwp-cwp", ModelInputs(K40, kernel, grid_size=grid, block_size=block, occupancy=occupancy,
                                        counts={"memory_instructions": 1}))
    assert r.quantities["Mem_LD"] == 300
    assert any("kepler-gajger" in n for n in r.notes)


def test_the_regression_is_refused_where_it_was_not_measured():
    kernel = KernelInputs(latency_bound=1.0, issued_instructions=20, gmem_bytes=128)
    outside = ModelInputs(K40, kernel, grid_size=15 * 100, block_size=512, occupancy=16,
                          counts={"memory_instructions": 1}, parameters=K40_PARAMS)
    with pytest.raises(InvalidParameter, match="9984"):   # 7680 threads < 9984
        evaluate("mwp-cwp", outside)
    other = ModelInputs(GT200, kernel, grid_size=100, block_size=32, occupancy=8,
                        counts={"memory_instructions": 1}, parameters=K40_PARAMS)
    with pytest.raises(InvalidParameter, match="K40"):
        evaluate("mwp-cwp", other)
    with pytest.raises(InvalidParameter, match="valid"):
        evaluate("mwp-cwp", ModelInputs(K40, kernel, grid_size=625, block_size=32, occupancy=64,
                                        counts={"memory_instructions": 1},
                                        parameters={"dram_latency_model": "nope"}))


def test_missing_inputs_name_the_parameter():
    kernel = KernelInputs(latency_bound=1.0, issued_instructions=20, gmem_bytes=128)
    with pytest.raises(MissingModelInput) as exc:
        evaluate("mwp-cwp", ModelInputs(GT200, kernel, grid_size=100, block_size=32, occupancy=8))
    assert exc.value.item == "memory_instructions"
    with pytest.raises(MissingModelInput) as exc:
        evaluate("mwp-cwp", ModelInputs(GT200, kernel, grid_size=100, block_size=32, occupancy=8,
                                        counts={"memory_instructions": 1}))
    assert exc.value.item == "dram_latency_cycles"
