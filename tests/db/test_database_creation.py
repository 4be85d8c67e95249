"""Creating device databases quickly without giving up durability where it matters, and
copying devices by SQL with their digests and cited sources (speed targets)."""
import os
import sqlite3

import pytest

from device_fixtures import write_database
from gpumodeler.db.digests import device_digest
from gpumodeler.db.schema import (SCHEMA_VERSION, attached_read_only, create_database,
                                  digest_triggers_suspended, new_database_replacing,
                                  open_database)
from gpumodeler.db.store import RawDevice, copy_devices, read_raw

STAMP = "2024-01-01T00:00:00Z"


def _default_synchronous(tmp_path) -> int:
    conn = sqlite3.connect(tmp_path / "plain.db")
    try:
        return conn.execute("PRAGMA synchronous").fetchone()[0]
    finally:
        conn.close()


def test_only_a_temporary_database_skips_waiting_for_the_disk(tmp_path):
    """A database made for the user syncs every transaction, as SQLite's default does;
    one made unsynced (the temporary file of an export) is whole and current all the
    same once closed."""
    db = create_database(tmp_path / "new.db")
    try:
        assert db.execute("PRAGMA synchronous").fetchone()[0] == _default_synchronous(tmp_path)
    finally:
        db.close()
    db = create_database(tmp_path / "temporary.db", durable=False)
    try:
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 0
    finally:
        db.close()
    for name in ("new.db", "temporary.db"):
        db = open_database(tmp_path / name, integrity="full")
        try:
            assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0] \
                == str(SCHEMA_VERSION)
        finally:
            db.close()


def test_a_replacing_database_is_complete_when_it_replaces_the_file(tmp_path):
    target = tmp_path / "out.db"
    target.write_bytes(b"old content")
    with new_database_replacing(target) as db:
        db.execute("INSERT INTO sources (key, citation) VALUES ('k', 'A paper')")
    assert sorted(os.listdir(tmp_path)) == ["out.db"]
    db = open_database(target, integrity="full")
    try:
        assert db.execute("SELECT citation FROM sources").fetchall() == [("A paper",)]
    finally:
        db.close()


def test_a_failed_replacing_database_leaves_the_file_alone(tmp_path):
    target = tmp_path / "out.db"
    target.write_bytes(b"old content")
    with pytest.raises(RuntimeError):
        with new_database_replacing(target):
            raise RuntimeError("interrupted")
    assert target.read_bytes() == b"old content"
    assert sorted(os.listdir(tmp_path)) == ["out.db"]


def _rec(value, source):
    return (value, "count", source, "Table 1", "document", None, True, None)


def _devices():
    return [RawDevice("gpu", f"Card {i}", (f"c{i}",), None, "user",
                      {"sms": [_rec(10 + i, f"doc-{i}")], "warp_size": [_rec(32, "doc-all")]},
                      STAMP, STAMP) for i in range(3)]


@pytest.mark.parametrize("triggers", ["suspended", "active"])
@pytest.mark.parametrize("keys, renamed, cited", [
    (["card 0", "card 1", "card 2"], {}, {"doc-0", "doc-1", "doc-2", "doc-all"}),
    (["card 1"], {}, {"doc-1", "doc-all"}),
    (["card 0", "card 1", "card 2"], {"doc-all": "doc-all~2"},
     {"doc-0", "doc-1", "doc-2", "doc-all~2"}),
    (["card 2"], {"doc-2": "doc-2~2"}, {"doc-2~2", "doc-all"}),
])
def test_copied_devices_keep_their_digests_and_report_the_keys_they_cite(
        tmp_path, triggers, keys, renamed, cited):
    """Every device of their file or some of them, with or without renamed source keys,
    with the digest triggers suspended (as merges and exports run it) or not."""
    theirs = tmp_path / "theirs.db"
    write_database(theirs, _devices(), {f"doc-{i}": f"Paper {i}" for i in range(3)}
                   | {"doc-all": "Everyone's paper", "doc-none": "Uncited"})
    db = create_database(tmp_path / "mine.db")
    try:
        with attached_read_only(db, theirs, "theirs"):
            with db.atomic():
                if triggers == "suspended":
                    with digest_triggers_suspended(db):
                        got = copy_devices(db, "theirs", keys, renamed=renamed)
                else:
                    got = copy_devices(db, "theirs", keys, renamed=renamed)
        assert got == cited
        devices = read_raw(db)
        assert sorted(devices) == sorted(keys)
        for key, device in devices.items():
            stored = db.execute("SELECT content_hash FROM devices WHERE name_lower = ?",
                                [key]).fetchone()[0]
            assert stored == device_digest(device.kind, device.family, device.aliases,
                                           device.values)
            assert {r[2] for rs in device.values.values() for r in rs} <= cited
    finally:
        db.close()
