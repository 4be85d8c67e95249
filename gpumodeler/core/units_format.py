"""Times shown to people: the one rule that picks the unit (s, ms, µs or ns) for the CLI's
output, the GUI's fields and plots, the report and the timeline pictures.

Core keeps seconds; a time is converted only where it is shown, by :func:`time_unit` (the
largest unit in which the magnitude is at least 1) and :func:`format_time`.
"""
from __future__ import annotations

#: display units for times, largest first, with their size in seconds
TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def time_unit(seconds: float, smallest: str = "ns") -> tuple[str, float]:
    """``(name, seconds per unit)`` of the largest unit of :data:`TIME_UNITS` in which
    ``|seconds|`` is at least 1: ('ms', 1e-3) for 0.146. A magnitude below the ``smallest``
    unit allowed (zero, NaN) takes that unit; an infinite one takes seconds."""
    names = [name for name, _ in TIME_UNITS]
    if smallest not in names:
        raise ValueError(f"unknown time unit {smallest!r}; valid: {', '.join(names)}")
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
