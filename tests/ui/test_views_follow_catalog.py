"""Every view of a device shows its current values: after a merge of devices that changes
the GTX 970's SM clock, after a calibration is stored, and after undo/redo of an override,
the canvas card, the inspector, the launch panel's prediction and the application tab all
show the new value without any other edit."""
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gpumodeler.core.commands import SetOverride
from gpumodeler.core.pipeline import evaluate_launch
from gpumodeler.db.catalog import Catalog
from gpumodeler.report.application import run_application
from gpumodeler.ui.devices.sharing import ImportDevicesDialog, import_devices
from gpumodeler.ui.units import format_quantity

GPU = "GeForce GTX 970"


@pytest.fixture
def window(example_window):
    example_window.show()
    example_window.launch_panel.refresh()
    return example_window


def _select_gpu(window):
    """Select the GTX 970 on the canvas (the inspector shows it)."""
    window.system_editor.scene.select(["gpu1"])
    assert window.document.selected == ("device", "gpu1")
    window.tabs.setCurrentIndex(3)


def _clock_file(devices_db, tmp_path, hz: float) -> Path:
    """A colleague's export of the GTX 970 with another SM clock."""
    with Catalog(user_db=tmp_path / "theirs-user.db", shipped_db=devices_db) as theirs:
        theirs.set_value(GPU, "sm_clock_hz", hz, source_text="their bench")
        theirs.export([GPU], tmp_path / "theirs.db")
    return tmp_path / "theirs.db"


def _kernel_time(window) -> float:
    doc = window.document
    project = doc.project
    return float(evaluate_launch(project, "launch1", doc.gpu_spec, doc.link_spec,
                                 table_lookup=doc.table_for).prediction.kernel.time_s)


def _views(window, qtbot):
    """(card subtitle, inspector's SM clock text, launch panel's kernel time, makespan),
    once the panels' scheduled refreshes ran. The Application tab is the one shown (it
    simulates only when shown; the other views follow the model whether shown or not)."""
    panel, app = window.launch_panel, window.application_panel
    qtbot.wait(1)
    qtbot.waitUntil(lambda: not panel._pending and app.isVisible() and not app._timer.isActive(),
                    timeout=5000)
    card = window.system_editor.scene.device_items["gpu1"].subtitle()
    inspector = window.inspector
    row = inspector.row_of("sm_clock_hz")
    clock = inspector.model.item(row, 1).text()
    return (card, clock, float(panel.result.prediction.kernel.time_s),
            app.result["makespan_s"] if app.result else None)


def _merge_theirs(window, path):
    """Devices › Import… of ``path``, taking theirs for every conflict."""
    def answer():
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, ImportDevicesDialog)
        dialog.choose_all("theirs")
        assert dialog.merge()
    QTimer.singleShot(0, answer)
    assert import_devices(window, str(path))


def test_a_merge_that_changes_the_sm_clock_shows_everywhere(window, qtbot, catalog, devices_db,
                                                            tmp_path):
    _select_gpu(window)
    old_clock = catalog.get(GPU).value("sm_clock_hz")
    card, clock, kernel_s, makespan = _views(window, qtbot)
    assert format_quantity(old_clock, "Hz") in card
    new_clock = old_clock * 1.25
    _merge_theirs(window, _clock_file(devices_db, tmp_path, new_clock))
    assert catalog.get(GPU).value("sm_clock_hz") == new_clock
    card2, clock2, kernel2_s, makespan2 = _views(window, qtbot)
    assert format_quantity(new_clock, "Hz") in card2 and card2 != card
    assert clock2 != clock and clock2.startswith(format_quantity(new_clock, "Hz").split()[0])
    assert kernel2_s == pytest.approx(_kernel_time(window), rel=1e-12)
    assert kernel2_s == pytest.approx(kernel_s / 1.25, rel=1e-9)   # eq. 4.1: time ∝ 1/clock
    doc = window.document
    expected = run_application(doc.project, "app1", {"gpu_lookup": doc.gpu_spec,
                                                     "link_lookup": doc.link_spec,
                                                     "table_lookup": doc.latency_table,
                                                     "calibration_lookup": doc.calibrated_link_spec})
    assert makespan2 == pytest.approx(expected["makespan_s"], rel=1e-12) and makespan2 < makespan
    assert window.document.undo_stack.count() == 0      # the database is not a project edit


def test_undo_and_redo_of_an_override_show_everywhere(window, qtbot, catalog):
    doc = window.document
    _select_gpu(window)
    before = _views(window, qtbot)
    clock = catalog.get(GPU).value("sm_clock_hz")
    assert doc.push(SetOverride("devices", "gpu1", "sm_clock_hz", clock * 2))
    overridden = _views(window, qtbot)
    assert format_quantity(clock * 2, "Hz") in overridden[0]
    assert overridden[2] == pytest.approx(before[2] / 2, rel=1e-9)
    assert overridden[3] < before[3]
    doc.undo_stack.undo()
    assert _views(window, qtbot) == before
    doc.undo_stack.redo()
    assert _views(window, qtbot) == overridden


def test_the_catalog_event_reaches_the_views_without_an_edit(window, qtbot, catalog):
    """A database change the views cached (the canvas card's record) is shown once the
    document says the catalog changed: no project edit in between."""
    doc = window.document
    _select_gpu(window)
    card = _views(window, qtbot)[0]
    catalog.set_value(GPU, "sms", 11, source_text="test")
    assert _views(window, qtbot)[0] == card                    # nobody told the views yet
    events = []
    doc.changed.connect(lambda event, payload: events.append((event, payload)))
    doc.catalog_changed([GPU])
    assert events == [("catalog_changed", (GPU,))]
    card2, _, kernel_s, _ = _views(window, qtbot)
    assert "11 SMs" in card2 and "11 SMs" not in card
    assert kernel_s == pytest.approx(_kernel_time(window), rel=1e-12)
    assert doc.undo_stack.count() == 0


def test_a_stored_link_calibration_shows_in_the_prediction_at_once(window, qtbot, catalog,
                                                                   tmp_path):
    """The launch's link uses the calibration labelled “pinned”; storing a new fit of that
    label (Devices › Calibrate Link…) changes the launch panel's transfer times at once."""
    import json

    from gpumodeler.core.project import TRANSFER_CALIBRATION
    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    doc, panel = window.document, window.launch_panel
    _select_gpu(window)
    link = doc.project.connections["link1"].link_name

    def fit_and_store(bandwidth: float):
        sizes = [2.0 ** k for k in range(10, 31, 2)]   # 1 KiB .. 1 GiB, every other octave
        path = tmp_path / f"copies-{bandwidth:g}.json"
        path.write_text(json.dumps([{"kind": "transfer", "direction": "dtoh", "size_bytes": n,
                                     "time_s": 5e-6 + n / bandwidth, "memory_kind": "pinned"}
                                    for n in sizes]))
        dialog = CalibrationDialog(catalog, window, doc)
        qtbot.addWidget(dialog)
        assert dialog.load_file(path)
        dialog.link_box.setCurrentText(link)
        with qtbot.waitSignal(dialog.fitted, timeout=20000):
            dialog.start_fit()
        assert dialog.save() is not None, dialog.message.text()

    fit_and_store(6e9)
    assert doc.push(SetOverride("connections", "link1", TRANSFER_CALIBRATION, "pinned"))
    _views(window, qtbot)
    dtoh = panel.result.prediction.transfer_times_s[2]
    assert dtoh == pytest.approx(5e-6 + 4 * 400_000_000 / 6e9, rel=1e-3)
    depth = doc.undo_stack.count()
    fit_and_store(3e9)
    _views(window, qtbot)
    assert panel.result.prediction.transfer_times_s[2] == pytest.approx(
        5e-6 + 4 * 400_000_000 / 3e9, rel=1e-3)
    assert doc.undo_stack.count() == depth
