"""Registers an instruction writes and reads, for the register dependencies (RAW) of the
kernel graph.

Names: general registers ``R0``–``R254`` and uniform registers ``UR0``–``UR62`` (Turing on),
predicates ``P0``–``P6`` and uniform predicates ``UP0``–``UP6``. The constant registers
``RZ``, ``URZ``, ``PT``, ``UPT`` carry no dependency. ``PR``/``UPR`` (all predicates,
``P2R``/``R2P``) stand for every predicate. Convergence-barrier registers (``B0``…, used by
``BSSY``/``BSYNC``) and scoreboards (``SB0``…, ``DEPBAR``) are control, not data, and are
not tracked as registers.

Rules (from the operand conventions of the CUDA Binary Utilities instruction-set reference,
checked against the fixtures' listings):

* **Destinations** come first. Stores, branches, barriers and ``EXIT`` have none. When the
  first operand is a predicate (``ISETP P0, PT, ...``, ``PLOP3``, ``SHFL.DOWN PT, R5, ...``,
  ``LOP3.LUT P0, RZ, ...``, ``ATOMG PT, R4, ...``) the first two operands are destinations;
  otherwise the first one is, plus the predicates directly after it (carry-outs:
  ``IADD3 R2, P0, P1, ...``, ``LEA R2, P0, ...``; ``VOTE`` has one).
* **Width**: an operand may span several consecutive registers: a ``.64`` suffix
  (``R2.64``); the data operand of a load, store or atomic with a ``.64``/``.128`` size
  (``LDG.E.128 R4`` = R4–R7); every register of FP64 arithmetic (``DFMA R4, R6, R8, R4``);
  ``IMAD.WIDE`` (destination and addend 64-bit); ``LDC.64``/``ULDC.64``/``MOV.64``/
  ``IADD.64``; ``CS2R`` (64-bit unless ``.32``); conversions by their type modifiers
  (``F2F.F64.F32``: destination 64-bit, source 32-bit; with one type the destination of
  ``I2F`` and ``FRND``, the source of ``F2I`` unless the type is an integer ``S64``/``U64``);
  MMA operands by shape and types (``HMMA.16816.F32``: D and C 4 registers, A 4, B 2; a warp
  holds m·n/32 elements of D, m·k/32 of A, k·n/32 of B; Hopper's warpgroup ``HGMMA``
  m·n/128 of D, its A/B come from descriptors). The address of a global or generic access
  with the ``.E`` (extended, 64-bit) modifier is a register pair: Turing prints it
  ``[R2]``, Ampere and later ``[R2.64]``.
* Everything else is one register. Registers inside addresses (``[R2.64+0x10]``,
  ``desc[UR4][R2.64]``, ``c[0x0][R3]``) are read.
"""
from __future__ import annotations

from functools import lru_cache
import re

_REG = re.compile(r"(?<![A-Za-z0-9_])(U?R)(\d+|Z)(\.64|\.128)?(?![A-Za-z0-9_])")
_PRED = re.compile(r"(?<![A-Za-z0-9_])!?(U?P)(\d|T)(?![A-Za-z0-9_])")
_PR_ALL = re.compile(r"(?<![A-Za-z0-9_])(U?PR)(?![A-Za-z0-9_])")
_IS_PRED = re.compile(r"^!?U?P[T0-6]$")
_NO_DEST_UNITS = ("branch", "barrier", "exit")
_STORES = {"ST", "STG", "STS", "STL", "RED", "REDG", "UTMASTG", "UBLKRED", "UTMAREDG",
           "LDGSTS", "UBLKCP", "UTMALDG", "STSM", "UTMAPF", "CCTL", "NOP", "SUST", "SURED"}
_EXTENDED = {"LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "REDG", "LDGSTS"}
_FP64 = {"DADD", "DFMA", "DMUL", "DMNMX", "DSET", "DSETP"}
_WIDE64 = {"MOV", "UMOV", "IADD", "UIADD", "IADD3", "UIADD3", "IMNMX", "LDC", "ULDC", "LDCU", "SEL",
           "USEL"}
_TYPE_BITS = {"F64": 64, "S64": 64, "U64": 64, "F32": 32, "S32": 32, "U32": 32, "F16": 16,
              "BF16": 16, "S16": 16, "U16": 16, "S8": 8, "U8": 8, "TF32": 32, "E4M3": 8,
              "E5M2": 8, "S4": 4, "U4": 4, "B1": 1, "E2M1": 4}
_MMA = {"HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA", "HGMMA", "IGMMA", "BGMMA"}


def _mma_shape(mods):
    for m in mods:
        if re.fullmatch(r"\d+X\d+X\d+", m):  # HGMMA.64x128x16
            return tuple(int(x) for x in m.split("X"))
        if re.fullmatch(r"\d{3,5}", m):
            mm = 16 if m.startswith("16") else 8
            rest = m[len(str(mm)):]
            return mm, int(rest[0]), int(rest[1:])
    return None


def _mma_widths(mnem, mods):
    """Registers per operand of an MMA: (D, A, B, C)."""
    shape = _mma_shape(mods)
    types = [t for t in mods if t in _TYPE_BITS]
    if mnem == "DMMA":
        dbits, abits = 64, 64
    elif mnem in ("IMMA", "IGMMA"):
        dbits, abits = 32, (_TYPE_BITS.get(types[1] if len(types) > 1 else "S8", 8))
    elif mnem in ("BMMA", "BGMMA"):
        dbits, abits = 32, 1
    else:
        dbits = _TYPE_BITS.get(types[0], 32) if types else 32
        abits = _TYPE_BITS.get(types[1], 16) if len(types) > 1 else 16
    if shape is None:
        return 1, 1, 1, 1
    m, n, k = shape
    lanes = 128 if mnem.endswith("GMMA") else 32
    regs = lambda elems, bits: max(1, -(-elems * bits // (32 * lanes)))
    d = regs(m * n, dbits)
    return d, regs(m * k, abits), regs(k * n, abits), d


def _data_width(mods) -> int:
    if "128" in mods:
        return 4
    if "64" in mods:
        return 2
    return 1


def _expand(kind: str, num: str, width: int) -> list[str]:
    if num == "Z":
        return []
    base = int(num)
    return [f"{kind}{base + i}" for i in range(width)]


@lru_cache(maxsize=65536)
def _regs_in(operand: str, width: int = 1, address_width: int = 1) -> tuple:
    """Register names an operand names. ``width`` applies to a bare register operand;
    registers inside brackets are addresses (their own ``.64`` suffix decides, else
    ``address_width``; the general register in ``desc[UR4][R2]`` is the address)."""
    out = []
    bare = "[" not in operand
    for m in _REG.finditer(operand):
        kind, num, suffix = m.groups()
        if suffix:
            w = 2 if suffix == ".64" else 4
        elif bare:
            w = width
        else:
            w = address_width if kind == "R" else 1
        out.extend(_expand(kind, num, w))
    for m in _PRED.finditer(operand):
        kind, num = m.groups()
        if num != "T":
            out.append(f"{kind}{num}")
    for m in _PR_ALL.finditer(operand):
        prefix = "UP" if m.group(1) == "UPR" else "P"
        out.extend(f"{prefix}{i}" for i in range(7))
    return tuple(out)


@lru_cache(maxsize=4096)
def _is_pred(operand: str) -> bool:
    return bool(_IS_PRED.match(operand.strip()))


def n_destinations(mnem: str, unit: str | None, operands) -> int:
    """How many leading operands are destinations (see the module rules)."""
    if not operands or unit in _NO_DEST_UNITS or mnem in _STORES:
        return 0
    if mnem in ("BMOV", "R2B"):
        return 0
    if _is_pred(operands[0]):
        return min(2, len(operands))
    n = 1
    limit = 2 if mnem in ("VOTE", "VOTEU") else 3
    while n < len(operands) and n < limit and _is_pred(operands[n]) \
            and not operands[n].strip().startswith("!"):
        n += 1
    return n


def reg_access(ins, unit: str | None) -> tuple[tuple, tuple]:
    """``(written, read)`` register names of a :class:`~.listing.SassInstruction`."""
    return _access(ins.mnemonic, ins.modifiers, ins.operands, ins.guard, unit)


@lru_cache(maxsize=65536)
def _access(mnem, mods, operands, guard, unit):
    ops = list(operands)
    nd = n_destinations(mnem, unit, ops)
    widths_dst = [1] * nd
    widths_src = [1] * (len(ops) - nd)
    if mnem in _FP64:
        widths_dst = [1 if _is_pred(o) else 2 for o in ops[:nd]]
        widths_src = [2] * len(widths_src)
    elif mnem in ("IMAD", "UIMAD", "IMUL") and "WIDE" in mods:
        widths_dst = [2] + widths_dst[1:]
        if mnem != "IMUL" and len(widths_src) >= 3:
            widths_src[2] = 2
    elif mnem in ("CS2R",) and "32" not in mods:
        widths_dst = [2] * nd
    elif mnem in _WIDE64 and "64" in mods:
        widths_dst = [2] * nd
        if mnem not in ("LDC", "ULDC", "LDCU"):
            widths_src = [2] * len(widths_src)
    elif mnem in ("F2F", "I2F", "F2I", "I2I", "FRND"):
        types = [t for t in mods if t in _TYPE_BITS]
        bits = [_TYPE_BITS[t] for t in types]
        if len(bits) >= 2:
            dst64, src64 = bits[0] == 64, bits[1] == 64
        elif len(bits) == 1:
            is64 = bits[0] == 64
            if mnem == "F2I":
                dst64, src64 = (is64, False) if types[0] in ("S64", "U64") else (False, is64)
            elif mnem == "FRND":
                dst64 = src64 = is64
            else:
                dst64, src64 = is64, False
        else:
            dst64 = src64 = False
        widths_dst = [2 if dst64 else 1] * nd
        widths_src = [2 if src64 else 1] * len(widths_src)
    elif mnem in _MMA:
        d, a, b, c = _mma_widths(mnem, mods)
        widths_dst = [d] * nd
        widths_src = [a, b, c][:len(widths_src)] + [1] * max(0, len(widths_src) - 3)
    elif mnem == "LDSM":
        n = 4 if "4" in mods else 2 if "2" in mods else 1
        widths_dst = [n] * nd
    elif unit == "ldst":
        w = _data_width(mods)
        if nd:
            widths_dst = [1 if _is_pred(o) else w for o in ops[:nd]]
        # the data operands of a store/atomic: bare registers after the address
        widths_src = [w if "[" not in o else 1 for o in ops[nd:]]
    # ".E" (extended) global/generic accesses take a 64-bit address; Turing listings print
    # it as [R2], Ampere and later as [R2.64]
    aw = 2 if unit == "ldst" and "E" in mods and mnem in _EXTENDED else 1
    written, read = [], []
    for o, w in zip(ops[:nd], widths_dst):
        written.extend(_regs_in(o, w))
    for o, w in zip(ops[nd:], widths_src):
        read.extend(_regs_in(o, w, aw))
    if guard:
        read.extend(_regs_in(guard.lstrip("@")))
    return tuple(written), tuple(read)
