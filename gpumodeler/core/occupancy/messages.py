"""The LaunchError messages of the occupancy checks, one launch at a time.

Each message is a ``%`` template (the ``*_TEXT`` constants) filled with the numbers of the
launch and of its compute capability, so that the vectorised path
(:mod:`gpumodeler.core.occupancy.array_messages`) fills the very same templates a column at
a time and gives the same text byte for byte. The checks and their order are those of
:func:`gpumodeler.core.occupancy.calculator.occupancy` (sources: the CUDA C++ Programming
Guide, compute-capabilities appendix, and NVIDIA's CUDA Occupancy Calculator spreadsheet).
No numpy here: the scalar calculator does not load it.
"""
from __future__ import annotations

from typing import Callable, Mapping

from gpumodeler.core.occupancy.checks import (
    CHECK_BLOCK_SIZE, CHECK_NO_BLOCK_FITS, CHECK_REGISTERS_PER_BLOCK, CHECK_REGISTERS_PER_THREAD,
    CHECK_SHARED_PER_BLOCK, CHECK_STATIC_SHARED, LIMIT_NAMES, per_warp_unit,
    register_check_warps, registers_per_block_tesla, registers_per_warp, warps_in_pairs,
    warps_per_block)
from gpumodeler.core.occupancy.compute_capability import KIB, ArchitectureLimits

# block size, thread limit, excess
BLOCK_SIZE_BELOW_TEXT = "block size %d is below the minimum of 1 thread"
BLOCK_SIZE_OVER_TEXT = "block size %d exceeds the %d-thread limit by %d"
# registers, limit, excess
REGISTERS_PER_THREAD_TEXT = "%d registers per thread exceed the %d-register limit by %d"
# static bytes, the limit (kb_text), excess, the architecture's ending (static_shared_ending)
STATIC_SHARED_TEXT = ("static shared memory %d B exceeds the %s limit for static "
                      "allocations by %d B%s")
# total, static, dynamic: the head of every shared-memory-per-block message
SHARED_USED_TEXT = "shared memory per block %d B (static %d B + dynamic %d B)"
# opt-in limit (kb_text), cc, excess over it
SHARED_OPTIN_TEXT = " exceeds the %s opt-in per-block limit of cc %s by %d B"
# default limit (kb_text), excess over it, then one ending
SHARED_DEFAULT_TEXT = " exceeds the default %s per-block limit by %d B"
SHARED_NO_OPTIN_TEXT = "%s; cc %s has no opt-in above it"           # Tesla note, cc
SHARED_WITHIN_OPTIN_TEXT = "; cc %s allows up to %s with the opt-in (opt_in=True)"  # cc, kb_text
# opt-in maximum (kb_text), cc, excess over it
SHARED_OVER_OPTIN_TEXT = "; it is also over the %s opt-in maximum of cc %s by %d B"
# 1.x: paired warps, rounding note, warp size, registers, unit, need, limit, cc, excess
REGISTERS_PER_BLOCK_TESLA_TEXT = (
    "registers per block: %d warps%s x %d threads x %d registers, in units of %d, = %d "
    "exceed the %d-register per-block limit of cc %s by %d")
TESLA_ROUNDED_TEXT = " (%d rounded up to a multiple of %d)"          # warps, granularity
# 2.0 on: counted warps, grouping note, per warp, registers, unit, need, limit, cc, excess
REGISTERS_PER_BLOCK_TEXT = (
    "registers per block: %d warps%s x %d registers per warp (%d per thread, allocated in "
    "units of %d) = %d exceed the %d-register per-block limit of cc %s by %d")
GROUPED_TEXT = " (counted in groups of %d warps, %d -> %d)"          # group, warps, counted
NO_BLOCK_FITS_TEXT = "no block fits on an SM: the %s limit allows 0 blocks"  # names


def kb_text(n: int) -> str:
    return f"{n // KIB} KB ({n} B)" if n % KIB == 0 else f"{n} B"


def tesla_note(arch: ArchitectureLimits) -> str:
    """Why the 1.x per-block limit is not a round 16 KB."""
    if arch.register_allocation != "block":
        return ""
    return (f" (16 KB less the {arch.reserved_shared_mem_per_block_bytes} B the hardware keeps "
            f"in every block on cc 1.x)")


def msg_block_size(arch: ArchitectureLimits, block_size: int) -> str:
    if block_size < 1:
        return BLOCK_SIZE_BELOW_TEXT % block_size
    limit = arch.max_threads_per_block
    return BLOCK_SIZE_OVER_TEXT % (block_size, limit, block_size - limit)


def msg_registers_per_thread(arch: ArchitectureLimits, registers: int) -> str:
    limit = arch.max_registers_per_thread
    return REGISTERS_PER_THREAD_TEXT % (registers, limit, registers - limit)


def static_shared_ending(arch: ArchitectureLimits) -> str:
    """The end of the static-shared-memory message: whether a larger block can exist."""
    if arch.shared_mem_per_block_optin_bytes <= arch.shared_mem_per_block_bytes:
        return f"{tesla_note(arch)}; cc {arch.compute_capability} allows no larger block"
    return "; larger allocations must be dynamic (opt-in)"


def msg_static_shared(arch: ArchitectureLimits, static: int) -> str:
    limit = arch.shared_mem_per_block_bytes
    return STATIC_SHARED_TEXT % (static, kb_text(limit), static - limit, static_shared_ending(arch))


def msg_shared_per_block(arch: ArchitectureLimits, static: int, dynamic: int,
                          opt_in: bool) -> str:
    total = static + dynamic
    used = SHARED_USED_TEXT % (total, static, dynamic)
    cc = arch.compute_capability
    optin = arch.shared_mem_per_block_optin_bytes
    default = arch.shared_mem_per_block_bytes
    if opt_in and optin > default:
        return used + SHARED_OPTIN_TEXT % (kb_text(optin), cc, total - optin)
    msg = used + SHARED_DEFAULT_TEXT % (kb_text(default), total - default)
    if optin <= default:
        return msg + SHARED_NO_OPTIN_TEXT % (tesla_note(arch), cc)
    if total <= optin:
        return msg + SHARED_WITHIN_OPTIN_TEXT % (cc, kb_text(optin))
    return msg + SHARED_OVER_OPTIN_TEXT % (kb_text(optin), cc, total - optin)


def registers_per_block_numbers(arch: ArchitectureLimits, block_size, registers) -> tuple:
    """The numbers of the registers-per-block message, for one launch (ints) or a column
    (arrays): (its template, warps per block, warps counted, the factor between them and the
    registers per thread (threads per warp on 1.x, registers per warp from 2.0), the
    allocation unit, registers needed); both templates take the same numbers in this order. On 1.x
    the warps are counted in pairs, from 2.0 in the check's groups (:mod:`checks`)."""
    warps = warps_per_block(arch, block_size)
    if arch.register_allocation == "block":
        return (REGISTERS_PER_BLOCK_TESLA_TEXT, warps, warps_in_pairs(arch, warps), arch.warp_size,
                arch.register_allocation_unit, registers_per_block_tesla(arch, warps, registers))
    per_warp = registers_per_warp(arch, registers)
    counted = register_check_warps(arch, warps)
    return (REGISTERS_PER_BLOCK_TEXT, warps, counted, per_warp, per_warp_unit(arch, registers),
            per_warp * counted)


def rounding_note(arch: ArchitectureLimits, warps: int) -> str:
    """The note on how the registers-per-block check counted a block's ``warps``: in pairs
    on 1.x, in the check's groups from 2.0 ('' where it counted them as they are)."""
    if arch.register_allocation == "block":
        paired = warps_in_pairs(arch, warps)
        return "" if paired == warps else TESLA_ROUNDED_TEXT % (
            warps, arch.warp_allocation_granularity)
    counted = register_check_warps(arch, warps)
    return "" if counted == warps else GROUPED_TEXT % (
        arch.register_check_warp_group, warps, counted)


def msg_registers_per_block(arch: ArchitectureLimits, block_size: int, registers: int) -> str:
    template, warps, counted, factor, unit, need = registers_per_block_numbers(
        arch, block_size, registers)
    limit = arch.max_registers_per_block
    return template % (counted, rounding_note(arch, warps), factor, registers, unit, need, limit,
                       arch.compute_capability, need - limit)


def zero_limit_names(zero: Mapping[str, bool]) -> str:
    return ", ".join(name for name in LIMIT_NAMES if zero[name])


def msg_no_block_fits(limits: Mapping[str, int]) -> str:
    return NO_BLOCK_FITS_TEXT % zero_limit_names({k: v == 0 for k, v in limits.items()})


def launch_error_message(arch: ArchitectureLimits, code: int, block_size: int, registers: int,
                         static: int, dynamic: int, opt_in: bool,
                         limits: Mapping[str, int] | None = None) -> str:
    """The LaunchError message of the check ``code`` (:mod:`checks`' CHECK_* codes) for one
    launch; ``limits`` (the blocks each limit allows) only for the last check."""
    if code == CHECK_NO_BLOCK_FITS:
        if limits is None:
            raise ValueError("the no-block-fits message needs the limits")
        return msg_no_block_fits(limits)
    launch = {"block_size": block_size, "registers": registers, "static": static,
              "dynamic": dynamic, "opt_in": bool(opt_in)}
    return _MESSAGES[code](arch, *(launch[name] for name in MESSAGE_INPUTS[code]))


#: What each check's message reads of the launch, after the architecture (the array path,
#: :mod:`gpumodeler.core.occupancy.array_messages`, passes its columns in the same order).
MESSAGE_INPUTS = {
    CHECK_BLOCK_SIZE: ("block_size",), CHECK_REGISTERS_PER_THREAD: ("registers",),
    CHECK_STATIC_SHARED: ("static",), CHECK_SHARED_PER_BLOCK: ("static", "dynamic", "opt_in"),
    CHECK_REGISTERS_PER_BLOCK: ("block_size", "registers")}
_MESSAGES: dict[int, Callable[..., str]] = {CHECK_BLOCK_SIZE: msg_block_size, CHECK_REGISTERS_PER_THREAD: msg_registers_per_thread,
             CHECK_STATIC_SHARED: msg_static_shared, CHECK_SHARED_PER_BLOCK: msg_shared_per_block,
             CHECK_REGISTERS_PER_BLOCK: msg_registers_per_block}
