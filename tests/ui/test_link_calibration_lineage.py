"""A link calibration is offered for the links derived from the calibrated link: a project
link made from the generic “PCIe 3.0 x16” (and overridden in the project) uses what was
stored for “PCIe 3.0 x16”, and so does the testbed link named after it, “PCIe 3.0 x16
(Gajger GTX 970 testbed)”, which takes the calibration as its own when chosen."""
import hashlib

import pytest

from gpumodeler.core.commands import SetOverride, UpdateItem
from gpumodeler.core.project import TRANSFER_CALIBRATION
from gpumodeler.core.transfers.lineage import base_link_names
from gpumodeler.core.transfers.link import link_transfer_time_s
from gpumodeler.db.calibrations import (Calibration, calibrated_link_spec, list_calibrations,
                                        save_calibration)
from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.calibrated import NOMINAL, CalibratedLinkBox
from gpumodeler.ui.launch_panel.panel import LaunchPanel

TESTBED = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"
GENERIC = "PCIe 3.0 x16"
SHA = hashlib.sha256(b"copies").hexdigest()


def _cal(link, subject, bw, label="pinned"):
    return Calibration(link, "link", subject, label, {
        "model": "regimes", "startup_s": 6e-6,
        "regimes": [{"first_size_bytes": 4.0, "last_size_bytes": 2.0 ** 31,
                     "bandwidth_bytes_per_s": bw}]},
        (), 1.0, 1.5, 1.0, "copies.json", SHA, "2026-11-23T10:00:00Z")


@pytest.fixture
def panel(qtbot, catalog, example_project):
    w = LaunchPanel(Document(example_project(), catalog))
    qtbot.addWidget(w)
    return w


def _times(panel):
    panel.refresh()
    return list(panel.result.prediction.transfer_times_s)


def test_names_say_what_a_link_derives_from():
    assert base_link_names(TESTBED) == [GENERIC]
    assert base_link_names(GENERIC) == []
    assert base_link_names("NVLink 4 (x18) (DGX)") == ["NVLink 4 (x18)", "NVLink 4"]


def test_the_testbed_link_is_offered_the_generic_calibration(panel, catalog):
    doc = panel.document
    assert doc.base_links(TESTBED) == [GENERIC] and doc.base_links(GENERIC) == []
    box = panel.findChild(CalibratedLinkBox)
    assert box.refill() == 0
    nominal = _times(panel)
    save_calibration(catalog, _cal(GENERIC, "htod", 1.2e10))
    save_calibration(catalog, _cal(GENERIC, "dtoh", 2.5e9))
    assert box.refill() == 1
    assert box.itemText(1) == f"pinned · dtoh, htod · LOO 1.5 % · from {GENERIC}"
    assert list_calibrations(catalog, TESTBED, "link") == []
    depth = doc.undo_stack.count()
    assert box.choose(1)
    assert doc.project.connections["link1"].overrides == {TRANSFER_CALIBRATION: "pinned"}
    assert doc.undo_stack.count() == depth + 1
    adopted = list_calibrations(catalog, TESTBED, "link")
    assert sorted(c.subject for c in adopted) == ["dtoh", "htod"]
    assert all(f"calibrated on {GENERIC}" in c.note for c in adopted)
    assert {c.measurements_sha256 for c in adopted} == {SHA}        # provenance kept
    spec = calibrated_link_spec(catalog, TESTBED, "pinned")
    n = 4 * 400_000_000
    expected = [link_transfer_time_s(spec, d, n) for d in ("htod", "htod", "dtoh")]
    assert _times(panel) == pytest.approx(expected, rel=1e-12)
    assert expected != pytest.approx(nominal, rel=1e-3)
    box.refill()
    assert box.itemText(box.currentIndex()) == "pinned · dtoh, htod · LOO 1.5 %"   # its own now
    doc.undo_stack.undo()
    assert doc.project.connections["link1"].overrides == {}
    assert _times(panel) == pytest.approx(nominal, rel=1e-12)
    assert box.currentText() == NOMINAL


def test_the_links_own_calibration_of_a_label_comes_first(panel, catalog):
    save_calibration(catalog, _cal(GENERIC, "htod", 1.2e10))
    save_calibration(catalog, _cal(TESTBED, "htod", 9e9))
    save_calibration(catalog, _cal(GENERIC, "htod", 7e9, label="pageable"))
    box = panel.findChild(CalibratedLinkBox)
    assert box.refill() == 2
    texts = [box.itemText(i) for i in range(1, box.count())]
    assert texts == ["pageable · htod · LOO 1.5 % · from PCIe 3.0 x16", "pinned · htod · LOO 1.5 %"]
    assert box.choose(2)
    [own] = list_calibrations(catalog, TESTBED, "link")     # nothing copied for its own label
    assert own.parameters["regimes"][0]["bandwidth_bytes_per_s"] == 9e9


def test_a_project_link_made_from_the_generic_and_overridden(panel, catalog):
    doc = panel.document
    assert doc.push(UpdateItem("connections", "link1", link_name=GENERIC))
    assert doc.push(SetOverride("connections", "link1", "bandwidth_bytes_per_s", 12e9))
    save_calibration(catalog, _cal(GENERIC, "htod", 1.1e10))
    box = panel.findChild(CalibratedLinkBox)
    assert box.refill() == 1 and box.itemText(1) == "pinned · htod · LOO 1.5 %"
    assert box.choose(1)
    assert doc.project.connections["link1"].overrides == {
        "bandwidth_bytes_per_s": 12e9, TRANSFER_CALIBRATION: "pinned"}
    htod = _times(panel)[0]
    spec = calibrated_link_spec(catalog, GENERIC, "pinned")
    assert htod == pytest.approx(link_transfer_time_s(spec, "htod", 4 * 400_000_000), rel=1e-12)


def test_a_link_of_another_type_or_name_is_not_offered(panel, catalog):
    doc = panel.document
    nvlink = next(s.name for s in catalog.list("link") if s.name.startswith("NVLink"))
    save_calibration(catalog, _cal(nvlink, "htod", 5e10))
    save_calibration(catalog, _cal("PCIe 4.0 x16", "htod", 2.5e10))
    assert panel.findChild(CalibratedLinkBox).refill() == 0
    assert doc.base_links("PCIe 4.0 x16") == []


def test_the_calibration_dialog_starts_on_the_projects_link(qtbot, catalog, panel):
    from gpumodeler.ui.calibration.dialog import CalibrationDialog
    dialog = CalibrationDialog(catalog, None, panel.document)
    qtbot.addWidget(dialog)
    assert dialog.link_box.currentText() == TESTBED
