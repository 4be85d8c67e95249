"""Trip counts of grid-stride loops: ``for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
i += blockDim.x * gridDim.x)``, the count a kernel parameter and the launch's grid decide.

Each thread of such a loop makes its own number of trips, ``ceil((n − i0) / S)`` for its
first index ``i0`` and the grid's thread count ``S = blockDim.x · gridDim.x``; a warp makes
the trips of its first lane. Over the grid's warps (``W = S / 32`` of them where the block's
x dimension is a multiple of 32), the warps' first indices ``32·w`` and the steps ``j·S``
meet every multiple of 32 once, so the warps make ``ceil(n / 32)`` trips in all and

    loop = max(1, ceil(n / 32) · 32 / (block_x · grid_x))

trips on average, exactly. ``max(1, …)`` keeps the model's reading of the bounds check
before such a loop (``if (i >= n) return``: every thread of a full grid passes it, the rule
of :mod:`.guards`), under which each warp makes at least one trip; a parameter of 0 (the
import's default: not given) gives the one trip a loop variable has by default. Block
dimensions that are not a multiple of 32 make the formula the mean over the threads, not
the warps (warps that straddle rows).

What the import requires of the listing (the values are followed as the trip counts follow
them, :mod:`.block_values`, here with the grid's dimensions and the thread and block
indices as symbols too):

* the loop's back branch is taken on a compare (``ISETP``, or a 64-bit ``ISETP … .EX``
  pair over a ``size_t`` index, on Maxwell and Pascal ``IADD RZ.CC, a, -n`` then
  ``ISETP … .X``) of a value the loop computes and a kernel parameter
  (``c[0x0][…]`` at or after the architecture's first parameter, directly or through
  ``MOV``, ``LDC``, ``LDCU``, ``ULDC``); the loop goes on while the value is below the
  parameter; the loop has no other way out;
* the value compared is a register the loop carries from trip to trip (its counter) plus
  ``blockDim.x · gridDim.x``, for every block and grid (checked at many, with the low
  words of 64-bit adds followed: ``IADD3`` with a carry out, ``IMAD.WIDE.U32``); the
  counter is written on every trip (not predicated, not in an inner loop, not skipped),
  last to that value, and enters the loop as ``blockIdx.x · blockDim.x + threadIdx.x`` (checked
  the same way).

An unrolled grid-stride loop and its remainder (``for (; i + 3 * S < n; i += 4 * S)`` of
four copies, then ``for (; i < n; i += S)``), which the import groups as one unrolled loop
of the elements a thread takes, gets the same formula: the main loop's counter advances
``c`` strides a trip and is compared ``c − 1`` strides on, the remainder loop goes on with
the same register one stride a trip, and the counter enters the main loop as the thread's
index.

A block-stride loop, ``for (c = threadIdx.x; c < n; c += blockDim.x)``, is the same with the
block for the grid (the counter advances ``blockDim.x`` a trip and enters the loop as
``threadIdx.x``; the warps of a block meet every multiple of 32 below ``n`` once):
``max(1, ceil(n / 32) · 32 / block_x)`` (:func:`block_formula`).

A grid-stride loop of chunks, ``for (i = blockIdx.x · C + threadIdx.x; i < n; i += C ·
gridDim.x)`` (each thread taking ``i`` and ``i + blockDim.x``: a reduction's first pass),
``C`` a number or a multiple of 2 or more of ``blockDim.x``, makes a trip for each chunk
``m`` and warp ``w`` with ``C·m + 32·w < n`` (:func:`chunk_formula`; exact for ``block_x``
a multiple of 32 and at most ``C``).

The index is read as below 2^31 (the 32-bit values followed): a ``size_t`` loop over more
elements than that is counted as if it were. Left out: a loop of a stride that is a
multiple of the grid's on its own (``i += 2 * stride``) and counts along ``z``.

A grid-stride loop along y (``for (r = blockIdx.y · blockDim.y + threadIdx.y; r < rows;
r += blockDim.y · gridDim.y)``) is the same loop with the block's and grid's y dimensions;
a warp holds ``max(1, floor(32 / block_x))`` rows of its block and runs while its first
does (:func:`rows_formula`; exact where ``block_x`` divides 32 or is a multiple of it).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from gpumodeler.core.kernel.expressions import parse

from gpumodeler.core.kernel.sass.block_values import (
    REG, REG_MODS, U32, Follower, cbank_offset, dim, evaluate, is_predicate, op_node)
from gpumodeler.core.kernel.sass.parameters import named_parameter, parameter_base
from gpumodeler.core.kernel.sass.thread_tests import NEGATED, SETP_OPS
from gpumodeler.core.kernel.sass.trip_counts import (changed_in_loop, latch_compare,
                                                     runs_every_trip)

#: axes of the symbols followed here: the block's dimensions 0-2 (as :mod:`.block_values`),
#: the grid's 3-5, the thread index 6-8, the block index 9-11
_GRID_AXES = {"nctaid.x": 3, "nctaid.y": 4, "nctaid.z": 5}
_SPECIAL_AXES = {"SR_TID.X": 6, "SR_TID.Y": 7, "SR_TID.Z": 8,
                 "SR_CTAID.X": 9, "SR_CTAID.Y": 10, "SR_CTAID.Z": 11}
#: the axis of the first value a loop carries from trip to trip (its counter)
_CARRIED = 12
_MAX_CARRIED = 4
_SAMPLES = 64
_SEED = 20261129


def formula(parameter: str) -> str:
    """The trips of a grid-stride loop over ``parameter`` elements (the module's formula)."""
    return f"max(1, ceil({parameter} / 32) * 32 / (block_x * grid_x))"


def chunk_formula(parameter: str, chunk: str) -> str:
    """The trips of a grid-stride loop over ``parameter`` elements whose blocks each take a
    chunk of ``chunk`` elements a trip (the module rules): the pairs (chunk ``m``, warp
    ``w``) with ``chunk · m + 32 · w`` below ``parameter``, over the grid's warps."""
    n, c = parameter, chunk
    whole = f"floor({n} / ({c}))"
    pairs = (f"{whole} * block_x / 32 + min(block_x / 32, ceil(({n} - ({c}) * {whole}) / 32))")
    return parse(f"max(1, ({pairs}) / (grid_x * block_x / 32))").text


def rows_formula(parameter: str) -> str:
    """The trips of a grid-stride loop along y over ``parameter`` rows (the module rules):
    a warp holds ``r = max(1, floor(32 / block_x))`` rows of its block and makes the trips
    of its first."""
    r = "max(1, floor(32 / block_x))"
    return f"max(1, ceil({parameter} / {r}) * {r} / (block_y * grid_y))"


def block_formula(parameter: str) -> str:
    """The trips of a block-stride loop over ``parameter`` elements (the module's formula
    with the block's threads for the grid's)."""
    return f"max(1, ceil({parameter} / 32) * 32 / block_x)"


class _GridFollower(Follower):
    """A :class:`Follower` that also knows the grid's dimensions and the thread and block
    indices (``S2R``, ``S2UR``), follows the low words of 64-bit adds (``IADD3`` and
    ``LEA`` with a carry out, ``IMAD.WIDE.U32``: exact in the low 32 bits), and, inside
    ``loop``, reads a
    register the loop carries from trip to trip (written in the loop only after the reader)
    as a symbol: its value at the start of the trip (``carried``: register -> axis)."""

    loop = None

    def __init__(self, *args):
        super().__init__(*args)
        self.carried: dict = {}

    def register(self, reg: str, k: int, depth: int, entering=None):
        r = self.loop
        if r is not None and entering is None and r.header <= k <= r.latch:
            j = self.last_write(reg, k)
            if (j is None or j < r.header) and self.written_between(reg, k, r.latch):
                if reg not in self.carried:
                    self.carried[reg] = _CARRIED + len(self.carried)
                return dim(self.carried[reg])
        return super().register(reg, k, depth, entering)

    def instruction(self, j: int, depth: int):
        ins = self.ins[j]
        mnem, mods = ins.mnemonic, set(ins.modifiers)
        if ins.guard:
            return None
        if mnem in ("S2R", "S2UR") and len(ins.operands) >= 2:
            axis = _SPECIAL_AXES.get(ins.operands[1].strip())
            return None if axis is None else dim(axis)
        ops = [o.strip() for o in ins.operands]
        if mnem in ("IADD3", "UIADD3") and "X" not in mods and ops and \
                any(is_predicate(o) for o in ops[1:3]):
            # the low word of a 64-bit add: its carry-outs go to predicates
            values = [o for o in ops[1:] if not is_predicate(o)]
            got = [self.operand(o, j, depth) for o in values]
            return None if any(x is None for x in got) else op_node("add", *got)
        if mnem in ("LEA", "ULEA") and not mods & {"HI", "X"} and len(ops) >= 2 and \
                is_predicate(ops[1]):  # the low word of a 64-bit (a << s) + b
            values = [o for o in ops[1:] if not is_predicate(o)]
            got = [self.operand(o, j, depth) for o in values]
            return None if len(got) != 3 or any(x is None for x in got) else \
                op_node("add", op_node("shl", got[0], got[2]), got[1])
        if mnem in ("IMAD", "UIMAD") and mods >= {"WIDE", "U32"} and len(ops) == 4:
            got = [self.operand(o, j, depth) for o in ops[1:]]
            return None if any(x is None for x in got) else \
                op_node("add", op_node("mul", got[0], got[1]), got[2])
        return super().instruction(j, depth)


def _samples() -> tuple:
    """Blocks, grids and thread and block indices to check a value's form at."""
    rng = np.random.default_rng(_SEED)
    block = [rng.integers(1, 1025, _SAMPLES), rng.integers(1, 9, _SAMPLES),
             rng.integers(1, 5, _SAMPLES)]
    grid = [rng.integers(1, 2049, _SAMPLES), rng.integers(1, 9, _SAMPLES),
            rng.integers(1, 5, _SAMPLES)]
    tid = [rng.integers(0, b) for b in block]
    ctaid = [rng.integers(0, g) for g in grid]
    carried = [rng.integers(0, 2 ** 30, _SAMPLES) for _ in range(_MAX_CARRIED)]
    return tuple(np.asarray(a, dtype=np.int64)
                 for a in (*block, *grid, *tid, *ctaid, *carried))


def grid_stride_counts(f: Follower, groups: dict, arch_number: int | None,
                       dim_offsets: dict, names: dict | None = None, taken=()) -> dict:
    """``{loop variable: (formula, parameter variable, parameter offset)}`` of the loops
    of ``groups`` (variable -> ``[(loop index, copies)]``; a loop of its own only) that are
    grid-stride loops (the module rules). ``f`` gives the listing, its register index and
    loops; ``dim_offsets`` the constant-bank offsets of the block's and grid's dimensions
    (``{offset: "ntid.x"}``); ``names`` the parameters' names from the source and
    ``taken`` the graph's variables (:func:`named_parameter`)."""
    base = parameter_base(arch_number)
    if base is None or not groups:
        return {}
    axes = {off: ("xyz".index(name[-1]) if name.startswith("ntid.") else _GRID_AXES[name])
            for off, name in dim_offsets.items()}
    g = f.on_same_listing(axes, _GridFollower)
    out: dict = {}
    samples = None
    for var, members in groups.items():
        if samples is None:
            samples = _samples()
        offset, write = None, formula
        try:
            if len(members) == 1 and members[0][1] == 1:
                r = f.ranges[members[0][0]]
                found = _loop(g, r, base)
                if found is not None and _is_grid_stride(g, r, found, samples):
                    offset = found[2]
                elif found is not None and _is_grid_stride(g, r, found, samples, axis=1):
                    offset, write = found[2], rows_formula
                elif found is not None and _is_block_stride(g, r, found, samples):
                    offset, write = found[2], block_formula
                elif found is not None:
                    chunk = _chunked_grid_stride(g, r, found, samples)
                    if chunk is not None:
                        offset, write = found[2], partial(chunk_formula, chunk=chunk)
            elif len(members) == 2 and members[1][1] == 1:
                offset = _is_unrolled_grid_stride(g, f.ranges[members[0][0]],
                                                  f.ranges[members[1][0]], members[0][1],
                                                  base, samples)
        except (ValueError, OverflowError):
            continue
        if offset is not None:
            p = named_parameter(offset, names or {}, taken)
            out[var] = (write(p), p, offset)
    return out


def _advance(g: _GridFollower, r, found, samples) -> tuple | None:
    """``(counter, step, past)`` of loop ``r`` whose compared value ``found[0]`` is the one
    register it carries (its counter), written on every trip (not predicated, not in an
    inner loop, not skipped): at ``samples``, what a trip adds to it and how far the value
    compared lies past its value at the end of the trip (32-bit arrays); else None."""
    if len(g.carried) != 1:
        return None
    (reg, axis), = g.carried.items()
    writes = g.writes_between(reg, r.header, r.latch)
    if not writes or not all(runs_every_trip(g, r, w) for w in writes):
        return None
    at_end = g.instruction(writes[-1], 0)  # the counter at the end of a trip
    if at_end is None or len(g.carried) != 1:
        return None
    end = evaluate(at_end, samples)
    return reg, (end - samples[axis]) & U32, (evaluate(found[0], samples) - end) & U32


def _strides(g: _GridFollower, r, found, samples, block_only: bool = False,
             axis: int = 0) -> tuple | None:
    """``(counter, a, b)`` of loop ``r`` whose compared value ``found[0]`` is the counter
    it carries plus grid strides along ``axis`` (``block_only``: block strides,
    ``blockDim.x``): the counter advances ``a`` strides a trip and the value compared is
    ``b`` strides past it (the simple loop: 1 and 0), checked at ``samples``; else None."""
    got = _advance(g, r, found, samples)
    if got is None:
        return None
    reg, a, b = got
    # blockDim (* gridDim) along the axis
    stride = samples[axis] * (1 if block_only else samples[3 + axis])
    if np.any(a % stride) or np.any(b % stride):
        return None
    a, b = a // stride, b // stride
    if np.any(a != a[0]) or np.any(b != b[0]) or a[0] < 1:
        return None
    return reg, int(a[0]), int(b[0])


def _enters_as(g: _GridFollower, reg: str, r, samples, index) -> bool:
    """Whether ``reg`` enters loop ``r`` as ``index`` (an array at ``samples``)."""
    g.loop = None
    entry = g.register(reg, r.header, 0, entering=r)
    return entry is not None and np.array_equal(evaluate(entry, samples), index)


def _thread_index(samples, in_block: bool = False, axis: int = 0):
    """``blockIdx.x · blockDim.x + threadIdx.x`` at ``samples`` (``in_block``:
    ``threadIdx.x``; ``axis`` 1: along y)."""
    tid = samples[6 + axis]
    return tid if in_block else samples[9 + axis] * samples[axis] + tid


def _is_grid_stride(g: _GridFollower, r, found, samples, axis: int = 0) -> bool:
    """Whether loop ``r`` (``found``: its compare) is a grid-stride loop along ``axis`` (x,
    or y: ``for (r = blockIdx.y · blockDim.y + threadIdx.y; r < rows; r += blockDim.y ·
    gridDim.y)``): its counter advances one grid stride a trip, is compared after that,
    and enters the loop as the thread's index in the grid (the module rules)."""
    got = _strides(g, r, found, samples, axis=axis)
    return got is not None and got[1:] == (1, 0) and \
        _enters_as(g, got[0], r, samples, _thread_index(samples, axis=axis))


def _is_block_stride(g: _GridFollower, r, found, samples) -> bool:
    """Whether loop ``r`` (``found``: its compare) is a block-stride loop (``for (c =
    threadIdx.x; c < n; c += blockDim.x)``): its counter advances ``blockDim.x`` a trip,
    is compared after that, and enters the loop as the thread's index in the block."""
    got = _strides(g, r, found, samples, block_only=True)
    return got is not None and got[1:] == (1, 0) and \
        _enters_as(g, got[0], r, samples, _thread_index(samples, in_block=True))


def _chunked_grid_stride(g: _GridFollower, r, found, samples) -> str | None:
    """The chunk (``"512"``, ``"2 * block_x"``) of loop ``r`` (``found``: its compare) where
    it is a grid-stride loop whose blocks take a chunk of elements a trip: ``for (i =
    blockIdx.x · C + threadIdx.x; i < n; i += C · gridDim.x)``, each thread taking ``i``
    and ``i + blockDim.x`` (a reduction's first pass), ``C`` a number or a multiple of 2 or
    more of ``blockDim.x``: the counter advances ``C · gridDim.x`` a trip, is compared after
    that, and enters the loop as ``blockIdx.x · C + threadIdx.x``; else None."""
    got = _advance(g, r, found, samples)
    bx, gx = samples[0], samples[3]
    if got is None or np.any(got[2]) or np.any(got[1] % gx):
        return None
    reg, chunk = got[0], got[1] // gx
    if np.all(chunk == chunk[0]) and chunk[0] >= 32:
        text = str(int(chunk[0]))
    elif not np.any(chunk % bx) and np.all(chunk // bx == chunk[0] // bx[0]) and \
            chunk[0] // bx[0] >= 2:
        text = f"{int(chunk[0] // bx[0])} * block_x"
    else:
        return None
    return text if _enters_as(g, reg, r, samples, chunk * samples[9] + samples[6]) else None


def _is_unrolled_grid_stride(g: _GridFollower, main, unit, copies: int, base: int,
                             samples) -> int | None:
    """The parameter offset of an unrolled grid-stride loop of ``copies`` copies and its
    remainder (``for (; i + 3 * S < n; i += 4 * S)`` then ``for (; i < n; i += S)``): the
    main loop's counter advances ``copies`` strides a trip and is compared ``copies − 1``
    strides on, the remainder loop goes on with the same register one stride a trip, and
    the counter enters the main loop as the thread's index; else None."""
    if main.header > unit.header:
        return None
    found = _loop(g, unit, base)
    got = None if found is None else _strides(g, unit, found, samples)
    if found is None or got is None or got[1:] != (1, 0):
        return None
    reg, offset = got[0], found[2]
    found = _loop(g, main, base)
    got = None if found is None else _strides(g, main, found, samples)
    if found is None or got is None or found[2] != offset or \
            got != (reg, copies, copies - 1) or \
            g.written_between(reg, main.latch + 1, unit.header - 1):
        return None
    return offset if _enters_as(g, reg, main, samples, _thread_index(samples)) else None


def _loop(g: _GridFollower, r, base: int):
    """``(value, compare, parameter offset)`` of loop ``r`` where its one way out is a
    compare of a value the loop computes (``value``, a node, the loop's carried registers
    symbols in ``g.carried``) below a kernel parameter at instruction ``compare``; else
    None."""
    ins = g.ins
    found = latch_compare(g, r, ("ISETP",))
    if found is None:
        return None
    s, _, goes_on_when = found
    high = None
    if "EX" in ins[s].modifiers:  # the high words of a 64-bit compare: the low words before
        high = s
        ops = [o.strip() for o in ins[s].operands]
        chained = ops[-1] if len(ops) >= 6 else ""
        if not chained or chained.startswith("!") or not is_predicate(chained):
            return None
        s = g.last_write(chained, s)
        if s is None or s < r.header or ins[s].mnemonic != "ISETP" or ins[s].guard or \
                "EX" in ins[s].modifiers:
            return None
    ops = [o.strip() for o in ins[s].operands]
    if "X" in ins[s].modifiers:  # Maxwell's and Pascal's 64-bit compare: the high words,
        high = s                 # the low ones' borrow from IADD RZ.CC, a, -b before
        low = _borrow(g, r, s)
        if low is None or len(ops) != 5:
            return None
        ops = [ops[0], ops[1], *low, ops[4]]
    if len(ops) != 5 or ops[1] != "PT" or ops[4] != "PT":
        return None  # P, PT, a, b, PT: a compare combined with nothing
    cmp = next((SETP_OPS[m] for m in ins[s].modifiers if m in SETP_OPS), None)
    if cmp is None:
        return None
    found_in = changed_in_loop(g, r, ops, cmp if goes_on_when else NEGATED[cmp])
    if found_in is None or found_in[2] != "<":
        return None
    counter, pos, _ = found_in
    offset = _parameter(g, ops[3 - pos], s, base)
    if offset is None:
        return None
    if high is not None:  # the high words: the same parameter's
        bound = ins[high].operands[3 - pos].strip()
        if _parameter(g, bound, high, base) != offset + 4:
            return None
    g.loop, g.carried = r, {}
    value = g.register(counter, s, 0)
    return None if value is None else (value, s, offset)


def _borrow(g: Follower, r, s: int) -> list | None:
    """``[a, b]`` of the ``IADD RZ.CC, a, -b`` in loop ``r`` whose carry the compare ``s``
    reads (the last write of the carry before it), or None."""
    for j in range(s - 1, r.header - 1, -1):
        ins = g.ins[j]
        ops = [o.strip() for o in ins.operands]
        if ops and ops[0].endswith(".CC") or "CC" in ins.modifiers:
            if ins.mnemonic != "IADD" or ins.guard or ops[0] != "RZ.CC" or len(ops) != 3 or \
                    not ops[2].startswith("-"):
                return None
            return [ops[1], ops[2][1:]]
    return None


def _parameter(g: Follower, text: str, k: int, base: int) -> int | None:
    """The constant-bank offset of the kernel parameter operand ``text`` of instruction
    ``k`` reads (``c[0x0][0x170]``, or a register last set from one by ``MOV``, ``LDC`` or
    ``ULDC``, the high half of a 64-bit load too), or None."""
    t = REG_MODS.sub("", text.strip())
    off = cbank_offset(t)
    reg = REG.match(t)
    if off is None and reg and t not in ("RZ", "URZ"):
        j = g.last_write(t, k)
        if j is not None and not g.ins[j].guard:
            src = g.ins[j]
            mnem = src.mnemonic[1:] if src.mnemonic.startswith("U") else src.mnemonic
            srcs = [o.strip() for o in src.operands[g.n_dest(j):]]
            if mnem == "IMAD" and "MOV" in src.modifiers and len(srcs) == 3:
                srcs = srcs[2:]
            dest = REG.match(REG_MODS.sub("", src.operands[0].strip()))
            first = cbank_offset(srcs[0]) if srcs and mnem in ("MOV", "LDC", "LDCU", "IMAD") \
                else None
            if first is not None and dest:
                if dest.group(0) == t:
                    off = first
                elif "64" in src.modifiers and int(reg.group(2)) == int(dest.group(2)) + 1:
                    off = first + 4
    if off is None or off < base:
        return None
    return off


__all__ = ["block_formula", "chunk_formula", "formula", "grid_stride_counts"]
