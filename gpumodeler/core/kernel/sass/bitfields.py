"""Bit fields of the thread index in an address: ``tid.x & 31``, ``tid.x >> 5`` and the
bitwise merges the compiler writes for additions whose bits cannot overlap.

A kernel that maps a 1-D block onto a tile computes ``row = tid.x / 32`` and
``col = tid.x % 32`` (or ``/ 8`` and ``% 8``); nvcc turns these into ``SHF.R.U32.HI`` and
``LOP3.LUT`` (Maxwell: ``SHR``, ``LOP.AND``), and an addition whose operands' bits are
disjoint (``32·ctaid.y + tid.x % 32``) into a ``LOP3.LUT`` merge. The address analysis
(:mod:`gpumodeler.core.kernel.sass.addresses`) follows these through two kinds of derived
symbol of a thread-index symbol ``t`` (``tid.x/y/z``, ``laneid``) and a power of two ``M``:

* ``t%M``: ``t mod M`` (``t & (M − 1)``);
* ``t/M``: ``floor(t / M)`` (``t >> log2 M``).

Both are exact for the non-negative values a thread index takes. The rules:

* **Right shift** by ``s`` (``SHF.R.U32.HI d, RZ, s, x``, ``SHF.R.U32 d, x, s, RZ``, their
  ``S32`` forms, ``SHR``): a term holding ``ntid.x`` is taken as 32 × ``ntid.x/32`` (the
  block's x dimension a multiple of 32, as the lanes are: a global warp index
  ``(ctaid.x·ntid.x + tid.x) >> 5`` is ``ctaid.x·ntid.x/32 + tid.x/32``); the terms whose
  coefficients are multiples of ``2^s`` are divided;
  what is left must be a non-negative value below ``2^s`` (dropped), or one term
  ``2^a · t`` (``t`` a thread symbol or a ``t/M``), which becomes ``t/2^(s−a)``
  (``t/(M·2^(s−a))``). Anything else is not followed.
* **Bit-field insert** (Maxwell's ``BFI``): ``a · 2^pos + c`` where exact (:func:`insert`).
* **Bitwise operations** (``LOP3.LUT`` with its truth table, Maxwell's ``LOP.AND/OR/XOR``):
  each operand is a constant (its bits known) or a value whose possibly non-zero bits lie in
  a range (from the powers of two dividing its coefficients up to its largest value, when
  every term is non-negative and bounded; else up to bit 31). Bit by bit, the result is a
  constant or a copy of one operand's bit; it is followed when every operand's copied bits
  are all its possibly non-zero bits (the operand is added whole), or the low ``k`` or the
  rest of them for an operand ``2^a · t + K`` with ``K`` a constant clear of the bits cut
  (``2^a · t%2^k``; ``2^(a+j) · t/2^j + K``); a result ``c·M·(t/M) + c·(t%M)`` is
  written ``c·t``.
  An inverted copy, or a bit that depends on two operands, is not followed.

The largest thread index (blockDim.x and .y at most 1024, .z at most 64: NVIDIA CUDA C++
Programming Guide, "Technical Specifications per Compute Capability") bounds ``tid.*``.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product
import re

#: the thread-index symbols a field is taken of, with their largest values
THREAD_MAX = {"tid.x": 1023, "tid.y": 1023, "tid.z": 63, "laneid": 31}
_FIELD = re.compile(r"^(tid\.[xyz]|laneid)([%/])(\d+)$")
_BITS = 32
_MASK = (1 << _BITS) - 1
#: ``ntid.x`` as 32 × this symbol (the warps across a block's x dimension, which the
#: address analysis takes as a multiple of 32), so that ``(ctaid.x·ntid.x + tid.x) >> 5``,
#: a thread's global warp index, is ``ctaid.x·ntid.x/32 + tid.x/32``
WARP_BLOCK = 32
NTID_X_WARPS = "ntid.x/32"


@lru_cache(maxsize=4096)
def field(symbol: str) -> tuple | None:
    """``(thread symbol, "%" or "/", M)`` of a derived symbol ``t%M`` / ``t/M``; None for any
    other symbol."""
    m = _FIELD.match(symbol)
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


def is_lane_varying(symbol: str) -> bool:
    """A thread-index symbol, a bit field of one (``tid.x%32``, ``tid.x/32``) or a
    lane-varying opaque value of the address analysis (``data@…`` loaded, ``f@…`` computed)."""
    return symbol.startswith(("tid.", "laneid", "data@", "f@"))


def field_symbol(base: str, op: str, m: int) -> str:
    return f"{base}{op}{m}"


def thread_value(symbol: str, x: int, y: int, z: int, lane: int) -> int | None:
    """The value of a thread symbol or a field of one for the thread ``(x, y, z)`` on lane
    ``lane``; None for another symbol."""
    base = {"tid.x": x, "tid.y": y, "tid.z": z, "laneid": lane}
    if symbol in base:
        return base[symbol]
    f = field(symbol)
    if f is None:
        return None
    v = base[f[0]]
    return v % f[2] if f[1] == "%" else v // f[2]


def max_value(symbol: str) -> int | None:
    """The largest value of a thread symbol or a field of one; None for another symbol."""
    if symbol in THREAD_MAX:
        return THREAD_MAX[symbol]
    f = field(symbol)
    if f is None:
        return None
    return f[2] - 1 if f[1] == "%" else THREAD_MAX[f[0]] // f[2]


def _upper(poly) -> int | None:
    """The largest value of ``poly`` when every coefficient is non-negative and every symbol
    bounded; else None."""
    total = 0
    for mono, c in poly.terms.items():
        if c < 0:
            return None
        v = c
        for s in mono:
            top = max_value(s)
            if top is None:
                return None
            v *= top
        total += v
    return total


def _trailing_zeros(poly) -> int:
    """The powers of two every coefficient of ``poly`` is a multiple of (32 for zero)."""
    tz = _BITS
    for c in poly.terms.values():
        tz = min(tz, (c & -c).bit_length() - 1)
    return tz


def _bit_range(poly) -> tuple:
    """``(lo, hi)``: the bits of ``poly`` that may be non-zero are ``lo <= bit < hi``."""
    top = _upper(poly)
    hi = _BITS if top is None else min(_BITS, top.bit_length())
    return _trailing_zeros(poly), hi


def _single_thread_term(poly) -> tuple | None:
    """``(symbol, a)`` when ``poly`` is ``2^a · symbol``, symbol a thread symbol or a field
    of one; else None."""
    if len(poly.terms) != 1:
        return None
    (mono, c), = poly.terms.items()
    if len(mono) != 1 or c <= 0 or c & (c - 1) or max_value(mono[0]) is None:
        return None
    return mono[0], c.bit_length() - 1


def shift_right(poly, s: int, Poly):
    """``poly >> s`` as a polynomial (``Poly`` the class), or None (the module rules)."""
    if poly is None or not 0 <= s < _BITS:
        return None
    if s == 0:
        return poly
    q = 1 << s
    kept: dict = {}
    rest: dict = {}
    for mono, c in poly.terms.items():
        if c % q and mono.count("ntid.x") == 1 and (c * WARP_BLOCK) % q == 0:
            # the block's x dimension a multiple of 32, as the lanes are taken to be
            mono = tuple(sorted(NTID_X_WARPS if x == "ntid.x" else x for x in mono))
            c *= WARP_BLOCK
        if c % q == 0:
            kept[mono] = kept.get(mono, 0) + c
        else:
            rest[mono] = c
    out = Poly({m: c // q for m, c in kept.items()})
    if not rest:
        return out
    rest_poly = Poly(rest)
    top = _upper(rest_poly)
    if top is not None and top < q:
        return out
    one = _single_thread_term(rest_poly)
    if one is None:
        return None
    symbol, a = one
    f = field(symbol)
    if f is not None and f[1] == "%":
        return None  # (t % M) >> s: a field of a field, not followed
    base, m = (symbol, 1) if f is None else (f[0], f[2])
    return out + Poly.symbol(field_symbol(base, "/", m << (s - a)))


def _masked(poly, lo: int, hi: int, bits: list, Poly):
    """The bits ``bits`` (a subset of ``lo..hi-1``) of ``poly`` as a polynomial, or None:
    ``poly`` whole, or for ``poly = 2^a · t + K`` (``K`` a constant whose bits below the
    cut are zero) its low ``k`` bits ``2^a · t%2^k`` or the rest ``2^(a+j) · t/2^j + K``."""
    if bits == list(range(lo, hi)):
        return poly
    k_const = poly.terms.get((), 0)
    one = _single_thread_term(Poly({m: c for m, c in poly.terms.items() if m}))
    if one is None:
        return None
    symbol, a = one
    f = field(symbol)
    if f is not None and f[1] == "%":
        return None  # a field of a field: not followed
    base, m = (symbol, 1) if f is None else (f[0], f[2])
    k = len(bits)
    if bits == list(range(lo, lo + k)) and k_const % (1 << (a + k)) == 0 and f is None:
        return Poly({(field_symbol(symbol, "%", 1 << k),): 1 << a})  # the low k bits of t
    j = hi - k - lo
    if bits == list(range(hi - k, hi)) and j > 0 and k_const % (1 << (a + j)) == 0:
        # t (or t/M) less its low j bits
        return Poly({(field_symbol(base, "/", m << j),): 1 << (a + j)}) + Poly.const(k_const)
    return None


def simplified(poly, Poly):
    """``poly`` with each ``c·M·(t/M) + c·(t%M)`` written ``c·t`` (the two fields of a thread
    symbol ``t`` a merge puts back together)."""
    if poly is None:
        return None
    terms = dict(poly.terms)
    changed = False
    for mono, c in list(poly.terms.items()):
        f = field(mono[0]) if len(mono) == 1 else None
        if f is None or f[1] != "/" or mono not in terms:
            continue
        low = (field_symbol(f[0], "%", f[2]),)
        if c % f[2] or terms.get(low) != c // f[2]:
            continue
        del terms[mono], terms[low]
        terms[(f[0],)] = terms.get((f[0],), 0) + c // f[2]
        changed = True
    return Poly(terms) if changed else poly


def bitwise(operands, lut: int, Poly):
    """The value of a three-input bitwise operation with truth table ``lut`` (``LOP3.LUT``:
    bit ``4a + 2b + c`` of ``lut`` is the result for input bits a, b, c) on the polynomials
    ``operands`` (three; a constant polynomial is a known bit pattern), or None."""
    if any(p is None for p in operands) or len(operands) != 3:
        return None
    kinds: list[tuple[str, int, int]] = []  # ("c", bits, 0) or ("v", lo, hi)
    for p in operands:
        k = p.constant()
        if k is not None:
            kinds.append(("c", k & _MASK, 0))
        else:
            kinds.append(("v",) + _bit_range(p))
    constant = 0
    copies: dict = {j: [] for j, kd in enumerate(kinds) if kd[0] == "v"}
    for bit in range(_BITS):
        fixed = [0, 0, 0]
        free = []
        for j, kd in enumerate(kinds):
            if kd[0] == "c":
                fixed[j] = (kd[1] >> bit) & 1
            elif kd[1] <= bit < kd[2]:
                free.append(j)
        results = {}
        for combo in product((0, 1), repeat=len(free)):
            bits = list(fixed)
            for j, v in zip(free, combo):
                bits[j] = v
            results[combo] = (lut >> (4 * bits[0] + 2 * bits[1] + bits[2])) & 1
        values = set(results.values())
        if len(values) == 1:
            constant |= values.pop() << bit
            continue
        source = next((n for n in range(len(free))
                       if all(r == combo[n] for combo, r in results.items())), None)
        if source is None:
            return None  # an inverted bit, or one two operands decide
        copies[free[source]].append(bit)
    if constant >> (_BITS - 1) and copies and any(copies.values()):
        return None  # a negative constant beside a field: not followed
    out = Poly.const(constant)
    for j, bits in copies.items():
        if not bits:
            continue
        part = _masked(operands[j], kinds[j][1], kinds[j][2], bits, Poly)
        if part is None:
            return None
        out = out + part
    return simplified(out, Poly)


def insert(value, control: int, into, Poly):
    """``BFI d, a, control, c`` (Maxwell, Pascal): ``c`` with its bits ``pos … pos+len−1``
    (``control = len << 8 | pos``) replaced by the low ``len`` bits of ``a``. Followed as
    ``a · 2^pos + c`` where that is exact: ``c``'s possibly non-zero bits all below ``pos``
    and ``a`` below ``2^len``, or the field reaching bit 31 (the sum then wraps as the
    32-bit insert does)."""
    if value is None or into is None:
        return None
    pos, length = control & 0xFF, (control >> 8) & 0xFF
    if not 0 <= pos < _BITS or length == 0:
        return None
    lo, hi = _bit_range(into)
    if into.terms and hi > pos:
        return None
    top = _upper(value)
    if pos + length < _BITS and (top is None or top >> length):
        return None
    return simplified(value.scaled(1 << pos) + into, Poly)


#: Maxwell's two-input ``LOP`` as a ``LOP3`` truth table on (a, b, 0)
LOP_TABLES = {"AND": 0xC0, "OR": 0xFC, "XOR": 0x3C}
