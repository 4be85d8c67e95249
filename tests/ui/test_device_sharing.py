"""Devices › Import…: a colleague's file with conflicts, a choice per field, then the merge;
nothing changes without a choice. Devices › Export… writes the chosen devices."""
import pytest

from gpumodeler.db.catalog import Catalog
from gpumodeler.ui.devices.sharing import ExportDevicesDialog, ImportDevicesDialog


@pytest.fixture
def colleague_file(catalog, devices_db, tmp_path):
    """Mine and theirs both edited the GTX 970's L2 and SMs; theirs adds a card."""
    catalog.set_value("gtx 970", "l2_bytes", 3 * 2 ** 20, source_text="my bench")
    catalog.set_value("gtx 970", "sms", 12, source_text="my notes")
    with Catalog(user_db=tmp_path / "theirs-user.db", shipped_db=devices_db) as theirs:
        theirs.set_value("gtx 970", "l2_bytes", 4 * 2 ** 20, provenance="calibration", source_text="their fit")
        theirs.set_value("gtx 970", "sms", 14, source_text="their notes")
        theirs.add_device("gpu", "Colleague Card", values={"sms": 7})
        theirs.export(["gtx 970", "Colleague Card"], tmp_path / "theirs.db")
    return tmp_path / "theirs.db"


def test_import_chooses_per_field_and_merges(qtbot, catalog, colleague_file):
    before = catalog.get("gtx 970")
    dialog = ImportDevicesDialog(catalog, str(colleague_file))
    qtbot.addWidget(dialog)
    assert set(dialog.choices) == {("GeForce GTX 970", "l2_bytes"), ("GeForce GTX 970", "sms")}
    # both sides are shown with their provenance and source
    tops = [dialog.tree.topLevelItem(i) for i in range(dialog.tree.topLevelItemCount())]
    assert sorted(t.text(0) for t in tops) == ["Colleague Card (new)", "GeForce GTX 970 (conflicting)"]
    card = next(t for t in tops if t.text(0).startswith("GeForce"))
    from PySide6.QtCore import Qt
    rows = {card.child(i).data(0, Qt.ItemDataRole.UserRole): card.child(i) for i in range(card.childCount())}
    assert "my bench" in rows["l2_bytes"].text(1) and "their fit" in rows["l2_bytes"].text(2)
    assert "calibration" in rows["l2_bytes"].text(2)
    # nothing merges without a choice for every conflict
    assert not dialog.merge_button.isEnabled() and not dialog.merge()
    assert catalog.get("gtx 970") == before
    dialog.choose("GeForce GTX 970", "l2_bytes", "theirs")
    assert not dialog.merge_button.isEnabled() and "1 conflict" in dialog.message.text()
    dialog.choose("GeForce GTX 970", "sms", "both")
    assert dialog.merge_button.isEnabled()
    assert dialog.merge()
    after = catalog.get("gtx 970")
    assert after.value("l2_bytes") == 4 * 2 ** 20  # theirs
    assert after.value("sms") == 12  # mine stays the default, theirs kept beside it
    assert {r.value for r in after.values["sms"]} >= {12, 14}
    assert catalog.get("Colleague Card").value("sms") == 7


def test_cancel_changes_nothing(qtbot, catalog, colleague_file):
    before = catalog.get("gtx 970")
    dialog = ImportDevicesDialog(catalog, str(colleague_file))
    qtbot.addWidget(dialog)
    dialog.choose_all("theirs")
    dialog.reject()
    assert catalog.get("gtx 970") == before
    with pytest.raises(Exception):
        catalog.get("Colleague Card")


def test_a_bad_file_is_refused_clearly(qtbot, catalog, tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 10)
    with pytest.raises(Exception, match="not|database"):
        ImportDevicesDialog(catalog, str(bad))


def test_export_dialog_writes_the_chosen_devices(qtbot, catalog, tmp_path):
    dialog = ExportDevicesDialog(catalog, preselect=["GeForce GTX 970"])
    qtbot.addWidget(dialog)
    assert dialog.chosen() == ["GeForce GTX 970"]
    assert not dialog.export() and "give the file" in dialog.message.text()
    dialog.path.setText(str(tmp_path / "out.db"))
    assert dialog.export()
    with Catalog(user_db=tmp_path / "out.db", use_shipped=False) as out:
        assert [d.name for d in out.list()] == ["GeForce GTX 970"]


def test_refused_rows_of_the_file_are_shown(qtbot, catalog, devices_db, tmp_path):
    import sqlite3

    from gpumodeler.db.calibrations import Calibration, list_calibrations, save_calibration
    with Catalog(user_db=tmp_path / "theirs-user.db", shipped_db=devices_db) as theirs:
        save_calibration(theirs, Calibration("GTX 970", "kernel", "saxpy2", "default",
                                             {"lambda": 0.7}, (), 2.0, 3.0, 2.5, "runs.json",
                                             "ab" * 32, "2026-11-23T11:00:00Z"))
        theirs.add_device("gpu", "Colleague Card", values={"sms": 7})
        theirs.export(["gtx 970", "Colleague Card"], tmp_path / "theirs.db")
    conn = sqlite3.connect(tmp_path / "theirs.db")
    with conn:
        conn.execute("UPDATE calibrations SET loo_mape = -3")
    conn.close()
    dialog = ImportDevicesDialog(catalog, str(tmp_path / "theirs.db"))
    qtbot.addWidget(dialog)
    assert not dialog.refused.isHidden()
    assert "1 row(s)" in dialog.refused.text() and "loo_mape" in dialog.refused.text()
    assert dialog.merge()
    assert catalog.get("Colleague Card").value("sms") == 7
    assert list_calibrations(catalog, "gtx 970") == []       # the refused row stayed out


def test_import_names_fields_and_units_in_words(qtbot, catalog, colleague_file):
    from PySide6.QtCore import Qt
    dialog = ImportDevicesDialog(catalog, str(colleague_file))
    qtbot.addWidget(dialog)
    card = next(dialog.tree.topLevelItem(i) for i in range(dialog.tree.topLevelItemCount())
                if dialog.tree.topLevelItem(i).text(0).startswith("GeForce"))
    rows = {card.child(i).data(0, Qt.ItemDataRole.UserRole): card.child(i) for i in range(card.childCount())}
    assert rows["l2_bytes"].text(0) == "L2 cache" and rows["sms"].text(0) == "SMs"
    assert "3 MiB" in rows["l2_bytes"].text(1) and "4 MiB" in rows["l2_bytes"].text(2)
    assert "l2_bytes" not in rows["l2_bytes"].text(0) and "3145728" not in rows["l2_bytes"].text(1)
    header = dialog.tree.headerItem()
    assert header.text(3) == "Your choice for this field"
    combo = dialog.choices[("GeForce GTX 970", "sms")]
    assert "this field" in combo.itemText(0) and "this field only" in combo.toolTip()


def test_apply_to_all_says_so_and_sets_every_choice(qtbot, catalog, colleague_file):
    from gpumodeler.db.merge import MINE, THEIRS
    dialog = ImportDevicesDialog(catalog, str(colleague_file))
    qtbot.addWidget(dialog)
    assert "all 2 conflicts" in dialog.all_label.text()
    assert all("for all" in b.text() for b in dialog.all_buttons.values())
    dialog.all_buttons[THEIRS].click()
    assert {c.currentData() for c in dialog.choices.values()} == {THEIRS}
    assert dialog.merge_button.isEnabled()
    # one field changed afterwards keeps its own choice
    dialog.choose("GeForce GTX 970", "sms", MINE)
    assert dialog.resolutions() == {"GeForce GTX 970": {"l2_bytes": THEIRS, "sms": MINE}}


def test_export_browse_chooses_the_file(qtbot, catalog, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog
    dialog = ExportDevicesDialog(catalog, preselect=["GeForce GTX 970"])
    qtbot.addWidget(dialog)
    assert dialog.browse_button.text() == "Browse…"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(tmp_path / "for-alice"), "")))
    dialog.browse_button.click()
    assert dialog.path.text() == str(tmp_path / "for-alice.db")
    assert dialog.export()
    assert (tmp_path / "for-alice.db").exists()
    # cancelled: the path typed stays
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    assert dialog.browse() == "" and dialog.path.text() == str(tmp_path / "for-alice.db")
    assert "(GPU)" in dialog.list.item(0).text() or "(link)" in dialog.list.item(0).text()
