"""Property inspector: catalog values with units and provenance, per-project overrides that
are checked, undoable and revertible, alternatives from other sources."""
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from gpumodeler.core.commands import AddConnection, AddItem
from gpumodeler.core.pipeline import resolve_gpu, resolve_link
from gpumodeler.core.project import Connection, PlacedDevice, Project
from gpumodeler.db.fields import FIELDS
from gpumodeler.ui.device_fields import (field_label, override_key, parse_override,
                                         provenance_text, read_only_reason, OverrideError)
from gpumodeler.ui.document import Document
from gpumodeler.ui.icons import APP_ICON_SVG
from gpumodeler.ui.inspector import PropertyInspector
from gpumodeler.ui.inspector.inspector import COLUMNS
from gpumodeler.ui.system_editor.presentation import Presenter
from gpumodeler.ui.units import QuantityError, format_quantity, parse_quantity

ROOT = Path(__file__).resolve().parents[2]
GPU, HOST = "GeForce GTX 970", "Gajger GTX 970 testbed host"
PCIE = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"


@pytest.fixture
def inspector(qtbot, catalog):
    document = Document(Project("test"), catalog)
    document.push(AddItem("devices", PlacedDevice("gpu1", "gpu", GPU)))
    document.push(AddItem("devices", PlacedDevice("host1", "host", HOST, x=-300)))
    document.push(AddConnection(Connection("link1", PCIE, "host1", "gpu1", "pcie")))
    document.undo_stack.clear()
    widget = PropertyInspector(document)
    qtbot.addWidget(widget)
    widget.resize(600, 900)
    document.select("device", "gpu1")
    return widget


def _row(inspector, field):
    row = inspector.row_of(field)
    return [inspector.model.item(row, c).text() for c in range(len(COLUMNS))]


def _edit(inspector, field, text):
    """What the value delegate does when the user commits an edit."""
    return inspector.model.setData(inspector.value_index(field), text)


def test_every_catalog_field_with_unit_and_provenance(inspector):
    for field in FIELDS["gpu"]:
        assert inspector.row_of(field) >= 0
    assert _row(inspector, "sms") == ["SMs", "13", "count", "Gajger 2017, Table 6.1"]
    assert _row(inspector, "sm_clock_hz")[1:3] == ["1253 MHz", "Hz"]
    assert _row(inspector, "boost_clock_hz")[3] == "vendor"
    assert _row(inspector, "tensor_cores_per_sm")[1] == "unknown"
    assert _row(inspector, "count")[1] == "1"
    assert "GeForce GTX 970" in inspector.title.text()


def test_override_is_checked_pushed_shown_and_undoable(inspector):
    doc = inspector.document
    _edit(inspector, "sms", "16")
    assert doc.project.devices["gpu1"].overrides == {"sms": 16}
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "override SMs"  # in words
    _, value, _, provenance = _row(inspector, "sms")
    assert value == "16" and provenance.startswith("overridden (catalog: 13")
    assert inspector.model.item(inspector.row_of("sms"), 1).font().bold()
    assert Presenter(doc.catalog).device_view(doc.project.devices["gpu1"]).subtitle.startswith("16 SMs")
    _edit(inspector, "sm_clock_hz", "1.3 GHz")
    assert doc.project.devices["gpu1"].overrides["sm_clock_hz"] == pytest.approx(1.3e9)
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.project.devices["gpu1"].overrides == {}
    assert _row(inspector, "sms")[1] == "13"
    assert not inspector.model.item(inspector.row_of("sms"), 1).font().bold()
    doc.undo_stack.redo()
    assert _row(inspector, "sms")[1] == "16"


def test_bad_values_are_refused_with_a_message_at_the_field(inspector, qtbot):
    doc = inspector.document
    with qtbot.waitSignal(doc.refused):
        _edit(inspector, "sms", "lots")
    assert "needs a number" in inspector.message_text()
    assert _row(inspector, "sms")[1] == "13"
    assert "needs a number" in inspector.model.item(inspector.row_of("sms"), 1).toolTip()
    _edit(inspector, "sm_clock_hz", "-5 MHz")
    assert "must be > 0" in inspector.message_text()
    _edit(inspector, "sms", "12.5")
    assert "whole number" in inspector.message_text()
    _edit(inspector, "compute_capability", "five")
    assert "looks like 5.2" in inspector.message_text()
    _edit(inspector, "count", "0")
    assert "count must be a whole number 1..1024" in inspector.message_text()
    assert doc.project.devices["gpu1"].overrides == {} and doc.project.devices["gpu1"].count == 1
    assert doc.undo_stack.count() == 0
    # fields the model does not read are not editable (they live in the device database)
    index = inspector.value_index("memory_size_bytes")
    assert not (inspector.model.flags(index) & Qt.ItemFlag.ItemIsEditable)
    assert inspector.model.flags(inspector.value_index("sms")) & Qt.ItemFlag.ItemIsEditable


def test_revert_by_button_and_context_menu_with_undo(inspector):
    doc = inspector.document
    _edit(inspector, "sms", "16")
    inspector.tree.setCurrentIndex(inspector.value_index("sms"))
    assert inspector.revert_button.isEnabled()
    inspector.revert_button.click()
    assert doc.project.devices["gpu1"].overrides == {}
    assert doc.undo_stack.undoText() == "revert SMs"
    doc.undo_stack.undo()
    assert doc.project.devices["gpu1"].overrides == {"sms": 16}
    menu = inspector.build_context_menu(inspector.value_index("sms"))
    revert = next(a for a in menu.actions() if a.text() == "Revert to catalog value")
    assert revert.isEnabled()
    revert.trigger()
    assert doc.project.devices["gpu1"].overrides == {}


def test_alternatives_from_other_sources_are_listed_and_usable(inspector):
    parent = inspector.model.item(inspector.row_of("sm_clock_hz"), 0)
    rows = [[parent.child(r, c).text() for c in range(len(COLUMNS))]
            for r in range(parent.rowCount())]
    assert [r[1] for r in rows] == ["1253 MHz", "1279 MHz", "1178 MHz"]
    assert rows[0][3].endswith("★ default") and rows[1][3].startswith("Amaris 2018")
    assert "1279 MHz" in inspector.model.item(inspector.row_of("sm_clock_hz"), 1).toolTip()
    menu = inspector.build_context_menu(parent.child(1, 1).index())
    use = next(a for a in menu.actions() if a.text().startswith("Use this value"))
    use.trigger()
    assert inspector.document.project.devices["gpu1"].overrides == {"sm_clock_hz": 1279e6}


def test_count_and_label_are_project_values(inspector):
    doc = inspector.document
    _edit(inspector, "count", "4")
    _edit(inspector, "label", "node A")
    assert (doc.project.devices["gpu1"].count, doc.project.devices["gpu1"].label) == (4, "node A")
    assert doc.undo_stack.count() == 2
    doc.undo_stack.undo()
    assert _row(inspector, "label")[1] == ""


def test_link_overrides_reach_the_model_and_gpu_names_match_core(inspector):
    doc = inspector.document
    doc.select("connection", "link1")
    assert _row(inspector, "bandwidth_bytes_per_s")[1:3] == ["15.8 GB/s", "B/s"]
    assert _row(inspector, "startup_htod_s")[3].startswith("measurement: Gajger 2017")
    assert read_only_reason("link", "link_type")
    _edit(inspector, "bandwidth_bytes_per_s", "12 GB/s")
    _edit(inspector, "startup_htod_s", "0")
    link = resolve_link(doc.project, "link1", doc.link_spec)
    assert (link.bandwidth_bytes_per_s, link.startup_htod_s) == (12e9, 0)
    doc.select("device", "gpu1")
    _edit(inspector, "fp32_cores_per_sm", "64")
    assert doc.project.devices["gpu1"].overrides == {"cuda_cores_per_sm": 64}
    assert resolve_gpu(doc.project, "gpu1", doc.gpu_spec).cuda_cores_per_sm == 64
    # every GPU field the inspector lets users override is one core reads, under its name
    record = doc.catalog.get(GPU)
    spec = record.to_gpu_spec()
    for field in FIELDS["gpu"]:
        if read_only_reason("gpu", field) is None and record.value(field) is not None:
            assert getattr(spec, override_key("gpu", field)) == pytest.approx(record.value(field)) \
                if not isinstance(record.value(field), str) else \
                getattr(spec, override_key("gpu", field)) == record.value(field)


def test_selection_of_nothing_or_other_kinds_shows_a_hint(inspector):
    inspector.document.select("instruction", "i1")
    assert inspector.model.rowCount() == 0 and "Select a device" in inspector.title.text()
    inspector.document.select("device", "gpu1")
    assert inspector.model.rowCount() > 30
    inspector.document.push(AddItem("devices", PlacedDevice("gpu2", "gpu", "No Such GPU")))
    inspector.document.select("device", "gpu2")
    assert "no device named" in inspector.title.text()


def test_quantities_round_trip_and_refuse_nonsense():
    for value, unit in [(1253e6, "Hz"), (15.8e9, "B/s"), (98304, "B"), (4 * 2**30, "B"),
                        (3.96868e-6, "s"), (13.78, "B/cycle"), (0.689, "ratio"), (13, "count")]:
        text = format_quantity(value, unit, digits=12)
        assert parse_quantity(text, unit) == pytest.approx(value, rel=1e-12)
    assert format_quantity(1253e6, "Hz") == "1253 MHz"
    assert format_quantity(None, "Hz") == "unknown"
    for text, unit in [("abc", "count"), ("1.5", "count"), ("7 kg", "Hz"), ("", "s")]:
        with pytest.raises(QuantityError):
            parse_quantity(text, unit)
    with pytest.raises(OverrideError, match="latency table"):
        parse_override("gpu", "latency_table", "nope")
    # a table of the device database, when the caller lists it (the inspector does)
    with pytest.raises(OverrideError, match="valid: maxwell-gajger, pascal-mine"):
        parse_override("gpu", "latency_table", "volta-x", ["maxwell-gajger", "pascal-mine"])
    assert parse_override("gpu", "latency_table", "pascal-mine",
                          ["maxwell-gajger", "pascal-mine"]) == "pascal-mine"
    assert field_label("fp32_cores_per_sm") == "FP32 cores per SM"
    assert provenance_text(None) == "no source"


def test_bundled_icon_file_matches_the_runtime_icon():
    assert (ROOT / "resources" / "icons" / "gpumodeler.svg").read_text() == APP_ICON_SVG
