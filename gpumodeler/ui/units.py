"""Quantities as people read and type them: "1253 MHz", "15.8 GB/s", "96 KiB".

Core and the database keep base units (Hz, B/s, B); the GUI converts only here, at the edge
(house style: units are explicit, convert only at the edges). :func:`parse_quantity` accepts what
:func:`format_quantity` prints, plus plain numbers in the base unit ("1.253e9"), in the
grammar and unit tables of :mod:`gpumodeler.core.quantities` that the CLI's flags use.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

# One number grammar for the GUI and the CLI (16M, 16Mi, 2^20, 1,000,000): core/quantities.py.
from gpumodeler.core.errors import shown
from gpumodeler.core.quantities import QuantityError, parse_number, units_of
from gpumodeler.core.quantities import parse_quantity as core_parse_quantity
from gpumodeler.core.units_format import time_unit

__all__ = ["QuantityError", "format_quantity", "number_text", "parse_exact_number",
           "parse_number", "parse_quantity"]

# SI prefixes for rates and clocks; bytes use binary prefixes when the value is a whole
# number of KiB/MiB/GiB (memory sizes), SI otherwise (bandwidths).
_SI = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
_BINARY = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
# Units that take a prefix when shown.
_SCALED_UNITS = ("Hz", "B", "B/s", "W")
#: A clock typed as a bare number below this (100 kHz) is refused as a missing unit.
MIN_BARE_CLOCK_HZ = 1e5


def _trim(x: float, digits: int = 4) -> str:
    """Up to ``digits`` significant digits (never fewer than the integer part), no trailing
    zeros, no exponent for usual sizes."""
    if x == 0:
        return "0"
    if abs(x) >= 1e7 or abs(x) < 1e-3:
        return f"{x:.{digits}g}"
    text = f"{x:.{max(digits - 1 - int(math.floor(math.log10(abs(x)))), 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_quantity(value, unit: str, digits: int = 4) -> str:
    """``value`` (in the base ``unit``) as short readable text; None is "unknown".

    ``digits`` significant digits (use ~12 for text a user edits, so nothing is rounded)."""
    if value is None:
        return "unknown"
    if isinstance(value, str) or unit == "text":
        return str(value)
    if isinstance(value, bool):
        return str(value)
    if unit == "s":
        name, scale = time_unit(value)
        return f"{_trim(value / scale, digits)} {name}"
    if unit in _SCALED_UNITS and value:
        if unit == "B" and float(value).is_integer():
            for name, scale in _BINARY:
                if abs(value) >= scale and (value * 1000) % scale == 0:
                    return f"{_trim(value / scale, digits)} {name}B"
        # Clocks read best in MHz (GPU "1253 MHz", CPU "4400 MHz").
        prefixes = (("M", 1e6),) if unit == "Hz" and 1e6 <= abs(value) < 1e11 else _SI
        if unit == "W":  # typed back as W or kW only (units_of: "mW" would read as MW)
            prefixes = (("k", 1e3),)
        for name, scale in prefixes:
            if abs(value) >= scale:
                return f"{_trim(value / scale, digits)} {name}{unit}"
        return f"{_trim(value, digits)} {unit}"
    if unit in ("count", "bit", "year") and float(value).is_integer():
        return str(int(value))
    return _trim(float(value), max(digits, 6))


def parse_quantity(text: str, unit: str):
    """The value in the base ``unit`` that ``text`` denotes: "1253 MHz", "1.253e9",
    "15.8 GB/s", "4 GiB", "3.97 µs". Whole-number units ("count", "bit", "year") give an
    int. Read by core's grammar (:func:`gpumodeler.core.quantities.parse_quantity` over
    the unit table :func:`~gpumodeler.core.quantities.units_of`), the one the CLI's flags
    use. Raises :class:`QuantityError` with a message naming the expected form."""
    text = str(text).strip()
    if unit == "text":
        if not text:
            raise QuantityError("needs some text")
        return text
    if not text:
        raise QuantityError(f"needs a number{_unit_hint(unit)}")
    table = units_of(unit)
    try:
        value = core_parse_quantity(text, table, f"number{_unit_hint(unit)}", "")
    except QuantityError as exc:
        if "comma" in str(exc) or "finite" in str(exc):
            raise QuantityError(str(exc)) from None
        spelled = [_spelled(u, unit) for u in table if u]
        units = f"; units: {', '.join(spelled)}" if spelled else ""
        raise QuantityError(f"needs a number{_unit_hint(unit)}, got {shown(text)}{units}") from None
    if unit == "Hz" and 0 < value < MIN_BARE_CLOCK_HZ and not any(c.isalpha() for c in text):
        # "1300" typed into a clock shown as "1253 MHz": a bare number is in Hz, and no
        # processor runs at 1300 Hz, so say how to write what was surely meant
        raise QuantityError(f"{shown(text)} would be {value:g} Hz, too slow for a clock; "
                            f"write the unit, e.g. {shown(text)} MHz")
    if unit in ("count", "bit", "year"):
        if not float(value).is_integer():
            raise QuantityError(f"needs a whole number, got {shown(text)}")
        return int(value)
    return value


def _spelled(key: str, unit: str) -> str:
    """A unit table's lower-case key as people write it: "mhz" -> "MHz", "gib" -> "GiB"."""
    base = unit.lower()
    if unit != "s" and key.endswith(base):
        prefix = key[: len(key) - len(base)]
        return (prefix[:1].upper() if prefix != "k" else "k") + prefix[1:] + unit
    return key


def _unit_hint(unit: str) -> str:
    examples = {"Hz": " in Hz (e.g. 1253 MHz)", "B/s": " in B/s (e.g. 15.8 GB/s)",
                "B": " of bytes (e.g. 4 GiB)", "s": " of seconds (e.g. 3.97 µs)",
                "count": " (a whole number)", "bit": " of bits", "ratio": " (e.g. 0.7)",
                "W": " in W", "B/cycle": " of bytes per cycle", "1/cycle": " per cycle",
                "year": " (a year)"}
    return examples.get(unit, f" in {unit}")


# -- numbers typed and shown with every digit -------------------------------------------------
_DECIMAL_PREFIXES = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_BINARY_PREFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_PLAIN_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_EXACT_PREFIXED = re.compile(rf"([-+]?{_PLAIN_NUMBER})(Ki|Mi|Gi|Ti|[kKMGTP])?")
_EXACT_POWER = re.compile(rf"([-+]?)({_PLAIN_NUMBER})(?:\^|\*\*)(\+?\d+)")
_GROUPING = str.maketrans("", "", "_ \t\u00a0\u2009\u202f,")


def parse_exact_number(text) -> int | float:
    """What :func:`parse_number` reads (the one grammar: ``16777216``, ``1e6``,
    ``1,000,000``, ``16M``, ``16Mi``, ``2^20``), keeping every digit: a whole number is an
    exact ``int`` at any size (``12345678901234567891``, ``1e23``, ``2^64``), any other
    the float. Raises :class:`QuantityError` as ``parse_number`` does."""
    value = parse_number(text)       # the grammar, its checks and its messages
    exact = _exact_value(str(text).translate(_GROUPING))
    if exact is not None and exact.denominator == 1:
        return int(exact)
    if float(value).is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _exact_value(t: str) -> Fraction | None:
    """The rational ``t`` denotes (commas and blanks already gone), or None for a form
    read only as a float (a negative or fractional power)."""
    try:
        m = _EXACT_PREFIXED.fullmatch(t)
        if m:
            scale = _DECIMAL_PREFIXES.get(m.group(2)) or _BINARY_PREFIXES.get(m.group(2)) or 1
            return Fraction(m.group(1)) * scale
        m = _EXACT_POWER.fullmatch(t)
        if m:
            power = Fraction(m.group(2)) ** int(m.group(3))
            return -power if m.group(1) == "-" else power
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return None


def number_text(value) -> str:
    """A number as text that reads back as the same value, every digit kept:
    ``16777216`` (never ``1.67772e+07``), ``0.7037871234``, ``1e+300``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)
