"""MainWindow: the editors as tabs, their docks, menus, status bar.

Layout and wiring only (house style: the main window stays small). The docks that go with a tab
(the inspector, the kernel's properties, the sweep plot) are managed by :mod:`.docks`; the
actions, menus and tool bar are built by :mod:`.menus`. The editors change the project;
the window opens and saves files through :mod:`gpumodeler.db.project_file`, routes the Edit
menu to the current editor, shows refusals and hints in the status bar and remembers recent
files, geometry and dock state. Questions to the user go through small hook methods
(:meth:`ask_save_changes`, :meth:`ask_open_path`, :meth:`ask_save_path`,
:meth:`show_error`) so tests can answer them without a modal dialog.
"""
from __future__ import annotations

import os
from pathlib import Path

import shiboken6
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QUndoGroup
from PySide6.QtWidgets import (QApplication, QFileDialog, QFrame, QLabel, QMainWindow,
                               QMessageBox, QScrollArea, QTabWidget, QWidget)

from gpumodeler import __version__
from gpumodeler.core.errors import ModelError
from gpumodeler.core.project import Project
from gpumodeler.db.project_file import load_project, save_project
from gpumodeler.ui import settings
from gpumodeler.ui.binding import DocumentBinding
from gpumodeler.ui.docks import TabDocks
from gpumodeler.ui.document import Document
from gpumodeler.ui.icons import icon
from gpumodeler.ui.imports_exports import ImportsExports
from gpumodeler.ui.logs import error_shown, refusal_shown
from gpumodeler.ui.inspector import PropertyInspector
from gpumodeler.ui.menus import TAB_NAMES, create_actions, create_menus
from gpumodeler.ui.system_editor import SystemEditor

FILE_FILTER = "gpumodeler projects (*.gpm);;All files (*)"
DEFAULT_SIZE = (1600, 1000)
# The Kernel and Launch tabs are built just after the window first shows (or when opened
# before that): the window appears sooner, their imports (pyqtgraph...) come after.
DEFERRED_TABS_MS = 100
MAX_PAGE_MIN_WIDTH = 700
REFUSAL_MS = 10000
# Edit-menu commands -> the editor method that performs them (editors without it: disabled).
EDIT_ROUTES = {"cut": "cut_selection", "copy": "copy_selection", "paste": "paste",
               "delete": "delete_selection", "select_all": "select_all", "fit": "fit"}
# Editors that bring their own shortcut for a command: the window's action gives way
# to theirs while that editor is current (two identical shortcuts would both be dead).
OWN_ACTIONS = {"fit": "fit_action", "delete": "delete_action"}


def example_projects() -> list[Path]:
    """The bundled example projects (resources/examples, shipped as gpumodeler/data/examples)."""
    here = Path(__file__).resolve().parents[1] / "data" / "examples"
    return sorted(here.glob("*.gpm")) if here.is_dir() else []


class MainWindow(ImportsExports, DocumentBinding, QMainWindow):
    """One window editing one document at a time."""

    def __init__(self, catalog=None, document: Document | None = None, parent=None,
                 remember: bool = True):
        super().__init__(parent)
        self.catalog = catalog
        self._closed = False
        self.remember = remember  # read and write window geometry in the settings
        self.undo_group = QUndoGroup(self)
        self.setWindowIcon(icon("app"))
        self.tabs = QTabWidget(documentMode=True)
        self.setCentralWidget(self.tabs)
        for name in TAB_NAMES:
            self.tabs.addTab(QWidget(), name)  # stand in until the editors are built
        self.docks = TabDocks(self)
        self.refusal_label = QLabel()
        self.refusal_label.setStyleSheet("color: #c62828; padding: 0 6px;")
        self.statusBar().addWidget(self.refusal_label, 1)
        self._refusal_timer = QTimer(self, singleShot=True, interval=REFUSAL_MS)
        self._refusal_timer.timeout.connect(lambda: self.refusal_label.setText(""))
        self.system_editor = self.inspector = None
        self._editors: dict[int, QWidget] = {}  # tab index -> editor, once built
        self._building_tab = False
        create_actions(self)
        create_menus(self)
        self.tabs.currentChanged.connect(self._tab_changed)
        self.set_document(document or Document(Project("untitled"), catalog))
        self.resize(*DEFAULT_SIZE)
        if remember:
            self.restore_settings()

    # ---- the document
    def set_document(self, document: Document) -> None:
        """Edit ``document`` (a new or opened project); the old one is let go."""
        old = self.document
        self.bind_document(document)
        if document.catalog is None:
            document.catalog = self.catalog
        self.undo_group.addStack(document.undo_stack)
        self.undo_group.setActiveStack(document.undo_stack)
        current = max(self.tabs.currentIndex(), 0)
        if self.system_editor is None:
            self.system_editor = SystemEditor(document)
            self._editors[0] = self.system_editor
            self._put_page(0, self.system_editor)
            self.tabs.setTabIcon(0, icon("gpu"))
            self.inspector = PropertyInspector(document)
            self.docks.adopt("inspector", self.inspector)
            self.system_editor.sig_hint_changed.connect(self.show_hint)
        else:
            for widget in list(self._editors.values()) + [self.inspector]:
                widget.set_document(document)
        self.tabs.setCurrentIndex(current)
        if old is not None:
            self.undo_group.removeStack(old.undo_stack)
            old.deleteLater()
        self._update_title()
        self._tab_changed(self.tabs.currentIndex())
        QTimer.singleShot(0, self.system_editor, self.system_editor.fit)

    # ---- the editors
    def editor(self, index: int) -> QWidget:
        """The editor of tab ``index``, built now if it was not yet."""
        if index not in self._editors:
            if index == 1:
                from gpumodeler.ui.kernel_editor.editor import KernelEditor
                widget = KernelEditor(self.document)
                self.docks.adopt("kernel_properties", widget.detach_properties())
            elif index == 3:
                from gpumodeler.ui.application.panel import ApplicationPanel
                widget = ApplicationPanel(self.document)
                widget.simulated.connect(self._show_busy_fractions)
            else:
                from gpumodeler.ui.launch_panel.panel import LaunchPanel
                widget = LaunchPanel(self.document)
                self.docks.adopt("sweep", widget.detach_sweep())
            self._editors[index] = widget
            self._put_page(index, widget)
        return self._editors[index]

    def _put_page(self, index: int, widget: QWidget) -> None:
        """``widget`` becomes tab ``index``'s page in place of its stand-in."""
        page = widget
        if widget.minimumSizeHint().width() > MAX_PAGE_MIN_WIDTH:
            # A wide form would widen the whole window's minimum (the tab widget takes
            # its widest page) and squeeze the inspector on the System tab: let it scroll.
            page = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
            page.setWidget(widget)
        current = self.tabs.currentIndex()
        self._building_tab = True
        try:
            placeholder = self.tabs.widget(index)
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, page, TAB_NAMES[index])
            self.tabs.setCurrentIndex(current)
            placeholder.deleteLater()
        finally:
            self._building_tab = False

    @property
    def kernel_editor(self):
        return self.editor(1)

    @property
    def launch_panel(self):
        return self.editor(2)

    @property
    def application_panel(self):
        return self.editor(3)

    def _show_busy_fractions(self, result, error) -> None:
        """The System tab shows each GPU's busy fraction from the last application run."""
        if self.system_editor is not None and hasattr(self.system_editor, "show_busy_fractions"):
            self.system_editor.show_busy_fractions(self.application_panel.busy_fractions())

    def build_all_tabs(self) -> None:
        if self._closed:  # a deferred build must not outlive the window (or its catalog)
            return
        for index in range(len(TAB_NAMES)):
            self.editor(index)

    def is_busy(self) -> bool:
        """An editor has background work running (a sweep) or about to start."""
        return any(getattr(e, "is_busy", lambda: False)() for e in self._editors.values())

    def document_connections(self, document: Document):
        return ((document.refused, self.show_refusal),
                (document.undo_stack.cleanChanged, self._update_title),
                (document.undo_stack.indexChanged, self._clear_refusal),
                (document.path_changed, self._update_title),
                (document.field_requested, self._show_inspector_for_field))

    def _show_inspector_for_field(self, *args) -> None:
        """A message's "set it" button: the inspector shows the field, whatever the tab."""
        self.docks.show_dock("inspector")

    @property
    def inspector_dock(self):
        return self.docks["inspector"]

    def project_name(self) -> str:
        if self.document.path:
            return Path(self.document.path).name
        return self.document.project.name or "untitled"

    def _update_title(self, *args) -> None:
        if not shiboken6.isValid(self.document.undo_stack):
            return  # the document is being torn down with the window (its stack clears)
        self.setWindowTitle(f"{self.project_name()}[*] — gpumodeler")
        self.setWindowModified(not self.document.undo_stack.isClean())

    def is_modified(self) -> bool:
        return not self.document.undo_stack.isClean()

    # ---- files
    def new_project(self) -> bool:
        if not self.maybe_save():
            return False
        self.set_document(Document(Project("untitled"), self.catalog))
        self.show_hint("New project: drag a GPU and a host from the palette onto the canvas")
        return True

    def open_dialog(self) -> bool:
        if not self.maybe_save():
            return False
        path = self.ask_open_path()
        return bool(path) and self.open_path(path, ask=False)

    def open_path(self, path: str, ask: bool = True) -> bool:
        """Open the project in ``path``. A file that cannot be read is reported and the
        current project stays as it was."""
        if ask and not self.maybe_save():
            return False
        try:
            project = load_project(path)
        except (ModelError, OSError) as exc:
            self.show_error("Cannot open project", f"{path} could not be opened.\n\n{exc}")
            return False
        self.set_document(Document(project, self.catalog, path=str(path)))
        settings.add_recent_file(str(path))
        self.show_hint(f"Opened {path}")
        return True

    def save(self) -> bool:
        if not self.document.path:
            return self.save_as()
        return self.save_to(self.document.path)

    def save_as(self) -> bool:
        path = self.ask_save_path()
        if not path:
            return False
        if not os.path.splitext(path)[1]:
            path += ".gpm"
        return self.save_to(path)

    def save_to(self, path: str) -> bool:
        try:
            save_project(self.document.project, path)
        except (ModelError, OSError) as exc:
            self.show_error("Cannot save project", f"The project was not saved.\n\n{exc}")
            return False
        self.document.undo_stack.setClean()
        if self.document.path != str(path):
            self.document.set_path(str(path))
        settings.add_recent_file(str(path))
        self._update_title()
        self.show_hint(f"Saved {path}")
        return True

    def maybe_save(self) -> bool:
        """True when the current work may be replaced (saved, discarded or unchanged)."""
        if not self.is_modified():
            return True
        answer = self.ask_save_changes()
        if answer == "save":
            return self.save()
        return answer == "discard"

    def fill_recent_menu(self) -> None:
        """Fill the File > Open Recent menu from the settings."""
        self.recent_menu.clear()
        files = settings.recent_files()
        for path in files:
            action = self.recent_menu.addAction(Path(path).name,
                                                lambda p=path: self.open_recent(p))
            action.setToolTip(path)
            action.setStatusTip(path)
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("Clear list", settings.clear_recent_files)

    def fill_examples_menu(self) -> None:
        """Fill the File > Examples menu with the bundled example projects."""
        self.examples_menu.clear()
        for path in example_projects():
            action = self.examples_menu.addAction(path.stem, lambda p=str(path): self.open_path(p))
            action.setToolTip(str(path))
        if self.examples_menu.isEmpty():
            self.examples_menu.addAction("(no examples installed)").setEnabled(False)

    def open_recent(self, path: str) -> bool:
        if not os.path.exists(path):
            settings.remove_recent_file(path)
            self.show_error("Cannot open project", f"{path} no longer exists; it was removed "
                                                   f"from the recent files.")
            return False
        return self.open_path(path)

    # ---- questions to the user (hooks tests replace)
    def ask_save_changes(self) -> str:
        """"save", "discard" or "cancel" for unsaved changes."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                          f"Save the changes to {self.project_name()}?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self)
        box.setInformativeText("Your changes will be lost if you don't save them.")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(
                    QMessageBox.StandardButton(answer), "cancel")

    def ask_open_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self, "Open project", self._dialog_folder(),
                                              FILE_FILTER)
        return path or None

    def ask_save_path(self) -> str | None:
        start = self.document.path or os.path.join(self._dialog_folder(),
                                                   f"{self.project_name()}.gpm")
        path, _ = QFileDialog.getSaveFileName(self, "Save project as", start, FILE_FILTER)
        return path or None

    def _dialog_folder(self) -> str:
        recent = settings.recent_files()
        return os.path.dirname(recent[0]) if recent else os.getcwd()

    def show_error(self, title: str, text: str) -> None:
        error_shown(title, text, f"project {self.project_name()}, "
                                 f"{self.tabs.tabText(self.tabs.currentIndex())} tab")
        QMessageBox.critical(self, title, text)

    def show_manual(self):
        """Help › Manual (F1): the user manual (docs/manual) rendered in a window."""
        from gpumodeler.ui.help import ManualDialog
        dialog = ManualDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.manual_dialog = dialog
        return dialog

    def show_shortcuts(self):
        from gpumodeler.ui.help import ShortcutsDialog
        dialog = ShortcutsDialog(self.actions(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.shortcuts_dialog = dialog
        return dialog

    def about(self) -> None:
        QMessageBox.about(self, "About gpumodeler",
                          f"<b>gpumodeler {__version__}</b><p>Model how fast a CUDA application "
                          "runs on GPUs you may not own: analytical models from Gajger (2017), "
                          "Volkov (2016) and Amarís (2018) over a device database that cites "
                          "its sources.</p>")

    # ---- status bar
    def show_refusal(self, message: str, item: str = "") -> None:
        refusal_shown(message, item)
        self.refusal_label.setText(f"⚠ {message}")
        self._refusal_timer.start()

    def _clear_refusal(self, *args) -> None:
        self.refusal_label.setText("")

    def refusal_text(self) -> str:
        return self.refusal_label.text()

    def show_hint(self, text: str) -> None:
        self.statusBar().showMessage(text, 6000)

    # ---- edit routing
    def current_editor(self):
        return self.editor(self.tabs.currentIndex())

    def route(self, command: str) -> None:
        """Send an Edit-menu ``command`` (cut, copy, paste, delete, …) to the widget it applies to."""
        focus = QApplication.focusWidget()
        if command == "delete" and focus is not None and self.inspector.isAncestorOf(focus):
            self.inspector.revert_current()  # Delete on an overridden value reverts it
            return
        editor = self.current_editor()
        own = getattr(editor, OWN_ACTIONS.get(command, ""), None)
        if isinstance(own, QAction):
            own.trigger()
            return
        method = getattr(editor, EDIT_ROUTES[command], None)
        if callable(method):
            method()

    def _tab_changed(self, index: int) -> None:
        if self._building_tab or index < 0:
            return
        self.docks.tab_changed(index)
        self.statusBar().clearMessage()  # a hint of the tab left behind is stale
        editor = self.current_editor()
        for command, action in self.edit_actions.items():
            own = getattr(editor, OWN_ACTIONS.get(command, ""), None)
            action.setEnabled(isinstance(own, QAction)
                              or callable(getattr(editor, EDIT_ROUTES[command], None)))
            default = [QKeySequence("F")] if command == "fit" else \
                QKeySequence.keyBindings({"cut": QKeySequence.StandardKey.Cut,
                                          "copy": QKeySequence.StandardKey.Copy,
                                          "paste": QKeySequence.StandardKey.Paste,
                                          "delete": QKeySequence.StandardKey.Delete,
                                          "select_all": QKeySequence.StandardKey.SelectAll}[command])
            action.setShortcuts([] if isinstance(own, QAction) else default)

    # ---- settings and closing
    def restore_settings(self) -> bool:
        """Window geometry and dock layout of the last session; True if there was one."""
        store = settings.app_settings()
        geometry, state = store.value("main_window/geometry"), store.value("main_window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        # A dock's saved visibility depends on the tab that was open; the user's choice does not.
        self.docks.restore(store, sized=state is not None)
        self._tab_changed(self.tabs.currentIndex())
        return state is not None

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if len(self._editors) < len(TAB_NAMES):
            QTimer.singleShot(DEFERRED_TABS_MS, self, self.build_all_tabs)
        self.docks.tab_changed(self.tabs.currentIndex())  # a first-run dock gets its size now

    def save_settings(self) -> None:
        store = settings.app_settings()
        store.setValue("main_window/geometry", self.saveGeometry())
        store.setValue("main_window/state", self.saveState())
        self.docks.save(store)

    def closeEvent(self, event) -> None:
        if self.maybe_save():
            if self.remember:
                self.save_settings()
            self._closed = True
            for editor in self._editors.values():  # no sweep left running into the exit
                getattr(editor, "stop_background_work", lambda: None)()
            event.accept()
        else:
            event.ignore()
