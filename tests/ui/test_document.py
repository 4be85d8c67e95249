"""The GUI document: pushes core commands through one QUndoStack."""
from gpumodeler.core.commands import AddItem, MoveDevices
from gpumodeler.core.project import PlacedDevice
from gpumodeler.ui.document import Document


def test_push_undo_redo_and_refusal(qtbot):
    doc = Document()
    events, refusals = [], []
    doc.changed.connect(lambda e, p: events.append(e))
    doc.refused.connect(lambda m, i: refusals.append(m))
    assert doc.push(AddItem("devices", PlacedDevice("g1", "gpu", "GeForce GTX 970")))
    assert not doc.push(AddItem("devices", PlacedDevice("g2", "gpu", "GeForce GTX 970", count=0)))
    assert "count" in refusals[0] and "g2" not in doc.project.devices
    for i in range(5):
        doc.push(MoveDevices({"g1": (i, i)}, merge_key=("drag", 1)))
    assert doc.undo_stack.count() == 2
    doc.undo_stack.undo()
    assert (doc.project.devices["g1"].x, doc.project.devices["g1"].y) == (0, 0)
    doc.undo_stack.undo()
    assert not doc.project.devices
    doc.undo_stack.redo()
    doc.undo_stack.redo()
    assert doc.project.devices["g1"].x == 4
    assert "devices_added" in events


def test_latency_tables_are_the_built_in_ones_then_the_databases(catalog):
    from gpumodeler.core.kernel.latency_tables import TABLES
    assert list(Document().latency_tables()) == list(TABLES)
    catalog.add_device("latency_table", "pascal-mine", values={"lat_fp32_mad": 7})
    doc = Document(catalog=catalog)
    tables = doc.latency_tables()
    assert list(tables)[:len(TABLES)] == list(TABLES) and "pascal-mine" in list(tables)[len(TABLES):]
    assert "volta-published" in list(tables)[len(TABLES):]    # the shipped published tables
    assert doc.table_for("pascal-mine").instruction("fp32_mad") == 7
    assert doc.table_for("maxwell-gajger") is TABLES["maxwell-gajger"]
    assert doc.table_for(None) is None and doc.table_for("volta-nobody") is None
    assert doc.tables_problem == ""
    catalog.add_device("latency_table", "turing-mine", values={"lat_fp32_mad": 4})
    assert "turing-mine" not in doc.latency_tables()          # read once ...
    doc.refresh_latency_tables()
    assert doc.latency_tables()["turing-mine"].instruction("fp32_mad") == 4   # ... until told
