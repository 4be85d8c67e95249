"""Throughput bound: Gajger eq. 4.5–4.7 generalised to Volkov's per-resource worksheet.

Volkov 2016 §3.6: for each SM resource r, the exclusive-use time of a warp is
``T_r = Σ_k N_k · c_{r,k}`` cycles (instruction mix N_k per warp, c the cycles instruction
kind k holds resource r); the throughput bound is ``1 / max_r T_r`` warps per cycle per SM.
Gajger eq. 4.5 keeps three resources:

    CPW_bound = max(warp size × INS_CUDA / CUDA cores, INS_issued / schedulers,
                    GMem_bytes / GMem_bandwidth)                     (4.5)
    throughput bound = 1 / CPW_bound                                   (4.6)
    GMem_bandwidth = GMem_clock × bus width/8 × data rate / (SMs × SM_clock)   (4.7)

Here, per warp and per SM, in cycles:

* ``cuda_cores``  = warp_size × INS_CUDA / CUDA cores per SM
* ``issue``       = INS_issued / (schedulers × issues per scheduler per cycle)
* ``memory``      = GMem_bytes / GMem bytes per cycle per SM
* ``sfu``         = warp_size × INS_SFU / SFUs per SM
* ``fp64``        = warp_size × INS_FP64 / FP64 units per SM
* ``shared_memory`` = Σ (conflict degree) / warp-wide shared accesses per cycle per SM

A resource the kernel does not use costs 0 cycles and needs no device parameter; one it
uses whose hardware count is unknown is an error naming the missing parameter. All inputs
broadcast (numpy), so a sweep is one call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter

RESOURCES = ("cuda_cores", "issue", "memory", "sfu", "fp64", "shared_memory")


@dataclass(frozen=True)
class ThroughputBound:
    """Cycles per warp per SM for each resource, the binding one, and the bound."""

    cycles_per_warp: dict  # resource -> cycles (array or float)
    binding: object  # resource name (str) or array of names
    cycles_per_warp_bound: object  # max over resources
    warps_per_cycle: object  # 1 / cycles_per_warp_bound


def _nonneg(name, value):
    arr = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr < 0):
        raise InvalidParameter(f"{name} must be a finite number >= 0, got {value}")
    return arr if arr.ndim else float(arr)


def throughput_bound(gpu: GPUSpec, *, cuda_core_instructions=0.0, issued_instructions=0.0,
                     gmem_bytes=0.0, sfu_instructions=0.0, fp64_instructions=0.0,
                     smem_bank_cycles=0.0) -> ThroughputBound:
    """Per-resource worksheet for one warp (counts per warp; see module docstring)."""
    counts = {
        "cuda_cores": _nonneg("CUDA-core instructions", cuda_core_instructions),
        "issue": _nonneg("issued instructions", issued_instructions),
        "memory": _nonneg("global-memory bytes per warp", gmem_bytes),
        "sfu": _nonneg("SFU instructions", sfu_instructions),
        "fp64": _nonneg("FP64 instructions", fp64_instructions),
        "shared_memory": _nonneg("shared-memory bank cycles", smem_bank_cycles),
    }

    def used(name):
        return bool(np.any(np.asarray(counts[name]) > 0))

    warp = gpu.require("warp_size")
    cycles = {}
    cycles["cuda_cores"] = (warp * counts["cuda_cores"] / gpu.require("cuda_cores_per_sm")
                            if used("cuda_cores") else 0.0 * counts["cuda_cores"])
    cycles["issue"] = (counts["issue"] / (gpu.require("schedulers_per_sm")
                                          * gpu.require("issue_per_scheduler_per_cycle"))
                       if used("issue") else 0.0 * counts["issue"])
    cycles["memory"] = (counts["memory"] / gpu.gmem_bandwidth_bytes_per_cycle_per_sm()
                        if used("memory") else 0.0 * counts["memory"])
    cycles["sfu"] = (warp * counts["sfu"] / gpu.require("sfu_per_sm")
                     if used("sfu") else 0.0 * counts["sfu"])
    cycles["fp64"] = (warp * counts["fp64"] / gpu.require("fp64_units_per_sm")
                      if used("fp64") else 0.0 * counts["fp64"])
    cycles["shared_memory"] = (counts["shared_memory"] / gpu.require("smem_accesses_per_cycle_per_sm")
                               if used("shared_memory") else 0.0 * counts["shared_memory"])
    stacked = np.broadcast_arrays(*[np.asarray(cycles[r], dtype=float) for r in RESOURCES])
    table = np.stack(stacked)
    worst = table.max(axis=0)
    if np.any(worst <= 0):
        raise InvalidParameter("the warp uses no resource (all instruction counts and bytes are 0); "
                               "give at least the issued instructions")
    idx = table.argmax(axis=0)
    names = np.array(RESOURCES, dtype=object)[idx]
    scalar = worst.ndim == 0
    return ThroughputBound(
        cycles_per_warp={r: (float(a) if scalar else a) for r, a in zip(RESOURCES, stacked)},
        binding=str(names) if scalar else names,
        cycles_per_warp_bound=float(worst) if scalar else worst,
        warps_per_cycle=float(1.0 / worst) if scalar else 1.0 / worst,
    )
