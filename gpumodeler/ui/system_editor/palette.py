"""The device palette: GPUs, hosts and links of the catalog, grouped by kind and family,
with a filter. Items drag out as :data:`CATALOG_MIME` (JSON ``{"kind", "name"}``).
"""
from __future__ import annotations

import json

from PySide6.QtCore import QMimeData, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QAbstractItemView, QLabel, QLineEdit, QTreeView, QVBoxLayout,
                               QWidget)

from gpumodeler.ui.icons import icon

CATALOG_MIME = "application/x-gpumodeler-catalog-item"
KIND_ROLE = Qt.ItemDataRole.UserRole + 1
NAME_ROLE = Qt.ItemDataRole.UserRole + 2
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 3
GROUPS = (("gpu", "GPUs"), ("host", "Hosts"), ("link", "Links"))


def catalog_mime(kind: str, name: str) -> QMimeData:
    """The drag payload of one catalog entry (also what tests drop on the canvas)."""
    mime = QMimeData()
    mime.setData(CATALOG_MIME, json.dumps({"kind": kind, "name": name}).encode())
    mime.setText(name)
    return mime


def read_catalog_mime(mime: QMimeData) -> tuple[str, str] | None:
    """(kind, name) of a catalog drag, or None when ``mime`` is something else."""
    if mime is None or not mime.hasFormat(CATALOG_MIME):
        return None
    try:
        data = json.loads(bytes(mime.data(CATALOG_MIME)).decode())
        return str(data["kind"]), str(data["name"])
    except (ValueError, KeyError, TypeError):
        return None


class _CatalogModel(QStandardItemModel):
    def mimeTypes(self):
        return [CATALOG_MIME]

    def mimeData(self, indexes):
        for index in indexes:
            kind, name = index.data(KIND_ROLE), index.data(NAME_ROLE)
            if kind and name:
                return catalog_mime(kind, name)
        return None


class DevicePalette(QWidget):
    """Filterable tree of catalog entries; double-click asks to add the entry."""

    #: (kind, name) the user double-clicked or pressed Enter on
    sig_entry_activated = Signal(str, str)

    def __init__(self, catalog, parent=None):
        super().__init__(parent)
        self.filter_edit = QLineEdit(placeholderText="Filter devices (name, alias, cc…)",
                                     toolTip="Show only devices whose name, alias or compute capability "
                                             "contains this text")
        self.filter_edit.setClearButtonEnabled(True)
        self.model = _CatalogModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterRole(SEARCH_ROLE)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setRecursiveFilteringEnabled(True)
        self.tree = QTreeView(headerHidden=True, uniformRowHeights=True)
        self.tree.setModel(self.proxy)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.hint = QLabel("Drag a GPU or host onto the canvas; drop a link on a device, "
                           "then click the device to join it to.")
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(mid); font-size: 11px;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.hint)
        self.filter_edit.textChanged.connect(self._filter)
        self.tree.activated.connect(self._activated)
        self._fill(catalog)

    def set_catalog(self, catalog) -> None:
        self.model.removeRows(0, self.model.rowCount())
        self._fill(catalog)

    def _fill(self, catalog) -> None:
        summaries = _by_generation(catalog.list() if catalog is not None else [])
        for kind, title in GROUPS:
            group = QStandardItem(icon(kind), title)
            group.setData(title, SEARCH_ROLE)
            group.setDragEnabled(False)
            families: dict[str, QStandardItem] = {}
            for s in summaries:
                if s.kind != kind:
                    continue
                family = s.family or s.architecture or "Other"
                if family not in families:
                    families[family] = QStandardItem(family)
                    families[family].setData(family, SEARCH_ROLE)
                    families[family].setDragEnabled(False)
                    group.appendRow(families[family])
                leaf = QStandardItem(icon(kind), s.name)
                leaf.setData(kind, KIND_ROLE)
                leaf.setData(s.name, NAME_ROLE)
                leaf.setData(" ".join(x for x in (s.name, *s.aliases, s.family, s.architecture,
                                                  s.compute_capability, s.vendor) if x),
                             SEARCH_ROLE)
                tip = [s.name]
                if s.aliases:
                    tip.append("also: " + ", ".join(s.aliases))
                if s.compute_capability:
                    tip.append(f"compute capability {s.compute_capability}")
                tip.append(f"origin: {s.origin}")
                leaf.setToolTip("\n".join(tip))
                families[family].appendRow(leaf)
            self.model.appendRow(group)
        if catalog is None:
            self.hint.setText("No device database is open: the palette is empty.")
        self.tree.expandToDepth(0)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        if text.strip():
            self.tree.expandAll()
        else:
            self.tree.collapseAll()
            self.tree.expandToDepth(0)

    def _activated(self, index: QModelIndex) -> None:
        kind, name = index.data(KIND_ROLE), index.data(NAME_ROLE)
        if kind and name:
            self.sig_entry_activated.emit(kind, name)

    def entries(self, kind: str | None = None) -> list[tuple[str, str]]:
        """(kind, name) of the entries the filter shows, in tree order."""
        out = []

        def walk(parent: QModelIndex):
            for row in range(self.proxy.rowCount(parent)):
                index = self.proxy.index(row, 0, parent)
                k, n = index.data(KIND_ROLE), index.data(NAME_ROLE)
                if k and (kind is None or k == kind):
                    out.append((k, n))
                walk(index)
        walk(QModelIndex())
        return out


def _cc_key(cc) -> tuple:
    try:
        return tuple(int(x) for x in str(cc).split(".")[:2])
    except (TypeError, ValueError):
        return (99, 0)


def _by_generation(summaries) -> list:
    """GPUs by architecture generation (a family ranks by its oldest compute capability:
    Tesla, Fermi, Kepler, Maxwell, …, Blackwell), then by name; other kinds as listed."""
    first: dict[str, tuple] = {}
    for s in summaries:
        if s.kind == "gpu":
            family = s.family or s.architecture or "Other"
            first[family] = min(first.get(family, (99, 0)), _cc_key(s.compute_capability))
    return sorted(summaries, key=lambda s: (first.get(s.family or s.architecture or "Other", (99, 0)), s.name)
                  if s.kind == "gpu" else ((0, 0), ""))
