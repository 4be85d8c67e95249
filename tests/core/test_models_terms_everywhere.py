"""Every model lists every kernel-time term (under-filled GPU, tail effect, launch overhead),
applied with its effect or off with the reason, and applies them with the same switches."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.registry import MODELS, evaluate
from gpumodeler.core.models.result import KernelTerms, ModelInputs

GPU = GPUSpec("terms", compute_capability="3.5", sms=15, sm_clock_hz=745e6, cuda_cores_per_sm=192,
              schedulers_per_sm=4, sfu_per_sm=32, fp64_units_per_sm=64,
              memory_bandwidth_bytes_per_s=288e9, memory_bandwidth_measured_bytes_per_s=183.5e9,
              smem_accesses_per_cycle_per_sm=1.0)
PARAMS = {"critical_dram_accesses": 2.0, "contention_b_cycles": 32.0,
          "contention_c_bytes_per_s": 300e9, "dram_latency_cycles": 400.0,
          "departure_delay_cycles": 4.0}
#: compute-heavy: every model is bound by the SMs' own work
COMPUTE = KernelInputs(latency_bound=900.0, issued_instructions=4000.0,
                       cuda_core_instructions=3900.0, gmem_bytes=256.0, smem_bank_cycles=8.0)
COUNTS = {"memory_instructions": 2.0, "shared_instructions": 8.0}
TERMS = ("under-filled GPU", "tail effect", "launch overhead")


def run(name, grid, *, terms=KernelTerms(), gpu=GPU, occupancy=64.0, kernel=COMPUTE):
    return evaluate(name, ModelInputs(gpu, kernel, grid_size=grid, block_size=256,
                                      occupancy=occupancy, counts=COUNTS, parameters=PARAMS,
                                      terms=terms))


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("grid", [3, 15 * 8 * 3 + 7], ids=["under-filled", "waves"])
def test_every_model_lists_every_term(name, grid):
    r = run(name, grid, terms=KernelTerms(tail=True),
            gpu=GPU.with_overrides(launch_overhead_s=3e-6))
    by_name = {t.name: t for t in r.terms}
    assert set(TERMS) <= set(by_name)
    assert by_name["launch overhead"].applied
    if grid == 3:
        assert by_name["under-filled GPU"].applied and not by_name["tail effect"].applied
        assert "less than one wave" in by_name["tail effect"].note
    else:
        assert by_name["tail effect"].applied and not by_name["under-filled GPU"].applied
        assert "at least one wave" in by_name["under-filled GPU"].note


@pytest.mark.parametrize("name", list(MODELS))
def test_launch_overhead_adds_its_time_in_every_model(name):
    plain = run(name, 500)
    with_overhead = run(name, 500, gpu=GPU.with_overrides(launch_overhead_s=5e-6))
    assert with_overhead.time_s - plain.time_s == pytest.approx(5e-6, rel=1e-9)
    off = run(name, 500, gpu=GPU.with_overrides(launch_overhead_s=5e-6),
              terms=KernelTerms(launch_overhead=False))
    assert off.time_s == pytest.approx(plain.time_s, rel=1e-12)


@pytest.mark.parametrize("name", list(MODELS))
def test_an_under_filled_grid_is_never_faster_per_block_than_one_block_per_sm(name):
    """Fewer blocks than SMs: with the under-filled term every model takes at least as long
    as one block per SM needs (one block cannot use another SM); without it, the models
    that spread the work over every SM (bsp, roofline, mwp-cwp's #Rep) are faster."""
    one_each = run(name, 15).time_s
    for blocks in (1, 5):
        on = run(name, blocks)
        assert on.time_s >= one_each * (1 - 1e-9), (blocks, on.time_s, one_each)
        off = run(name, blocks, terms=KernelTerms(underfill=False))
        under = next(t for t in on.terms if t.name == "under-filled GPU")
        assert under.applied
        assert on.time_s - off.time_s == pytest.approx(under.delta_s, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("name", ["bsp", "roofline"])
def test_throughput_models_take_the_busiest_sms_whole_blocks(name):
    """bsp and roofline (no latency): under-filled and tail terms are the busiest SM's whole
    blocks, ceil(blocks/SMs)·SMs/blocks times the evenly spread time (compute-bound here)."""
    for blocks, terms in ((20, KernelTerms()), (15 * 8 * 3 + 7, KernelTerms(tail=True))):
        spread = run(name, blocks, terms=KernelTerms(underfill=False, tail=False)).time_s
        got = run(name, blocks, terms=terms).time_s
        assert got == pytest.approx(spread * (-(-blocks // 15)) * 15 / blocks, rel=1e-12)
    # blocks spread evenly: no term changes anything
    even = 15 * 8 * 4
    assert run(name, even, terms=KernelTerms(tail=True)).time_s == pytest.approx(
        run(name, even).time_s, rel=1e-12)


def test_roofline_dram_level_is_shared_not_per_sm():
    """A DRAM-bound launch: the busiest SM's blocks do not change the DRAM time (bandwidth is
    the GPU's, with no per-SM cap)."""
    memory = KernelInputs(latency_bound=900.0, issued_instructions=10.0,
                          cuda_core_instructions=2.0, gmem_bytes=4096.0)
    spread = run("roofline", 20, kernel=memory, terms=KernelTerms(underfill=False))
    under = run("roofline", 20, kernel=memory)
    assert under.binding_resource == "dram"
    assert under.time_s == pytest.approx(spread.time_s, rel=1e-12)
