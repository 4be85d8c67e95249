"""Application tab: steps edited through undoable commands, drag reordering checked by the
model, a data-parallel split, the Gantt chart, exports, and busy fractions on the System tab."""
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from gpumodeler.ui.application.panel import ApplicationPanel
from gpumodeler.ui.document import Document
from gpumodeler.ui.main_window import MainWindow


pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def panel(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    p = ApplicationPanel(doc)
    qtbot.addWidget(p)
    p.simulate()
    return p


def test_opens_on_the_example_application_with_its_timeline(panel):
    assert panel.app_id == "app1" and panel.steps.count() == 4
    assert panel.result is not None and panel.chart.rows[:2] == ["gpu1/copy", "link1:host1>gpu1"]
    launch_total = 0.594878  # the launch's own prediction (tests/cli/test_timeline_cli.py)
    assert panel.result["makespan_s"] == pytest.approx(launch_total, rel=1e-5)
    assert "makespan" in panel.summary.text()
    kernel = next(s for s in panel.result["steps"] if s["kind"] == "kernel")
    b = next(b for b in panel.chart.bars if b["step"]["id"] == kernel["id"])
    assert panel.chart.step_at((b["x0"] + b["x1"]) / 2, -b["row"])["id"] == "saxpy2"
    assert "limited by" in panel.chart.tooltip(kernel)


def test_add_edit_undo_a_copy_step(panel):
    doc = panel.document
    assert panel.add_step("copy")
    app = doc.project.applications["app1"]
    assert [s.kind for s in app.steps][-1] == "copy" and doc.undo_stack.count() == 1
    panel.size_edit.setText("1e9")
    panel.size_edit.editingFinished.emit()
    assert doc.project.applications["app1"].steps[-1].size == "1e9"
    assert doc.undo_stack.undoText().startswith("set size of step")
    panel.simulate()
    assert len(panel.result["steps"]) == 5
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert len(doc.project.applications["app1"].steps) == 4


def test_reordering_that_breaks_a_dependency_is_refused_and_put_back(panel):
    doc = panel.document
    panel.step_id = "copy_back"
    panel._fill()
    # make copy_back wait for copy_x explicitly, then try to move it before copy_x
    assert panel.set_step(after=("copy_x",))
    before = doc.project.applications["app1"].steps
    assert not panel.move_step("copy_back", 0)
    assert doc.project.applications["app1"].steps == before
    assert "not an earlier step" in panel.message.text()
    assert [panel.steps.item(i).data(256) for i in range(4)] == [s.id for s in before]
    assert panel.move_step("saxpy2", 0)  # allowed: no dependency crosses
    assert doc.project.applications["app1"].steps[0].id == "saxpy2"


def test_new_application_split_and_delete(panel):
    doc = panel.document
    assert panel.new_application()
    assert panel.application.steps == ()
    assert panel.split_launch("launch1", ["gpu1"], "host1", scatter="8e8", gather="4e8")
    kinds = [s.kind for s in panel.application.steps]
    assert kinds == ["copy", "kernel", "copy", "sync"]
    panel.simulate()
    assert panel.result["makespan_s"] > 0
    assert panel.delete_application()
    assert list(doc.project.applications) == ["app1"]
    doc.undo_stack.undo()
    assert len(doc.project.applications) == 2


def test_bad_input_gets_a_message(panel):
    panel.step_id = "saxpy2"
    panel._fill()
    panel.fraction_edit.setText("2")
    panel.fraction_edit.editingFinished.emit()
    assert "(0, 1]" in panel.message.text()
    panel.fraction_edit.setText("half")
    panel.fraction_edit.editingFinished.emit()
    assert "must be a number" in panel.message.text()
    assert panel.document.undo_stack.count() == 0


def test_exports(panel, tmp_path):
    for kind in ("svg", "png", "csv"):
        path = tmp_path / f"t.{kind}"
        assert panel.export(str(path), kind), panel.message.text()
        assert path.stat().st_size > 100
    assert QImage(str(tmp_path / "t.png")).width() >= 1800  # rendered at 2×
    assert "saxpy2" in (tmp_path / "t.csv").read_text()
    assert not panel.export(str(tmp_path / "missing" / "t.svg"), "svg")


def test_a_failed_export_keeps_the_previous_file(panel, tmp_path, monkeypatch):
    import errno
    import os
    for kind in ("svg", "png", "csv"):
        path = tmp_path / f"t.{kind}"
        path.write_text("previous")
        with monkeypatch.context() as m:
            def full(fd):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            m.setattr(os, "fsync", full)
            assert not panel.export(str(path), kind)
        assert "No space left on device" in panel.message.text()
        assert path.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.png", "t.svg"]


def test_main_window_tab_report_and_busy_fractions(qtbot, catalog, tmp_path, monkeypatch):
    win = MainWindow(catalog, remember=False)
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    assert win.open_path(str(Path(__file__).resolve().parents[2] / "resources/examples/saxpy2-gtx970.gpm"),
                         ask=False)
    panel = win.application_panel
    panel.simulate()
    item = win.system_editor.scene.device_items["gpu1"]
    assert item.busy_text() == f"busy {panel.result['busy_fraction']['gpu1/compute']:.0%}"
    assert win.system_editor.scene.device_items["host1"].busy_text() == ""
    out = tmp_path / "r.html"
    assert win.export_report(str(out))
    assert "<svg" in out.read_text()


def test_the_report_is_never_written_over_the_project(qtbot, catalog, tmp_path, monkeypatch):
    import shutil
    project = tmp_path / "p.gpm"
    shutil.copyfile(Path(__file__).resolve().parents[2] / "resources/examples/saxpy2-gtx970.gpm",
                    project)
    kept = project.read_bytes()
    win = MainWindow(catalog, remember=False)
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    errors = []
    monkeypatch.setattr(win, "show_error", lambda title, text: errors.append(text))
    assert win.open_path(str(project), ask=False)
    assert not win.export_report(str(tmp_path / "." / "p.gpm"))
    assert "refusing to write" in errors[0] and "the project file" in errors[0]
    assert project.read_bytes() == kept
