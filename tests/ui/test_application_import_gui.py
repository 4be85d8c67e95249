"""File › Import Application…: an Nsight Systems export as an application (one undoable
step), its measured intervals on the Gantt chart and the measured vs predicted table."""
import hashlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_application_import import SAXPY, two_streams  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_settings")


def test_import_undo_redo_and_the_measured_view(example_window, tmp_path):
    win = example_window
    trace = tmp_path / "run.sqlite"
    times = two_streams(trace)
    before = hashlib.sha256(trace.read_bytes()).hexdigest()
    project = win.document.project
    apps, devices = set(project.applications), set(project.devices)
    app_id = win.import_application(str(trace))
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


def test_a_bad_file_is_a_message(example_window, tmp_path):
    win = example_window
    bad = tmp_path / "x.sqlite"
    bad.write_text("not sqlite")
    count = win.document.undo_stack.count()
    assert win.import_application(str(bad)) is None
    assert win.errors and "not a SQLite file" in win.errors[-1][1]
    assert win.document.undo_stack.count() == count




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
