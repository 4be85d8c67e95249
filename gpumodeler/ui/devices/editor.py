"""Devices › Add or Edit a GPU… / a Link…: a GPU or link of the USER device database, added
or edited in a dialog, so no message has to send anyone to a command line.

Each field is a row: its name in words (:func:`~gpumodeler.ui.device_fields.field_label`),
its value with its unit ("1253 MHz", "15.8 GB/s"), and where the value shown comes from
(its provenance and source). Typed values are read in the field's unit (the GUI's one number
grammar, :mod:`gpumodeler.ui.units`) and recorded with the provenance chosen below the table
(yours, a measurement or a calibration) and an optional origin and note.

Every changed value is checked by the database's own rule
(:func:`gpumodeler.db.fields.record_problem`, the one ``Catalog.set_value`` applies) before
anything is written; then all of them are written in one transaction — a refused value
leaves the database as it was and the typed values in the table, red, with the reason.
Editing a shipped device makes your copy that shadows it (the catalog's rule); the shipped
database is never written. The device database is not part of the project, so its edits are
not on the project's undo stack; the project's own values of a placed device (overrides)
are edited, undoably, in the inspector.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QDialogButtonBox,
                               QFormLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QMessageBox, QTableWidget, QTableWidgetItem, QVBoxLayout)

from gpumodeler.core.errors import ModelError
from gpumodeler.db.fields import FIELDS, USER_PROVENANCES, record_problem
from gpumodeler.db.records import ValueRecord

from ..device_fields import field_label, field_names, format_value, provenance_text, record_tooltip
from ..units import QuantityError, parse_quantity

KIND_NAMES = {"gpu": "GPU", "link": "link"}
NEW = "__new__"
PROVENANCE_NAMES = {"user": "my value", "measurement": "a measurement", "calibration": "a calibration"}
UNIT_WORDS = {"count": "", "text": "", "ratio": "", "bit": "bits", "year": ""}
ERROR_BRUSH = QBrush(QColor("#ffe3e3"))
CHANGED_BRUSH = QBrush(QColor("#fff6d6"))
COLUMNS = ("Field", "Value", "Unit", "Where it comes from")


class FieldProblem(ValueError):
    """A typed value that cannot be stored: ``field`` and the reason."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def parse_field(kind: str, field: str, text: str):
    """The value ``text`` gives ``field`` of a ``kind`` in the field's unit, checked by the
    database's rule (record_problem) and never negative; FieldProblem with the reason
    otherwise."""
    unit = FIELDS[kind][field]
    label = field_label(field)
    try:
        value = parse_quantity(text, unit)
    except QuantityError as exc:
        raise FieldProblem(field, f"{label} {exc}") from None
    if isinstance(value, float) and value.is_integer() and unit in ("count", "bit", "year"):
        value = int(value)
    why = record_problem(unit, value, "user")
    if why:
        raise FieldProblem(field, f"{label}: {why}")
    # the database stores any finite number; no quantity of a device is negative (a count,
    # a clock, a size, a delay), so a minus sign is a typo the editor refuses
    if unit != "text" and value < 0:
        raise FieldProblem(field, f"{label} must be ≥ 0, got {text.strip()!r}")
    return value


class DeviceEditorDialog(QDialog):
    """Add a GPU or link to the user database, or edit one of the catalog's. ``saved(names)``
    after a successful save (the document is told through ``catalog_changed``)."""

    saved = Signal(tuple)

    def __init__(self, catalog, parent=None, document=None, kind: str = "gpu",
                 name: str | None = None, field: str | None = None):
        super().__init__(parent)
        self.catalog, self.document = catalog, document
        self.record = None
        self._shown: dict[str, str] = {}   # field -> the text shown before any edit
        self.setWindowTitle("Devices: add or edit a GPU or link")
        self.kind_box = QComboBox()
        for k, word in KIND_NAMES.items():
            self.kind_box.addItem(word, k)
        self.kind_box.currentIndexChanged.connect(lambda _i: self._fill_devices())
        self.device_box = QComboBox()
        self.device_box.setMinimumContentsLength(28)
        self.device_box.currentIndexChanged.connect(lambda _i: self.show_device())
        self.name_edit = QLineEdit(placeholderText="the new device's name, e.g. RTX 4090 (my box)")
        self.origin = QLabel(wordWrap=True)
        self.origin.setStyleSheet("color: #5f6368;")
        top = QFormLayout()
        top.addRow("Kind", self.kind_box)
        top.addRow("Device", self.device_box)
        top.addRow("Name", self.name_edit)
        top.addRow("", self.origin)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.AllEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setColumnWidth(1, 200)
        self.table.itemChanged.connect(self._cell_changed)

        self.provenance_box = QComboBox()
        for p in USER_PROVENANCES:
            self.provenance_box.addItem(PROVENANCE_NAMES.get(p, p), p)
        self.provenance_box.setToolTip("How the values you type are recorded: your own value, "
                                       "a measurement or a calibration")
        self.source_edit = QLineEdit(placeholderText="e.g. my nvidia-smi, run of 3 May (optional)")
        self.note_edit = QLineEdit(placeholderText="optional")
        prov = QFormLayout()
        prov.addRow("The values I type are", self.provenance_box)
        prov.addRow("They come from", self.source_edit)
        prov.addRow("Note", self.note_edit)

        self.message = QLabel(wordWrap=True)
        self.message.setObjectName("device_editor_message")
        self.message.setStyleSheet("color: #b00020;")
        self.done_label = QLabel(wordWrap=True)
        self.done_label.setStyleSheet("color: #1d6b3a;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.save_button = buttons.addButton("Save to my devices", QDialogButtonBox.ButtonRole.ApplyRole)
        self.save_button.clicked.connect(self.save)
        self.delete_button = buttons.addButton("Delete from my devices",
                                               QDialogButtonBox.ButtonRole.DestructiveRole)
        self.delete_button.setToolTip("Remove your device (or your copy of a shipped one, which "
                                      "then shows again) from your device database")
        self.delete_button.clicked.connect(lambda: self.delete())
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        row.addLayout(prov, 1)
        layout.addLayout(row)
        layout.addWidget(self.message)
        layout.addWidget(self.done_label)
        layout.addWidget(buttons)
        self.resize(820, 640)

        self.kind_box.setCurrentIndex(max(self.kind_box.findData(kind), 0))
        self._fill_devices(name)
        if field is not None:
            self.focus_field(field)

    # -- choosing ------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return self.kind_box.currentData()

    @property
    def is_new(self) -> bool:
        return self.device_box.currentData() == NEW

    def _fill_devices(self, name: str | None = None) -> None:
        self.device_box.blockSignals(True)
        self.device_box.clear()
        self.device_box.addItem(f"(a new {KIND_NAMES[self.kind]})", NEW)
        names = [] if self.catalog is None else [d.name for d in self.catalog.list(self.kind)]
        for n in names:
            self.device_box.addItem(n, n)
        index = self.device_box.findData(name) if name else -1
        self.device_box.setCurrentIndex(index if index >= 0 else 0)
        self.device_box.blockSignals(False)
        self.show_device()

    def choose(self, kind: str, name: str | None) -> None:
        """Show device ``name`` of ``kind`` (None: a new one)."""
        self.kind_box.blockSignals(True)
        self.kind_box.setCurrentIndex(self.kind_box.findData(kind))
        self.kind_box.blockSignals(False)
        self._fill_devices(name)

    def show_device(self) -> None:
        """The fields of the chosen device (empty values for a new one)."""
        self.message.setText("")
        if self.is_new or self.catalog is None:
            self.record = None
            self.name_edit.setEnabled(True)
            self.name_edit.clear()
            self.origin.setText(f"A new {KIND_NAMES[self.kind]} in your device database: give "
                                f"its name and the values you know (empty ones stay unknown).")
        else:
            try:
                self.record = self.catalog.get(self.device_box.currentData())
            except ModelError as exc:
                self.record = None
                self.message.setText(str(exc))
            self.name_edit.setEnabled(False)
            self.name_edit.setText(self.device_box.currentData())
            origin = getattr(self.record, "origin", "")
            self.origin.setText(
                "Shipped with gpumodeler: your edits make your own copy, which hides the shipped "
                "one (delete your copy to see it again)." if origin == "shipped" else
                "In your device database." if origin == "user" else
                f"From a device file you imported ({origin})." if origin else "")
        self.delete_button.setEnabled(getattr(self.record, "origin", "") in ("user", "imported"))
        self._fill_table()

    def _fill_table(self) -> None:
        kind, record = self.kind, self.record
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        self._shown = {}
        sources = getattr(record, "sources", {}) if record is not None else {}
        for field in field_names(kind, record):
            if field not in FIELDS[kind]:
                continue  # a field of a newer file: shown by the inspector, not editable here
            row = self.table.rowCount()
            self.table.insertRow(row)
            default = record.default_record(field) if record is not None else None
            value = default.value if default is not None else None
            text = "" if value is None else format_value(kind, field, value, precise=True)
            unit = FIELDS[kind][field]
            name = QTableWidgetItem(field_label(field))
            name.setData(Qt.ItemDataRole.UserRole, field)
            name.setToolTip(field)
            value_item = QTableWidgetItem(text)
            value_item.setToolTip(f"type a value in {unit}" if unit not in UNIT_WORDS else "type a value")
            unit_item = QTableWidgetItem(UNIT_WORDS.get(unit, unit))
            where = QTableWidgetItem(provenance_text(default) if default is not None and value is not None
                                     else "unknown")
            if default is not None:
                where.setToolTip(record_tooltip(default, sources))
            for item in (name, unit_item, where):
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            for col, item in enumerate((name, value_item, unit_item, where)):
                self.table.setItem(row, col, item)
            self._shown[field] = text
        self.table.blockSignals(False)

    def row_of(self, field: str) -> int:
        for row in range(self.table.rowCount()):
            if self.table.item(row, 0).data(Qt.ItemDataRole.UserRole) == field:
                return row
        raise KeyError(field)

    def focus_field(self, field: str) -> None:
        try:
            row = self.row_of(field)
        except KeyError:
            return
        self.table.setCurrentCell(row, 1)
        self.table.scrollToItem(self.table.item(row, 1))

    def set_text(self, field: str, text: str) -> None:
        """Type ``text`` as ``field``'s value (what an edit of the cell does)."""
        self.table.item(self.row_of(field), 1).setText(text)

    def _cell_changed(self, item: QTableWidgetItem) -> None:
        if item.column() != 1:
            return
        field = self.table.item(item.row(), 0).data(Qt.ItemDataRole.UserRole)
        changed = item.text().strip() != self._shown.get(field, "")
        self.table.blockSignals(True)
        item.setBackground(CHANGED_BRUSH if changed else QBrush())
        self.table.blockSignals(False)

    # -- saving --------------------------------------------------------------------------
    def changes(self) -> dict:
        """{field: typed text} of the values changed (a cleared value is not a change: the
        database keeps every record, so it says so instead)."""
        out = {}
        for row in range(self.table.rowCount()):
            field = self.table.item(row, 0).data(Qt.ItemDataRole.UserRole)
            text = self.table.item(row, 1).text().strip()
            if text != self._shown.get(field, ""):
                out[field] = text
        return out

    def _mark(self, field: str, message: str) -> None:
        item = self.table.item(self.row_of(field), 1)
        self.table.blockSignals(True)
        item.setBackground(ERROR_BRUSH)
        item.setToolTip(message)
        self.table.blockSignals(False)
        self.focus_field(field)

    def save(self) -> bool:
        """Write the changed values (module docstring); False with a message when a value,
        the name or the database refuses, and then nothing is written."""
        self.done_label.setText("")
        if self.catalog is None:
            self.message.setText("No device database is open.")
            return False
        kind, changes = self.kind, self.changes()
        cleared = [f for f, t in changes.items() if not t]
        if cleared:
            self.message.setText(f"{field_label(cleared[0])}: a value cannot be removed here; "
                                 f"type the value that replaces it")
            self._mark(cleared[0], self.message.text())
            return False
        values = {}
        for field, text in changes.items():
            try:
                values[field] = parse_field(kind, field, text)
            except FieldProblem as exc:
                self.message.setText(str(exc))
                self._mark(field, str(exc))
                return False
        provenance = self.provenance_box.currentData()
        origin = self.source_edit.text().strip() or None
        note = self.note_edit.text().strip() or None
        name = " ".join(self.name_edit.text().split())
        try:
            if self.is_new:
                if not name:
                    self.message.setText(f"Give the new {KIND_NAMES[kind]}'s name.")
                    return False
                records = {f: ValueRecord(v, FIELDS[kind][f], provenance=provenance, note=note,
                                          source_text=origin) for f, v in values.items()}
                saved = self.catalog.add_device(kind, name, values=records).name
            else:
                if not values:
                    self.message.setText("Nothing changed: type a new value in the Value column.")
                    return False
                saved = self.record.name
                with self.catalog.writing(), self.catalog.user_for_write().atomic():
                    for field, value in values.items():
                        self.catalog.set_value(saved, field, value, provenance=provenance,
                                               source_text=origin, note=note)
        except ModelError as exc:   # DeviceEditError, DatabaseAccessError: nothing written
            self.message.setText(str(exc))
            return False
        except OSError as exc:
            self.message.setText(f"{self.catalog.user_path}: {exc.strerror or exc}")
            return False
        self.message.setText("")
        if self.document is not None:
            self.document.catalog_changed((saved,))
        self._fill_devices(saved)
        self.done_label.setText(f"Saved {len(values)} value(s) of {saved} to your device database.")
        self.saved.emit((saved,))
        return True


    def users_in_project(self, name: str) -> list[str]:
        """The placed devices and links of the open project that name catalog entry ``name``."""
        if self.document is None:
            return []
        project = self.document.project
        key = name.casefold()
        return ([d.label or d.id for d in project.devices.values() if d.device_name.casefold() == key]
                + [c.label or c.link_name for c in project.connections.values()
                   if c.link_name.casefold() == key])

    def confirm_delete(self, name: str, shadows: bool, users: list[str]) -> bool:
        """Ask before deleting (a test replaces this)."""
        text = (f"Delete {name} from your device database?"
                + (" The shipped device of that name shows again." if shadows else "")
                + (f" The project uses it ({', '.join(users)}): its predictions will "
                   f"{'use the shipped values' if shadows else 'say the device is missing'}."
                   if users else ""))
        return QMessageBox.question(self, "Delete device", text) == QMessageBox.StandardButton.Yes

    def delete(self) -> bool:
        """Delete the shown device from the user database, after asking; False when it is
        not the user's, when declined, or when the database refuses (a message says why)."""
        record = self.record
        if record is None or record.origin not in ("user", "imported"):
            self.message.setText("Only devices of your own database can be deleted; shipped "
                                 "devices are read-only.")
            return False
        if not self.confirm_delete(record.name, record.shadows_shipped, self.users_in_project(record.name)):
            return False
        try:
            self.catalog.delete_device(record.name)
        except ModelError as exc:
            self.message.setText(str(exc))
            return False
        if self.document is not None:
            self.document.catalog_changed((record.name,))
        self._fill_devices(record.name if record.shadows_shipped else None)
        self.done_label.setText(f"Deleted {record.name} from your device database.")
        self.saved.emit((record.name,))
        return True


def open_device_editor(window, kind: str = "gpu", name: str | None = None,
                       field: str | None = None) -> DeviceEditorDialog | None:
    """Devices › Add or Edit…: the editor over ``window`` (non-modal, deleted when closed);
    None with a message when no device database is open."""
    if window.catalog is None:
        window.show_error("Cannot edit devices", "No device database is open.")
        return None
    dialog = DeviceEditorDialog(window.catalog, window, window.document, kind, name, field)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
