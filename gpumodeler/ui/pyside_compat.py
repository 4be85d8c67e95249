"""Work around a reference-counting bug of PySide6 6.12.0 on Python 3.11.

With that pair, every call of a wrapped C++ method that returns ``void`` (``update()``,
``setText()``, ``setToolTip()``...) gives back a reference to ``None`` it never took, and
every emission of a ``bool`` signal argument (``toggled``, ``clicked``...) one to ``True`` or
``False``: their reference counts fall by one per call, and at zero the interpreter aborts
("Fatal Python error: none_dealloc: deallocating None", or bool_dealloc). None starts near
5 000 references, so a GUI session dies within seconds of use and a test run aborts (exit
134) when it ends. PySide6 6.11.3 does not leak; Python 3.12 made these objects immortal
(PEP 683), which hides it.

:func:`apply` measures the leak and only if it is there gives None, True and False a
reference count they cannot run out of (what Python 3.12 does for every interpreter).
Remove this module once the project pins a PySide6 without the bug.
"""
from __future__ import annotations

import ctypes
import sys

_applied = False


def leak_per_call() -> float:
    """References to None lost per void method call (0 with a correct binding)."""
    from PySide6.QtCore import QObject

    probe = QObject()
    calls = 64
    before = sys.getrefcount(None)
    for _ in range(calls):
        probe.setObjectName("probe")
    return (before - sys.getrefcount(None)) / calls


def apply() -> bool:
    """Make None's reference count effectively unbounded if the binding leaks it; True if
    the workaround was needed. Idempotent."""
    global _applied
    if _applied:
        return True
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    if leak_per_call() < 0.5:
        return False
    # ob_refcnt is the first field of every object in a CPython (non-debug) build
    for singleton in (None, True, False):
        ctypes.c_ssize_t.from_address(id(singleton)).value += 1 << 40
    _applied = True
    return True
