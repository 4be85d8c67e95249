"""Address analysis of a SASS listing: the address of every memory instruction as a
polynomial in the thread index, the block index, the block and grid dimensions, the kernel's
parameters and the loop variables, and what it means for one warp's access (lane stride,
broadcast, 32-byte sectors, shared-memory bank conflicts).

The rules, and what they cannot see, are in docs/sass-import.md. In short:

* **Values** are followed forwards through the listing in program order (the first
  iteration of a loop: a loop-carried update comes after its uses). A register's value is
  a polynomial with integer coefficients over *symbols*: ``tid.x/y/z`` (``S2R SR_TID.*``),
  ``laneid``, ``ctaid.*``, ``ntid.*``/``nctaid.*`` (the constant bank's block and grid
  dimensions: at 0x8 on Maxwell and Pascal, 0x0 from Volta to Hopper, 0x360 on
  Blackwell), ``c[0x0][0x160]`` (a kernel parameter) and opaque values named after the
  instruction that made them. An opaque value is *uniform* (the same in every lane of a
  warp: made from uniform inputs, a uniform register, a constant-bank load) or
  *lane-varying* (a load from memory, a shuffle, a non-linear function of the thread index).
* **Arithmetic** followed: ``MOV``/``UMOV``, ``IMAD`` (any form but ``.HI``/``.X``:
  ``IMAD.WIDE``, ``IMAD.SHL``, ``IMAD.MOV``, ``IMAD.IADD``), ``IADD3``, ``IADD``/
  ``IADD32I`` (Maxwell), ``LEA`` (``(a << s) + b``), ``ISCADD``, ``SHF.L``/``SHL`` by a
  constant, ``XMAD`` (Maxwell's 16-bit multiply: the three-instruction 32-bit product is
  taken as the full product, ``XMAD.MRG`` as a partial and ``XMAD.PSL`` as passing its
  addend on), their uniform forms (``UIMAD``, ``UIADD3``, ``ULEA``, ``USHF``),
  ``S2R``/``S2UR``/``CS2R``, ``LDC``/``ULDC``/``LDCU`` of a fixed constant-bank address.
  A 64-bit pair is followed by its low register (the high word's ``.X`` arithmetic is the
  carry of the same sum). Everything else makes an opaque value.
* **Affine** means: every term with a lane-varying symbol is ``coefficient · tid.*`` (or
  ``laneid``) with a warp-uniform coefficient. The lane stride is the coefficient of
  ``tid.x`` in bytes: the lanes of a warp are 32 consecutive ``tid.x`` (a block whose x
  dimension is a multiple of 32, NVIDIA CUDA C++ Programming Guide, "Thread Hierarchy").
  A coefficient holding a kernel parameter (a row length ``n``) is taken as at least one
  sector per lane; a non-affine address keeps the coalesced default (stride 1), says so on
  the node, and the user sets the stride or pattern.

The cost of one warp-wide request (NVIDIA CUDA C++ Best Practices Guide, "Coalesced Access
to Global Memory": a warp's accesses are served in 32-byte sectors; "Shared Memory": 32
banks of 4 bytes, distinct words in one bank serialise, one word read by several lanes is
broadcast) is worked out in :mod:`gpumodeler.core.kernel.sass.warp_access` by enumerating
the 32 lanes' addresses; a shared-memory request's cost is its wavefronts, the cycles of the
banks it takes (64- and 128-bit accesses served per half-warp). Bit fields of the thread
index (``tid.x%32``, ``tid.x/32``) are followed by :mod:`gpumodeler.core.kernel.sass.bitfields`.
"""
from __future__ import annotations

from dataclasses import dataclass
import re
import struct
from typing import Any
from functools import lru_cache

from gpumodeler.core.kernel.sass import bitfields
from gpumodeler.core.kernel.sass.bitfields import is_lane_varying  # noqa: F401  (re-exported)
from gpumodeler.core.kernel.sass.warp_access import (  # noqa: F401  (re-exported)
    BANK_BYTES, BANKS, HALF_WARP, LINE_BYTES, SECTOR_BYTES, WARP, WarpAccess, ideal_wavefronts,
    lane_offsets, lanes_access, shared_wavefronts, warp_access)

#: Lane-varying symbols: the thread index (and the lane id) and data loaded from memory.
THREAD_SYMBOLS = ("tid.x", "tid.y", "tid.z", "laneid")
_SPECIAL = {"SR_TID.X": "tid.x", "SR_TID.Y": "tid.y", "SR_TID.Z": "tid.z",
            "SR_CTAID.X": "ctaid.x", "SR_CTAID.Y": "ctaid.y", "SR_CTAID.Z": "ctaid.z",
            "SR_LANEID": "laneid", "SRZ": None}
#: Block and grid dimensions in constant bank 0 (the driver's launch parameters): at 0x0
#: from Volta on, at 0x8 on Maxwell and Pascal (read off the listings: ``IMAD R0, R0,
#: c[0x0][0x0], R3`` computes ``blockIdx.x * blockDim.x + threadIdx.x``).
_DIMS_VOLTA = {0x0: "ntid.x", 0x4: "ntid.y", 0x8: "ntid.z", 0xc: "nctaid.x",
               0x10: "nctaid.y", 0x14: "nctaid.z"}
_DIMS_MAXWELL = {0x8: "ntid.x", 0xc: "ntid.y", 0x10: "ntid.z", 0x14: "nctaid.x",
                 0x18: "nctaid.y", 0x1c: "nctaid.z"}
#: Blackwell (sm_100, sm_120; nvcc 13): at 0x360, the grid's after a gap at 0x36c (read off
#: the listings of a kernel that stores blockDim.x/y/z and gridDim.x/y/z in that order:
#: ``c[0x0][0x360]``, ``0x364``, ``0x368``, ``0x370``, ``0x374``, ``0x378``)
_DIMS_BLACKWELL = {0x360: "ntid.x", 0x364: "ntid.y", 0x368: "ntid.z", 0x370: "nctaid.x",
                   0x374: "nctaid.y", 0x378: "nctaid.z"}
_MAX_DEGREE = 4  # a monomial of more factors becomes an opaque value
_CONST_REF = re.compile(r"^c\[(0x[0-9a-f]+)\]\s*\[(0x[0-9a-f]+)\]$", re.I)
_REG = re.compile(r"^(U?R)(\d+|Z)$")
_REG_MODS = re.compile(r"\.(reuse|64|128|U32|H0|H1|B\d|X\d+|CC)", re.I)
#: uniform-datapath forms (``UIMAD``, ``ULEA``...) follow the rules of their vector forms
_UNIFORM_FORMS = {"MOV", "IMAD", "IMUL", "IADD3", "LEA", "SHF", "ISCADD", "LOP3", "VIADD"}
#: the mnemonics whose result :func:`_evaluate` follows (the rest make an opaque value)
_FOLLOWED = frozenset({"MOV", "UMOV", "IMAD", "UIMAD", "IMUL", "UIMUL", "IADD3", "UIADD3", "IADD",
                       "IADD32I", "LEA", "ULEA", "ISCADD", "ISCADD32I", "UISCADD", "SHF", "USHF",
                       "SHL", "XMAD", "HFMA2", "S2R", "S2UR", "CS2R", "LDC", "ULDC", "LDCU",
                       "LOP3", "ULOP3", "LOP", "LOP32I", "SHR", "BFI", "VIADD", "UVIADD"})


class Poly:
    """A polynomial with integer coefficients: ``{monomial: coefficient}``, a monomial a
    sorted tuple of symbol names (``()`` the constant)."""

    __slots__ = ("terms",)

    def __init__(self, terms=None):
        self.terms = {m: c for m, c in (terms or {}).items() if c}

    @classmethod
    def _raw(cls, terms: dict) -> "Poly":
        """A polynomial of terms known to have no zero coefficient (no check: fast)."""
        p = cls.__new__(cls)
        p.terms = terms
        return p

    @classmethod
    def const(cls, value: int) -> "Poly":
        return cls._raw({(): int(value)} if value else {})

    @classmethod
    def symbol(cls, name: str) -> "Poly":
        return cls._raw({(name,): 1})

    def __add__(self, other: "Poly") -> "Poly":
        if not other.terms:
            return self
        if not self.terms:
            return other
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, 0) + c
        return Poly(out)

    def scaled(self, k: int) -> "Poly":
        if k == 1:
            return self
        return Poly._raw({m: c * k for m, c in self.terms.items()}) if k else Poly._raw({})

    def __mul__(self, other: "Poly") -> "Poly | None":
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = tuple(sorted(m1 + m2))
                if len(m) > _MAX_DEGREE:
                    return None
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    def constant(self) -> int | None:
        """The value when the polynomial is a number, else None."""
        if not self.terms:
            return 0
        if set(self.terms) == {()}:
            return self.terms[()]
        return None

    def symbols(self) -> set:
        return {s for m in self.terms for s in m}

    def text(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda mc: (len(mc[0]), mc[0])):
            if not m:
                parts.append(f"{c:#x}" if abs(c) >= 256 else str(c))
                continue
            name = "·".join(m)
            parts.append(name if c == 1 else f"-{name}" if c == -1 else f"{c}·{name}")
        return " + ".join(parts).replace("+ -", "- ")


_TERM_SPLIT = re.compile(r" \+ ")


@lru_cache(maxsize=65536)
def parse_address(text: str) -> Poly | None:
    """The polynomial of a node's ``address`` text (``Poly.text``'s form, up to the first
    ``;``); None when it is not an affine address the import followed (``not affine``,
    ``not followed``, empty) or not in that form. (Cached: the result is shared, not to be
    changed.)"""
    body = (text or "").split(";", 1)[0].strip()
    if not body or body.startswith("not "):
        return None
    terms: dict = {}
    for term in _TERM_SPLIT.split(body.replace(" - ", " + -")):
        term = term.strip()
        sign = 1
        if term.startswith("-"):
            sign, term = -1, term[1:]
        factors = term.split("·")
        coef = 1
        try:
            coef = int(factors[0], 0)
            factors = factors[1:]
        except ValueError:
            pass
        if any(not f or " " in f for f in factors):
            return None
        mono = tuple(sorted(factors))
        terms[mono] = terms.get(mono, 0) + sign * coef
    return Poly(terms)


@dataclass(frozen=True)
class Address:
    """The address of one memory instruction."""

    space: str
    poly: Poly | None  # None: the analysis could not follow it
    affine: bool
    #: bytes between the addresses of consecutive lanes (tid.x); None when not affine or
    #: when it holds a kernel parameter (see ``param_stride``)
    lane_stride: int | None
    #: the tid.x coefficient holds a kernel parameter (a row length): taken as large
    param_stride: bool
    offset: int  # the numeric constant part (alignment within a sector)
    reason: str = ""  # why not affine
    #: the byte offsets of lanes 0-31 of a warp (tid.x = lane), where a bit field of
    #: ``tid.x`` narrower than a warp (``tid.x%8``, ``tid.x/8``) gives no single lane stride
    lanes: tuple | None = None

    def text(self) -> str:
        if self.poly is None:
            return f"not followed: {self.reason}"
        body = self.poly.text()
        return body if self.affine else f"not affine ({self.reason}): {body}"


# -- following the registers -------------------------------------------------------------

def block_dim_offsets(arch_number: int | None) -> dict:
    """``{constant-bank 0 offset: axis (0, 1, 2)}`` of the block's dimensions ``ntid.x/y/z``
    for an architecture (the offsets :class:`_Values` reads)."""
    dims = _Values(arch_number).dims
    return {off: "xyz".index(name[-1]) for off, name in dims.items() if name.startswith("ntid.")}


def launch_dim_offsets(arch_number: int | None) -> dict:
    """``{constant-bank 0 offset: name}`` of the block's and the grid's dimensions
    (``ntid.x`` … ``nctaid.z``) for an architecture (the offsets :class:`_Values` reads)."""
    return dict(_Values(arch_number).dims)


class _Values:
    """Register values in program order."""

    def __init__(self, arch_number: int | None):
        self.env: dict = {}
        self.varying: dict = {}  # register -> its value varies across the lanes
        self.dims = (_DIMS_VOLTA if arch_number is None or 70 <= arch_number < 100 else
                     _DIMS_MAXWELL if arch_number < 70 else _DIMS_BLACKWELL)
        #: appended to the names of the opaque values this pass makes: a loop's second trip
        #: (:func:`trip_steps`) names them apart from the first trip's, whose values they
        #: are not
        self.tag = ""

    def copy(self, tag: str) -> "_Values":
        """The values as they stand, for a pass that names its opaque values with ``tag``."""
        out = _Values.__new__(_Values)
        out.env, out.varying, out.dims, out.tag = dict(self.env), dict(self.varying), self.dims, tag
        return out

    def constant_bank(self, b: int, off: int) -> Poly:
        if b == 0 and off in self.dims:
            return Poly.symbol(self.dims[off])
        return Poly.symbol(f"c[{b:#x}][{off:#x}]")

    def operand(self, text: str, at: int) -> Poly | None:
        """The value of a source operand; None for one not understood."""
        kind, payload, neg = _parse_operand(text)
        if kind == "reg":
            v = self.env.get(payload)
            if v is None:  # never written: an argument register or undefined
                v = Poly.symbol(f"{payload}@entry")
            elif v.__class__ is tuple:  # an opaque value, made when first read
                v = self.env[payload] = Poly.symbol(
                    f"{'f' if v[1] else 'v'}@{v[0]:04x}{v[2] if len(v) > 2 else ''}")
        elif kind == "const":
            v = Poly.const(payload)
        elif kind == "zero":
            return Poly()
        elif kind == "cbank":
            v = self.constant_bank(*payload)
        else:
            return None
        return v.scaled(-1) if neg else v

    def set(self, reg: str, value: Poly) -> None:
        self.env[reg] = value
        if not self.tag:  # a second trip's values are compared, never classified
            self.varying[reg] = any(is_lane_varying(s) for m in value.terms for s in m)

    def any_varying(self, operands) -> bool:
        """Whether any register among ``operands`` holds a lane-varying value (cheap: the
        flag kept with each value)."""
        for o in operands:
            reg = _parse_operand(o)[1]
            if isinstance(reg, str) and self.varying.get(reg, False):
                return True
        return False

    def opaque(self, at: int, inputs, lane_varying: bool | None = None,
               loaded: bool = False) -> Poly:
        """A fresh value of the instruction at ``at``: ``data@…`` loaded from memory,
        ``f@…`` another lane-varying value (when any input is, or ``lane_varying`` says so),
        else ``v@…``, uniform across the warp."""
        if lane_varying is None:
            lane_varying = any(p is None or any(is_lane_varying(s) for s in p.symbols())
                               for p in inputs)
        kind = ("data" if loaded else "f") if lane_varying else "v"
        return Poly.symbol(f"{kind}@{at:04x}{self.tag}")


@lru_cache(maxsize=65536)
def _parse_operand(text: str) -> tuple:
    """``(kind, payload, negated)``: ``("reg", "R2", False)``, ``("const", 4, False)``,
    ``("cbank", (0, 0x160), False)``, ``("zero", None, False)``; ``("other", register or
    None, ...)`` for what is not followed (``|R2|``, ``~R2``, ``R2.H1``, a predicate, a
    float)."""
    t = text.strip()
    neg = t.startswith("-")
    t = t.lstrip("-")
    if t.startswith(("|", "~", "!")):
        base = _REG_MODS.sub("", t.strip("|~!"))
        return "other", base if _REG.match(base) else None, neg
    if t.startswith("c["):
        m = _CONST_REF.match(t.replace(" ", "").replace("[RZ]", "[0x0]").replace("[URZ]", "[0x0]"))
        if m:
            return "cbank", (int(m.group(1), 16), int(m.group(2), 16)), neg
        return "other", None, neg
    base = _REG_MODS.sub("", t)
    if base in ("RZ", "URZ"):
        return "zero", None, neg
    if _REG.match(base):
        if re.search(r"\.H1", t, re.I):
            return "other", base, neg
        return "reg", base, neg
    try:
        return "const", int(t, 16) if t.lower().startswith("0x") else int(t), neg
    except ValueError:
        return "other", None, neg


def _sum(values):
    out = Poly()
    for v in values:
        if v is None:
            return None
        out = out + v
    return out


def _shift(v: Poly | None, s: Poly | None) -> Poly | None:
    k = None if s is None else s.constant()
    if v is None or k is None or not 0 <= k < 64:
        return None
    return v.scaled(1 << k)


def _mul(a, b):
    return None if a is None or b is None else a * b


def _dest_regs(ins, nd) -> tuple:
    return _dest_regs_of(ins.operands, nd)


@lru_cache(maxsize=65536)
def _dest_regs_of(operands, nd) -> tuple:
    regs = []
    for op in operands[:nd]:
        base = _REG_MODS.sub("", op.strip())
        if _REG.match(base) and base not in ("RZ", "URZ"):
            regs.append(base)
    return tuple(regs)


def _evaluate(ins, vals: _Values, nd: int, unit: str | None, space: str | None):
    """The value written to the first destination register (None: opaque)."""
    mnem, mods = ins.mnemonic, ins.modifiers
    if mnem.startswith("U") and mnem[1:] in _UNIFORM_FORMS:
        mnem = mnem[1:]
    src = [vals.operand(o, ins.address) for o in ins.operands[nd:]]
    if ins.mnemonic in ("S2R", "S2UR", "CS2R"):
        name = ins.operands[nd].strip() if len(ins.operands) > nd else ""
        sym = _SPECIAL.get(name.upper(), "?")
        if sym is None:
            return Poly()
        if sym == "?":
            return vals.opaque(ins.address, (), lane_varying=False)
        return Poly.symbol(sym)
    if ins.mnemonic in ("LDC", "ULDC", "LDCU") and len(ins.operands) > nd:
        ref = ins.operands[nd].replace(" ", "").replace("[RZ]", "[0x0]").replace("[URZ]", "[0x0]")
        m = _CONST_REF.match(ref)
        if m:
            return vals.constant_bank(int(m.group(1), 16), int(m.group(2), 16))
    if unit == "ldst":  # data from memory
        return vals.opaque(ins.address, (), lane_varying=space != "constant"
                           and not ins.mnemonic.startswith("U"), loaded=True)
    if mnem == "HFMA2" and len(ins.operands) - nd == 4 and \
            {o.strip().lstrip("-") for o in ins.operands[nd:nd + 2]} == {"RZ"}:
        return half_pair(ins.operands[nd + 2], ins.operands[nd + 3])
    if mnem in ("SHF", "SHR", "LOP3", "LOP", "LOP32I", "BFI") or (mnem == "LEA" and "HI" in mods):
        return _bit_operation(mnem, mods, src)
    if "X" in mods or "HI" in mods:
        return None
    if mnem == "MOV" and src:
        return src[0]
    if mnem == "IMAD" and len(src) >= 3:
        return _sum([_mul(src[0], src[1]), src[2]])
    if mnem == "IMUL" and len(src) >= 2:
        return _mul(src[0], src[1])
    if mnem == "VIADD" and len(src) >= 2:  # Hopper on: a + b, 32-bit
        k = None if src[1] is None else src[1].constant()
        return _sum([src[0], Poly.const(k - (1 << 32)) if k is not None and k >> 31 else src[1]])
    if mnem in ("IADD3", "IADD", "IADD32I"):
        return _sum([s for s, o in zip(src, ins.operands[nd:]) if not o.strip().lstrip("!").startswith(("P", "UP"))])
    if mnem == "LEA" and len(src) >= 3:
        return _sum([_shift(src[0], src[2]), src[1]])
    if mnem in ("ISCADD", "ISCADD32I") and len(src) >= 3:
        return _sum([_shift(src[0], src[2]), src[1]])
    if mnem == "SHL" and len(src) >= 2:
        return _shift(src[0], src[1])
    if mnem == "XMAD" and len(src) >= 3:
        if "PSL" in mods:  # the high-halves correction of a 32-bit product: its addend
            return src[2]
        if "MRG" in mods:
            return None
        return _sum([_mul(src[0], src[1]), src[2]])
    return None


def _bit_operation(mnem: str, mods, src) -> Poly | None:
    """Shifts and bitwise operations: ``SHF.L`` (a product by ``2^s``), ``SHF.R``/``SHR``,
    ``LEA.HI`` with no high word (``b + (a >> (32 − s))``),
    ``LOP3.LUT``/``LOP.{AND,OR,XOR}`` and Maxwell's ``BFI`` (bit fields of the thread index:
    core.kernel.sass.bitfields); None where not followed."""
    if "X" in mods:
        return None
    if mnem == "SHF" and len(src) >= 3:
        if "L" in mods:
            return None if "HI" in mods else _shift(src[0], src[1])
        if "R" not in mods or "U64" in mods or "S64" in mods:
            return None
        # SHF.R.U32.HI d, RZ, s, x is x >> s; SHF.R.U32 d, x, s, RZ too
        value, other = (src[2], src[0]) if "HI" in mods else (src[0], src[2])
        k = None if src[1] is None else src[1].constant()
        if other is None or other.terms or k is None:
            return None
        return bitfields.shift_right(value, k, Poly)
    if mnem == "LEA" and len(src) >= 4:  # LEA.HI d, a, b, RZ, s: b + (a >> (32 - s))
        k = None if src[3] is None else src[3].constant()
        if k is None or src[2] is None or src[2].terms or not 0 < k < 32:
            return None
        return _sum([bitfields.shift_right(src[0], 32 - k, Poly), src[1]])
    if mnem == "SHR" and len(src) >= 2:
        k = None if src[1] is None else src[1].constant()
        return None if k is None else bitfields.shift_right(src[0], k, Poly)
    if mnem == "LOP3" and len(src) >= 4:
        lut = None if src[3] is None else src[3].constant()
        return None if lut is None else bitfields.bitwise(src[:3], lut, Poly)
    if mnem == "BFI" and len(src) >= 3:  # Maxwell/Pascal: insert a's low bits into c
        control = None if src[1] is None else src[1].constant()
        return None if control is None else bitfields.insert(src[0], control, src[2], Poly)
    if mnem in ("LOP", "LOP32I") and len(src) >= 2:
        table = next((bitfields.LOP_TABLES[m] for m in mods if m in bitfields.LOP_TABLES), None)
        return None if table is None else bitfields.bitwise([src[0], src[1], Poly()], table, Poly)
    return None


def half_pair(high: str, low: str) -> Poly | None:
    """``HFMA2.MMA R5, -RZ, RZ, 0, 2.38e-07``: 0·0 plus a pair of half-precision numbers, the
    way Ampere's compiler writes an integer constant (here 4) into a register: the bits."""
    try:
        hi, lo = (struct.unpack("<H", struct.pack("<e", float(t)))[0] for t in (high, low))
    except (ValueError, OverflowError, struct.error):
        return None
    return Poly.const((hi << 16) | lo)


def _address_operand(ins) -> str | None:
    for op in ins.operands:
        if "[" in op and not op.strip().startswith("c["):
            return op
    return None


def _address_value(op: str, vals: _Values, at: int, space: str | None) -> Poly | None:
    if space == "constant" or op.strip().startswith("c["):
        m = re.search(r"c\[(0x[0-9a-f]+)\]\s*\[([^\]]*)\]", op, re.I)
        inner = m.group(2) if m else ""
    else:
        inner = op[op.rfind("[") + 1:op.rfind("]")]
    total = Poly()
    for term in inner.replace("-", "+-").split("+"):
        term = term.strip()
        if not term:
            continue
        scale = 1
        mx = re.search(r"\.X(\d+)", term)
        if mx:
            scale = int(mx.group(1))
            term = term.replace(mx.group(0), "")
        v = vals.operand(term, at)
        if v is None:
            return None
        total = total + v.scaled(scale)
    return total


def analyse_address(poly: Poly | None, space: str, reason: str = "") -> Address:
    """Classify an address polynomial (see the module rules)."""
    if poly is None:
        return Address(space, None, False, None, False, 0, reason or "arithmetic not followed")
    coef = Poly()
    irregular = False
    for m, c in poly.terms.items():
        varying = [s for s in m if is_lane_varying(s)]
        if not varying:
            continue
        if len(varying) > 1 or varying[0].startswith(("data@", "f@")):
            if any(s.startswith("data@") for s in varying):
                why = "data-dependent (indirect)"
            elif any(s.startswith("f@") for s in varying):
                why = "a function of the thread index not followed (bit operations, shifts right)"
            else:
                why = "a product of thread indices"
            return Address(space, poly, False, None, False, 0, why)
        along = _along_the_warp(varying[0])
        if along is None:
            irregular = True
        elif along:
            rest = tuple(s for s in m if s != varying[0])
            coef = coef + Poly({rest: c})
    offset = poly.terms.get((), 0)
    if irregular:
        return Address(space, poly, True, None, False, offset, lanes=lane_offsets_1d(poly))
    k = coef.constant()
    if k is not None:
        return Address(space, poly, True, k, False, offset)
    return Address(space, poly, True, None, True, offset)


def _along_the_warp(symbol: str) -> bool | None:
    """How a lane-varying symbol moves along the 32 lanes of a warp (consecutive ``tid.x``,
    a block whose x dimension is a multiple of 32): True as the lane (``tid.x``, ``laneid``,
    ``tid.x%M`` for M ≥ 32), False not at all (``tid.y``, ``tid.z``, their fields,
    ``tid.x/M`` for M ≥ 32), None otherwise (``tid.x%8``, ``tid.x/8``: no single stride)."""
    f = bitfields.field(symbol)
    base = symbol if f is None else f[0]
    if base not in ("tid.x", "laneid"):
        return False
    if f is None:
        return True
    if f[2] % WARP:
        return None
    return f[1] == "%"


def lane_offsets_1d(poly: Poly) -> tuple:
    """The byte offsets of lanes 0-31 of a warp of a 1-D block (``tid.x`` = the lane;
    core.kernel.sass.warp_access.lane_offsets for a block of one warp)."""
    return tuple(lane_offsets(poly, (WARP, 1, 1), 0) or ())


def analyse(ins_list, infos, arch_number: int | None, n_destinations, access=None,
            snapshots: dict | None = None, ranges=(), probes: dict | None = None,
            probed: dict | None = None) -> dict:
    """``{index: Address}`` for every memory instruction of ``ins_list`` (``infos`` the
    opcode classifications, ``n_destinations(ins, unit)`` the count of destination
    operands; ``access``, when given, each instruction's ``(written, read)`` registers
    (operands.reg_access), which spares parsing the instructions it does not follow).
    With ``snapshots`` (a dict) and the loops' ``ranges``, the register values at each
    loop's back edge go into ``snapshots[loop]``, for :func:`trip_steps`. With ``probes``
    (``{index: (operand text, ...)}``) and ``probed`` (a dict), the values of those source
    operands as the instruction at that index reads them go into ``probed[index]`` (a tuple
    of polynomials, None for one not understood): the thread tests of the guards
    (:mod:`gpumodeler.core.kernel.sass.thread_tests`)."""
    out: dict = {}
    latches = {r.latch: k for k, r in enumerate(ranges)} if snapshots is not None else None
    _walk(_Values(arch_number), range(len(ins_list)), ins_list, infos, n_destinations, access,
          out, latches, snapshots, probes=probes or None, probed=probed)
    return out


def trip_steps(ins_list, infos, n_destinations, access, ranges, innermost, addressed: dict,
               snapshots: dict) -> dict:
    """``{index: (loop, bytes)}``: how far the address of each memory instruction of
    ``addressed`` (the first trip's, :func:`analyse`) moves from one trip of its innermost
    loop to the next, where that is a fixed number of bytes, the same in every lane.

    ``ranges`` are the loops (``header``/``latch`` indices, cfg.find_loops), ``innermost``
    the index into ``ranges`` of each instruction's innermost loop (None: in no loop),
    ``snapshots`` the register values at each loop's back edge (:func:`analyse`). The
    body of each loop is followed a second time from the register values its first trip
    leaves at the back edge (the loop-carried updates: a pointer or index advanced by a
    constant); the step is the second trip's address less the first's. Opaque values the
    second trip makes are named apart from the first trip's, so an address that depends on
    one (a value loaded or computed in the loop) has no fixed step. An instruction on a path
    the second trip does not take is still followed in program order, as in the first."""
    want: dict = {}
    for i, a in addressed.items():
        k = innermost[i]
        if k is not None and a.affine and a.poly is not None:
            want.setdefault(k, []).append(i)
    steps: dict = {}
    for k, members in want.items():
        if k not in snapshots:
            continue
        second: dict = {}
        r = ranges[k]
        _walk(snapshots[k].copy("'"), range(r.header, r.latch + 1), ins_list, infos,
              n_destinations, access, second, only=set(members))
        for i in members:
            b = second.get(i)
            if b is None:
                continue
            step = (b + addressed[i].poly.scaled(-1)).constant()
            if step is not None:
                steps[i] = (k, step)
    return steps


def _walk(vals: _Values, indices, ins_list, infos, n_destinations, access, out: dict,
          latches: dict | None = None, snapshots: dict | None = None,
          only: set | None = None, probes: dict | None = None,
          probed: dict | None = None) -> None:
    """Follow the registers through the instructions at ``indices`` (program order), putting
    the address of each memory instruction in ``out``; at an index of ``latches`` (index ->
    loop), a copy of the values as they stand goes to ``snapshots[loop]``. With ``only``,
    just those instructions' addresses, as polynomials (None: not followed), not classified.
    With ``probes``, the values the instructions at those indices read (:func:`analyse`)."""
    varying_of = vals.varying.get
    tag = vals.tag
    for i in indices:
        ins, info = ins_list[i], infos[i]
        if probes is not None and i in probes and probed is not None:
            values = []
            for text in probes[i]:
                try:
                    values.append(vals.operand(text, ins.address))
                except (ValueError, IndexError, OverflowError):
                    values.append(None)
            probed[i] = tuple(values)
        unit = info.unit if info is not None else None
        if unit != "ldst" and access is not None and ins.mnemonic not in _FOLLOWED:
            written, read = access[i]
            if written and tag:  # a second trip: a fresh value of its own (kind immaterial)
                mark = (ins.address, False, tag)
                for r in written:
                    if r[0] == "R" or r[:2] == "UR":
                        vals.env[r] = mark
            elif written:  # a fresh value, lane-varying if an input is (made when read)
                varying = any(varying_of(r, False) for r in read)
                for r in written:
                    if r[0] == "R" or r[:2] == "UR":
                        vals.env[r] = (ins.address, varying)
                        vals.varying[r] = varying
            if latches and i in latches:
                snapshots[latches[i]] = vals.copy("")  # type: ignore[index]
            continue
        space = info.space if info is not None else None
        if unit == "ldst" and space in ("global", "local", "shared", "constant", "generic") \
                and (only is None or i in only):
            op = _address_operand(ins)
            if op is None and space == "constant":
                op = next((o for o in ins.operands if o.strip().startswith("c[")), None)
            if op is not None:
                try:
                    poly = _address_value(op, vals, ins.address, space)
                except (ValueError, IndexError, OverflowError):  # an operand form not known
                    poly = None
                out[i] = analyse_address(poly, space) if only is None else poly
        _assign(vals, ins, unit, space, n_destinations, tag)
        if latches and i in latches:
            snapshots[latches[i]] = vals.copy("")  # type: ignore[index]


def _assign(vals: _Values, ins, unit, space, n_destinations, tag: str) -> None:
    """The values the instruction writes: followed where its arithmetic is, else opaque."""
    nd = n_destinations(ins, unit)
    regs = _dest_regs(ins, nd)
    if not regs:
        return
    value = None
    if unit == "ldst" or ins.mnemonic in _FOLLOWED:
        try:
            value = _evaluate(ins, vals, nd, unit, space)
        except (ValueError, IndexError):
            value = None
    if value is None:  # not followed: a fresh value, lane-varying if an input is
        # (kept as (address, varying[, tag]) until an instruction that is followed reads it;
        # a second trip's is its own whatever its kind, which is not worked out)
        if tag:
            for r in regs:
                vals.env[r] = (ins.address, False, tag)
            return
        varying = vals.any_varying(ins.operands[nd:])
        mark = (ins.address, varying)
        for r in regs:
            vals.env[r] = mark
            vals.varying[r] = varying
        return
    vals.set(regs[0], value)
    if len(regs) > 1:  # the high word of a pair, a second destination: opaque
        if tag:
            for r in regs[1:]:
                vals.env[r] = (ins.address, False, tag)
            return
        varying = vals.varying[regs[0]]
        high = (ins.address, varying)
        for r in regs[1:]:
            vals.env[r] = high
            vals.varying[r] = varying


# -- what it means for the graph's instruction ----------------------------------------------

#: the stride taken for a tid.x coefficient holding a kernel parameter (a row length): one
#: sector per lane at any width (32 elements of 4 bytes = 128 bytes apart)
PARAM_STRIDE_BYTES = LINE_BYTES
#: what a node's ``address`` says of such a stride (core.kernel.sass.reuse reads it back at
#: launch, beside core.kernel.sass.neighbours.OVERLAPS_NOTE)
PARAM_STRIDE_NOTE = "lane stride holds a parameter"


def instruction_attributes(addr: Address, width_bytes: int) -> dict:
    """The kernel-graph attributes of a memory instruction from its address: ``address``
    (text), ``stride`` (elements), ``pattern`` and, for shared memory,
    ``bank_conflict_degree``."""
    kw: dict[str, Any] = {"address": addr.text()}
    if not addr.affine:
        kw["address"] = f"{addr.text()}; assumed coalesced (set stride or pattern)"
        return kw
    if addr.lanes is not None:
        return _enumerated_attributes(kw, addr, width_bytes)
    if addr.space == "constant":
        kw["pattern"] = "broadcast" if addr.lane_stride == 0 else "strided"
        return kw
    stride = PARAM_STRIDE_BYTES if addr.param_stride else addr.lane_stride
    if stride is None:  # an affine address always has a lane stride
        return kw
    if addr.param_stride:
        kw["address"] += f"; {PARAM_STRIDE_NOTE}, taken as {PARAM_STRIDE_BYTES} bytes"
    if stride == 0:
        kw["pattern"] = "broadcast"
        if addr.space == "shared":  # a wide broadcast still takes a wavefront per half-warp
            kw["bank_conflict_degree"] = warp_access(0, width_bytes, addr.offset).bank_conflict_degree
        return kw
    kw["stride"] = max(1.0, abs(stride) / width_bytes)
    if addr.space == "shared":
        kw["bank_conflict_degree"] = warp_access(stride, width_bytes, addr.offset).bank_conflict_degree
    return kw


def _enumerated_attributes(kw: dict, addr: Address, width_bytes: int) -> dict:
    """:func:`instruction_attributes` of an address whose lanes were enumerated (a bit field
    of ``tid.x`` narrower than a warp): a broadcast, or the stride whose bytes are the
    request's sectors' (as core.kernel.sass.launch_shape writes for a block narrower than a
    warp; its 128-byte lines, a launch-time value, are set there too); for shared memory
    the bank-conflict degree."""
    acc = lanes_access(addr.lanes, width_bytes)
    if acc.broadcast:
        kw["pattern"] = "broadcast"
    if addr.space == "shared":
        kw["bank_conflict_degree"] = acc.bank_conflict_degree
        return kw
    if not acc.broadcast:
        kw["stride"] = acc.sectors * SECTOR_BYTES / (WARP * max(1, int(width_bytes)))
    return kw
