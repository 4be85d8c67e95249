"""The open document as the GUI sees it: the project, one QUndoStack, the device catalog.

Editors turn user intent into core commands (:mod:`gpumodeler.core.commands`) and hand them
to :meth:`Document.push`; scenes listen to :attr:`Document.changed` and mirror the model.
A refused command (invalid input) never changes the project: ``push`` returns False and
emits :attr:`Document.refused` with the message (and the item it concerns), which the main
window shows in the status bar and the editors next to the field or item.

The device database is not part of the project, but every view shows values from it: what
changes it in the GUI (a device merge, a stored calibration) calls
:meth:`Document.catalog_changed`, which emits :attr:`Document.changed` with the event
:data:`CATALOG_CHANGED`; views drop what they cached of the catalog and show it again.
"""
from __future__ import annotations

import itertools

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from gpumodeler.core.commands import Command
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.latency_tables import TABLES, LatencyTable
from gpumodeler.core.project import Project

#: Document.changed event after the device database changed; payload: the names of the
#: devices and links that changed (empty: any of them may have)
CATALOG_CHANGED = "catalog_changed"

_merge_ids = itertools.count(1000)
_MERGE_IDS: dict = {}


def _merge_id(key) -> int:
    """QUndoCommand.id() for a core merge key (-1 = never merge)."""
    if key is None:
        return -1
    if key not in _MERGE_IDS:
        _MERGE_IDS[key] = next(_merge_ids)
    return _MERGE_IDS[key]


class CommandAdapter(QUndoCommand):
    """One core command on the QUndoStack. The command is done before it is pushed (so a
    refusal raises before the stack changes); the first redo() that Qt calls on push is
    therefore skipped."""

    def __init__(self, document: "Document", command: Command):
        super().__init__(command.text)
        self.document, self.command = document, command
        self._first = True

    def redo(self):
        if self._first:
            self._first = False
            return
        self.command.do(self.document.project)

    def undo(self):
        self.command.undo(self.document.project)

    def id(self):
        return _merge_id(self.command.merge_key)

    def mergeWith(self, other):
        if not isinstance(other, CommandAdapter):
            return False
        return self.command.merge(other.command)


class Document(QObject):
    """The project being edited, its undo stack and the catalog that resolves device names."""

    #: (event, payload) after every change of the project (project events, see core.project)
    changed = Signal(str, object)
    #: (message, item id or "") when an edit is refused
    refused = Signal(str, str)
    #: (kind, id) — the selection the property inspector shows; kind is
    #: "device" | "connection" | "instruction" | "edge" | "loop" | "launch" | "" (nothing)
    selection_changed = Signal(str, str)
    #: the file path changed (save as, open)
    path_changed = Signal(str)
    #: (kind, id, field) — show this field of a device or link so the user can set it
    field_requested = Signal(str, str, str)

    def __init__(self, project: Project | None = None, catalog=None, path: str | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.project = project or Project()
        self.catalog = catalog
        self.path = path
        self.undo_stack = QUndoStack(self)
        self.project.listeners.append(self._relay)
        self.selected: tuple[str, str] = ("", "")
        self._tables: dict[str, LatencyTable] | None = None
        #: why the device database's latency tables could not all be read ("" if they were)
        self.tables_problem = ""

    def _relay(self, event, payload):
        self.changed.emit(event, payload)

    def push(self, command: Command) -> bool:
        """Do ``command`` and record it; False (and ``refused``) if the model refused it."""
        try:
            command.do(self.project)
        except ModelError as exc:
            self.refused.emit(str(exc), getattr(exc, "item", None) or "")
            return False
        self.undo_stack.push(CommandAdapter(self, command))
        return True

    def catalog_changed(self, names=()) -> None:
        """The device database changed (``names``: the devices and links that did, empty:
        any): its latency tables are read again and every view is told
        (:data:`CATALOG_CHANGED`). Not a project edit: nothing goes on the undo stack."""
        self.refresh_latency_tables()
        self.changed.emit(CATALOG_CHANGED, tuple(names))

    def select(self, kind: str, item_id: str) -> None:
        self.selected = (kind, item_id)
        self.selection_changed.emit(kind, item_id)

    def show_field(self, kind: str, item_id: str, field: str) -> None:
        """Select device/connection ``item_id`` and ask the inspector to show ``field``
        (where a message says a value is missing)."""
        self.select(kind, item_id)
        self.field_requested.emit(kind, item_id, field)

    def set_path(self, path: str | None) -> None:
        self.path = path
        self.path_changed.emit(path or "")

    # -- catalog lookups used by evaluate_launch (names -> core specs) --------------------
    def lookups(self) -> dict:
        """The resolvers the service layer (:mod:`gpumodeler.service`) and core's pipeline
        take: gpu_lookup, link_lookup, table_lookup, calibration_lookup over this catalog."""
        return {"gpu_lookup": self.gpu_spec, "link_lookup": self.link_spec,
                "table_lookup": self.latency_table,
                "calibration_lookup": self.calibrated_link_spec}

    def gpu_spec(self, name: str):
        if self.catalog is None:
            raise ModelError("no device database is open")
        return self.catalog.get(name).to_gpu_spec()

    def latency_table(self, key: str):
        """A latency table that is not built in, from the device database."""
        if self.catalog is None:
            raise ModelError("no device database is open")
        return self.catalog.latency_table(key)

    def latency_tables(self) -> dict[str, LatencyTable]:
        """Every latency table a kernel graph can name: the built-in ones (core's copies of
        the documents' tables), then the device database's other tables (published ones,
        the user's own), by key. Read once; refresh_latency_tables() after the database
        changes. A table that cannot be read is left out and named in tables_problem."""
        if self._tables is None:
            tables, problems = dict(TABLES), []
            if self.catalog is not None:
                try:
                    keys = self.catalog.latency_table_keys()
                except ModelError as exc:
                    keys, problems = [], [str(exc)]
                for key in keys:
                    if key not in tables:
                        try:
                            tables[key] = self.catalog.latency_table(key)
                        except ModelError as exc:
                            problems.append(f"latency table '{key}': {exc}")
            self._tables, self.tables_problem = tables, "; ".join(problems)
        return self._tables

    def refresh_latency_tables(self) -> None:
        self._tables = None

    def table_for(self, key: str | None) -> LatencyTable | None:
        """The latency table ``key`` names (built in or from the database); None for no
        key or a key no table has (the graph analysis then says which)."""
        return None if key is None else self.latency_tables().get(key)

    def link_spec(self, name: str):
        if self.catalog is None:
            raise ModelError("no device database is open")
        return self.catalog.get(name).to_link_spec()

    def calibrated_link_spec(self, name: str, label: str):
        """Link ``name`` carrying its stored calibration ``label`` (the transfer models a
        connection's ``transfer_calibration`` selects); InvalidParameter naming the labels
        stored when there is none of that label."""
        if self.catalog is None:
            raise ModelError("no device database is open")
        from gpumodeler.db.calibrations import calibrated_link_spec
        return calibrated_link_spec(self.catalog, name, label)

    def link_calibrations(self, name: str) -> list:
        """The current stored calibrations of link ``name`` (any label or direction)."""
        if self.catalog is None:
            return []
        from gpumodeler.db.calibrations import list_calibrations
        return [c for c in list_calibrations(self.catalog, name, "link") if c.is_current]

    def base_links(self, name: str) -> list[str]:
        """The catalog links link ``name`` derives from by its name
        (:func:`gpumodeler.core.transfers.lineage.base_link_names`) that the database lists,
        under that very name or alias, as links of the same type; nearest first."""
        from gpumodeler.core.transfers.lineage import base_link_names
        from gpumodeler.db.mapping import normalize_name
        if self.catalog is None:
            return []
        try:
            link_type = self.catalog.get(name).value("link_type")
        except (ModelError, LookupError):
            return []
        out = []
        for base in base_link_names(name):
            try:
                summary = self.catalog.resolve(base)
                same_type = self.catalog.get(summary.name).value("link_type") == link_type
            except (ModelError, LookupError):
                continue
            names = {normalize_name(n) for n in (summary.name, *summary.aliases)}
            if summary.kind == "link" and same_type and normalize_name(base) in names:
                out.append(summary.name)
        return out

    def offered_link_calibrations(self, name: str) -> list[tuple[str, object]]:
        """(link stored under, calibration) of every current calibration a connection over
        link ``name`` can use: the link's own, then those of the links it derives from
        (:meth:`base_links`) for labels the link has none of."""
        own = [(name, c) for c in self.link_calibrations(name)]
        seen = {c.label for _, c in own}
        for base in self.base_links(name):
            found = [(base, c) for c in self.link_calibrations(base) if c.label not in seen]
            own += found
            seen |= {c.label for _, c in found}
        return own

    def adopt_link_calibration(self, name: str, source: str, label: str) -> list:
        """Store the current calibrations labelled ``label`` of link ``source`` (a link
        ``name`` derives from) as link ``name``'s own, their provenance kept and the origin
        noted, so the project's predictions (here and on the command line) find them under
        the link's name; returns the stored calibrations (views are told)."""
        from dataclasses import replace

        from gpumodeler.db.calibrations import save_calibration
        stored = []
        for cal in self.link_calibrations(source):
            if cal.label != label:
                continue
            note = f"calibrated on {source}" + (f"; {cal.note}" if cal.note else "")
            stored.append(save_calibration(self.catalog, replace(cal, device=name, note=note)))
        if stored:
            self.catalog_changed((name,))
        return stored
