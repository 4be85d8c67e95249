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
  prediction with a grid of at least one wave keeps its eq. 4.1 number.
* **Tail of the last wave** (off by default): with ``m >= cap`` the busiest SM runs
  ``floor(m / cap)`` full waves and one partial wave of ``r = m mod cap`` blocks:
  ``T = floor(m / cap) · wave(cap · wpb) + [r > 0] · wave(r · wpb)``. Volkov observes these
  synchronized waves and the occupancy dips at their ends (§5.6, §5.8) but his model — and
  Gajger's eq. 4.1, whose λ (eq. 4.4) is calibrated on full runs — keeps the mean
  occupancy; the documents do not make the step part of the model, so it is a switch.
* **Launch overhead**: a fixed time per kernel launch, a GPU parameter
  (``GPUSpec.launch_overhead_s``, calibratable from measurements). On when the value is
  known; no document gives one for any GPU, so by default it is unknown and off.
* **Working set in L2**: when the bytes a kernel touches fit in the L2 (``l2_bytes``), its
  global-memory traffic is served at the L2 bandwidth (``l2_bandwidth_bytes_per_s``)
  instead of DRAM's. The working set is not in the kernel graph, so the term applies only
  when the user gives it (and the L2 bandwidth, which no document lists).

Where the terms apply: everywhere a kernel time is predicted. This module computes them for
one launch (the registry's models: ``predict --model``, the default ``predict`` and the
launch panel's models table); :mod:`kernel_terms_vec` computes the same numbers over arrays
for :func:`gpumodeler.core.models.gajger.predict` given ``terms`` (sweeps, project launches,
the launch panel's Prediction box). Without ``terms`` that engine stays plain eq. 4.1.
"""
from __future__ import annotations

from dataclasses import fields
import math

import numpy as np

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.device import GPUSpec
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
    with global memory served at ``memory_bytes_per_s`` when given (sustained DRAM, L2)."""
    if memory_bytes_per_s is not None:
        per_cycle = memory_bytes_per_s / (gpu.require("sms") * gpu.require("sm_clock_hz"))
        gpu = gpu.with_overrides(gmem_bytes_per_cycle_per_sm=per_cycle)
    counts = {f.name: getattr(kernel, f.name) for f in fields(kernel) if f.name != "latency_bound"}
    return throughput_bound(gpu, **counts)


def wave_cycles(latency_bound, throughput_bound_wpc, warps):
    """Cycles for ``warps`` resident together on one SM: max(L, warps / TB) (Volkov §3.5)."""
    return np.maximum(latency_bound, warps / throughput_bound_wpc)


def eq41_cycles(latency_bound, tb, occupancy, warps_total, sms, lam=1.0):
    """Gajger eq. 4.1: warps / (min(n / L, TB) · SMs · λ), in the order predict_kernel
    evaluates it (so the numbers agree to the last bit)."""
    with np.errstate(over="ignore", divide="ignore"):  # an infinite time is refused later
        return warps_total / (np.minimum(occupancy / latency_bound, tb) * sms * lam)


def waves(inputs: ModelInputs, latency_bound: float, tb: float, *, lam: float = 1.0):
    """Kernel cycles with the under-filled and tail terms; returns (cycles, base, [TermEffect], info).

    ``base`` is eq. 4.1 (divided by ``lam``); the terms replace it where they apply."""
    gpu, terms = inputs.gpu, inputs.terms
    sms = gpu.require("sms")
    wpb = warps_per_block(inputs.block_size, gpu.require("warp_size"))
    blocks = blocks_of(inputs.grid_size)
    occ = float(inputs.occupancy)
    base = float(eq41_cycles(latency_bound, tb, occ, blocks * wpb, sms, lam))
    cap = math.floor(occ / wpb + 1e-9)
    per_sm = -(-blocks // sms)
    info = {"blocks": blocks, "warps_per_block": wpb, "blocks_per_sm_capacity": cap,
            "blocks_on_busiest_sm": per_sm, "waves": blocks / (sms * cap) if cap else None}
    effects = []
    clock = gpu.require("sm_clock_hz")
    if cap < 1:
        note = "occupancy below one block per SM; wave terms need whole blocks"
        effects += [TermEffect("under-filled GPU", False, note=note),
                    TermEffect("tail effect", False, note=note)]
        return base, base, effects, info
    underfilled = blocks < sms * cap
    if underfilled:
        effects.append(TermEffect("tail effect", False, note="the grid is less than one wave"))
        if terms.underfill:
            cycles = float(wave_cycles(latency_bound, tb, per_sm * wpb)) / lam
            info["occupancy_limited_by_grid"] = per_sm * wpb
            effects.append(_effect("under-filled GPU", base, cycles, clock,
                                   f"{blocks} blocks on {sms} SMs: one wave of {per_sm} block(s) "
                                   f"({per_sm * wpb} warps) per SM"))
            return cycles, base, effects, info
        effects.append(TermEffect("under-filled GPU", False, note="switched off"))
        return base, base, effects, info
    effects.append(TermEffect("under-filled GPU", False, note="the grid fills at least one wave"))
    if not terms.tail:
        effects.append(TermEffect("tail effect", False, note="off by default; --tail"))
        return base, base, effects, info
    full, rest = divmod(per_sm, cap)
    cycles = full * float(wave_cycles(latency_bound, tb, cap * wpb))
    if rest:
        cycles += float(wave_cycles(latency_bound, tb, rest * wpb))
    cycles /= lam
    info["last_wave_blocks"] = rest
    effects.append(_effect("tail effect", base, cycles, clock,
                           f"{full} full wave(s) of {cap} blocks + {rest} block(s) per SM"))
    return cycles, base, effects, info


def _effect(name, before_cycles, after_cycles, clock, note):
    delta = (after_cycles - before_cycles) / clock
    frac = after_cycles / before_cycles - 1.0 if before_cycles > 0 else 0.0
    return TermEffect(name, True, delta, frac, note)


def l2_bandwidth(inputs: ModelInputs):
    """(bandwidth B/s or None, TermEffect): the L2 term's decision for this launch."""
    gpu = inputs.gpu
    ws = inputs.param("working_set_bytes")
    if not inputs.terms.l2:
        return None, TermEffect("working set in L2", False, note="switched off")
    if ws is None:
        return None, TermEffect("working set in L2", False, note="no working set given (--working-set)")
    if gpu.l2_bytes is None:
        return None, TermEffect("working set in L2", False, note="the GPU's L2 size is unknown")
    if ws > gpu.l2_bytes:
        return None, TermEffect("working set in L2", False,
                                note=f"working set {ws:g} B exceeds the L2 ({gpu.l2_bytes:g} B)")
    if gpu.l2_bandwidth_bytes_per_s is None:
        return None, TermEffect("working set in L2", False,
                                note="fits in L2 but the L2 bandwidth is unknown (--l2-bandwidth)")
    return float(gpu.l2_bandwidth_bytes_per_s), TermEffect("working set in L2", True, note=(
        f"{ws:g} B fit in the {gpu.l2_bytes:g} B L2: memory at {gpu.l2_bandwidth_bytes_per_s:g} B/s"))


def launch_overhead(inputs: ModelInputs, time_s: float):
    """(added seconds, TermEffect) of the fixed launch overhead."""
    value = inputs.gpu.launch_overhead_s
    if not inputs.terms.launch_overhead:
        return 0.0, TermEffect("launch overhead", False, note="switched off")
    if value is None:
        return 0.0, TermEffect("launch overhead", False,
                               note="unknown for this GPU (--launch-overhead SECONDS)")
    value = float(value)
    return value, TermEffect("launch overhead", True, value, value / time_s if time_s > 0 else 0.0,
                             f"{value:g} s per launch")


def with_l2_effect(effect: TermEffect, before_s: float, after_s: float) -> TermEffect:
    """The L2 term with its measured effect filled in."""
    if not effect.applied:
        return effect
    return TermEffect(effect.name, True, after_s - before_s,
                      after_s / before_s - 1.0 if before_s > 0 else 0.0, effect.note)


__all__ = ["KernelTerms", "blocks_of", "eq41_cycles", "l2_bandwidth", "launch_overhead",
           "throughput_of", "warps_per_block", "wave_cycles", "waves", "with_l2_effect"]
