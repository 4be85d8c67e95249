"""Kernel-time terms the real cases need, shared by the Volkov-based models (docs/models.md).

**Waves on the busiest SM** (Volkov 2016 §3.4–3.5 and §5.6–5.9). Volkov's model gives the
time of a wave of ``k`` warps resident on one SM from Little's law over that wave: the
warps cannot finish before their latency bound and cannot leave faster than the throughput
bound, so ``wave(k) = max(L, k / TB)`` cycles (``L`` latency bound, cycles per warp;
``TB`` throughput bound, warps per cycle per SM). Gajger eq. 4.1 is the same model with the
*mean* occupancy held at the launch's occupancy ``n`` for the whole run:

    T_4.1 = (warps / SMs) · max(L / n, 1 / TB)              (λ = 1)

Blocks are whole (a block retires when its last warp does, §5.6), so an SM holds
``cap = floor(n / warps per block)`` blocks, and the busiest SM receives
``m = ceil(blocks / SMs)`` of them (blocks spread evenly over the SMs).

* **Under-filled GPU** (on by default): when the grid does not fill one wave
  (``blocks < SMs · cap``), the occupancy of each SM is limited by the grid, not by the
  launch's occupancy, and the kernel is one wave of ``m`` blocks on the busiest SM:
  ``T = wave(m · warps per block)``. Eq. 4.1 would instead spread the warps over all SMs at
  the full occupancy — 36 blocks of 8 warps on 15 SMs at 64 warps/SM is 36/15 blocks of a
  full SM's throughput in eq. 4.1, but in fact 3 blocks share an SM for one latency bound.
  On by default because Volkov's occupancy is the *mean* occupancy (§3.4), which the grid
  bounds; it only applies where eq. 4.1's assumption (full SMs) is false, so every
  prediction with a grid of at least one wave keeps its eq. 4.1 number. The wave's
  throughput bound is that of the *active* SMs: global memory is shared by min(SMs, blocks)
  SMs, not by all of them (:func:`kernel_terms_vec.memory_bandwidth_per_active_sm`, as Hong
  & Kim 2009's MWP_peak_BW divides by #Active_SMs), so a memory-bound launch of 4 blocks on
  100 SMs gets 25 times a full launch's bandwidth per SM (no per-SM cap: the device database
  has no such figure).
* **Tail of the last wave** (off by default): with ``m >= cap`` the busiest SM runs
  ``floor(m / cap)`` full waves and one partial wave of ``r = m mod cap`` blocks:
  ``T = floor(m / cap) · wave(cap · wpb) + [r > 0] · wave(r · wpb)``. Volkov observes these
  synchronized waves and the occupancy dips at their ends (§5.6, §5.8) but his model — and
  Gajger's eq. 4.1, whose λ (eq. 4.4) is calibrated on full runs — keeps the mean
  occupancy; the documents do not make the step part of the model, so it is a switch.
* **Launch overhead**: a fixed time per kernel launch, a GPU parameter
  (``GPUSpec.launch_overhead_s``, calibratable from measurements). On when the value is
  known; no document gives one for any GPU, so by default it is unknown and off.
* **Working set in L2**: replaced. It served all global traffic at the L2 bandwidth once a
  given working set fitted in the L2, with no first load from DRAM; the reuse model
  (core.kernel.sass.reuse, docs/models.md "Reuse and the L2") takes the compulsory bytes
  from DRAM and the re-reads from the L2 (the worksheet's ``l2`` row). The term is listed,
  never applied, so its name and ``--working-set`` keep working.

Where the terms apply: everywhere a kernel time is predicted. Each rule is written once, over
numpy arrays, in :mod:`kernel_terms_vec` (which :func:`gpumodeler.core.models.gajger.predict`
given ``terms`` uses for sweeps, project launches and the launch panel's Prediction box);
this module is the one-launch API of the registry's models (``predict --model``, the default
``predict`` and the launch panel's models table), computed through those same functions with
0-d inputs. Without ``terms`` that engine stays plain eq. 4.1.
"""
from __future__ import annotations

import math

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.kernel_terms_vec import (
    active_sms, apply_wave_terms, eq41_cycles, memory_bandwidth_per_active_sm, l2_term,
    overhead_decision, overhead_effect, wave_cycles, with_memory_bandwidth, worksheet_on_active_sms)
from gpumodeler.core.models.result import KernelTerms, ModelInputs, TermEffect
from gpumodeler.core.models.throughput import ThroughputBound, throughput_bound


def warps_per_block(block_size, warp_size: int) -> int:
    """ceil(threads per block / warp size) for a 1-3-D block."""
    threads = math.prod(block_size) if isinstance(block_size, (tuple, list)) else int(block_size)
    if threads < 1:
        raise InvalidParameter(f"block size must be at least 1 thread, got {block_size!r}", item="block_size")
    return -(-int(threads) // int(warp_size))


def blocks_of(grid_size) -> int:
    blocks = int(math.prod(grid_size)) if isinstance(grid_size, (tuple, list)) else int(grid_size)
    if blocks < 1:
        raise InvalidParameter(f"grid size must be at least 1 block, got {grid_size!r}", item="grid_size")
    return blocks


def throughput_of(gpu: GPUSpec, kernel, *, memory_bytes_per_s: float | None = None) -> ThroughputBound:
    """The per-resource worksheet (:func:`throughput_bound`) for ``kernel``'s per-warp counts,
    with global memory served at ``memory_bytes_per_s`` when given (the sustained DRAM
    bandwidth)."""
    if memory_bytes_per_s is not None:
        gpu = with_memory_bandwidth(gpu, memory_bytes_per_s)
    return throughput_bound(gpu, **kernel.worksheet())


def waves(inputs: ModelInputs, latency_bound: float, tb: float, *, lam: float = 1.0,
          worksheet: ThroughputBound | None = None):
    """Kernel cycles with the under-filled and tail terms; returns (cycles, base, [TermEffect], info).

    ``base`` is eq. 4.1 (divided by ``lam``); the terms replace it where they apply. One
    launch of :func:`kernel_terms_vec.apply_wave_terms` (the rules are written there once);
    given the ``worksheet`` behind ``tb``, an under-filled launch runs at the bound of the
    active SMs (global memory shared by them only), reported in ``info``."""
    gpu = inputs.gpu
    sms = gpu.require("sms")
    wpb = warps_per_block(inputs.block_size, gpu.require("warp_size"))
    blocks = blocks_of(inputs.grid_size)
    vec = apply_wave_terms(gpu, terms=inputs.terms, grid_size=blocks, block_size=inputs.block_size,
                           occupancy=float(inputs.occupancy), latency_bound=latency_bound,
                           throughput_wpc=tb, lam=lam, worksheet=worksheet)
    cap, per_sm = int(vec.capacity), int(vec.per_sm)
    info = {"blocks": blocks, "warps_per_block": wpb, "blocks_per_sm_capacity": cap,
            "blocks_on_busiest_sm": per_sm, "waves": blocks / (sms * cap) if cap else None}
    if vec.underfill_applied:
        info["occupancy_limited_by_grid"] = per_sm * wpb
        if vec.active_bound is not None:
            info["active_sms"] = int(active_sms(sms, blocks))
            info["throughput_bound_on_active_sms"] = float(vec.active_bound.warps_per_cycle)
            info["binding_on_active_sms"] = str(vec.active_bound.binding)
    if vec.tail_applied:
        info["last_wave_blocks"] = per_sm % cap
    return float(vec.cycles), float(vec.eq41_cycles), vec.wave_effects(), info


def l2_effect(inputs: ModelInputs) -> TermEffect:
    """The old L2 term of this launch, never applied (:func:`kernel_terms_vec.l2_term`; its
    ``working_set_bytes`` parameter checked)."""
    return l2_term(inputs.param("working_set_bytes"))


def launch_overhead(inputs: ModelInputs, time_s: float):
    """(added seconds, TermEffect) of the fixed launch overhead."""
    value, off_note = overhead_decision(inputs.gpu, inputs.terms)
    return value, overhead_effect(value, off_note, time_s)


__all__ = ["KernelTerms", "active_sms", "blocks_of", "eq41_cycles", "l2_effect",
           "launch_overhead", "memory_bandwidth_per_active_sm", "throughput_of",
           "warps_per_block", "wave_cycles", "waves", "worksheet_on_active_sms"]
