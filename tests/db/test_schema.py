"""The device database schema: round trips, migrations, and files we must refuse untouched."""
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from device_fixtures import file_hash
from gpumodeler.db.catalog import Catalog, diff
from gpumodeler.db.errors import DatabaseFormatError
from gpumodeler.db.mapping import raw_from_record
from gpumodeler.db.records import ValueRecord
from gpumodeler.db.schema import (KNOWN_MIGRATIONS, SCHEMA_VERSION, create_database,
                                  memory_database, open_database)
from gpumodeler.db.store import (RawDevice, read_device, read_raw, read_sources,
                                 read_summaries, write_device, write_sources)


def _device(name="Test GPU", **values):
    raws = {f: [raw_from_record(r) for r in rs] for f, rs in values.items()}
    return RawDevice("gpu", name, ("tg",), "Testfam", "user", raws, "2024-01-02T03:04:05Z",
                     "2024-01-02T03:04:05Z")


def test_every_table_round_trips(tmp_path):
    path = tmp_path / "rt.db"
    db = create_database(path)
    device = _device(
        sms=[ValueRecord(13, "count", "src-a", "Table 1", "document", None, True)],
        sm_clock_hz=[ValueRecord(1.5e9, "Hz", None, None, "measurement", "under load", False,
                                 "deviceQuery"),
                     ValueRecord(1253000000, "Hz", "src-a", "p. 3", "document", None, True)],
        architecture=[ValueRecord("Maxwell", "text", "src-a", "Table 1", "document", None,
                                  True)],
        board_power_w=[ValueRecord(None, "W")])
    with db.atomic():
        write_sources(db, {"src-a": "A. Author, A paper, 2020"})
        write_device(db, device)
    db.close()
    db = open_database(path)
    assert read_sources(db) == {"src-a": "A. Author, A paper, 2020"}
    assert read_raw(db)["test gpu"] == device
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    assert meta["format"] == "gpumodeler-devices" and meta["version"] == str(SCHEMA_VERSION)
    assert "app_version" in meta
    record = read_device(db, "test gpu")
    assert record.values["sm_clock_hz"][0].source_text == "deviceQuery"
    assert record.value("sm_clock_hz") == 1253000000
    assert record.value("board_power_w") is None
    assert record.sources == {"src-a": "A. Author, A paper, 2020"}
    summary = read_summaries(db)["test gpu"]
    assert (summary.name, summary.aliases, summary.family, summary.architecture) == (
        "Test GPU", ("tg",), "Testfam", "Maxwell")
    types = dict(db.execute("SELECT field || row_order, typeof(value) FROM device_values"))
    db.close()
    assert set(types.values()) == {"integer", "real", "text", "null"}


_values = st.one_of(st.none(), st.integers(-2**62, 2**62), st.text(max_size=20),
                    st.floats(allow_nan=False, allow_infinity=False))
_opt_text = st.one_of(st.none(), st.text(min_size=1, max_size=10))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_values, _opt_text, _opt_text, _opt_text), min_size=1, max_size=5))
def test_any_value_records_round_trip(records):
    db = memory_database()
    recs = [ValueRecord(v, "count", None, where, "user", note, i == 0, text)
            for i, (v, where, note, text) in enumerate(records)]
    device = _device(sms=recs)
    with db.atomic():
        write_device(db, device)
    back = read_raw(db)["test gpu"].values["sms"]
    db.close()
    assert back == device.values["sms"]
    for a, b in zip(back, device.values["sms"]):
        assert type(a[0]) is type(b[0])


# The version-1 schema exactly as the first release created it (never edit): a database
# made with it must open with every later gpumodeler.
FIRST_SCHEMA = """
CREATE TABLE "_sqlite_migrations" ("id" INTEGER PRIMARY KEY, "migration_set" TEXT,
    "name" TEXT, "applied_at" TEXT);
CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"
    ON "_sqlite_migrations" ("migration_set", "name");
INSERT INTO _sqlite_migrations VALUES (1, 'gpumodeler-devices', 'm001_initial',
    '2024-01-01 00:00:00+00:00');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('format', 'gpumodeler-devices'), ('version', '1'),
    ('app_version', '0.1.0');
CREATE TABLE sources (key TEXT PRIMARY KEY, citation TEXT NOT NULL);
CREATE TABLE devices (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind = 'gpu' OR kind = 'link' OR kind = 'host'),
    name TEXT NOT NULL,
    name_lower TEXT NOT NULL UNIQUE,
    aliases TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(aliases)),
    family TEXT,
    origin TEXT NOT NULL
        CHECK (origin = 'shipped' OR origin = 'user' OR origin = 'imported'),
    created TEXT NOT NULL,
    modified TEXT NOT NULL);
CREATE TABLE device_values (
    id INTEGER PRIMARY KEY,
    device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    field TEXT NOT NULL,
    value CHECK (typeof(value) <> 'blob'),
    unit TEXT NOT NULL,
    source_key TEXT,
    source_text TEXT,
    source_where TEXT,
    provenance TEXT CHECK (provenance = 'document' OR provenance = 'vendor'
        OR provenance = 'measurement' OR provenance = 'calibration' OR provenance = 'user'),
    note TEXT,
    is_default INTEGER NOT NULL CHECK (is_default = 0 OR is_default = 1),
    row_order INTEGER NOT NULL,
    UNIQUE (device_id, row_order));
CREATE INDEX device_values_by_field ON device_values (device_id, field);
INSERT INTO sources VALUES ('gajger2017', 'T. Gajger, MSc thesis, 2017');
INSERT INTO devices VALUES (1, 'gpu', 'Old GPU', 'old gpu', '["og"]', 'Fermi', 'user',
    '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z');
INSERT INTO device_values VALUES
    (1, 1, 'sms', 14, 'count', 'gajger2017', NULL, 'Table 6.1', 'document', NULL, 1, 0),
    (2, 1, 'sm_clock_hz', 1.15e9, 'Hz', NULL, 'my bench', NULL, 'measurement', 'hot', 1, 1),
    (3, 1, 'architecture', 'Fermi', 'text', 'gajger2017', NULL, 'Table 6.1', 'document',
     NULL, 1, 2),
    (4, 1, 'board_power_w', NULL, 'W', NULL, NULL, NULL, NULL, NULL, 1, 3);
"""


def _first_schema_db(path):
    conn = sqlite3.connect(path)
    conn.executescript(FIRST_SCHEMA)
    conn.close()
    return path


def test_a_database_of_the_first_schema_opens_and_migrates(tmp_path):
    path = _first_schema_db(tmp_path / "v1.db")
    before = file_hash(path)
    db = open_database(path)  # read-only: migrates a copy in memory, if anything
    assert read_device(db, "old gpu").value("sm_clock_hz") == 1.15e9
    db.close()
    assert file_hash(path) == before
    with Catalog(user_db=path, use_shipped=False) as catalog:
        device = catalog.set_value("og", "sms", 15, provenance="calibration",
                                   source_text="fit")
        assert device.value("sms") == 15
        assert device.values["sms"][0].value == 14
        assert catalog.get("Old GPU").value("architecture") == "Fermi"
    db = open_database(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
    applied = [r[0] for r in db.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    digests = [r[0] for r in db.execute("SELECT content_hash FROM devices")]
    db.close()
    assert int(version) == SCHEMA_VERSION
    assert applied == list(KNOWN_MIGRATIONS)
    assert all(digests)  # m002 filled in the digests of existing devices


def test_an_edit_by_another_tool_clears_the_digest(tmp_path, shipped_db):
    """A merge skips devices with equal digests, so a hand edit must not keep a stale one."""
    with Catalog(user_db=tmp_path / "mine.db", shipped_db=shipped_db) as catalog:
        catalog.export(["gtx 970"], tmp_path / "theirs.db")
        conn = sqlite3.connect(tmp_path / "theirs.db")
        conn.execute("UPDATE device_values SET value = 14 WHERE field = 'sms'")
        conn.commit()
        assert conn.execute("SELECT content_hash FROM devices").fetchone()[0] is None
        conn.close()
        [change] = catalog.import_file(tmp_path / "theirs.db").devices
        assert change.status == "conflicting" and change.conflicts[0].field == "sms"


def _not_sqlite(path):
    path.write_text("name,sms\nGTX 970,13\n")


def _empty(path):
    path.write_bytes(b"")


def _truncated(path, good):
    path.write_bytes(good.read_bytes()[:1500])


def _corrupted(path, good):
    data = bytearray(good.read_bytes())
    for i in range(4096, min(len(data), 4096 * 3)):
        data[i] = 0xA5
    path.write_bytes(bytes(data))


def _foreign(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, title TEXT)")
    conn.commit()
    conn.close()


def _edited_copy(path, good, sql):
    """``good`` copied to ``path``, then changed by one SQL statement."""
    path.write_bytes(good.read_bytes())
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()


def _future_version(path, good):
    _edited_copy(path, good, "UPDATE meta SET value = '99' WHERE key = 'version'")


def _future_migration(path, good):
    _edited_copy(path, good, "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
                             "VALUES ('gpumodeler-devices', 'm002_from_the_future', 'x')")


def _other_format(path, good):
    _edited_copy(path, good, "UPDATE meta SET value = 'gpumodeler-project' WHERE key = 'format'")


BAD_FILES = {
    "not sqlite": (_not_sqlite, "not an SQLite database"),
    "empty": (_empty, "an empty file"),
    "truncated": (_truncated, "corrupted"),
    "corrupted": (_corrupted, "corrupted"),
    "foreign sqlite": (_foreign, "not a gpumodeler device database"),
    "future version": (_future_version, "newer gpumodeler"),
    "future migration": (_future_migration, "newer gpumodeler"),
    "other format": (_other_format, "not a gpumodeler device database"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_bad_files_are_refused_clearly_and_left_untouched(kind, tmp_path, shipped_db):
    make, message = BAD_FILES[kind]
    path = tmp_path / "bad.db"
    if make.__code__.co_argcount == 2:
        make(path, shipped_db)
    else:
        make(path)
    before = file_hash(path)
    attempts = [
        lambda: open_database(path),
        lambda: open_database(path, writable=True),
        lambda: Catalog(user_db=path, shipped_db=shipped_db),
        lambda: Catalog(user_db=tmp_path / "u.db", shipped_db=path),
        lambda: Catalog(user_db=tmp_path / "u.db", shipped_db=shipped_db).import_file(path),
        lambda: Catalog(user_db=tmp_path / "u.db", shipped_db=shipped_db).merge(
            path, policy="theirs"),
        lambda: diff(shipped_db, path),
    ]
    for attempt in attempts:
        with pytest.raises(DatabaseFormatError, match=message) as info:
            attempt()
        assert str(path) in str(info.value)
    assert file_hash(path) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("bad")) == ["bad.db"]


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(DatabaseFormatError, match="no such file"):
        open_database(tmp_path / "nope.db")
    with pytest.raises(DatabaseFormatError, match="directory"):
        open_database(tmp_path)
    assert not (tmp_path / "nope.db").exists()


def test_create_refuses_to_overwrite(tmp_path):
    path = tmp_path / "x.db"
    path.write_text("precious")
    with pytest.raises(DatabaseFormatError, match="already exists"):
        create_database(path)
    assert path.read_text() == "precious"


def test_shipped_database_is_opened_read_only(shipped_db):
    db = open_database(shipped_db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.execute("DELETE FROM devices")
    db.close()
