"""“Keep mine” is remembered: a conflict the user declined is recorded (device, field, the
digest of the version of theirs declined) in the merge's own transaction, so importing the
same content again reports it as declined instead of asking; a new version of theirs is a
conflict again. The table comes with migration m006 (an older user database is upgraded)."""
import json
import sqlite3

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.errors import UnresolvedConflicts
from gpumodeler.db.merge import DECLINED

GPU = "GeForce GTX 970"


def _export(shipped_db, folder, name, sms, cc_note=None):
    path = folder / f"{name}.db"
    with Catalog(user_db=folder / f"{name}-user.db", shipped_db=shipped_db) as theirs:
        theirs.set_value(GPU, "sms", sms, source_text="their notes")
        if cc_note:
            theirs.set_value(GPU, "l2_bytes", 2 ** 21, source_text=cc_note)
        theirs.export([GPU], path)
    return path


@pytest.fixture
def mine(catalog):
    catalog.set_value(GPU, "sms", 12, source_text="my notes")
    return catalog


def _declined_rows(user_db):
    conn = sqlite3.connect(user_db)
    try:
        return conn.execute("SELECT device, field FROM declined_conflicts").fetchall()
    finally:
        conn.close()


def test_keep_mine_is_not_asked_again_for_the_same_content(mine, shipped_db, tmp_path,
                                                           ):
    theirs = _export(shipped_db, tmp_path, "theirs", 14)
    assert [c.field for c in mine.import_file(theirs).conflicts] == ["sms"]
    mine.merge(theirs, policy="mine")
    assert _declined_rows(mine.user_path) == [("geforce gtx 970", "sms")]
    report = mine.import_file(theirs)
    assert report.conflicts == []
    (device,) = [d for d in report.devices if d.name == GPU]
    assert device.status == DECLINED and [f.status for f in device.fields] == [DECLINED]
    assert report.counts()[DECLINED] == 1
    before = mine.get(GPU)
    mine.merge(theirs)                       # no policy needed: nothing open
    assert mine.get(GPU) == before and before.value("sms") == 12


def test_a_new_version_of_theirs_is_a_conflict_again(mine, shipped_db, tmp_path):
    mine.merge(_export(shipped_db, tmp_path, "first", 14), policy="mine")
    again = mine.import_file(_export(shipped_db, tmp_path, "second", 15))
    assert [c.field for c in again.conflicts] == ["sms"]


@pytest.mark.parametrize("policy", ["theirs", "both"])
def test_only_keep_mine_is_recorded(mine, shipped_db, tmp_path, policy):
    mine.merge(_export(shipped_db, tmp_path, "theirs", 14), policy=policy)
    assert _declined_rows(mine.user_path) == []


def test_a_merge_refused_records_nothing(mine, shipped_db, tmp_path, ):
    """Declining is written in the merge's transaction: a merge that writes nothing (a
    conflict left open) records no answer either."""
    theirs = _export(shipped_db, tmp_path, "theirs", 14, cc_note="their bench")
    mine.set_value(GPU, "l2_bytes", 2 ** 20, source_text="my bench")
    with pytest.raises(UnresolvedConflicts):
        mine.merge(theirs, resolutions={GPU: {"sms": "mine"}})
    assert _declined_rows(mine.user_path) == []


def test_the_cli_reports_declined_conflicts(mine, shipped_db, tmp_path, capsys, monkeypatch):
    theirs = str(_export(shipped_db, tmp_path, "theirs", 14))
    mine.close()
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(shipped_db))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(mine.user_path))
    assert main(["devices", "merge", theirs, "--keep-mine"]) == 0
    capsys.readouterr()
    assert main(["devices", "import", theirs]) == 0
    out = capsys.readouterr().out
    assert "1 declined" in out and "keep mine (declined before)" in out
    assert "CONFLICT" not in out and "conflict(s): merge with" not in out
    assert main(["devices", "import", theirs, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["declined"] == 1 and report["counts"]["conflicting"] == 0
    assert main(["devices", "merge", theirs]) == 0       # nothing left to choose


def test_a_user_database_older_than_the_table_is_upgraded(shipped_db, tmp_path):
    from gpumodeler.db.schema import migrations
    user = tmp_path / "old-user.db"
    import sqlite_utils
    db = sqlite_utils.Database(user)
    migrations.apply(db, stop_before="m006_declined_conflicts")
    db.execute("UPDATE meta SET value = '5' WHERE key = 'version'")
    db.conn.commit()
    db.close()
    theirs = _export(shipped_db, tmp_path, "theirs", 14)
    with Catalog(user_db=user, shipped_db=shipped_db) as cat:
        cat.set_value(GPU, "sms", 12, source_text="my notes")
        cat.merge(theirs, policy="mine")
        assert cat.import_file(theirs).conflicts == []
