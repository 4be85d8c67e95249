"""The dialog that splits one launch over several GPUs (Application tab › Split launch…)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLineEdit,
                               QListWidget, QListWidgetItem)

from gpumodeler.ui.application.fields import size_text


class SplitDialog(QDialog):
    """Choose a launch, GPUs, the host, the split and the scatter/gather sizes."""

    def __init__(self, project, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Split a launch over GPUs")
        form = QFormLayout(self)
        self.launch = QComboBox()
        for la in project.launches.values():
            self.launch.addItem(f"{la.name} ({la.id})", la.id)
        self.gpus = QListWidget()
        for d in project.gpus():
            item = QListWidgetItem(f"{d.label or d.device_name} ({d.id})")
            item.setData(Qt.ItemDataRole.UserRole, d.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.gpus.addItem(item)
        self.host = QComboBox()
        for d in project.devices.values():
            if d.kind == "host":
                self.host.addItem(f"{d.label or d.device_name} ({d.id})", d.id)
        self.split = QComboBox()
        self.split.addItems(("even", "proportional"))
        self.scatter = QLineEdit("0", toolTip="Bytes copied to the GPUs in all (an expression of the variables)")
        self.gather = QLineEdit("0", toolTip="Bytes copied back in all")
        for label, w in (("Launch", self.launch), ("GPUs", self.gpus), ("Host", self.host),
                         ("Split", self.split), ("Scatter bytes", self.scatter), ("Gather bytes", self.gather)):
            form.addRow(label, w)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        form.addRow(box)

    def values(self) -> dict:
        gpus = [self.gpus.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.gpus.count())
                if self.gpus.item(i).checkState() == Qt.CheckState.Checked]
        return {"launch_id": self.launch.currentData(), "gpus": gpus, "host": self.host.currentData(),
                "split": self.split.currentText(), "scatter": size_text(self.scatter.text()), "gather": size_text(self.gather.text())}
