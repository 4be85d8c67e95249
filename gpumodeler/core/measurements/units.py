"""Unit tables of the measurement files, and number parsing that never guesses a unit.

Each tool spells its units its own way, and the same spelling means different factors:

* **nvprof** (``--csv``) writes one unit row under every header. Its byte prefixes are
  *binary*: ``KB`` = 2¹⁰ B, ``MB`` = 2²⁰ B, ``GB`` = 2³⁰ B, and ``GB/s`` = 2³⁰ B/s (a copy of
  0.125 KB in 1.536 µs is printed as 0.077610 GB/s: 128 B / 1.536 µs / 2³⁰). Times are
  ``ns``, ``us``, ``ms`` or ``s``.
* **Nsight Compute** (``ncu --csv``) spells units as words (``byte``, ``Kbyte``,
  ``usecond``, ``Gbyte/second``, ``cycle/nsecond``) and scales them by SI factors of 1000.
* **gpumodeler timings** CSV (our own, :mod:`timings`): SI prefixes are decimal (``kB``,
  ``MB`` = 10³, 10⁶) and IEC prefixes binary (``KiB``, ``MiB``); see docs/measurements.md.

A unit that is not in a table is an error naming it and the valid ones; no table falls back
to another.
"""
from __future__ import annotations

import math
import re

KIB, MIB, GIB, TIB = 2 ** 10, 2 ** 20, 2 ** 30, 2 ** 40

NVPROF_TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
NVPROF_SIZE = {"B": 1.0, "KB": KIB, "MB": MIB, "GB": GIB, "TB": TIB}
NVPROF_RATE = {"B/s": 1.0, "KB/s": KIB, "MB/s": MIB, "GB/s": GIB, "TB/s": TIB}

TIMINGS_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
TIMINGS_SIZE = {"B": 1.0, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
                "KiB": KIB, "MiB": MIB, "GiB": GIB, "TiB": TIB}

_NCU_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_NCU_TIME = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}
_NCU_PER_TIME = {"nsecond": 1e9, "usecond": 1e6, "msecond": 1e3, "second": 1.0}
_NCU_FREQ = {"hz": 1.0, "Khz": 1e3, "khz": 1e3, "Mhz": 1e6, "mhz": 1e6, "Ghz": 1e9, "ghz": 1e9}


def ncu_unit(unit: str) -> tuple[float, str]:
    """(factor, normalised unit) of an Nsight Compute unit word.

    Bytes become ``B``, times ``s``, byte rates ``B/s``, frequencies (``cycle/usecond``,
    ``Ghz``) ``Hz``, ``byte/block`` ``B/block``; ``%`` stays; any other word (``inst``,
    ``warp``, ``sector``, ``cycle``, ``register/thread``...) is a count unit kept as written.
    """
    u = unit.strip()
    if u in ("", "%"):
        return 1.0, u or "1"
    if u in _NCU_TIME:
        return _NCU_TIME[u], "s"
    if u in _NCU_FREQ:
        return _NCU_FREQ[u], "Hz"
    m = re.fullmatch(r"([KMGT]?)byte(/(\w+))?", u)
    if m:
        factor = _NCU_PREFIX[m.group(1)]
        per = m.group(3)
        if per is None:
            return factor, "B"
        if per in _NCU_TIME:
            return factor * _NCU_PER_TIME[per], "B/s"
        return factor, f"B/{per}"
    m = re.fullmatch(r"cycle/(\w+)", u)
    if m and m.group(1) in _NCU_TIME:
        return _NCU_PER_TIME[m.group(1)], "Hz"
    return 1.0, u


_BARE = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_WITH_UNIT = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ%/]+)$")


def is_number(text: str) -> bool:
    """A bare decimal number (no unit suffix)."""
    return bool(_BARE.match(text.strip()))


def split_number(text: str) -> tuple[float, str] | None:
    """``"12.5"`` -> (12.5, ""), ``"14.2%"`` -> (14.2, "%"), ``"3.1GB/s"`` -> (3.1, "GB/s");
    None when the text is not a number with an optional unit suffix."""
    t = text.strip()
    if t and "_" not in t and (t[0].isdigit() or t[0] in ".+-"):
        try:   # the common case, a bare decimal number, without the expression
            value = float(t)
        except ValueError:
            pass
        else:
            if math.isfinite(value) and t[-1] not in "fFnN":   # not 'inf', 'nan', '-infinity'
                return value, ""
    if _BARE.match(t):
        return float(t), ""
    m = _WITH_UNIT.match(t)
    if m:
        return float(m.group(1)), m.group(2)
    return None


def rounding_error(text: str) -> float:
    """Relative error of a printed number from its last digit: half a unit in the last
    place over the value (``"1.536"`` -> 0.0005 / 1.536); 0 for exponent notation."""
    t = text.strip().lstrip("+-")
    if "e" in t.lower():
        return 0.0
    try:
        value = abs(float(t))
    except ValueError:
        return 0.0
    if value == 0:
        return math.inf
    decimals = len(t.split(".")[1]) if "." in t else 0
    return 0.5 * 10.0 ** -decimals / value


def valid(units: dict) -> str:
    """The valid units of a table, for messages."""
    return ", ".join(units)


def printed_half_unit(text: str) -> float:
    """Half a unit in the last printed digit of a number, in the number's own unit
    (``"2.441406e-03"`` -> 5e-10, ``"4096.000000"`` -> 5e-7, ``"12"`` -> 0.5): how far
    the value a profiler rounded can lie from what it printed."""
    t = text.strip().lstrip("+-")
    mantissa, exponent = t, 0
    if "e" in t.lower():
        mantissa, _, exp_text = t.lower().partition("e")
        try:
            exponent = int(exp_text)
        except ValueError:
            return 0.0
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (exponent - decimals)


def whole_bytes(value: float, half_unit_bytes: float = 0.0) -> tuple[float, float]:
    """(a printed size as whole bytes, how far the true size may lie from it in bytes).

    A copy moves a whole number of bytes: the nearest one is taken. When the print is coarser
    than a byte (``half_unit_bytes`` > 0.5: 1.396984 GB is ± 537 B), the uncertainty is
    returned too, so that copies of one size printed in different units can be matched
    (:func:`gpumodeler.core.transfers.selection.merge_sizes`)."""
    return float(round(value)), max(0.0, float(half_unit_bytes) - 0.5)
