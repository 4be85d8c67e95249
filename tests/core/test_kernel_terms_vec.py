"""The vectorised kernel terms (core/models/kernel_terms_vec.py) give the registry's gajger
numbers: for random launches — under-filled grids, full waves, --tail, launch overhead,
working set in L2 — gajger.predict(terms=...) equals registry.evaluate("gajger") to 1e-12,
one launch at a time and as one array call, with the same terms (names, notes, effects)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.core.models.registry import evaluate
from gpumodeler.core.models.result import KernelTerms, ModelInputs
from repetitions import repetitions

SM15 = GPUSpec("15 SMs", sms=15, sm_clock_hz=1e9, cuda_cores_per_sm=192, schedulers_per_sm=4,
               gmem_bytes_per_cycle_per_sm=20, l2_bytes=1.5e6)


@st.composite
def launches(draw):
    gpu = GPUSpec("random", sms=draw(st.integers(1, 144)),
                  sm_clock_hz=draw(st.floats(3e8, 2.5e9)),
                  cuda_cores_per_sm=draw(st.sampled_from([32, 48, 64, 128, 192])),
                  schedulers_per_sm=draw(st.sampled_from([1, 2, 4])),
                  gmem_bytes_per_cycle_per_sm=draw(st.floats(1, 100)),
                  l2_bytes=draw(st.sampled_from([None, 2e6, 4e7])),
                  l2_bandwidth_bytes_per_s=draw(st.sampled_from([None, 1.5e12])),
                  launch_overhead_s=draw(st.sampled_from([None, 0.0, 4e-6])))
    kernel = KernelInputs(latency_bound=draw(st.floats(1, 1e5)),
                          issued_instructions=draw(st.floats(1, 1e5)),
                          cuda_core_instructions=draw(st.floats(0, 1e5)),
                          gmem_bytes=draw(st.floats(0, 1e5)))
    block = draw(st.integers(1, 1024))
    occ = draw(st.floats(0.5, 64))
    # grids around one wave: fewer blocks than SMs up to many waves
    grid = draw(st.one_of(st.integers(1, 4 * gpu.sms), st.integers(1, 10**7)))
    terms = KernelTerms(underfill=draw(st.booleans()), tail=draw(st.booleans()),
                        launch_overhead=draw(st.booleans()), l2=draw(st.booleans()))
    ws = draw(st.sampled_from([None, 1e6, 1e9]))
    lam = draw(st.floats(0.05, 5))
    return gpu, kernel, grid, block, occ, lam, terms, ws


def registry(gpu, kernel, grid, block, occ, lam, terms, ws):
    return evaluate("gajger", ModelInputs(gpu, kernel, grid_size=grid, block_size=block, occupancy=occ,
                                          lam=lam, terms=terms,
                                          parameters={} if ws is None else {"working_set_bytes": ws}))


def vectorised(gpu, kernel, grid, block, occ, lam, terms, ws):
    return predict(gpu, kernel, grid_size=grid, block_size=block, occupancy=occ, lam=lam,
                   terms=terms, working_set_bytes=ws)


def same_terms(effects, reference):
    assert [(t.name, t.applied, t.note) for t in effects] == \
        [(t.name, t.applied, t.note) for t in reference]
    for t, r in zip(effects, reference):
        assert t.delta_s == pytest.approx(r.delta_s, rel=1e-9, abs=1e-300)
        assert t.fraction == pytest.approx(r.fraction, rel=1e-9, abs=1e-12)


@settings(max_examples=repetitions(100, 300), deadline=None)
@given(launches())
def test_one_launch_equals_the_registry(launch):
    ref = registry(*launch)
    p = vectorised(*launch)
    assert p.kernel.time_s == pytest.approx(ref.time_s, rel=1e-12)
    assert p.kernel.time_cycles == pytest.approx(ref.time_cycles, rel=1e-12)
    assert p.kernel.mode == ref.bound
    assert p.kernel.limiting_resource == ref.binding_resource
    assert p.kernel.warp_throughput == pytest.approx(ref.quantities["warp_throughput"], rel=1e-12)
    same_terms(p.terms.effects(), ref.terms)
    assert p.summary()["terms"] == [t.describe() for t in ref.terms]


@settings(max_examples=repetitions(15, 40), deadline=None)
@given(st.lists(launches(), min_size=1, max_size=12), st.booleans(), st.booleans())
def test_one_array_call_equals_the_registry_per_launch(batch, tail, underfill):
    """A sweep: one GPU and kernel shape, arrays of grids, blocks, occupancies, λ and
    latency bounds in one call."""
    gpu, kernel0, *_ = batch[0]
    terms = KernelTerms(underfill=underfill, tail=tail)
    grids = np.array([b[2] for b in batch], dtype=np.int64)
    blocks = np.array([b[3] for b in batch], dtype=np.int64)
    occs = np.array([b[4] for b in batch])
    lams = np.array([b[5] for b in batch])
    lats = np.array([b[1].latency_bound for b in batch])
    kernel = KernelInputs(latency_bound=lats, issued_instructions=kernel0.issued_instructions,
                          cuda_core_instructions=kernel0.cuda_core_instructions,
                          gmem_bytes=kernel0.gmem_bytes)
    p = predict(gpu, kernel, grid_size=grids, block_size=blocks, occupancy=occs, lam=lams, terms=terms)
    text = p.terms.applied_text()
    for i, b in enumerate(batch):
        one = KernelInputs(latency_bound=lats[i], issued_instructions=kernel0.issued_instructions,
                           cuda_core_instructions=kernel0.cuda_core_instructions,
                           gmem_bytes=kernel0.gmem_bytes)
        ref = registry(gpu, one, int(grids[i]), int(blocks[i]), occs[i], lams[i], terms, None)
        assert p.kernel.time_s[i] == pytest.approx(ref.time_s, rel=1e-12)
        assert p.kernel.mode[i] == ref.bound
        same_terms(p.terms.effects((i,)), ref.terms)
        assert text[i] == "; ".join(t.describe() for t in ref.terms if t.applied)


def test_without_terms_predict_is_plain_eq_4_1():
    kernel = KernelInputs(latency_bound=1000, issued_instructions=100)
    plain = predict(SM15, kernel, grid_size=36, block_size=256, occupancy=64)
    assert plain.terms is None
    assert plain.kernel.time_cycles == pytest.approx(36 * 8 / 15 * 25)
    off = predict(SM15, kernel, grid_size=36, block_size=256, occupancy=64,
                  terms=KernelTerms(underfill=False))
    assert off.kernel.time_s == plain.kernel.time_s


def test_36_blocks_on_15_sms_in_a_sweep_and_the_tail_step():
    """The README's case, as one array call: 36 blocks (one wave of 3 blocks per SM) and
    2 vs 2.1 waves with --tail (120 blocks a wave)."""
    kernel = KernelInputs(latency_bound=1000, issued_instructions=100)  # TB = 1/25 warps/cycle
    grids = np.array([36, 120, 240, 252])
    p = predict(SM15, kernel, grid_size=grids, block_size=256, occupancy=64, terms=KernelTerms(tail=True))
    assert p.kernel.time_cycles.tolist() == pytest.approx([1000, 1600, 3200, 3200 + 1000])
    assert p.kernel.mode.tolist() == ["latency", "throughput", "throughput", "throughput"]
    text = p.terms.applied_text()
    assert text[0].startswith("under-filled GPU: +") and "3 block(s) (24 warps) per SM" in text[0]
    assert text[1] == "tail effect: +0 % (1 full wave(s) of 8 blocks + 0 block(s) per SM)"
    assert text[3].startswith("tail effect: +")


def test_l2_and_launch_overhead_in_the_vectorised_path():
    """The old L2 term (all bytes at the L2 bandwidth once a working set fits) no longer
    applies: a working set changes nothing, the L2 hits are their own worksheet row."""
    gpu = SM15.with_overrides(l2_bandwidth_bytes_per_s=1.2e12, launch_overhead_s=5e-6)
    kernel = KernelInputs(latency_bound=100, issued_instructions=10, gmem_bytes=4096)
    dram = predict(gpu, kernel, grid_size=np.array([3000, 6000]), block_size=256, occupancy=64,
                   terms=KernelTerms())
    l2 = predict(gpu, kernel, grid_size=np.array([3000, 6000]), block_size=256, occupancy=64,
                 terms=KernelTerms(), working_set_bytes=1e6)
    assert np.all(l2.kernel.time_s == dram.kernel.time_s)
    assert all("launch overhead: +" in t and "working set in L2" not in t
               for t in l2.terms.applied_text())
    hits = KernelInputs(latency_bound=100, issued_instructions=10, gmem_bytes=4096,
                        l2_bytes=4 * 4096)
    served = predict(gpu, hits, grid_size=6000, block_size=256, occupancy=64, terms=KernelTerms())
    l2_per_cycle = 1.2e12 / (15 * 1e9)
    assert served.throughput.cycles_per_warp["l2"] == pytest.approx(4 * 4096 / l2_per_cycle)
    assert served.throughput.cycles_per_warp["memory"] == dram.throughput.cycles_per_warp["memory"]
    plain = predict(gpu, kernel, grid_size=3000, block_size=256, occupancy=64)
    assert dram.kernel.time_s[0] == pytest.approx(plain.kernel.time_s + 5e-6, rel=1e-12)
