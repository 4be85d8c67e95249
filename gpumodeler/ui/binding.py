"""What every widget that edits a :class:`~gpumodeler.ui.document.Document` does alike.

:class:`DocumentBinding` is a mixin for those widgets (editors, the launch panel, the
inspector, the main window). It follows one document at a time: :meth:`~DocumentBinding.
set_document` lets go of the previous document's signals (New and Open replace the document;
a slot left connected to the old one would fire into a widget that moved on), listens to
the new one's and shows its project from scratch. :meth:`~DocumentBinding.push` hands a
command to the document and notes the field it came from, so the widget's ``refused``
slot can show a refusal next to that field.
"""
from __future__ import annotations

from collections.abc import Iterable


class DocumentBinding:
    """Mixin: put it before the Qt class (``class Editor(DocumentBinding, QWidget)``) and
    override :meth:`document_connections` and :meth:`show_project`."""

    document = None
    #: True while :meth:`push` runs: a refusal emitted now answers this widget's command
    pushing = False
    #: the field the command being pushed came from (None: not from one field)
    refusal_field: str | None = None
    _connections: tuple = ()

    def document_connections(self, document) -> Iterable[tuple]:
        """The (signal, slot) pairs this widget listens to on ``document``."""
        return ()

    def show_project(self) -> None:
        """Show the document's project from scratch (another document, a replaced project)."""

    def set_document(self, document) -> None:
        """Edit ``document`` (New, Open): listen to it instead of the previous one."""
        self.bind_document(document)
        self.show_project()

    def bind_document(self, document) -> None:
        """Connect to ``document``'s signals after disconnecting the previous document's."""
        for signal, slot in self._connections:
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):  # the previous document is already gone
                pass
        self.document = document
        self._connections = tuple(self.document_connections(document))
        for signal, slot in self._connections:
            signal.connect(slot)

    @property
    def project(self):
        return self.document.project

    def push(self, command, field: str | None = None) -> bool:
        """Do ``command`` through the document (one undo step); False if the model refused
        it. :meth:`command_done` follows a command that was done."""
        self.pushing, self.refusal_field = True, field
        try:
            ok = self.document.push(command)
        finally:
            self.pushing, self.refusal_field = False, None
        if ok:
            self.command_done()
        return ok

    def command_done(self) -> None:
        """After one of this widget's commands was done (refresh what it shows)."""


def current_or_first(items: dict, current: str | None) -> str | None:
    """``current`` if the collection still holds it, else its first id (None if empty)."""
    return current if current in items else next(iter(items), None)


def item_choices(items: dict) -> list[tuple[str, str]]:
    """(text, id) for each named item of a project collection: 'saxpy2  (k1)'."""
    return [(f"{item.name}  ({item_id})", item_id) for item_id, item in items.items()]


def fill_item_combo(combo, items: dict, current: str | None) -> None:
    """Show a collection's items in ``combo`` with ``current`` chosen, without emitting."""
    combo.blockSignals(True)
    combo.clear()
    for text, item_id in item_choices(items):
        combo.addItem(text, item_id)
    combo.setCurrentIndex(combo.findData(current))
    combo.blockSignals(False)
