"""Display units for times and sizes (conversions happen only here, at the edge)."""
from __future__ import annotations

import math

import numpy as np

from gpumodeler.core.units_format import TIME_UNITS, format_time  # noqa: F401  (re-exported)
from gpumodeler.core.units_format import time_unit as _unit_of


def time_unit(seconds) -> tuple[str, float]:
    """The unit that shows ``seconds`` (a number or array; its largest finite value) with
    1 to 3 digits before the point: ('ms', 1e-3) for 0.146."""
    arr = np.abs(np.asarray(seconds, dtype=float))
    arr = arr[np.isfinite(arr) & (arr > 0)]
    return _unit_of(float(arr.max()) if arr.size else 1.0)


def fmt_time(seconds, digits: int = 4) -> str:
    """A time for a results table: :func:`gpumodeler.core.units_format.format_time`, and "—"
    for none or a non-finite one."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    return format_time(seconds, digits, unit=time_unit(seconds))  # zero shows as "0 s"


def fmt_bytes(n: float) -> str:
    for name, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.4g} {name}"
    return f"{n:g} B"


def fmt_count(n: float) -> str:
    """1.5625e+06 -> '1 562 500' (large fractional counts rounded: 182734475.3 ->
    '182 734 475'); small fractional numbers as %g."""
    if (float(n).is_integer() or abs(n) >= 1e4) and abs(n) < 1e15:
        return f"{round(n):,}".replace(",", "\u202f")
    return f"{n:.6g}"
