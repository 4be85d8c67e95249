"""The kernel-time terms of :mod:`kernel_terms`, each rule written once, over numpy arrays.

:mod:`gpumodeler.core.models.kernel_terms` documents the terms and their sources (Volkov
2016 §3.4–3.5 and §5.6–5.9): the under-filled GPU (on by default), the tail of the last wave
(off; ``--tail``), the launch overhead (on when the GPU's value is known) and the working set
in L2 (when a working set is given). This module holds the rules (the wave equation, the L2
and launch-overhead decisions, the TermEffects and their notes); that one is the one-launch
API of the registry's models, computed through them with 0-d inputs, and
:func:`gpumodeler.core.models.gajger.predict` — the engine of ``sweep``,
``project predict``/``sweep``, the launch panel's Prediction box and its sweeps — applies
them too. It post-processes eq. 4.1 (:func:`~gpumodeler.core.models.kernel_time.predict_kernel`)
and never changes it: where no term applies, the numbers are eq. 4.1's to the last bit.

One launch and a sweep so run the same operations, and for any launch the time equals the
registry's ``gajger`` result (the suite checks 1e-12 with random launches). Per launch point, :meth:`VecTerms.effects` rebuilds the same
:class:`~gpumodeler.core.models.result.TermEffect` list the registry reports (names, notes,
added time and fraction), and :meth:`VecTerms.applied_text` the applied ones as text.

Choices (documented in docs/models.md): the working set is one number for the whole call
(a sweep's launches share it), so the L2 decision is one per GPU; a time that is not finite
stays NaN/inf here and is refused by the caller, as eq. 4.1's is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.models.kernel_time import eq41
from gpumodeler.core.models.result import KernelTerms, TermEffect
from gpumodeler.core.models.throughput import ThroughputBound, bound_of


def wave_cycles(latency_bound, throughput_bound_wpc, warps):
    """Cycles for ``warps`` resident together on one SM: max(L, warps / TB) (Volkov 2016
    §3.5, Little's law over one wave)."""
    return np.maximum(latency_bound, warps / throughput_bound_wpc)


def eq41_cycles(latency_bound, tb, occupancy, warps_total, sms, lam=1.0):
    """Gajger 2017 eq. 4.1: warps / (min(n / L, TB) · SMs · λ), by
    :func:`~gpumodeler.core.models.kernel_time.eq41` (so the numbers are predict_kernel's
    to the last bit), over numpy values: an infinite time is refused later."""
    with np.errstate(over="ignore", divide="ignore"):
        return eq41(warps_total, np.asarray(occupancy, dtype=float), latency_bound, tb, sms,
                    lam)[0]


def active_sms(sms, blocks):
    """SMs a grid of ``blocks`` runs on: min(SMs, blocks) (blocks spread evenly over the SMs,
    Volkov 2016 §5.6; Hong & Kim 2009's #Active_SMs)."""
    return np.minimum(sms, blocks)


def memory_bandwidth_per_active_sm(total_bytes_per_s, sms, blocks):
    """The global-memory bandwidth each SM of a launch gets: the total over the *active* SMs
    (Hong & Kim 2009, MWP_peak_BW = Mem_Bandwidth / (BW_per_warp · #Active_SMs)). A grid of
    4 blocks on 100 SMs so gets 25 times a full launch's share. One rule for every model that
    applies the under-filled GPU (gajger, volkov-contention, mwp-cwp).

    Choice: no cap at what one SM can pull. The device database has no per-SM figure, and
    Hong & Kim's MWP_peak_BW has none; a launch on very few SMs is then bounded by its
    latency (the wave's max(L, k / TB)) rather than by a per-SM port limit."""
    return total_bytes_per_s / active_sms(sms, blocks)


def worksheet_on_active_sms(worksheet: ThroughputBound, sms, blocks) -> ThroughputBound:
    """``worksheet`` (per-resource cycles per warp of a full launch) with global memory at
    :func:`memory_bandwidth_per_active_sm`: the memory row scales by a full launch's per-SM
    bandwidth over an active SM's; the other resources are the SM's own."""
    scale = memory_bandwidth_per_active_sm(1.0, sms, sms) / memory_bandwidth_per_active_sm(
        1.0, sms, blocks)
    cycles = dict(worksheet.cycles_per_warp)
    cycles["memory"] = cycles["memory"] * scale
    return bound_of(cycles, worksheet.pipes)


def term_effect(name, before, after, clock, note) -> TermEffect:
    """An applied term's TermEffect: added time (after − before) / clock and the fraction
    after / before − 1 (0 where before is not positive). ``clock`` is 1 for times in s."""
    delta = (after - before) / clock
    frac = after / before - 1.0 if before > 0 else 0.0
    return TermEffect(name, True, delta, frac, note)


def overhead_decision(gpu: GPUSpec, terms: KernelTerms) -> tuple:
    """(seconds per launch, why it is off: '' when on) of the launch-overhead term: on when
    switched on and the GPU's ``launch_overhead_s`` is known (no source gives one)."""
    if not terms.launch_overhead:
        return 0.0, "switched off"
    if gpu.launch_overhead_s is None:
        return 0.0, "unknown for this GPU (--launch-overhead SECONDS)"
    return float(gpu.launch_overhead_s), ""


def overhead_effect(seconds: float, off_note: str, kernel_s: float) -> TermEffect:
    """The launch-overhead TermEffect of :func:`overhead_decision`'s answer for a kernel of
    ``kernel_s`` seconds."""
    if off_note:
        return TermEffect("launch overhead", False, note=off_note)
    return TermEffect("launch overhead", True, seconds, seconds / kernel_s if kernel_s > 0 else 0.0,
                      f"{seconds:g} s per launch")


def _size(dims):
    """Product of a 1-3-D size given as a number, an array or a tuple of them."""
    if isinstance(dims, (tuple, list)):
        total = 1
        for d in dims:
            total = total * np.asarray(d, dtype=np.int64)
        return np.asarray(total, dtype=np.int64)
    return np.asarray(dims, dtype=np.int64)


def l2_term(working_set_bytes) -> TermEffect:
    """The old "working set in L2" term, which served *all* global traffic at the L2
    bandwidth when a working set fitted (no first load from DRAM), is replaced by the reuse
    model: compulsory bytes from DRAM, the rest from L2 as far as a wave's working set fits
    (core.kernel.sass.reuse; the worksheet's ``l2`` row), where ``working_set_bytes`` (the
    user's figure, ``--working-set``) replaces the computed working sets. Listed as a term
    that never applies, so the term lists say where it went; the figure is checked here."""
    if working_set_bytes is not None:
        ws = float(np.asarray(working_set_bytes))
        if not np.isfinite(ws) or ws < 0:
            raise InvalidParameter(f"working_set_bytes must be a finite number >= 0, got {ws}",
                                   item="working_set_bytes")
    return TermEffect("working set in L2", False, note=L2_TERM_REPLACED)


#: why the old L2 term is off (docs/models.md, "Reuse and the L2")
L2_TERM_REPLACED = ("replaced by the reuse model: compulsory bytes from DRAM, re-reads from "
                    "L2 (the l2 row), as far as a wave's working set fits the L2")


def with_memory_bandwidth(gpu: GPUSpec, bandwidth_bytes_per_s: float) -> GPUSpec:
    """``gpu`` with global memory served at ``bandwidth_bytes_per_s`` (spread over its SMs)."""
    per_cycle = bandwidth_bytes_per_s / (gpu.require("sms") * gpu.require("sm_clock_hz"))
    return gpu.with_overrides(gmem_bytes_per_cycle_per_sm=per_cycle)


@dataclass(frozen=True)
class VecTerms:
    """The kernel terms over an array of launches (every array has the launches' shape).

    ``cycles`` are the kernel's SM cycles after the wave terms (before the launch overhead);
    ``time_s`` adds the overhead; ``eq41_cycles`` is eq. 4.1 (with λ). ``occupancy`` is the occupancy the warps run at (the grid's
    where the under-filled term applies)."""

    switches: KernelTerms
    cycles: np.ndarray
    time_s: np.ndarray
    eq41_cycles: np.ndarray
    occupancy: np.ndarray
    blocks: np.ndarray
    warps_per_block: np.ndarray
    capacity: np.ndarray  # whole blocks an SM holds at the launch's occupancy
    per_sm: np.ndarray  # blocks on the busiest SM
    sms: np.ndarray
    clock_hz: np.ndarray
    underfilled: np.ndarray  # the grid is less than one wave (whether or not the term is on)
    underfill_applied: np.ndarray
    tail_applied: np.ndarray
    overhead_s: float  # 0 when the term is off or unknown
    overhead_note: str  # why it is off ('' when on)
    l2_effect: TermEffect  # the old L2 term, never applied (l2_term)
    # the worksheet on the active SMs (worksheet_on_active_sms) where the under-filled term
    # used it; None when no worksheet was given or no launch is under-filled
    active_bound: ThroughputBound | None = None

    def _at(self, array, index):
        return np.broadcast_to(array, self.cycles.shape)[index].item()

    def effects(self, index=()) -> list:
        """The TermEffect list of launch ``index`` (a tuple index into the arrays), in the
        registry's order: L2, the wave terms, the launch overhead."""
        effects = [self.l2_effect] + self.wave_effects(index)
        kernel_s = self._at(self.cycles, index) / self._at(self.clock_hz, index)
        return effects + [overhead_effect(self.overhead_s, self.overhead_note, kernel_s)]

    def wave_effects(self, index=()) -> list:
        """The under-filled GPU and tail-effect TermEffects of launch ``index``."""
        at = lambda a: self._at(a, index)
        cap, blocks, sms, wpb, per_sm = at(self.capacity), at(self.blocks), at(self.sms), \
            at(self.warps_per_block), at(self.per_sm)
        base, cycles, clock = at(self.eq41_cycles), at(self.cycles), at(self.clock_hz)
        if cap < 1:
            note = "occupancy below one block per SM; wave terms need whole blocks"
            return [TermEffect("under-filled GPU", False, note=note),
                    TermEffect("tail effect", False, note=note)]
        if at(self.underfilled):
            effects = [TermEffect("tail effect", False, note="the grid is less than one wave")]
            if self.switches.underfill:
                effects.append(term_effect("under-filled GPU", base, cycles, clock,
                                           _underfill_note(blocks, sms, per_sm, wpb)))
            else:
                effects.append(TermEffect("under-filled GPU", False, note="switched off"))
            return effects
        effects = [TermEffect("under-filled GPU", False, note="the grid fills at least one wave")]
        if not self.switches.tail:
            effects.append(TermEffect("tail effect", False, note="off by default; --tail"))
        else:
            effects.append(term_effect("tail effect", base, cycles, clock, _tail_note(per_sm, cap)))
        return effects

    def applied_text(self) -> np.ndarray:
        """Per launch, the applied terms as ``predict`` prints them ("under-filled GPU: +108 %
        (...)"), joined by '; ' ('' where none applies): the text of :meth:`effects`, built a
        term at a time over the launches it changed (a sweep of millions of rows stays fast)."""
        shape = np.shape(self.cycles)
        n = int(np.prod(shape))
        flat = lambda a: np.broadcast_to(np.asarray(a), shape).ravel()
        cycles, base, clock = flat(self.cycles), flat(self.eq41_cycles), flat(self.clock_hz)
        terms = []  # (indices, texts) per applied term, in the registry's order
        for name, mask in (("under-filled GPU", self.underfill_applied), ("tail effect", self.tail_applied)):
            idx = np.flatnonzero(flat(mask))
            if not idx.size:
                continue
            blocks, sms, wpb = flat(self.blocks)[idx].tolist(), flat(self.sms)[idx].tolist(), \
                flat(self.warps_per_block)[idx].tolist()
            per_sm, cap = flat(self.per_sm)[idx].tolist(), flat(self.capacity)[idx].tolist()
            if name == "under-filled GPU":
                notes = [_underfill_note(b, m, p, w) for b, m, p, w in zip(blocks, sms, per_sm, wpb)]
            else:
                notes = [_tail_note(p, c) for p, c in zip(per_sm, cap)]
            terms.append((idx, _texts(name, _fractions(cycles[idx], base[idx]), notes)))
        if not self.overhead_note:
            kernel_s = cycles / clock
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = np.where(kernel_s > 0, self.overhead_s / kernel_s, 0.0)
            terms.append((np.arange(n), _texts("launch overhead", frac.tolist(),
                                               [f"{self.overhead_s:g} s per launch"] * n)))
        out = np.full(n, "", dtype=object)
        for idx, texts in terms:
            current = out[idx]
            out[idx] = [f"{c}; {t}" if c else t for c, t in zip(current.tolist(), texts)]
        return out.reshape(shape)


def _fractions(after, before) -> list:
    """after / before − 1 (0 where before is not positive), as TermEffect computes it."""
    after, before = np.asarray(after, dtype=float), np.asarray(before, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(before > 0, after / before - 1.0, 0.0).tolist()


def _texts(name: str, fractions: list, notes: list) -> list:
    """TermEffect.describe() of applied terms, one per fraction."""
    return [f"{name}: {'+' if f >= 0 else '−'}{abs(f) * 100:.3g} %" + (f" ({note})" if note else "")
            for f, note in zip(fractions, notes)]


def _underfill_note(blocks, sms, per_sm, wpb) -> str:
    return f"{blocks} blocks on {sms} SMs: one wave of {per_sm} block(s) ({per_sm * wpb} warps) per SM"


def _tail_note(per_sm, cap) -> str:
    full, rest = divmod(per_sm, cap)
    return f"{full} full wave(s) of {cap} blocks + {rest} block(s) per SM"


def apply_wave_terms(gpu: GPUSpec, *, terms: KernelTerms, grid_size, block_size, occupancy,
                     latency_bound, throughput_wpc, lam=1.0, l2_effect: TermEffect | None = None,
                     worksheet: ThroughputBound | None = None) -> VecTerms:
    """The wave terms and the launch overhead over arrays of launches (all inputs broadcast).

    ``throughput_wpc`` is the throughput bound in warps per cycle per SM; the inputs are assumed validated by
    :func:`~gpumodeler.core.models.kernel_time.predict_kernel` (positive, finite).
    ``worksheet`` (the ThroughputBound behind ``throughput_wpc``): an under-filled launch's
    wave runs at :func:`worksheet_on_active_sms`'s bound, global memory shared by the
    active SMs only; without it, at ``throughput_wpc``."""
    sms = np.asarray(gpu.require("sms"))
    clock = np.asarray(gpu.require("sm_clock_hz"), dtype=float)
    warp = int(gpu.require("warp_size"))
    blocks = _size(grid_size)
    wpb = -(-_size(block_size) // warp)
    occ = np.asarray(occupancy, dtype=float)
    L = np.asarray(latency_bound, dtype=float)
    tb = np.asarray(throughput_wpc, dtype=float)
    lam = np.asarray(lam, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        base = eq41_cycles(L, tb, occ, blocks * wpb, sms, lam)
        cap = np.floor(occ / wpb + 1e-9).astype(np.int64)
        per_sm = -(-blocks // sms)
        has_cap = cap >= 1
        underfilled = has_cap & (blocks < sms * cap)
        under = underfilled & terms.underfill
        tail = has_cap & ~underfilled & terms.tail
        active_bound = None
        tb_under = tb
        if worksheet is not None and np.any(under):
            active_bound = worksheet_on_active_sms(worksheet, sms, blocks)
            tb_under = np.asarray(active_bound.warps_per_cycle, dtype=float)
        under_cycles = wave_cycles(L, tb_under, per_sm * wpb) / lam
        safe_cap = np.where(has_cap, cap, 1)
        full, rest = np.divmod(per_sm, safe_cap)
        tail_cycles = full * wave_cycles(L, tb, safe_cap * wpb)
        tail_cycles = tail_cycles + np.where(rest > 0, wave_cycles(L, tb, rest * wpb), 0.0)
        tail_cycles = tail_cycles / lam
        cycles = np.where(under, under_cycles, np.where(tail, tail_cycles, base))
        kernel_s = cycles / clock
    overhead, note = overhead_decision(gpu, terms)
    time_s = kernel_s + overhead if not note else kernel_s
    eff_occ = np.where(under, per_sm * wpb, occ).astype(float)
    return VecTerms(
        switches=terms, cycles=cycles, time_s=time_s, eq41_cycles=base, occupancy=eff_occ,
        blocks=blocks, warps_per_block=wpb, capacity=cap, per_sm=per_sm, sms=sms, clock_hz=clock,
        underfilled=underfilled, underfill_applied=under, tail_applied=tail,
        overhead_s=overhead, overhead_note=note,
        l2_effect=l2_effect or TermEffect("working set in L2", False, note="switched off"),
        active_bound=active_bound)


__all__ = ["VecTerms", "active_sms", "apply_wave_terms", "memory_bandwidth_per_active_sm",
           "worksheet_on_active_sms", "eq41_cycles", "l2_term", "overhead_decision",
           "overhead_effect", "term_effect", "wave_cycles", "with_memory_bandwidth"]
