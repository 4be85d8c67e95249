"""Calibrate › Learn…: measurement files evaluated leave-one-out off the GUI thread, the
table of errors and the predicted-vs-measured plot with one colour per held-out group."""
from __future__ import annotations

import math

import numpy as np
import pytest

GPUS = {"GeForce GTX 970": (13, 1.253e9, 224e9), "GeForce GTX 980": (16, 1.216e9, 224e9),
        "GeForce GTX TITAN X (Maxwell)": (24, 1.0e9, 336.5e9)}


@pytest.fixture
def catalog(gpumodeler_env):
    from gpumodeler.db.catalog import Catalog
    with Catalog() as cat:
        yield cat


def _runs(path):
    """A timings CSV with metric columns (made-up times: the dialog's mechanics, not accuracy)."""
    rng = np.random.default_rng(2)
    lines = ["kind,name,grid,block,time,unit,gpu,registers,inst_issued,dram_read_bytes,"
             "gld_transactions,gst_transactions,achieved_occupancy"]
    for g, (sms, clk, bw) in GPUS.items():
        for k, (ipw, bpw) in {"a": (20, 384), "b": (300, 128)}.items():
            for e in range(16, 21):
                grid = 2 ** e // 256
                warps = grid * 8
                t = (warps * bpw / bw * 1.2 + warps * ipw / (sms * 4 * clk) + 3e-6) \
                    * math.exp(rng.normal(0, 0.02))
                lines.append(f"kernel,{k},{grid},256,{t * 1e6:.4f},us,{g},16,{warps * ipw},"
                             f"{warps * bpw},{warps * 8},{warps * 4},0.8")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_evaluate_fills_the_table_and_the_plot(qtbot, tmp_path, catalog):
    from gpumodeler.core.models.registry import MODELS
    from gpumodeler.ui.calibration.learn_dialog import LearnDialog
    dialog = LearnDialog(catalog)
    qtbot.addWidget(dialog)
    assert dialog.add_file(_runs(tmp_path / "runs.csv"))
    dialog.method_boxes["lr"].setChecked(False)
    assert dialog.method_boxes["hybrid"].isChecked()
    dialog.leave_out_box.setCurrentText("gpu")
    with qtbot.waitSignal(dialog.evaluated, timeout=60000):
        dialog.start_evaluation()
    methods = ["hybrid", *MODELS]
    assert dialog.table.rowCount() == len(GPUS) * len(methods) + len(methods)
    assert dialog.table.item(dialog.table.rowCount() - 1, 0).text() == "all"
    assert dialog.plot_method.currentText() == "hybrid"
    def size(item):
        x = item.getData()[0]
        return 0 if x is None else len(x)
    drawn = [item for item in dialog.plot.groups if size(item)]
    assert len(drawn) == len(GPUS)  # one colour per held-out GPU
    colours = {item.opts["symbolBrush"] for item in drawn}
    assert len(colours) == len(GPUS)
    n = next(s["n"] for s in dialog.result["summary"] if s["method"] == "hybrid")
    assert sum(size(item) for item in drawn) == n == 30
    dialog.plot_method.setCurrentText("roofline")
    assert sum(size(item) for item in drawn) == 30


def test_bad_input_gives_messages(qtbot, tmp_path, catalog):
    from gpumodeler.ui.calibration.learn_dialog import LearnDialog
    dialog = LearnDialog(catalog)
    qtbot.addWidget(dialog)
    assert dialog.start_evaluation() is None and "measurement file" in dialog.message.text()
    bad = tmp_path / "bad.csv"
    bad.write_text("hello\n")
    assert not dialog.add_file(bad) and dialog.message.text()
    one = tmp_path / "one.csv"
    one.write_text("kind,name,grid,block,time,unit,gpu\nkernel,a,4,256,3,us,GeForce GTX 970\n")
    assert dialog.add_file(one)
    job = dialog.start_evaluation()
    qtbot.waitUntil(lambda: dialog._job is None, timeout=20000)
    assert job is not None and "at least 2 gpus" in dialog.message.text()


def test_the_calibrate_menu_opens_it(qtbot, catalog):
    from gpumodeler.ui.calibration.learn_dialog import LearnDialog
    from gpumodeler.ui.main_window import MainWindow
    window = MainWindow(catalog, remember=False)
    qtbot.addWidget(window)
    [menu] = [m.menu() for m in window.menuBar().actions() if m.text() == "&Calibrate"]
    [action] = [a for a in menu.actions() if "Learn" in a.text()]
    action.trigger()
    [dialog] = window.findChildren(LearnDialog)
    assert dialog.isVisible()
    dialog.close()
