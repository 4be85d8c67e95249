"""Per-compute-capability limits that the occupancy rules need.

Every number here was written by hand from public NVIDIA documentation:

* CUDA C++ Programming Guide, "Compute Capabilities" appendix: the table "Technical
  Specifications per Compute Capability" (blocks, warps and threads per SM; registers per SM,
  per block and per thread; shared memory per SM and per block) of the 11.x/12.x guides for
  3.5 ... 9.0, and Tables 30 "Technical Specifications", 31 "Memory Information" and 32
  "Shared Memory Capacity" of the CUDA 13 guide (§5.1.3) for 7.5 ... 12.x.
* The same appendix's per-architecture sections for the L1/shared-memory splits: 3.x
  (16/32/48 KB of the 64 KB L1+shared for 3.5; 80/96/112 KB for 3.7, which has 64 KB more
  shared memory), 7.x (0, 8, 16, 32, 64, 96 KB; 7.5: 32 or 64 KB) and Table 32 for 8.0 on,
  and the 1 KB of shared memory per block that 8.x and later reserve for system use.
* The CUDA Occupancy Calculator spreadsheet's "GPU Data" sheet for the allocation units:
  registers are allocated per warp in units of 256, shared memory in units of 256 bytes (128
  from 8.x on), and warps are counted in groups of the "warp allocation granularity" (the SM
  sub-partitions sharing the register file: 4, but 2 on GP100, cc 6.0).
* The calculator's "Global Load Caching Mode" (L1+L2 "ca") option, offered for 5.2, 5.3, 6.1
  and 6.2: with partitioned global caching a block lives in one half of the SM.

Compute capabilities 1.0-3.0 (Tesla G80/GT200, Fermi, Kepler GK10x), each rule with its source:

* Limits per SM (max resident warps 24/24/32/32/48/48/64, blocks 8 on 1.x and 2.x and 16 on
  3.0, 32-bit registers 8 K on 1.0/1.1, 16 K on 1.2/1.3, 32 K on 2.x, 64 K on 3.0, shared memory
  16 KB on 1.x and 48 KB (of 64 KB L1+shared) on 2.x/3.0, threads per block 512 on 1.x and
  1024 after, registers per thread 128 on 1.x and 63 on 2.x/3.0): CUDA C Programming Guide 4.2
  (2012), Appendix F, Table F-2 "Technical Specifications per Compute Capability". The
  occupancy calculator spreadsheet's "GPU Data" sheet gives the same numbers except 124
  registers per thread on 1.x (a compiler limit); we keep the guide's 128, the launch limit.
* Registers on 1.x are allocated per block (the spreadsheet's "Register allocation
  granularity: block"): R_b = ceil(ceil(W_b, 2) * 32 * R, G_T) with the warp allocation
  granularity 2 and G_T = 256 on 1.0/1.1, 512 on 1.2/1.3; B_registers = floor(R_SM / R_b).
  Programming Guide 4.2 §4.2 "Hardware Multithreading" states this formula; the spreadsheet
  (CUDA 3.0 edition, "GPU Data" sheet) and ``cuda_occupancy.h`` of CUDA 7.0 (which still
  covers 1.x) use the same one. The warp limit stays B_warps = floor(W_SM / W_b) as in the
  guide and the spreadsheet; that header (written when CUDA no longer ran on 1.x) also rounds
  W_b up to pairs there, which we do not follow: for 3-warp blocks on 1.0 it would allow 6
  blocks where the guide and the spreadsheet allow 8.
* Registers on 2.x are allocated per warp in units of 64 (Programming Guide 4.2 §4.2; the
  spreadsheet's "Register allocation unit size" 64), and the register file is split between
  the 2 schedulers' sub-partitions (spreadsheet "Warp allocation granularity" 2), so a block's
  warps are counted in groups of 2 when checked against the 32 K per-block limit. NVIDIA's
  occupancy API for Fermi (``cuda_occupancy.h``, CUDA 7.0, ``cudaOccRegAllocationGranularity``)
  allocates 128-register units for 21, 22, 29, 30, 37, 38, 45 and 46 registers per thread;
  that is what the driver does on Fermi, so we follow it (the spreadsheet does not).
* Shared memory is allocated in units of 512 bytes on 1.x and 128 bytes on 2.x (spreadsheet
  "Shared Memory Allocation unit size"; Volkov 2016, §5.7, measured the 512-byte rounding on
  G80 and GT200), 256 on 3.x. 2.x splits its 64 KB into 16 or 48 KB of shared memory, 3.0
  into 16, 32 or 48 KB (Guide 4.2, Appendix F, "Compute Capability 2.x" and "Compute
  Capability 3.0", Architecture; ``cudaFuncCachePreferL1`` / ``PreferEqual`` /
  ``PreferShared``).
* On 1.x every block also holds a fixed 16 bytes of shared memory (Volkov 2016, §5.7, measured
  on G80 and GT200; the "+16" in ptxas' ``smem = N+16 bytes`` for sm_1x) which we count as
  reserved per block; the per-block limit is therefore 16 KB - 16 B = 16368 B. The 4 bytes
  per kernel argument Volkov also found are part of the kernel's static shared memory on 1.x
  (ptxas reports them in N): give N as the static size.
* Compute capability 3.0 (GK104/GK107) has the limits of 3.5 except 63 registers per thread.

Nothing here is copied from NVIDIA's ``cuda_occupancy.h``; that header is used by the tests
as an independent oracle only (``tools/occupancy_oracle``).
"""
from __future__ import annotations

from dataclasses import dataclass
import math
import re

from gpumodeler.core.errors import UnsupportedArchitecture

KIB = 1024


@dataclass(frozen=True)
class ArchitectureLimits:
    """The occupancy-relevant limits of one compute capability (all per SM unless named)."""

    compute_capability: str
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_block: int
    # The largest shared-memory configuration (the carveout with the least L1).
    shared_mem_per_sm_bytes: int
    # Every shared-memory size the SM can be configured to, ascending.
    shared_mem_configs_bytes: tuple[int, ...]
    # Largest static+dynamic shared memory per block after the opt-in (48 KB before 7.0).
    shared_mem_per_block_optin_bytes: int
    shared_mem_allocation_unit_bytes: int
    reserved_shared_mem_per_block_bytes: int
    # Warps are counted in groups of this many when registers are shared out (SM sub-partitions);
    # on 1.x (register_allocation "block") a block's warps are rounded up to a multiple of it.
    warp_allocation_granularity: int = 4
    supports_partitioned_global_caching: bool = False
    max_threads_per_block: int = 1024
    max_registers_per_thread: int = 255
    register_allocation_unit: int = 256
    # "warp" (2.0 on: registers per warp, warps counted in groups of warp_allocation_granularity
    # sub-partitions) or "block" (1.x: registers per block, warps rounded up to pairs first).
    register_allocation: str = "warp"
    # The per-block register check counts a block's warps in groups of this many (the SM
    # sub-partitions the hardware check assumes: 2 on Fermi, 4 from Kepler on, GP100 included).
    register_check_warp_group: int = 4
    # Registers per thread that the driver allocates in double units (Fermi only).
    double_unit_register_counts: frozenset[int] = frozenset()
    # Without the opt-in a block may use at most 48 KB, and static allocations never more.
    shared_mem_per_block_bytes: int = 48 * KIB
    warp_size: int = 32

    @property
    def major(self) -> int:
        return int(self.compute_capability.split(".")[0])

    @property
    def minor(self) -> int:
        return int(self.compute_capability.split(".")[1])

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size

    @property
    def has_carveout(self) -> bool:
        """Whether the L1/shared split is set by a carveout percentage (Volta, cc 7.0, on)."""
        return self.major >= 7

    def config_at_least(self, size_bytes: int) -> int | None:
        """The smallest shared-memory configuration holding ``size_bytes``, or None."""
        for config in self.shared_mem_configs_bytes:
            if config >= size_bytes:
                return config
        return None


def _arch(cc: str, warps: int, blocks: int, regs_sm_k: int, regs_block_k: int,
          configs_kib: tuple[int, ...], optin_kib: int, **extra) -> ArchitectureLimits:
    after_ampere = int(cc.split(".")[0]) >= 8
    return ArchitectureLimits(
        compute_capability=cc,
        max_warps_per_sm=warps,
        max_blocks_per_sm=blocks,
        registers_per_sm=regs_sm_k * KIB,
        max_registers_per_block=regs_block_k * KIB,
        shared_mem_per_sm_bytes=max(configs_kib) * KIB,
        shared_mem_configs_bytes=tuple(k * KIB for k in configs_kib),
        shared_mem_per_block_optin_bytes=optin_kib * KIB,
        shared_mem_allocation_unit_bytes=128 if after_ampere else 256,
        reserved_shared_mem_per_block_bytes=KIB if after_ampere else 0,
        **extra,
    )


_VOLTA_SPLITS = (0, 8, 16, 32, 64, 96)
_GA100_SPLITS = (0, 8, 16, 32, 64, 100, 132, 164)
_GA10X_SPLITS = (0, 8, 16, 32, 64, 100)
_GH100_SPLITS = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)

# Columns: cc, max warps/SM, max blocks/SM, registers/SM (K), max registers/block (K),
# shared-memory configurations (KiB), max shared memory per block with opt-in (KiB).
# Source: CUDA C++ Programming Guide, compute-capabilities appendix (see module docstring).
ARCHITECTURES: dict[str, ArchitectureLimits] = {a.compute_capability: a for a in (
    _arch("3.5", 64, 16, 64, 64, (16, 32, 48), 48),
    _arch("3.7", 64, 16, 128, 64, (80, 96, 112), 48),
    _arch("5.0", 64, 32, 64, 64, (64,), 48),
    _arch("5.2", 64, 32, 64, 64, (96,), 48, supports_partitioned_global_caching=True),
    _arch("5.3", 64, 32, 64, 32, (64,), 48, supports_partitioned_global_caching=True),
    _arch("6.0", 64, 32, 64, 64, (64,), 48, warp_allocation_granularity=2),
    _arch("6.1", 64, 32, 64, 64, (96,), 48, supports_partitioned_global_caching=True),
    _arch("6.2", 64, 32, 64, 32, (64,), 48, supports_partitioned_global_caching=True),
    _arch("7.0", 64, 32, 64, 64, _VOLTA_SPLITS, 96),
    _arch("7.2", 64, 32, 64, 64, _VOLTA_SPLITS, 96),
    _arch("7.5", 32, 16, 64, 64, (32, 64), 64),
    _arch("8.0", 64, 32, 64, 64, _GA100_SPLITS, 163),
    _arch("8.6", 48, 16, 64, 64, _GA10X_SPLITS, 99),
    _arch("8.7", 48, 16, 64, 64, _GA100_SPLITS, 163),
    _arch("8.9", 48, 24, 64, 64, _GA10X_SPLITS, 99),
    _arch("9.0", 64, 32, 64, 64, _GH100_SPLITS, 227),
    _arch("10.0", 64, 32, 64, 64, _GH100_SPLITS, 227),
    _arch("10.3", 64, 32, 64, 64, _GH100_SPLITS, 227),
    _arch("11.0", 48, 24, 64, 64, _GH100_SPLITS, 227),
    _arch("12.0", 48, 24, 64, 64, _GA10X_SPLITS, 99),
    _arch("12.1", 48, 24, 64, 64, _GA10X_SPLITS, 99),
)}



def _legacy(cc: str, warps: int, blocks: int, regs_sm_k: int, configs_kib: tuple[int, ...],
            **extra) -> ArchitectureLimits:
    """Compute capabilities 1.0-3.0 (module docstring): no opt-in, per-block limit = largest
    configuration up to 48 KB, per-block registers = the register file (2.x: 32 K)."""
    # On 1.x the hardware keeps 16 bytes of every block's 16 KB (module docstring), so the
    # most a kernel can ask for is 16 KB less that.
    per_block = min(max(configs_kib), 48) * KIB - extra.get("reserved_shared_mem_per_block_bytes", 0)
    return ArchitectureLimits(
        compute_capability=cc, max_warps_per_sm=warps, max_blocks_per_sm=blocks,
        registers_per_sm=regs_sm_k * KIB, max_registers_per_block=regs_sm_k * KIB,
        shared_mem_per_sm_bytes=max(configs_kib) * KIB,
        shared_mem_configs_bytes=tuple(k * KIB for k in configs_kib),
        shared_mem_per_block_optin_bytes=per_block, shared_mem_per_block_bytes=per_block,
        **extra)


_TESLA = dict(register_allocation="block", warp_allocation_granularity=2,
              max_threads_per_block=512, max_registers_per_thread=128,
              shared_mem_allocation_unit_bytes=512, reserved_shared_mem_per_block_bytes=16)
_FERMI = dict(register_allocation_unit=64, warp_allocation_granularity=2,
              register_check_warp_group=2, max_registers_per_thread=63,
              shared_mem_allocation_unit_bytes=128, reserved_shared_mem_per_block_bytes=0,
              double_unit_register_counts=frozenset({21, 22, 29, 30, 37, 38, 45, 46}))

# Columns: cc, max warps/SM, max blocks/SM, registers/SM (K), shared-memory configurations (KiB).
# Source: CUDA C Programming Guide 4.2, Appendix F (see module docstring).
LEGACY_ARCHITECTURES: dict[str, ArchitectureLimits] = {a.compute_capability: a for a in (
    _legacy("1.0", 24, 8, 8, (16,), register_allocation_unit=256, **_TESLA),
    _legacy("1.1", 24, 8, 8, (16,), register_allocation_unit=256, **_TESLA),
    _legacy("1.2", 32, 8, 16, (16,), register_allocation_unit=512, **_TESLA),
    _legacy("1.3", 32, 8, 16, (16,), register_allocation_unit=512, **_TESLA),
    _legacy("2.0", 48, 8, 32, (16, 48), **_FERMI),
    _legacy("2.1", 48, 8, 32, (16, 48), **_FERMI),
    _legacy("3.0", 64, 16, 64, (16, 32, 48), max_registers_per_thread=63,
            shared_mem_allocation_unit_bytes=256, reserved_shared_mem_per_block_bytes=0),
)}
ARCHITECTURES = {**LEGACY_ARCHITECTURES, **ARCHITECTURES}

SUPPORTED_COMPUTE_CAPABILITIES: tuple[str, ...] = tuple(ARCHITECTURES)

# Names that changed meaning: CUDA 13 renumbered Thor from sm_101 to sm_110.
_RENAMED = {"10.1": "11.0"}

_CC_TEXT = re.compile(r"^\s*(?:sm_?)?(\d{1,2})\.(\d)\s*$|^\s*sm_?(\d{1,2})(\d)\s*$", re.IGNORECASE)


def normalize_compute_capability(cc) -> str:
    """``"8.6"``, ``"sm_86"``, ``(8, 6)`` or ``8.6`` as the canonical text ``"8.6"``."""
    if isinstance(cc, tuple) and len(cc) == 2 and all(
            isinstance(p, int) and not isinstance(p, bool) for p in cc):
        return f"{cc[0]}.{cc[1]}"
    if isinstance(cc, float) and math.isfinite(cc):
        return f"{cc:.1f}"
    if isinstance(cc, str):
        m = _CC_TEXT.match(cc)
        if m:
            major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            return f"{int(major)}.{int(minor)}"
    raise UnsupportedArchitecture(
        f"compute capability {cc!r} is not of the form '8.6', 'sm_86' or (8, 6); "
        f"supported: {', '.join(SUPPORTED_COMPUTE_CAPABILITIES)}")


#: architectures already looked up by the text given (a batch names a few, many times)
_BY_TEXT: dict[str, ArchitectureLimits] = {}
_BY_TEXT_SIZE = 1024


def architecture(cc) -> ArchitectureLimits:
    """The limits of compute capability ``cc``; UnsupportedArchitecture lists the known ones."""
    if isinstance(cc, ArchitectureLimits):
        return cc
    if type(cc) is str:
        found = _BY_TEXT.get(cc)
        if found is not None:
            return found
    text = normalize_compute_capability(cc)
    try:
        found = ARCHITECTURES[text]
    except KeyError:
        hint = f" ({text} is called {_RENAMED[text]} since CUDA 13)" if text in _RENAMED else ""
        raise UnsupportedArchitecture(
            f"compute capability {text} is not supported{hint}; occupancy rules are documented "
            f"for: {', '.join(SUPPORTED_COMPUTE_CAPABILITIES)}") from None
    if type(cc) is str and len(_BY_TEXT) < _BY_TEXT_SIZE:
        _BY_TEXT[cc] = found
    return found
