"""Sweeps of a launch: one variable over a range, plotted in the background."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class SweepPanel(QWidget):
    def __init__(self, panel, parent=None):
        super().__init__(parent)
        self.panel = panel
        self.launch_id = None
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Sweeps: coming next"))

    def set_launch(self, launch_id):
        self.launch_id = launch_id
