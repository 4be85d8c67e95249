"""bsp: Amarís' BSP-based model (thesis eq. 3.3–3.5), Amarís 2018's worked examples."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.bsp import bsp_cycles_per_thread
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.registry import evaluate
from gpumodeler.core.models.result import MissingModelInput, ModelInputs

GTX680_T = GPUSpec("GTX-680 (Amarís Table 2.2)", sms=8, sm_clock_hz=1058e6, cuda_cores_per_sm=192,
                   schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=20)
GTX680_H = GPUSpec("GTX-680 (HiPC Table I)", sms=8, sm_clock_hz=1006e6, cuda_cores_per_sm=192,
                   schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=20)
K40 = GPUSpec("Tesla-K40 (Amarís Table 2.2)", sms=15, sm_clock_hz=745e6, cuda_cores_per_sm=192,
              schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=20)
KERNEL = KernelInputs(latency_bound=1.0, issued_instructions=1.0, gmem_bytes=128.0)


def bsp(gpu, grid, block, **params):
    counts = {k: params.pop(k) for k in ("memory_instructions", "shared_instructions") if k in params}
    return evaluate("bsp", ModelInputs(gpu, KERNEL, grid_size=grid, block_size=block, occupancy=8,
                                       counts=counts, parameters=params))


@pytest.mark.parametrize("lam, seconds", [(4.5, 0.1472), (1.0, 0.6624)])
def test_example_a_mmgu_gtx680(lam, seconds):
    """MMGU N = 1024, BS = 16, FMA = 2 cycles: comp 2048, comm_GM (2·1024+1)·500 = 1,024,500."""
    r = bsp(GTX680_T, (64, 64), (16, 16), bsp_comp_cycles=2048, memory_instructions=2 * 1024 + 1,
            bsp_lambda=lam)
    assert r.quantities["threads"] == 1_048_576 and r.quantities["cores"] == 1536
    assert r.quantities["comm_GM_cycles"] == 1_024_500
    assert r.quantities["cycles_per_thread"] == 1_026_548
    assert r.time_s == pytest.approx(seconds, abs=5e-5)
    assert r.binding_resource == "global memory"


@pytest.mark.parametrize("lam, seconds", [(5.5, 2.167e-3), (1.0, 11.92e-3)])
def test_example_b_vadd_k40(lam, seconds):
    """vAdd N = 2^24: comp = 24 (one add), ld_1 = 2, st_1 = 1: 1524 cycles per thread."""
    r = bsp(K40, 2**24 // 256, 256, bsp_comp_cycles=24, memory_instructions=3, bsp_lambda=lam)
    assert r.quantities["cycles_per_thread"] == 1524
    assert r.time_s == pytest.approx(seconds, abs=5e-6)


def test_example_c_mmgu_hipc_parameterisation():
    """[H]: comp = N (1 cycle per FMA), ld_1 = ld_0 = N, st_1 = st_0 = 1: 518,649 cycles."""
    r = bsp(GTX680_H, (64, 64), (16, 16), bsp_comp_cycles=1024, memory_instructions=1025,
            shared_instructions=1025, bsp_lambda=4.15)
    assert r.quantities["cycles_per_thread"] == 518_649
    assert r.quantities["comm_SM_cycles"] == 1025 * 5
    assert r.time_s == pytest.approx(0.0848, abs=5e-5)


def test_cache_levels_eq_3_5():
    """comm_GM = (ld+st − L1 − L2)·g_GM + L1·g_L1 + L2·g_L2 with g = 500, 5, 250."""
    c = bsp_cycles_per_thread(0, 10, 0, l1_hits=2, l2_hits=3)
    assert c["comm_GM"] == 5 * 500 + 2 * 5 + 3 * 250
    with pytest.raises(MissingModelInput):
        bsp_cycles_per_thread(0, 1, 0, l1_hits=2)


def test_default_comp_counts_arithmetic_instructions_and_lambda_is_uncalibrated():
    kernel = KernelInputs(latency_bound=1.0, issued_instructions=10, cuda_core_instructions=6,
                          sfu_instructions=1, fp64_instructions=1, gmem_bytes=0)
    r = evaluate("bsp", ModelInputs(K40, kernel, grid_size=100, block_size=256, occupancy=8))
    assert r.quantities["comp_cycles"] == 8 and r.quantities["lambda"] == 1
    assert r.time_s == pytest.approx(100 * 256 * 8 / (745e6 * 2880))
    assert any("uncalibrated" in n for n in r.notes)
    with pytest.raises(MissingModelInput) as exc:
        evaluate("bsp", ModelInputs(K40, KERNEL, grid_size=100, block_size=256, occupancy=8))
    assert exc.value.item == "memory_instructions"
