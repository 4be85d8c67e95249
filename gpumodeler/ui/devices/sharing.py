"""Devices › Export… and Devices › Import…: the catalog's export, import report and merge
(gpumodeler.db.sharing) in dialogs.

Export picks the devices and the file (typed, or chosen with Browse…). Import shows every
device the file would change — new, changed, conflicting — and for each conflicting field
(named in words, :func:`~gpumodeler.ui.device_fields.field_label`) both sides' values with
their units and provenance, and a choice for that field alone: keep mine, take theirs, or
keep both (theirs added as a non-default record). Buttons above the list set the same
choice for every conflict at once, and say so. Nothing is merged until every conflict has a
choice; the merge is then one transaction (all or nothing).
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QLabel,
                               QLineEdit, QListWidget, QListWidgetItem, QMessageBox, QPushButton,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout)

from gpumodeler.core.errors import ModelError
from gpumodeler.db.merge import BOTH, DECLINED, MINE, THEIRS
from gpumodeler.db.records import ValueRecord

from ..device_fields import field_label
from ..units import format_quantity

CHOICE_TEXT = {MINE: "keep mine", THEIRS: "take theirs", BOTH: "keep both"}
ALL_TEXT = {MINE: "Keep mine for all", THEIRS: "Take theirs for all", BOTH: "Keep both for all"}
UNCHOSEN = "— choose for this field —"
KIND_WORDS = {"gpu": "GPU", "link": "link", "host": "host", "latency_table": "latency table"}
HEADERS = ["Device / field", "Mine (this computer)", "Theirs (the file)", "Your choice for this field"]


def describe(side) -> str:
    """One side of a field: its records, the default (★) first, each value with its unit
    ("1253 MHz", "3 MiB") and its provenance and source."""
    parts = []
    # the default first: the value each side uses is what a narrow column still shows
    for r in sorted(side, key=lambda r: not (isinstance(r, ValueRecord) and r.is_default)):
        if isinstance(r, ValueRecord):
            value = format_quantity(r.value, r.unit, digits=6)
            origin = ", ".join(x for x in (r.provenance, r.source_text or r.source, r.where) if x)
            parts.append(("★ " if r.is_default else "") + value + (f" ({origin})" if origin else ""))
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
            item = QListWidgetItem(f"{d.name}  ({KIND_WORDS.get(d.kind, d.kind)})")
            item.setData(Qt.ItemDataRole.UserRole, d.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if d.name.casefold() in chosen else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.path = QLineEdit(placeholderText="file to write (.db)")
        self.browse_button = QPushButton("Browse…")
        self.browse_button.setToolTip("Choose the file to write")
        self.browse_button.clicked.connect(self.browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(self.browse_button)
        self.message = QLabel(wordWrap=True)
        self.message.setStyleSheet("color: #c62828")
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        box.accepted.connect(self.export)
        box.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (self.filter, self.list, QLabel("Export to")):
            layout.addWidget(w)
        layout.addLayout(path_row)
        for w in (self.message, box):
            layout.addWidget(w)
        self.resize(560, 520)

    def browse(self) -> str:
        """Choose the file in a file dialog (a name without a suffix gets .db); returns it,
        "" when cancelled."""
        path, _ = QFileDialog.getSaveFileName(self, "Export devices to", self.path.text().strip(),
                                              "Device databases (*.db);;All files (*)")
        if path:
            if "." not in path.rsplit("/", 1)[-1]:
                path += ".db"
            self.path.setText(path)
        return path

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
        self.tree.setHeaderLabels(HEADERS)
        self.tree.setColumnWidth(0, 220)
        self.tree.setColumnWidth(1, 260)
        self.tree.setColumnWidth(2, 260)
        for d in self.report.devices:
            if d.status == "identical":
                continue
            top = QTreeWidgetItem([f"{d.name} ({d.status})", "", "", ""])
            top.setToolTip(0, f"{KIND_WORDS.get(d.kind, d.kind)} {d.name}: {d.status}")
            self.tree.addTopLevelItem(top)
            for f in d.fields:
                row = QTreeWidgetItem([field_label(f.field), describe(f.mine), describe(f.theirs),
                                       "" if f.status == "conflict" else
                                       ("kept (mine has it all)" if f.status == "mine" else
                                        "kept mine (declined before)" if f.status == DECLINED else
                                        "taken (theirs adds)")])
                row.setData(0, Qt.ItemDataRole.UserRole, f.field)
                row.setToolTip(0, f.field)
                row.setToolTip(1, describe(f.mine))
                row.setToolTip(2, describe(f.theirs))
                top.addChild(row)
                if f.status == "conflict":
                    combo = QComboBox()
                    combo.setToolTip(f"What to keep of {field_label(f.field)} of {d.name}: "
                                     f"this field only")
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
        # the same choice for every conflict: a row of its own, labelled as such, above the
        # list whose per-field choices it sets
        quick = QHBoxLayout()
        self.all_label = QLabel(f"The same choice for all {len(self.choices)} conflicts:")
        quick.addWidget(self.all_label)
        self.all_buttons: dict[str, QPushButton] = {}
        for c in (MINE, THEIRS, BOTH):
            b = QPushButton(ALL_TEXT[c])
            b.setToolTip(f"Sets every conflict's choice to “{CHOICE_TEXT[c]}” (a field that "
                         f"cannot be kept both ways: “keep mine”); you can still change any "
                         f"of them before Merge")
            b.clicked.connect(lambda _c=False, c=c: self.choose_all(c))
            quick.addWidget(b)
            self.all_buttons[c] = b
        quick.addStretch(1)
        for w in [self.all_label, *self.all_buttons.values()]:
            w.setVisible(bool(self.choices))
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.refused)
        layout.addLayout(quick)
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
