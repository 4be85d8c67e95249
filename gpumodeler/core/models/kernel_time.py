"""Kernel execution time: Gajger eq. 4.1–4.4 over Volkov's two-bound model (§3.4–3.5).

    T_k = warps launched / (warp throughput × SMs × SM_clock × λ)              (4.1)
    warps launched = grid size × ceil(block size / warp size)                  (4.2)
    warp throughput ≈ min(occupancy / latency bound, throughput bound)          (4.3)
    λ = t_estimated / t_measured                                               (4.4)

``occupancy`` is in warps per SM (Gajger's Fig. 5.24 uses 64), ``latency_bound`` in cycles
per warp, the throughput bound in warps per cycle per SM. The kernel is *latency-bound*
when occupancy / latency bound < throughput bound, else *throughput-bound* (a tie counts as
throughput-bound: the hardware limit is reached). The mode changes at the occupancy
``latency bound × throughput bound`` (Volkov §3.10: needed occupancy ≈ latency × throughput).
Grids and blocks may be 1-D to 3-D: their sizes are the products of the dimensions.
Every numeric input broadcasts (numpy).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.models.throughput import ThroughputBound


def _size(name, dims):
    """Product of a 1-3-D size; arrays allowed for 1-D."""
    if isinstance(dims, (tuple, list)) and not isinstance(dims, np.ndarray):
        if not 1 <= len(dims) <= 3:
            raise InvalidParameter(f"{name} must have 1 to 3 dimensions, got {len(dims)}")
        total = 1
        for d in dims:
            total = total * _positive_int(name, d)
        return total
    return _positive_int(name, dims)


def _positive_int(name, value):
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or np.any(~np.isfinite(arr)) or np.any(arr < 1) \
            or np.any(np.floor(arr) != arr):
        raise InvalidParameter(f"{name} must be a whole number >= 1, got {value}")
    return arr.astype(np.int64) if arr.ndim else int(arr)


def _positive(name, value):
    arr = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise InvalidParameter(f"{name} must be a number > 0, got {value}")
    return arr if arr.ndim else float(arr)


def warps_launched(grid_size, block_size, warp_size: int = 32):
    """Gajger eq. 4.2 for 1-D to 3-D grids and blocks."""
    grid = _size("grid size", grid_size)
    block = _size("block size", block_size)
    return grid * -(-block // _positive_int("warp size", warp_size))


def grid_for(data_size, block_size):
    """Blocks needed to cover ``data_size`` threads: ceil(N / block) (Fig. 5.23 line 5)."""
    n = _positive_int("data size", data_size)
    b = _positive_int("block size", block_size)
    return -(-n // b)


@dataclass(frozen=True)
class KernelPrediction:
    warps_launched: object
    warp_throughput: object  # warps / cycle / SM
    latency_throughput: object  # occupancy / latency bound
    throughput_bound: object  # warps / cycle / SM
    mode: object  # 'latency' | 'throughput' (or array)
    limiting_resource: object  # 'latency' or the binding throughput resource
    knee_occupancy: object  # warps / SM where the mode changes
    time_cycles: object
    time_s: object
    lam: object


def predict_kernel(gpu: GPUSpec, *, warps: object, occupancy, latency_bound,
                   throughput: ThroughputBound | object, lam=1.0) -> KernelPrediction:
    """Kernel time (eq. 4.1, 4.3). ``throughput`` is a ThroughputBound or warps/cycle/SM."""
    occ = _positive("occupancy (warps per SM)", occupancy)
    lat = _positive("latency bound (cycles)", latency_bound)
    lam_v = _positive("λ (lambda)", lam)
    warps_v = _positive("warps launched", warps)
    if isinstance(throughput, ThroughputBound):
        tb, binding = throughput.warps_per_cycle, throughput.binding
    else:
        tb, binding = _positive("throughput bound (warps/cycle/SM)", throughput), "throughput"
    sms = gpu.require("sms")
    clock = gpu.require("sm_clock_hz")
    by_latency = occ / lat
    wt = np.minimum(by_latency, tb)
    latency_mode = by_latency < tb
    mode = np.where(latency_mode, "latency", "throughput")
    limiting = np.where(latency_mode, "latency", binding)
    cycles = warps_v / (wt * sms * lam_v)
    scalar = np.ndim(wt) == 0 and np.ndim(cycles) == 0
    conv = (lambda a: a.item() if hasattr(a, "item") else a) if scalar else (lambda a: a)
    return KernelPrediction(
        warps_launched=conv(np.asarray(warps_v)), warp_throughput=conv(np.asarray(wt)),
        latency_throughput=conv(np.asarray(by_latency)), throughput_bound=conv(np.asarray(tb)),
        mode=conv(mode), limiting_resource=conv(limiting),
        knee_occupancy=conv(np.asarray(lat * tb)), time_cycles=conv(np.asarray(cycles)),
        time_s=conv(np.asarray(cycles / clock)), lam=conv(np.asarray(lam_v)),
    )


def lambda_from_measurement(estimated_time_s, measured_time_s):
    """Gajger eq. 4.4: λ = t_estimated (with λ = 1) / t_measured."""
    return _positive("estimated time", estimated_time_s) / _positive("measured time", measured_time_s)
