"""What a launch's block shape does to the imported memory accesses, at prediction time.

The SASS import (:mod:`gpumodeler.core.kernel.sass.addresses`) writes each memory
instruction's address on its node as text, a polynomial in the thread index ``tid.x/y/z``,
the block dimensions ``ntid.*``, the block index and the kernel's parameters, and sets the
node's ``stride`` from the coefficient of ``tid.x`` alone: the lanes of a warp taken as 32
consecutive ``tid.x``. That holds for a block whose x dimension is a multiple of the warp
size. The threads of a block are numbered x fastest, then y, then z, and a warp is 32
consecutive thread numbers (NVIDIA CUDA C++ Programming Guide, "Thread Hierarchy" and
"SIMT Architecture": "the thread ID of a thread of index (x, y, z) is (x + y Dx + z Dx Dy)",
and "each warp contains threads of consecutive, increasing thread IDs"). A block narrower
than a warp (16×16) so puts two or more rows of ``tid.y`` in one warp.

:func:`shaped_graph` evaluates, for a launch's block ``(Dx, Dy, Dz)``, the addresses of every
warp of a block, lane by lane, with ``ntid.*`` the block's dimensions:

* global and local accesses: the mean 32-byte sectors per request over the block's warps
  (NVIDIA CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"), written as
  the node's stride in elements (``sectors × 32 / (warp size × width)``, which makes the
  bytes per warp of :func:`gpumodeler.core.kernel.warp_counts.access_bytes_per_warp` the
  sectors' bytes exactly: a warp of two 16-lane rows each on one word, ``A[ty·n + k]``,
  touches 2 sectors, stride 0.5 for 4-byte words, not the 4 sectors of one element per
  lane); every lane on one address is a ``broadcast``;
* shared accesses: the bank-conflict degree (:func:`warp_access.lanes_access`), the mean over
  the warps rounded up.

Choices, each tested: a kernel parameter or another value the listing does not give in a
thread-index coefficient (a row length ``n``) is taken as large and a multiple of 128 bytes
(rows then share no sector, as any row of 32 floats or more); a node whose stride, pattern or
conflict degree differs from what its address gives for a 1-D block was set by hand and is
kept; a block whose x dimension is a multiple of the warp size changes nothing, unless an
address holds a bit field of ``tid.x`` narrower than a warp (``tid.x%8``, ``tid.x/8``:
core.kernel.sass.bitfields), whose 128-byte lines only the lanes give (:func:`has_narrow_field`).
"""
from __future__ import annotations

from functools import lru_cache
import math
import re

from gpumodeler.core.kernel.item_table import columns
from gpumodeler.core.kernel.sass.addresses import (  # noqa: F401  (parse_address re-exported)
    SECTOR_BYTES, WARP, analyse_address, instruction_attributes, lanes_access, parse_address)
from gpumodeler.core.kernel.sass.bitfields import field
from gpumodeler.core.kernel.sass.warp_access import (  # noqa: F401  (re-exported)
    UNKNOWN_COEFFICIENT, aligned as _aligned, coefficients as _coefficients, lane_offsets,
    offsets as _offsets)
SECTOR = 32  # bytes (NVIDIA CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory")
_SPACES = ("global", "local", "shared")




def block_dims(block_size) -> tuple:
    """(Dx, Dy, Dz) of a block given as a thread count or 1-3 dimensions."""
    if isinstance(block_size, (tuple, list)):
        dims = tuple(int(d) for d in block_size) + (1, 1)
        return dims[:3]
    return (int(block_size), 1, 1)


def needs_shape(block_size, warp_size: int = WARP) -> bool:
    """Whether the block's shape changes any warp's lanes: its x dimension is not a multiple
    of the warp size (a warp then spans several rows, or the block is smaller than a warp)."""
    return block_dims(block_size)[0] % int(warp_size) != 0


def has_narrow_field(graph) -> bool:
    """Whether a memory access's address holds a bit field of ``tid.x`` narrower than a
    warp (``tid.x%8``, ``tid.x/8``): its lines depend on the lanes at every block shape."""
    (addresses,) = columns(graph.instructions, ("address",))  # (a stored graph makes no item)
    for addr in addresses:
        if addr and ("tid.x%" in addr or "tid.x/" in addr or "laneid%" in addr
                     or "laneid/" in addr):
            poly = parse_address(addr)
            if poly is not None and any(_narrow(s) for s in poly.symbols()):
                return True
    return False


def _narrow(symbol: str) -> bool:
    f = field(symbol)
    return f is not None and f[0] in ("tid.x", "laneid") and f[2] % WARP != 0


@lru_cache(maxsize=4096)
def _block_access(coefs: tuple, width: int, block: tuple, warp_size: int) -> tuple:
    """(mean sectors per request, mean bank-conflict degree, every warp a broadcast, mean
    128-byte lines per request) over the warps of a block; ``coefs``' constant taken modulo
    128 bytes (alignment is all it decides), so unrolled copies of one access share the
    work."""
    warps = -(-block[0] * block[1] * block[2] // warp_size)
    sectors = degrees = lines = 0
    uniform = True
    for w in range(warps):
        acc = lanes_access(_offsets(coefs, block, w, warp_size), width)
        sectors += acc.sectors
        degrees += acc.bank_conflict_degree
        lines += acc.lines
        uniform = uniform and acc.broadcast
    return sectors / warps, degrees / warps, uniform, lines / warps


@lru_cache(maxsize=4096)
def _block_sectors(coefs: tuple, width: int, block: tuple, warp_size: int) -> tuple:
    """(distinct 32-byte sectors the whole block touches, the sum over its warps of each
    warp's distinct sectors) for one access."""
    warps = -(-block[0] * block[1] * block[2] // warp_size)
    union: set = set()
    per_warp = 0
    for w in range(warps):
        own = {s for off in _offsets(coefs, block, w, warp_size)
               for s in range(off // SECTOR, (off + width - 1) // SECTOR + 1)}
        per_warp += len(own)
        union |= own
    return len(union), per_warp


def block_reuse(ins, block: tuple, warp_size: int = WARP,
                charged_bytes: float | None = None) -> float:
    """The share of a global access's sectors, summed over the warps of a block ``block``,
    that another warp of the same block also touches: 1 − (the block's distinct sectors ÷
    the sum of each warp's), e.g. 7/8 for a row every warp of a 16×16 block reads alike
    (``B[k·n + col]`` of a naive matrix multiply) and 0 for a copy. 0 when the address is not
    one the import followed as an affine function of the thread index.

    ``charged_bytes``: what each warp's access is charged (the node's bytes per warp). The
    share is then of that charge: 1 − the block's distinct sectors' bytes ÷ (its warps ×
    the charge), at least 0, so that the charge less the share is the block's distinct bytes
    per warp. A copy offset by a few words (a stencil's ``in[i + 3]``) touches five sectors
    a warp, one shared with the next warp, where the charge is the four of an aligned
    request: the shared sector is not a saving on the four (without this the offset copy
    came out below a plain one)."""
    poly = parse_address(ins.address)
    if poly is None:
        return 0.0
    coefs = _coefficients(poly, block)
    if coefs is None:
        return 0.0
    union, total = _block_sectors(_aligned(coefs), int(ins.width_bytes),
                                  tuple(block), int(warp_size))
    if total == 0:
        return 0.0
    if charged_bytes is not None and charged_bytes > 0:   # the one rule, a group of one
        r = group_block_reuse([ins], block, warp_size, charged_bytes)
        return 0.0 if r is None else r
    return 1.0 - union / total


def group_block_reuse(members: list, block: tuple, warp_size: int, charged_bytes: float):
    """The near-repeat share of a group of loads of one array whose addresses differ only in
    their numeric offset (a stencil's neighbours, grouped by the import:
    :func:`gpumodeler.core.kernel.sass.neighbours.reuse_hits`), over the whole block: 1 −
    the distinct sectors the group's loads touch in the block, in bytes, ÷ (the block's
    warps × ``charged_bytes``, what the group is charged a warp after its neighbour reuse),
    at least 0. Taken for each member, it leaves the group the bytes of the block's union
    of footprints, however its sectors fall between the warps and the members (a conv's
    ``N[i − r + j]`` touches five sectors a warp, one shared with the next warp's).
    ``members``: the loads (nodes); None when an address is not affine in the block."""
    if charged_bytes <= 0:
        return None
    coefs = []
    for ins in members:
        poly = parse_address(ins.address)
        c = _coefficients(poly, block) if poly is not None else None
        if c is None:
            return None
        coefs.append(c)
    if len({c[:4] + c[5:] for c in coefs}) != 1 or len({int(i.width_bytes) for i in members}) != 1:
        return None
    shift = coefs[0][4] - coefs[0][4] % 128   # keep the first's alignment
    moved = tuple(c[:4] + (c[4] - shift,) + c[5:] for c in coefs)
    warps = -(-block[0] * block[1] * block[2] // int(warp_size))
    union = _group_sectors(moved, int(members[0].width_bytes), tuple(block), int(warp_size))
    return max(0.0, 1.0 - union * SECTOR / (warps * float(charged_bytes)))


@lru_cache(maxsize=4096)
def _group_sectors(coefs: tuple, width: int, block: tuple, warp_size: int) -> int:
    """The distinct 32-byte sectors a block touches over the accesses ``coefs`` (one
    :func:`_coefficients` tuple each; a sweep's launches of one block share the count)."""
    warps = -(-block[0] * block[1] * block[2] // warp_size)
    union: set = set()
    for c in coefs:
        for w in range(warps):
            union |= {sec for off in _offsets(c, block, w, warp_size)
                      for sec in range(off // SECTOR, (off + width - 1) // SECTOR + 1)}
    return len(union)


def shaped_instruction(ins, block: tuple, warp_size: int = WARP) -> dict:
    """The attributes of memory instruction ``ins`` for a block ``block`` ({} when nothing
    changes: not a global/local/shared access with an affine address, or set by hand)."""
    if ins.unit != "ldst" or ins.space not in _SPACES:
        return {}
    poly = parse_address(ins.address)
    if poly is None:
        return {}
    imported = instruction_attributes(analyse_address(poly, ins.space), ins.width_bytes)
    if "not affine" in imported["address"]:
        return {}
    if (float(imported.get("stride", 1.0)) != float(ins.stride)
            or imported.get("pattern", "strided") != ins.pattern
            or imported.get("bank_conflict_degree", 1) != ins.bank_conflict_degree):
        return {}  # set by hand: the user's value stands
    coefs = _coefficients(poly, block)
    if coefs is None:
        return {}
    coefs = _aligned(coefs)
    mean_sectors, mean_degree, uniform, mean_lines = _block_access(coefs, ins.width_bytes,
                                                                   block, int(warp_size))
    if ins.space == "shared":
        degree = max(1, min(32, math.ceil(mean_degree - 1e-9)))
        return {} if degree == ins.bank_conflict_degree else {"bank_conflict_degree": degree}
    # the stride whose bytes (access_bytes_per_warp) are the sectors' bytes: below 1 when
    # the warp's lanes share words (fewer sectors than a coalesced request)
    pattern, stride = (("broadcast", 1.0) if uniform else
                       ("strided", mean_sectors * SECTOR_BYTES / (int(warp_size) * ins.width_bytes)))
    new: dict = ({} if (pattern, stride) == (ins.pattern, ins.stride) else
                 {"pattern": pattern, "stride": stride})
    # the lines, which a stride along x cannot give when the warp spans rows (a 16×16
    # block's warp reads two rows: two lines where its four sectors along x would be one,
    # though the stride is the coalesced one); whole lines, rounded up where the block's
    # warps differ
    from gpumodeler.core.kernel.warp_counts import lines_touched
    lines = float(max(1, math.ceil(mean_lines - 1e-9)))
    if lines != lines_touched(ins.width_bytes, stride, pattern, int(warp_size)):
        new["lines_per_request"] = lines
    return new


def shaped_graph(graph, block_size, warp_size: int = WARP):
    """(graph, [note]): ``graph`` with its memory accesses evaluated for ``block_size``
    (the same graph, untouched, when the block's x dimension is a multiple of the warp
    size and no address holds a field narrower than a warp, or nothing changes; else a
    copy). A note per changed instruction says what."""
    if not needs_shape(block_size, warp_size) and not has_narrow_field(graph):
        return graph, []
    block = block_dims(block_size)
    changes = {}
    for nid, ins in graph.instructions.items():
        new = shaped_instruction(ins, block, warp_size)
        if new:
            changes[nid] = new
    if not changes:
        return graph, []
    shaped = graph.copy()
    notes = []
    shape = "×".join(str(d) for d in block)
    for nid, new in changes.items():
        ins = shaped.instructions[nid]
        shaped.instructions[nid] = _replaced(ins, new)
        if "bank_conflict_degree" in new:
            notes.append(f"{nid} ({ins.opcode}): block {shape}: bank conflict degree "
                         f"{ins.bank_conflict_degree} -> {new['bank_conflict_degree']}")
        else:
            before = _sectors(ins)
            after = _sectors(shaped.instructions[nid])
            lines = (f", {new['lines_per_request']:g} lines" if "lines_per_request" in new
                     else "")
            notes.append(f"{nid} ({ins.opcode}): block {shape}: {before:g} -> {after:g} "
                         f"sectors per request{lines}")
    return shaped, notes


def _replaced(ins, new: dict):
    from dataclasses import replace
    return replace(ins, **new)


def _sectors(ins) -> float:
    from gpumodeler.core.kernel.warp_counts import access_cost
    cost = access_cost(ins)
    return cost["sectors_per_request"] if cost else 0.0


# -- reuse across the trips of a loop -------------------------------------------------------

_TRIP_STEP = re.compile(r"advances (-?\d+) B per trip of (\S+?)(?:;|$)")


def trip_step_text(step: int, loop: str) -> str:
    """The note an address carries for its step per trip of ``loop`` (:func:`trip_steps`),
    which :func:`trip_step_of` reads back at a launch."""
    return f"advances {step} B per trip of {loop}"


@lru_cache(maxsize=65536)
def trip_step_of(address: str) -> tuple | None:
    """``(bytes, loop id)`` from an address's :func:`trip_step_text` note; None without one.
    (Cached as :func:`parse_address` is: every launch of a sweep reads the same texts.)"""
    m = _TRIP_STEP.search(address or "")
    return (int(m.group(1)), m.group(2)) if m else None


def trip_reuse(ins, block: tuple, warp_size: int = WARP) -> float:
    """The share of a global load's sectors, per trip of its loop, that the trips before it
    touched (the steady state of a loop of many trips): a load whose address advances by a
    fixed step each trip (:func:`gpumodeler.core.kernel.sass.addresses.trip_steps`, the
    ``advances … B per trip`` note of its address) re-reads what is left of the sectors it
    read one, two, … trips ago. 1 − 1/32 for a warp's contiguous 128 bytes moving 4 bytes a
    trip (a stencil's neighbours in a rolled loop), 7/8 for a word every lane reads alike
    moving 4 bytes (``A[row·n + k]`` over ``k``), 0 when a trip moves a line or more. The
    first warp of the block is evaluated lane by lane over 33 trips; 0 when the address is
    not an affine function of the thread index or has no step."""
    found = trip_step_of(ins.address)
    poly = parse_address(ins.address)
    if found is None or poly is None:
        return 0.0
    coefs = _coefficients(poly, block)
    if coefs is None:
        return 0.0
    return _trip_reuse(_aligned(coefs), int(ins.width_bytes), tuple(block),
                       int(warp_size), found[0])


_TRIPS = 33  # trips evaluated: four sectors' worth of a 4-byte step, the slowest that reuses


@lru_cache(maxsize=4096)
def _trip_reuse(coefs: tuple, width: int, block: tuple, warp_size: int, step: int) -> float:
    offsets = _offsets(coefs, block, 0, warp_size)

    def sectors(shift: int) -> set:
        return {s for off in offsets
                for s in range((off + shift) // SECTOR, (off + shift + width - 1) // SECTOR + 1)}

    first = sectors(0)
    if not first:
        return 0.0
    union = set(first)
    for t in range(1, _TRIPS):
        union |= sectors(t * step)
    fresh = (len(union) - len(first)) / (_TRIPS - 1)
    return max(0.0, 1.0 - fresh / len(first))
