"""Desktop conventions, the launch panel: a transfer over a link with an unknown startup time blanks
only the transfers (kernel still predicted) and offers the field to set; every input that
cannot be right is refused at its field; one number parser; a broken launch clears the
sweep on show so a stale curve cannot be exported."""
import pytest

from gpumodeler.core.commands import UpdateItem
from gpumodeler.ui.document import Document
from gpumodeler.ui.inspector import PropertyInspector
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.ui.units import QuantityError, parse_number

NO_STARTUP = "PCIe (Amarís Hive (GTX 680) host)"  # a testbed link the documents give no startup for


@pytest.fixture
def panel(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    w = LaunchPanel(doc)
    qtbot.addWidget(w)
    yield w
    w.sweep.cancel()


def edit(panel, name, text):
    w = panel.form.widgets[name]
    w.setText(text)
    w.editingFinished.emit()


def relink(panel, link_name):
    doc = panel.document
    (conn,) = doc.project.connections.values()
    assert doc.push(UpdateItem("connections", conn.id, text="change link", link_name=link_name))
    panel.refresh()
    return conn.id


def test_unknown_startup_blanks_only_the_transfers_and_the_button_shows_the_field(panel, qtbot):
    doc = panel.document
    inspector = PropertyInspector(doc)
    qtbot.addWidget(inspector)
    conn_id = relink(panel, NO_STARTUP)
    assert panel.result is not None                   # the kernel is still predicted
    assert "ms" in panel.result_labels["kernel_time"].text()
    assert panel.result_labels["total"].text().startswith("—")
    assert "startup" in panel.result_message.text() and "unknown" in panel.result_message.text()
    assert panel.prediction.fix_button.isVisibleTo(panel)
    panel.prediction.fix_button.click()
    assert doc.selected == ("connection", conn_id)
    assert inspector.target == ("connection", conn_id)
    field = inspector.tree.currentIndex()
    assert field.row() == inspector.row_of("startup_htod_s")
    # setting it in the inspector: the next missing value is offered, then all is back
    assert inspector.set_value("startup_htod_s", "5 µs")
    panel.refresh()
    assert panel.missing_link_value == (conn_id, "startup_dtoh_s", NO_STARTUP)
    assert inspector.set_value("startup_dtoh_s", "6 µs")
    panel.refresh()
    assert not panel.transfer_error and panel.result_labels["total"].text().startswith("<b>")


def test_generic_links_predict_with_a_visible_assumption(panel, qtbot):
    doc = panel.document
    conn_id = relink(panel, "PCIe 4.0 x16")
    assert panel.transfer_error == "" and panel.result.prediction.transfers
    inspector = PropertyInspector(doc)
    qtbot.addWidget(inspector)
    doc.select("connection", conn_id)
    row = inspector.row_of("startup_htod_s")
    assert inspector.model.item(row, 3).text().startswith("assumption")
    relink(panel, "NVLink 2.0 (one link)")
    assert panel.transfer_error == "" and panel.result.prediction.total_time_s > 0


@pytest.mark.parametrize("text", ["-1", "N/0", "1e30"])
def test_bad_transfer_sizes_are_refused(panel, text):
    doc = panel.document
    before = doc.project.launches[panel.launch_id].transfers
    size = panel.transfer_table.cellWidget(0, 1)
    size.setText(text)
    size.editingFinished.emit()
    assert doc.project.launches[panel.launch_id].transfers == before
    assert "transfer size" in panel.message.text()


@pytest.mark.parametrize("field,text,says", [
    ("size", "1e30", "grid limit"),
    ("occupancy_override", "65", "at most 64 warps"),
])
def test_out_of_range_launch_values_are_refused(panel, field, text, says):
    doc = panel.document
    if field == "occupancy_override":
        panel.form.widgets["occupancy_auto"].click()
    launch = doc.project.launches[panel.launch_id]
    depth = doc.undo_stack.count()
    edit(panel, field, text)
    assert doc.project.launches[panel.launch_id] == launch and doc.undo_stack.count() == depth
    assert says in panel.message.text()


@pytest.mark.parametrize("text", ["-1", "0"])
def test_a_loop_variable_must_count_iterations(panel, text):
    doc = panel.document
    a = panel._variable_fields["a"]
    a.setText(text)
    a.editingFinished.emit()
    assert "a" not in doc.project.launches[panel.launch_id].variables or \
        doc.project.launches[panel.launch_id].variables["a"] >= 1
    assert "counts loop iterations" in panel.message.text() and "empty" in panel.message.text()


def test_number_fields_take_what_the_cli_takes(panel):
    doc = panel.document
    edit(panel, "size", "16M")
    assert doc.project.launches[panel.launch_id].data_size == 16_000_000
    edit(panel, "size", "2^20")
    assert doc.project.launches[panel.launch_id].data_size == 2**20
    edit(panel, "size", "1,000,000")
    assert doc.project.launches[panel.launch_id].data_size == 1_000_000
    assert parse_number("16Mi") == 2**24
    with pytest.raises(QuantityError, match="comma"):
        parse_number("1,5")


def test_sweep_to_1e20_is_refused_at_the_field_without_a_raw_array(panel):
    sweep = panel.sweep
    sweep.set_variable("data_size")
    sweep.from_edit.setText("1")
    sweep.to_edit.setText("1e20")
    assert not sweep.run()
    text = sweep.message.text()
    assert "grid limit" in text and "[" not in text
    assert sweep.to_edit.property("error_message")


def test_a_broken_launch_clears_the_sweep_so_it_cannot_be_exported(panel, qtbot, tmp_path):
    sweep = panel.sweep
    sweep.set_variable("block_size")
    assert sweep.run()
    qtbot.waitUntil(lambda: sweep.result is not None, timeout=10000)
    assert not sweep.plot.is_empty()
    doc = panel.document
    lid = panel.launch_id
    (kid,) = doc.project.kernels
    assert doc.push(UpdateItem("launches", lid, text="no kernel", kernel=None))
    panel.refresh()
    qtbot.waitUntil(lambda: sweep.result is None and not sweep.is_busy(), timeout=10000)
    assert sweep.plot.is_empty() and "No sweep" in sweep.plot.message_text()
    assert not sweep.export(str(tmp_path / "stale.png"))
    assert not (tmp_path / "stale.png").exists()


def test_sm_override_of_1e30_is_refused():
    from gpumodeler.ui.device_fields import OverrideError, parse_override
    with pytest.raises(OverrideError, match="≤ 1024"):
        parse_override("gpu", "sms", "1e30")
    assert parse_override("gpu", "sms", "13") == 13


def test_loop_iterations_of_1_over_0_are_refused():
    from gpumodeler.ui.kernel_editor.properties import _expression
    from gpumodeler.ui.launch_panel.fields import FieldError
    for text in ("1/0", "-1", "a/0"):
        with pytest.raises(FieldError, match="iterations"):
            _expression(text)
    assert _expression("N/256") == "N/256"


def test_inspector_follows_a_swapped_link(panel, qtbot):
    doc = panel.document
    inspector = PropertyInspector(doc)
    qtbot.addWidget(inspector)
    conn_id = relink(panel, NO_STARTUP)
    doc.select("connection", conn_id)
    doc.undo_stack.undo()  # back to the measured testbed link
    row = inspector.row_of("startup_htod_s")
    assert inspector.model.item(row, 1).text() != "unknown"


def test_inspector_values_use_the_same_number_rules():
    from gpumodeler.ui.units import parse_quantity
    assert parse_quantity("2^10", "count") == 1024
    assert parse_quantity("1,253 MHz", "Hz") == 1.253e9
    with pytest.raises(QuantityError, match="comma"):
        parse_quantity("1,5 GHz", "Hz")  # a decimal comma is not read as 15 GHz
