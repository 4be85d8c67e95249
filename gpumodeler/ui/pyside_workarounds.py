"""Work around a reference-counting bug of PySide6 6.12.0 on Python < 3.12.

The 6.12.0 wheels (abi3) return ``None`` from every void method without taking a reference,
as if ``None`` were immortal (it is only from Python 3.12). On Python 3.11 each call such
as ``QLabel.setText`` therefore takes one reference away from ``None``; after some tens of
thousands of calls (seconds of painting a busy window) Python aborts with "Fatal Python
error: none_dealloc: deallocating None". 6.11.3 does not have the bug.

The real fix is a PySide6 version without it (pin ``PySide6-Essentials!=6.12.0``); until
then :func:`protect_none` detects the leak and gives ``None`` so many references that it
can never reach zero, which is what Python 3.12 does for it anyway (immortal objects).
"""
from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 52  # references added to None: never drained by any session
_protected = False


def none_leaks() -> bool:
    """True when calling a void PySide6 method takes a reference away from None."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal: its count does not move
    from PySide6.QtCore import QPointF
    point = QPointF()
    before = sys.getrefcount(None)
    for _ in range(64):
        point.setX(1.0)
    return sys.getrefcount(None) - before <= -32


def protect_none() -> bool:
    """Make ``None`` effectively immortal when this PySide6 leaks it (once per process);
    True when the leak is there."""
    global _protected
    if _protected:
        return True
    if not none_leaks():
        return False
    # ob_refcnt is the first field of every object; None is a static object (never freed).
    ctypes.c_ssize_t.from_address(id(None)).value += _HEADROOM
    _protected = True
    return True
