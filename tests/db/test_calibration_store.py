"""The calibration store: fitted link models and kernel λ kept with their provenance in the
user device database, travelling with their device through export and merge."""
import hashlib
import sqlite3

import pytest
import sqlite_utils

from device_fixtures import file_hash
from gpumodeler.db.calibrations import (Calibration, current_calibration, list_calibrations,
                                        save_calibration)
from gpumodeler.db.catalog import Catalog, diff
from gpumodeler.db.errors import DeviceEditError, UnresolvedConflicts
from gpumodeler.db.schema import KNOWN_MIGRATIONS, migrations, open_database

SHA = hashlib.sha256(b"copies").hexdigest()
MODEL = {"model": "regimes", "startup_s": 4e-6,
         "regimes": [{"first_size_bytes": 4.0, "last_size_bytes": 1048576.0,
                      "bandwidth_bytes_per_s": 1.03e10}]}


def link_cal(device="PCIe 3.0 x16", label="pageable", bw=1.03e10, created="2026-11-23T10:00:00Z",
             sha=SHA, subject="htod"):
    params = {**MODEL, "regimes": [{**MODEL["regimes"][0], "bandwidth_bytes_per_s": bw}]}
    return Calibration(device, "link", subject, label, params,
                       ({"size_bytes": 1048576.0, "measured_s": 1e-4, "predicted_s": 1.01e-4,
                         "relative_residual": 0.01},), 1.0, 1.8, 1.2, "copies.json", sha, created)


def kernel_cal(device="GTX 970", lam=0.7, label="default"):
    return Calibration(device, "kernel", "saxpy2", label, {"lambda": lam}, (), 2.0, 3.0, 2.5,
                       "runs.json", SHA, "2026-11-23T11:00:00Z")


def test_save_list_and_history(catalog):
    saved = save_calibration(catalog, link_cal("pcie3"))
    assert saved.device == "PCIe 3.0 x16" and saved.is_current
    # a shipped device is copied to the user database, like any edit
    assert catalog.get("PCIe 3.0 x16").origin == "user"
    save_calibration(catalog, link_cal(bw=9.9e9, created="2026-11-24T10:00:00Z"))
    save_calibration(catalog, link_cal(bw=9.9e9, created="2026-11-24T10:00:00Z"))  # same again
    save_calibration(catalog, link_cal(label="pinned", bw=1.2e10))
    cals = list_calibrations(catalog, "pcie3", "link")
    assert len(cals) == 3                                  # the repeat was not duplicated
    pageable = [c for c in cals if c.label == "pageable"]
    assert [c.is_current for c in pageable] == [False, True]   # the old fit stays, not current
    cur = current_calibration(catalog, "pcie3", "link", "htod", "pageable")
    assert cur.parameters["regimes"][0]["bandwidth_bytes_per_s"] == 9.9e9
    assert cur.measurements_sha256 == SHA and cur.residuals[0]["relative_residual"] == 0.01
    assert current_calibration(catalog, "pcie3", "link", "dtoh", "pageable") is None


@pytest.mark.parametrize("cal, message", [
    (kernel_cal(device="PCIe 3.0 x16"), "belongs to a gpu"),
    (link_cal(device="GTX 970"), "belongs to a link"),
    (link_cal(sha="abc"), "sha256"),
    (link_cal(label=" "), "label"),
    (link_cal(subject="sideways"), "htod or dtoh"),
])
def test_bad_calibrations_are_refused_and_nothing_is_written(catalog, tmp_path, cal, message):
    save_calibration(catalog, kernel_cal())
    before = file_hash(tmp_path / "user.db")
    with pytest.raises(DeviceEditError, match=message):
        save_calibration(catalog, cal)
    assert file_hash(tmp_path / "user.db") == before


def test_deleting_a_device_deletes_its_calibrations(catalog, tmp_path):
    catalog.add_device("link", "My Link", values={"lanes": 16})
    save_calibration(catalog, link_cal("my link"))
    catalog.delete_device("My Link")
    db = open_database(tmp_path / "user.db")
    assert db.execute("SELECT count(*) FROM calibrations").fetchone()[0] == 0
    db.close()


def test_export_carries_calibrations_and_a_merge_brings_them(catalog, shipped_db, tmp_path):
    save_calibration(catalog, link_cal())
    save_calibration(catalog, kernel_cal())
    out = catalog.export(["pcie3", "GTX 970"], tmp_path / "shared.db")
    with Catalog(user_db=tmp_path / "other.db", shipped_db=shipped_db) as other:
        report = other.import_file(out)
        # shipped on their side too: only the calibrations differ, reported like fields
        fields = {f.field: f.status for d in report.devices for f in d.fields}
        assert fields["calibration link htod [pageable]"] == "theirs"
        assert fields["calibration kernel saxpy2 [default]"] == "theirs"
        other.merge(out)
        assert current_calibration(other, "pcie3", "link", "htod", "pageable") == \
            current_calibration(catalog, "pcie3", "link", "htod", "pageable")
        assert list_calibrations(other, "GTX 970")[0].parameters == {"lambda": 0.7}
        assert other.import_file(out).conflicts == []     # merging again changes nothing


def test_a_new_device_brings_its_calibrations(catalog, shipped_db, tmp_path):
    catalog.add_device("link", "Lab Link", values={"lanes": 8})
    save_calibration(catalog, link_cal("lab link"))
    out = catalog.export(["lab link"], tmp_path / "lab.db")
    with Catalog(user_db=tmp_path / "other.db", shipped_db=shipped_db) as other:
        assert [d.status for d in other.import_file(out).devices] == ["new"]
        other.merge(out)
        [cal] = list_calibrations(other, "lab link")
        assert cal.measurements_name == "copies.json" and cal.loo_mape == 1.8


def test_conflicting_calibrations_need_a_choice_and_nothing_is_overwritten(catalog, shipped_db,
                                                                            tmp_path):
    save_calibration(catalog, link_cal(bw=1.0e10))
    mine_path = tmp_path / "user.db"
    with Catalog(user_db=tmp_path / "b.db", shipped_db=shipped_db) as b:
        save_calibration(b, link_cal(bw=6.0e9, created="2026-11-25T00:00:00Z"))
        theirs = b.export(["pcie3"], tmp_path / "b-export.db")
    report = catalog.import_file(theirs)
    [conflict] = report.conflicts
    assert conflict.field == "calibration link htod [pageable]"
    assert "regime" in conflict.mine[0] and "copies.json" in conflict.theirs[0]
    before = file_hash(mine_path)
    before_bytes = mine_path.read_bytes()
    with pytest.raises(UnresolvedConflicts, match=r"PCIe 3.0 x16.calibration link htod"):
        catalog.merge(theirs)
    assert file_hash(mine_path) == before
    catalog.merge(theirs, {"PCIe 3.0 x16": {"calibration link htod [pageable]": "both"}})
    cals = list_calibrations(catalog, "pcie3")
    assert len(cals) == 2
    [cur] = [c for c in cals if c.is_current]
    assert cur.parameters["regimes"][0]["bandwidth_bytes_per_s"] == 1.0e10   # mine stays current
    assert catalog.import_file(theirs).conflicts == []   # theirs is now part of mine
    assert diff(mine_path, theirs).conflicts == []
    copy = tmp_path / "copy.db"
    copy.write_bytes(before_bytes)
    with Catalog(user_db=copy, shipped_db=shipped_db) as c:
        c.merge(theirs, policy="theirs")
        [cal] = list_calibrations(c, "pcie3")
        assert cal.is_current and cal.parameters["regimes"][0]["bandwidth_bytes_per_s"] == 6.0e9


def test_a_version_4_database_gains_the_calibrations_table(tmp_path):
    path = tmp_path / "v4.db"
    conn = sqlite3.connect(path)
    db = sqlite_utils.Database(conn)
    migrations.apply(db, stop_before="m005_calibrations")
    db.execute("UPDATE meta SET value = '4' WHERE key = 'version'")
    conn.commit()
    conn.close()
    with Catalog(user_db=path, use_shipped=False) as cat:
        assert list_calibrations(cat) == []        # read-only: migrated in memory
        cat.add_device("gpu", "Card", values={"sms": 2})
        save_calibration(cat, kernel_cal("card"))
        assert list_calibrations(cat)[0].parameters == {"lambda": 0.7}
    db = open_database(path)
    applied = [r[0] for r in db.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    db.close()
    assert applied == list(KNOWN_MIGRATIONS)


def test_a_calibrated_link_spec_times_transfers_with_the_stored_model(catalog):
    from gpumodeler.core.transfers.link import link_transfer_time_s
    from gpumodeler.core.transfers.models import TransferModel
    from gpumodeler.db.calibrations import calibrated_link_spec
    save_calibration(catalog, link_cal())
    spec = calibrated_link_spec(catalog, "pcie3", "pageable")
    model = TransferModel.from_dict(MODEL)
    assert link_transfer_time_s(spec, "htod", 2**20) == model.time_s(2**20)
    # the other direction keeps eq. 5.5 (and its missing startup is still an error)
    assert spec.transfer_model("dtoh") is None
    with pytest.raises(DeviceEditError, match="stored: pageable"):
        calibrated_link_spec(catalog, "pcie3", "pinned")


def test_a_calibration_with_nan_residuals_leaves_a_shipped_device_alone(catalog, tmp_path):
    bad = Calibration("pcie3", "link", "htod", "pageable", MODEL,
                      ({"relative_residual": float("nan")},), 1.0, 1.0, 1.0, "c.json", SHA,
                      "2026-11-23T10:00:00Z")
    with pytest.raises(DeviceEditError, match="finite"):
        save_calibration(catalog, bad)
    assert catalog.get("pcie3").origin == "shipped"       # not copied to the user database
    assert not (tmp_path / "user.db").exists()
