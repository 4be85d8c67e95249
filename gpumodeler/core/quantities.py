"""Numbers and quantities as people type them: one grammar for the GUI's fields and the CLI.

Pure (no Qt, no argparse); the GUI (:mod:`gpumodeler.ui.units`) and the CLI
(:mod:`gpumodeler.cli.common`) both call :func:`parse_number` and :func:`parse_quantity`.

Grammar of a number (:func:`parse_number`), surrounding blanks ignored:

- plain and exponent notation: ``1000000``, ``-2.5``, ``.5``, ``1e6``, ``1.6E+9``;
- digit groups: ``_`` and blanks anywhere (``1_000_000``, ``1 000 000``), and commas as
  thousands separators only, in groups of three (``1,000,000``, ``1,024.5``). Any other
  comma is refused (``1,5`` may be a decimal comma; write ``1.5``);
- a prefix after the number: decimal SI ``k``/``K`` 1e3, ``M`` 1e6, ``G`` 1e9, ``T`` 1e12,
  ``P`` 1e15 (``16M`` = 16 000 000), or binary ``Ki`` 2^10, ``Mi`` 2^20, ``Gi`` 2^30,
  ``Ti`` 2^40 (``16Mi`` = 16 777 216);
- a power ``A^B`` or ``A**B`` of two plain numbers (``2^20``, ``2**20``, ``10^-3``); a sign
  before it applies to the power, as in mathematics (``-2^2`` = -4);
- the value must be a finite number (``1e400``, ``10^400``, ``0^-1`` are refused).

Grammar of a quantity (:func:`parse_quantity`): a number, then optionally a unit suffix
from the caller's table, matched case-insensitively, longest first, blanks allowed
between (``1.6GB``, ``1.6 gb``, ``15.8GB/s``, ``3.97us``, ``1.253GHz``). A number with a
unit takes no prefix of its own (the unit carries it: ``16MB``, not ``16MMB``); a number
without a unit takes the table's ``""`` scale and may carry a prefix (``16M`` bytes =
16e6 B) unless the caller forbids it. The CLI's byte units are decimal as they always
were: ``GB`` = 1e9, ``GiB`` = 2^30.

Unit tables (:func:`prefixed_units`, :data:`BYTE_UNITS`, :data:`TIME_UNITS`,
:func:`units_of`): a base unit with SI prefixes (``kHz``, ``MHz``, ``GHz``) and, for bytes,
binary ones too (``KiB``, ``MiB``). Matching is case-insensitive, so a lower-case ``m`` is
mega (``1.6 mb`` = 1.6e6 B, as the CLI always read it): milli is never a prefix here, and
times have their own table (``ms``, ``us``, ``µs``, ``ns``). The GUI's device fields
(:mod:`gpumodeler.ui.units`) read every unit of the device database through
:func:`units_of`, the CLI's byte and time flags use the same tables.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping

from .errors import QuantityError, shown

__all__ = ["QuantityError", "parse_number", "parse_quantity", "NUMBER_FORMS", "PREFIXES",
           "SI_UNIT_PREFIXES", "BINARY_UNIT_PREFIXES", "prefixed_units", "BYTE_UNITS",
           "TIME_UNITS", "units_of"]

#: Prefixes a number may carry (case-sensitive: ``m`` is not ``M``).
PREFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
            "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
#: The forms a number takes, as a message lists them.
NUMBER_FORMS = "e.g. 1000000, 1e6, 1,000,000, 16M, 16Mi or 2^20"

#: Prefixes of a unit (``kHz``, ``GB``), lower case: the tables are matched case-insensitively.
SI_UNIT_PREFIXES = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
BINARY_UNIT_PREFIXES = {"ki": 2.0**10, "mi": 2.0**20, "gi": 2.0**30, "ti": 2.0**40}


def prefixed_units(unit: str, *, binary: bool = False, bare: bool = True) -> dict[str, float]:
    """A unit table for :func:`parse_quantity`: ``unit`` (``"hz"``, ``"b"``, ``"b/s"``)
    alone and with each SI prefix (and binary prefix when ``binary``), scaled to the base
    unit; with ``bare`` a number without a unit is in the base unit (``""`` -> 1)."""
    unit = unit.lower()
    table = {"": 1.0} if bare else {}
    table[unit] = 1.0
    prefixes = SI_UNIT_PREFIXES | (BINARY_UNIT_PREFIXES if binary else {})
    table.update({p + unit: scale for p, scale in prefixes.items()})
    return table


#: Bytes: B, kB/KB, MB, GB, TB (decimal) and KiB, MiB, GiB, TiB (binary).
BYTE_UNITS = prefixed_units("b", binary=True)
#: Seconds: s, ms, us/µs/μs (micro sign or Greek mu), ns.
TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6,
              "ns": 1e-9}
# Units of the device database (db/fields.py UNITS) that are counted, not measured: no
# unit suffix, whole numbers where noted in :func:`units_of`.
_PLAIN_UNITS = ("count", "bit", "year", "ratio")


def units_of(unit: str) -> dict[str, float]:
    """The table a value in the device database's ``unit`` is typed with: Hz, B/s and W with
    SI prefixes, B with SI and binary ones, s in s/ms/µs/ns, cycle-based units with their
    own name, counted units (count, bit, year, ratio) as bare numbers."""
    if unit == "B":
        return dict(BYTE_UNITS)
    if unit == "B/s":
        return prefixed_units("b/s", binary=True)
    if unit == "Hz":
        return prefixed_units(unit)
    if unit == "W":  # matched case-insensitively, "mW" would read as megawatts: W and kW only
        return {"": 1.0, "w": 1.0, "kw": 1e3}
    if unit == "s":
        return dict(TIME_UNITS)
    if unit in _PLAIN_UNITS:
        return {"": 1.0}
    table = {"": 1.0, unit.lower(): 1.0}  # cycle, B/cycle, 1/cycle and any other
    if unit == "cycle":
        table["cycles"] = 1.0
    return table


_PLAIN = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_GROUPED = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_UNSIGNED = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_POWER = re.compile(rf"([-+]?)({_UNSIGNED})(?:\^|\*\*)({_PLAIN})")
_PREFIXED = re.compile(rf"({_PLAIN})(Ki|Mi|Gi|Ti|[kKMGTP])?")
_COMMA = "a comma may only group digits by three (1,000,000); use a point for decimals (1.5)"
_BLANKS = str.maketrans("", "", "_ \t\u00a0\u2009\u202f")


def parse_number(text, *, prefixes: bool = True) -> float:
    """The number ``text`` denotes in the grammar above (module docstring).

    With ``prefixes=False`` a prefix (``16M``) is refused: used where a unit follows the
    number and carries the prefix. Raises :class:`QuantityError` (one line, the text cut
    to a readable length) saying what is accepted."""
    raw = str(text).strip()
    t = raw.translate(_BLANKS)
    if not t:
        raise QuantityError(f"needs a number ({NUMBER_FORMS})")
    if "," in t:
        head = re.match(r"[-+]?[\d,]+(?:\.\d*)?(?:[eE][-+]?\d+)?", t)
        if not head or not _GROUPED.fullmatch(head.group(0)):
            raise QuantityError(f"{shown(raw)}: {_COMMA}")
        t = t.replace(",", "")
    power = _POWER.fullmatch(t)
    if power:
        try:
            value = float(power.group(2)) ** float(power.group(3))
            value = -value if power.group(1) == "-" else value   # -2^2 is -(2^2) = -4
        except (OverflowError, ZeroDivisionError):
            value = math.inf
    else:
        m = _PREFIXED.fullmatch(t)
        if not m or (m.group(2) and not prefixes):
            forms = NUMBER_FORMS if prefixes else "e.g. 1000000, 1e6, 1,000,000 or 2^20"
            raise QuantityError(f"{shown(raw)} is not a number ({forms})")
        value = float(m.group(1)) * (PREFIXES[m.group(2)] if m.group(2) else 1.0)
    if isinstance(value, complex) or not math.isfinite(value):
        raise QuantityError(f"{shown(raw)} is not a finite number (at most about 1.8e308)")
    return value


def parse_quantity(text, units: Mapping[str, float], what: str, example: str, *,
                   bare_prefixes: bool = True) -> float:
    """The value of ``text`` in the base unit: the number times the scale of its unit.

    ``units`` maps lower-case suffixes to scales; ``""`` (if present) is the scale of a
    number written without a unit, which may carry a prefix unless ``bare_prefixes`` is
    False. ``what`` and ``example`` make the message: "'x' is not a valid size in bytes
    (e.g. 1.6e9 or 1.6GB; units: b, kb, ...)"."""
    raw = str(text).strip()
    low = raw.lower()
    valid = ", ".join(u for u in units if u) or "none"
    problem = f"{shown(raw)} is not a valid {what} (e.g. {example}; units: {valid})"
    suffix = next((u for u in sorted(units, key=len, reverse=True) if u and low.endswith(u)), "")
    if not suffix and "" not in units:
        raise QuantityError(problem)
    number = raw[:len(raw) - len(suffix)].strip()
    try:
        value = parse_number(number, prefixes=bare_prefixes and not suffix) * units[suffix]
    except QuantityError as exc:
        if _COMMA in str(exc):
            raise QuantityError(f"{shown(raw)}: {_COMMA}") from None
        if "finite" in str(exc):
            raise QuantityError(f"{shown(raw)} is not a finite {what}") from None
        raise QuantityError(problem) from None
    if not math.isfinite(value):
        raise QuantityError(f"{shown(raw)} is not a finite {what}")
    return value
