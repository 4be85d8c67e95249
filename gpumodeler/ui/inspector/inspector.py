"""PropertyInspector: every catalog parameter of the selected device or link.

Columns: field, value, unit, provenance. Unknown values read "unknown". Editing a value
overrides it for this project (SetOverride; checked first, a bad value is refused with a
message at the field); overridden values are bold, coloured and say "overridden"; a revert
(button or context menu) pushes SetOverride(value=None). Fields with several source records
expand to show the alternatives, any of which can be used as this project's value.
"""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QMenu,
                               QPushButton, QStyledItemDelegate, QTreeView, QVBoxLayout,
                               QWidget)

from gpumodeler.core.commands import SetOverride, UpdateItem
from gpumodeler.core.errors import ModelError
from gpumodeler.ui.binding import DocumentBinding
from gpumodeler.ui.device_fields import (OverrideError, field_label, field_names,
                                         format_value, override_key, parse_override,
                                         provenance_text, read_only_reason, record_tooltip,
                                         unit_of)
from gpumodeler.ui.units import QuantityError, parse_exact_number

FIELD_ROLE = Qt.ItemDataRole.UserRole + 1    # field name (on every cell of a field row)
ROW_ROLE = Qt.ItemDataRole.UserRole + 2      # "field" | "count" | "label" | "info" | "alternative"
EDIT_ROLE = Qt.ItemDataRole.UserRole + 3     # precise text put in the editor
ALT_VALUE_ROLE = Qt.ItemDataRole.UserRole + 4
OVERRIDE_COLOUR = QColor("#b35900")
ERROR_BRUSH = QBrush(QColor("#fde3e0"))
COLUMNS = ("Field", "Value", "Unit", "Provenance")


class _ValueDelegate(QStyledItemDelegate):
    """Edits the precise value (display text is rounded for reading)."""

    def setEditorData(self, editor, index):
        precise = index.data(EDIT_ROLE)
        editor.setText(precise if precise is not None else index.data() or "")


class PropertyInspector(DocumentBinding, QWidget):
    """The inspector of one document; follows ``Document.selection_changed``."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.target: tuple[str, str] = ("", "")  # ("device" | "connection", id)
        self._record = None
        self._state = None
        self._updating = False
        self._refusal = ""  # the model's reason when it refuses one of our edits
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(COLUMNS)
        self.tree = QTreeView(alternatingRowColors=True, uniformRowHeights=True)
        self.tree.setModel(self.model)
        self.tree.setItemDelegateForColumn(1, _ValueDelegate(self.tree))
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828;")
        self.message.hide()
        self.revert_button = QPushButton("Revert to catalog value")
        self.revert_button.setEnabled(False)
        self.revert_button.setToolTip("Drop this project's override of the selected field")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.model.itemChanged.connect(self._item_changed)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.revert_button.clicked.connect(self.revert_current)
        self.set_document(document)

    def document_connections(self, document):
        return ((document.selection_changed, self.show_item), (document.changed, self._on_changed),
                (document.refused, self._on_refused), (document.field_requested, self._field_requested))

    def _field_requested(self, kind: str, item_id: str, field: str) -> None:
        if self.target == (kind, item_id):
            self.focus_field(field)

    def focus_field(self, field: str) -> bool:
        """Make ``field``'s value cell current, scrolled into view and focused (ready to
        type over); False if the shown item has no such field."""
        try:
            index = self.value_index(field)
        except KeyError:
            return False
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index)
        self.tree.setFocus()
        return True

    def show_project(self) -> None:
        self.show_item(*self.document.selected)

    # ---- what is shown
    def _entity(self):
        kind, item_id = self.target
        table = {"device": self.document.project.devices,
                 "connection": self.document.project.connections}.get(kind, {})
        return table.get(item_id)

    def _catalog_kind(self) -> str:
        entity = self._entity()
        return entity.kind if self.target[0] == "device" else "link"

    def _collection(self) -> str:
        return "devices" if self.target[0] == "device" else "connections"

    def show_item(self, kind: str, item_id: str) -> None:
        """Show device or connection ``item_id`` (anything else: a short explanation)."""
        self.target = (kind, item_id) if kind in ("device", "connection") else ("", "")
        self._set_message("")
        self._fill()

    def _on_changed(self, event: str, payload) -> None:
        if not self.target[0]:
            return
        if event == "catalog_changed":
            self._fill()   # the shown record is read again
            return
        if event.endswith("_removed") and getattr(payload, "id", None) == self.target[1]:
            self.show_item("", "")
        elif event.endswith("_changed") or event.endswith("_added"):
            if getattr(payload, "id", None) == self.target[1] and self._entity() is payload \
                    and self._shown_state() != self._state:
                # another catalog entry (a link or device swapped): its own fields and records
                renamed = self._state is None or self._shown_state()[3:] != self._state[3:]
                self._fill() if renamed else self._refresh()

    def _shown_state(self):
        """What the inspector displays of the entity (moves do not change it)."""
        entity = self._entity()
        return None if entity is None else (dict(entity.overrides), entity.label,
                                            getattr(entity, "count", None),
                                            getattr(entity, "link_name", None),
                                            getattr(entity, "device_name", None))

    def _fill(self) -> None:
        self._state = self._shown_state()
        self._updating = True
        try:
            self.model.removeRows(0, self.model.rowCount())
            entity = self._entity()
            self._record = None
            if entity is None:
                self.title.setText("<i>Select a device or link on the System tab to see and "
                                   "override its parameters.</i>")
                self.revert_button.setEnabled(False)
                return
            name = entity.device_name if self.target[0] == "device" else entity.link_name
            kind = self._catalog_kind()
            try:
                if self.document.catalog is None:
                    raise ModelError("no device database is open")
                self._record = self.document.catalog.get(name)
            except ModelError as exc:
                self.title.setText(f"<b>{name}</b><br><span style='color:#c62828'>{exc}</span>")
                return
            self.title.setText(f"<b>{entity.label or name}</b> &nbsp;<span style='color:gray'>"
                               f"{kind} · {entity.id} · {self._record.origin}</span><br>"
                               "<small>Double-click a value to override it for this project."
                               "</small>")
            for row in self._info_rows(entity):
                self.model.appendRow(row)
            for field in field_names(kind, self._record):
                self.model.appendRow(self._field_row(kind, field))
            self.tree.expandToDepth(-1)
            self.tree.resizeColumnToContents(0)
            self.tree.setColumnWidth(0, min(max(self.tree.columnWidth(0), 150), 215))
            self.tree.setColumnWidth(1, 115)
            self.tree.setColumnWidth(2, 50)
        finally:
            self._updating = False

    def _cells(self, texts, field: str, row_kind: str) -> list[QStandardItem]:
        cells = []
        for text in texts:
            cell = QStandardItem(text)
            cell.setEditable(False)
            cell.setData(field, FIELD_ROLE)
            cell.setData(row_kind, ROW_ROLE)
            cells.append(cell)
        return cells

    def _info_rows(self, entity) -> list[list[QStandardItem]]:
        rows = []
        if self.target[0] == "device":
            rows.append(self._cells(("Device", entity.device_name, "", self._record.origin),
                                    "device", "info"))
            count = self._cells(("Count", str(entity.count), "count",
                                 "this project"), "count", "count")
            count[1].setEditable(True)
            count[1].setToolTip("how many of these boards the node has (×N on the canvas)")
            rows.append(count)
        else:
            names = [self.document.project.devices[x].label
                     or self.document.project.devices[x].device_name
                     for x in (entity.a, entity.b) if x in self.document.project.devices]
            rows.append(self._cells(("Link", entity.link_name, "", self._record.origin),
                                    "link", "info"))
            rows.append(self._cells(("Joins", " ↔ ".join(names), "", "this project"),
                                    "joins", "info"))
        label = self._cells(("Label", entity.label or "", "text", "this project"),
                            "label", "label")
        label[1].setEditable(True)
        rows.append(label)
        for row in rows:
            for cell in row:
                cell.setForeground(QBrush(QColor("#333333")))
                if not cell.toolTip():  # long names (a link's, the joined devices) are cut
                    cell.setToolTip(cell.text())
        return rows

    def _field_row(self, kind: str, field: str) -> list[QStandardItem]:
        unit = unit_of(kind, field)
        cells = self._cells((field_label(field), "", unit, ""), field, "field")
        cells[0].setToolTip(field)
        reason = read_only_reason(kind, field)
        cells[1].setEditable(reason is None)
        records = self._record.values.get(field, ())
        if len(records) > 1:
            for rec in records:
                alt = self._cells(("", format_value(kind, field, rec.value), rec.unit,
                                   provenance_text(rec) + ("  ★ default" if rec.is_default
                                                           else "")), field, "alternative")
                alt[1].setData(rec.value, ALT_VALUE_ROLE)
                tip = record_tooltip(rec, self._record.sources)
                for cell in alt:
                    cell.setToolTip(tip)
                    cell.setForeground(QBrush(QColor("#555555")))
                cells[0].appendRow(alt)
        self._show_field_value(cells, kind, field)
        return cells

    def _show_field_value(self, cells, kind: str, field: str) -> None:
        """Value, provenance and style of a field row from the catalog and the override."""
        entity = self._entity()
        key = override_key(kind, field)
        record = self._record.default_record(field)
        catalog_value = record.value if record is not None else None
        overridden = key in entity.overrides
        value = entity.overrides[key] if overridden else catalog_value
        cells[1].setText(format_value(kind, field, value))
        cells[1].setData(format_value(kind, field, value, precise=True) if value is not None
                         else "", EDIT_ROLE)
        catalog_text = provenance_text(record)
        if overridden:
            cells[3].setText(f"overridden (catalog: {format_value(kind, field, catalog_value)}"
                             f" — {catalog_text})")
        else:
            cells[3].setText(catalog_text)
        font = QFont()
        font.setBold(overridden)
        for cell in cells[1:]:
            cell.setFont(font)
            cell.setForeground(QBrush(OVERRIDE_COLOUR) if overridden
                               else QBrush(QColor("#1b1b1b") if value is not None
                                           else QColor("#8a8a8a")))
            cell.setBackground(QBrush())
        tips = [f"{field} ({unit_of(kind, field)})"]
        if overridden:
            tips.append(f"overridden for this project; catalog value "
                        f"{format_value(kind, field, catalog_value)}")
        reason = read_only_reason(kind, field)
        if reason:
            tips.append(f"read-only here: {reason}")
        records = self._record.values.get(field, ())
        for rec in records:
            tips.append(f"{'★ ' if rec.is_default else '• '}{format_value(kind, field, rec.value)}"
                        f" — {provenance_text(rec)}")
        if record is not None and (record.note or record.where):
            tips.append(record_tooltip(record, self._record.sources))
        for cell in cells[1:]:
            cell.setToolTip("\n".join(tips))

    def _refresh(self) -> None:
        """Update values in place (the same entity changed: an override, a count...)."""
        if self._record is None:
            self._fill()
            return
        entity = self._entity()
        kind = self._catalog_kind()
        self._state = self._shown_state()
        self._updating = True
        try:
            for row in range(self.model.rowCount()):
                cells = [self.model.item(row, c) for c in range(len(COLUMNS))]
                row_kind, field = cells[0].data(ROW_ROLE), cells[0].data(FIELD_ROLE)
                if row_kind == "field":
                    self._show_field_value(cells, kind, field)
                elif row_kind == "count":
                    cells[1].setText(str(entity.count))
                elif row_kind == "label":
                    cells[1].setText(entity.label or "")
                cells[1].setBackground(QBrush())
        finally:
            self._updating = False
        self._update_buttons()

    # ---- editing
    def row_of(self, field: str) -> int:
        for row in range(self.model.rowCount()):
            if self.model.item(row, 0).data(FIELD_ROLE) == field:
                return row
        raise KeyError(field)

    def value_index(self, field: str) -> QModelIndex:
        """The model index of ``field``'s value cell (what a user edits)."""
        return self.model.index(self.row_of(field), 1)

    def _item_changed(self, item: QStandardItem) -> None:
        if self._updating or item.column() != 1:
            return
        row_kind, field = item.data(ROW_ROLE), item.data(FIELD_ROLE)
        self.set_value(field, item.text(), row_kind)

    def set_value(self, field: str, text: str, row_kind: str | None = None) -> bool:
        """Apply what the user typed for ``field``; False (message at the field) if refused."""
        entity = self._entity()
        if entity is None:
            return False
        if row_kind is None:
            row_kind = self.model.item(self.row_of(field), 0).data(ROW_ROLE)
        collection = self._collection()
        if row_kind == "count":
            try:
                count = parse_exact_number(text)
            except QuantityError as exc:
                return self._refuse(field, f"count must be a whole number 1..1024: {exc}")
            if not isinstance(count, int):
                return self._refuse(field, f"count must be a whole number 1..1024, got {text.strip()!r}")
            if count == entity.count:
                self._refresh()
                return True
            return self._edit(field, UpdateItem(collection, entity.id, text="set count",
                                                count=count))
        if row_kind == "label":
            if text.strip() == entity.label:
                return True
            return self._edit(field, UpdateItem(collection, entity.id, text="rename",
                                                label=text.strip()))
        kind = self._catalog_kind()
        try:
            value = parse_override(kind, field, text, self.document.latency_tables())
        except OverrideError as exc:
            return self._refuse(field, str(exc))
        key = override_key(kind, field)
        record = self._record.default_record(field)
        current = entity.overrides.get(key, record.value if record is not None else None)
        if _same(current, value):
            self._refresh()
            return True
        return self._edit(field, _worded(SetOverride(collection, entity.id, key, value), "override", field))

    def _on_refused(self, message: str, item: str) -> None:
        if self.pushing:
            self._refusal = message

    def _edit(self, field: str, command) -> bool:
        """Push an edit of ``field``; a refusal is shown at the field."""
        self._refusal = ""
        if not self.push(command, field):
            return self._refuse(field, self._refusal or "refused", notify=False)
        self._set_message("")
        return True

    def _refuse(self, field: str, message: str, notify: bool = True) -> bool:
        """Put the old value back and say why next to the field (and in the status bar)."""
        self._refresh()
        try:
            row = self.row_of(field)
        except KeyError:
            row = None
        if row is not None:
            self._updating = True
            try:
                cell = self.model.item(row, 1)
                cell.setBackground(ERROR_BRUSH)
                cell.setToolTip(message)
            finally:
                self._updating = False
        self._set_message(message)
        if notify:
            self.document.refused.emit(message, self.target[1])
        return False

    def _set_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def message_text(self) -> str:
        return self.message.text()

    # ---- reverting and alternatives
    def _current_field(self) -> tuple[str | None, str | None]:
        index = self.tree.currentIndex()
        if not index.isValid():
            return None, None
        return index.data(FIELD_ROLE), index.data(ROW_ROLE)

    def is_overridden(self, field: str) -> bool:
        entity = self._entity()
        return entity is not None and override_key(self._catalog_kind(), field) in entity.overrides

    def revert(self, field: str) -> bool:
        """Drop the project's override of ``field`` (back to the catalog value)."""
        entity = self._entity()
        if entity is None or not self.is_overridden(field):
            return False
        key = override_key(self._catalog_kind(), field)
        return self._edit(field, _worded(SetOverride(self._collection(), entity.id, key, None), "revert", field))

    def revert_current(self) -> bool:
        field, row_kind = self._current_field()
        return bool(field) and row_kind in ("field", "alternative") and self.revert(field)

    def use_alternative(self, field: str, value) -> bool:
        """Make another source's value this project's value of ``field``."""
        entity = self._entity()
        if entity is None or value is None:
            return False
        kind = self._catalog_kind()
        if read_only_reason(kind, field):
            return self._refuse(field, f"{field_label(field)} cannot be overridden: "
                                       f"{read_only_reason(kind, field)}")
        return self.set_value(field, format_value(kind, field, value, precise=True), "field")

    def _current_changed(self, current, previous) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        field, row_kind = self._current_field()
        self.revert_button.setEnabled(bool(field) and row_kind in ("field", "alternative")
                                      and self.is_overridden(field))

    def _context_menu(self, pos) -> None:
        menu = self.build_context_menu(self.tree.indexAt(pos))
        if menu is not None:
            menu.exec(self.tree.viewport().mapToGlobal(pos))

    def build_context_menu(self, index: QModelIndex) -> QMenu | None:
        if not index.isValid() or index.data(ROW_ROLE) not in ("field", "alternative"):
            return None
        field = index.data(FIELD_ROLE)
        menu = QMenu(self)
        revert = menu.addAction("Revert to catalog value", lambda: self.revert(field))
        revert.setEnabled(self.is_overridden(field))
        if index.data(ROW_ROLE) == "alternative":
            value = index.siblingAtColumn(1).data(ALT_VALUE_ROLE)
            use = menu.addAction("Use this value for this project",
                                 lambda: self.use_alternative(field, value))
            use.setEnabled(value is not None
                           and read_only_reason(self._catalog_kind(), field) is None)
        return menu


def _worded(command, verb: str, field: str):
    """The undo text in words: "override SM clock", not the field's internal name."""
    command.text = f"{verb} {field_label(field)}"
    return command


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)
    return a == b
