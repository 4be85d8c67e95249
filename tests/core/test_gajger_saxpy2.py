"""Gajger 2017 saxpy2 worked example (§5.2, eq. 5.1–5.3) and the Fig. 5.24 scenario."""
import json
from pathlib import Path

import pytest

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.models.kernel_time import grid_for, warps_launched
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.models.gajger import KernelInputs, kernel_inputs_from_graph, predict
from gpumodeler.core.models.throughput import throughput_bound
from gpumodeler.core.transfers.link import pcie_bandwidth_bytes_per_s
from gpumodeler.core.kernel.warp_counts import count

ROOT = Path(__file__).resolve().parents[2]
GTX970 = GPUSpec("GeForce GTX 970", compute_capability="5.2", sms=13, sm_clock_hz=1253e6,
                 cuda_cores_per_sm=128, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=13.78)
PCIE3_GAJGER = LinkSpec("PCIe 3.0 x16 (Gajger)", bandwidth_bytes_per_s=15.8e9,
                        startup_htod_s=0.00396868e-3, startup_dtoh_s=0.00515692e-3,
                        lambda_htod=0.689, lambda_dtoh=0.653)


@pytest.fixture(scope="module")
def saxpy2():
    return from_dict(json.loads((ROOT / "resources/kernels/saxpy2-maxwell.json").read_text()))


def test_latency_bound_is_942_plus_24a(saxpy2):
    """Eq. 5.1: 92 + 700 + 150 + 24a, from the Fig. 5.6 reconstruction (tools/make_saxpy2_graph.py)."""
    bound = analyze(saxpy2)
    assert bound.formula() == "942 + 24·a"
    for a in (0, 1, 128, 4096):
        assert bound.evaluate({"a": a}) == 942 + 24 * a
    assert bound.per_iteration["loop1"] == ((24.0, ()),)


def test_critical_path_passes_both_loads_the_loop_and_block_replacement(saxpy2):
    cp = analyze(saxpy2).critical_path({"a": 128})
    lat = analyze(saxpy2).edge_latency
    main = [s for s in cp.steps if not isinstance(s, tuple)]
    kinds = {saxpy2.edges[e].kind for e in main}
    assert sum(lat[e] for e in main) == 942  # the straight-line part: 92 + 700 + 150
    assert sum(lat[e] for e in main if saxpy2.edges[e].kind == "memory") == 700
    assert ("loop", "loop1") in cp.steps
    assert "[compute loop × a: i20 -> i21 -> i23 -> i20]" in cp.describe(saxpy2)
    assert "replacement" in kinds and cp.loop_ids == ("loop1",)
    assert sum(lat[e] for e in cp.loop_paths["loop1"]) == 24


def test_instruction_counts_from_the_graph(saxpy2):
    """§5.2.3 gives INS_CUDA = 23 + 4a (reproduced) and INS_issued = 23 + 4a, while the
    application model of Fig. 5.23 uses 26 + 4a. Counting the graph gives 24 + 3a: 26
    non-loop instructions (23 CUDA-core + 3 memory) less the 2 dual issues outside the loop,
    and 4 loop instructions less the dual issue FADD/BRA, which happens on every iteration.
    §5.2.3 subtracts all three dual issues once (23 + 4a); Fig. 5.23 subtracts none (26 + 4a).
    The graph count is what gpumodeler derives; the Fig. 5.24 test below feeds 26 + 4a in
    expert mode because that is the value MERPSYS computed with."""
    counts = count(saxpy2)
    assert counts.formula("cuda_core_instructions") == "23 + 4·a"
    assert counts.formula("issued_instructions") == "24 + 3·a"
    assert counts.formula("dual_issues") == "2 + a"
    assert counts.evaluate({"a": 128})["gmem_bytes"] == 384  # 3 × 4 B × 32
    assert counts.formula("memory_instructions") == "3"


def test_gmem_bandwidth_eq_5_2():
    spec = GPUSpec("GTX 970", sms=13, sm_clock_hz=1253e6, memory_clock_hz=1753e6,
                   memory_bus_width_bits=256, memory_data_rate=4)
    assert spec.gmem_bandwidth_bytes_per_cycle_per_sm() == pytest.approx(13.78, abs=5e-3)


@pytest.mark.parametrize("a, binding", [(1, "memory"), (22, "memory"), (23, "cuda_cores")])
def test_throughput_bound_eq_5_3(a, binding):
    """Eq. 5.3 prints the memory term as 13.78; it is 384 B / 13.78 B/cycle = 27.87 cycles
    (eq. 4.5), the value the text extraction lost. CUDA-core and issue terms tie at
    (23 + 4a)/4 with §5.2.3's counts; they overtake memory from a = 23."""
    tb = throughput_bound(GTX970, cuda_core_instructions=23 + 4 * a,
                          issued_instructions=23 + 4 * a, gmem_bytes=384)
    assert tb.cycles_per_warp["memory"] == pytest.approx(384 / 13.78)
    assert tb.cycles_per_warp["cuda_cores"] == pytest.approx(32 * (23 + 4 * a) / 128)
    assert tb.cycles_per_warp["issue"] == pytest.approx((23 + 4 * a) / 4)
    assert tb.binding == binding
    assert tb.warps_per_cycle == pytest.approx(1 / max(27.866, (23 + 4 * a) / 4), rel=1e-3)


def fig_5_24_prediction(startup_scale=1.0):
    a, n = 128, 400_000_000
    link = LinkSpec(PCIE3_GAJGER.name, 15.8e9, PCIE3_GAJGER.startup_htod_s * startup_scale,
                    PCIE3_GAJGER.startup_dtoh_s * startup_scale, 0.689, 0.653)
    inputs = KernelInputs(latency_bound=942 + 24 * a, cuda_core_instructions=23 + 4 * a,
                          issued_instructions=26 + 4 * a, gmem_bytes=384)
    return predict(GTX970, inputs, grid_size=grid_for(n, 256), block_size=256, occupancy=64,
                   lam=0.703787, link=link,
                   transfers=[("htod", 4 * n), ("htod", 4 * n), ("dtoh", 4 * n)])


def test_fig_5_24_scenario_by_the_equations():
    """GTX 970, a = 128, block 256, N = 4·10⁸, occupancy 64, λ = 0.703787, two 1.6 GB
    host→device copies and one device→host copy over PCIe 3.0 ×16 (Table 6.2).

    The equations give 146.655 ms for the kernel and 595.696 ms in all, while MERPSYS
    printed 448.54 ms (GPU finished) and 608.774 ms (overall). The difference is exactly
    the three startup times taken 1000× too large (milliseconds read as seconds...: 3.97 ms
    instead of 3.97 µs): with that scaling the same equations give 448.542 and 608.777 ms
    (see the next test). gpumodeler applies eq. 5.5 as written, with Table 6.2's startup
    times converted from ms to s."""
    p = fig_5_24_prediction()
    assert p.kernel.warps_launched == 1_562_500 * 8
    assert p.kernel.mode == "throughput" and p.kernel.limiting_resource == "issue"
    assert p.kernel.time_s == pytest.approx(146.6549e-3, rel=1e-6)
    htod = 3.96868e-6 + 1.6e9 / (15.8e9 * 0.689)
    dtoh = 5.15692e-6 + 1.6e9 / (15.8e9 * 0.653)
    assert p.transfer_times_s == pytest.approx((htod, htod, dtoh))
    assert p.total_time_s == pytest.approx(595.6960e-3, rel=1e-6)


def test_merpsys_figure_is_the_equations_with_startup_in_the_wrong_unit():
    p = fig_5_24_prediction(startup_scale=1000.0)
    gpu_finished = p.transfer_times_s[0] + p.transfer_times_s[1] + p.kernel.time_s
    assert gpu_finished == pytest.approx(448.54e-3, abs=0.01e-3)
    assert p.total_time_s == pytest.approx(608.774e-3, rel=1e-5)


def test_fig_5_24_from_the_graph_differs_only_by_the_issue_count(saxpy2):
    """The same scenario with every kernel input derived from the graph (issued 24 + 3a)."""
    inputs = kernel_inputs_from_graph(saxpy2, {"a": 128})
    assert inputs.latency_bound == 4014 and inputs.issued_instructions == 24 + 3 * 128
    p = predict(GTX970, inputs, grid_size=grid_for(400_000_000, 256), block_size=256,
                occupancy=64, lam=0.703787)
    assert p.kernel.limiting_resource == "cuda_cores"  # 32·535/128 = 133.75 > 408/4
    assert p.kernel.time_s == pytest.approx(146.6549e-3 * 133.75 / 134.5, rel=1e-6)


def test_table_4_3_pcie_and_newer_generations():
    assert pcie_bandwidth_bytes_per_s("3.1", 16) == 15.8e9
    assert pcie_bandwidth_bytes_per_s(2, 4) == 2e9
    assert pcie_bandwidth_bytes_per_s("1.x", 8) == 2e9
    assert pcie_bandwidth_bytes_per_s("4.0", 16) == pytest.approx(31.5e9, rel=1e-3)
    assert pcie_bandwidth_bytes_per_s("5.0", 16) == pytest.approx(63.0e9, rel=1e-3)
    assert pcie_bandwidth_bytes_per_s("6.0", 16) == pytest.approx(121.0e9, rel=1e-3)


def test_warps_launched_multi_dimensional():
    assert warps_launched((10, 10, 2), (16, 16)) == 200 * 8
    assert warps_launched(5, 33) == 10  # a partly filled warp is still a warp (eq. 4.2)


def test_gmem_bandwidth_from_the_theoretical_bandwidth():
    """Eq. 4.7's numerator is the theoretical bandwidth: 224 GB/s on a GTX 980 (16 SMs at
    1.266 GHz, Volkov Table 2.7) is 11.06 B/cycle/SM."""
    spec = GPUSpec("GTX 980", sms=16, sm_clock_hz=1.266e9, memory_bandwidth_bytes_per_s=224e9)
    assert spec.gmem_bandwidth_bytes_per_cycle_per_sm() == pytest.approx(224e9 / (16 * 1.266e9))
    both = GPUSpec("GTX 970", sms=13, sm_clock_hz=1253e6, memory_clock_hz=1753e6,
                   memory_bus_width_bits=256, memory_data_rate=4, memory_bandwidth_bytes_per_s=1.0)
    assert both.gmem_bandwidth_bytes_per_cycle_per_sm() == pytest.approx(13.78, abs=5e-3)
