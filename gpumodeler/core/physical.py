"""The one rule for results that cannot be printed as results.

A number the model computes is shown (by the CLI's text and JSON alike, the report, the
GUI) only when it is a finite number that hardware can give: a time or a size that is not
a number, an infinity, a negative energy, an infinite bandwidth, would read as a result
while it only says that an input was outside what the model computes (a λ of 1e-320, a
board power of -300 W, two copies of different sizes measured as equally long). Such a
result raises :class:`~gpumodeler.core.errors.UnphysicalResult` naming the quantity and,
where the caller knows it, the input that led to it.

* :func:`require_physical` checks one scalar: finite, and >= 0 (or > 0 with ``positive``).
* :func:`require_finite` checks every number inside a result (dicts, lists, tuples, numpy
  arrays, nested): the first one that is not finite is named by its path
  (``transfer_times_s[1]``).
* :func:`first_non_finite` finds that number without raising (loads no numpy: an array in
  the result means numpy is loaded already).
"""
from __future__ import annotations

import math
import sys

from gpumodeler.core.errors import UnphysicalResult, shown
from gpumodeler.core.finite import PLAIN_TYPES

#: the end of a message when the caller names no input
DEFAULT_CAUSE = ("an input is outside the range the model computes (e.g. a λ, clock, size or "
                 "loop variable too small or too large); check the inputs")

def is_finite(value) -> bool:
    """Whether a real or complex number (Python's or numpy's) is finite."""
    try:
        return math.isfinite(value)
    except TypeError:  # a complex number
        return math.isfinite(value.real) and math.isfinite(value.imag)


def describe(value) -> str:
    """How a non-finite number reads in a message: undefined (NaN) or overflowed."""
    return "undefined" if value != value else "it overflowed"


def first_non_finite(obj, name: str = ""):
    """(path, value) of the first number in ``obj`` that is not finite, or None."""
    np = sys.modules.get("numpy")
    if isinstance(obj, dict):
        for key, value in obj.items():
            if value.__class__ in PLAIN_TYPES:  # text, counts: no call per value
                continue
            found = first_non_finite(value, f"{name}.{key}" if name else str(key))
            if found:
                return found
    elif isinstance(obj, (list, tuple)):
        if set(map(type, obj)) <= PLAIN_TYPES:  # ids on a long path, counts
            return None
        for i, value in enumerate(obj):
            if value.__class__ in PLAIN_TYPES:
                continue
            found = first_non_finite(value, f"{name}[{i}]")
            if found:
                return found
    elif np is not None and isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fc":
            bad = ~np.isfinite(obj)
            if bad.any():
                return name, obj[bad].flat[0]
        elif obj.dtype == object:
            for i, value in enumerate(obj.flat):
                found = first_non_finite(value, f"{name}[{i}]")
                if found:
                    return found
    elif isinstance(obj, (float, complex)) or (
            np is not None and isinstance(obj, (np.floating, np.complexfloating))):
        if not is_finite(obj):
            return name, obj
    return None


def require_finite(obj, what: str = "", *, cause: str = DEFAULT_CAUSE) -> None:
    """Refuse a result holding an infinity or NaN anywhere (UnphysicalResult naming the
    quantity; ``cause`` says which input to check)."""
    found = first_non_finite(obj, what)
    if found:
        name, value = found
        raise UnphysicalResult(f"the result {name or 'value'} is not a finite number "
                               f"({describe(value)}): {cause}")


def require_physical(value, what: str, unit: str = "", *, positive: bool = False,
                     kind: str = "number", cause: str = DEFAULT_CAUSE,
                     item: str | None = None) -> float:
    """``value`` as a float when it is finite and >= 0 (> 0 with ``positive``); else
    UnphysicalResult: "``what`` would be …, which is not a finite positive ``kind``; ``cause``"."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise UnphysicalResult(f"{what} is not a number ({shown(value)}); {cause}",
                               item=item) from None
    if math.isfinite(number) and (number > 0 or (number == 0 and not positive)):
        return number
    if not math.isfinite(number):
        reads = "beyond any finite number" if number == number else "undefined (not a number)"
    else:
        reads = f"{number!r}" + (f" {unit}" if unit else "")
    raise UnphysicalResult(f"{what} would be {reads}, which is not a finite "
                           f"{'positive' if positive else 'non-negative'} {kind}; {cause}",
                           item=item)


__all__ = ["DEFAULT_CAUSE", "describe", "first_non_finite", "is_finite", "require_finite",
           "require_physical"]
