"""Devices copied file to file in SQL (store.copy_devices): new devices of a merge and
exports. They must read back exactly as the one-by-one path writes them, and the fallback
for a database held in memory (an upgraded older file) must give the same result."""
import shutil
import sqlite3

import pytest

from device_fixtures import file_hash, write_database
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.digests import device_digest
from gpumodeler.db.errors import DatabaseFormatError
from gpumodeler.db.schema import attached_read_only, backing_file, create_database, \
    open_database
from gpumodeler.db.store import RawDevice, read_raw, read_sources

STAMP = "2024-01-01T00:00:00Z"


def _rec(value, unit, source=None, where=None, provenance="document", default=True,
         note=None, text=None):
    return (value, unit, source, where, provenance, note, default, text)


def _devices():
    """Three devices with several records per field, an unknown value, mixed value types
    and two sources, one of them cited by one device only."""
    return [
        RawDevice("gpu", "Alpha GPU", ("a1", "Ä-one"), "fam", "user", {
            "sms": [_rec(13, "count", "doc-a", "Table 1")],
            "sm_clock_hz": [_rec(1.25e9, "Hz", "doc-a", "Table 1", default=False),
                            _rec(1.3e9, "Hz", None, None, "measurement", text="bench")],
            "architecture": [_rec("Maxwell", "text", "doc-a", "Table 1")],
            "board_power_w": [_rec(None, "W", provenance=None)]}, STAMP, STAMP),
        RawDevice("gpu", "Beta GPU", (), None, "user", {
            "sms": [_rec(80, "count", "doc-b", "p. 2", note="SXM")]}, STAMP, STAMP),
        RawDevice("link", "Gamma link", ("g",), None, "user", {
            "bandwidth_bytes_per_s": [_rec(1.6e10, "B/s", "doc-a", "Table 2")]}, STAMP, STAMP),
    ]


@pytest.fixture
def theirs(tmp_path):
    path = tmp_path / "theirs.db"
    write_database(path, _devices(), {"doc-a": "Paper A", "doc-b": "Paper B", "doc-c": "Uncited"})
    return path


def _read(path):
    db = open_database(path)
    try:
        raw = read_raw(db)
        digests = dict(db.execute("SELECT name_lower, content_hash FROM devices"))
        return raw, digests, read_sources(db)
    finally:
        db.close()


def test_a_merge_copies_new_devices_as_they_are_with_their_digests(theirs, tmp_path):
    before = file_hash(theirs)
    with Catalog(user_db=tmp_path / "mine.db", use_shipped=False) as catalog:
        report = catalog.merge(theirs)
        assert sorted(d.name for d in report.new) == ["Alpha GPU", "Beta GPU", "Gamma link"]
        attached = [r[1] for r in catalog.user_db.execute("PRAGMA database_list")]
    assert "theirs" not in attached                   # detached again
    assert file_hash(theirs) == before                # their file is only read
    got, digests, sources = _read(tmp_path / "mine.db")
    expected = {d.name.casefold(): d for d in _devices()}
    assert set(got) == set(expected)
    for key, device in got.items():
        want = expected[key]
        assert (device.kind, device.name, device.aliases, device.family) == (
            want.kind, want.name, want.aliases, want.family)
        assert list(device.values.items()) == list(want.values.items())
        assert device.origin == "imported" and device.created == device.modified != STAMP
        assert digests[key] == device_digest(device.kind, device.family, device.aliases,
                                             device.values)
    assert sources == {"doc-a": "Paper A", "doc-b": "Paper B"}   # only the cited ones
    again = Catalog(user_db=tmp_path / "mine.db", use_shipped=False)
    assert [d.status for d in again.import_file(theirs).devices] == ["identical"] * 3
    again.close()


def test_copied_records_cite_renamed_sources_and_get_fresh_digests(theirs, tmp_path):
    write_database(tmp_path / "mine.db", [], {"doc-a": "Another paper A"})
    with Catalog(user_db=tmp_path / "mine.db", use_shipped=False) as catalog:
        report = catalog.merge(theirs)
    assert report.renamed_sources == {"doc-a": "doc-a~2"}
    got, digests, sources = _read(tmp_path / "mine.db")
    assert sources == {"doc-a": "Another paper A", "doc-a~2": "Paper A", "doc-b": "Paper B"}
    alpha = got["alpha gpu"]
    assert [r[2] for r in alpha.values["sm_clock_hz"]] == ["doc-a~2", None]
    for key, device in got.items():
        assert digests[key] == device_digest(device.kind, device.family, device.aliases,
                                             device.values)


def test_a_file_of_an_older_schema_merges_through_the_in_memory_copy(theirs, tmp_path):
    """open_database upgrades an older file in memory; its file cannot be attached (wrong
    schema), so new devices are read and written one by one, with the same result."""
    old = tmp_path / "old.db"
    shutil.copy(theirs, old)
    conn = sqlite3.connect(old)     # make it look like version 2: the meta says so
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm003_latency_table_kind'")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    conn.commit()
    conn.close()
    db = open_database(old)
    assert backing_file(db) is None
    db.close()
    with Catalog(user_db=tmp_path / "a.db", use_shipped=False) as catalog:
        catalog.merge(old)
    with Catalog(user_db=tmp_path / "b.db", use_shipped=False) as catalog:
        catalog.merge(theirs)
    got_old, digests_old, sources_old = _read(tmp_path / "a.db")
    got, digests, sources = _read(tmp_path / "b.db")
    strip = {k: (d.kind, d.name, d.aliases, d.family, d.origin, d.values)
             for k, d in got.items()}
    assert {k: (d.kind, d.name, d.aliases, d.family, d.origin, d.values)
            for k, d in got_old.items()} == strip
    assert digests_old == digests and sources_old == sources


def test_export_copies_from_both_layers_with_the_sources_each_cites(theirs, tmp_path,
                                                                     shipped_db):
    with Catalog(user_db=tmp_path / "mine.db", shipped_db=shipped_db) as catalog:
        catalog.merge(theirs)
        out = catalog.export(["alpha", "gtx 970", "Gamma link"], tmp_path / "out.db")
        expected = {"alpha gpu": catalog.raw_device("alpha gpu", "user"),
                    "gamma link": catalog.raw_device("gamma link", "user"),
                    "geforce gtx 970": catalog.raw_device("geforce gtx 970", "shipped")}
        shipped_sources = read_sources(catalog.shipped_db)
    got, digests, sources = _read(out)
    assert set(got) == set(expected)
    for key, device in got.items():
        assert device == expected[key]        # origin and timestamps kept
        assert digests[key] == device_digest(device.kind, device.family, device.aliases,
                                             device.values)
    cited_970 = {r[2] for rs in expected["geforce gtx 970"].values.values() for r in rs
                 if r[2]}
    assert sources == {"doc-a": "Paper A"} | {k: shipped_sources[k] for k in cited_970}


def test_export_from_a_user_database_held_in_memory(theirs, tmp_path):
    """A user file of an older schema is read through an upgraded copy in memory: the
    export then writes device by device, and gives the same file content."""
    old = tmp_path / "old.db"
    shutil.copy(theirs, old)
    conn = sqlite3.connect(old)
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm003_latency_table_kind'")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    conn.commit()
    conn.close()
    with Catalog(user_db=old, use_shipped=False) as catalog:
        assert backing_file(catalog.user_db) is None
        catalog.export(["alpha", "beta"], tmp_path / "from-memory.db")
    with Catalog(user_db=theirs, use_shipped=False) as catalog:
        catalog.export(["alpha", "beta"], tmp_path / "from-file.db")
    assert _read(tmp_path / "from-memory.db") == _read(tmp_path / "from-file.db")


def test_attaching_is_read_only(theirs, tmp_path):
    db = create_database(tmp_path / "x.db")
    before = file_hash(theirs)
    with attached_read_only(db, theirs, "other"):
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.execute("DELETE FROM other.devices")
    db.close()
    assert file_hash(theirs) == before


def test_damage_met_while_copying_is_a_format_error_and_writes_nothing(tmp_path,
                                                                       monkeypatch):
    """New devices' records are read only by the SQL copy: a damaged page there must end
    the merge as a format error naming their file, with nothing written."""
    from gpumodeler.db import schema
    monkeypatch.setattr(schema, "QUICK_CHECK_MAX_BYTES", 0)     # structural check only
    path = tmp_path / "theirs.db"
    many = [RawDevice("gpu", f"Card {i:04d}", (), None, "user", {
        f"f{k}": [_rec(float(i * k), "count", "doc-a", f"Table {k}")] for k in range(20)},
        STAMP, STAMP) for i in range(300)]
    write_database(path, many, {"doc-a": "Paper A"})
    conn = sqlite3.connect(path)
    try:
        leaves = [r[0] for r in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 'device_values' AND pagetype = 'leaf' "
            "ORDER BY pageno")]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find the records' pages")
    finally:
        conn.close()
    data = bytearray(path.read_bytes())
    middle = leaves[len(leaves) // 2]
    data[(middle - 1) * page_size:middle * page_size] = b"\xa5" * page_size
    path.write_bytes(bytes(data))
    user = tmp_path / "mine.db"
    write_database(user, [], {})
    before = file_hash(user)
    with Catalog(user_db=user, use_shipped=False) as catalog:
        # The import report reads every record (their values are checked before they may
        # enter the store): the damage is met there already.
        with pytest.raises(DatabaseFormatError, match="corrupted") as info:
            catalog.import_file(path)
        assert str(path) in str(info.value)
        # Without that check, the copy itself meets it.
        from gpumodeler.db import sharing
        monkeypatch.setattr(sharing, "refused_devices", lambda db, path: (set(), []))
        assert len(catalog.import_file(path).new) == 300        # compare reads no records
        with pytest.raises(DatabaseFormatError, match="corrupted") as info:
            catalog.merge(path)
        assert str(path) in str(info.value)
        assert "theirs" not in [r[1] for r in catalog.user_db.execute("PRAGMA database_list")]
    assert file_hash(user) == before


def test_paths_with_uri_characters(tmp_path):
    """Databases are opened and attached by URI: '#', '?', '%' and spaces stay file names."""
    folder = tmp_path / "odd #dir? 100% ünï"
    folder.mkdir()
    theirs = folder / "their #db?.db"
    write_database(theirs, _devices(), {"doc-a": "Paper A", "doc-b": "Paper B"})
    with Catalog(user_db=folder / "my%20db.db", use_shipped=False) as catalog:
        catalog.merge(theirs)
        catalog.export(["alpha", "beta"], folder / "ex port?.db")
    assert sorted(p.name for p in folder.iterdir()) == ["ex port?.db", "my%20db.db",
                                                        "their #db?.db"]
    assert set(_read(folder / "ex port?.db")[0]) == {"alpha gpu", "beta gpu"}


def _schema(path):
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
    finally:
        conn.close()


@pytest.mark.parametrize("mine_holds", [[], ["Delta GPU"]])
def test_a_bulk_copy_leaves_the_schema_and_foreign_keys_as_they_were(theirs, tmp_path,
                                                                      mine_holds):
    """Into a database without records the field index is dropped for the copy and built
    again, and foreign keys go unchecked during a merge that copies new devices and an
    export: afterwards the schema is a new database's, every record names a device, and
    the connection enforces foreign keys again."""
    create_database(tmp_path / "fresh.db").close()
    user = tmp_path / "mine.db"
    write_database(user, [RawDevice("gpu", name, (), None, "user", {
        "sms": [_rec(2, "count")]}, STAMP, STAMP) for name in mine_holds], {})
    with Catalog(user_db=user, use_shipped=False) as catalog:
        assert len(catalog.merge(theirs).new) == 3
        db = catalog.user_db
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            with db.atomic():
                db.execute("INSERT INTO device_values (device_id, field, value, unit, "
                           "is_default, row_order) VALUES (999, 'sms', 1, 'count', 1, 0)")
        catalog.export(["alpha", "beta", "gamma"], tmp_path / "out.db")
    for path in (user, tmp_path / "out.db"):
        assert _schema(path) == _schema(tmp_path / "fresh.db")
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.close()
    got = _read(user)[0]
    assert sorted(got) == sorted(["alpha gpu", "beta gpu", "gamma link",
                                  *(n.casefold() for n in mine_holds)])
    assert list(got["alpha gpu"].values.items()) == list(_devices()[0].values.items())


def test_foreign_keys_are_left_unchecked_only_around_a_transaction(tmp_path):
    """Unchecked for the block outside a transaction, enforced again after it (an error
    included); inside a caller's transaction nothing changes."""
    from gpumodeler.db.schema import foreign_keys_unchecked
    db = create_database(tmp_path / "x.db")
    with db.atomic(), foreign_keys_unchecked(db):     # inside a transaction: still checked
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            db.execute("INSERT INTO device_values (device_id, field, value, unit, "
                       "is_default, row_order) VALUES (999, 'sms', 1, 'count', 1, 0)")
    with pytest.raises(ZeroDivisionError):
        with foreign_keys_unchecked(db):
            assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 0
            1 / 0
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    db.close()
