"""A warp's lanes and what one warp-wide memory request costs: the byte offsets of the lanes
of a block's warp for an address polynomial (threads numbered x fastest: NVIDIA CUDA C++
Programming Guide, "Thread Hierarchy"), the 32-byte sectors and 128-byte lines they
touch (NVIDIA CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory") and the
shared-memory wavefronts, the cycles of the 32 banks it takes ("Shared Memory"), worked out
by enumerating the lanes' addresses. The address analysis
(:mod:`gpumodeler.core.kernel.sass.addresses`) and a launch's block shape
(:mod:`gpumodeler.core.kernel.sass.launch_shape`) give the addresses.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from gpumodeler.core.kernel.sass.bitfields import (NTID_X_WARPS, WARP_BLOCK, is_lane_varying,
                                                   thread_value)

WARP = 32
SECTOR_BYTES = 32
LINE_BYTES = 128
BANKS = 32
BANK_BYTES = 4
#: the value a thread-index coefficient's unknown symbol (a kernel parameter, an opaque
#: value) takes where lanes are enumerated: large, and a multiple of the 128-byte line (so
#: rows share no sector, as any row of 32 floats or more)
UNKNOWN_COEFFICIENT = 1 << 20


@dataclass(frozen=True)
class WarpAccess:
    """What one warp-wide request moves (32 lanes, consecutive tid.x)."""

    sectors: int  # 32-byte sectors per request
    lines: int  # 128-byte lines per request
    bytes: int  # sectors × 32
    #: shared memory: the wavefronts (cycles of the 32 banks) the request takes
    #: (:func:`lanes_access`): 1 for a conflict-free 32-bit access, n for an n-way conflict,
    #: at least 2 for a 64-bit and 4 for a 128-bit access whose lanes read distinct words
    bank_conflict_degree: int
    broadcast: bool


#: lanes of a warp served together by the shared-memory banks for an access wider than 4
#: bytes (64-bit and 128-bit accesses are processed per half-warp: :func:`lanes_access`)
HALF_WARP = 16


def warp_access(stride_bytes: int, width_bytes: int, offset: int = 0,
                warp_size: int = WARP) -> WarpAccess:
    """Sectors, lines and shared-memory wavefronts of a warp whose lane ``l`` accesses
    ``width_bytes`` at ``offset + l·stride_bytes`` (base assumed 128-byte aligned, as
    ``cudaMalloc`` returns; the numeric offset is kept); see :func:`lanes_access`."""
    stride_bytes = abs(int(stride_bytes))
    return lanes_access([offset + lane * stride_bytes for lane in range(warp_size)], width_bytes)


def shared_wavefronts(addresses, width_bytes: int) -> int:
    """The wavefronts (cycles of the shared-memory banks) one warp-wide shared-memory
    request takes, its lanes accessing ``width_bytes`` at the given byte addresses (in lane
    order).

    Each of the 32 banks serves one 32-bit word per clock, successive words in successive
    banks; lanes that read the same word share it (broadcast) — NVIDIA CUDA C++ Programming
    Guide, Compute Capability 5.x, "Shared Memory" (6.x, 7.x and later the same), and
    Volkov (2016), §2.6, Table 2.5 (Maxwell: 32 banks of 32 bits, 1 cycle per access). So a
    group of lanes served together takes as many cycles as the most distinct words any one
    bank holds for it, and a 32-bit access of a whole warp is that group: 1 without
    conflicts, n for an n-way conflict (Volkov §3.6 counts it so).

    Choice, for 64-bit and 128-bit accesses: the warp is served one half-warp (16 lanes) at
    a time, a word broadcast only within its half, and the request takes the sum of the two
    halves' cycles. A half-warp of 16-byte accesses moves 256 bytes, two cycles of the 128
    bytes the banks deliver, so an unconflicted ``LDS.128`` takes 4 wavefronts and an
    ``LDS.64`` 2. The Programming Guide states this half-warp rule for 64-bit accesses on
    compute capability 2.x ("64-Bit Accesses": a conflict only between threads of one
    half-warp) and gives no rule for 5.x and later; the half-warp split follows S. Gray's
    observation on Maxwell (maxas, "128 bit vector loads require at a minimum 2
    transactions", conflicts only within the lower or upper 16 threads) and Nsight Compute
    counts on compute capability 8.6 and 9.0 (NVIDIA Developer Forums, "Discrepancy in
    LDS.128 wavefronts": two 16-byte values, one per half-warp, take 2 wavefronts; 16 values
    32 bytes apart, each read by lanes l and l + 16, take 8). A row broadcast of a tile, one
    16-byte value per half-warp, then takes 2 wavefronts, not 1 and not 4 (tested)."""
    addresses = list(addresses)
    width = max(1, int(width_bytes))
    group = HALF_WARP if width > BANK_BYTES else max(1, len(addresses))
    total = 0
    for first in range(0, len(addresses), group):
        words = {w for start in addresses[first:first + group]
                 for w in range(start // BANK_BYTES, (start + width - 1) // BANK_BYTES + 1)}
        per_bank: dict = {}
        for w in words:
            per_bank[w % BANKS] = per_bank.get(w % BANKS, 0) + 1
        total += max(per_bank.values(), default=0)
    return max(1, min(BANKS, total))


def ideal_wavefronts(width_bytes: int) -> int:
    """The wavefronts a shared-memory request of ``width_bytes`` per lane takes when the 32
    lanes of a warp read distinct words without conflicts: their bytes over the 128 the 32
    banks of 4 bytes serve per clock (1, 2 and 4 for 32-, 64- and 128-bit accesses;
    :func:`shared_wavefronts`). A request's wavefronts over this are its conflict degree."""
    return max(1, math.ceil(WARP * max(1, int(width_bytes)) / (BANKS * BANK_BYTES)))


def lanes_access(addresses, width_bytes: int) -> WarpAccess:
    """:func:`warp_access` of a warp whose lanes access ``width_bytes`` at the given byte
    addresses (one per active lane, in lane order; a block narrower than a warp puts several
    rows of the thread index in one warp: core.kernel.sass.launch_shape): the 32-byte
    sectors and 128-byte lines it touches (NVIDIA CUDA C++ Best Practices Guide, "Coalesced
    Access to Global Memory") and its shared-memory wavefronts (:func:`shared_wavefronts`)."""
    addresses = list(addresses)
    width = max(1, int(width_bytes))
    sectors, lines = set(), set()
    for start in addresses:
        end = start + width - 1
        for s in range(start // SECTOR_BYTES, end // SECTOR_BYTES + 1):
            sectors.add(s)
        for s in range(start // LINE_BYTES, end // LINE_BYTES + 1):
            lines.add(s)
    return WarpAccess(sectors=len(sectors), lines=len(lines), bytes=len(sectors) * SECTOR_BYTES,
                      bank_conflict_degree=shared_wavefronts(addresses, width),
                      broadcast=len(set(addresses)) <= 1)


# -- the lanes of a block's warp --------------------------------------------------------

def coefficients(poly, block: tuple) -> tuple | None:
    """(tid.x, tid.y, tid.z, laneid coefficients in bytes, numeric constant, ((field,
    coefficient), …) for the bit fields of the thread index, ``tid.x%8``/``tid.x/8``:
    core.kernel.sass.bitfields) of ``poly`` with ``ntid.*`` the block's dimensions; None
    when a lane-varying term is not ``coefficient · symbol`` of one such symbol."""
    dims = {"ntid.x": block[0], "ntid.y": block[1], "ntid.z": block[2],
            NTID_X_WARPS: block[0] / WARP_BLOCK}
    coef = {"tid.x": 0, "tid.y": 0, "tid.z": 0, "laneid": 0}
    fields: dict = {}
    for mono, c in poly.terms.items():
        varying = [s for s in mono if is_lane_varying(s)]
        if not varying:
            continue
        if len(varying) > 1 or varying[0].startswith(("data@", "f@")):
            return None
        value = c
        for s in mono:
            if s != varying[0]:
                value *= dims.get(s, UNKNOWN_COEFFICIENT)
        if varying[0] in coef:
            coef[varying[0]] += value
        else:
            fields[varying[0]] = fields.get(varying[0], 0) + value
    return (coef["tid.x"], coef["tid.y"], coef["tid.z"], coef["laneid"], poly.terms.get((), 0),
            tuple(sorted(fields.items())))


def aligned(coefs: tuple) -> tuple:
    """``coefs`` with the numeric constant taken modulo 128 bytes (alignment is all it
    decides, so unrolled copies of one access share the cached work)."""
    return coefs[:4] + (coefs[4] % 128,) + coefs[5:]


def offsets(coefs: tuple, block: tuple, warp: int, warp_size: int) -> list:
    """The byte offsets of the lanes of warp ``warp`` of a block ``block`` (threads numbered
    x fastest, then y, then z; a warp is ``warp_size`` consecutive threads) for the
    :func:`coefficients` ``coefs``."""
    cx, cy, cz, cl, base, fields = coefs
    dx, dy, dz = block
    out = []
    for t in range(warp * warp_size, min(dx * dy * dz, (warp + 1) * warp_size)):
        x, y, z, lane = t % dx, (t // dx) % dy, t // (dx * dy), t % warp_size
        off = base + cx * x + cy * y + cz * z + cl * lane
        for name, c in fields:
            off += c * thread_value(name, x, y, z, lane)
        out.append(off)
    return out


def lane_offsets(poly, block: tuple, warp: int, warp_size: int = WARP) -> list | None:
    """The byte offsets (relative to the warp-uniform part of ``poly``, plus its numeric
    constant for alignment) of the lanes of warp ``warp`` of a block ``block``; None when
    the address has a lane-varying term other than ``coefficient · symbol`` of a thread symbol or a bit field of one."""
    coefs = coefficients(poly, block)
    return None if coefs is None else offsets(coefs, block, warp, warp_size)
