"""A profiled kernel as a kernel source: per-warp counts from metrics, the latency bound
from the measured time (eq. 4.1, 4.3 inverted), and prediction on another GPU."""
import math

import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.measurements.profiled import (
    architecture_notes, estimate_latency_bound, kernel_inputs, model_counts, profile_kernel)
from gpumodeler.core.measurements.records import Measurement
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.core.models.throughput import throughput_bound

GTX970 = GPUSpec("GeForce GTX 970", compute_capability="5.2", sms=13, sm_clock_hz=1253e6,
                 cuda_cores_per_sm=128, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=13.78,
                 sfu_per_sm=32, smem_accesses_per_cycle_per_sm=1.0)
TITANX = GPUSpec("GeForce GTX TITAN X", compute_capability="5.2", sms=24, sm_clock_hz=1076e6,
                 cuda_cores_per_sm=128, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=13.03,
                 sfu_per_sm=32, smem_accesses_per_cycle_per_sm=1.0)
K40 = GPUSpec("Tesla K40", compute_capability="3.5", sms=15, sm_clock_hz=745e6,
              cuda_cores_per_sm=192, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=25.77,
              sfu_per_sm=32, fp64_units_per_sm=64, smem_accesses_per_cycle_per_sm=1.0)
#: per warp: what the synthetic profile encodes (FP32 30 + INT 25 + control 5 = 60 CUDA-core)
TRUE = KernelInputs(latency_bound=2000.0, issued_instructions=80.0, cuda_core_instructions=60.0,
                    gmem_bytes=300.0, sfu_instructions=2.0, smem_bank_cycles=6.0)
GRID, BLOCK = 2048, 256
WARPS = GRID * BLOCK // 32
NAME = "stencil(float*, float const*, int)"


def nvprof_metrics(w, occupancy_fraction, activity=1.0):
    t = 32 * activity  # active threads per warp instruction
    return {"inst_issued": (w.issued_instructions * WARPS, "1"),
            "inst_executed": (w.issued_instructions * WARPS, "1"),
            "inst_fp_32": (30 * t * WARPS, "1"), "inst_integer": (25 * t * WARPS, "1"),
            "cf_executed": (5 * WARPS, "1"),
            "flop_count_sp_special": (w.sfu_instructions * t * WARPS, "1"),
            "dram_read_bytes": (200 * WARPS, "1"), "dram_write_bytes": (100 * WARPS, "1"),
            "l2_read_transactions": (10 * WARPS, "1"), "l2_write_transactions": (5 * WARPS, "1"),
            "shared_load_transactions": (4 * WARPS, "1"),
            "shared_store_transactions": (2 * WARPS, "1"),
            "shared_ld_bank_conflict": (2 * WARPS, "1"), "shared_st_bank_conflict": (0, "1"),
            "achieved_occupancy": (occupancy_fraction, "1"),
            "warp_nonpred_execution_efficiency": (100.0 * activity, "%")}


def ncu_metrics(w, occupancy_fraction):
    sass = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
    return {"smsp__inst_issued.sum": (w.issued_instructions * WARPS, "inst"),
            sass.format("fp32"): (30 * 32 * WARPS, "inst"),
            sass.format("integer"): (25 * 32 * WARPS, "inst"),
            sass.format("control"): (5 * 32 * WARPS, "inst"),
            "smsp__inst_executed_pipe_xu.sum": (w.sfu_instructions * WARPS, "inst"),
            "dram__bytes_read.sum": (200 * WARPS, "B"), "dram__bytes_write.sum": (100 * WARPS, "B"),
            "lts__t_bytes.sum": (480 * WARPS, "B"),
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": (4 * WARPS, ""),
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": (2 * WARPS, ""),
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": (2 * WARPS, ""),
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": (0, ""),
            "sm__warps_active.avg.pct_of_peak_sustained_active": (100 * occupancy_fraction, "%")}


def profile(gpu, w=TRUE, occupancy=32.0, style="nvprof", activity=1.0):
    """Records of a kernel profiled on ``gpu``: the duration the model gives for ``w``."""
    t = predict(gpu, w, grid_size=GRID, block_size=BLOCK, occupancy=occupancy).kernel.time_s
    launch = dict(name=NAME, gpu=f"{gpu.name} (0)", grid=(GRID, 1, 1), block=(BLOCK, 1, 1),
                  registers_per_thread=64, shared_mem_bytes=2048)
    frac = occupancy / 64
    if style == "nvprof":  # a GPU trace (two launches) and a metric table, as two files give
        return [Measurement("kernel", time_s=t, row=9, **launch),
                Measurement("kernel", time_s=t, row=10, **launch),
                Measurement("kernel", time_s=None, name=NAME, gpu=f"{gpu.name} (0)",
                            metrics=nvprof_metrics(w, frac, activity))]
    return [Measurement("kernel", time_s=t, metrics=ncu_metrics(w, frac),
                        compute_capability=gpu.compute_capability, **launch)]


@pytest.mark.parametrize("style", ["nvprof", "ncu"])
def test_per_warp_counts_from_metrics(style):
    pk = profile_kernel(profile(GTX970, style=style), "stencil")
    assert pk.warps_launched == WARPS and pk.gpu == "GeForce GTX 970"
    c = pk.counts
    assert c["issued_instructions"] == pytest.approx(80)
    assert c["fp32_instructions"] == pytest.approx(30)
    assert c["integer_instructions"] == pytest.approx(25)
    assert c["control_instructions"] == pytest.approx(5)
    assert c["sfu_instructions"] == pytest.approx(2)
    assert c["dram_bytes"] == pytest.approx(300)
    assert c["l2_bytes"] == pytest.approx(480)
    assert c["shared_transactions"] == pytest.approx(6)
    assert c["shared_bank_conflicts"] == pytest.approx(2)
    counts, notes = model_counts(pk)
    # the per-pipe split for Volta and later: FP32; integer + control + conversion; FP16
    assert counts.pop("pipe_instructions") == pytest.approx({"fp32": 30, "int32": 30, "fp16": 0})
    assert counts == pytest.approx({"issued_instructions": 80, "cuda_core_instructions": 60,
                                    "gmem_bytes": 300, "sfu_instructions": 2,
                                    "fp64_instructions": 0, "smem_bank_cycles": 6})
    assert pk.sources["dram_bytes"].startswith("dram_read_bytes" if style == "nvprof" else "dram__")


def test_thread_level_counts_are_corrected_by_active_threads():
    pk = profile_kernel(profile(GTX970, activity=0.5), "stencil")
    assert pk.counts["fp32_instructions"] == pytest.approx(30)  # 30 × 16 threads / (32 × 0.5)
    assert pk.notes == ()


@pytest.mark.parametrize("style", ["nvprof", "ncu"])
@pytest.mark.parametrize("target", [TITANX, K40], ids=["same-arch", "cross-arch"])
def test_profiled_on_one_gpu_predicted_on_another_reproduces_the_model(style, target):
    """The cross-GPU check (docs/measurements.md): metrics consistent with the model on the GTX 970,
    predicted on another GPU, give the model's own prediction there."""
    pk = profile_kernel(profile(GTX970, style=style), "stencil")
    counts, _ = model_counts(pk)
    est = estimate_latency_bound(GTX970, pk, counts, pk.achieved_occupancy * 64)
    assert est.mode == "latency"
    assert est.latency_bound_cycles == pytest.approx(TRUE.latency_bound, rel=1e-12)
    inputs = kernel_inputs(counts, est.latency_bound_cycles)
    for occupancy in (8, 24, 48):
        got = predict(target, inputs, grid_size=GRID, block_size=BLOCK, occupancy=occupancy)
        want = predict(target, TRUE, grid_size=GRID, block_size=BLOCK, occupancy=occupancy)
        assert got.kernel.time_s == pytest.approx(want.kernel.time_s, rel=1e-12)
        assert got.kernel.mode == want.kernel.mode
    notes = architecture_notes(GTX970.compute_capability, target.compute_capability)
    assert bool(notes) == (target is K40)


def test_throughput_bound_profile_uses_the_largest_consistent_latency():
    fast = KernelInputs(latency_bound=300.0, issued_instructions=80.0, cuda_core_instructions=60.0,
                        gmem_bytes=300.0, sfu_instructions=2.0, smem_bank_cycles=6.0)
    pk = profile_kernel(profile(GTX970, w=fast, occupancy=64), "stencil")
    counts, _ = model_counts(pk)
    est = estimate_latency_bound(GTX970, pk, counts, 64)
    tb = throughput_bound(GTX970, **counts).warps_per_cycle
    assert est.mode == "throughput"
    assert est.latency_bound_cycles == pytest.approx(64 / tb)
    assert est.lambda_on_profiled == pytest.approx(1.0)
    assert "fixes no latency" in est.rule
    # any target that is throughput-bound too gets the model's own time
    got = predict(TITANX, kernel_inputs(counts, est.latency_bound_cycles), grid_size=GRID,
                  block_size=BLOCK, occupancy=64)
    want = predict(TITANX, fast, grid_size=GRID, block_size=BLOCK, occupancy=64)
    assert got.kernel.time_s == pytest.approx(want.kernel.time_s, rel=1e-12)


def test_selection_errors_say_what_is_there():
    recs = profile(GTX970)
    with pytest.raises(InvalidParameter, match=r"no kernel named 'gemm'.*kernels: stencil"):
        profile_kernel(recs, "gemm")
    two = recs + [Measurement("kernel", time_s=1e-3, name=NAME, gpu="GeForce GTX TITAN X (1)",
                              grid=(GRID, 1, 1), block=(BLOCK, 1, 1))]
    with pytest.raises(InvalidParameter, match=r"profiled on 2 GPUs .*--profiled-device"):
        profile_kernel(two, "stencil")
    assert profile_kernel(two, "stencil", gpu="GTX 970").gpu == "GeForce GTX 970"
    other = recs + [Measurement("kernel", time_s=1e-3, name=NAME, gpu=recs[0].gpu,
                                grid=(GRID * 2, 1, 1), block=(BLOCK, 1, 1))]
    with pytest.raises(InvalidParameter, match=r"2 launch configurations"):
        profile_kernel(other, "stencil")
    overload = recs + [Measurement("kernel", time_s=1e-3, name="stencil(double*, double const*, int)",
                                   gpu=recs[0].gpu, grid=(GRID, 1, 1), block=(BLOCK, 1, 1))]
    with pytest.raises(InvalidParameter, match=r"matches several kernels .*give the full name"):
        profile_kernel(overload, "stencil")
    assert profile_kernel(overload, NAME).name == NAME
    metrics_only = [r for r in recs if r.time_s is None]
    with pytest.raises(InvalidParameter, match=r"no launch configuration"):
        profile_kernel(metrics_only, "stencil")
    untimed = [Measurement("kernel", time_s=None, name=NAME, gpu=recs[0].gpu,
                           grid=(GRID, 1, 1), block=(BLOCK, 1, 1))] + metrics_only
    pk = profile_kernel(untimed, "stencil")
    with pytest.raises(InvalidParameter, match=r"no duration"):
        estimate_latency_bound(GTX970, pk, model_counts(pk)[0], 32)


def test_missing_memory_metrics_fall_back_with_a_note():
    recs = profile(GTX970)
    m = dict(recs[2].metrics)
    for k in ("dram_read_bytes", "dram_write_bytes"):
        del m[k]
    recs[2] = Measurement("kernel", time_s=None, name=NAME, gpu=recs[2].gpu, metrics=m)
    counts, notes = model_counts(profile_kernel(recs, "stencil"))
    assert counts["gmem_bytes"] == pytest.approx(480)
    assert any("L2 traffic" in n for n in notes)
    assert math.isclose(counts["cuda_core_instructions"], 60)


def test_derive_bundles_occupancy_latency_and_notes():
    from gpumodeler.core.measurements.profiled import derive, profiled_occupancy
    pk = profile_kernel(profile(GTX970), "stencil")
    assert profiled_occupancy(pk, GTX970) == (32.0, None)
    d = derive(pk, GTX970)
    assert d.inputs.latency_bound == pytest.approx(2000)
    assert d.estimate.mode == "latency" and d.occupancy_profiled == 32
    given = derive(pk, GTX970, latency_bound=1500.0, overrides={"gmem_bytes": 128.0})
    assert given.estimate is None and given.inputs.latency_bound == 1500
    assert given.inputs.gmem_bytes == 128 and given.inputs.issued_instructions == pytest.approx(80)
    # the calculator's occupancy is the model's, whatever was achieved (here 32 of 64 slots
    # achieved at 64 registers x 256 threads: 4 blocks of 8 warps by the register file)
    recs = profile(GTX970, occupancy=24.0)
    pk = profile_kernel(recs, "stencil")
    assert profiled_occupancy(pk, GTX970) == (32.0, None)
    assert derive(pk, GTX970).achieved_occupancy == pytest.approx(24)
    # without registers per thread: the achieved occupancy, with a note
    recs = [Measurement("kernel", time_s=r.time_s, name=NAME, gpu=r.gpu, grid=r.grid,
                        block=r.block, metrics=r.metrics) for r in profile(GTX970, occupancy=24.0)]
    warps, note = profiled_occupancy(profile_kernel(recs, "stencil"), GTX970)
    assert warps == pytest.approx(24) and "achieved occupancy" in note
    bare = [Measurement("kernel", time_s=1e-3, name=NAME, gpu=recs[0].gpu, grid=(GRID, 1, 1),
                        block=(BLOCK, 1, 1))]
    with pytest.raises(InvalidParameter, match="no registers per thread"):
        profiled_occupancy(profile_kernel(bare, "stencil"), GTX970)


def test_retarget_latency_uses_the_classes_both_tables_have():
    from gpumodeler.core.kernel.latency_tables import TABLES
    from gpumodeler.core.measurements.profiled import mix_terms, retarget_latency
    counts = {"fp32_instructions": 30, "integer_instructions": 25, "control_instructions": 5,
              "sfu_instructions": 2, "dram_bytes": 256.0, "l2_bytes": 512.0,
              "shared_transactions": 6}
    mix = mix_terms(counts)
    # 512 B of L2 traffic = 4 accesses, half of them hits (DRAM 256 B of 512)
    assert mix[("memory", "dram")] == pytest.approx(2) and mix[("memory", "l2")] == pytest.approx(2)
    maxwell, kepler = TABLES["maxwell-gajger"], TABLES["kepler-gajger"]
    r = retarget_latency(1000.0, counts, maxwell, kepler)
    # Kepler's Gajger table has no SFU latency: SFU is left out of both sums
    assert "sfu" not in r.classes
    want = (35 * 9 + 25 * 9 + 2 * 300 + 2 * 175 + 6 * 33) / (35 * 6 + 25 * 6 + 2 * 350 + 2 * 194 + 6 * 28)
    assert r.ratio == pytest.approx(want, rel=1e-12)
    assert r.latency_bound_cycles == pytest.approx(1000 * want, rel=1e-12)
    assert retarget_latency(1000.0, counts, maxwell, maxwell).ratio == 1.0
    assert retarget_latency(1000.0, {}, maxwell, kepler).latency_bound_cycles == 1000.0
