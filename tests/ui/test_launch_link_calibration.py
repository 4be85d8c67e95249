"""The launch panel's “Transfers calibrated” box: the stored calibrations of the launch's
transfer link, by label; choosing one sets the connection's ``transfer_calibration`` (one
undoable SetOverride) and the prediction's transfers take the fitted model."""
import hashlib

import pytest

from gpumodeler.core.project import TRANSFER_CALIBRATION
from gpumodeler.core.transfers.link import link_transfer_time_s
from gpumodeler.db.calibrations import Calibration, calibrated_link_spec, save_calibration
from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.calibrated import NOMINAL, CalibratedLinkBox
from gpumodeler.ui.launch_panel.panel import LaunchPanel

LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"
SHA = hashlib.sha256(b"copies").hexdigest()


def _cal(subject, bw, label="pinned", loo=1.5):
    return Calibration(LINK, "link", subject, label, {
        "model": "regimes", "startup_s": 6e-6,
        "regimes": [{"first_size_bytes": 4.0, "last_size_bytes": 2.0 ** 31,
                     "bandwidth_bytes_per_s": bw}]},
        (), 1.0, loo, 1.0, "copies.json", SHA, "2026-11-23T10:00:00Z")


@pytest.fixture
def panel(qtbot, catalog, example_project):
    w = LaunchPanel(Document(example_project(), catalog))
    qtbot.addWidget(w)
    return w


def test_choose_a_link_calibration_then_undo(panel, catalog):
    doc = panel.document
    box = panel.findChild(CalibratedLinkBox)
    assert box is not None and box.currentText() == NOMINAL
    assert box.refill() == 0 and box.itemText(0).startswith(NOMINAL)
    nominal = list(panel.result.prediction.transfer_times_s)
    save_calibration(catalog, _cal("htod", 1.2e10))
    save_calibration(catalog, _cal("dtoh", 2.5e9, loo=2.5))
    assert box.refill() == 1
    assert box.itemText(1) == "pinned · dtoh, htod · LOO 2.5 %"
    depth = doc.undo_stack.count()
    assert box.choose(1)
    assert doc.project.connections["link1"].overrides == {TRANSFER_CALIBRATION: "pinned"}
    assert doc.undo_stack.count() == depth + 1 and box.currentText() == "pinned"
    panel.refresh()
    spec = calibrated_link_spec(catalog, LINK, "pinned")
    n = 4 * 400_000_000
    expected = [link_transfer_time_s(spec, d, n) for d in ("htod", "htod", "dtoh")]
    assert list(panel.result.prediction.transfer_times_s) == pytest.approx(expected, rel=1e-12)
    assert expected != pytest.approx(nominal, rel=1e-3)
    assert not box.choose(1)                     # only the current choice is shown: no edit
    box.refill()
    assert box.currentIndex() == 1 and not box.choose(1)       # the same choice: no edit
    assert doc.undo_stack.count() == depth + 1
    doc.undo_stack.undo()
    assert doc.project.connections["link1"].overrides == {}
    panel.refresh()
    assert box.currentText() == NOMINAL
    assert list(panel.result.prediction.transfer_times_s) == pytest.approx(nominal, rel=1e-12)
    doc.undo_stack.redo()
    box.refill()
    assert box.currentText().startswith("pinned")
    assert box.choose(0)                                       # “(nominal)” clears it
    assert doc.project.connections["link1"].overrides == {}


def test_a_label_no_longer_stored_says_so_in_the_panel(panel):
    from gpumodeler.core.commands import SetOverride
    doc = panel.document
    doc.push(SetOverride("connections", "link1", TRANSFER_CALIBRATION, "gone"))
    panel.refresh()
    assert "no calibration labelled 'gone'" in panel.transfer_error + panel.error
    assert panel.result is not None                            # the kernel is still shown
    assert panel.findChild(CalibratedLinkBox).refill() == 0


def test_the_inspector_and_system_editor_tolerate_the_label(qtbot, panel):
    """The label is no catalog field: the inspector shows the link's fields as before, an
    edit next to it keeps it."""
    from gpumodeler.core.commands import SetOverride
    from gpumodeler.ui.inspector.inspector import PropertyInspector
    doc = panel.document
    doc.push(SetOverride("connections", "link1", TRANSFER_CALIBRATION, "pinned"))
    inspector = PropertyInspector(doc)
    qtbot.addWidget(inspector)
    doc.select("connection", "link1")
    row = inspector.row_of("bandwidth_bytes_per_s")
    assert inspector.model.item(row, 1).text() == "15.8 GB/s"
    assert inspector.model.setData(inspector.value_index("bandwidth_bytes_per_s"), "12 GB/s")
    assert doc.project.connections["link1"].overrides == {TRANSFER_CALIBRATION: "pinned",
                                                          "bandwidth_bytes_per_s": 12e9}
