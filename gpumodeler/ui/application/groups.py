"""The Application tab's aggregation table: per kernel name or per stream, count, total and
mean measured vs predicted time (:func:`gpumodeler.service.application.aggregate`, the same
rows as ``gpumodeler timeline --by``). It renders a timeline result; it computes nothing
but the grouping."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from gpumodeler.core.units_format import format_time
from gpumodeler.service.application import GROUPINGS, aggregate

COLUMNS = ("count", "measured", "mean", "predicted", "mean", "pred/meas")


class GroupsTable(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.result: dict | None = None
        self.rows: list[dict] = []
        self.by_combo = QComboBox(toolTip="Group the steps per kernel name or per stream")
        for by in GROUPINGS:
            self.by_combo.addItem(f"per {by}", by)
        self.by_combo.currentIndexChanged.connect(lambda _i: self.show_result(self.result))
        self.table = QTableWidget(0, len(COLUMNS) + 1)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        top = QHBoxLayout()
        top.addWidget(QLabel("Measured vs predicted"))
        top.addWidget(self.by_combo)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table)

    @property
    def by(self) -> str:
        return self.by_combo.currentData()

    def show_result(self, result: dict | None) -> None:
        self.result = result
        self.rows = aggregate(result, self.by) if result else []
        self.table.setHorizontalHeaderLabels([self.by, *COLUMNS])
        self.table.setRowCount(len(self.rows))
        for i, g in enumerate(self.rows):
            cells = [str(g[self.by]), str(g["count"]), _time(g["measured_total_s"]),
                     _time(g["measured_mean_s"]), _time(g["predicted_total_s"]),
                     _time(g["predicted_mean_s"]),
                     "-" if g["ratio"] is None else f"{g['ratio']:.3f}"]
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)


def _time(seconds) -> str:
    return "-" if seconds is None else format_time(seconds)
