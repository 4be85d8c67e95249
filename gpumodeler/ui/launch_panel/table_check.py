"""The launch panel's latency-table check: a kernel whose latency table is another
architecture's than the launch's GPU gets a warning and a button that gives the kernel the
GPU's own table (one undoable SetKernelProperties). The comparison is
:func:`.checks.table_mismatch` (no Qt); this widget shows it.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from gpumodeler.core.errors import ModelError

from .checks import table_mismatch


class TableCheck(QWidget):
    """``warning`` (why) and ``button`` (use the GPU's table); hidden when all agree.
    ``use_requested(key)`` when the button is clicked."""

    use_requested = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.warning = QLabel()
        self.warning.setObjectName("table_warning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #8a5a00; background: #fff6e0; padding: 4px;")
        self.button = QPushButton()
        self.button.setObjectName("use_gpu_table")
        self.button.setToolTip("Set the kernel's latency table to the GPU's architecture (undoable)")
        self.button.clicked.connect(lambda: self.key and self.use_requested.emit(self.key))
        self.key: str | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.warning)
        lay.addWidget(self.button)
        self.warning.hide()
        self.button.hide()

    def check(self, project, launch, document) -> None:
        """Compare ``launch``'s kernel table with its GPU (whether or not the launch can be
        predicted) and show the result."""
        found = None
        if launch is not None and launch.gpu in project.devices:
            graph = project.kernels.get(launch.kernel)
            try:
                gpu = document.gpu_spec(project.devices[launch.gpu].device_name)
                found = table_mismatch(graph, gpu, document.latency_tables())
            except (ModelError, LookupError):
                found = None
        message, key = found or ("", None)
        self.key = key
        self.warning.setText(message)
        self.warning.setVisible(bool(message))
        if key:
            self.button.setText(f"Use {document.latency_tables()[key].name}")
        self.button.setVisible(bool(key))
