"""The main window's actions, menus and tool bar (built once, by :class:`MainWindow`).

Actions are attributes of the window (``window.save_action``, ``window.edit_actions[...]``)
so the window, its tests and the shortcut list reach them by name; their slots are the
window's methods. The View menu lists the docks (:mod:`.docks`) and Reset Layout.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStyle

from gpumodeler.ui.calibration.dialog import open_calibration_dialog
from gpumodeler.ui.calibration.learn_dialog import open_learn_dialog
from gpumodeler.ui.icons import icon

TAB_NAMES = ("System", "Kernel", "Launch", "Application")


def _action(window, text, slot, shortcut=None, tip="", standard_icon=None) -> QAction:
    action = QAction(text, window)
    action.triggered.connect(slot)
    if shortcut is not None:
        shortcuts = shortcut if isinstance(shortcut, list) else [shortcut]
        action.setShortcuts([QKeySequence(s) for s in shortcuts])
    if tip:
        action.setStatusTip(tip)
        action.setToolTip(tip)
    if standard_icon is not None:
        action.setIcon(window.style().standardIcon(standard_icon))
    window.addAction(action)
    return action


def _open_log_folder() -> None:
    from gpumodeler.ui.help import open_log_folder  # loaded when asked for, as the manual is
    open_log_folder()


def create_actions(window) -> None:
    """The window's actions, as attributes of the window (``window.new_action``, ...)."""
    sp = QStyle.StandardPixmap
    window.new_action = _action(window, "&New", window.new_project, QKeySequence.StandardKey.New,
                                "Start an empty project", sp.SP_FileIcon)
    window.open_action = _action(window, "&Open…", window.open_dialog, QKeySequence.StandardKey.Open,
                                 "Open a project file", sp.SP_DialogOpenButton)
    window.save_action = _action(window, "&Save", window.save, QKeySequence.StandardKey.Save,
                                 "Save the project", sp.SP_DialogSaveButton)
    window.save_as_action = _action(window, "Save &As…", window.save_as,
                                    QKeySequence.StandardKey.SaveAs,
                                    "Save the project under a new name")
    window.quit_action = _action(window, "&Quit", window.close, QKeySequence.StandardKey.Quit)
    window.undo_action = window.undo_group.createUndoAction(window, "&Undo")
    window.undo_action.setShortcuts([QKeySequence(QKeySequence.StandardKey.Undo)])
    window.undo_action.setIcon(window.style().standardIcon(sp.SP_ArrowBack))
    window.undo_action.setIconText("Undo")
    window.redo_action = window.undo_group.createRedoAction(window, "&Redo")
    window.redo_action.setShortcuts([QKeySequence("Ctrl+Y"), QKeySequence("Ctrl+Shift+Z")])
    window.redo_action.setIcon(window.style().standardIcon(sp.SP_ArrowForward))
    window.redo_action.setIconText("Redo")
    window.addActions([window.undo_action, window.redo_action])
    window.edit_actions = {
        "cut": _action(window, "Cu&t", lambda: window.route("cut"), QKeySequence.StandardKey.Cut),
        "copy": _action(window, "&Copy", lambda: window.route("copy"),
                        QKeySequence.StandardKey.Copy),
        "paste": _action(window, "&Paste", lambda: window.route("paste"),
                         QKeySequence.StandardKey.Paste),
        "delete": _action(window, "&Delete", lambda: window.route("delete"),
                          QKeySequence.StandardKey.Delete, "Delete the selection"),
        "select_all": _action(window, "Select &All", lambda: window.route("select_all"),
                              QKeySequence.StandardKey.SelectAll),
        "fit": _action(window, "&Fit", lambda: window.route("fit"), "F",
                       "Show the whole system or graph (F)"),
    }
    window.edit_actions["fit"].setIcon(icon("fit"))
    window.fit_action = window.edit_actions["fit"]
    window.tab_actions = [_action(window, f"&{i + 1} {name}", lambda c=False, i=i: window.tabs.setCurrentIndex(i),
                                  f"Ctrl+{i + 1}")
                          for i, name in enumerate(TAB_NAMES)]
    window.export_devices_action = _action(window, "&Export…", window.export_devices_dialog, None,
                                           "Write devices to a file to share with colleagues")
    window.import_devices_action = _action(window, "&Import…", window.import_devices_dialog, None,
                                           "Merge a colleague's device file, choosing per conflict")
    window.import_kernel_action = _action(window, "Import &Kernel…", window.import_kernel_dialog, None,
                                          "A kernel graph from a SASS listing, a cubin or a .cu")
    window.export_report_action = _action(window, "Export &Report…", window.export_report_dialog, None,
                                          "Write a self-contained HTML report of the project")
    window.about_action = _action(window, "&About gpumodeler", window.about)
    window.close_action = _action(window, "&Close", window.close, QKeySequence.StandardKey.Close,
                                  "Close the window (asks to save changes first)")
    window.close_action.setShortcuts([QKeySequence("Ctrl+W")])
    window.export_figure_action = _action(window, "Export Sweep &Figure…", window.export_figure_dialog,
                                          "Ctrl+E", "Save the Launch tab's sweep plot as PNG, SVG "
                                          "(at a one- or two-column size) or CSV")
    window.manual_action = _action(window, "gpumodeler &Manual", window.show_manual,
                                   QKeySequence.StandardKey.HelpContents,
                                   "The user manual (F1)")
    window.manual_action.setShortcuts([QKeySequence("F1")])
    window.shortcuts_action = _action(window, "&Keyboard Shortcuts", window.show_shortcuts, "Ctrl+/",
                                      "Every keyboard shortcut of the window")
    window.log_folder_action = _action(window, "Open &Log Folder", _open_log_folder, None,
                                       "The folder of the log file to send with a bug report")


def _shown_launch(window) -> str | None:
    """The launch the Launch tab shows (None before the tab is built: the dialog then takes
    the project's first launch with transfers)."""
    panel = getattr(window, "_editors", {}).get(2)
    return getattr(panel, "launch_id", None)


def _edit_devices(window, kind: str):
    """The device editor (ui/devices/editor.py) on the GPU or link selected in the system,
    if one of ``kind`` is; else on a new one."""
    from gpumodeler.ui.devices.editor import open_device_editor
    name = None
    what, item_id = getattr(window.document, "selected", ("", ""))
    project = window.document.project
    if kind == "gpu" and what == "device" and item_id in project.devices \
            and project.devices[item_id].kind == "gpu":
        name = project.devices[item_id].device_name
    elif kind == "link" and what == "connection" and item_id in project.connections:
        name = project.connections[item_id].link_name
    return open_device_editor(window, kind, name)


def create_menus(window) -> None:
    """The menu bar and the main tool bar over the window's actions and docks."""
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([window.new_action, window.open_action])
    window.recent_menu = file_menu.addMenu("Open &Recent")
    window.recent_menu.aboutToShow.connect(window.fill_recent_menu)
    window.examples_menu = file_menu.addMenu("Open E&xample")
    window.examples_menu.aboutToShow.connect(window.fill_examples_menu)
    file_menu.addSeparator()
    file_menu.addActions([window.save_action, window.save_as_action])
    file_menu.addSeparator()
    file_menu.addAction(window.import_kernel_action)
    file_menu.addAction("Import &Measurements…", window.import_measurements_dialog)
    file_menu.addAction("Import A&pplication…", window.import_application_dialog)
    export_menu = file_menu.addMenu("&Export")
    export_menu.addActions([window.export_report_action, window.export_figure_action])
    window.export_menu = export_menu
    file_menu.addSeparator()
    file_menu.addActions([window.close_action, window.quit_action])
    edit_menu = bar.addMenu("&Edit")
    edit_menu.addActions([window.undo_action, window.redo_action])
    edit_menu.addSeparator()
    for key in ("cut", "copy", "paste", "delete"):
        edit_menu.addAction(window.edit_actions[key])
    edit_menu.addSeparator()
    edit_menu.addAction(window.edit_actions["select_all"])
    devices_menu = bar.addMenu("&Devices")
    devices_menu.addAction("Add or Edit a &GPU…", lambda: _edit_devices(window, "gpu"))
    devices_menu.addAction("Add or Edit a Lin&k…", lambda: _edit_devices(window, "link"))
    devices_menu.addSeparator()
    devices_menu.addActions([window.export_devices_action, window.import_devices_action])
    devices_menu.addAction("Calibrate &Link from Measurements…",
                           lambda: open_calibration_dialog(window, window.catalog,
                                                           window.document, _shown_launch(window)))
    calibrate_menu = bar.addMenu("&Calibrate")
    window.learn_action = calibrate_menu.addAction(
        "&Learn…", lambda: open_learn_dialog(window, window.catalog))
    window.learn_action.setStatusTip("Learned predictors and the hybrid, evaluated leave-one-out "
                                     "on measurement files, beside the analytical models")
    view_menu = bar.addMenu("&View")
    view_menu.addAction(window.fit_action)
    view_menu.addSeparator()
    view_menu.addActions(window.tab_actions)
    view_menu.addSeparator()
    view_menu.addActions(window.docks.toggle_actions())
    window.reset_layout_action = view_menu.addAction("&Reset Layout", window.docks.reset)
    window.reset_layout_action.setStatusTip("Put every dock back where it started, shown with its tab")
    help_menu = bar.addMenu("&Help")
    help_menu.addActions([window.manual_action, window.shortcuts_action, window.log_folder_action])
    help_menu.addSeparator()
    help_menu.addAction(window.about_action)
    toolbar = window.addToolBar("Main")
    toolbar.setObjectName("main toolbar")
    toolbar.setMovable(False)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    toolbar.addActions([window.new_action, window.open_action, window.save_action])
    toolbar.addSeparator()
    toolbar.addActions([window.undo_action, window.redo_action])
    toolbar.addSeparator()
    toolbar.addAction(window.fit_action)
