"""Occupancy of many launches in one vectorised call: :func:`occupancy_array` and its answer,
:class:`OccupancyArrays` (a sweep over block size, registers or shared memory).

Sources. The rules are those of :func:`gpumodeler.core.occupancy.calculator.occupancy`, stated with their
symbols in :mod:`gpumodeler.core.occupancy.calculator`: the CUDA C++ Programming Guide
(compute-capabilities appendix), NVIDIA's CUDA Occupancy Calculator spreadsheet and the
runtime's occupancy API (``cudaOccupancyMaxActiveBlocksPerMultiprocessor``), replacing the
manual step of Gajger 2017 (MSc thesis, §4.4.1 and Fig. 4.2). Point by point the answer is the
scalar function's, LaunchError messages included (``tests/core/test_occupancy_array.py``), and
it is checked against NVIDIA's ``cuda_occupancy.h`` in ``tests/core/test_occupancy_oracle.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Mapping

import numpy as np

from gpumodeler.core.occupancy.compute_capability import architecture
from gpumodeler.core.errors import InvalidParameter, LaunchError
from gpumodeler.core.lazy_fields import LazyFields, build
from gpumodeler.core.occupancy.checks import (
    LIMIT_NAMES, UNLIMITED, OccupancyResult, _check_caching, _msg_block_size,
    _msg_no_block_fits, _msg_registers_per_block, _msg_registers_per_thread,
    _msg_shared_per_block, _msg_static_shared, _preference_bytes, _registers_per_block_tesla)

# Why a launch in a sweep cannot run: the scalar function's checks, in its order.
_OK, _BLOCK_SIZE, _REGISTERS_PER_THREAD, _STATIC_SHARED, _SHARED_PER_BLOCK, \
    _REGISTERS_PER_BLOCK, _NO_BLOCK_FITS = range(7)


@dataclass(frozen=True, eq=False)
class OccupancyArrays(LazyFields):
    """:func:`occupancy_array`'s answer: the fields of :class:`OccupancyResult` as arrays of
    the broadcast input shape, plus ``valid`` and ``reasons`` (the LaunchError message where a
    launch cannot run, '' where it can; built on first use, since formatting is the slow part
    of a big sweep). Where invalid, the active counts and occupancy are 0 and ``limited_by``
    is all False.
    """

    compute_capability: str
    block_size: np.ndarray
    registers_per_thread: np.ndarray
    shared_mem_bytes: np.ndarray
    static_shared_mem_bytes: np.ndarray
    valid: np.ndarray
    warps_per_block: np.ndarray
    active_blocks_per_sm: np.ndarray
    active_warps_per_sm: np.ndarray
    active_threads_per_sm: np.ndarray
    max_warps_per_sm: int
    occupancy: np.ndarray
    block_limits: Mapping[str, np.ndarray]
    limited_by: Mapping[str, np.ndarray]
    allocated_registers_per_block: np.ndarray
    allocated_shared_mem_per_block_bytes: np.ndarray
    reserved_shared_mem_per_block_bytes: int
    shared_mem_per_block_limit_bytes: int
    shared_mem_config_bytes: np.ndarray
    min_shared_mem_config_bytes: np.ndarray
    partitioned_global_caching: np.ndarray
    opt_in: bool
    failure: np.ndarray = field(repr=False)   # _OK or which check failed, per point

    @property
    def shape(self) -> tuple[int, ...]:
        return self.valid.shape

    def _message(self, code: int, index) -> str:
        arch = architecture(self.compute_capability)
        b, r = int(self.block_size[index]), int(self.registers_per_thread[index])
        d, s = int(self.shared_mem_bytes[index]), int(self.static_shared_mem_bytes[index])
        if code == _BLOCK_SIZE:
            return _msg_block_size(arch, b)
        if code == _REGISTERS_PER_THREAD:
            return _msg_registers_per_thread(arch, r)
        if code == _STATIC_SHARED:
            return _msg_static_shared(arch, s)
        if code == _SHARED_PER_BLOCK:
            return _msg_shared_per_block(arch, s, d, self.opt_in)
        if code == _REGISTERS_PER_BLOCK:
            return _msg_registers_per_block(arch, b, r)
        return _msg_no_block_fits({k: int(v[index]) for k, v in self.block_limits.items()})

    def reason_at(self, index) -> str:
        """The LaunchError message at ``index`` ('' if that launch can run)."""
        code = int(self.failure[index])
        return "" if code == _OK else self._message(code, index)

    @cached_property
    def reasons(self) -> np.ndarray:
        """Every point's LaunchError message ('' where valid), each distinct one formatted once."""
        failure = self.failure.ravel()
        reasons = np.full(failure.size, "", dtype=object)
        columns = {
            _BLOCK_SIZE: (self.block_size,), _REGISTERS_PER_THREAD: (self.registers_per_thread,),
            _STATIC_SHARED: (self.static_shared_mem_bytes,),
            _SHARED_PER_BLOCK: (self.static_shared_mem_bytes, self.shared_mem_bytes),
            _REGISTERS_PER_BLOCK: (self.block_size, self.registers_per_thread),
            _NO_BLOCK_FITS: tuple(self.block_limits[k] == 0 for k in LIMIT_NAMES)}
        for code, cols in columns.items():
            index = np.flatnonzero(failure == code)
            if index.size == 0:
                continue
            keys = np.stack([np.broadcast_to(c, self.shape).ravel()[index] for c in cols],
                            axis=1).astype(np.int64)
            first, inverse = _distinct_rows(keys)
            texts = np.empty(len(first), dtype=object)
            texts[:] = [self._message(code, np.unravel_index(index[i], self.shape))
                        for i in first]
            reasons[index] = texts[inverse]
        return reasons.reshape(self.shape)

    def at(self, index) -> OccupancyResult:
        """The scalar result at ``index``; raises LaunchError where the launch cannot run."""
        if not self.valid[index]:
            raise LaunchError(self.reason_at(index))
        limits = {name: int(a[index]) for name, a in self.block_limits.items()}
        return OccupancyResult(
            compute_capability=self.compute_capability,
            block_size=int(self.block_size[index]),
            registers_per_thread=int(self.registers_per_thread[index]),
            shared_mem_bytes=int(self.shared_mem_bytes[index]),
            static_shared_mem_bytes=int(self.static_shared_mem_bytes[index]),
            warps_per_block=int(self.warps_per_block[index]),
            active_blocks_per_sm=int(self.active_blocks_per_sm[index]),
            active_warps_per_sm=int(self.active_warps_per_sm[index]),
            active_threads_per_sm=int(self.active_threads_per_sm[index]),
            max_warps_per_sm=self.max_warps_per_sm,
            occupancy=float(self.occupancy[index]),
            block_limits=MappingProxyType(limits),
            limited_by=tuple(n for n in LIMIT_NAMES if self.limited_by[n][index]),
            allocated_registers_per_block=int(self.allocated_registers_per_block[index]),
            allocated_shared_mem_per_block_bytes=int(
                self.allocated_shared_mem_per_block_bytes[index]),
            reserved_shared_mem_per_block_bytes=self.reserved_shared_mem_per_block_bytes,
            shared_mem_per_block_limit_bytes=self.shared_mem_per_block_limit_bytes,
            shared_mem_config_bytes=int(self.shared_mem_config_bytes[index]),
            min_shared_mem_config_bytes=int(self.min_shared_mem_config_bytes[index]),
            partitioned_global_caching=bool(self.partitioned_global_caching[index]),
        )


def _distinct_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position of each distinct row's first occurrence, row -> distinct index)."""
    width = 63 // keys.shape[1]
    if keys.min() >= 0 and keys.max() < 1 << width:
        # Pack the columns into one integer: 1-D unique is much faster than axis=0.
        packed = np.zeros(len(keys), dtype=np.int64)
        for k in range(keys.shape[1]):
            packed = (packed << width) | keys[:, k]
        _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def _int_array(name: str, value) -> tuple[np.ndarray, int, int]:
    """``value`` as an int64 array, with its minimum and maximum (0, 0 when empty)."""
    a = np.asarray(value)
    if a.dtype.kind not in "iu":
        raise InvalidParameter(
            f"{name} must hold integers, got dtype {a.dtype} (convert with .astype(int) "
            f"after checking the values are whole)", item=name)
    if not a.size:
        return a.astype(np.int64, copy=False), 0, 0
    hi = int(a.max())
    if a.dtype.kind == "u" and hi > np.iinfo(np.int64).max:
        raise InvalidParameter(f"{name} holds values too large for int64", item=name)
    a = a.astype(np.int64, copy=False)
    lo = int(a.min())
    if lo < 0:
        negative = a < 0
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(negative)), a.shape))
        raise InvalidParameter(
            f"{name} must be >= 0; {int(negative.sum())} value(s) are negative, "
            f"first {int(a[first])} at index {first}", item=name)
    return a, lo, hi


def _full(a, shape) -> np.ndarray:
    """``a`` as an array of the sweep's shape (a copy where it broadcasts)."""
    a = np.asarray(a)
    return a if a.shape == shape else np.array(np.broadcast_to(a, shape))


def _max(a) -> int:
    return int(np.max(a)) if np.size(a) else 0


def _min(a) -> int:
    return int(np.min(a)) if np.size(a) else 1


def occupancy_array(cc, block_size, registers_per_thread, shared_mem_bytes=0, *,
                    static_shared_mem_bytes=0, opt_in: bool = False,
                    carveout_percent: int | None = None,
                    shared_mem_config_bytes: int | None = None,
                    partitioned_global_caching: bool = False) -> OccupancyArrays:
    """:func:`occupancy` over integer arrays that broadcast together (a sweep in one call).

    ``cc`` and the keyword options are scalars. Launches that cannot run do not raise: they
    are False in ``valid`` with the scalar function's LaunchError message in ``reasons``.
    Malformed input (non-integer dtype, a negative value) raises InvalidParameter.

    Each input keeps its own shape while the rules are applied (a scalar shared-memory size
    makes rule 3 one number, not a million); the checks are decided from the inputs' extremes
    where they show that every launch runs; and what is only reported (limits,
    configurations, allocations, the checks' codes) is computed on first read.
    """
    arch = architecture(cc)
    (bs, lo_b, hi_b), (regs, lo_r, hi_r), (dyn, lo_d, hi_d), (st, lo_s, hi_s) = (
        _int_array("block_size", block_size),
        _int_array("registers_per_thread", registers_per_thread),
        _int_array("shared_mem_bytes", shared_mem_bytes),
        _int_array("static_shared_mem_bytes", static_shared_mem_bytes))
    if not isinstance(opt_in, (bool, np.bool_)):
        raise InvalidParameter(f"opt_in must be True or False, got {opt_in!r}", item="opt_in")
    preference = _preference_bytes(arch, carveout_percent, shared_mem_config_bytes)
    caching = _check_caching(arch, partitioned_global_caching)
    shape = np.broadcast_shapes(bs.shape, regs.shape, dyn.shape, st.shape)

    per_block_limit = (arch.shared_mem_per_block_optin_bytes if opt_in
                       else arch.shared_mem_per_block_bytes)
    extremes = (lo_b, hi_b, lo_r, hi_r, lo_d, hi_d, lo_s, hi_s)
    args = (arch, bs, regs, dyn, st, extremes, preference, caching)
    r = _rules(*args)
    active, warps = r["active"], r["warps"]
    failure = None
    if (_could_fail(arch, r["register_check"], per_block_limit, hi_s, hi_d, hi_r, lo_b, hi_b)
            or _min(active) == 0):
        failure = _failures(arch, shape, bs, regs, dyn, st, r["register_check"],
                            per_block_limit, active)
    if failure is None:  # every launch runs (the common sweep): no codes to keep
        valid = np.ones(shape, dtype=bool)
    else:
        valid = _full(failure == _OK, shape)
        active = np.where(valid, active, 0)
    active_warps = _full(active * warps, shape)
    del r, active, warps  # the reported fields recompute them (see _Rules)
    rules = _Rules(args, shape, valid, failure)
    return build(OccupancyArrays, {
        "compute_capability": arch.compute_capability,
        "valid": valid,
        "active_warps_per_sm": active_warps,
        "max_warps_per_sm": arch.max_warps_per_sm,
        "reserved_shared_mem_per_block_bytes": arch.reserved_shared_mem_per_block_bytes,
        "shared_mem_per_block_limit_bytes": per_block_limit,
        "opt_in": bool(opt_in),
    }, {name: (_reported, rules, name) for name in _REPORTED})


def _rules(arch, bs, regs, dyn, st, extremes, preference, caching) -> dict:
    """Rules 1-5 per launch (before the launch checks): the intermediates by name."""
    lo_b, hi_b, lo_r, hi_r, lo_d, hi_d, lo_s, hi_s = extremes
    ws = arch.warp_size
    if ws & (ws - 1) == 0:  # a power of two: the same ceil(T / 32) by a shift
        warps = (bs + (ws - 1)) >> (ws.bit_length() - 1)
    else:
        warps = (bs + ws - 1) // ws
    lo_w, hi_w = -(-lo_b // ws), -(-hi_b // ws)  # ceil is monotone: the warps' extremes
    w = warps if lo_w >= 1 else np.maximum(warps, 1)
    if arch.register_allocation == "block":
        # 1.x: registers per block (see the scalar function).
        allocated_registers = _registers_per_block_tesla(arch, warps, regs)
        register_check = allocated_registers
        by_registers = np.where(allocated_registers == 0, UNLIMITED,
                                arch.registers_per_sm // np.maximum(allocated_registers, 1))
        by_warps = arch.max_warps_per_sm // w
        cached = np.zeros((), dtype=bool)
    else:
        per_warp = _registers_per_warp_array(arch, regs)
        if arch.double_unit_register_counts:
            lo_pw, hi_pw = _min(per_warp), _max(per_warp)
        else:  # monotone in the registers
            lo_pw, hi_pw = (_registers_per_warp_array(arch, np.int64(r)) for r in (lo_r, hi_r))
        register_check = (per_warp, warps, int(hi_pw), int(hi_w))
        allocated_registers = (np.multiply, per_warp, warps)
        by_registers, by_warps, cached = _warp_registers(arch, per_warp, w, caching, lo_pw == 0)

    # Rule 3 in the configuration the driver will use.
    unit_s = arch.shared_mem_allocation_unit_bytes
    extra = arch.reserved_shared_mem_per_block_bytes + unit_s - 1
    # the smaller operand takes the constant (integers: the order of the sum is immaterial)
    total = st + extra + dyn if st.size <= dyn.size else dyn + extra + st
    allocated = _round_down(total, unit_s)
    # bounds of the allocation (rounding is monotone; the sum's extremes bound it)
    lo_a, hi_a = _round_down(lo_s + lo_d + extra, unit_s), _round_down(hi_s + hi_d + extra, unit_s)
    configs = np.asarray(arch.shared_mem_configs_bytes, dtype=np.int64)
    if preference >= hi_a:  # the preferred configuration holds every block
        config = np.int64(preference)
    else:
        if arch.has_carveout:
            smallest = configs[np.minimum(np.searchsorted(configs, allocated), len(configs) - 1)]
        else:
            smallest = np.int64(arch.shared_mem_per_sm_bytes)
        config = np.where(preference >= allocated, preference, smallest)
    if lo_a > 0:
        by_shared = config // allocated
    else:
        by_shared = np.where(allocated == 0, UNLIMITED, config // np.maximum(allocated, 1))
    by_blocks = arch.max_blocks_per_sm
    active = np.minimum(np.minimum(by_warps, by_registers), np.minimum(by_shared, by_blocks))
    return {"warps": warps, "register_check": register_check,
            "allocated_registers": allocated_registers, "cached": cached,
            "limits": {"warps": by_warps, "registers": by_registers, "shared_memory": by_shared,
                       "blocks": by_blocks},
            "allocated": allocated, "configs": configs, "config": config, "active": active}


class _Rules:
    """The rules' intermediates for the fields only reported, recomputed on first read:
    keeping them from the call would hold a dozen sweep-sized arrays for fields nobody may
    read (and a sweep's memory then is not reused by the prediction that follows)."""

    def __init__(self, args, shape, valid, failure):
        self.args, self.shape, self.valid, self.failure = args, shape, valid, failure
        self.values = None

    def get(self) -> dict:
        if self.values is None:
            values = _rules(*self.args)
            if self.failure is not None:
                values["active"] = np.where(self.valid, values["active"], 0)
            self.values = values
        return self.values


_REPORTED = ("block_size", "registers_per_thread", "shared_mem_bytes", "static_shared_mem_bytes",
             "warps_per_block", "active_blocks_per_sm", "failure", "active_threads_per_sm",
             "occupancy", "block_limits", "limited_by", "allocated_registers_per_block",
             "allocated_shared_mem_per_block_bytes", "shared_mem_config_bytes",
             "min_shared_mem_config_bytes", "partitioned_global_caching")


def _reported(rules: _Rules, name: str):
    """The field ``name`` of :class:`OccupancyArrays` (see :func:`occupancy_array`)."""
    shape, valid = rules.shape, rules.valid
    arch, bs, regs, dyn, st = rules.args[:5]
    inputs = {"block_size": bs, "registers_per_thread": regs, "shared_mem_bytes": dyn,
              "static_shared_mem_bytes": st}
    if name in inputs:
        return _full(inputs[name], shape)
    if name == "failure":
        return _full(np.zeros((), dtype=np.int8) if rules.failure is None else rules.failure,
                     shape)
    v = rules.get()
    active = v["active"]
    if name == "warps_per_block":
        return _full(v["warps"], shape)
    if name == "active_blocks_per_sm":
        return _full(active, shape)
    if name == "active_threads_per_sm":
        return _full(active * bs, shape)
    if name == "occupancy":
        return _full(active * v["warps"] / arch.max_warps_per_sm, shape)
    if name == "block_limits":
        return MappingProxyType({k: _full(a, shape) for k, a in v["limits"].items()})
    if name == "limited_by":
        return MappingProxyType({k: _full((a == active) & valid, shape)
                                 for k, a in v["limits"].items()})
    if name == "allocated_registers_per_block":
        return _computed(v["allocated_registers"], shape)
    if name == "allocated_shared_mem_per_block_bytes":
        return _full(v["allocated"], shape)
    if name == "shared_mem_config_bytes":
        return _full(v["config"], shape)
    if name == "min_shared_mem_config_bytes":
        return _min_configs(v["configs"], v["config"], v["allocated"], active, shape)
    if name == "partitioned_global_caching":
        return _full(v["cached"] & valid, shape)
    raise AssertionError(name)


def _computed(recipe, shape):
    """A value that may itself be a recipe ``(function, *arguments)``, as a full array."""
    if isinstance(recipe, tuple):
        function, *arguments = recipe
        recipe = function(*arguments)
    return _full(recipe, shape)


def _round_down(total, unit: int):
    """(total // unit) * unit for totals >= 0; a mask when ``unit`` is a power of two."""
    return total & -unit if unit & (unit - 1) == 0 else total // unit * unit


def _min_configs(configs, config, allocated, active, shape):
    """The smallest configuration giving the same active blocks (scalar function's rule)."""
    no_shared = allocated == 0
    min_config = _full(config, shape).copy()
    for c in configs[::-1]:
        keeps = (c >= allocated) & (no_shared | (c // np.maximum(allocated, 1) >= active))
        min_config = np.where(keeps, c, min_config)
    return _full(min_config, shape)


def _could_fail(arch, register_check, per_block_limit, hi_s, hi_d, hi_r, lo_b, hi_b) -> bool:
    """Whether any launch check can fail, from the inputs' extremes (no pass over the data)."""
    if isinstance(register_check, tuple):
        # Registers per warp × warps rounded up to the check's group: both factors >= 0 and
        # the rounding monotone, so the largest product is that of the largest factors.
        _, _, hi_pw, hi_w = register_check
        group = arch.register_check_warp_group
        over_registers = hi_pw * (-(-hi_w // group) * group) > arch.max_registers_per_block
    else:
        over_registers = _max(register_check) > arch.max_registers_per_block
    return (over_registers or hi_s + hi_d > per_block_limit
            or hi_s > arch.shared_mem_per_block_bytes
            or hi_r > arch.max_registers_per_thread
            or lo_b < 1 or hi_b > arch.max_threads_per_block)


def _failures(arch, shape, bs, regs, dyn, st, register_check, per_block_limit, active):
    """Which check fails per point, in the scalar function's order (0 where none does)."""
    if isinstance(register_check, tuple):
        per_warp, warps, _, _ = register_check
        group = arch.register_check_warp_group
        register_check = per_warp.astype(np.int64) * ((warps + group - 1) // group * group)
    # The launch checks, last first, so that the first failing check wins.
    failure = np.zeros(shape, dtype=np.int8)
    failure[np.broadcast_to(register_check > arch.max_registers_per_block, shape)] = \
        _REGISTERS_PER_BLOCK
    failure[np.broadcast_to(st.astype(np.int64) + dyn > per_block_limit, shape)] = \
        _SHARED_PER_BLOCK
    failure[np.broadcast_to(st > arch.shared_mem_per_block_bytes, shape)] = _STATIC_SHARED
    failure[np.broadcast_to(regs > arch.max_registers_per_thread, shape)] = _REGISTERS_PER_THREAD
    failure[np.broadcast_to((bs < 1) | (bs > arch.max_threads_per_block), shape)] = _BLOCK_SIZE
    failure[np.broadcast_to(active == 0, shape) & (failure == _OK)] = _NO_BLOCK_FITS
    return failure


def _registers_per_warp_array(arch, regs: np.ndarray):
    """checks._registers_per_warp for an array, the unit a scalar unless Fermi doubles it."""
    unit = arch.register_allocation_unit
    if arch.double_unit_register_counts:
        doubled = np.isin(regs, sorted(arch.double_unit_register_counts))
        unit = np.where(doubled, 2 * unit, unit)
        return -(-regs * arch.warp_size // unit) * unit
    return _round_down(regs * arch.warp_size + (unit - 1), unit)


def _warp_registers(arch, per_warp: np.ndarray, w: np.ndarray, caching: bool, some_without: bool):
    """Rules 1-2 where registers are allocated per warp (2.0 on): B_registers, B_warps and
    whether partitioned caching stays on, per point (``some_without``: a launch may use no
    registers, whose register limit is UNLIMITED)."""
    g = arch.warp_allocation_granularity
    warps_per_subpartition = arch.registers_per_sm // g // (
        np.maximum(per_warp, 1) if some_without else per_warp)
    no_registers = per_warp == 0 if some_without or caching else None
    if caching:
        halved = 2 * (warps_per_subpartition * (g // 2) // w)
        cached = (halved > 0) | no_registers
        by_registers = np.where(cached, halved, warps_per_subpartition * g // w)
        by_warps = np.where(cached, 2 * (arch.max_warps_per_sm // 2 // w),
                            arch.max_warps_per_sm // w)
    else:
        cached = np.zeros((), dtype=bool)
        by_registers = warps_per_subpartition * g // w
        by_warps = arch.max_warps_per_sm // w
    if some_without:
        by_registers = np.where(no_registers, UNLIMITED, by_registers)
    return by_registers, by_warps, cached
