"""Devices › Import… of the same export twice: what the first import settled is not asked
again. After “take theirs” or “keep both”, the second import has nothing to import and
says so without opening the conflict dialog; the database is left as the first merge made
it."""
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from gpumodeler.db.catalog import Catalog
from gpumodeler.ui.devices.sharing import ImportDevicesDialog, import_devices, to_import

GPU = "GeForce GTX 970"


@pytest.fixture
def window(example_window):
    return example_window


@pytest.fixture
def export(catalog, devices_db, tmp_path):
    """My GTX 970 has 12 SMs; their export says 14 (a conflict) and adds an L2 size."""
    catalog.set_value(GPU, "sms", 12, source_text="my notes")
    with Catalog(user_db=tmp_path / "theirs-user.db", shipped_db=devices_db) as theirs:
        theirs.set_value(GPU, "sms", 14, source_text="their notes")
        theirs.set_value(GPU, "l2_bytes", 3 * 2 ** 20, source_text="their bench")
        theirs.export([GPU], tmp_path / "theirs.db")
    return tmp_path / "theirs.db"


def _import(window, path, choice: str, opened: list) -> bool:
    """Devices › Import… of ``path``, answering every conflict with ``choice``."""
    def answer():
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, ImportDevicesDialog):
            opened.append(sorted(dialog.choices))
            dialog.choose_all(choice)
            assert dialog.merge()
    QTimer.singleShot(0, answer)
    return import_devices(window, str(path))


@pytest.mark.parametrize("choice, sms", [("theirs", 14), ("both", 12)])
def test_the_second_import_of_an_answered_export_asks_nothing(window, catalog, export, choice,
                                                              sms):
    opened: list = []
    assert _import(window, export, choice, opened)
    assert opened == [[(GPU, "sms")]]
    after_first = catalog.get(GPU)
    assert after_first.value("sms") == sms and after_first.value("l2_bytes") == 3 * 2 ** 20
    assert not _import(window, export, choice, opened)
    assert len(opened) == 1                                  # no dialog the second time
    assert window.told and "Nothing to import" in window.told[-1]
    assert catalog.get(GPU) == after_first
    assert to_import(catalog.import_file(export)) == []


def test_an_export_with_something_new_is_still_offered(window, catalog, export):
    report = catalog.import_file(export)
    assert [d.name for d in to_import(report)] == [GPU]
    opened: list = []
    assert _import(window, export, "both", opened) and len(opened) == 1


def test_a_conflict_answered_keep_mine_is_not_asked_again(window, catalog, export):
    """“Keep mine” is remembered with the version of theirs it declined: the same export
    again opens no dialog and says the difference stays as mine."""
    opened: list = []
    assert _import(window, export, "mine", opened)
    assert opened == [[(GPU, "sms")]]
    after_first = catalog.get(GPU)
    assert after_first.value("sms") == 12 and after_first.value("l2_bytes") == 3 * 2 ** 20
    assert not _import(window, export, "mine", opened)
    assert len(opened) == 1                                  # no dialog the second time
    assert "declined before" in window.told[-1]
    assert catalog.get(GPU) == after_first
    report = catalog.import_file(export)
    assert report.conflicts == [] and to_import(report) == []


def test_a_declined_field_shows_as_kept_beside_something_new(window, catalog, export,
                                                            devices_db, tmp_path):
    """A later export with the declined version and a new field: the dialog asks about
    nothing, shows the declined field as kept, and the merge takes the new field."""
    assert _import(window, export, "mine", [])
    with Catalog(user_db=tmp_path / "later-user.db", shipped_db=devices_db) as theirs:
        theirs.set_value(GPU, "sms", 14, source_text="their notes")
        theirs.set_value(GPU, "l2_bytes", 3 * 2 ** 20, source_text="their bench")
        theirs.set_value(GPU, "board_power_w", 150, source_text="their meter")
        theirs.export([GPU], tmp_path / "later.db")
    dialog = ImportDevicesDialog(catalog, str(tmp_path / "later.db"), window)
    assert dialog.choices == {}
    rows = {dialog.tree.topLevelItem(0).child(i).data(0, Qt.ItemDataRole.UserRole): dialog.tree.topLevelItem(0).child(i)
            for i in range(dialog.tree.topLevelItem(0).childCount())}
    assert "declined before" in rows["sms"].text(3)
    assert dialog.merge()
    assert catalog.get(GPU).value("sms") == 12
