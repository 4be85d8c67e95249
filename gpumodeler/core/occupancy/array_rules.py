"""The rules of :func:`gpumodeler.core.occupancy.calculator.occupancy` applied over arrays: how
:func:`gpumodeler.core.occupancy.arrays.occupancy_array` calls the rules of
:mod:`gpumodeler.core.occupancy.checks` (written once for both paths) on a sweep.

Sources and symbols are those of :mod:`gpumodeler.core.occupancy.calculator` (the CUDA C++
Programming Guide, NVIDIA's CUDA Occupancy Calculator spreadsheet and the runtime's occupancy
API). Each input keeps its own shape while the rules are applied, so a scalar shared-memory
size makes rule 3 one number, not one per launch; the launch checks are decided from the
inputs' extremes where those show that every launch runs; and the intermediates that are only
reported (limits, allocations, configurations, the checks' codes) are recomputed when first
read (:class:`RuleIntermediates`) rather than held from the call.
"""
from __future__ import annotations

from types import MappingProxyType

import numpy as np

from gpumodeler.core.occupancy.checks import (
    CHECK_NO_BLOCK_FITS, CHECK_OK, CHECK_REGISTERS_PER_BLOCK, allocated_shared_bytes, blocks_fitting,
    shared_config, warp_register_limits,
    input_checks, register_check_warps, registers_per_block_tesla, registers_per_warp,
    warps_per_block)


def full_shape(a, shape) -> np.ndarray:
    """``a`` as an array of the sweep's shape (a copy where it broadcasts)."""
    a = np.asarray(a)
    return a if a.shape == shape else np.array(np.broadcast_to(a, shape))


def _max(a) -> int:
    return int(np.max(a)) if np.size(a) else 0


def min_or_one(a) -> int:
    return int(np.min(a)) if np.size(a) else 1


def rule_intermediates(arch, bs, regs, dyn, st, extremes, preference, caching) -> dict:
    """Rules 1-5 per launch (before the launch checks): the intermediates by name."""
    lo_b, hi_b, lo_r, hi_r, lo_d, hi_d, lo_s, hi_s = extremes
    warps = warps_per_block(arch, bs)
    lo_w, hi_w = warps_per_block(arch, lo_b), warps_per_block(arch, hi_b)  # monotone: extremes
    w = warps if lo_w >= 1 else np.maximum(warps, 1)
    if arch.register_allocation == "block":
        # 1.x: registers per block (see the scalar function).
        allocated_registers = registers_per_block_tesla(arch, warps, regs)
        register_check = allocated_registers
        by_registers = blocks_fitting(arch.registers_per_sm, allocated_registers)
        by_warps = arch.max_warps_per_sm // w
        cached = np.zeros((), dtype=bool)
    else:
        per_warp = registers_per_warp(arch, regs)
        if arch.double_unit_register_counts:
            lo_pw, hi_pw = min_or_one(per_warp), _max(per_warp)
        else:  # monotone in the registers
            lo_pw, hi_pw = (registers_per_warp(arch, r) for r in (lo_r, hi_r))
        register_check = (per_warp, warps, int(hi_pw), int(hi_w))
        allocated_registers = (np.multiply, per_warp, warps)
        by_registers, by_warps, cached = warp_register_limits(arch, per_warp, w, caching,
                                                              lo_pw == 0)

    # Rule 3 in the configuration the driver will use.
    allocated = allocated_shared_bytes(arch, st, dyn)
    # bounds of the allocation (rounding is monotone; the sum's extremes bound it)
    lo_a, hi_a = allocated_shared_bytes(arch, lo_s, lo_d), allocated_shared_bytes(arch, hi_s, hi_d)
    configs = np.asarray(arch.shared_mem_configs_bytes, dtype=np.int64)
    if preference >= hi_a:  # the preferred configuration holds every block
        config = np.int64(preference)
    else:
        config = shared_config(arch, preference, allocated)
    by_shared = blocks_fitting(config, allocated, none_free=lo_a > 0)
    by_blocks = arch.max_blocks_per_sm
    active = np.minimum(np.minimum(by_warps, by_registers), np.minimum(by_shared, by_blocks))
    return {"warps": warps, "register_check": register_check,
            "allocated_registers": allocated_registers, "cached": cached,
            "limits": {"warps": by_warps, "registers": by_registers, "shared_memory": by_shared,
                       "blocks": by_blocks},
            "allocated": allocated, "configs": configs, "config": config, "active": active}


class RuleIntermediates:
    """The rules' intermediates for the fields only reported, recomputed on first read:
    keeping them from the call would hold a dozen sweep-sized arrays for fields nobody may
    read (and a sweep's memory then is not reused by the prediction that follows)."""

    def __init__(self, args, shape, valid, failure):
        self.args, self.shape, self.valid, self.failure = args, shape, valid, failure
        self.values = None

    def get(self) -> dict:
        if self.values is None:
            values = rule_intermediates(*self.args)
            if self.failure is not None:
                values["active"] = np.where(self.valid, values["active"], 0)
            self.values = values
        return self.values


REPORTED_FIELDS = ("block_size", "registers_per_thread", "shared_mem_bytes", "static_shared_mem_bytes",
             "warps_per_block", "active_blocks_per_sm", "failure", "active_threads_per_sm",
             "occupancy", "block_limits", "limited_by", "allocated_registers_per_block",
             "allocated_shared_mem_per_block_bytes", "shared_mem_config_bytes",
             "min_shared_mem_config_bytes", "partitioned_global_caching")


def reported_value(rules: RuleIntermediates, name: str):
    """The field ``name`` of :class:`OccupancyArrays` (see :func:`occupancy_array`)."""
    shape, valid = rules.shape, rules.valid
    arch, bs, regs, dyn, st = rules.args[:5]
    inputs = {"block_size": bs, "registers_per_thread": regs, "shared_mem_bytes": dyn,
              "static_shared_mem_bytes": st}
    if name in inputs:
        return full_shape(inputs[name], shape)
    if name == "failure":
        return full_shape(np.zeros((), dtype=np.int8) if rules.failure is None else rules.failure,
                     shape)
    v = rules.get()
    active = v["active"]
    if name == "warps_per_block":
        return full_shape(v["warps"], shape)
    if name == "active_blocks_per_sm":
        return full_shape(active, shape)
    if name == "active_threads_per_sm":
        return full_shape(active * bs, shape)
    if name == "occupancy":
        return full_shape(active * v["warps"] / arch.max_warps_per_sm, shape)
    if name == "block_limits":
        return MappingProxyType({k: full_shape(a, shape) for k, a in v["limits"].items()})
    if name == "limited_by":
        return MappingProxyType({k: full_shape((a == active) & valid, shape)
                                 for k, a in v["limits"].items()})
    if name == "allocated_registers_per_block":
        return _computed(v["allocated_registers"], shape)
    if name == "allocated_shared_mem_per_block_bytes":
        return full_shape(v["allocated"], shape)
    if name == "shared_mem_config_bytes":
        return full_shape(v["config"], shape)
    if name == "min_shared_mem_config_bytes":
        return _min_configs(v["configs"], v["config"], v["allocated"], active, shape)
    if name == "partitioned_global_caching":
        return full_shape(v["cached"] & valid, shape)
    raise AssertionError(name)


def _computed(recipe, shape):
    """A value that may itself be a recipe ``(function, *arguments)``, as a full array."""
    if isinstance(recipe, tuple):
        function, *arguments = recipe
        recipe = function(*arguments)
    return full_shape(recipe, shape)


def _min_configs(configs, config, allocated, active, shape):
    """The smallest configuration giving the same active blocks (scalar function's rule)."""
    no_shared = allocated == 0
    min_config = full_shape(config, shape).copy()
    for c in configs[::-1]:
        keeps = (c >= allocated) & (no_shared | (c // np.maximum(allocated, 1) >= active))
        min_config = np.where(keeps, c, min_config)
    return full_shape(min_config, shape)


def could_fail(arch, register_check, per_block_limit, hi_s, hi_d, hi_r, lo_b, hi_b) -> bool:
    """Whether any launch check can fail, from the inputs' extremes (no pass over the data):
    every check is monotone in its inputs (:func:`checks.input_checks`)."""
    if isinstance(register_check, tuple):
        # Registers per warp × warps rounded up to the check's group: both factors >= 0 and
        # the rounding monotone, so the largest product is that of the largest factors.
        _, _, hi_pw, hi_w = register_check
        over_registers = hi_pw * register_check_warps(arch, hi_w) > arch.max_registers_per_block
    else:
        over_registers = _max(register_check) > arch.max_registers_per_block
    return over_registers or any(
        failed for b in (lo_b, hi_b)
        for _, failed in input_checks(arch, b, hi_r, hi_s, hi_d, per_block_limit))


def failure_codes(arch, shape, bs, regs, dyn, st, register_check, per_block_limit, active):
    """Which check fails per point, in the scalar function's order (0 where none does)."""
    if isinstance(register_check, tuple):
        per_warp, warps, _, _ = register_check
        register_check = per_warp.astype(np.int64) * register_check_warps(arch, warps)
    # The launch checks, last first, so that the first failing check wins.
    failure = np.zeros(shape, dtype=np.int8)
    failure[np.broadcast_to(register_check > arch.max_registers_per_block, shape)] = \
        CHECK_REGISTERS_PER_BLOCK
    for code, failed in reversed(input_checks(arch, bs, regs, st, dyn, per_block_limit)):
        failure[np.broadcast_to(failed, shape)] = code
    failure[np.broadcast_to(active == 0, shape) & (failure == CHECK_OK)] = CHECK_NO_BLOCK_FITS
    return failure
