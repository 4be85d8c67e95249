"""The device database schema and its numbered migrations (schema.py opens files safely).

Schema changes are appended as new migrations (``m00N_...``); an applied migration is never
edited, because user databases out in the world already ran it. ``meta.version`` is the
number of the last migration, so a file from a newer gpumodeler is recognised (and refused,
untouched) even by tools that do not know sqlite-utils' migration table.

Tables (version 1)
- ``meta(key, value)``: format = "gpumodeler-devices", version, app_version.
- ``sources(key, citation)``: the documents a value can cite.
- ``devices(id, kind, name, name_lower, aliases, family, origin, created, modified)``:
  ``name_lower`` is the case-folded, whitespace-collapsed name (unique); ``aliases`` is a
  JSON list; ``origin`` is shipped, user or imported.
- ``device_values(id, device_id, field, value, unit, source_key, source_text,
  source_where, provenance, note, is_default, row_order)``: ``value`` has no declared type
  so numbers stay INTEGER/REAL and text stays TEXT; NULL is unknown.

Version 2 adds ``devices.content_hash``, a digest of the device's kind, family, aliases and
value records (NULL = not known; triggers clear it on any change made by any tool). Its
text lists a digest per field (digests.py), so comparisons read only the fields that differ.

Version 3 lets ``devices.kind`` be ``latency_table`` too (a per-architecture latency table
whose values are in cycles), rebuilding the devices table to change its CHECK.

Version 4 widens the ``device_values.provenance`` CHECK to the grades of published latency
figures (``published-measurement``, ``simulator-calibration``, ``secondary``,
``unattributed``; fields.SOURCE_PROVENANCES), rebuilding device_values the same way.
Version 5 adds ``calibrations``: fitted link models and kernel λ, each belonging to a device
(``device_id``, deleted with it) with its provenance; see calibrations.py.
Version 6 adds ``declined_conflicts(device, field, theirs_digest, declined)``: the conflicts
the user answered "keep mine", by device (``name_lower``), field and the digest of the
version of theirs declined (merge.declined_digest), written in the merge's transaction, so
an import of the same content again reports them as already declined instead of asking.
Version 7 adds ``learned_models``: learned predictors (core/learn) by name, the model file's
JSON as data with its SHA-256, the training data (GPUs, kernels, rows, digest), the
measurement files it was fitted on (names and SHA-256) and its origin; see learned_models.py.
"""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import TYPE_CHECKING

from gpumodeler import __version__

from .fields import FORMAT
from .sqlite_read import MigrationSet

if TYPE_CHECKING:
    import sqlite_utils

MIGRATION_SET = "gpumodeler-devices"
MIGRATIONS_TABLE = MigrationSet.migrations_table

migrations = MigrationSet(MIGRATION_SET)

# CHECKs use OR chains, not IN (...): SQLite rebuilds an IN list for every inserted row,
# which tripled the cost of writing 300 000 value records.
_V1 = [
    """CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE sources (
        key TEXT PRIMARY KEY,
        citation TEXT NOT NULL
    )""",
    """CREATE TABLE devices (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind = 'gpu' OR kind = 'link' OR kind = 'host'),
        name TEXT NOT NULL,
        name_lower TEXT NOT NULL UNIQUE,
        aliases TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(aliases)),
        family TEXT,
        origin TEXT NOT NULL
            CHECK (origin = 'shipped' OR origin = 'user' OR origin = 'imported'),
        created TEXT NOT NULL,
        modified TEXT NOT NULL
    )""",
    """CREATE TABLE device_values (
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
        UNIQUE (device_id, row_order)
    )""",
    # UNIQUE (device_id, row_order) already indexes a device's rows; this one finds a field.
    "CREATE INDEX device_values_by_field ON device_values (device_id, field)",
]


@migrations(name="m001_initial")
def m001_initial(db: sqlite_utils.Database) -> None:
    for statement in _V1:
        db.execute(statement)
    db.execute("INSERT INTO meta (key, value) VALUES ('format', ?), ('version', '1'), "
               "('app_version', ?)", [FORMAT, __version__])


_HASHED = "(SELECT content_hash FROM devices WHERE id = {}) IS NOT NULL"
_V2_TRIGGERS = [
    # Any change to a device's values or identity, by gpumodeler or any other tool, clears
    # its digest; gpumodeler sets it again after writing (store.write_device). The WHEN
    # clauses keep bulk writes cheap: only the first row of a device pays for the UPDATE.
    f"""CREATE TRIGGER device_values_insert_clears_hash AFTER INSERT ON device_values
       WHEN {_HASHED.format("NEW.device_id")}
       BEGIN UPDATE devices SET content_hash = NULL WHERE id = NEW.device_id; END""",
    """CREATE TRIGGER device_values_update_clears_hash AFTER UPDATE ON device_values
       BEGIN UPDATE devices SET content_hash = NULL WHERE id = NEW.device_id OR
             id = OLD.device_id; END""",
    f"""CREATE TRIGGER device_values_delete_clears_hash AFTER DELETE ON device_values
       WHEN {_HASHED.format("OLD.device_id")}
       BEGIN UPDATE devices SET content_hash = NULL WHERE id = OLD.device_id; END""",
    """CREATE TRIGGER devices_update_clears_hash AFTER UPDATE OF kind, name, aliases, family
       ON devices BEGIN UPDATE devices SET content_hash = NULL WHERE id = NEW.id; END""",
]


DIGEST_TRIGGERS = ("device_values_insert_clears_hash", "device_values_update_clears_hash",
                   "device_values_delete_clears_hash", "devices_update_clears_hash")


@contextmanager
def digest_triggers_suspended(db: sqlite_utils.Database):
    """Inside a transaction whose writer sets every digest it touches: drop the triggers
    that clear digests and create them again, from their stored SQL, before the
    transaction ends. A bulk write is then not paying a trigger per row (a third of the
    cost of merging 40 000 records). On an error the enclosing transaction must roll back
    (db.atomic() does), which restores them too."""
    if not db.conn.in_transaction:
        raise RuntimeError("digest triggers may only be suspended inside a transaction")
    saved = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN "
        f"({', '.join('?' * len(DIGEST_TRIGGERS))})", DIGEST_TRIGGERS).fetchall()
    for name, _ in saved:
        db.execute(f'DROP TRIGGER "{name}"')
    yield
    for _, sql in saved:
        db.execute(sql)


@contextmanager
def foreign_keys_unchecked(db: sqlite_utils.Database):
    """Around a transaction (SQLite ignores the pragma inside one) whose every record and
    calibration row names a device the same transaction reads or writes, and which deletes
    no device: foreign keys are not enforced until the block ends, then enforced again.

    A bulk copy pays a probe of the devices table per record to learn what its own join
    already guarantees (0.1 s of the 1 s a merge of 10 000 new devices takes). Without a
    deleted device nothing cascades, so the rows written are the same either way. Entered
    inside a transaction (a caller's own), it changes nothing: the keys stay checked."""
    if db.conn.in_transaction:
        yield
        return
    db.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        db.execute("PRAGMA foreign_keys = ON")


@migrations(name="m002_content_hash")
def m002_content_hash(db: sqlite_utils.Database) -> None:
    """A per-device digest, so comparing large databases skips identical devices."""
    from .store import refresh_content_hashes
    db.execute("ALTER TABLE devices ADD COLUMN content_hash TEXT")
    for statement in _V2_TRIGGERS:
        db.execute(statement)
    refresh_content_hashes(db)


# Version 3: devices.kind may also be 'latency_table'. SQLite cannot alter a CHECK, so the
# devices table is rebuilt (SQLite's documented 12-step procedure, sqlite.org/lang_altertable
# "Making Other Kinds Of Table Schema Changes"): foreign keys off, copy into a new table,
# drop, rename, check. Column list as m001 + m002 left it; only the kind CHECK differs.
_V3_DEVICES = """CREATE TABLE devices_v3 (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind = 'gpu' OR kind = 'link' OR kind = 'host'
            OR kind = 'latency_table'),
        name TEXT NOT NULL,
        name_lower TEXT NOT NULL UNIQUE,
        aliases TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(aliases)),
        family TEXT,
        origin TEXT NOT NULL
            CHECK (origin = 'shipped' OR origin = 'user' OR origin = 'imported'),
        created TEXT NOT NULL,
        modified TEXT NOT NULL,
        content_hash TEXT
    )"""
_V3_COLUMNS = ("id, kind, name, name_lower, aliases, family, origin, created, modified, "
               "content_hash")


@migrations(name="m003_latency_table_kind", transactional=False)
def m003_latency_table_kind(db: sqlite_utils.Database) -> None:
    """Allow device kind 'latency_table' (per-architecture latency tables, in cycles)."""
    conn = db.conn
    if conn.in_transaction:
        raise RuntimeError("m003 must start outside a transaction (it turns foreign keys off)")
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND "
                       "name = 'devices'").fetchone()[0]
    if "latency_table" in sql:  # interrupted after the rebuild, before being recorded
        return
    foreign_keys = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # The digest triggers name the devices table; drop them across the rename.
            saved = conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN "
                f"({', '.join('?' * len(DIGEST_TRIGGERS))})", DIGEST_TRIGGERS).fetchall()
            for name, _ in saved:
                conn.execute(f'DROP TRIGGER "{name}"')
            conn.execute(_V3_DEVICES)
            conn.execute(f"INSERT INTO devices_v3 ({_V3_COLUMNS}) "
                         f"SELECT {_V3_COLUMNS} FROM devices")
            conn.execute("DROP TABLE devices")
            conn.execute("ALTER TABLE devices_v3 RENAME TO devices")
            for _, trigger_sql in saved:
                conn.execute(trigger_sql)
            problems = conn.execute("PRAGMA foreign_key_check").fetchall()
            if problems:
                raise sqlite3.IntegrityError(
                    f"m003: {len(problems)} value row(s) lost their device")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")


# Version 4: device_values.provenance may also be one of the grades of published latency
# figures. Same rebuild as m003, for device_values (nothing references its rows; its index
# and the digest triggers on it are dropped with the table and created again).
_V4_DEVICE_VALUES = """CREATE TABLE device_values_v4 (
        id INTEGER PRIMARY KEY,
        device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
        field TEXT NOT NULL,
        value CHECK (typeof(value) <> 'blob'),
        unit TEXT NOT NULL,
        source_key TEXT,
        source_text TEXT,
        source_where TEXT,
        provenance TEXT CHECK (provenance = 'document' OR provenance = 'vendor'
            OR provenance = 'measurement' OR provenance = 'calibration' OR provenance = 'user'
            OR provenance = 'published-measurement' OR provenance = 'simulator-calibration'
            OR provenance = 'secondary' OR provenance = 'unattributed'),
        note TEXT,
        is_default INTEGER NOT NULL CHECK (is_default = 0 OR is_default = 1),
        row_order INTEGER NOT NULL,
        UNIQUE (device_id, row_order)
    )"""
_V4_COLUMNS = ("id, device_id, field, value, unit, source_key, source_text, source_where, "
               "provenance, note, is_default, row_order")


@migrations(name="m004_published_provenances", transactional=False)
def m004_published_provenances(db: sqlite_utils.Database) -> None:
    """Allow the provenance grades of published latency figures (fields.SOURCE_PROVENANCES)."""
    conn = db.conn
    if conn.in_transaction:
        raise RuntimeError("m004 must start outside a transaction (it turns foreign keys off)")
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND "
                       "name = 'device_values'").fetchone()[0]
    if "unattributed" in sql:  # interrupted after the rebuild, before being recorded
        return
    foreign_keys = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            saved = conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type IN ('trigger', 'index') AND "
                "tbl_name = 'device_values' AND sql IS NOT NULL").fetchall()
            conn.execute(_V4_DEVICE_VALUES)
            conn.execute(f"INSERT INTO device_values_v4 ({_V4_COLUMNS}) "
                         f"SELECT {_V4_COLUMNS} FROM device_values")
            conn.execute("DROP TABLE device_values")
            conn.execute("ALTER TABLE device_values_v4 RENAME TO device_values")
            for _, item_sql in saved:
                conn.execute(item_sql)
            problems = conn.execute("PRAGMA foreign_key_check").fetchall()
            if problems:
                raise sqlite3.IntegrityError(
                    f"m004: {len(problems)} value row(s) lost their device")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")


_V5_CALIBRATIONS = [
    """CREATE TABLE calibrations (
        id INTEGER PRIMARY KEY,
        device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind = 'link' OR kind = 'kernel'),
        subject TEXT NOT NULL,
        label TEXT NOT NULL,
        parameters TEXT NOT NULL CHECK (json_valid(parameters)),
        residuals TEXT NOT NULL CHECK (json_valid(residuals)),
        mape_percent REAL,
        loo_mape REAL,
        loo_median_ape REAL,
        measurements_name TEXT NOT NULL,
        measurements_sha256 TEXT NOT NULL,
        created TEXT NOT NULL,
        note TEXT,
        is_current INTEGER NOT NULL CHECK (is_current = 0 OR is_current = 1)
    )""",
    "CREATE INDEX calibrations_by_device ON calibrations (device_id, kind, subject, label)",
]


@migrations(name="m005_calibrations")
def m005_calibrations(db: sqlite_utils.Database) -> None:
    """Fitted link models and kernel λ with their provenance, per device."""
    for statement in _V5_CALIBRATIONS:
        db.execute(statement)


_V6_DECLINED = [
    """CREATE TABLE declined_conflicts (
        device TEXT NOT NULL,
        field TEXT NOT NULL,
        theirs_digest TEXT NOT NULL,
        declined TEXT NOT NULL,
        PRIMARY KEY (device, field, theirs_digest)
    )""",
]


@migrations(name="m006_declined_conflicts")
def m006_declined_conflicts(db: sqlite_utils.Database) -> None:
    """The conflicts answered "keep mine", so the same content is not asked about again."""
    for statement in _V6_DECLINED:
        db.execute(statement)


_V7_LEARNED = [
    """CREATE TABLE learned_models (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        method TEXT NOT NULL,
        features TEXT NOT NULL,
        model TEXT NOT NULL CHECK (json_valid(model)),
        model_sha256 TEXT NOT NULL,
        training_digest TEXT NOT NULL,
        gpus TEXT NOT NULL CHECK (json_valid(gpus)),
        kernels TEXT NOT NULL CHECK (json_valid(kernels)),
        rows INTEGER NOT NULL,
        measurements TEXT NOT NULL CHECK (json_valid(measurements)),
        origin TEXT NOT NULL CHECK (origin = 'user' OR origin = 'imported'),
        created TEXT NOT NULL,
        note TEXT
    )""",
]


@migrations(name="m007_learned_models")
def m007_learned_models(db: sqlite_utils.Database) -> None:
    """Learned predictors with their training data and provenance, by name."""
    for statement in _V7_LEARNED:
        db.execute(statement)


# The version a file has once every migration above ran; bump with each new migration.
KNOWN_MIGRATIONS = ("m001_initial", "m002_content_hash", "m003_latency_table_kind",
                    "m004_published_provenances", "m005_calibrations",
                    "m006_declined_conflicts", "m007_learned_models")
SCHEMA_VERSION = len(KNOWN_MIGRATIONS)


def set_meta_version(db: sqlite_utils.Database) -> None:
    """Write the current schema version into the meta table (after a create or a migration)."""
    db.execute("UPDATE meta SET value = ? WHERE key = 'version'", [str(SCHEMA_VERSION)])
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('app_version', ?)",
               [__version__])
