"""Theoretical occupancy of a CUDA kernel launch, by NVIDIA's rules.

Sources. The rules are those of the CUDA C++ Programming Guide (compute-capabilities appendix:
"Technical Specifications per Compute Capability", the per-architecture shared-memory
sections, and "Configuring L1/Shared Memory Balance"), of NVIDIA's CUDA Occupancy Calculator
spreadsheet (allocation units and granularities, "GPU Data" sheet) and of the runtime's
occupancy API (``cudaOccupancyMaxActiveBlocksPerMultiprocessor``). They replace the manual step
of Gajger 2017 (MSc thesis, §4.4.1 and Fig. 4.2), which fed the kernel's registers and shared
memory into the spreadsheet by hand. The per-architecture numbers live in
:mod:`gpumodeler.core.occupancy.compute_capability`. The results are checked against NVIDIA's
``cuda_occupancy.h`` in ``tests/core/test_occupancy_oracle.py``.

Symbols (per SM unless stated): T threads per block; R registers per thread; S_s, S_d static
and dynamic shared memory per block (bytes); W_SM max resident warps; B_SM max resident
blocks; R_SM registers; g warp allocation granularity (SM sub-partitions: 4, or 2 on cc 6.0);
u shared-memory allocation unit (256 B, or 128 B from 8.0); S_r shared memory reserved per
block (1 KB from 8.0, 16 B on 1.x, else 0); C the shared-memory configuration (carveout) in use.

Rules.

1. Warps. A block occupies W_b = ceil(T / 32) warp slots: B_warps = floor(W_SM / W_b).
2. Registers are allocated per warp in units of 256: R_w = ceil(32 R / 256) * 256, so a block
   holds R_b = R_w * W_b (``allocated_registers_per_block``). Each of the g sub-partitions owns
   R_SM / g registers and a warp lives in one of them, so the register file holds
   W_R = floor(R_SM / g / R_w) * g warps and B_registers = floor(W_R / W_b) (unlimited if R = 0).
   On 1.x registers go to blocks instead, R_b = ceil(ceil(W_b, 2) * 32 R, G_T), and
   B_registers = floor(R_SM / R_b); on 2.x g = 2 and the unit is 64 (128 for some register
   counts). Those rules and their sources are in
   :mod:`gpumodeler.core.occupancy.compute_capability`.
3. Shared memory is allocated in units of u (512 B on 1.x, 128 B on 2.x):
   S_a = ceil((S_s + S_d + S_r) / u) * u (``allocated_shared_mem_per_block_bytes``), and
   B_shared_memory = floor(C / S_a) (unlimited if S_a = 0).
4. Blocks: B_blocks = B_SM.
5. Active blocks B = min of the four (``limited_by`` names every limit equal to B); active
   warps = B * W_b, active threads = B * T, occupancy = B * W_b / W_SM.

Partitioned global caching (the calculator's "L1+L2 (ca)" load caching mode, cc 5.2, 5.3,
6.1, 6.2; off unless asked for): a block lives in one half of the SM, so
B_warps = 2 floor((W_SM / 2) / W_b) and B_registers = 2 floor(W_R / 2 / W_b). If that
register limit is 0 the driver turns caching off for the launch and rules 1-2 apply unchanged.

Carveout. On 7.0 and later the L1/shared split is a preference (``carveout_percent`` as for
``cudaFuncAttributePreferredSharedMemoryCarveout``: floor(p * S_max / 100) rounded up to the
next configuration); on 3.x a cache configuration (16/32/48 KB shared on 3.5); 5.x and 6.x
have a fixed size. ``shared_mem_config_bytes`` names a configuration directly. With neither,
the preference is the largest configuration: that is what the runtime's occupancy API assumes
for "no preference" (``cudaSharedmemCarveoutDefault`` / ``cudaFuncCachePreferNone``), and it
gives the highest occupancy any configuration can. If the preference cannot hold one block,
the driver overrides it: 7.0+ uses the smallest configuration >= S_a, 3.x the largest.
``shared_mem_config_bytes`` in the result is the configuration so used;
``min_shared_mem_config_bytes`` is the smallest one giving the same number of active blocks
(what a driver that keeps as much L1 as it can would pick; it does not change occupancy).

A launch that cannot run raises :class:`LaunchError`, checked in this order: block size
outside 1..1024 (512 on 1.x); R > 255 (the programming guide's per-thread limit; 128 on 1.x,
63 on 2.x and 3.0); S_s > 48 KB (16 KB - 16 B on 1.x; static
allocations above 48 KB are not allowed: larger ones must be dynamic and opted in);
S_s + S_d above the per-block limit (48 KB, or the opt-in maximum with ``opt_in=True``:
96 KB on 7.0/7.2, 64 KB on 7.5, 163 KB on 8.0/8.7, 99 KB on 8.6/8.9/12.x, 227 KB on
9.0/10.x/11.0); R_w * ceil(W_b / 4) * 4 above the per-block register limit (warps are checked in
groups of 4 from 3.0 on: on GP100 too, so a launch that runs there runs on every Pascal part;
in groups of 2 on 2.x, Fermi's two sub-partitions; R_b itself on 1.x); and, defensively, any
other limit reaching 0. Non-integer or negative inputs
raise :class:`InvalidParameter`.

Where this differs from ``cuda_occupancy.h`` (CUDA 13.0), on purpose: the header accepts
256 registers per thread from 7.0 on, where the programming guide's limit is 255; and it does
not check that static shared memory stays within 48 KB. It also models block barriers (9.0
on) and "virtual resources" (10.0 on), which at the defaults (one barrier per block, no
virtual resources) never lower occupancy; we leave them out. Everything else agrees case by
case (``tests/core/test_occupancy_oracle.py``).

Layout. This module holds the scalar :func:`occupancy`. The result type
(:class:`OccupancyResult`), the input checks and the rules themselves (the launch checks,
rules 1-3, written once over Python ints or numpy arrays, so that the vectorised path calls
the very same functions) are in :mod:`gpumodeler.core.occupancy.checks`, the LaunchError messages in
:mod:`gpumodeler.core.occupancy.messages` (one launch) and
:mod:`gpumodeler.core.occupancy.array_messages` (a column at a time); the vectorised path
(:func:`occupancy_array`, :class:`OccupancyArrays`) is in :mod:`gpumodeler.core.occupancy.arrays`.
All of them can still be imported from here.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from gpumodeler.core.occupancy.compute_capability import architecture
from gpumodeler.core.errors import InvalidParameter, LaunchError
from gpumodeler.core.occupancy.checks import (
    CHECK_ITEMS, CHECK_REGISTERS_PER_BLOCK, LIMIT_NAMES, UNLIMITED, OccupancyResult,
    allocated_shared_bytes, blocks_fitting, check_caching, shared_config, warp_register_limits, input_checks, is_bool, preference_bytes,
    register_check_warps, registers_per_block_tesla, registers_per_warp, require_int,
    warps_per_block)
from gpumodeler.core.occupancy.messages import launch_error_message, msg_no_block_fits

if TYPE_CHECKING:  # loaded when asked for (__getattr__ below)
    from gpumodeler.core.occupancy.arrays import OccupancyArrays, occupancy_array

__all__ = ["LIMIT_NAMES", "UNLIMITED", "OccupancyArrays", "OccupancyResult", "occupancy",
           "occupancy_array"]


def __getattr__(name: str):
    # the vectorised calculator (numpy) is loaded when asked for: one launch needs no numpy
    if name in ("OccupancyArrays", "occupancy_array"):
        from gpumodeler.core.occupancy import arrays
        return getattr(arrays, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def occupancy(cc, block_size: int, registers_per_thread: int, shared_mem_bytes: int = 0, *,
              static_shared_mem_bytes: int = 0, opt_in: bool = False,
              carveout_percent: int | None = None, shared_mem_config_bytes: int | None = None,
              partitioned_global_caching: bool = False) -> OccupancyResult:
    """Occupancy of one launch: ``block_size`` threads, ``registers_per_thread``, dynamic
    ``shared_mem_bytes`` and the kernel's ``static_shared_mem_bytes`` per block.

    ``opt_in`` is ``cudaFuncAttributeMaxDynamicSharedMemorySize`` set to the maximum;
    ``carveout_percent`` / ``shared_mem_config_bytes`` choose the L1/shared split (module
    docstring, "Carveout"). Raises LaunchError when the launch cannot run, InvalidParameter
    for malformed input, UnsupportedArchitecture for an unknown ``cc``.
    """
    arch = architecture(cc)
    block_size = require_int("block_size", block_size)
    registers = require_int("registers_per_thread", registers_per_thread)
    dynamic = require_int("shared_mem_bytes", shared_mem_bytes)
    static = require_int("static_shared_mem_bytes", static_shared_mem_bytes)
    if not is_bool(opt_in):
        raise InvalidParameter(f"opt_in must be True or False, got {opt_in!r}", item="opt_in")
    preference = preference_bytes(arch, carveout_percent, shared_mem_config_bytes)
    caching = check_caching(arch, partitioned_global_caching)

    per_block_limit = (arch.shared_mem_per_block_optin_bytes if opt_in
                       else arch.shared_mem_per_block_bytes)
    for code, failed in input_checks(arch, block_size, registers, static, dynamic,
                                     per_block_limit):
        if failed:
            raise LaunchError(launch_error_message(arch, code, block_size, registers, static,
                                                   dynamic, opt_in), item=CHECK_ITEMS[code])

    warps = warps_per_block(arch, block_size)
    if arch.register_allocation == "block":
        # Rule 2 on 1.x: registers per block, the whole register file shared out by blocks.
        allocated_registers = registers_per_block_tesla(arch, warps, registers)
        if allocated_registers > arch.max_registers_per_block:
            raise _registers_per_block_error(arch, block_size, registers)
        by_registers = blocks_fitting(arch.registers_per_sm, allocated_registers)
        by_warps = arch.max_warps_per_sm // warps
    else:
        by_registers, by_warps, caching, allocated_registers = _warp_registers(
            arch, block_size, warps, registers, caching)

    # Rule 3, shared memory, in the configuration the driver will use.
    reserved = arch.reserved_shared_mem_per_block_bytes
    allocated = allocated_shared_bytes(arch, static, dynamic)
    config = shared_config(arch, preference, allocated)
    by_shared = blocks_fitting(config, allocated)

    limits = {"warps": by_warps, "registers": by_registers, "shared_memory": by_shared,
              "blocks": arch.max_blocks_per_sm}
    active = min(limits.values())
    if active == 0:
        raise LaunchError(msg_no_block_fits(limits))
    min_config = next(c for c in arch.shared_mem_configs_bytes
                      if c >= allocated and (allocated == 0 or c // allocated >= active))
    return OccupancyResult(
        compute_capability=arch.compute_capability,
        block_size=block_size,
        registers_per_thread=registers,
        shared_mem_bytes=dynamic,
        static_shared_mem_bytes=static,
        warps_per_block=warps,
        active_blocks_per_sm=active,
        active_warps_per_sm=active * warps,
        active_threads_per_sm=active * block_size,
        max_warps_per_sm=arch.max_warps_per_sm,
        occupancy=active * warps / arch.max_warps_per_sm,
        block_limits=MappingProxyType(limits),
        limited_by=tuple(name for name in LIMIT_NAMES if limits[name] == active),
        allocated_registers_per_block=allocated_registers,
        allocated_shared_mem_per_block_bytes=allocated,
        reserved_shared_mem_per_block_bytes=reserved,
        shared_mem_per_block_limit_bytes=per_block_limit,
        shared_mem_config_bytes=config,
        min_shared_mem_config_bytes=min_config,
        partitioned_global_caching=caching,
    )


def _warp_registers(arch, block_size: int, warps: int, registers: int, caching: bool):
    """Rules 1-2 where registers are allocated per warp (2.0 on): (B_registers, B_warps,
    caching used, registers allocated per block); LaunchError over the per-block limit."""
    per_warp = registers_per_warp(arch, registers)
    if per_warp * register_check_warps(arch, warps) > arch.max_registers_per_block:
        raise _registers_per_block_error(arch, block_size, registers)

    # Rule 2, registers (may turn partitioned caching off), then rule 1, warps.
    by_registers, by_warps, caching = warp_register_limits(arch, per_warp, warps, caching,
                                                           per_warp == 0)
    return by_registers, by_warps, caching, per_warp * warps


def _registers_per_block_error(arch, block_size: int, registers: int) -> LaunchError:
    return LaunchError(launch_error_message(arch, CHECK_REGISTERS_PER_BLOCK, block_size, registers,
                                            0, 0, False),
                       item=CHECK_ITEMS[CHECK_REGISTERS_PER_BLOCK])
