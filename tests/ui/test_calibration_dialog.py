"""The calibration dialog: fit measured copies off the GUI thread, show the fit, store it."""
import json

import numpy as np
import pytest

from gpumodeler.db.calibrations import list_calibrations

LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"
MiB = 2**20


@pytest.fixture
def catalog(gpumodeler_env):
    from gpumodeler.db.catalog import Catalog
    with Catalog() as cat:
        yield cat


def _copies(path):
    rng = np.random.default_rng(4)
    n = np.unique(np.concatenate([4 * 2.0 ** np.arange(8), np.round(1024 * 2 ** (np.arange(41) / 2))]))
    bw = np.exp(np.interp(np.log(n), np.log([2 * MiB, 4 * MiB]), np.log([6e9, 2.5e9])))
    t = (5e-6 + n / bw) * (1 + 0.02 * rng.standard_normal(n.size))
    path.write_text(json.dumps([{"kind": "transfer", "direction": "dtoh", "size_bytes": float(a),
                                 "time_s": float(b), "memory_kind": "pageable"}
                                for a, b in zip(n, t)]))
    return path


def test_fit_plot_and_store(qtbot, tmp_path, catalog):
    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    dialog = CalibrationDialog(catalog)
    qtbot.addWidget(dialog)
    assert dialog.load_file(_copies(tmp_path / "copies.json"))
    assert dialog.direction_box.currentData() == "dtoh"
    assert dialog.label_edit.text() == "pageable"
    dialog.link_box.setCurrentText(LINK)
    assert not dialog.save_button.isEnabled()
    with qtbot.waitSignal(dialog.fitted, timeout=20000):
        dialog.start_fit()
    fit = dialog.fit
    # nested leave-one-out (the model chosen inside each fold): the honest, higher figure
    assert fit.loo_mape <= 4.0 and fit.model.startup_s >= 0
    assert fit.model.bandwidth_bytes_per_s(16 * MiB) == pytest.approx(2.5e9, rel=0.03)
    assert "leave-one-out error" in dialog.summary.text()
    x, y = dialog.plot.measured.getData()
    assert len(x) == fit.sizes_bytes.size
    _, res = dialog.plot.loo.getData()
    assert np.allclose(res, fit.loo_relative_errors * 100)
    assert dialog.save_button.isEnabled()
    saved = dialog.save()
    assert saved is not None
    [cal] = list_calibrations(catalog, LINK)
    assert (cal.subject, cal.label, cal.measurements_name) == ("dtoh", "pageable", "copies.json")
    assert cal.parameters == fit.parameters()


def test_bad_files_and_fits_give_messages(qtbot, tmp_path, catalog):
    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    dialog = CalibrationDialog(catalog)
    qtbot.addWidget(dialog)
    assert dialog.start_fit() is None and "measurement file" in dialog.message.text()
    bad = tmp_path / "cut.json"
    bad.write_text('[{"kind": "transfer"')
    assert not dialog.load_file(bad) and "not valid JSON" in dialog.message.text()
    few = tmp_path / "few.json"
    few.write_text(json.dumps([{"kind": "transfer", "direction": "htod", "size_bytes": 1e6,
                                "time_s": 1e-4}]))
    assert dialog.load_file(few)
    job = dialog.start_fit()
    qtbot.waitUntil(lambda: dialog._job is None, timeout=20000)
    assert job is not None and "at least 3 different sizes" in dialog.message.text()
    assert dialog.save() is None and list_calibrations(catalog) == []


def test_main_window_has_the_calibration_action(qtbot, catalog):
    from gpumodeler.ui.main_window import MainWindow
    window = MainWindow(catalog, remember=False)
    qtbot.addWidget(window)
    [devices] = [m.menu() for m in window.menuBar().actions() if m.text() == "&Devices"]
    [action] = [a for a in devices.actions() if "Calibrate" in a.text()]
    action.trigger()
    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    [dialog] = window.findChildren(CalibrationDialog)
    assert dialog.isVisible() and dialog.link_box.count() > 0
    dialog.close()


def test_an_nsys_export_gives_its_copies_not_its_migrations(qtbot, tmp_path, catalog):
    from nsys_exports import PINNED, copy, write_export

    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    copies = [copy(i * 10**6, i * 10**6 + 5_000 + 2 ** (10 + i) // 6, 2 ** (10 + i), 2,
                   dst=PINNED) for i in range(12)]
    copies += [copy(10**8 + i, 10**8 + i + 1, 4096, 11) for i in range(5)]
    dialog = CalibrationDialog(catalog)
    qtbot.addWidget(dialog)
    assert dialog.load_file(write_export(tmp_path / "report.sqlite", "modern", copies=copies))
    assert len(dialog.records) == 17
    assert dialog.direction_box.currentData() == "dtoh"
    # (managed migrations counted as copies would leave two memory kinds and no label)
    assert dialog.label_edit.text() == "pinned"
    assert dialog.label_edit.text() == "pinned"


def _example_document(catalog):
    from pathlib import Path

    from gpumodeler.db.project_file import load_project
    from gpumodeler.ui.document import Document
    example = Path(__file__).resolve().parents[2] / "resources" / "examples" / "saxpy2-gtx970.gpm"
    return Document(load_project(str(example)), catalog)


def _write(path, records):
    path.write_text(json.dumps(records))
    return path


def test_starts_at_the_launchs_link_and_direction(qtbot, catalog):
    """The example launch's transfers run over the GTX 970's PCIe link, host → device first:
    the dialog starts there, not at the catalog's first link or the file's first direction."""
    from gpumodeler.ui.calibration.dialog import CalibrationDialog, launch_context
    doc = _example_document(catalog)
    launch_id = next(iter(doc.project.launches))
    ctx = launch_context(doc.project, launch_id)
    assert (ctx.gpu, ctx.link, ctx.direction) == ("GeForce GTX 970", LINK, "htod")
    first_link = [s.name for s in catalog.list("link")][0]
    assert first_link != LINK  # else the test could not tell the default from the list's first
    dialog = CalibrationDialog(catalog, None, doc, launch_id)
    qtbot.addWidget(dialog)
    assert dialog.link_box.currentText() == LINK
    assert dialog.direction_box.currentData() == "htod"
    assert dialog.direction_box.currentText() == "host → device"
    assert LINK in dialog.for_label.text() and "GeForce GTX 970" in dialog.for_label.text()
    assert dialog.warning.isHidden()


def test_warns_when_the_files_gpu_or_the_link_differ(qtbot, tmp_path, catalog):
    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    doc = _example_document(catalog)
    dialog = CalibrationDialog(catalog, None, doc)
    qtbot.addWidget(dialog)
    both = [{"kind": "transfer", "direction": d, "size_bytes": float(2 ** k), "time_s": 1e-5 + 2 ** k / 1e10,
             "gpu": "NVIDIA GeForce GTX 970"} for d in ("dtoh", "htod") for k in range(10, 20)]
    # the same GPU as a profiler names it, both directions: no warning, the launch's direction kept
    assert dialog.load_file(_write(tmp_path / "same.json", both))
    assert dialog.direction_box.currentData() == "htod"
    assert dialog.context_problems() == [] and dialog.warning.isHidden()
    # another GPU's copies
    other = [dict(r, gpu="NVIDIA H100 80GB HBM3") for r in both]
    assert dialog.load_file(_write(tmp_path / "other.json", other))
    [problem] = dialog.context_problems()
    assert "H100" in problem and "GeForce GTX 970" in problem
    assert not dialog.warning.isHidden() and "H100" in dialog.warning.text()
    # another link than the launch's
    dialog.load_file(_write(tmp_path / "same.json", both))
    other_link = next(s.name for s in catalog.list("link") if s.name != LINK)
    dialog.link_box.setCurrentText(other_link)
    [problem] = dialog.context_problems()
    assert other_link in problem and LINK in problem
    assert not dialog.warning.isHidden()
    dialog.link_box.setCurrentText(LINK)
    assert dialog.warning.isHidden()
    # a file of device → host copies only: its direction is taken
    assert dialog.load_file(_write(tmp_path / "dtoh.json", both[:10]))
    assert dialog.direction_box.currentData() == "dtoh"


def test_a_file_of_several_gpus_offers_them_and_fits_the_launchs(qtbot, tmp_path, catalog):
    """A file with the GTX 970's and an H100's copies: the fit would need to know which, and
    the dialog has the field for it (no message names a command-line option)."""
    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    doc = _example_document(catalog)
    dialog = CalibrationDialog(catalog, None, doc)
    qtbot.addWidget(dialog)
    assert dialog.gpu_box.isHidden() or not dialog.gpu_box.isVisibleTo(dialog)
    rng = np.random.default_rng(1)
    records = [{"kind": "transfer", "direction": "htod", "size_bytes": float(2 ** k),
                "time_s": (1e-5 + 2 ** k / bw) * (1 + 0.01 * rng.standard_normal()), "gpu": gpu,
                "memory_kind": "pinned"}
               for gpu, bw in (("NVIDIA GeForce GTX 970", 1.2e10), ("NVIDIA H100", 5e10))
               for k in range(10, 28)]
    assert dialog.load_file(_write(tmp_path / "two.json", records))
    assert dialog.gpu_box.isVisibleTo(dialog) and dialog.gpu_box.count() == 2
    assert dialog.chosen_gpu() == "NVIDIA GeForce GTX 970"  # the launch's
    assert dialog.warning.isHidden()
    with qtbot.waitSignal(dialog.fitted, timeout=20000):
        dialog.start_fit()
    assert dialog.selection.gpu == "NVIDIA GeForce GTX 970" and len(dialog.selection.records) == 18
    assert dialog.fit.model.bandwidth_bytes_per_s(2 ** 27) == pytest.approx(1.2e10, rel=0.1)
    dialog.gpu_box.setCurrentIndex(dialog.gpu_box.findData("NVIDIA H100"))
    assert "H100" in dialog.warning.text()


def test_fit_errors_name_the_dialogs_fields():
    from gpumodeler.ui.calibration.dialog import dialog_words
    from gpumodeler.core.errors import InvalidParameter
    from gpumodeler.core.measurements.records import Measurement
    from gpumodeler.core.transfers.selection import select_copies
    records = [Measurement("transfer", 1e-3, direction="htod", size_bytes=1e6, memory_kind=k)
               for k in ("pinned", "pageable")]
    with pytest.raises(InvalidParameter) as caught:
        select_copies(records, direction="htod")
    assert "--" in str(caught.value)
    words = dialog_words(str(caught.value))
    assert "--" not in words and "Memory kind / label" in words
