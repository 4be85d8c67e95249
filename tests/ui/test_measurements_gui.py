"""File › Import Measurements… (records, counts, link calibration, λ for a launch's kernel,
measured points of a launch) and “Calibrated for this GPU” in the launch panel (calibration)."""
import hashlib
import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from gpumodeler.core.measurements.importer import import_text
from gpumodeler.db.calibrations import list_calibrations
from gpumodeler.ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources/examples/saxpy2-gtx970.gpm"
SAXPY2 = ROOT / "resources/kernels/saxpy2-maxwell.json"
NVPROF = ROOT / "resources/measurements/nvprof-gpu-trace-multirun.csv"
GPU = "GeForce GTX 970"
LAUNCH = "Fig. 5.24"
LAMBDA = 0.7
SIZES = [2**k for k in range(16, 25)]


pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def window(qtbot, catalog, monkeypatch):
    win = MainWindow(catalog)
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    errors = []
    monkeypatch.setattr(win, "show_error", lambda title, text: errors.append((title, text)))
    win.errors = errors
    assert win.open_path(str(EXAMPLE), ask=False)
    yield win
    QApplication.clipboard().clear()


def _expected_times(catalog):
    """saxpy2 (a = 128) on the GTX 970 at λ = 1, by the model with explicit inputs (not
    through the project), for 256-thread blocks of 8 registers: measured = that / LAMBDA."""
    from gpumodeler.core.kernel.graph import from_dict
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph, predict
    from gpumodeler.core.occupancy.calculator import occupancy
    gpu = catalog.get(GPU).to_gpu_spec()
    inputs = kernel_inputs_from_graph(from_dict(json.loads(SAXPY2.read_text())), {"a": 128})
    occ = occupancy(gpu.compute_capability, 256, 8, 0).active_warps_per_sm
    return [predict(gpu, inputs, grid_size=(-(-n // 256), 1, 1), block_size=(256, 1, 1),
                    occupancy=occ).kernel.time_s for n in SIZES]


def _timings(path, catalog):
    """A timings CSV: saxpy2 launches measured at λ = 0.7, and host→device copies."""
    lines = ["# synthetic: saxpy2 at lambda 0.7; pageable copies at 6 GB/s + 10 us",
             "kind,name,direction,size,size_unit,grid,block,time,unit,gpu,memory_kind,registers"]
    for n, t in zip(SIZES, _expected_times(catalog)):
        lines.append(f"kernel,\"saxpy2(float*, float*, float)\",,,,{-(-n // 256)},256,"
                     f"{t / LAMBDA!r},s,{GPU},,8")
    for k in range(12, 28):
        lines.append(f"transfer,copy,htod,{2**k},B,,,{10e-6 + 2**k / 6e9!r},s,{GPU},pageable,")
    path.write_text("\n".join(lines) + "\n")
    return path


def _store_hash(env) -> str:
    return hashlib.sha256(env.read_bytes()).hexdigest() if env.exists() else ""


def test_records_and_counts_of_a_real_format(window):
    """A multi-run nvprof trace: one table row per record, the importer's counts shown."""
    dialog = window.import_measurements_dialog(str(NVPROF))
    assert dialog is not None and not window.errors
    expected = import_text(NVPROF.read_text(), NVPROF.name)
    assert dialog.table.rowCount() == len(expected.records) > 0
    assert [dialog.table.horizontalHeaderItem(i).text() for i in range(7)] == [
        "kind", "direction", "name", "gpu", "size / <<<grid, block>>>", "time", "memory kind"]
    first = expected.records[0]
    assert dialog.table.item(0, 0).text() == first.kind
    assert dialog.table.item(0, 2).text() == first.name
    kernel_row = next(i for i, r in enumerate(expected.records) if r.kind == "kernel")
    assert dialog.table.item(kernel_row, 4).text() == "<<<4096, 256>>>"
    text = dialog.counts.text()
    assert f"{expected.noise_lines} noise line(s)" in text
    assert f"{len(expected.disagreements)} unit disagreement(s)" in text
    assert dialog.link_button.isEnabled()


def test_lambda_for_a_launch_is_fitted_and_stored(window, tmp_path, catalog):
    path = _timings(tmp_path / "runs.csv", catalog)
    dialog = window.import_measurements_dialog(str(path))
    assert dialog.kernel_box.count() == 1
    assert dialog.launch_box.currentText() == LAUNCH
    saved = dialog.calibrate_lambda()
    assert saved is not None, dialog.message.text()
    assert dialog.report["lambda"] == pytest.approx(LAMBDA, rel=1e-9)
    assert dialog.report["loo_mape"] == pytest.approx(0.0, abs=1e-6)
    [cal] = list_calibrations(catalog, GPU, "kernel")
    assert (cal.subject, cal.label, cal.measurements_name) == ("saxpy2", "default", "runs.csv")
    assert cal.parameters["lambda"] == pytest.approx(LAMBDA, rel=1e-9)
    assert "Saved" in dialog.summary.text()
    # the project is left as it was (the estimator restores the launch)
    launch = next(l for l in window.document.project.launches.values() if l.name == LAUNCH)
    assert launch.lam != pytest.approx(LAMBDA) and not window.document.undo_stack.count()


def test_kernel_launches_become_undoable_measured_points(window, tmp_path, catalog):
    from gpumodeler.ui.launch_panel.measurements import measured_points
    project = window.document.project
    path = _timings(tmp_path / "runs.csv", catalog)
    dialog = window.import_measurements_dialog(str(path))
    launch_id = dialog.launch_box.currentData()
    before = dict(project.measurements)
    assert dialog.add_points() == len(SIZES)
    x, t, what = measured_points(project, launch_id, "data_size")
    assert sorted(x) == [float(-(-n // 256) * 256) for n in SIZES]
    assert t == pytest.approx(sorted(v / LAMBDA for v in _expected_times(catalog)), rel=1e-12)
    assert set(what) == {"kernel"}
    assert "Added 9 measured point(s)" in dialog.summary.text()
    assert measured_points(project, launch_id, "block_size")[0].tolist() == [256.0] * len(SIZES)
    window.document.undo_stack.undo()
    assert project.measurements == before


def test_transfers_open_the_link_calibration_dialog(window, tmp_path, catalog):
    path = _timings(tmp_path / "runs.csv", catalog)
    dialog = window.import_measurements_dialog(str(path))
    link = dialog.calibrate_link()
    assert link.path == path and sum(r.kind == "transfer" for r in link.records) == 16
    assert link.direction_box.currentData() == "htod" and link.label_edit.text() == "pageable"


@pytest.mark.parametrize("content, message", [
    ("timestamp,cpu_percent\n1,20\n", "cannot tell the format"),
    ("", "is empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not a text file"),
    ("==1234== Profiling application: ./a\n==1234== Profiling result:\nNo kernels were profiled.\n",
     "no rows of a known kind"),
    ('"Start","Duration","Grid X"\n', "a CSV header nvprof does not write"),
])
def test_bad_files_change_nothing(window, tmp_path, gpumodeler_env, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    measurements = dict(window.document.project.measurements)
    store = _store_hash(gpumodeler_env)
    assert window.import_measurements_dialog(str(path)) is None
    [(title, text)] = window.errors
    assert message in text and "bad.csv" in text
    assert window.document.project.measurements == measurements
    assert _store_hash(gpumodeler_env) == store and not window.document.undo_stack.count()


def test_calibrated_for_this_gpu_sets_lambda(window, tmp_path, catalog, qtbot):
    from gpumodeler.ui.launch_panel.calibrated import CalibratedLambdaBox
    window.build_all_tabs()
    panel = window.launch_panel
    box = panel.findChild(CalibratedLambdaBox)
    assert box is not None
    assert box.refill() == 0 and box.itemText(0) == "none stored for this GPU"
    dialog = window.import_measurements_dialog(str(_timings(tmp_path / "runs.csv", catalog)))
    assert dialog.calibrate_lambda() is not None
    assert box.refill() == 1
    assert "λ = 0.7" in box.itemText(1) and "saxpy2 [default]" in box.itemText(1)
    before = panel.launch.lam
    assert box.choose(1)
    assert panel.launch.lam == pytest.approx(LAMBDA, rel=1e-9) and box.currentIndex() == 0
    window.document.undo_stack.undo()
    assert panel.launch.lam == before


def test_an_nsys_export_is_listed_with_its_gpu(window, tmp_path):
    """File › Import Measurements… of an Nsight Systems SQLite export (told by content)."""
    from nsys_exports import A100, PINNED, SAXPY, copy, kernel, write_export
    path = write_export(tmp_path / "report.sqlite", "modern",
                        kernels=[kernel(100, 2100, SAXPY)],
                        copies=[copy(0, 80, 1 << 20, 1, src=PINNED), copy(3000, 3100, 4096, 11)],
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    dialog = window.import_measurements_dialog(str(path))
    assert dialog is not None and not window.errors
    assert dialog.table.rowCount() == 3
    assert [dialog.table.item(i, 0).text() for i in range(3)] == ["transfer", "kernel",
                                                                 "migration"]
    text = dialog.counts.text()
    assert "read as nsys" in text and "GPU 0: NVIDIA A100-SXM4-40GB: 108 SMs" in text


def test_a_damaged_sqlite_file_is_a_message(window, tmp_path):
    path = tmp_path / "report.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\x01" * 300)
    assert window.import_measurements_dialog(str(path)) is None
    [(_, text)] = window.errors
    assert "not a readable SQLite file" in text
