"""Work around the reference-counting bug of PySide6 6.12.0 on Python 3.11, for True and
False as well as None.

:mod:`gpumodeler.ui.pyside_workarounds` covers ``None`` (every void method call takes a
reference away from it). The same wheels also take one from ``True`` or ``False`` at every
emission of a ``bool`` signal argument (``toggled``, ``clicked``, any ``Signal(bool)``): at
zero the interpreter aborts with "Fatal Python error: bool_dealloc: deallocating True or
False" (seen at the end of a test run after a few thousand emissions). PySide6 6.11.3 does
not leak; Python 3.12 made these objects immortal (PEP 683), which hides it.

:func:`apply` protects None (through ``pyside_workarounds``) and, if the bool leak is
there, gives True and False a reference count they cannot run out of, as Python 3.12 does.
Remove both modules once the project pins a PySide6 without the bug.
"""
from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 52
_bools_protected = False


def bools_leak() -> bool:
    """True when emitting a bool signal argument takes a reference away from True."""
    if sys.version_info >= (3, 12):
        return False
    from PySide6.QtCore import QObject, Signal

    class Probe(QObject):  # no QApplication needed (this runs at import)
        flag = Signal(bool)

    probe = Probe()
    probe.flag.connect(lambda on: None)
    before = sys.getrefcount(True)
    for _ in range(64):
        probe.flag.emit(True)
    return sys.getrefcount(True) - before <= -32


def apply() -> bool:
    """Protect None, True and False where this PySide6 leaks them; True if it does.
    Idempotent."""
    global _bools_protected
    from gpumodeler.ui.pyside_workarounds import protect_none

    leaks = protect_none()
    if not _bools_protected and bools_leak():
        # ob_refcnt is the first field of every object; True and False are static objects
        for singleton in (True, False):
            ctypes.c_ssize_t.from_address(id(singleton)).value += _HEADROOM
        _bools_protected = True
    return leaks or _bools_protected
