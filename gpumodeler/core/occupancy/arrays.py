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
from gpumodeler.core.occupancy.array_rules import (
    REPORTED_FIELDS, RuleIntermediates, could_fail, failure_codes, full_shape, min_or_one,
    reported_value, rule_intermediates)
from gpumodeler.core.occupancy.checks import (
    CHECK_BLOCK_SIZE, CHECK_NO_BLOCK_FITS, CHECK_OK, CHECK_REGISTERS_PER_BLOCK,
    CHECK_REGISTERS_PER_THREAD, CHECK_SHARED_PER_BLOCK, CHECK_STATIC_SHARED,
    LIMIT_NAMES, UNLIMITED, OccupancyResult, check_caching, preference_bytes,  # noqa: F401
    warps_per_block)
from gpumodeler.core.occupancy.messages import launch_error_message


@dataclass(frozen=True, eq=False)
class OccupancyArrays(LazyFields):
    """:func:`occupancy_array`'s answer: the fields of :class:`OccupancyResult` as arrays of
    the broadcast input shape, plus ``valid`` and ``reasons`` (the LaunchError message where a
    launch cannot run, '' where it can; built on first use, since formatting is the slow part
    of a big sweep). Where invalid, the active counts and occupancy are 0 and ``limited_by``
    is all False. A sweep needs ``valid`` and ``active_warps_per_sm``; every other array is
    computed when first read (:mod:`gpumodeler.core.occupancy.array_rules`), with the same
    values and types.
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
    failure: np.ndarray = field(repr=False)   # CHECK_OK or which check failed, per point

    @property
    def shape(self) -> tuple[int, ...]:
        return self.valid.shape

    def _message(self, code: int, index) -> str:
        arch = architecture(self.compute_capability)
        b, r = int(self.block_size[index]), int(self.registers_per_thread[index])
        d, s = int(self.shared_mem_bytes[index]), int(self.static_shared_mem_bytes[index])
        limits = ({k: int(v[index]) for k, v in self.block_limits.items()}
                  if code == CHECK_NO_BLOCK_FITS else None)
        return launch_error_message(arch, code, b, r, s, d, self.opt_in, limits)

    def reason_at(self, index) -> str:
        """The LaunchError message at ``index`` ('' if that launch can run)."""
        code = int(self.failure[index])
        return "" if code == CHECK_OK else self._message(code, index)

    @cached_property
    def reasons(self) -> np.ndarray:
        """Every point's LaunchError message ('' where valid): each distinct message once,
        the distinct ones of a check formatted a column at a time
        (:mod:`gpumodeler.core.occupancy.array_messages`)."""
        from gpumodeler.core.occupancy.array_messages import launch_error_messages

        failure = self.failure.ravel()
        reasons = np.full(failure.size, "", dtype=object)
        if not failure.any():
            return reasons.reshape(self.shape)
        arch = architecture(self.compute_capability)
        b, r, s, d = (np.broadcast_to(c, self.shape).ravel() for c in (
            self.block_size, self.registers_per_thread, self.static_shared_mem_bytes,
            self.shared_mem_bytes))
        zero = {k: np.broadcast_to(v, self.shape).ravel() == 0
                for k, v in self.block_limits.items()} if (failure == CHECK_NO_BLOCK_FITS).any() else {}
        # what each check's message depends on (registers per block: the warps, not the threads)
        keys = {CHECK_BLOCK_SIZE: (b,), CHECK_REGISTERS_PER_THREAD: (r,), CHECK_STATIC_SHARED: (s,),
                CHECK_SHARED_PER_BLOCK: (s, d), CHECK_REGISTERS_PER_BLOCK: (warps_per_block(arch, b), r),
                CHECK_NO_BLOCK_FITS: tuple(zero.values())}
        for code in np.flatnonzero(np.bincount(failure)).tolist():
            if code == CHECK_OK:
                continue
            index = np.flatnonzero(failure == code)
            key = np.stack([c[index] for c in keys[code]], axis=1).astype(np.int64)
            first, inverse = _distinct_rows(key)
            rows = index[first]
            texts = np.empty(len(first), dtype=object)
            texts[:] = launch_error_messages(arch, code, b[rows], r[rows], s[rows], d[rows],
                                             self.opt_in, {k: v[rows] for k, v in zero.items()})
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


#: Largest size an input array may hold: the CLI's largest whole number. Products of a size
#: with the architecture's constants stay inside int64 (at 2^58 registers per thread they do
#: not, and the min/max shortcuts then mislead every other launch of the call).
MAX_ARRAY_VALUE = 2 ** 53


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
    if hi > MAX_ARRAY_VALUE:
        raise InvalidParameter(
            f"{name} holds {hi}, above the 2^53 = {MAX_ARRAY_VALUE} the array calculator takes "
            f"(its int64 products would overflow; the scalar occupancy() takes any size)",
            item=name)
    a = a.astype(np.int64, copy=False)
    lo = int(a.min())
    if lo < 0:
        negative = a < 0
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(negative)), a.shape))
        raise InvalidParameter(
            f"{name} must be >= 0; {int(negative.sum())} value(s) are negative, "
            f"first {int(a[first])} at index {first}", item=name)
    return a, lo, hi


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
    preference = preference_bytes(arch, carveout_percent, shared_mem_config_bytes)
    caching = check_caching(arch, partitioned_global_caching)
    shape = np.broadcast_shapes(bs.shape, regs.shape, dyn.shape, st.shape)

    per_block_limit = (arch.shared_mem_per_block_optin_bytes if opt_in
                       else arch.shared_mem_per_block_bytes)
    extremes = (lo_b, hi_b, lo_r, hi_r, lo_d, hi_d, lo_s, hi_s)
    args = (arch, bs, regs, dyn, st, extremes, preference, caching)
    r = rule_intermediates(*args)
    active, warps = r["active"], r["warps"]
    failure = None
    if (could_fail(arch, r["register_check"], per_block_limit, hi_s, hi_d, hi_r, lo_b, hi_b)
            or min_or_one(active) == 0):
        failure = failure_codes(arch, shape, bs, regs, dyn, st, r["register_check"],
                            per_block_limit, active)
    if failure is None:  # every launch runs (the common sweep): no codes to keep
        valid = np.ones(shape, dtype=bool)
    else:
        valid = full_shape(failure == CHECK_OK, shape)
        active = np.where(valid, active, 0)
    active_warps = full_shape(active * warps, shape)
    del r, active, warps  # the reported fields recompute them (see RuleIntermediates)
    rules = RuleIntermediates(args, shape, valid, failure)
    return build(OccupancyArrays, {
        "compute_capability": arch.compute_capability,
        "valid": valid,
        "active_warps_per_sm": active_warps,
        "max_warps_per_sm": arch.max_warps_per_sm,
        "reserved_shared_mem_per_block_bytes": arch.reserved_shared_mem_per_block_bytes,
        "shared_mem_per_block_limit_bytes": per_block_limit,
        "opt_in": bool(opt_in),
    }, {name: (reported_value, rules, name) for name in REPORTED_FIELDS})


