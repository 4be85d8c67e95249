"""Under-filled GPU: the SMs a grid runs on share the whole global-memory bandwidth
(core.models.kernel_terms_vec.memory_bandwidth_per_active_sm, Hong & Kim 2009's
MWP_peak_BW over the active SMs), one rule for the one-launch and the array paths."""
import numpy as np
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.core.models.kernel_terms_vec import active_sms, memory_bandwidth_per_active_sm
from gpumodeler.core.models.registry import evaluate
from gpumodeler.core.models.result import KernelTerms, ModelInputs

SM100 = GPUSpec("100 SMs", compute_capability="7.0", sms=100, sm_clock_hz=1e9,
                cuda_cores_per_sm=64, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=10)
# memory-bound: 1000 B per warp at 10 B/cycle per SM is 100 cycles a warp; one issue slot
STREAM = KernelInputs(latency_bound=10, issued_instructions=1, gmem_bytes=1000)


def test_four_blocks_on_100_sms_get_25_times_a_full_launchs_share():
    total = 1e12
    full = memory_bandwidth_per_active_sm(total, 100, 100_000)
    assert full == pytest.approx(total / 100)
    assert memory_bandwidth_per_active_sm(total, 100, 4) == pytest.approx(25 * full)
    assert active_sms(100, 4) == 4 and active_sms(100, 400) == 100


def test_memory_bound_under_filled_launch_runs_at_the_active_sms_bandwidth():
    r = evaluate("gajger", ModelInputs(SM100, STREAM, grid_size=4, block_size=256, occupancy=64))
    q = r.quantities
    assert q["active_sms"] == 4
    # a full launch's bound is 1/100 warps per cycle (memory); on 4 SMs memory takes 4 cycles
    assert q["throughput_bound_warps_per_cycle"] == pytest.approx(0.01)
    assert q["throughput_bound_on_active_sms"] == pytest.approx(25 * 0.01)
    assert r.bound == "throughput" and r.binding_resource == "memory"
    # one wave of 8 warps on the busiest SM: max(L, 8 / TB) = max(10, 32) cycles (not 800)
    assert r.time_cycles == pytest.approx(32)
    full = evaluate("gajger", ModelInputs(SM100, STREAM, grid_size=800, block_size=256, occupancy=64))
    assert "throughput_bound_on_active_sms" not in full.quantities  # no under-fill: eq. 4.1
    assert full.time_cycles == pytest.approx(800 * 8 / 100 * 100)


def test_the_array_engine_applies_the_same_rule():
    one = evaluate("gajger", ModelInputs(SM100, STREAM, grid_size=4, block_size=256, occupancy=64))
    swept = predict(SM100, STREAM, grid_size=np.array([1, 4, 50, 100, 800]), block_size=256, occupancy=64,
                    terms=KernelTerms())
    assert swept.kernel.time_cycles[1] == pytest.approx(one.time_cycles, rel=1e-12)
    assert swept.kernel.limiting_resource[1] == "memory"
    # 1, 4 and 50 blocks: one block per active SM, the bandwidth shared by them only
    for i, blocks in enumerate([1, 4, 50]):
        assert swept.kernel.time_cycles[i] == pytest.approx(max(10, 8 * 100 * blocks / 100))


def test_the_switch_still_turns_the_term_off():
    off = evaluate("gajger", ModelInputs(SM100, STREAM, grid_size=4, block_size=256, occupancy=64,
                                         terms=KernelTerms(underfill=False)))
    assert off.time_cycles == pytest.approx(4 * 8 / 100 * 100)  # eq. 4.1
