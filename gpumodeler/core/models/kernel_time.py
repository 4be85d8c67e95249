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
import math

import numpy as np

from gpumodeler.core.array_types import Label, Real
from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.lazy_fields import LazyFields, build
from gpumodeler.core.models.throughput import (
    FLOAT_SCALARS, ThroughputBound, all_within, positive_number, require_positive)


_INT64_MAX = 2**63 - 1


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
    kind = type(value)
    if kind is int and value <= _INT64_MAX:  # the scalar path: no numpy (bool is no size)
        if value >= 1:
            return value
    elif kind is float:
        if 1 <= value < math.inf and value == math.floor(value):
            return int(value)
    else:
        arr = np.asarray(value)
        if arr.dtype.kind in "iu":  # whole and finite by type: only the lower bound to check
            if not arr.size or arr.min() >= 1:
                return arr.astype(np.int64, copy=False) if arr.ndim else int(arr)
        elif arr.dtype.kind == "f":
            if all_within(arr, 1.0, True) and not np.any(np.floor(arr) != arr):
                return arr.astype(np.int64) if arr.ndim else int(arr)
    raise InvalidParameter(f"{name} must be a whole number >= 1, got {value}")


_positive = positive_number


def warps_launched(grid_size, block_size, warp_size: int = 32):
    """Gajger eq. 4.2 for 1-D to 3-D grids and blocks."""
    grid = _size("grid size", grid_size)
    block = _size("block size", block_size)
    warp = _positive_int("warp size", warp_size)
    if type(warp) is int and warp & (warp - 1) == 0 and isinstance(block, np.ndarray):
        return grid * ((block + (warp - 1)) >> (warp.bit_length() - 1))  # ceil by a shift
    return grid * -(-block // warp)


def grid_for(data_size, block_size):
    """Blocks needed to cover ``data_size`` threads: ceil(N / block) (Fig. 5.23 line 5)."""
    n = _positive_int("data size", data_size)
    b = _positive_int("block size", block_size)
    return -(-n // b)


@dataclass(frozen=True)
class KernelPrediction(LazyFields):
    """Eq. 4.1–4.3 at one launch or many. From a vectorised call ``mode``,
    ``limiting_resource`` and ``knee_occupancy`` (only ever reported) are computed on first
    read."""

    warps_launched: Real
    warp_throughput: Real  # warps / cycle / SM
    latency_throughput: Real  # occupancy / latency bound
    throughput_bound: Real  # warps / cycle / SM
    mode: Label  # 'latency' | 'throughput' (or array)
    limiting_resource: Label  # 'latency' or the binding throughput resource
    knee_occupancy: Real  # warps / SM where the mode changes
    time_cycles: Real
    time_s: Real
    lam: Real


def eq41(warps, occupancy, latency_bound, tb, sms, lam):
    """Gajger eq. 4.1 with eq. 4.3: (cycles, occupancy / latency bound, warp throughput),
    cycles = warps / (min(n / L, TB) · SMs · λ). The one definition of the equation: one
    launch (Python floats, no numpy) and arrays run the same IEEE operations in the same
    order, so their numbers agree to the last bit."""
    by_latency = occupancy / latency_bound
    if type(by_latency) is float and type(tb) is float:
        wt = by_latency if by_latency < tb else tb  # as np.minimum: equal values are equal
    else:
        wt = np.minimum(by_latency, tb)
    return warps / (wt * sms * lam), by_latency, wt


def predict_kernel(gpu: GPUSpec, *, warps: Real, occupancy, latency_bound,
                   throughput: ThroughputBound | object, lam=1.0) -> KernelPrediction:
    """Kernel time (eq. 4.1, 4.3). ``throughput`` is a ThroughputBound or warps/cycle/SM."""
    occ = _positive("occupancy (warps per SM)", occupancy)
    lat = _positive("latency bound (cycles)", latency_bound)
    lam_v = _positive("λ (lambda)", lam)
    warps_v = _positive("warps launched", warps)
    if isinstance(throughput, ThroughputBound):
        tb = throughput.warps_per_cycle
    else:
        tb = _positive("throughput bound (warps/cycle/SM)", throughput)
    sms = require_positive(gpu, "sms")
    clock = require_positive(gpu, "sm_clock_hz")
    if (type(occ) is float and type(lat) is float and type(tb) is float
            and type(warps_v) is float and type(lam_v) is float
            and type(sms) in FLOAT_SCALARS and type(clock) in FLOAT_SCALARS):
        # One launch: the same IEEE operations on Python floats, every field computed now.
        cycles, by_latency, wt = eq41(warps_v, occ, lat, tb, sms, lam_v)
        latency_mode = by_latency < tb
        binding = "latency" if latency_mode else _binding_of(throughput)
        return KernelPrediction(
            warps_launched=warps_v, warp_throughput=wt, latency_throughput=by_latency,
            throughput_bound=tb, mode="latency" if latency_mode else "throughput",
            limiting_resource=binding, knee_occupancy=lat * tb, time_cycles=cycles,
            time_s=cycles / clock, lam=lam_v)
    cycles, by_latency, wt = eq41(warps_v, occ, lat, tb, sms, lam_v)
    if np.ndim(wt) == 0 and np.ndim(cycles) == 0:
        conv = (lambda a: a.item() if hasattr(a, "item") else a)
        latency_mode = by_latency < tb
        return KernelPrediction(
            warps_launched=conv(np.asarray(warps_v)), warp_throughput=conv(np.asarray(wt)),
            latency_throughput=conv(np.asarray(by_latency)), throughput_bound=conv(np.asarray(tb)),
            mode=conv(_mode_names(by_latency, tb)),
            limiting_resource=conv(_limiting_names(by_latency, tb, throughput)),
            knee_occupancy=conv(np.asarray(lat * tb)), time_cycles=conv(np.asarray(cycles)),
            time_s=conv(np.asarray(cycles / clock)), lam=conv(np.asarray(lam_v)))
    return build(KernelPrediction, {
        "warps_launched": np.asarray(warps_v), "warp_throughput": np.asarray(wt),
        "latency_throughput": np.asarray(by_latency), "throughput_bound": np.asarray(tb),
        "time_cycles": np.asarray(cycles), "time_s": np.asarray(cycles / clock),
        "lam": np.asarray(lam_v),
    }, {"mode": (_mode_names, by_latency, tb),
        "limiting_resource": (_limiting_names, by_latency, tb, throughput),
        "knee_occupancy": (_knee, lat, tb)})


def _binding_of(throughput) -> object:
    return throughput.binding if isinstance(throughput, ThroughputBound) else "throughput"


def _mode_names(by_latency, tb):
    """'latency' where occupancy / latency bound < throughput bound, else 'throughput'."""
    return np.where(by_latency < tb, "latency", "throughput")


def _limiting_names(by_latency, tb, throughput):
    """'latency' in latency mode, else the binding throughput resource."""
    return np.where(by_latency < tb, "latency", _binding_of(throughput))


def _knee(lat, tb):
    """Occupancy where the mode changes: latency bound × throughput bound (Volkov §3.10)."""
    return np.asarray(lat * tb)


def lambda_from_measurement(estimated_time_s, measured_time_s):
    """Gajger eq. 4.4: λ = t_estimated (with λ = 1) / t_measured."""
    return _positive("estimated time", estimated_time_s) / _positive("measured time", measured_time_s)
