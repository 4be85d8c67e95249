"""Theoretical occupancy of a CUDA kernel launch, by NVIDIA's rules.

Sources. The rules are those of the CUDA C++ Programming Guide (compute-capabilities appendix:
"Technical Specifications per Compute Capability", the per-architecture shared-memory
sections, and "Configuring L1/Shared Memory Balance"), of NVIDIA's CUDA Occupancy Calculator
spreadsheet (allocation units and granularities, "GPU Data" sheet) and of the runtime's
occupancy API (``cudaOccupancyMaxActiveBlocksPerMultiprocessor``). They replace the manual step
of Gajger 2017 (MSc thesis, §4.4.1 and Fig. 4.2), which fed the kernel's registers and shared
memory into the spreadsheet by hand. The per-architecture numbers live in
:mod:`gpumodeler.core.compute_capability`. The results are checked against NVIDIA's
``cuda_occupancy.h`` in ``tests/core/test_occupancy_oracle.py``.

Symbols (per SM unless stated): T threads per block; R registers per thread; S_s, S_d static
and dynamic shared memory per block (bytes); W_SM max resident warps; B_SM max resident
blocks; R_SM registers; g warp allocation granularity (SM sub-partitions: 4, or 2 on cc 6.0);
u shared-memory allocation unit (256 B, or 128 B from 8.0); S_r shared memory reserved per
block (1 KB from 8.0, else 0); C the shared-memory configuration (carveout) in use.

Rules.

1. Warps. A block occupies W_b = ceil(T / 32) warp slots: B_warps = floor(W_SM / W_b).
2. Registers are allocated per warp in units of 256: R_w = ceil(32 R / 256) * 256, so a block
   holds R_b = R_w * W_b (``allocated_registers_per_block``). Each of the g sub-partitions owns
   R_SM / g registers and a warp lives in one of them, so the register file holds
   W_R = floor(R_SM / g / R_w) * g warps and B_registers = floor(W_R / W_b) (unlimited if R = 0).
3. Shared memory is allocated in units of u: S_a = ceil((S_s + S_d + S_r) / u) * u
   (``allocated_shared_mem_per_block_bytes``), and B_shared_memory = floor(C / S_a)
   (unlimited if S_a = 0).
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
outside 1..1024; R > 255 (the programming guide's per-thread limit); S_s > 48 KB (static
allocations above 48 KB are not allowed: larger ones must be dynamic and opted in);
S_s + S_d above the per-block limit (48 KB, or the opt-in maximum with ``opt_in=True``:
96 KB on 7.0/7.2, 64 KB on 7.5, 163 KB on 8.0/8.7, 99 KB on 8.6/8.9/12.x, 227 KB on
9.0/10.x/11.0); R_w * ceil(W_b / 4) * 4 above the per-block register limit (warps are checked in
groups of 4 on every architecture: on GP100 too, so a launch that runs there runs on every
Pascal part); and, defensively, any other limit reaching 0. Non-integer or negative inputs
raise :class:`InvalidParameter`.

Where this differs from ``cuda_occupancy.h`` (CUDA 13.0), on purpose: the header accepts
256 registers per thread from 7.0 on, where the programming guide's limit is 255; and it does
not check that static shared memory stays within 48 KB. It also models block barriers (9.0
on) and "virtual resources" (10.0 on), which at the defaults (one barrier per block, no
virtual resources) never lower occupancy; we leave them out. Everything else agrees case by
case (``tests/core/test_occupancy_oracle.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Mapping

import numpy as np

from .compute_capability import KIB, ArchitectureLimits, architecture
from .errors import InvalidParameter, LaunchError

# A block limit that the launch does not impose (no registers, no shared memory). The runtime
# reports INT_MAX for these; so do we, so that limits compare and tie the same way.
UNLIMITED = 2**31 - 1

LIMIT_NAMES = ("warps", "registers", "shared_memory", "blocks")
# Register-per-block checks count warps in groups of this many on every architecture.
_BLOCK_REGISTER_CHECK_WARPS = 4


@dataclass(frozen=True)
class OccupancyResult:
    """Occupancy of one launch on one SM; see the module docstring for each formula."""

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


def _require_int(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
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
    if not isinstance(partitioned_global_caching, (bool, np.bool_)):
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
    return (f"static shared memory {static} B exceeds the {_kb(limit)} limit for static "
            f"allocations by {static - limit} B; larger allocations must be dynamic (opt-in)")


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
        return f"{msg}; cc {cc} has no opt-in above it"
    if total <= optin:
        return f"{msg}; cc {cc} allows up to {_kb(optin)} with the opt-in (opt_in=True)"
    return (f"{msg}; it is also over the {_kb(optin)} opt-in maximum of cc {cc} "
            f"by {total - optin} B")


def _msg_registers_per_block(arch: ArchitectureLimits, block_size: int, registers: int) -> str:
    warps = -(-block_size // arch.warp_size)
    per_warp = _registers_per_warp(arch, registers)
    counted = -(-warps // _BLOCK_REGISTER_CHECK_WARPS) * _BLOCK_REGISTER_CHECK_WARPS
    need = per_warp * counted
    limit = arch.max_registers_per_block
    grouped = "" if counted == warps else (
        f" (counted in groups of {_BLOCK_REGISTER_CHECK_WARPS} warps, {warps} -> {counted})")
    return (f"registers per block: {counted} warps{grouped} x {per_warp} registers per warp "
            f"({registers} per thread, allocated in units of {arch.register_allocation_unit}) "
            f"= {need} exceed the {limit}-register per-block limit of cc "
            f"{arch.compute_capability} by {need - limit}")


def _msg_no_block_fits(limits: Mapping[str, int]) -> str:
    zero = [name for name in LIMIT_NAMES if limits[name] == 0]
    return f"no block fits on an SM: the {', '.join(zero)} limit allows 0 blocks"


def _registers_per_warp(arch: ArchitectureLimits, registers: int) -> int:
    unit = arch.register_allocation_unit
    return -(-registers * arch.warp_size // unit) * unit


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
    block_size = _require_int("block_size", block_size)
    registers = _require_int("registers_per_thread", registers_per_thread)
    dynamic = _require_int("shared_mem_bytes", shared_mem_bytes)
    static = _require_int("static_shared_mem_bytes", static_shared_mem_bytes)
    if not isinstance(opt_in, (bool, np.bool_)):
        raise InvalidParameter(f"opt_in must be True or False, got {opt_in!r}", item="opt_in")
    preference = _preference_bytes(arch, carveout_percent, shared_mem_config_bytes)
    caching = _check_caching(arch, partitioned_global_caching)

    per_block_limit = (arch.shared_mem_per_block_optin_bytes if opt_in
                       else arch.shared_mem_per_block_bytes)
    if not 1 <= block_size <= arch.max_threads_per_block:
        raise LaunchError(_msg_block_size(arch, block_size), item="block_size")
    if registers > arch.max_registers_per_thread:
        raise LaunchError(_msg_registers_per_thread(arch, registers), item="registers_per_thread")
    if static > arch.shared_mem_per_block_bytes:
        raise LaunchError(_msg_static_shared(arch, static), item="static_shared_mem_bytes")
    if static + dynamic > per_block_limit:
        raise LaunchError(_msg_shared_per_block(arch, static, dynamic, bool(opt_in)),
                          item="shared_mem_bytes")

    warps = -(-block_size // arch.warp_size)
    per_warp = _registers_per_warp(arch, registers)
    counted = -(-warps // _BLOCK_REGISTER_CHECK_WARPS) * _BLOCK_REGISTER_CHECK_WARPS
    if per_warp * counted > arch.max_registers_per_block:
        raise LaunchError(_msg_registers_per_block(arch, block_size, registers),
                          item="registers_per_thread")

    # Rule 2, registers (may turn partitioned caching off), then rule 1, warps.
    g = arch.warp_allocation_granularity
    if per_warp == 0:
        by_registers = UNLIMITED
    else:
        warps_per_subpartition = arch.registers_per_sm // g // per_warp
        by_registers = 0
        if caching:
            by_registers = 2 * (warps_per_subpartition * (g // 2) // warps)
            caching = by_registers > 0
        if not caching:
            by_registers = warps_per_subpartition * g // warps
    if caching:
        by_warps = 2 * (arch.max_warps_per_sm // 2 // warps)
    else:
        by_warps = arch.max_warps_per_sm // warps

    # Rule 3, shared memory, in the configuration the driver will use.
    reserved = arch.reserved_shared_mem_per_block_bytes
    unit = arch.shared_mem_allocation_unit_bytes
    allocated = -(-(static + dynamic + reserved) // unit) * unit
    if preference >= allocated:
        config = preference
    elif arch.has_carveout:
        config = arch.config_at_least(allocated)
    else:
        config = arch.shared_mem_per_sm_bytes
    by_shared = config // allocated if allocated else UNLIMITED

    limits = {"warps": by_warps, "registers": by_registers, "shared_memory": by_shared,
              "blocks": arch.max_blocks_per_sm}
    active = min(limits.values())
    if active == 0:
        raise LaunchError(_msg_no_block_fits(limits))
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
        allocated_registers_per_block=per_warp * warps,
        allocated_shared_mem_per_block_bytes=allocated,
        reserved_shared_mem_per_block_bytes=reserved,
        shared_mem_per_block_limit_bytes=per_block_limit,
        shared_mem_config_bytes=config,
        min_shared_mem_config_bytes=min_config,
        partitioned_global_caching=caching,
    )


# Why a launch in a sweep cannot run: the scalar function's checks, in its order.
_OK, _BLOCK_SIZE, _REGISTERS_PER_THREAD, _STATIC_SHARED, _SHARED_PER_BLOCK, \
    _REGISTERS_PER_BLOCK, _NO_BLOCK_FITS = range(7)


@dataclass(frozen=True, eq=False)
class OccupancyArrays:
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


def _int_array(name: str, value) -> np.ndarray:
    a = np.asarray(value)
    if a.dtype.kind not in "iu":
        raise InvalidParameter(
            f"{name} must hold integers, got dtype {a.dtype} (convert with .astype(int) "
            f"after checking the values are whole)", item=name)
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise InvalidParameter(f"{name} holds values too large for int64", item=name)
    a = a.astype(np.int64, copy=False)
    negative = a < 0
    if negative.any():
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(negative)), a.shape))
        raise InvalidParameter(
            f"{name} must be >= 0; {int(negative.sum())} value(s) are negative, "
            f"first {int(a[first])} at index {first}", item=name)
    return a


def occupancy_array(cc, block_size, registers_per_thread, shared_mem_bytes=0, *,
                    static_shared_mem_bytes=0, opt_in: bool = False,
                    carveout_percent: int | None = None,
                    shared_mem_config_bytes: int | None = None,
                    partitioned_global_caching: bool = False) -> OccupancyArrays:
    """:func:`occupancy` over integer arrays that broadcast together (a sweep in one call).

    ``cc`` and the keyword options are scalars. Launches that cannot run do not raise: they
    are False in ``valid`` with the scalar function's LaunchError message in ``reasons``.
    Malformed input (non-integer dtype, a negative value) raises InvalidParameter.
    """
    arch = architecture(cc)
    inputs = [_int_array("block_size", block_size),
              _int_array("registers_per_thread", registers_per_thread),
              _int_array("shared_mem_bytes", shared_mem_bytes),
              _int_array("static_shared_mem_bytes", static_shared_mem_bytes)]
    if not isinstance(opt_in, (bool, np.bool_)):
        raise InvalidParameter(f"opt_in must be True or False, got {opt_in!r}", item="opt_in")
    preference = _preference_bytes(arch, carveout_percent, shared_mem_config_bytes)
    caching = _check_caching(arch, partitioned_global_caching)
    shape = np.broadcast_shapes(*(a.shape for a in inputs))
    bs, regs, dyn, st = (np.broadcast_to(a, shape).ravel() for a in inputs)
    n = bs.size

    per_block_limit = (arch.shared_mem_per_block_optin_bytes if opt_in
                       else arch.shared_mem_per_block_bytes)
    warps = (bs + arch.warp_size - 1) // arch.warp_size
    unit_r = arch.register_allocation_unit
    per_warp = (regs * arch.warp_size + unit_r - 1) // unit_r * unit_r
    group = _BLOCK_REGISTER_CHECK_WARPS
    counted = (warps + group - 1) // group * group

    # The launch checks, last first, so that the first failing check wins.
    failure = np.zeros(n, dtype=np.int8)
    failure[per_warp * counted > arch.max_registers_per_block] = _REGISTERS_PER_BLOCK
    failure[st + dyn > per_block_limit] = _SHARED_PER_BLOCK
    failure[st > arch.shared_mem_per_block_bytes] = _STATIC_SHARED
    failure[regs > arch.max_registers_per_thread] = _REGISTERS_PER_THREAD
    failure[(bs < 1) | (bs > arch.max_threads_per_block)] = _BLOCK_SIZE

    # Rules 1-2 (see the scalar function): registers first, since they may turn caching off.
    w = np.maximum(warps, 1)
    g = arch.warp_allocation_granularity
    warps_per_subpartition = arch.registers_per_sm // g // np.maximum(per_warp, 1)
    no_registers = per_warp == 0
    if caching:
        halved = 2 * (warps_per_subpartition * (g // 2) // w)
        cached = (halved > 0) | no_registers
        by_registers = np.where(cached, halved, warps_per_subpartition * g // w)
        by_warps = np.where(cached, 2 * (arch.max_warps_per_sm // 2 // w),
                            arch.max_warps_per_sm // w)
    else:
        cached = np.zeros(n, dtype=bool)
        by_registers = warps_per_subpartition * g // w
        by_warps = arch.max_warps_per_sm // w
    by_registers = np.where(no_registers, UNLIMITED, by_registers)

    # Rule 3 in the configuration the driver will use.
    unit_s = arch.shared_mem_allocation_unit_bytes
    allocated = (st + dyn + arch.reserved_shared_mem_per_block_bytes + unit_s - 1) // unit_s * unit_s
    configs = np.asarray(arch.shared_mem_configs_bytes, dtype=np.int64)
    if arch.has_carveout:
        smallest = configs[np.minimum(np.searchsorted(configs, allocated), len(configs) - 1)]
    else:
        smallest = np.int64(arch.shared_mem_per_sm_bytes)
    config = np.where(preference >= allocated, preference, smallest)
    no_shared = allocated == 0
    by_shared = np.where(no_shared, UNLIMITED, config // np.maximum(allocated, 1))
    by_blocks = np.full(n, arch.max_blocks_per_sm, dtype=np.int64)

    limits = {"warps": by_warps, "registers": by_registers, "shared_memory": by_shared,
              "blocks": by_blocks}
    active = np.minimum(np.minimum(by_warps, by_registers), np.minimum(by_shared, by_blocks))
    failure[(active == 0) & (failure == _OK)] = _NO_BLOCK_FITS
    valid = failure == _OK
    active = np.where(valid, active, 0)

    min_config = config.copy()
    for c in configs[::-1]:
        keeps = (c >= allocated) & (no_shared | (c // np.maximum(allocated, 1) >= active))
        min_config = np.where(keeps, c, min_config)

    def out(a):
        return a.reshape(shape)

    active_warps = active * warps
    return OccupancyArrays(
        compute_capability=arch.compute_capability,
        block_size=out(bs), registers_per_thread=out(regs), shared_mem_bytes=out(dyn),
        static_shared_mem_bytes=out(st),
        valid=out(valid),
        warps_per_block=out(warps),
        active_blocks_per_sm=out(active),
        active_warps_per_sm=out(active_warps),
        active_threads_per_sm=out(active * bs),
        max_warps_per_sm=arch.max_warps_per_sm,
        occupancy=out(active_warps / arch.max_warps_per_sm),
        block_limits=MappingProxyType({k: out(v) for k, v in limits.items()}),
        limited_by=MappingProxyType({k: out((v == active) & valid) for k, v in limits.items()}),
        allocated_registers_per_block=out(per_warp * warps),
        allocated_shared_mem_per_block_bytes=out(allocated),
        reserved_shared_mem_per_block_bytes=arch.reserved_shared_mem_per_block_bytes,
        shared_mem_per_block_limit_bytes=per_block_limit,
        shared_mem_config_bytes=out(config),
        min_shared_mem_config_bytes=out(min_config),
        partitioned_global_caching=out(cached & valid),
        opt_in=bool(opt_in),
        failure=out(failure),
    )
