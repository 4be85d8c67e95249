"""Sweeps and their plot: a background sweep over a loop variable plots the same numbers as
evaluate_launch; measured points overlay with their error; saved definitions; exports."""
import csv
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pytest

from gpumodeler.core.pipeline import evaluate_launch
from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.core.launch_sweep import SweepCancelled, make_snapshot, run_sweep
from gpumodeler.ui.plots.units import fmt_time, time_unit


def _panel(qtbot, catalog, project):
    w = LaunchPanel(Document(project, catalog))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    return w


@pytest.fixture
def panel(qtbot, catalog, example_project):
    """The example without its saved sweep: these tests start from an empty plot."""
    project = example_project()
    project.sweeps.clear()
    w = _panel(qtbot, catalog, project)
    yield w
    w.sweep.cancel()


@pytest.fixture
def example_panel(qtbot, catalog, example_project):
    """The example as saved: its launch runs the saved sweep as soon as it is shown."""
    w = _panel(qtbot, catalog, example_project())
    yield w
    w.sweep.cancel()


def run_and_wait(qtbot, sweep):
    previous = sweep.result
    assert sweep.run(), sweep.message.text()
    qtbot.waitUntil(lambda: sweep.job is None and sweep.result is not previous, timeout=10_000)
    return sweep.result


def evaluate_at(project, catalog, lid, **changes):
    p = project
    p.launches["probe"] = replace(p.launches[lid], id="probe", **changes)
    try:
        return evaluate_launch(p, "probe", lambda n: catalog.get(n).to_gpu_spec(),
                               lambda n: catalog.get(n).to_link_spec()).prediction
    finally:
        del p.launches["probe"]


def test_a_launch_shows_its_first_saved_sweep(example_panel, qtbot):
    panel = example_panel
    sweep = panel.sweep
    assert sweep.saved_combo.currentData() == "sweep1" and (sweep.is_running() or sweep.result)
    assert sweep.variable == "a" and sweep.log_check.isChecked()
    qtbot.waitUntil(lambda: sweep.result is not None and not panel.is_busy(), timeout=10_000)
    assert sweep.result.variable == "a" and sweep.result.x.size == 13
    xs, ys = sweep.plot._curves[0][0].getData()
    assert len(xs) == 13 and np.isfinite(ys).all()
    # a launch without a saved sweep shows an empty plot until the user runs one
    assert panel.new_launch()
    assert not sweep.is_running() and sweep.result is None
    assert sweep.saved_combo.currentData() is None
    # and a manual run still works, then re-runs on changes
    sweep.set_variable("block_size")
    result = run_and_wait(qtbot, sweep)
    panel.form.widgets["lam"].setText("2")
    panel.form.widgets["lam"].editingFinished.emit()
    qtbot.waitUntil(lambda: sweep.result is not result and sweep.job is None, timeout=10_000)


def test_a_saved_sweep_of_a_variable_the_kernel_lost_is_a_message(example_panel):
    panel = example_panel
    doc = panel.document
    doc.project.sweeps["sweep1"] = replace(doc.project.sweeps["sweep1"], variable="b")
    assert not panel.sweep.load_sweep("sweep1")
    assert "'b' cannot be swept" in panel.sweep.message.text()


def test_sweep_over_a_runs_in_the_background_and_plots(panel, qtbot, catalog):
    sweep = panel.sweep
    sweep.set_variable("a")
    assert (sweep.from_edit.text(), sweep.to_edit.text(), sweep.points_spin.value()) == ("0", "256", 257)
    result = run_and_wait(qtbot, sweep)
    assert result.variable == "a" and result.x.size == 257 and len(result.curves) == 1
    curve = result.curves[0]
    i128 = int(np.flatnonzero(result.x == 128)[0])
    assert curve.kernel_time_s[i128] == pytest.approx(panel.result.prediction.kernel.time_s, rel=1e-12)
    assert curve.total_time_s[i128] == pytest.approx(panel.result.prediction.total_time_s, rel=1e-12)
    ref = evaluate_at(panel.document.project, catalog, panel.launch_id, variables={"a": 17})
    assert curve.kernel_time_s[17] == pytest.approx(ref.kernel.time_s, rel=1e-12)
    # the plot shows it in ms, kernel and total, with labelled axes
    plot = sweep.plot
    kernel_item, total_item = plot._curves[0]
    xs, ys = kernel_item.getData()
    assert len(xs) == 257 and ys[i128] == pytest.approx(curve.kernel_time_s[i128] * 1e3)
    assert plot.unit == ("ms", 1e-3)
    assert plot.plot.getAxis("left").labelText == "Predicted time (ms)"
    assert plot.plot.getAxis("bottom").labelText == "a (loop iterations)"  # with its unit
    # editing the launch re-runs the sweep on show
    panel.form.widgets["lam"].setText("1")
    panel.form.widgets["lam"].editingFinished.emit()
    qtbot.waitUntil(lambda: sweep.result is not result and sweep.job is None, timeout=10_000)
    assert sweep.result.curves[0].kernel_time_s[i128] == pytest.approx(
        curve.kernel_time_s[i128] * 0.703787, rel=1e-9)


def test_export_png_svg_csv(panel, qtbot, tmp_path):
    sweep = panel.sweep
    assert not sweep.export(str(tmp_path / "early.png"))  # nothing yet: a message, no file
    assert "run a sweep first" in sweep.message.text()
    sweep.set_variable("a")
    run_and_wait(qtbot, sweep)
    png, svg, data = tmp_path / "s.png", tmp_path / "s.svg", tmp_path / "s.csv"
    assert sweep.export(str(png)) and sweep.export(str(svg)) and sweep.export(str(data))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    text = " ".join(t.strip() for t in root.itertext())
    assert "Predicted time (ms)" in text and "a (loop iterations)" in text
    with data.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 257 and rows[0]["series"] == "predicted" and rows[0]["device"] == "GeForce GTX 970"
    assert float(rows[128]["a"]) == 128 and float(rows[128]["kernel_time_s"]) == pytest.approx(0.1458371, rel=1e-6)
    assert not sweep.export(str(tmp_path / "no-such-dir" / "s.png"))


def test_measured_points_overlay_with_their_error(panel, qtbot, tmp_path):
    sweep = panel.sweep
    doc = panel.document
    sweep.set_variable("a")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,time\n1,2\n")
    assert sweep.import_measurements(str(bad)) == 0
    assert "measured_s" in sweep.message.text() and not doc.project.measurements
    bad.write_text("a,measured_s\n1,fast\n")
    assert sweep.import_measurements(str(bad)) == 0 and "line 2" in sweep.message.text()
    good = tmp_path / "measured.csv"
    good.write_text("a,measured_s\n32,0.05\n128,0.16\n256,0.30\n")
    depth = doc.undo_stack.count()
    assert sweep.import_measurements(str(good)) == 3
    assert doc.undo_stack.count() == depth + 1  # one step
    assert {m.parameters["a"] for m in doc.project.measurements.values()} == {32, 128, 256}
    qtbot.waitUntil(lambda: sweep.job is None and sweep.plot.measurements is not None, timeout=10_000)
    x, measured, predicted, error, what = sweep.plot.measurements
    i = list(x).index(128)
    assert predicted[i] == pytest.approx(panel.result.prediction.kernel.time_s, rel=1e-12)
    assert error[i] == pytest.approx((predicted[i] - 0.16) / 0.16)
    assert "mean absolute error" in sweep.status.text()
    assert len(sweep.plot.measured.data) == 3
    tip = sweep.plot._measured_tip(x=128.0, y=160.0, data=(predicted[i], error[i]))
    assert "error -8.9 %" in tip
    doc.undo_stack.undo()
    assert not doc.project.measurements


def test_saved_sweep_and_gpu_comparison(panel, qtbot):
    sweep = panel.sweep
    doc = panel.document
    sweep.set_variable("block_size")
    sweep.set_gpus(["GeForce GTX 970", "Tesla K40"])
    sid = sweep.save_sweep()
    s = doc.project.sweeps[sid]
    assert s.variable == "block_size" and s.values[0] == 32 and len(s.values) == 32
    assert s.devices == ("GeForce GTX 970", "Tesla K40") and s.launch == panel.launch_id
    sweep.set_variable("a")
    sweep.set_gpus([])
    sweep.load_sweep(sid)
    assert sweep.variable == "block_size" and sweep.chosen_gpus() == ["GeForce GTX 970", "Tesla K40"]
    qtbot.waitUntil(lambda: sweep.job is None and sweep.result is not None, timeout=10_000)
    labels = [c.label for c in sweep.result.curves]
    assert labels == ["GeForce GTX 970", "Tesla K40"]
    assert sweep.plot._curves[1][0].isVisible() or not sweep.isVisible()
    sweep.set_variable("gpu")
    result = run_and_wait(qtbot, sweep)
    assert result.x_labels == ("GeForce GTX 970", "Tesla K40") and result.x.size == 2
    assert result.curves[0].kernel_time_s[0] == pytest.approx(panel.result.prediction.kernel.time_s)
    doc.undo_stack.undo()
    assert sid not in doc.project.sweeps


@pytest.fixture
def panel_with_unfinished_gpu(qtbot, catalog, example_project):
    """The example without its saved sweep, and a GPU of the user's whose SM count nobody
    knows (so it cannot be evaluated) in the catalog the panel lists."""
    catalog.add_device("gpu", "Unfinished GPU", values={
        "compute_capability": "5.2", "sm_clock_hz": 1.0e9, "fp32_cores_per_sm": 128,
        "schedulers_per_sm": 4, "memory_bandwidth_theoretical_bytes_per_s": 2.0e11})
    project = example_project()
    project.sweeps.clear()
    w = _panel(qtbot, catalog, project)
    yield w
    w.sweep.cancel()


def test_log_data_size_sweep_and_a_gpu_that_cannot_run(panel_with_unfinished_gpu, qtbot):
    panel = panel_with_unfinished_gpu
    sweep = panel.sweep
    sweep.set_variable("data_size")
    assert sweep.log_check.isChecked()  # N spans decades
    result = run_and_wait(qtbot, sweep)  # warnings are errors: the log axis must not overflow
    assert result.x[-1] == 400_000_000 and np.all(np.diff(result.x) > 0)
    assert sweep.plot._log_x
    sweep.set_variable("a")
    sweep.set_gpus(["Unfinished GPU", "GeForce GTX 970"])
    result = run_and_wait(qtbot, sweep)
    curves = {c.label: c for c in result.curves}
    assert set(curves) == {"Unfinished GPU", "GeForce GTX 970"}
    assert np.isnan(curves["Unfinished GPU"].kernel_time_s).all()
    assert np.isfinite(curves["GeForce GTX 970"].kernel_time_s).all()
    unfinished = [c.label for c in result.curves].index("Unfinished GPU")
    assert "Unfinished GPU is not plotted" in sweep.status.text()
    assert not sweep.plot._curves[unfinished][0].isVisible() and not sweep.plot._log_x


def test_cancel_and_bad_ranges(panel, qtbot):
    sweep = panel.sweep
    sweep.set_variable("block_size")
    sweep.from_edit.setText("64")
    sweep.to_edit.setText("2048")
    assert not sweep.run() and "1..1024" in sweep.message.text()
    sweep.to_edit.setText("x")
    assert not sweep.run() and sweep.to_edit.property("error_message")
    sweep.to_edit.setText("1024")
    assert sweep.run()
    job = sweep.job
    sweep.cancel()
    assert sweep.job is None and not sweep.cancel_button.isEnabled()
    qtbot.waitUntil(job.done.is_set, timeout=10_000)
    qtbot.wait(20)
    assert sweep.result is None and "cancelled" in sweep.status.text()


def test_sweep_compute_matches_evaluate_launch_and_cancels(catalog, example_project):
    p = example_project()
    lid = next(iter(p.launches))
    gpu = lambda n: catalog.get(n).to_gpu_spec()
    link = lambda n: catalog.get(n).to_link_spec()
    for var, values, change in (
            ("block_size", [32, 96, 1000], lambda v: {"block_size": int(v)}),
            ("occupancy", [8, 30, 64], lambda v: {"occupancy_override": float(v)}),
            ("data_size", [1e6, 123_457, 4e8], lambda v: {"data_size": int(v)})):
        r = run_sweep(make_snapshot(p, lid, gpu, link, var, values))
        for i, v in enumerate(values):
            ref = evaluate_at(p, catalog, lid, **change(v))
            assert r.curves[0].kernel_time_s[i] == pytest.approx(ref.kernel.time_s, rel=1e-12)
            assert r.curves[0].total_time_s[i] == pytest.approx(ref.total_time_s, rel=1e-12)
    with pytest.raises(SweepCancelled):
        run_sweep(make_snapshot(p, lid, gpu, link, "a", [1, 2]), cancelled=lambda: True)


def test_time_units():
    assert time_unit(0.146) == ("ms", 1e-3) and time_unit([2e-6, 5e-5]) == ("µs", 1e-6)
    assert time_unit(3.0) == ("s", 1.0) and fmt_time(0.5948782) == "594.9 ms"


def test_log_axis_labels_decades_and_room_for_2_and_5(qtbot):
    from gpumodeler.ui.plots.sweep_plot import LogLabelAxis
    axis = LogLabelAxis("bottom")
    axis.setLogMode(True)
    axis.setRange(0, 3.6)
    values = [0, np.log10(2), np.log10(3), 1, np.log10(20), np.log10(50), 3, np.log10(2e5)]
    axis.resize(1000, 30)  # 280 px a decade
    strings = axis.tickStrings(values, 1, None)
    assert strings[:7] == ["1", "2", "", "10", "20", "50", "1000"] and "10" in strings[7]
    axis.resize(300, 30)  # 83 px a decade: the decades alone
    assert axis.tickStrings(values, 1, None)[:7] == ["1", "", "", "10", "", "", "1000"]
    levels = axis.tickValues(0, 3.6, 600)
    major = {round(v, 9) for spacing, vs in levels if spacing is not None for v in vs}
    minor = [round(v, 9) for spacing, vs in levels if spacing is None for v in vs]
    assert major and minor and not major & set(minor)  # a decade is drawn (and labelled) once
