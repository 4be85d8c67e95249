"""The launch panel's sweep overlays the checked models (one coloured curve and legend entry
each, in the exports) and the Prediction box lists the kernel terms."""
import csv
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import Qt

from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.ui.plots.sweep_plot import MODEL_COLOURS


@pytest.fixture
def panel(qtbot, catalog, example_project):
    project = example_project()
    project.sweeps.clear()
    w = LaunchPanel(Document(project, catalog))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    yield w
    w.sweep.cancel()


def sweep_data_size(qtbot, sweep, checked=()):
    sweep.set_variable("data_size")
    sweep.from_edit.setText("1000")
    sweep.to_edit.setText("4000000")
    sweep.points_spin.setValue(20)
    previous = sweep.result
    sweep.model_list.set_checked(checked)
    if sweep.result is previous or sweep.job is not None:
        if sweep.job is None:
            assert sweep.run(), sweep.message.text()
        qtbot.waitUntil(lambda: sweep.job is None and sweep.result is not previous, timeout=20_000)
    return sweep.result


def legend_labels(plot):
    return [label.text for _, label in plot.legend.items]


def test_checked_models_are_overlaid_and_exported(panel, qtbot, tmp_path):
    sweep = panel.sweep
    result = sweep_data_size(qtbot, sweep, ("mwp-cwp", "roofline", "volkov-contention"))
    curve = result.curves[0]
    assert set(curve.model_times) == {"mwp-cwp", "roofline", "volkov-contention"}
    # GTX 970 has no contention fit (Volkov Table 6.5): not drawn, its tooltip says why
    assert np.isnan(curve.model_times["volkov-contention"]).all()
    items = sweep.plot.model_items()
    assert set(items) == {(0, "mwp-cwp"), (0, "roofline")}
    for (i, m), item in items.items():
        xs, ys = item.getData()
        assert ys == pytest.approx(curve.model_times[m] / sweep.plot.unit[1], rel=1e-12)
        assert item.opts["pen"].color().name() == MODEL_COLOURS[m]
        assert "Williams" in item.toolTip() if m == "roofline" else "Hong & Kim" in item.toolTip()
    assert "mwp-cwp" in legend_labels(sweep.plot) and "roofline" in legend_labels(sweep.plot)
    row = {sweep.model_list.item(i).text(): sweep.model_list.item(i) for i in range(sweep.model_list.count())}
    assert "Table 6.5" in row["volkov-contention"].toolTip()
    assert "computed at 20 of 20" in row["roofline"].toolTip()
    # unchecking replots without a new sweep
    row["mwp-cwp"].setCheckState(Qt.Unchecked)
    assert sweep.result is result and sweep.job is None
    assert set(sweep.plot.model_items()) == {(0, "roofline")}
    assert "mwp-cwp" not in legend_labels(sweep.plot)
    # exports carry the overlay: a CSV column, and the legend entry in the SVG
    data, svg = tmp_path / "s.csv", tmp_path / "s.svg"
    assert sweep.export(str(data)) and sweep.export(str(svg))
    with data.open() as fh:
        rows = list(csv.DictReader(fh))
    assert float(rows[3]["time_s_roofline"]) == pytest.approx(curve.model_times["roofline"][3])
    assert "time_s_mwp-cwp" not in rows[0]
    text = " ".join(t.strip() for t in ET.parse(svg).getroot().itertext())
    assert "roofline" in text
    # the gajger overlay is the sweep's own kernel time (kernel terms included)
    row["gajger"].setCheckState(Qt.Checked)
    qtbot.waitUntil(lambda: sweep.job is None and sweep.result is not result, timeout=20_000)
    c = sweep.result.curves[0]
    assert np.array_equal(c.model_times["gajger"], c.kernel_time_s)


def test_prediction_box_lists_the_terms_of_an_under_filled_launch(panel, qtbot):
    labels = panel.prediction.labels
    full = labels["terms"].text()
    assert "under-filled GPU: off (the grid fills at least one wave)" in full
    project = panel.document.project
    launch = project.launches[panel.launch_id]
    project.put("launches", replace(launch, data_size=1000))  # 4 blocks on 13 SMs
    panel.refresh()
    qtbot.waitUntil(lambda: "under-filled GPU: +" in labels["terms"].text(), timeout=5_000)
    assert "eq. 4.1 alone" in labels["terms"].text()
    r = panel.result.prediction
    assert r.kernel.time_s > float(r.terms.eq41_cycles / r.terms.clock_hz)


def test_compared_gpus_get_a_model_curve_each(panel, qtbot):
    sweep = panel.sweep
    sweep.set_variable("block_size")
    sweep.set_gpus(["GeForce GTX 970", "GeForce GTX 680"])
    sweep.model_list.set_checked(["roofline", "volkov-contention"])
    assert sweep.result is None and sweep.job is None  # checking models before any sweep runs none
    assert sweep.run(), sweep.message.text()
    qtbot.waitUntil(lambda: sweep.job is None and sweep.result is not None, timeout=20_000)
    labels = [c.label for c in sweep.result.curves]
    items = sweep.plot.model_items()
    # Table 6.5 fits the GTX 680 only: its contention curve is drawn, the GTX 970's is not
    assert set(items) == {(0, "roofline"), (1, "roofline"), (labels.index("GeForce GTX 680"), "volkov-contention")}
    assert items[(0, "roofline")].opts["pen"].style() != items[(1, "roofline")].opts["pen"].style()
    legend = legend_labels(sweep.plot)
    assert "GTX 680: roofline" in legend and "GTX 970: roofline" in legend
    assert "GTX 680: volkov-contention" in legend and "GTX 970: volkov-contention" not in legend
