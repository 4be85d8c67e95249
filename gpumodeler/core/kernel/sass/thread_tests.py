"""Guards on the thread index alone, decided by each launch's block shape (and guards on
the block's dimensions alone, ``if (blockDim.x >= 64)``, which run in every warp or none).

``if (threadIdx.x < RADIUS)`` (a stencil's halo loads), ``if (lane == 0)`` with
``lane = threadIdx.x % 32`` (a warp's partial sum), ``if (threadIdx.x == 0)`` in a 16×16
block: how many of a block's warps run the guarded code depends on the block's shape, which
is a launch value. The import (:mod:`gpumodeler.core.kernel.sass.guards`) writes such a
guard's condition as a **thread test**, ``value op number``: ``value`` the compared register
as the address analysis follows it (:mod:`gpumodeler.core.kernel.sass.addresses`: a
polynomial in ``tid.x/y/z``, ``laneid``, their bit fields ``tid.x%32``, ``tid.x/32``
(:mod:`~gpumodeler.core.kernel.sass.bitfields`), the block dimensions ``ntid.x/y/z`` and
their bit fields ``ntid.x%M``, ``ntid.x/M`` (:func:`.block_tests.block_compares`)),
``op`` one of ``< <= > >= == !=`` on the side that runs, ``number`` the compare's
immediate or a value of the block's dimensions alone (``threadIdx.x >= blockDim.x - 3``,
a right halo: ``tid.x >= ntid.x - 3``); tests that must all pass are joined by ``and``
(``tid.x < 12 and tid.y < 12``: a 2-D tile's inner threads). :func:`warp_share` evaluates
it for a block: the share of the block's warps in which at least one thread passes. A warp runs the code a branch guards when any of its
threads takes it (NVIDIA CUDA C++ Programming Guide, "SIMT Architecture": a divergent warp
executes each path taken, with the threads not on it disabled), so the share is how often a
warp runs it, the Guard's fraction (:mod:`~gpumodeler.core.kernel.warp_counts`).

Threads are numbered as the Programming Guide numbers them ("Thread Hierarchy": thread
``(x, y, z)`` of a ``(Dx, Dy, Dz)`` block is ``x + y·Dx + z·Dx·Dy``; warp ``w`` holds
threads ``32w`` to ``32w + 31``, "SIMT Architecture"). The choice: a test is written only
where it is exact in both of the compare's readings, signed and unsigned: every coefficient
of ``value`` non-negative (its values are then non-negative and, for the thread index, below
2^31) and the number in ``0 … 2^31 − 1``; a bound of the block's dimensions that may be
negative (``ntid.x - 3`` of a block of 2 threads) keeps the compare's reading, signed or
`` (unsigned)`` (a negative bound then reads as 2^32 less its size). A thread value less a
number ``k`` against a number (:func:`offset_thread_value`): a signed compare is the value
against the number plus ``k``; an unsigned one below a number ``h`` is the range ``value >=
k and value < h + k`` (nvcc's one compare for ``0 <= threadIdx.x - k < h``, a tile's inner
threads). Any other compare of the thread index stays a variable (docs/sass-import.md,
"Guards").
"""
from __future__ import annotations

from functools import lru_cache
import math
import operator
import re

import numpy as np

from gpumodeler.core.kernel.sass.addresses import Poly, parse_address
from gpumodeler.core.kernel.sass.bitfields import NTID_X_WARPS, THREAD_MAX, field

#: ISETP's comparison modifiers as the operators of a test, and each one's negation (the
#: side a guard runs on when it runs where the predicate is false)
SETP_OPS = {"LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "EQ": "==", "NE": "!="}
NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
#: an order compare read the other way round: ``a < b`` is ``b > a``
MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}
_DIMS = {"ntid.x": 0, "ntid.y": 1, "ntid.z": 2}
_TEST = re.compile(r"^(.+?) (<=|>=|==|!=|<|>) (.+?)( \(unsigned\))?$")
_LIMIT = 2 ** 31


#: a bit field of a block dimension, ``ntid.x%4`` (``blockDim.x % 4``) or ``ntid.x/4``
#: (``blockDim.x / 4``, M a power of two; ``ntid.x/32`` is NTID_X_WARPS)
_BLOCK_FIELD = re.compile(r"^ntid\.([xyz])([%/])(\d+)$")


def _thread_symbol(symbol: str) -> bool:
    return symbol in THREAD_MAX or field(symbol) is not None


def _block_symbol(symbol: str) -> bool:
    """A block dimension or a bit field of one (the same in every thread of a block)."""
    return symbol in _DIMS or symbol == NTID_X_WARPS or _BLOCK_FIELD.match(symbol) is not None


def is_thread_value(poly: Poly | None) -> bool:
    """Whether ``poly`` is a value a launch's block decides for every thread: its symbols
    thread indices, their fields or block dimensions, at least one symbol, and every
    coefficient non-negative. A value of the block dimensions alone (``blockDim.x`` in
    ``if (blockDim.x >= 64)``) is one too: the same in every thread, so a test of it runs
    in every warp of the block or in none."""
    if poly is None or not poly.terms:
        return False
    symbol = False
    for mono, coef in poly.terms.items():
        if coef < 0:
            return False
        for s in mono:
            if not (_thread_symbol(s) or _block_symbol(s)):
                return False
            symbol = True
    return symbol


def _is_block_bound(poly: Poly | None) -> bool:
    """Whether ``poly`` is a number or a value of the block dimensions alone
    (``ntid.x - 3``): what a launch's block decides for all of its threads alike."""
    return poly is not None and all(_block_symbol(s) for mono in poly.terms for s in mono)


def offset_thread_value(poly: Poly | None) -> tuple | None:
    """``(value, k)`` where ``poly`` is a thread value (:func:`is_thread_value`) less a
    positive number ``k`` (``threadIdx.x - 2``: a tile's halo offset), else None."""
    if poly is None:
        return None
    c = poly.terms.get((), 0)
    if c >= 0:
        return None
    rest = Poly({m: v for m, v in poly.terms.items() if m})
    return (rest, -c) if is_thread_value(rest) else None


def _offset_test(poly: Poly, op: str, bound, unsigned: bool) -> str | None:
    """The thread test of ``value − k op number`` (:func:`offset_thread_value`): a signed
    compare is ``value op number + k``; an unsigned one below a number, ``value − k <u
    h``, is the range ``value >= k and value < h + k`` (below ``k`` the difference wraps to
    2^32 less a little, above every ``h``: nvcc's one compare for ``0 <= t − k < h``); an
    unsigned compare above a number (its complement, two ranges) is None."""
    found = offset_thread_value(poly)
    number = (Poly.const(bound) if isinstance(bound, int) else bound)
    number = None if number is None else number.constant()
    if found is None or number is None or not 0 <= number < _LIMIT:
        return None
    value, k = found
    if not unsigned:
        return thread_test(value, op, number + k)
    if op not in ("<", "<="):
        return None
    high = number + (1 if op == "<=" else 0)
    if high + k >= _LIMIT:
        return None
    low_test, high_test = thread_test(value, ">=", k), thread_test(value, "<", high + k)
    return None if low_test is None or high_test is None else conjunction(low_test, high_test)


def thread_test(poly: Poly, op: str, bound, unsigned: bool = False) -> str | None:
    """The thread test ``poly op bound`` (``op`` the side that runs; ``bound`` a number or a
    polynomial of the block dimensions, ``ntid.x - 3``; ``unsigned``: the compare reads its
    operands as unsigned), or None where it would not be exact (the module's choice).
    Written one way for one condition: ``<= b`` as ``< b + 1``, ``> b`` as ``>= b + 1`` (so
    ``tid.x <= 31`` and ``tid.x < 32`` share a variable), except where an unsigned bound may
    wrap (``ntid.x - 3``: −1 is 2^32 − 1, and one more is 0). A bound of the block dimensions
    with a negative number in it may be negative at a launch, where the compare's two
    readings differ: such a test keeps the reading, `` (unsigned)``."""
    bound = Poly.const(bound) if isinstance(bound, int) else bound
    if op in COMPARE and not is_thread_value(poly) and offset_thread_value(poly) is not None:
        return _offset_test(poly, op, bound, unsigned)
    if op not in COMPARE or not is_thread_value(poly) or not _is_block_bound(bound):
        return None
    number = bound.constant()
    may_wrap = unsigned and any(c < 0 for c in bound.terms.values())  # 2^32 - 1 + 1 is 0
    if op in ("<=", ">") and not may_wrap and (number is None or number < _LIMIT - 1):
        op, bound = ("<" if op == "<=" else ">="), bound + Poly.const(1)
        number = bound.constant()
    if number is not None:
        return f"{poly.text()} {op} {number}" if 0 <= number < _LIMIT else None
    if any(c < 0 for c in bound.terms.values()) and op not in ("==", "!="):
        return f"{poly.text()} {op} {_bound_text(bound)}{' (unsigned)' if unsigned else ''}"
    return f"{poly.text()} {op} {_bound_text(bound)}"


def _bound_text(bound: Poly) -> str:
    """A bound as one reads it, its number last: ``ntid.x - 3``."""
    number = bound.terms.get((), 0)
    rest = Poly({m: c for m, c in bound.terms.items() if m}).text()
    return rest if not number else f"{rest} {'-' if number < 0 else '+'} {abs(number)}"


#: what joins the tests of a conjunction (``tid.x < 12 and tid.y < 12``)
AND = " and "


def conjunction(*tests: str) -> str:
    """One test of several that must all pass, written one way (each part once, sorted)."""
    return AND.join(sorted({p for t in tests for p in t.split(AND)}))


@lru_cache(maxsize=1024)
def parse_test(text: str) -> tuple | None:
    """``((poly, op, bound polynomial, unsigned), ...)``, a part per test of a conjunction,
    of a thread test's text; None when it is not one."""
    parts = tuple(_parse_one(p) for p in (text or "").split(AND))
    return None if any(p is None for p in parts) else parts


def _parse_one(text: str) -> tuple | None:
    m = _TEST.match((text or "").strip())
    if m is None:
        return None
    poly, bound = parse_address(m.group(1)), parse_address(m.group(3))
    if not is_thread_value(poly) or not _is_block_bound(bound):
        return None
    number = bound.constant()  # type: ignore[union-attr]
    if number is not None and not (0 <= number < _LIMIT):
        return None
    return poly, m.group(2), bound, bool(m.group(4))


def _symbol_values(symbol: str, xyz: tuple, lane, block: tuple):
    if symbol in _DIMS:
        return block[_DIMS[symbol]]
    if symbol == NTID_X_WARPS:
        return block[0] // 32
    bits = _BLOCK_FIELD.match(symbol)
    if bits is not None:
        dim, m = block["xyz".index(bits.group(1))], int(bits.group(3))
        return dim % m if bits.group(2) == "%" else dim // m
    base = {"tid.x": xyz[0], "tid.y": xyz[1], "tid.z": xyz[2], "laneid": lane}
    if symbol in base:
        return base[symbol]
    parts = field(symbol)
    assert parts is not None  # is_thread_value checked it
    name, op, m = parts
    return base[name] % m if op == "%" else base[name] // m


def _value(poly: Poly, xyz: tuple, lane, dims: tuple, threads: int):
    value = np.zeros(threads, dtype=np.int64)
    for mono, coef in poly.terms.items():
        term = np.full(threads, coef, dtype=np.int64)
        for s in mono:
            term = term * _symbol_values(s, xyz, lane, dims)
        value += term
    return value


def test_holds(text: str, dims: tuple):
    """Whether the thread test ``text`` of the block's dimensions alone (``ntid.x%4 != 0``)
    holds for the blocks ``dims`` (three numbers or arrays, broadcast): a boolean array.
    ValueError for a text that is not a thread test or reads the thread index."""
    parsed = parse_test(text)
    if parsed is None or any(not _block_symbol(s) for poly, _, bound, _ in parsed
                             for p in (poly, bound) for m in p.terms for s in m):
        raise ValueError(f"not a test of the block's dimensions alone: {text!r}")
    block = tuple(np.asarray(d, dtype=np.int64) for d in dims)
    shape = np.broadcast(*block).shape
    out = np.ones(shape, dtype=bool)

    def value(poly):
        total = np.zeros(shape, dtype=np.int64)
        for mono, coef in poly.terms.items():
            term = np.full(shape, coef, dtype=np.int64)
            for s in mono:
                term = term * _symbol_values(s, (), None, block)
            total = total + term
        return total

    for poly, op, bound, unsigned in parsed:
        limit = value(bound)
        if unsigned:  # read as unsigned: a negative bound is above every value
            limit = np.where(limit < 0, limit + 2 ** 32, limit)
        out &= COMPARE[op](value(poly), limit)
    return out


@lru_cache(maxsize=4096)
def warp_share(text: str, block: tuple, warp_size: int = 32) -> float:
    """The share of the warps of a ``block`` (Dx, Dy, Dz) in which at least one thread
    passes the thread test ``text`` (0 … 1). Raises ValueError for a text that is not a
    thread test or a block with a dimension below 1."""
    parsed = parse_test(text)
    if parsed is None:
        raise ValueError(f"not a thread test: {text!r} (a value of the thread index, an "
                         f"operator < <= > >= == != and a whole number or a value of the "
                         f"block's dimensions; tests that must all pass joined by 'and')")
    dims = tuple(int(d) for d in block)
    if len(dims) != 3 or min(dims) < 1:
        raise ValueError(f"a block's dimensions must be three whole numbers of at least 1, "
                         f"got {block!r}")
    threads = math.prod(dims)
    t = np.arange(threads, dtype=np.int64)
    xyz = (t % dims[0], (t // dims[0]) % dims[1], t // (dims[0] * dims[1]))
    lane = t % warp_size
    passes = np.ones(threads, dtype=bool)
    for poly, op, bound, unsigned in parsed:
        limit = int(_value(bound, xyz, lane, dims, 1)[0])
        if unsigned and limit < 0:  # read as unsigned: a negative bound is above every index
            limit += 2 ** 32
        passes &= COMPARE[op](_value(poly, xyz, lane, dims, threads), limit)
    warps = -(-threads // warp_size)
    padded = np.zeros(warps * warp_size, dtype=bool)
    padded[:threads] = passes
    return float(padded.reshape(warps, warp_size).any(axis=1).sum()) / warps


__all__ = ["AND", "COMPARE", "MIRRORED", "NEGATED", "SETP_OPS", "conjunction", "is_thread_value",
           "offset_thread_value", "parse_test",
           "test_holds", "thread_test", "warp_share"]
