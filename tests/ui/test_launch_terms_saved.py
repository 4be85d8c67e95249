"""The launch panel's Kernel terms are the launch's (LaunchConfig.terms): a change is one
undoable edit, the project file keeps it, and the file reopened predicts the same."""
import pytest
from PySide6.QtWidgets import QLineEdit

from gpumodeler.core.project import LaunchTerms
from gpumodeler.db.project_file import load_project
from gpumodeler.ui.screenshot import settle

pytestmark = pytest.mark.usefixtures("private_settings")


def _type(edit: QLineEdit, text: str) -> None:
    edit.setText(text)
    edit.editingFinished.emit()
    settle(50)


def test_terms_set_in_the_panel_are_saved_reopened_and_undone(example_window, tmp_path):
    win = example_window
    panel, stack = win.launch_panel, win.document.undo_stack
    box = panel.terms_box
    launch_id = panel.launch_id
    base = panel.result.prediction.kernel.time_s
    assert panel.launch.terms == LaunchTerms()
    steps = stack.count()
    _type(box.edits["launch_overhead_s"], "5 us")
    box.tail.setChecked(True)
    settle(50)
    box.underfill.setChecked(False)
    settle(50)
    assert stack.count() == steps + 3 and stack.undoText() == "edit kernel terms"
    saved = LaunchTerms(underfill=False, tail=True, launch_overhead_s=5 * 1e-6)   # as "5 us" parses
    assert win.document.project.launches[launch_id].terms == saved
    edited = panel.result.prediction.kernel.time_s
    assert edited != base
    path = tmp_path / "terms.gpm"
    assert win.save_to(str(path))
    assert load_project(path).launches[launch_id].terms == saved
    assert win.open_path(str(path), ask=False)
    settle(100)
    panel = win.launch_panel
    assert panel.result.prediction.kernel.time_s == edited      # the same prediction
    assert box.tail.isChecked() and not box.underfill.isChecked()
    assert box.edits["launch_overhead_s"].text() == "5 µs"
    # undo on the reopened file has nothing of it; on a fresh edit, undo restores
    box.overhead.setChecked(False)
    settle(50)
    assert not win.document.project.launches[launch_id].terms.launch_overhead
    assert panel.result.prediction.kernel.time_s == pytest.approx(edited - 5e-6, rel=1e-9)
    win.document.undo_stack.undo()
    settle(50)
    assert win.document.project.launches[launch_id].terms == saved
    assert box.overhead.isChecked() and panel.result.prediction.kernel.time_s == edited


def test_undo_restores_the_terms_and_the_box_shows_them(example_window):
    win = example_window
    panel, stack = win.launch_panel, win.document.undo_stack
    box = panel.terms_box
    base = panel.result.prediction.kernel.time_s
    _type(box.edits["launch_overhead_s"], "5 us")
    assert panel.result.prediction.kernel.time_s == pytest.approx(base + 5e-6, rel=1e-12)
    stack.undo()
    settle(50)
    assert panel.launch.terms == LaunchTerms()
    assert box.edits["launch_overhead_s"].text() == ""
    assert panel.result.prediction.kernel.time_s == base
    stack.redo()
    settle(50)
    assert panel.launch.terms.launch_overhead_s == pytest.approx(5e-6, rel=1e-12)
    assert panel.result.prediction.kernel.time_s == pytest.approx(base + 5e-6, rel=1e-12)


def test_a_refused_value_is_no_edit_and_the_box_no_longer_says_for_this_session(example_window):
    win = example_window
    panel, stack = win.launch_panel, win.document.undo_stack
    box = panel.terms_box
    steps = stack.count()
    _type(box.edits["l2_bandwidth_bytes_per_s"], "0 B/s")
    assert stack.count() == steps and panel.launch.terms == LaunchTerms()
    assert box.edits["l2_bandwidth_bytes_per_s"].text() == "0 B/s"    # kept, red, to fix
    panel.refresh()
    assert box.edits["l2_bandwidth_bytes_per_s"].property("error_message")
    texts = " ".join(w.text() for w in box.findChildren(type(box.message)))
    assert "session" not in texts and "does not keep" not in texts
