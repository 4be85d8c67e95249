"""The launch panel's transfers: one row per host↔device copy (direction, bytes, link).

The box shows a launch's transfers and announces what the user changed; the panel checks
the change and turns it into a command (an edit it refuses is shown at the cell).
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QGroupBox, QHBoxLayout, QHeaderView, QLineEdit,
                               QPushButton, QTableWidget, QVBoxLayout)

DIRECTIONS = (("host → device", "htod"), ("device → host", "dtoh"))
HOST_LINK = ("(the GPU's host link)", None)


class TransfersBox(QGroupBox):
    """``table`` of the transfers with Add and Remove buttons."""

    #: (row, {"direction" | "size" | "connection": new value})
    edited = Signal(int, object)
    add_requested = Signal()
    remove_requested = Signal()

    def __init__(self, parent=None):
        super().__init__("Transfers (in sequence with the kernel)", parent)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Direction", "Bytes", "Link"])
        self.table.horizontalHeaderItem(1).setToolTip(
            "bytes (1.6e9) or an expression of the data size N and the launch variables (4*N)")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Stretch)
        header.setSectionResizeMode(2, QHeaderView.Interactive)
        self.table.setColumnWidth(2, 150)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectRows)
        self.table.setMinimumHeight(110)
        self.add_button = QPushButton("Add transfer")
        self.add_button.setToolTip("Add a host-to-device transfer (4*N bytes) over the GPU's host link")
        self.add_button.clicked.connect(lambda: self.add_requested.emit())
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected transfer (or the last one)")
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit())
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addLayout(buttons)

    def show_transfers(self, transfers, links) -> None:
        """One row per transfer; ``links``: (text, connection id) the copies may take."""
        table = self.table
        table.blockSignals(True)
        table.setRowCount(len(transfers))
        links = [HOST_LINK] + list(links)
        for row, t in enumerate(transfers):
            d = QComboBox()
            for text, value in DIRECTIONS:
                d.addItem(text, value)
            d.setCurrentIndex(0 if t.direction == "htod" else 1)
            d.activated.connect(lambda i, r=row, w=d: self.edited.emit(r, {"direction": w.itemData(i)}))
            size = QLineEdit(t.size)
            size.setObjectName(f"transfer_size_{row}")
            size.editingFinished.connect(lambda r=row, w=size: self.edited.emit(r, {"size": w.text().strip()}))
            link = QComboBox()
            for text, value in links:
                link.addItem(text, value)
            link.setCurrentIndex(max(link.findData(t.connection), 0) if t.connection else 0)
            link.activated.connect(lambda i, r=row, w=link: self.edited.emit(r, {"connection": w.itemData(i)}))
            table.setCellWidget(row, 0, d)
            table.setCellWidget(row, 1, size)
            table.setCellWidget(row, 2, link)
        table.blockSignals(False)

    def selected_row(self) -> int | None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        return rows[0] if rows else None
