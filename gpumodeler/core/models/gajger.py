"""The whole application model in one call: kernel time plus transfers (Gajger ch. 4–5).

This is what the CLI ``predict`` command and the GUI launch panel both evaluate:
:func:`predict` combines the throughput bound (:mod:`throughput`), the kernel time
(:mod:`kernel_time`, eq. 4.1–4.3) and the transfers in sequence (:mod:`transfers`, eq. 5.5).
:func:`kernel_inputs_from_graph` derives the per-warp inputs from a kernel execution graph.
Every numeric input broadcasts, so a sweep is one call (:func:`cartesian`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from gpumodeler.core.array_types import Real
from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.models.kernel_inputs import KernelInputs
from gpumodeler.core.models.kernel_terms_vec import VecTerms
from gpumodeler.core.models.kernel_time import KernelPrediction, predict_kernel, warps_launched
from gpumodeler.core.kernel.latency_bound import LatencyBound, analyze
from gpumodeler.core.models.throughput import ThroughputBound, require_positive, throughput_bound
from gpumodeler.core.transfers.link import link_transfer_time_s
from gpumodeler.core.kernel.warp_counts import PIPE_COUNT_NAMES, TENSOR_MAC_COUNT_NAMES, \
    WarpCounts, count

if TYPE_CHECKING:  # the registry's result type, loaded by evaluate
    from gpumodeler.core.models.result import ModelResult


@dataclass(frozen=True)
class ApplicationPrediction:
    kernel: KernelPrediction
    throughput: ThroughputBound
    transfer_times_s: tuple
    transfers: tuple  # ((direction, bytes), ...)
    total_time_s: Real
    # the kernel terms (kernel_terms_vec.VecTerms) when predict() was given switches; the
    # kernel's numbers above already include them
    terms: VecTerms | None = None

    def summary(self) -> dict:
        """Scalar results as a JSON-ready dict (the CLI's --json output)."""
        k = self.kernel

        def f(v):
            return v.item() if hasattr(v, "item") else v
        return {
            "kernel_time_s": f(k.time_s),
            "kernel_time_cycles": f(k.time_cycles),
            "transfer_times_s": [f(t) for t in self.transfer_times_s],
            "transfers": [{"direction": d, "bytes": f(n)} for d, n in self.transfers],
            "total_time_s": f(self.total_time_s),
            "warps_launched": f(k.warps_launched),
            "warp_throughput": f(k.warp_throughput),
            "latency_throughput": f(k.latency_throughput),
            "throughput_bound": f(k.throughput_bound),
            "mode": f(k.mode),
            "limiting_resource": f(k.limiting_resource),
            "knee_occupancy": f(k.knee_occupancy),
            "lambda": f(k.lam),
            "cycles_per_warp": {r: f(v) for r, v in self.throughput.cycles_per_warp.items()},
            "binding_resource": f(self.throughput.binding),
            **self._terms_summary(),
        }

    def _terms_summary(self) -> dict:
        """``terms`` (each term as ``predict`` prints it), ``eq_4_1_time_s`` and
        ``launch_overhead_s`` for a scalar prediction made with the kernel terms (so that
        kernel_time_s = kernel_time_cycles / clock + launch_overhead_s)."""
        t = self.terms
        if t is None or np.ndim(t.cycles):
            return {}
        out = {"terms": [e.describe() for e in t.effects()],
               "eq_4_1_time_s": float(t.eq41_cycles / t.clock_hz),
               "launch_overhead_s": 0.0 if t.overhead_note else float(t.overhead_s)}
        if t.underfill_applied:
            out["occupancy_limited_by_grid"] = float(t.occupancy)
        return out


def kernel_inputs_from_graph(graph: KernelGraph, values: dict | None = None, *, table=None,
                             warp_size: int = 32, control_on_cuda_cores: bool = True,
                             bound: LatencyBound | None = None,
                             counts: WarpCounts | None = None) -> KernelInputs:
    """Latency bound and per-warp counts of ``graph`` at the given variable values.

    Pass precomputed ``bound``/``counts`` to avoid re-analysing the graph in a sweep."""
    values = dict(graph.variables, **(values or {}))
    bound = bound or analyze(graph, table)
    counts = counts or count(graph, warp_size, control_on_cuda_cores)
    c = counts.evaluate(values)
    return KernelInputs(latency_bound=bound.evaluate(values), **worksheet_counts(c))


#: The throughput worksheet's per-warp counts (core.models.throughput.throughput_bound's
#: keyword arguments, KernelInputs' fields) that are warp counts of the same name
#: (core.kernel.warp_counts.COUNT_NAMES); the per-pipe and tensor counts are grouped by
#: :func:`pipe_instructions` and :func:`tensor_macs`.
WORKSHEET_COUNTS = ("issued_instructions", "cuda_core_instructions", "gmem_bytes",
                    "sfu_instructions", "fp64_instructions", "smem_bank_cycles", "dual_issues",
                    "l2_bytes", "l1_bytes", "l1_wavefronts", "lsu_instructions")


def worksheet_counts(counts: dict) -> dict:
    """The throughput worksheet's keyword arguments from evaluated warp counts (one mapping
    for every caller: a new row's count is added here once)."""
    out = {name: counts[name] for name in WORKSHEET_COUNTS}
    out["pipe_instructions"] = pipe_instructions(counts)
    out["tensor_macs"] = tensor_macs(counts)
    return out


def pipe_instructions(counts: dict) -> dict:
    """{pipe: instructions per warp} from evaluated warp counts (warp_counts.COUNT_NAMES)."""
    return {pipe: counts[name] for pipe, name in PIPE_COUNT_NAMES.items()}


def tensor_macs(counts: dict) -> dict:
    """{tensor class: multiply-adds per warp} from evaluated warp counts."""
    return {cls: counts[name] for cls, name in TENSOR_MAC_COUNT_NAMES.items()}


def predict(gpu: GPUSpec, inputs: KernelInputs, *, grid_size, block_size, occupancy,
            lam=1.0, link: LinkSpec | None = None, transfers=(), terms=None,
            working_set_bytes=None) -> ApplicationPrediction:
    """Kernel time and transfer times (in sequence) for one launch; all numbers broadcast.

    ``transfers`` is a sequence of ``(direction, bytes)`` with direction 'htod' or 'dtoh'.
    ``terms`` (:class:`~gpumodeler.core.models.result.KernelTerms`) applies the kernel terms
    of :mod:`kernel_terms_vec` — the under-filled GPU, the last wave's tail, the launch
    overhead, the working set in L2 (``working_set_bytes``) — as the registry's ``gajger``
    model does; ``None`` is plain eq. 4.1."""
    tb = throughput_bound(gpu, **inputs.worksheet())
    warps = warps_launched(grid_size, block_size, require_positive(gpu, "warp_size"))
    k = predict_kernel(gpu, warps=warps, occupancy=occupancy, latency_bound=inputs.latency_bound,
                       throughput=tb, lam=lam)
    vec = None
    if terms is not None:
        k, tb, vec = _with_terms(gpu, inputs, k, tb, terms, grid_size, block_size, occupancy,
                                 lam, working_set_bytes)
    transfers = tuple((d, n) for d, n in transfers)
    if transfers and link is None:
        raise InvalidParameter("transfers need a link (bandwidth, startup times and λ per direction)")
    times = tuple(link_transfer_time_s(link, d, n) for d, n in transfers) if link is not None else ()
    total = k.time_s
    for t in times:
        total = total + t
    return ApplicationPrediction(k, tb, times, transfers, total, vec)


def _with_terms(gpu, inputs, k, tb, terms, grid_size, block_size, occupancy, lam, working_set):
    """(KernelPrediction, ThroughputBound, VecTerms) with the kernel terms applied to eq. 4.1's
    prediction ``k``: the wave terms and the launch overhead; mode and warp throughput at the
    occupancy the warps run at. (The old L2 term is listed, never applied: ``working_set``
    is only checked here; the reuse model reads it: core.kernel.sass.reuse.)"""
    from gpumodeler.core.models import kernel_terms_vec as kv
    l2_effect = kv.l2_term(working_set)
    vec = kv.apply_wave_terms(gpu, terms=terms, grid_size=grid_size, block_size=block_size,
                              occupancy=occupancy, latency_bound=inputs.latency_bound,
                              throughput_wpc=tb.warps_per_cycle, lam=lam, l2_effect=l2_effect,
                              worksheet=tb)
    scalar = np.ndim(vec.cycles) == 0 and np.ndim(k.time_cycles) == 0
    conv = (lambda a: np.asarray(a).item()) if scalar else np.asarray
    changed = {}
    if np.any(vec.underfill_applied | vec.tail_applied) or not vec.overhead_note:
        changed.update(time_cycles=conv(vec.cycles), time_s=conv(vec.time_s))
    if np.any(vec.underfill_applied):  # the warps run at the grid's occupancy
        L = np.asarray(inputs.latency_bound, dtype=float)
        by_latency = vec.occupancy / L
        wpc, binding = tb.warps_per_cycle, tb.binding
        if vec.active_bound is not None:  # on the active SMs' bound (kernel_terms_vec)
            wpc = np.where(vec.underfill_applied, vec.active_bound.warps_per_cycle, wpc)
            binding = np.where(vec.underfill_applied, vec.active_bound.binding, binding)
        latency_mode = by_latency < wpc
        changed.update(warp_throughput=conv(np.minimum(by_latency, wpc)),
                       latency_throughput=conv(by_latency),
                       mode=conv(np.where(latency_mode, "latency", "throughput")),
                       limiting_resource=conv(np.where(latency_mode, "latency", binding)))
    # where no term applies, eq. 4.1's prediction is returned as it is
    return (replace(k, **changed) if changed else k), tb, vec


def cartesian(**value_lists) -> dict:
    """Flattened cartesian product of value lists: {name: 1-D array}, first name slowest.

    ``cartesian(block=[128, 256], a=[1, 2])`` -> block [128,128,256,256], a [1,2,1,2]."""
    if not value_lists:
        return {}
    names = list(value_lists)
    arrays = []
    for name in names:
        arr = np.atleast_1d(np.asarray(value_lists[name]))
        if arr.ndim != 1 or arr.size == 0:
            raise InvalidParameter(f"sweep values for {name} must be a non-empty list")
        arrays.append(arr)
    grids = np.meshgrid(*arrays, indexing="ij")
    return {n: g.ravel() for n, g in zip(names, grids)}


# -- the registry's "gajger" model --------------------------------------------------------

def evaluate(inputs) -> "ModelResult":
    """The registry's **gajger** model: eq. 4.1–4.7 for one launch (numbers unchanged where
    no kernel term applies), plus the kernel terms of :mod:`kernel_terms` (under-filled
    GPU on, tail off, launch overhead when known, working set in L2 when given) and λ."""
    from gpumodeler.core.models import kernel_terms as kt
    from gpumodeler.core.models.sanity import finish
    gpu, kernel = inputs.gpu, inputs.kernel
    lam = float(inputs.lam)
    if not (lam > 0 and np.isfinite(lam)):
        raise InvalidParameter(f"λ (lambda) must be a number > 0, got {lam}", item="lam")
    L = float(kernel.latency_bound)
    if not (L > 0 and np.isfinite(L)):
        raise InvalidParameter(f"latency bound (cycles) must be a number > 0, got {L}")
    tb = kt.throughput_of(gpu, kernel)
    terms = [kt.l2_effect(inputs)]
    cycles, base, wave_terms, info = kt.waves(inputs, L, tb.warps_per_cycle, lam=lam, worksheet=tb)
    terms += wave_terms
    occ = float(info.get("occupancy_limited_by_grid", inputs.occupancy))
    # an under-filled launch runs at the bound of its active SMs (kernel_terms_vec)
    tb_wpc = info.get("throughput_bound_on_active_sms", tb.warps_per_cycle)
    binding = info.get("binding_on_active_sms", tb.binding)
    latency_mode = occ / L < tb_wpc
    quantities = {
        "latency_bound_cycles": L, "throughput_bound_warps_per_cycle": tb.warps_per_cycle,
        "cycles_per_warp": dict(tb.cycles_per_warp), "occupancy_warps_per_sm": occ,
        "warp_throughput": min(occ / L, tb_wpc), "knee_occupancy": L * tb.warps_per_cycle,
        "lambda": lam, "eq_4_1_cycles": base, **info,
    }
    notes = memory_quantities(gpu, kernel, tb, occ, L, quantities)
    return finish("gajger", inputs, kernel_cycles=cycles,
                  bound="latency" if latency_mode else "throughput",
                  binding="latency" if latency_mode else str(binding),
                  quantities=quantities, terms=terms, notes=notes,
                  equations="Gajger 2017 eq. 4.1–4.7 (Volkov 2016 §3.4–3.6)")


def memory_quantities(gpu: GPUSpec, kernel, tb: ThroughputBound, occupancy: float,
                      latency_bound: float, quantities: dict) -> list:
    """Add the DRAM bandwidth the memory row used (sustained, with the pin bandwidth as
    its ceiling: :func:`throughput.dram_bandwidth_choice`) and the launch's memory
    parallelism (Little's law, :mod:`memory_parallelism`) to ``quantities``; return the
    notes saying which bandwidth was used. Nothing when the kernel moves no global bytes."""
    from gpumodeler.core.models.memory_parallelism import memory_parallelism
    from gpumodeler.core.models.throughput import (
        DRAM_PIN_CEILING, DRAM_SUSTAINED, dram_bandwidth_choice)
    nbytes = float(kernel.gmem_bytes)
    mem_cycles = float(tb.cycles_per_warp["memory"])
    if not (nbytes > 0 and mem_cycles > 0):
        return []
    sms, clock = gpu.require("sms"), gpu.require("sm_clock_hz")
    per_cycle = nbytes / mem_cycles  # the bandwidth the memory row used
    mp = memory_parallelism(occupancy=occupancy, bytes_per_warp=nbytes,
                            latency_bound_cycles=latency_bound,
                            bandwidth_bytes_per_cycle_per_sm=per_cycle)
    quantities["memory_parallelism"] = mp.as_dict(sms, clock)
    _, kind = dram_bandwidth_choice(gpu)
    quantities["memory_bandwidth_bytes_per_s"] = per_cycle * sms * clock
    quantities["memory_bandwidth_kind"] = kind
    if kind in (DRAM_SUSTAINED, DRAM_PIN_CEILING):
        pin = gpu.gmem_bandwidth_bytes_per_cycle_per_sm() * sms * clock
        quantities["memory_bandwidth_peak_bytes_per_s"] = pin
        return [f"global memory at the sustained {per_cycle * sms * clock / 1e9:.4g} GB/s "
                f"(peak {pin / 1e9:.4g} GB/s, the ceiling; Volkov 2016 §6.3)"]
    return [f"global memory at the {kind} bandwidth {per_cycle * sms * clock / 1e9:.4g} GB/s "
            f"(no sustained figure for this GPU)"] if kind != "given per cycle" else []
