"""Conventions of a desktop application: F1 opens the user manual (docs/manual, tasks with
screenshots), a shortcut list, Close on Ctrl+W, File › Export, tooltips on every control, a
labelled occupancy check box, undo texts in words, no stale status-bar hint."""
from pathlib import Path

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSpinBox, QApplication,
                               QComboBox, QLineEdit)

from gpumodeler.ui.help import manual_markdown
from gpumodeler.ui.main_window import MainWindow

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "saxpy2-gtx970.gpm"


pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def window(qtbot, catalog, monkeypatch):
    win = MainWindow(catalog)
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    assert win.open_path(str(EXAMPLE), ask=False)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.launch_panel.sweep.cancel()
    QApplication.clipboard().clear()


def test_f1_opens_the_user_manual(window, qtbot):
    assert QKeySequence("F1") in window.manual_action.shortcuts()
    window.manual_action.trigger()
    dialog = window.manual_dialog
    qtbot.waitExposed(dialog)
    text = dialog.browser.toPlainText()
    assert "Build a system" in text and "Launch" in text
    assert "## Layout" not in manual_markdown() and "benchmark" not in text.lower()  # no developers' part
    dialog.close()


def test_shortcut_list_close_and_export_menu(window):
    assert QKeySequence("Ctrl+W") in window.close_action.shortcuts()
    dialog = window.show_shortcuts()
    rows = {dialog.table.item(r, 0).text(): dialog.table.item(r, 1).text() for r in range(dialog.table.rowCount())}
    assert "Close" in rows and "gpumodeler Manual" in rows and "Undo" in rows
    dialog.close()
    file_menu = window.menuBar().actions()[0].menu()
    assert window.close_action in file_menu.actions()
    assert {a.text() for a in window.export_menu.actions()} >= {"Export &Report…", "Export Sweep &Figure…"}


def test_export_figure_from_the_file_menu(window, qtbot, tmp_path):
    sweep = window.launch_panel.sweep
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=20000)
    assert sweep.result is not None  # the example's saved sweep
    assert window.export_figure(str(tmp_path / "f.svg"))
    assert "<text" in (tmp_path / "f.svg").read_text(encoding="utf-8")


def _controls(window):
    for cls in (QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox):
        for w in window.findChildren(cls):
            if w.objectName().startswith("qt_") or w.objectName().startswith("Scroll"):
                continue  # Qt's own (toolbar extension, tab scroller, dock buttons)
            parent, skip = w.parent(), False
            while parent is not None:
                if isinstance(parent, QAbstractItemView) or (isinstance(parent, (QComboBox, QAbstractSpinBox, QLineEdit))):
                    skip = True  # cell editors and the parts of a composite control
                    break
                parent = parent.parent()
            if not skip:
                yield w


def test_every_control_has_a_tooltip(window):
    window.build_all_tabs()
    missing = [f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r} {w.objectName()}"
               for w in _controls(window) if not w.toolTip()]
    assert missing == []


def test_occupancy_check_box_has_text(window):
    box = window.launch_panel.form.widgets["occupancy_auto"]
    assert box.text() and "calculator" in box.text()


def test_undo_texts_in_words(window):
    doc = window.document
    gpu = next(d.id for d in doc.project.devices.values() if d.kind == "gpu")
    doc.select("device", gpu)
    assert window.inspector.set_value("sm_clock_hz", "1300 MHz")
    assert doc.undo_stack.undoText() == "override SM clock"
    panel = window.launch_panel
    w = panel.form.widgets["block_size"]
    w.setText("128")
    w.editingFinished.emit()
    assert doc.undo_stack.undoText() == "edit block size"
    a = panel._variable_fields["a"]
    a.setText("64")
    a.editingFinished.emit()
    assert doc.undo_stack.undoText() == "edit variable a"


def test_a_hint_does_not_outlive_its_tab(window):
    window.show_hint("drop the link on a second device")
    assert window.statusBar().currentMessage()
    window.tabs.setCurrentIndex(2)
    assert window.statusBar().currentMessage() == ""
