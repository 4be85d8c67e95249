"""File › Import Application…: an Nsight Systems export as an application (one undoable
step), read and built off the GUI thread with a progress dialog that cancels it, its
measured intervals on the Gantt chart and the measured vs predicted table."""
import hashlib
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from nsys_exports import streamed_trace  # noqa: E402
from test_application_import import SAXPY, two_streams  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_settings")


def imported(qtbot, win, path, timeout=60_000):
    """Run File › Import Application… on ``path`` to its end: the new id or None."""
    job = win.import_application(str(path))
    if not job.finished:
        with qtbot.waitSignal(job.done, timeout=timeout):
            pass
    return job.app_id


def test_import_undo_redo_and_the_measured_view(qtbot, example_window, tmp_path):
    win = example_window
    trace = tmp_path / "run.sqlite"
    times = two_streams(trace)
    before = hashlib.sha256(trace.read_bytes()).hexdigest()
    project = win.document.project
    apps, devices = set(project.applications), set(project.devices)
    app_id = imported(qtbot, win, trace)
    assert app_id and not win.errors
    assert hashlib.sha256(trace.read_bytes()).hexdigest() == before
    panel = win.application_panel
    assert win.tabs.tabText(win.tabs.currentIndex()) == "Application" and panel.app_id == app_id
    panel.simulate()
    r = panel.result
    assert r["measured_makespan_s"] == pytest.approx(times["last"][1], abs=1e-9)
    assert r["makespan_s"] == pytest.approx(r["measured_makespan_s"], rel=0.05)
    # the measured intervals under the predicted bars, and the title says so
    assert len(panel.chart.measured_strips) >= 7
    assert "measured" in panel.chart.plotItem.titleLabel.text
    kernel = next(s for s in r["steps"] if s["kind"] == "kernel")
    assert "measured" in panel.chart.tooltip(kernel)
    # the table of measured vs predicted time, per kernel and per stream
    groups = panel.groups
    names = [groups.table.item(i, 0).text() for i in range(groups.table.rowCount())]
    assert SAXPY in names
    row = names.index(SAXPY)
    assert groups.table.item(row, 1).text() == "2"
    groups.by_combo.setCurrentIndex(groups.by_combo.findData("stream"))
    assert sorted(groups.table.item(i, 0).text()
                  for i in range(groups.table.rowCount())) == ["7", "8"]
    # one undo step takes the whole import back, redo brings it again
    stack = win.document.undo_stack
    assert stack.undoText().startswith("import application")
    stack.undo()
    assert set(project.applications) == apps and set(project.devices) == devices
    stack.redo()
    assert app_id in project.applications


def test_a_bad_file_is_a_message(qtbot, example_window, tmp_path):
    win = example_window
    bad = tmp_path / "x.sqlite"
    bad.write_text("not sqlite")
    count = win.document.undo_stack.count()
    assert imported(qtbot, win, bad) is None
    assert win.errors and "not a SQLite file" in win.errors[-1][1]
    assert win.document.undo_stack.count() == count
    assert not win.document.undo_stack.canRedo() and not win.isWindowModified()


def test_a_large_trace_is_read_in_the_background_with_progress(qtbot, example_window,
                                                                tmp_path, monkeypatch):
    """2·10^4 kernels and copies (and their CUDA API calls): the GUI thread keeps running its timers while the import
    reads and builds (the window repaints), the progress dialog climbs, and the result is
    the same application the command line builds."""
    from PySide6.QtCore import QTimer

    from gpumodeler.core.project import Project
    from gpumodeler.service.trace_import import plan_import
    from gpumodeler.ui.application_import import ApplicationImport
    win = example_window
    seen: list = []
    shown = ApplicationImport._progress
    monkeypatch.setattr(ApplicationImport, "_progress",
                        lambda self, percent: (seen.append(percent), shown(self, percent)))
    trace = streamed_trace(tmp_path / "big.sqlite", 20_000, seed=3, api=True)
    beats: list = []
    timer = QTimer()
    timer.timeout.connect(lambda: beats.append(time.perf_counter()))
    timer.start(10)
    job = win.import_application(str(trace))
    assert not job.finished and job.dialog is not None    # it returned at once
    assert job.dialog.isModal() or job.dialog.windowModality() != 0
    started = time.perf_counter()
    with qtbot.waitSignal(job.done, timeout=120_000):
        pass
    ended = time.perf_counter()
    timer.stop()
    assert job.app_id and not win.errors
    during = [t for t in beats if started <= t <= ended]
    # the event loop ran all along (synchronously it would not have run at all)
    assert len(during) >= 5, (len(during), ended - started)
    assert seen and seen == sorted(seen) and max(seen) > 50      # (the build's share)
    cli = plan_import(Project("p"), trace, win.catalog)
    app = win.document.project.applications[job.app_id]
    assert len(app.steps) == cli.steps and job.dialog is None


def test_cancel_leaves_the_project_and_the_device_database_as_they_were(
        qtbot, example_window, tmp_path):
    from gpumodeler.core.errors import ModelError
    win = example_window
    trace = tmp_path / "run.sqlite"
    two_streams(trace, gpu_name="NVIDIA Imaginary 9000")    # a GPU the catalog lacks
    project = win.document.project
    apps, devices = set(project.applications), set(project.devices)
    count = win.document.undo_stack.count()
    job = win.import_application(str(trace))
    from PySide6.QtWidgets import QPushButton
    job.dialog.findChild(QPushButton).click()       # the dialog's Cancel button
    if not job.finished:
        with qtbot.waitSignal(job.done, timeout=60_000):
            pass
    assert job.app_id is None and not win.errors
    assert set(project.applications) == apps and set(project.devices) == devices
    assert win.document.undo_stack.count() == count
    with pytest.raises(ModelError):
        win.catalog.resolve("NVIDIA Imaginary 9000")
    # done again to its end, the GPU is added with the import
    assert imported(qtbot, win, trace)
    assert win.catalog.resolve("NVIDIA Imaginary 9000").kind == "gpu"




def test_at_720p_the_chart_has_the_height_and_the_table_its_own_tab(example_at_size):
    from gpumodeler.ui.screenshot import settle
    from gpumodeler.ui.main_window import example_projects
    four = next(p for p in example_projects() if "four-h100" in p.stem)
    win = example_at_size(four, (1280, 720))
    win.tabs.setCurrentIndex(3)
    settle(150)
    panel = win.application_panel
    tabs = panel.result_tabs
    assert tabs.indexOf(panel.chart) >= 0 and tabs.indexOf(panel.groups) >= 0
    (y_lo, y_hi) = panel.chart.plotItem.vb.viewRange()[1]
    assert y_hi - y_lo >= 8   # lanes in view (5 with the table under the chart)
    assert panel.groups.table.rowCount() > 0   # filled although on the other tab


def test_waits_read_from_the_cuda_api_are_said_and_shown(qtbot, example_window, tmp_path):
    """An export with its CUDA API tables: the status line says how many waits were read,
    and the Application tab's timeline holds the device synchronize as a host step."""
    from test_application_import_api import synchronised
    win = example_window
    trace = tmp_path / "sync.sqlite"
    synchronised(trace)
    app_id = imported(qtbot, win, trace)
    assert app_id and not win.errors
    assert "1 event wait(s) and 2 host synchronisation(s) read from the CUDA API" in \
        win.statusBar().currentMessage()
    panel = win.application_panel
    # the synchronize's step lists, ticked under "Waits for", both streams' last steps
    from PySide6.QtCore import Qt
    steps = panel.steps
    row = next(i for i in range(steps.count()) if "cudaDeviceSynchronize" in steps.item(i).text())
    steps.setCurrentRow(row)
    ticked = [panel.after_list.item(i).data(Qt.ItemDataRole.UserRole)
              for i in range(panel.after_list.count())
              if panel.after_list.item(i).checkState() == Qt.CheckState.Checked]
    app = win.document.project.applications[app_id]
    (sync_step,) = [s for s in app.steps if s.name == "cudaDeviceSynchronize"]
    assert sorted(ticked) == sorted(sync_step.after) and len(ticked) == 2
    panel.simulate()
    names = [s["name"] for s in panel.result["steps"]]
    assert "cudaDeviceSynchronize" in names and "cudaMemcpy" in names
    assert panel.result["makespan_s"] == pytest.approx(panel.result["measured_makespan_s"],
                                                       rel=0.05)


def test_the_legacy_stream_s_implicit_waits_are_said(qtbot, example_window, tmp_path):
    """An export that names its legacy default stream: the status line says how many
    implicit waits became dependencies, and the legacy kernel's step waits for both
    blocking streams."""
    from test_application_import_legacy import legacy_run
    win = example_window
    trace = tmp_path / "legacy.sqlite"
    legacy_run(trace)
    app_id = imported(qtbot, win, trace)
    assert app_id and not win.errors
    assert "4 implicit wait(s) through the legacy default stream" in \
        win.statusBar().currentMessage()
    app = win.document.project.applications[app_id]
    (legacy,) = [s for s in app.steps if s.kind == "kernel" and s.stream == "7"]
    delay = app.steps[app.steps.index(legacy) - 1]
    assert delay.name == "host delay" and len(delay.after) == 2
