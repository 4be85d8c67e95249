"""What the scalar and vectorised occupancy calculations share: the result type, the checks of
their inputs, and the messages for launches that cannot run.

Sources. The limits and their checks are those of the CUDA C++ Programming Guide
(compute-capabilities appendix: "Technical Specifications per Compute Capability", the
per-architecture shared-memory sections, and "Configuring L1/Shared Memory Balance") and of
NVIDIA's CUDA Occupancy Calculator spreadsheet (allocation units and granularities, "GPU Data"
sheet). The rules, their symbols and the order of the launch checks are stated in
:mod:`gpumodeler.core.occupancy.calculator`, whose :func:`~gpumodeler.core.occupancy.calculator.occupancy` raises
these messages; :mod:`gpumodeler.core.occupancy.arrays` gives the same ones for a sweep.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Mapping

from gpumodeler.core.occupancy.compute_capability import KIB, ArchitectureLimits
from gpumodeler.core.errors import InvalidParameter

# A block limit that the launch does not impose (no registers, no shared memory). The runtime
# reports INT_MAX for these; so do we, so that limits compare and tie the same way.
UNLIMITED = 2**31 - 1

LIMIT_NAMES = ("warps", "registers", "shared_memory", "blocks")


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


def _is_bool(value) -> bool:
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


def _require_int(name: str, value) -> int:
    if _is_bool(value) or not _is_int(value):
        raise InvalidParameter(
            f"{name} must be an integer, got {value!r} ({type(value).__name__})", item=name)
    if value < 0:
        raise InvalidParameter(f"{name} must be >= 0, got {value}", item=name)
    return int(value)


def _preference_bytes(arch: ArchitectureLimits, carveout_percent, shared_mem_config_bytes) -> int:
    """The shared-memory configuration the user prefers (before the driver's override)."""
    if carveout_percent is not None and shared_mem_config_bytes is not None:
        raise InvalidParameter("give carveout_percent or shared_mem_config_bytes, not both")
    configs = arch.shared_mem_configs_bytes
    if shared_mem_config_bytes is not None:
        size = _require_int("shared_mem_config_bytes", shared_mem_config_bytes)
        if size not in configs:
            raise InvalidParameter(
                f"cc {arch.compute_capability} has no {size}-byte shared-memory configuration; "
                f"valid: {', '.join(str(c) for c in configs)} bytes",
                item="shared_mem_config_bytes")
        return size
    if carveout_percent is not None:
        pct = _require_int("carveout_percent", carveout_percent)
        if not arch.has_carveout:
            raise InvalidParameter(
                f"carveout_percent applies to cc 7.0 and later; on cc {arch.compute_capability} "
                f"choose shared_mem_config_bytes from {', '.join(str(c) for c in configs)}",
                item="carveout_percent")
        if pct > 100:
            raise InvalidParameter(f"carveout_percent must be 0..100, got {pct}",
                                   item="carveout_percent")
        return arch.config_at_least(pct * arch.shared_mem_per_sm_bytes // 100)
    return arch.shared_mem_per_sm_bytes


def _check_caching(arch: ArchitectureLimits, partitioned_global_caching) -> bool:
    if not _is_bool(partitioned_global_caching):
        raise InvalidParameter("partitioned_global_caching must be True or False")
    if partitioned_global_caching and not arch.supports_partitioned_global_caching:
        raise InvalidParameter(
            f"partitioned global caching exists on cc 5.2, 5.3, 6.1 and 6.2 only, "
            f"not on cc {arch.compute_capability}", item="partitioned_global_caching")
    return bool(partitioned_global_caching)


def _kb(n: int) -> str:
    return f"{n // KIB} KB ({n} B)" if n % KIB == 0 else f"{n} B"


# Messages for launches that cannot run. The vectorized path calls the same functions.

def _msg_block_size(arch: ArchitectureLimits, block_size: int) -> str:
    if block_size < 1:
        return f"block size {block_size} is below the minimum of 1 thread"
    limit = arch.max_threads_per_block
    return (f"block size {block_size} exceeds the {limit}-thread limit "
            f"by {block_size - limit}")


def _msg_registers_per_thread(arch: ArchitectureLimits, registers: int) -> str:
    limit = arch.max_registers_per_thread
    return (f"{registers} registers per thread exceed the {limit}-register limit "
            f"by {registers - limit}")


def _msg_static_shared(arch: ArchitectureLimits, static: int) -> str:
    limit = arch.shared_mem_per_block_bytes
    msg = (f"static shared memory {static} B exceeds the {_kb(limit)} limit for static "
           f"allocations by {static - limit} B")
    if arch.shared_mem_per_block_optin_bytes <= limit:
        return f"{msg}{_tesla_note(arch)}; cc {arch.compute_capability} allows no larger block"
    return f"{msg}; larger allocations must be dynamic (opt-in)"


def _tesla_note(arch: ArchitectureLimits) -> str:
    """Why the 1.x per-block limit is not a round 16 KB."""
    if arch.register_allocation != "block":
        return ""
    return (f" (16 KB less the {arch.reserved_shared_mem_per_block_bytes} B the hardware keeps "
            f"in every block on cc 1.x)")


def _msg_shared_per_block(arch: ArchitectureLimits, static: int, dynamic: int,
                          opt_in: bool) -> str:
    total = static + dynamic
    used = f"shared memory per block {total} B (static {static} B + dynamic {dynamic} B)"
    cc = arch.compute_capability
    optin = arch.shared_mem_per_block_optin_bytes
    default = arch.shared_mem_per_block_bytes
    if opt_in and optin > default:
        return (f"{used} exceeds the {_kb(optin)} opt-in per-block limit of cc {cc} "
                f"by {total - optin} B")
    msg = f"{used} exceeds the default {_kb(default)} per-block limit by {total - default} B"
    if optin <= default:
        return f"{msg}{_tesla_note(arch)}; cc {cc} has no opt-in above it"
    if total <= optin:
        return f"{msg}; cc {cc} allows up to {_kb(optin)} with the opt-in (opt_in=True)"
    return (f"{msg}; it is also over the {_kb(optin)} opt-in maximum of cc {cc} "
            f"by {total - optin} B")


def _msg_registers_per_block(arch: ArchitectureLimits, block_size: int, registers: int) -> str:
    warps = -(-block_size // arch.warp_size)
    limit = arch.max_registers_per_block
    cc = arch.compute_capability
    if arch.register_allocation == "block":
        paired = _warps_in_pairs(arch, warps)
        need = _registers_per_block_tesla(arch, warps, registers)
        rounded = "" if paired == warps else (
            f" ({warps} rounded up to a multiple of {arch.warp_allocation_granularity})")
        return (f"registers per block: {paired} warps{rounded} x {arch.warp_size} threads x "
                f"{registers} registers, in units of {arch.register_allocation_unit}, = {need} "
                f"exceed the {limit}-register per-block limit of cc {cc} by {need - limit}")
    per_warp = _registers_per_warp(arch, registers)
    group = arch.register_check_warp_group
    counted = -(-warps // group) * group
    need = per_warp * counted
    grouped = "" if counted == warps else (
        f" (counted in groups of {group} warps, {warps} -> {counted})")
    unit = _per_warp_unit(arch, registers)
    return (f"registers per block: {counted} warps{grouped} x {per_warp} registers per warp "
            f"({registers} per thread, allocated in units of {unit}) "
            f"= {need} exceed the {limit}-register per-block limit of cc "
            f"{cc} by {need - limit}")


def _msg_no_block_fits(limits: Mapping[str, int]) -> str:
    zero = [name for name in LIMIT_NAMES if limits[name] == 0]
    return f"no block fits on an SM: the {', '.join(zero)} limit allows 0 blocks"


def _per_warp_unit(arch: ArchitectureLimits, registers: int) -> int:
    """The register allocation unit for ``registers`` per thread (Fermi doubles it for some
    counts; see :mod:`gpumodeler.core.occupancy.compute_capability`)."""
    if registers in arch.double_unit_register_counts:
        return 2 * arch.register_allocation_unit
    return arch.register_allocation_unit


def _registers_per_warp(arch: ArchitectureLimits, registers):
    """Registers allocated to one warp (2.0 on); ``registers`` an int or an integer array."""
    np = sys.modules.get("numpy")  # an array means numpy is loaded; a scalar call never loads it
    if np is not None and isinstance(registers, np.ndarray):
        unit = np.full(registers.shape, arch.register_allocation_unit, dtype=np.int64)
        if arch.double_unit_register_counts:
            doubled = np.isin(registers, sorted(arch.double_unit_register_counts))
            unit = np.where(doubled, 2 * unit, unit)
    else:
        unit = _per_warp_unit(arch, registers)
    return -(-registers * arch.warp_size // unit) * unit


def _warps_in_pairs(arch: ArchitectureLimits, warps):
    """1.x: a block's warps rounded up to the warp allocation granularity (2)."""
    g = arch.warp_allocation_granularity
    return -(-warps // g) * g


def _registers_per_block_tesla(arch: ArchitectureLimits, warps, registers):
    """Registers allocated to one block on 1.x: ceil(ceil(W_b, 2) * 32 * R, G_T)."""
    unit = arch.register_allocation_unit
    return -(-(_warps_in_pairs(arch, warps) * arch.warp_size * registers) // unit) * unit
