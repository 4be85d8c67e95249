"""The scalar and vectorised prediction paths are one arithmetic (speed targets).

A launch predicted on its own (Python numbers) and the same launch inside a vectorised call
(numpy arrays) give the same numbers to 1e-12 and the same reported names; the occupancy
calculator's arrays path feeding ``predict`` agrees with the scalar calculator feeding it;
results whose reported fields are computed on first read still compare, copy and pickle;
and the benchmark's hand-fused numpy comparator computes what the engine computes.
"""
import copy
import dataclasses
import importlib.util
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.core.models.kernel_time import grid_for
from gpumodeler.core.models.throughput import RESOURCES, throughput_bound
from gpumodeler.core.occupancy.arrays import occupancy_array
from gpumodeler.core.occupancy.calculator import occupancy
from gpumodeler.core.occupancy.compute_capability import architecture

from repetitions import repetitions

ROOT = Path(__file__).resolve().parents[2]
MAXWELL = GPUSpec("maxwell", compute_capability="5.2", sms=13, sm_clock_hz=1253e6,
                  cuda_cores_per_sm=128, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=13.78,
                  sfu_per_sm=32, fp64_units_per_sm=4, smem_accesses_per_cycle_per_sm=1.0)
AMPERE = GPUSpec("ga10x", compute_capability="8.6", sms=82, sm_clock_hz=1.7e9,
                 cuda_cores_per_sm=128, schedulers_per_sm=4, memory_bandwidth_bytes_per_s=936e9,
                 int32_units_per_sm=64, int32_fp32_shared_lanes_per_sm=64,
                 fp16_results_per_cycle_per_sm=256, sfu_per_sm=16, fp64_units_per_sm=2,
                 smem_accesses_per_cycle_per_sm=1.0)
LINK = LinkSpec("pcie", bandwidth_bytes_per_s=15.8e9, startup_htod_s=4e-6, startup_dtoh_s=5e-6,
                lambda_htod=0.69, lambda_dtoh=0.65)

count = st.one_of(st.just(0.0), st.floats(0.0, 5e3), st.integers(0, 5000).map(float))
launch = st.fixed_dictionaries({
    "latency_bound": st.floats(1.0, 1e5), "issued": st.floats(1.0, 1e4),
    "cuda": count, "gmem": count, "sfu": count, "fp64": count, "smem": count, "dual": count,
    "fp32": count, "int32": count, "fp16": count,
    "grid": st.integers(1, 10**6), "block": st.integers(1, 1024),
    "occupancy": st.floats(0.5, 64.0), "lam": st.floats(0.05, 5.0),
    "htod": st.floats(0.0, 1e9), "dtoh": st.floats(0.0, 1e9),
})
COUNTS = ("issued", "cuda", "gmem", "sfu", "fp64", "smem", "dual", "fp32", "int32", "fp16")


def _inputs(get, pipes: bool) -> KernelInputs:
    return KernelInputs(
        latency_bound=get("latency_bound"), issued_instructions=get("issued"),
        cuda_core_instructions=get("cuda"), gmem_bytes=get("gmem"), sfu_instructions=get("sfu"),
        fp64_instructions=get("fp64"), smem_bank_cycles=get("smem"), dual_issues=get("dual"),
        pipe_instructions={"fp32": get("fp32"), "int32": get("int32"), "fp16": get("fp16")}
        if pipes else None)


def _predict(gpu, get, pipes):
    return predict(gpu, _inputs(get, pipes), grid_size=get("grid"), block_size=get("block"),
                   occupancy=get("occupancy"), lam=get("lam"), link=LINK,
                   transfers=[("htod", get("htod")), ("dtoh", get("dtoh"))])


@settings(max_examples=repetitions(25, 60), deadline=None)
@given(points=st.lists(launch, min_size=1, max_size=12), gpu=st.sampled_from([MAXWELL, AMPERE]),
       pipes=st.booleans())
def test_scalar_and_vectorised_predict_agree(points, gpu, pipes):
    columns = {k: np.array([p[k] for p in points]) for k in points[0]}
    many = _predict(gpu, columns.__getitem__, pipes)
    for i, p in enumerate(points):
        one = _predict(gpu, p.__getitem__, pipes)
        assert isinstance(one.kernel.time_s, float) and isinstance(one.kernel.mode, str)
        for name in ("warps_launched", "warp_throughput", "latency_throughput", "throughput_bound",
                     "knee_occupancy", "time_cycles", "time_s"):
            assert getattr(many.kernel, name)[i] == pytest.approx(getattr(one.kernel, name), rel=1e-12)
        assert many.kernel.mode[i] == one.kernel.mode
        assert many.kernel.limiting_resource[i] == one.kernel.limiting_resource
        assert many.throughput.binding[i] == one.throughput.binding
        for r in RESOURCES:
            if r == "fp32_int32" and p["int32"] == 0 and one.throughput.pipes:
                # Known, and older than this test: a sweep fills the shared-lane row wherever
                # any point issues INT32; without INT32 it equals the fp32 row (or is below
                # it), so the bound and the binding resource do not change.
                assert many.throughput.cycles_per_warp[r][i] <= \
                    many.throughput.cycles_per_warp["fp32"][i] * (1 + 1e-12)
                continue
            assert many.throughput.cycles_per_warp[r][i] == pytest.approx(
                one.throughput.cycles_per_warp[r], rel=1e-12, abs=0)
        assert many.total_time_s[i] == pytest.approx(one.total_time_s, rel=1e-12)
        for t_many, t_one in zip(many.transfer_times_s, one.transfer_times_s):
            assert t_many[i] == pytest.approx(t_one, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 1024), st.integers(0, 80), st.integers(0, 60000),
                          st.integers(1, 10**8), st.floats(10.0, 1e4)), min_size=1, max_size=15),
       st.sampled_from(["3.5", "5.2", "7.5", "8.6", "9.0"]))
def test_occupancy_arrays_then_predict_agree_with_the_scalar_calculator(launches, cc):
    gpu = dataclasses.replace(MAXWELL, compute_capability=cc)
    block, regs, smem, n, lat = (np.array(c) for c in zip(*launches))
    occ = occupancy_array(cc, block, regs, smem)
    ok = np.asarray(occ.valid)
    if not ok.any():
        return
    many = predict(gpu, KernelInputs(latency_bound=lat[ok], issued_instructions=40.0, gmem_bytes=96.0),
                   grid_size=grid_for(n[ok], block[ok]), block_size=block[ok],
                   occupancy=occ.active_warps_per_sm[ok], lam=0.7)
    for j, i in enumerate(np.flatnonzero(ok)):
        one_occ = occupancy(cc, int(block[i]), int(regs[i]), int(smem[i]))
        assert one_occ == occ.at(i)
        one = predict(gpu, KernelInputs(latency_bound=float(lat[i]), issued_instructions=40.0,
                                        gmem_bytes=96.0),
                      grid_size=grid_for(int(n[i]), int(block[i])), block_size=int(block[i]),
                      occupancy=one_occ.active_warps_per_sm, lam=0.7)
        assert many.kernel.time_s[j] == pytest.approx(one.kernel.time_s, rel=1e-12)
        assert many.kernel.limiting_resource[j] == one.kernel.limiting_resource


def test_reported_fields_computed_on_first_read_match_their_definitions():
    issued = np.array([10.0, 400.0, 50.0, 50.0])
    tb = throughput_bound(MAXWELL, issued_instructions=issued, gmem_bytes=np.array([0.0, 0, 689, 0]),
                          cuda_core_instructions=np.array([0.0, 0, 0, 50.0]))
    table = np.stack([np.broadcast_to(tb.cycles_per_warp[r], issued.shape) for r in RESOURCES])
    assert list(tb.binding) == [RESOURCES[k] for k in table.argmax(axis=0)]
    assert tb.binding.dtype == object
    # a tie (50 issued / 4 schedulers = 32 × 50 CUDA-core / 128 = 12.5 cycles) binds the first
    assert tb.binding[3] == "cuda_cores"
    p = predict(MAXWELL, KernelInputs(latency_bound=np.array([100.0, 500.0, 100.0, 100.0]),
                                      issued_instructions=issued,
                                      cuda_core_instructions=np.array([0.0, 0, 0, 50.0])),
                grid_size=100, block_size=256, occupancy=np.array([64.0, 1.0, 64.0, 64.0]))
    k = p.kernel
    latency = k.latency_throughput < k.throughput_bound
    assert list(k.mode) == list(np.where(latency, "latency", "throughput"))
    assert list(k.limiting_resource) == list(np.where(latency, "latency", p.throughput.binding))
    assert np.array_equal(k.knee_occupancy, np.array([100.0, 500.0, 100.0, 100.0]) * k.throughput_bound)


def test_results_with_fields_read_later_compare_copy_and_pickle():
    inputs = KernelInputs(latency_bound=np.array([100.0, 2000.0]), issued_instructions=np.array([40.0, 40.0]))
    p = predict(MAXWELL, inputs, grid_size=1000, block_size=256, occupancy=np.array([64.0, 8.0]))
    for clone in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p), copy.copy(p)):
        assert list(clone.kernel.mode) == list(p.kernel.mode) == ["throughput", "latency"]
        assert list(clone.kernel.limiting_resource) == ["issue", "latency"]
        assert np.array_equal(clone.kernel.time_s, p.kernel.time_s)
    fresh = predict(MAXWELL, inputs, grid_size=1000, block_size=256, occupancy=np.array([64.0, 8.0]))
    assert "mode=array(['throughput', 'latency']" in repr(fresh.kernel)
    assert dataclasses.asdict(fresh.throughput)["binding"].tolist() == ["issue", "issue"]
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        fresh.kernel.nonsense
    with pytest.raises(dataclasses.FrozenInstanceError):
        fresh.kernel.mode = "latency"
    occ = occupancy_array("8.6", np.array([128, 1024, 2048]), 32, np.array([0, 4096, 0]))
    clone = copy.copy(occ)  # (its mappings are read-only views, which do not pickle)
    assert list(clone.valid) == [True, True, False] and clone.reasons[2] == occ.reasons[2] != ""
    assert clone.block_limits["shared_memory"].tolist() == occ.block_limits["shared_memory"].tolist()


def _bench_core():
    spec = importlib.util.spec_from_file_location("bench_core", ROOT / "benchmarks/bench_core.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 1024), st.integers(1, 64), st.integers(0, 49152),
                          st.integers(1, 10**9), st.floats(1.0, 1e5), st.floats(0.0, 1e4),
                          st.floats(1.0, 1e4), st.floats(0.0, 1e5)), min_size=1, max_size=30))
def test_the_benchmark_fused_comparator_equals_the_engine(launches):
    bench = _bench_core()
    arch = architecture("5.2")
    block, regs, smem, n, lat, cuda, issued, gmem = (np.array(c) for c in zip(*launches))
    ok = np.asarray(occupancy_array("5.2", block, regs, smem).valid)
    if not ok.any():
        return
    grid = {"block": block[ok], "regs": regs[ok], "smem": smem[ok], "n": n[ok]}
    inputs = KernelInputs(latency_bound=lat[ok], cuda_core_instructions=cuda[ok],
                          issued_instructions=issued[ok], gmem_bytes=gmem[ok])
    engine = bench.engine(bench.GTX970, "5.2", grid, inputs)
    fused = bench.fused_comparator(bench.GTX970, arch, grid["block"], grid["regs"], grid["smem"],
                                   grid["n"], lat[ok], cuda[ok], issued[ok], gmem[ok])
    np.testing.assert_allclose(engine, fused, rtol=1e-12, atol=0)
