"""Plots of predictions (pyqtgraph): built once, updated with setData."""

from gpumodeler.ui import pyside_compat as _pyside_compat

_pyside_compat.apply()  # PySide6 6.12.0 + Python 3.11 leaks None references; see the module
