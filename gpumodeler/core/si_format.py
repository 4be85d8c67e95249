"""Quantities other than times shown to people in engineering notation: a value in its base
unit (J, Hz, B/s, W) with the SI prefix that puts its mantissa in [1, 1000), as the report's
summary gives energies ("12.3 mJ"). Times use :func:`gpumodeler.core.units_format.format_time`.
"""
from __future__ import annotations

import math

#: SI prefixes, largest first, with their factor (the empty prefix for 1 ... 999)
SI_PREFIXES = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0),
               ("m", 1e-3), ("µ", 1e-6), ("n", 1e-9), ("p", 1e-12))


def format_si(value: float, unit: str, digits: int = 4) -> str:
    """``value`` (in ``unit``) with the largest SI prefix in which its magnitude is at least
    1, ``digits`` significant digits: ``format_si(0.0123, "J")`` is ``'12.3 mJ'``. Zero
    takes no prefix; a magnitude below the smallest prefix takes the smallest; a value that
    is not finite is written as Python writes it, with the bare unit."""
    if value == 0 or not math.isfinite(value):
        return f"{value:.{digits}g} {unit}"
    size = abs(value)
    i = next((k for k, (_, scale) in enumerate(SI_PREFIXES) if size >= scale), len(SI_PREFIXES) - 1)
    text = f"{value / SI_PREFIXES[i][1]:.{digits}g}"
    if abs(float(text)) >= 1000 and i > 0:  # 999.96 mJ at 4 digits is 1 J
        i -= 1
        text = f"{value / SI_PREFIXES[i][1]:.{digits}g}"
    return f"{text} {SI_PREFIXES[i][0]}{unit}"
