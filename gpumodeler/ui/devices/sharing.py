"""Devices › Export… and Devices › Import…: the catalog's export, import report and merge
(gpumodeler.db.sharing) in dialogs.

Import shows every device the file would change — new, changed, conflicting — and for each
conflicting field both sides' values with their provenance and source, and a choice: keep
mine, take theirs, or keep both (theirs added as a non-default record). Nothing is merged
until every conflict has a choice; the merge is then one transaction (all or nothing).
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QMessageBox, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout)

from gpumodeler.core.errors import ModelError
from gpumodeler.db.merge import BOTH, DECLINED, MINE, THEIRS
from gpumodeler.db.records import ValueRecord

CHOICE_TEXT = {MINE: "keep mine", THEIRS: "take theirs", BOTH: "keep both"}
UNCHOSEN = "— choose —"


def describe(side) -> str:
    """One side of a field: its records, the default first, with provenance and source."""
    parts = []
    for r in side:
        if isinstance(r, ValueRecord):
            value = "unknown" if r.value is None else f"{r.value:g}" if isinstance(r.value, float) else str(r.value)
            origin = ", ".join(x for x in (r.provenance, r.source_text or r.source, r.where) if x)
            parts.append(("★ " if r.is_default else "") + f"{value} {r.unit if r.unit != 'text' else ''}".strip()
                         + (f" ({origin})" if origin else ""))
        else:
            parts.append(str(r))
    return "; ".join(parts) or "(none)"


def to_import(report) -> list:
    """The devices of an import report that a merge would change: new ones, and those with
    a field (or calibration) to take or to choose. A device whose every difference is one
    mine already has in full (status "mine", e.g. after keeping both sides in an earlier
    import of the same file) has nothing to import and nothing to ask."""
    return [d for d in report.devices if d.status == "new"
            or (d.status in ("changed", "conflicting")
                and any(f.status not in (MINE, DECLINED) for f in d.fields))]


class ExportDevicesDialog(QDialog):
    """Choose devices (filter by name) and a file; export them with the sources they cite."""

    def __init__(self, catalog, parent=None, preselect=()):
        super().__init__(parent)
        self.catalog = catalog
        self.setWindowTitle("Export devices")
        self.filter = QLineEdit(placeholderText="filter by name")
        self.filter.textChanged.connect(self._filter)
        self.list = QListWidget()
        chosen = {p.casefold() for p in preselect}
        for d in catalog.list():
            item = QListWidgetItem(f"{d.name}  [{d.kind}]")
            item.setData(Qt.ItemDataRole.UserRole, d.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if d.name.casefold() in chosen else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.path = QLineEdit(placeholderText="file to write (.db)")
        self.message = QLabel(wordWrap=True)
        self.message.setStyleSheet("color: #c62828")
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        box.accepted.connect(self.export)
        box.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (self.filter, self.list, QLabel("Export to"), self.path, self.message, box):
            layout.addWidget(w)

    def _filter(self, text) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setHidden(text.casefold() not in item.text().casefold())

    def chosen(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())
                if self.list.item(i).checkState() == Qt.CheckState.Checked]

    def export(self) -> bool:
        names = self.chosen()
        if not names:
            self.message.setText("choose at least one device to export")
            return False
        if not self.path.text().strip():
            self.message.setText("give the file to write")
            return False
        try:
            self.catalog.export(names, self.path.text().strip())
        except (ModelError, OSError) as exc:
            self.message.setText(str(exc))
            return False
        self.accept()
        return True


class ImportDevicesDialog(QDialog):
    """The import report of a device file, a choice per conflict, then the merge."""

    def __init__(self, catalog, path: str, parent=None):
        super().__init__(parent)
        self.catalog, self.path = catalog, path
        self.setWindowTitle(f"Import devices from {path}")
        self.report = catalog.import_file(path)  # raises a clear error for a bad file
        self.choices: dict[tuple[str, str], QComboBox] = {}
        counts = self.report.counts()
        summary = QLabel(f"{counts['new']} new, {counts['changed']} changed (no conflict), "
                         f"{counts['conflicting']} with conflicts, {counts['identical']} identical"
                         + (f", {counts[DECLINED]} as you declined before (kept mine)"
                            if counts[DECLINED] else "") + ". "
                         "Choose for every conflict; nothing changes until you merge.", wordWrap=True)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["device / field", "mine", "theirs", "choice"])
        self.tree.setColumnWidth(0, 220)
        self.tree.setColumnWidth(1, 260)
        self.tree.setColumnWidth(2, 260)
        for d in self.report.devices:
            if d.status == "identical":
                continue
            top = QTreeWidgetItem([f"{d.name} ({d.status})", "", "", ""])
            self.tree.addTopLevelItem(top)
            for f in d.fields:
                row = QTreeWidgetItem([f.field, describe(f.mine), describe(f.theirs),
                                       "" if f.status == "conflict" else
                                       ("kept (mine has it all)" if f.status == "mine" else
                                        "kept mine (declined before)" if f.status == DECLINED else
                                        "taken (theirs adds)")])
                row.setToolTip(1, describe(f.mine))
                row.setToolTip(2, describe(f.theirs))
                top.addChild(row)
                if f.status == "conflict":
                    combo = QComboBox()
                    combo.addItem(UNCHOSEN, None)
                    for c in (MINE, THEIRS, BOTH):
                        if c == BOTH and f.field in ("kind", "family"):
                            continue  # one device cannot be two kinds
                        combo.addItem(CHOICE_TEXT[c], c)
                    combo.currentIndexChanged.connect(self._update)
                    self.tree.setItemWidget(row, 3, combo)
                    self.choices[(d.name, f.field)] = combo
            top.setExpanded(True)
        problems = self.report.problems     # rows of the file that are never merged
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        self.refused = QLabel(f"{len(problems)} row(s) of the file are refused and will not be "
                              f"merged: " + "; ".join(problems[:5]) + more, wordWrap=True)
        self.refused.setVisible(bool(problems))
        self.message = QLabel(wordWrap=True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.merge_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.merge_button.setText("Merge")
        self.buttons.accepted.connect(self.merge)
        self.buttons.rejected.connect(self.reject)
        quick = QHBoxLayout()
        quick.addWidget(QLabel("All conflicts:"))
        for c in (MINE, THEIRS, BOTH):
            b = self.buttons.addButton(CHOICE_TEXT[c], QDialogButtonBox.ButtonRole.ActionRole)
            b.clicked.connect(lambda _c=False, c=c: self.choose_all(c))
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.refused)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self.resize(1000, 560)
        self._update()

    def choose(self, device: str, field: str, choice: str) -> None:
        combo = self.choices[(device, field)]
        combo.setCurrentIndex(combo.findData(choice))

    def choose_all(self, choice: str) -> None:
        for combo in self.choices.values():
            index = combo.findData(choice)
            combo.setCurrentIndex(index if index >= 0 else combo.findData(MINE))

    def open_conflicts(self) -> list[tuple[str, str]]:
        return [key for key, combo in self.choices.items() if combo.currentData() is None]

    def _update(self, *_args) -> None:
        open_ = self.open_conflicts()
        self.merge_button.setEnabled(not open_ and bool(self.report.devices))
        self.message.setText(f"{len(open_)} conflict(s) still need a choice." if open_ else "")

    def resolutions(self) -> dict:
        out: dict = {}
        for (device, field), combo in self.choices.items():
            out.setdefault(device, {})[field] = combo.currentData()
        return out

    def merge(self) -> bool:
        if self.open_conflicts():
            self._update()
            return False
        try:
            self.result_report = self.catalog.merge(self.path, self.resolutions())
        except (ModelError, OSError) as exc:
            self.message.setText(str(exc))
            return False
        self.accept()
        return True


def export_devices(window) -> None:
    """Devices › Export…"""
    if window.catalog is None:
        window.show_error("Cannot export devices", "No device database is open.")
        return
    used = [d.device_name for d in window.document.project.devices.values()]
    used += [c.link_name for c in window.document.project.connections.values()]
    dialog = ExportDevicesDialog(window.catalog, window, preselect=used)
    if dialog.exec() == QDialog.DialogCode.Accepted:
        window.show_hint(f"Exported {len(dialog.chosen())} device(s) to {dialog.path.text()}")


def import_devices(window, path: str) -> bool:
    """Devices › Import…: the report dialog for ``path``; True when merged."""
    try:
        dialog = ImportDevicesDialog(window.catalog, path, window)
    except (ModelError, OSError) as exc:
        window.show_error("Cannot import devices", f"{path} cannot be imported.\n\n{exc}")
        return False
    if not to_import(dialog.report):
        refused = (f"\n\n{dialog.refused.text()}" if dialog.report.problems else "")
        declined = sum(f.status == DECLINED for d in dialog.report.devices for f in d.fields)
        declined = (f" {declined} difference(s) you declined before (keep mine) stay as yours."
                    if declined else "")
        QMessageBox.information(window, "Import devices", "Nothing to import: every device in the file "
                                "is already here with the same values." + declined + refused)
        return False
    if dialog.exec() == QDialog.DialogCode.Accepted:
        # every view shows the merged values (canvas cards, inspector, predictions)
        window.document.catalog_changed(d.name for d in dialog.report.devices
                                        if d.status != "identical")
        window.show_hint(f"Merged devices from {path}")
        return True
    return False
