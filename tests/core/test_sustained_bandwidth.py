"""The memory row at the sustained DRAM bandwidth (pin bandwidth as its ceiling), and
Little's law on global memory at low occupancy (Volkov 2016 §3.1–3.2, §3.5, §6.3)."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.memory_parallelism import memory_parallelism
from gpumodeler.core.models.registry import evaluate
from gpumodeler.core.models.result import KernelTerms, ModelInputs
from gpumodeler.core.models.throughput import (
    DRAM_GIVEN, DRAM_PIN, DRAM_PIN_CEILING, DRAM_SUSTAINED, dram_bandwidth_choice, throughput_bound)

# Volkov 2016's Kepler GPU: 8 SMs at 1124 MHz (Table 2.6), pin bandwidth 192.2 GB/s
# (Table 2.7), sustained 154 GB/s (Table 6.4).
PIN, SUSTAINED = 192.2e9, 154e9
KEPLER = GPUSpec("GTX 680", compute_capability="3.0", sms=8, sm_clock_hz=1124e6,
                 cuda_cores_per_sm=192, schedulers_per_sm=4, memory_bandwidth_bytes_per_s=PIN,
                 memory_bandwidth_measured_bytes_per_s=SUSTAINED)
PER_SM_CYCLE = 8 * 1124e6
# Volkov's streaming microbenchmark: a chain of dependent 4-byte coalesced loads, latency
# 301 cycles each on Kepler (Table 6.2); 1024 loads per thread.
LOADS, LATENCY = 1024, 301
STREAM = KernelInputs(latency_bound=LOADS * LATENCY, issued_instructions=LOADS,
                      gmem_bytes=LOADS * 128)
GRID, BLOCK = 1024 * 64, 128  # whole waves at every occupancy below
NO_TERMS = KernelTerms(underfill=False, tail=False, launch_overhead=False)


def gajger(gpu, occupancy):
    return evaluate("gajger", ModelInputs(gpu, STREAM, grid_size=GRID, block_size=BLOCK,
                                          occupancy=occupancy, terms=NO_TERMS))


def total_bytes():
    return GRID * BLOCK // 32 * STREAM.gmem_bytes


def test_the_memory_row_uses_the_sustained_bandwidth_with_the_pin_as_ceiling():
    value, kind = dram_bandwidth_choice(KEPLER)
    assert kind == DRAM_SUSTAINED and value == pytest.approx(SUSTAINED / PER_SM_CYCLE)
    above = KEPLER.with_overrides(memory_bandwidth_measured_bytes_per_s=2 * PIN)
    value, kind = dram_bandwidth_choice(above)
    assert kind == DRAM_PIN_CEILING and value == pytest.approx(PIN / PER_SM_CYCLE)
    unknown = GPUSpec("no sustained figure", sms=8, sm_clock_hz=1124e6,
                      memory_bandwidth_bytes_per_s=PIN)
    assert dram_bandwidth_choice(unknown) == (pytest.approx(PIN / PER_SM_CYCLE), DRAM_PIN)
    given = KEPLER.with_overrides(gmem_bytes_per_cycle_per_sm=5.0)  # a flag, the L2 term
    assert dram_bandwidth_choice(given) == (5.0, DRAM_GIVEN)
    tb = throughput_bound(KEPLER, issued_instructions=1, gmem_bytes=128)
    assert tb.cycles_per_warp["memory"] == pytest.approx(128 / (SUSTAINED / PER_SM_CYCLE))


def test_at_high_occupancy_a_streaming_launch_runs_at_the_sustained_bandwidth():
    r = gajger(KEPLER, 64)
    assert r.bound == "throughput" and r.binding_resource == "memory"
    assert r.time_s == pytest.approx(total_bytes() / SUSTAINED, rel=1e-9)
    assert r.quantities["memory_bandwidth_bytes_per_s"] == pytest.approx(SUSTAINED)
    assert r.quantities["memory_bandwidth_peak_bytes_per_s"] == pytest.approx(PIN)
    assert r.quantities["memory_bandwidth_kind"] == DRAM_SUSTAINED
    assert any("sustained 154 GB/s" in n and "peak 192.2 GB/s" in n for n in r.notes)
    pin_only = KEPLER.with_overrides(gmem_bytes_per_cycle_per_sm=PIN / PER_SM_CYCLE)
    assert gajger(pin_only, 64).time_s == pytest.approx(total_bytes() / PIN, rel=1e-9)


@pytest.mark.parametrize("occupancy", [4, 16, 32])
def test_at_low_occupancy_the_bytes_in_flight_over_the_latency_limit_the_launch(occupancy):
    """Little's law: occupancy × B bytes in flight per SM over the latency L give
    occupancy × B / L bytes per cycle per SM; the launch is slower than the sustained-
    bandwidth time by (L × β / B) / occupancy, and slower than the pin time by more."""
    r = gajger(KEPLER, occupancy)
    beta = SUSTAINED / PER_SM_CYCLE
    needed = LATENCY * beta / 128  # L × β / B per load: Volkov Table 6.4's "linear"
    assert occupancy < needed
    factor = needed / occupancy
    assert r.bound == "latency"
    assert r.time_s == pytest.approx(total_bytes() / SUSTAINED * factor, rel=1e-9)
    assert r.time_s > total_bytes() / PIN * factor
    mp = r.quantities["memory_parallelism"]
    assert mp["slowdown_vs_bandwidth"] == pytest.approx(factor)
    assert mp["needed_occupancy_warps_per_sm"] == pytest.approx(needed)
    assert mp["limited_by"] == "bytes in flight"
    assert mp["bytes_in_flight_per_sm"] == occupancy * LOADS * 128
    # Little's law is eq. 4.3's latency side, not a second latency term: the time is
    # warps × L / occupancy (no DRAM latency added twice)
    warps = GRID * BLOCK // 32
    assert r.time_cycles == pytest.approx(warps / 8 * LOADS * LATENCY / occupancy, rel=1e-9)


def test_needed_occupancy_is_volkovs_linear_occupancy_of_table_6_4():
    """Volkov 2016 Table 6.4 "linear" (warps per scheduler) = latency (Table 6.2) × sustained
    peak (Table 6.4) / 32, from each GPU's SMs, clock (Tables 2.6, 2.7) and schedulers."""
    gpus = {  # name: (SMs, clock Hz, schedulers, latency, sustained B/s, linear)
        "G80": (16, 1.35e9, 1, 444, 74e9, 12), "GT200": (30, 1.296e9, 1, 434, 138e9, 12),
        "Fermi": (15, 1.4e9, 2, 513, 161e9, 15.5), "Kepler": (8, 1.124e9, 4, 301, 154e9, 10),
        "Maxwell": (16, 1.266e9, 4, 368, 211e9, 7.5)}
    for name, (sms, clock, sched, latency, bw, linear) in gpus.items():
        mp = memory_parallelism(occupancy=1, bytes_per_warp=128, latency_bound_cycles=latency,
                                bandwidth_bytes_per_cycle_per_sm=bw / (sms * clock))
        assert mp.needed_occupancy / sched == pytest.approx(linear, rel=0.01), name


def test_above_the_needed_occupancy_the_bandwidth_limits():
    mp = memory_parallelism(occupancy=64, bytes_per_warp=128, latency_bound_cycles=301,
                            bandwidth_bytes_per_cycle_per_sm=17.0)
    assert not mp.latency_bound and mp.slowdown == 1.0 and mp.attained_bytes_per_cycle == 17.0


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_memory_parallelism_refuses_a_bad_input(bad):
    with pytest.raises(InvalidParameter, match="latency bound"):
        memory_parallelism(occupancy=8, bytes_per_warp=128, latency_bound_cycles=bad,
                           bandwidth_bytes_per_cycle_per_sm=17.0)
