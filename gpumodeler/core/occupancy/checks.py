"""What the scalar and vectorised occupancy calculations share: the result type, the checks of
their inputs, the launch checks and the rules themselves (warps, registers, shared memory,
the configuration and the blocks each limit allows), each written once with the operations
Python ints and numpy arrays both have (:func:`select` is a conditional for one launch,
``numpy.where`` for many), so the scalar calculator never loads numpy and the vectorised one
calls the same functions (their messages are in :mod:`gpumodeler.core.occupancy.messages`).

Sources. The limits and their checks are those of the CUDA C++ Programming Guide
(compute-capabilities appendix: "Technical Specifications per Compute Capability", the
per-architecture shared-memory sections, and "Configuring L1/Shared Memory Balance") and of
NVIDIA's CUDA Occupancy Calculator spreadsheet (allocation units and granularities, "GPU Data"
sheet). The rules, their symbols and the order of the launch checks are stated in
:mod:`gpumodeler.core.occupancy.calculator`, whose :func:`~gpumodeler.core.occupancy.calculator.occupancy` raises
the launch errors; :mod:`gpumodeler.core.occupancy.arrays` gives the same ones for a sweep.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Mapping

from gpumodeler.core.occupancy.compute_capability import ArchitectureLimits
from gpumodeler.core.errors import InvalidParameter

# A block limit that the launch does not impose (no registers, no shared memory). The runtime
# reports INT_MAX for these; so do we, so that limits compare and tie the same way.
UNLIMITED = 2**31 - 1

LIMIT_NAMES = ("warps", "registers", "shared_memory", "blocks")

# Why a launch cannot run: the launch checks in the order they are applied (module
# docstring of :mod:`gpumodeler.core.occupancy.calculator`), CHECK_OK where all pass.
CHECK_OK, CHECK_BLOCK_SIZE, CHECK_REGISTERS_PER_THREAD, CHECK_STATIC_SHARED, \
    CHECK_SHARED_PER_BLOCK, CHECK_REGISTERS_PER_BLOCK, CHECK_NO_BLOCK_FITS = range(7)

#: The argument a failed check's LaunchError names (``item``).
CHECK_ITEMS = {CHECK_BLOCK_SIZE: "block_size", CHECK_REGISTERS_PER_THREAD: "registers_per_thread",
               CHECK_STATIC_SHARED: "static_shared_mem_bytes",
               CHECK_SHARED_PER_BLOCK: "shared_mem_bytes",
               CHECK_REGISTERS_PER_BLOCK: "registers_per_thread", CHECK_NO_BLOCK_FITS: None}


def input_checks(arch: ArchitectureLimits, block_size, registers, static, dynamic,
                 per_block_limit: int) -> tuple:
    """The launch checks on the inputs alone, in order, as ``(code, failed)`` pairs: block
    size within 1..max threads per block, registers per thread within the limit, static
    shared memory within the static limit, static + dynamic within the per-block limit
    (``per_block_limit``: the default or the opt-in one). The one definition of these
    checks: ``failed`` is a bool for one launch (Python ints) or a bool array for many
    (numpy arrays), by the operators both have. Each check is monotone in its inputs
    (falling in the block size below 1, rising in every other), so the inputs' extremes
    decide whether any launch of an array fails it."""
    return ((CHECK_BLOCK_SIZE, (block_size < 1) | (block_size > arch.max_threads_per_block)),
            (CHECK_REGISTERS_PER_THREAD, registers > arch.max_registers_per_thread),
            (CHECK_STATIC_SHARED, static > arch.shared_mem_per_block_bytes),
            (CHECK_SHARED_PER_BLOCK, static + dynamic > per_block_limit))


def ceil_div(total, unit: int):
    """ceil(total / unit) for totals >= 0: an int or an integer array (a shift when ``unit``
    is a power of two, the same value faster over a sweep)."""
    if unit & (unit - 1) == 0:
        return (total + (unit - 1)) >> (unit.bit_length() - 1)
    return -(-total // unit)


def round_up(total, unit):
    """ceil(total / unit) · unit for totals >= 0 (the allocation granularities of the
    occupancy calculator spreadsheet): ints or integer arrays; ``unit`` an int or, where
    Fermi doubles the register unit for some counts, an array."""
    if type(unit) is int:
        return round_down(total + (unit - 1), unit)
    return -(-total // unit) * unit


def round_down(total, unit: int):
    """floor(total / unit) · unit for totals >= 0 (a mask when ``unit`` is a power of two)."""
    return total & -unit if unit & (unit - 1) == 0 else total // unit * unit


def warps_per_block(arch: ArchitectureLimits, block_size):
    """Rule 1's W_b: ceil(block size / warp size)."""
    return ceil_div(block_size, arch.warp_size)


def allocated_shared_bytes(arch: ArchitectureLimits, static, dynamic):
    """Rule 3's shared memory allocated to a block: static + dynamic bytes plus the bytes the
    hardware reserves per block, rounded up to the allocation unit. Over arrays the constant
    joins the smaller operand first (integers: the order of the sum is immaterial), so a
    sweep pays two passes, the sum and the rounding."""
    unit = arch.shared_mem_allocation_unit_bytes
    offset = arch.reserved_shared_mem_per_block_bytes + unit - 1
    if getattr(static, "size", 1) <= getattr(dynamic, "size", 1):
        return round_down(static + offset + dynamic, unit)
    return round_down(dynamic + offset + static, unit)


def register_check_warps(arch: ArchitectureLimits, warps):
    """Warps the per-block register check counts (2.0 on): the block's warps rounded up to
    the check's group (``register_check_warp_group``); an int or an integer array."""
    return round_up(warps, arch.register_check_warp_group)


@dataclass(frozen=True)
class OccupancyResult:
    """Occupancy of one launch on one SM; see :mod:`gpumodeler.core.occupancy.calculator` for each
    formula."""

    compute_capability: str
    block_size: int
    registers_per_thread: int
    shared_mem_bytes: int
    static_shared_mem_bytes: int
    warps_per_block: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    active_threads_per_sm: int
    max_warps_per_sm: int
    occupancy: float
    block_limits: Mapping[str, int] = field(hash=False)
    limited_by: tuple[str, ...]
    allocated_registers_per_block: int
    allocated_shared_mem_per_block_bytes: int
    reserved_shared_mem_per_block_bytes: int
    shared_mem_per_block_limit_bytes: int
    shared_mem_config_bytes: int
    min_shared_mem_config_bytes: int
    partitioned_global_caching: bool


def is_bool(value) -> bool:
    """True or False, numpy's included (a numpy value exists only once numpy is loaded, so
    the scalar calculator does not load it: the CLI's ``occupancy`` starts faster)."""
    if isinstance(value, bool):
        return True
    np_ = sys.modules.get("numpy")
    return np_ is not None and isinstance(value, np_.bool_)


def _is_int(value) -> bool:
    if isinstance(value, int):
        return True
    np_ = sys.modules.get("numpy")
    return np_ is not None and isinstance(value, np_.integer)


def require_int(name: str, value) -> int:
    if is_bool(value) or not _is_int(value):
        raise InvalidParameter(
            f"{name} must be an integer, got {value!r} ({type(value).__name__})", item=name)
    if value < 0:
        raise InvalidParameter(f"{name} must be >= 0, got {value}", item=name)
    return int(value)


def preference_bytes(arch: ArchitectureLimits, carveout_percent, shared_mem_config_bytes) -> int:
    """The shared-memory configuration the user prefers (before the driver's override)."""
    if carveout_percent is not None and shared_mem_config_bytes is not None:
        raise InvalidParameter("give carveout_percent or shared_mem_config_bytes, not both")
    configs = arch.shared_mem_configs_bytes
    if shared_mem_config_bytes is not None:
        size = require_int("shared_mem_config_bytes", shared_mem_config_bytes)
        if size not in configs:
            raise InvalidParameter(
                f"cc {arch.compute_capability} has no {size}-byte shared-memory configuration; "
                f"valid: {', '.join(str(c) for c in configs)} bytes",
                item="shared_mem_config_bytes")
        return size
    if carveout_percent is not None:
        pct = require_int("carveout_percent", carveout_percent)
        if not arch.has_carveout:
            raise InvalidParameter(
                f"carveout_percent applies to cc 7.0 and later; on cc {arch.compute_capability} "
                f"choose shared_mem_config_bytes from {', '.join(str(c) for c in configs)}",
                item="carveout_percent")
        if pct > 100:
            raise InvalidParameter(f"carveout_percent must be 0..100, got {pct}",
                                   item="carveout_percent")
        config = arch.config_at_least(pct * arch.shared_mem_per_sm_bytes // 100)
        # pct <= 100 asks at most the largest configuration, which always holds it
        assert config is not None
        return config
    return arch.shared_mem_per_sm_bytes


def check_caching(arch: ArchitectureLimits, partitioned_global_caching) -> bool:
    if not is_bool(partitioned_global_caching):
        raise InvalidParameter("partitioned_global_caching must be True or False")
    if partitioned_global_caching and not arch.supports_partitioned_global_caching:
        raise InvalidParameter(
            f"partitioned global caching exists on cc 5.2, 5.3, 6.1 and 6.2 only, "
            f"not on cc {arch.compute_capability}", item="partitioned_global_caching")
    return bool(partitioned_global_caching)


def per_warp_unit(arch: ArchitectureLimits, registers):
    """The register allocation unit for ``registers`` per thread, an int or an integer array
    (Fermi doubles it for some counts; see :mod:`gpumodeler.core.occupancy.compute_capability`)."""
    unit = arch.register_allocation_unit
    doubled_counts = arch.double_unit_register_counts
    np = sys.modules.get("numpy")  # an array means numpy is loaded; a scalar call never loads it
    if np is not None and isinstance(registers, np.ndarray):
        if not doubled_counts:
            return unit
        return np.where(np.isin(registers, sorted(doubled_counts)), 2 * unit, unit)
    return 2 * unit if registers in doubled_counts else unit


def registers_per_warp(arch: ArchitectureLimits, registers):
    """Registers allocated to one warp (2.0 on); ``registers`` an int or an integer array."""
    return round_up(registers * arch.warp_size, per_warp_unit(arch, registers))


def warps_in_pairs(arch: ArchitectureLimits, warps):
    """1.x: a block's warps rounded up to the warp allocation granularity (2)."""
    return round_up(warps, arch.warp_allocation_granularity)


def select(condition, if_true, if_false):
    """``if_true`` where ``condition`` holds, else ``if_false``: a conditional expression for
    one launch (a Python bool), ``numpy.where`` for arrays, so that each rule below is
    written once for both calculators."""
    if type(condition) is bool:
        return if_true if condition else if_false
    return sys.modules["numpy"].where(condition, if_true, if_false)


def blocks_fitting(capacity, per_block, *, none_free: bool = False):
    """capacity // per_block: the blocks that fit in ``capacity`` when each takes
    ``per_block`` (registers, shared memory); UNLIMITED where a block takes none (0), as the
    runtime reports. ``none_free``: the caller knows no block takes 0 (a sweep's minimum)."""
    if none_free:
        return capacity // per_block
    none = per_block == 0
    return select(none, UNLIMITED, capacity // select(none, 1, per_block))


def warp_register_limits(arch: ArchitectureLimits, per_warp, warps, caching: bool,
                         some_without: bool):
    """Rules 1-2 where registers are allocated per warp (2.0 on): (B_registers, B_warps,
    partitioned caching kept). ``per_warp`` registers per warp and ``warps`` per block (ints
    or arrays); ``caching`` asked for partitioned global caching, which halves the warp slots
    and the register file per block pair and is turned off where no block pair fits;
    ``some_without``: a launch may use no registers (B_registers UNLIMITED there)."""
    g = arch.warp_allocation_granularity
    no_registers = per_warp == 0 if caching or some_without else None
    warps_per_subpartition = arch.registers_per_sm // g // (
        select(no_registers, 1, per_warp) if some_without else per_warp)
    by_registers = warps_per_subpartition * g // warps
    by_warps = arch.max_warps_per_sm // warps
    if caching:
        halved = 2 * (warps_per_subpartition * (g // 2) // warps)
        caching = (halved > 0) | no_registers
        by_registers = select(caching, halved, by_registers)
        by_warps = select(caching, 2 * (arch.max_warps_per_sm // 2 // warps), by_warps)
    if some_without:
        by_registers = select(no_registers, UNLIMITED, by_registers)
    return by_registers, by_warps, caching


def shared_config(arch: ArchitectureLimits, preference: int, allocated):
    """Rule 3's shared-memory configuration: the preferred one where it holds the block's
    ``allocated`` bytes, else the smallest that does (cc 7.0 on, the carveout) or the whole
    SM's (earlier GPUs); the largest where none does (that launch fails its checks)."""
    if not arch.has_carveout:
        return select(preference >= allocated, preference, arch.shared_mem_per_sm_bytes)
    configs = arch.shared_mem_configs_bytes
    smallest = configs[-1]
    for config in reversed(configs[:-1]):
        smallest = select(config >= allocated, config, smallest)
    return select(preference >= allocated, preference, smallest)


def registers_per_block_tesla(arch: ArchitectureLimits, warps, registers):
    """Registers allocated to one block on 1.x: ceil(ceil(W_b, 2) * 32 * R, G_T)."""
    return round_up(warps_in_pairs(arch, warps) * arch.warp_size * registers,
                    arch.register_allocation_unit)
