"""Devices › Add or Edit a GPU/Link: a device of the USER database added or edited from the
GUI, values typed with their units and recorded with a provenance; a value the database's
rule refuses is a message, and nothing is written; no GUI text sends anyone to a CLI command."""
from pathlib import Path

import pytest

from gpumodeler.ui.document import Document
from gpumodeler.ui.devices.editor import DeviceEditorDialog, FieldProblem, parse_field

GTX970 = "GeForce GTX 970"
LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"


@pytest.fixture
def document(catalog, example_project):
    return Document(example_project(), catalog)


def _dialog(qtbot, catalog, document, **kw):
    d = DeviceEditorDialog(catalog, None, document, **kw)
    qtbot.addWidget(d)
    return d


def test_add_a_gpu_with_units_and_provenance(qtbot, catalog, document):
    told = []
    document.changed.connect(lambda event, payload: told.append((event, payload)))
    d = _dialog(qtbot, catalog, document)
    assert d.is_new and d.kind == "gpu"
    d.name_edit.setText("My RTX  test card")
    d.set_text("sms", "16")
    d.set_text("sm_clock_hz", "1.5 GHz")
    d.set_text("l2_bytes", "4 MiB")
    d.set_text("compute_capability", "8.9")
    d.provenance_box.setCurrentIndex(d.provenance_box.findData("measurement"))
    d.source_edit.setText("nvidia-smi on my box")
    assert d.save(), d.message.text()
    record = catalog.get("My RTX test card")
    assert record.origin == "user"
    sms = record.default_record("sms")
    assert (sms.value, sms.unit, sms.provenance, sms.source_text) == (16, "count", "measurement",
                                                                      "nvidia-smi on my box")
    assert record.default_record("sm_clock_hz").value == 1.5e9
    assert record.default_record("l2_bytes").value == 4 * 2**20
    assert record.default_record("compute_capability").value == "8.9"
    assert any(event == "catalog_changed" or "catalog" in event for event, _ in told)
    # the dialog now shows the saved device, its values as the table shows them
    assert d.device_box.currentData() == "My RTX test card"
    assert d.table.item(d.row_of("sm_clock_hz"), 1).text() == "1500 MHz"
    assert "measurement" in d.table.item(d.row_of("sms"), 3).text()


def test_edit_a_shipped_gpu_makes_my_copy(qtbot, catalog, document, devices_db):
    before = Path(devices_db).read_bytes()
    shipped_clock = catalog.get(GTX970).default_record("sm_clock_hz").value
    d = _dialog(qtbot, catalog, document, kind="gpu", name=GTX970, field="sm_clock_hz")
    assert not d.is_new and d.table.currentRow() == d.row_of("sm_clock_hz")
    assert "Shipped" in d.origin.text()
    d.set_text("sm_clock_hz", "1300 MHz")
    assert d.changes() == {"sm_clock_hz": "1300 MHz"}
    assert d.save(), d.message.text()
    record = catalog.get(GTX970)
    assert record.origin == "user" and record.shadows_shipped
    clock = record.default_record("sm_clock_hz")
    assert clock.value == 1.3e9 != shipped_clock and clock.provenance == "user"
    # the shipped value stays as a record, and the shipped database is untouched
    assert shipped_clock in [r.value for r in record.values["sm_clock_hz"]]
    assert Path(devices_db).read_bytes() == before
    # the project's prediction follows (the document reads the catalog again)
    assert document.gpu_spec(GTX970).sm_clock_hz == 1.3e9


def test_edit_a_link(qtbot, catalog, document):
    d = _dialog(qtbot, catalog, document, kind="link", name=LINK)
    d.set_text("startup_htod_s", "12 µs")
    assert d.save(), d.message.text()
    assert catalog.get(LINK).default_record("startup_htod_s").value == pytest.approx(12e-6)


@pytest.mark.parametrize("field, text, words", [
    ("sms", "fast", "SMs"), ("sms", "2.5", "whole number"), ("sm_clock_hz", "1300", "write the unit"),
    ("l2_bytes", "4 GB/s", "L2 cache")])
def test_bad_values_are_refused_and_nothing_is_written(qtbot, catalog, document, field, text, words):
    shipped = catalog.get(GTX970)
    d = _dialog(qtbot, catalog, document, kind="gpu", name=GTX970)
    d.set_text("sm_clock_hz" if field != "sm_clock_hz" else "sms", "1300 MHz" if field != "sm_clock_hz" else "13")
    d.set_text(field, text)
    assert not d.save()
    assert words in d.message.text()
    # nothing written, the good value of the same save included; the typed text stays
    assert catalog.get(GTX970) == shipped
    assert d.table.item(d.row_of(field), 1).text() == text
    assert d.table.item(d.row_of(field), 1).toolTip() == d.message.text()


def test_parse_field_uses_the_databases_rule():
    assert parse_field("gpu", "sms", "16") == 16
    assert parse_field("gpu", "memory_bandwidth_theoretical_bytes_per_s", "224 GB/s") == 224e9
    with pytest.raises(FieldProblem):
        parse_field("gpu", "sms", "-3")   # a count is >= 0 (check_value_type)


def test_new_device_needs_a_free_name(qtbot, catalog, document):
    d = _dialog(qtbot, catalog, document)
    d.set_text("sms", "13")
    assert not d.save() and "name" in d.message.text()
    d.name_edit.setText(GTX970)  # a shipped name: the catalog refuses, and says so
    assert not d.save() and "already exists" in d.message.text()
    assert catalog.get(GTX970).origin == "shipped"


def test_no_gui_text_sends_to_the_devices_command():
    from gpumodeler.ui.device_fields import read_only_reason
    assert "Devices ›" in read_only_reason("gpu", "vendor")
    ui = Path(__file__).resolve().parents[2] / "gpumodeler" / "ui"
    offending = [str(p) for p in ui.rglob("*.py") if "gpumodeler devices" in p.read_text(encoding="utf-8")]
    assert offending == []


@pytest.mark.usefixtures("private_settings")
def test_devices_menu_opens_the_editor_on_the_selected_gpu(example_window):
    win = example_window
    project = win.document.project
    gpu = next(d for d in project.devices.values() if d.kind == "gpu")
    win.document.select("device", gpu.id)
    menu = next(a.menu() for a in win.menuBar().actions() if a.text().replace("&", "") == "Devices")
    entry = next(a for a in menu.actions() if a.text().replace("&", "") == "Add or Edit a GPU…")
    entry.trigger()
    dialogs = [w for w in win.findChildren(DeviceEditorDialog) if w.isVisible()]
    assert dialogs and dialogs[-1].device_box.currentData() == gpu.device_name
    dialogs[-1].close()


def test_delete_my_copy_shows_the_shipped_device_again(qtbot, catalog, document, monkeypatch):
    shipped_clock = catalog.get(GTX970).default_record("sm_clock_hz").value
    d = _dialog(qtbot, catalog, document, kind="gpu", name=GTX970)
    assert not d.delete_button.isEnabled()   # shipped: read-only
    assert not d.delete() and "read-only" in d.message.text()
    d.set_text("sm_clock_hz", "1300 MHz")
    assert d.save()
    assert d.delete_button.isEnabled()
    asked = []
    monkeypatch.setattr(d, "confirm_delete", lambda name, shadows, users: asked.append((shadows, users)) or False)
    assert not d.delete()                    # declined: nothing changes
    assert catalog.get(GTX970).origin == "user"
    monkeypatch.setattr(d, "confirm_delete", lambda name, shadows, users: asked.append((shadows, users)) or True)
    assert d.delete()
    assert asked[-1][0] is True and asked[-1][1]  # it said the project uses it
    record = catalog.get(GTX970)
    assert record.origin == "shipped" and record.default_record("sm_clock_hz").value == shipped_clock
    assert d.device_box.currentData() == GTX970 and not d.delete_button.isEnabled()
