"""roofline: attainable = min(peak, intensity × bandwidth), per memory level."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.registry import evaluate
from gpumodeler.core.models.result import MissingModelInput, ModelInputs

GPU = GPUSpec("r", sms=10, sm_clock_hz=1e9, cuda_cores_per_sm=128, schedulers_per_sm=4, sfu_per_sm=16,
              memory_bandwidth_bytes_per_s=500e9, smem_accesses_per_cycle_per_sm=1.0)
PEAK = 10 * 128 * 1e9  # ops/s


def roof(gpu=GPU, **kernel):
    k = KernelInputs(latency_bound=1.0, issued_instructions=1.0, **kernel)
    return evaluate("roofline", ModelInputs(gpu, k, grid_size=1000, block_size=256, occupancy=64))


def test_memory_bound_below_the_ridge():
    r = roof(cuda_core_instructions=4, gmem_bytes=1024)  # 4·32 ops per 1024 B: I = 0.125
    ops, nbytes = 4 * 32 * 8000, 1024 * 8000
    dram = r.quantities["levels"]["dram"]
    assert dram["intensity_ops_per_byte"] == pytest.approx(0.125)
    assert dram["attainable_ops_per_s"] == pytest.approx(min(PEAK, 0.125 * 500e9))
    assert r.time_s == pytest.approx(nbytes / 500e9)
    assert r.bound == "memory" and r.binding_resource == "dram"
    assert r.quantities["ridge_intensity_dram"] == pytest.approx(PEAK / 500e9)
    assert r.quantities["attainable_ops_per_s"] == pytest.approx(ops / r.time_s)


def test_compute_bound_above_the_ridge():
    r = roof(cuda_core_instructions=400, gmem_bytes=128)
    assert r.bound == "compute" and r.binding_resource == "cuda_cores"
    assert r.time_s == pytest.approx(400 * 32 * 8000 / PEAK)
    assert r.quantities["levels"]["dram"]["attainable_ops_per_s"] == pytest.approx(PEAK)


def test_the_busiest_pipe_sets_the_compute_ceiling():
    r = roof(cuda_core_instructions=10, sfu_instructions=10)  # SFU 16/SM: 8× slower than cores
    assert r.binding_resource == "sfu"
    assert r.time_s == pytest.approx(10 * 32 * 8000 / (16 * 10 * 1e9))


def test_measured_dram_l2_and_shared_levels():
    gpu = GPU.with_overrides(memory_bandwidth_measured_bytes_per_s=400e9, l2_bandwidth_bytes_per_s=1e12)
    r = roof(gpu, cuda_core_instructions=1, gmem_bytes=512, smem_bank_cycles=8)
    levels = r.quantities["levels"]
    assert levels["dram"]["bandwidth_bytes_per_s"] == 400e9  # sustained, not pin
    assert levels["l2"]["bandwidth_bytes_per_s"] == 1e12
    assert levels["shared"]["bytes"] == 8 * 128 * 8000
    assert levels["shared"]["bandwidth_bytes_per_s"] == 128 * 10 * 1e9
    assert r.time_s == pytest.approx(max(512 * 8000 / 400e9, 8 * 128 * 8000 / 1.28e12))


def test_dram_moves_the_compulsory_bytes_and_the_l2_every_request():
    """A working set in L2 no longer skips DRAM; reuse (l2_bytes,
    the L2 hits) is L2 traffic only."""
    gpu = GPU.with_overrides(l2_bytes=4e6, l2_bandwidth_bytes_per_s=2e12)
    k = KernelInputs(latency_bound=1.0, issued_instructions=1.0, gmem_bytes=512, l2_bytes=1536)
    r = evaluate("roofline", ModelInputs(gpu, k, grid_size=1000, block_size=256, occupancy=64,
                                         parameters={"working_set_bytes": 1e6}))
    levels = r.quantities["levels"]
    assert levels["dram"]["bytes"] == 512 * 8000
    assert levels["l2"]["bytes"] == (512 + 1536) * 8000
    assert r.time_s == pytest.approx(max(512 * 8000 / levels["dram"]["bandwidth_bytes_per_s"],
                                         2048 * 8000 / 2e12))


def test_no_work_is_refused():
    with pytest.raises(MissingModelInput):
        roof()
