"""Quantities shown to people. Times: the one rule that picks the unit (s, ms, µs or ns)
for the CLI's output, the GUI's fields and plots, the report and the timeline pictures.
Other quantities (J, Hz, B/s, W) in engineering notation: :func:`format_si`, as the
report's summary gives energies ("12.3 mJ").

Core keeps base units; a value is converted only where it is shown, by :func:`time_unit`
(the largest unit in which the magnitude is at least 1), :func:`format_time` and
:func:`format_si`.
"""
from __future__ import annotations

import math

#: display units for times, largest first, with their size in seconds
TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))
_TIME_UNIT_NAMES = tuple(name for name, _ in TIME_UNITS)


def time_unit(seconds: float, smallest: str = "ns") -> tuple[str, float]:
    """``(name, seconds per unit)`` of the largest unit of :data:`TIME_UNITS` in which
    ``|seconds|`` is at least 1: ('ms', 1e-3) for 0.146. A magnitude below the ``smallest``
    unit allowed (zero, NaN) takes that unit; an infinite one takes seconds."""
    if smallest not in _TIME_UNIT_NAMES:
        raise ValueError(f"unknown time unit {smallest!r}; valid: {', '.join(_TIME_UNIT_NAMES)}")
    size = abs(seconds)
    for name, scale in TIME_UNITS:
        if size >= scale or name == smallest:
            return name, scale
    raise AssertionError("unreachable: the smallest unit ends the loop")


def format_time(seconds: float, digits: int = 4, smallest: str = "ns",
                unit: tuple[str, float] | None = None) -> str:
    """``seconds`` in its :func:`time_unit` (or in ``unit``, a ``(name, scale)`` pair chosen
    for a whole column or axis), ``digits`` significant digits (``%g``):
    ``format_time(0.0001234)`` is ``'123.4 µs'``."""
    name, scale = unit if unit is not None else time_unit(seconds, smallest)
    return f"{seconds / scale:.{digits}g} {name}"


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
