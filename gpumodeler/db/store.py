"""Reading and writing the rows of one device database file (no layering, no lookup rules).

Callers own transactions: every write here is meant to run inside ``db.atomic()``.
"""
from __future__ import annotations

import functools
import json
import sqlite3
from itertools import chain
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping, NamedTuple


from .digests import PREFIX, device_digest
from .fields import KINDS, PROVENANCES, SUMMARY_FIELDS, UNITS, check_value_type, \
    record_problem
from .mapping import (INSERT_VALUE_SQL, IS_DEFAULT, RECORD_SELECT, VALUE_COLUMNS,
                      aliases_from_json, aliases_to_json, normalize_name, record_from_rows,
                      summary_from_row, value_rows)
from .errors import (DatabaseAccessError, DatabaseFormatError, damaged_content, is_bad_text,
                     is_damaged_schema)
from .records import DeviceRecord, DeviceSummary

if TYPE_CHECKING:
    from .sqlite_read import Database


def _file_of(db: Database) -> str | None:
    original = getattr(db, "original", None)     # a file read from a private copy
    if original is not None:
        return str(original)
    for _, name, file in db.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return file or None
    return None


def _reading(read):
    """A read of ``db`` (its first argument) that reports damaged content (text that is not
    UTF-8, aliases that are not a JSON list) as a DatabaseFormatError naming the file, and
    any other SQLite error (locked too long, an I/O error) as a DatabaseAccessError."""
    @functools.wraps(read)
    def guarded(db, *args, **kwargs):
        try:
            return read(db, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            if is_bad_text(exc) or is_damaged_schema(exc):
                raise damaged_content(_file_of(db), exc) from None
            raise DatabaseAccessError(f"{_file_of(db) or 'the device database'}: cannot read "
                                      f"it ({exc})") from None
        except DatabaseFormatError as exc:
            raise damaged_content(_file_of(db), exc) from None
    return guarded


@dataclass
class RawDevice:
    """A device with raw records (tuples in ValueRecord order), for bulk comparison."""

    kind: str
    name: str
    aliases: tuple[str, ...]
    family: str | None
    origin: str
    values: dict[str, list[tuple]]
    created: str | None = None
    modified: str | None = None


@_reading
def read_sources(db: Database) -> dict[str, str]:
    return dict(db.execute("SELECT key, citation FROM sources ORDER BY key").fetchall())


def write_sources(db: Database, sources: dict[str, str]) -> None:
    """Add sources; an existing key keeps its citation (callers check for clashes)."""
    db.conn.executemany("INSERT OR IGNORE INTO sources (key, citation) VALUES (?, ?)",
                        sorted(sources.items()))


def _summary_sql() -> str:
    joins = "".join(
        f" LEFT JOIN device_values v{i} ON v{i}.device_id = d.id AND v{i}.field = '{f}'"
        f" AND v{i}.is_default = 1" for i, f in enumerate(SUMMARY_FIELDS))
    cols = ", ".join(f"v{i}.value" for i in range(len(SUMMARY_FIELDS)))
    return (f"SELECT d.kind, d.name, d.aliases, d.origin, d.family, {cols} "
            f"FROM devices d{joins} ORDER BY d.name_lower")


@_reading
def read_summaries(db: Database) -> dict[str, DeviceSummary]:
    """name_lower -> summary, for every device of the file."""
    return {normalize_name(row[1]): summary_from_row(row)
            for row in db.execute(_summary_sql()).fetchall()}


@_reading
def device_row(db: Database, name_lower: str) -> dict | None:
    cur = db.execute("SELECT * FROM devices WHERE name_lower = ?", [name_lower])
    row = cur.fetchone()
    return None if row is None else dict(zip([c[0] for c in cur.description], row))


@_reading
def read_device(db: Database, name_lower: str,
                shadows_shipped: bool = False) -> DeviceRecord | None:
    row = device_row(db, name_lower)
    if row is None:
        return None
    values = db.execute(f"SELECT field, {RECORD_SELECT} FROM device_values "
                        f"WHERE device_id = ? ORDER BY row_order", [row["id"]]).fetchall()
    used = {v[3] for v in values if v[3]}
    sources = dict(db.execute(
        f"SELECT key, citation FROM sources WHERE key IN ({', '.join('?' * len(used))})",
        sorted(used)).fetchall()) if used else {}
    return record_from_rows(row, values, sources, shadows_shipped)


class DeviceEntry(NamedTuple):
    """A devices row without its records: enough to tell which devices to compare."""

    id: int
    name_lower: str
    name: str
    kind: str
    family: str | None
    aliases: str            # JSON list
    origin: str
    created: str
    modified: str
    digest: str | None      # content_hash


@_reading
def read_index(db: Database) -> dict[str, DeviceEntry]:
    """name_lower -> DeviceEntry for every device of the file."""
    return {row[1]: DeviceEntry._make(row) for row in db.execute(
        "SELECT id, name_lower, name, kind, family, aliases, origin, created, modified, "
        "content_hash FROM devices").fetchall()}


@dataclass
class StoredFields:
    """Some fields of one stored device: raw records in row order, fields in stored order,
    their rows' ids, and the row_order of each field's first record (where a rewrite puts
    it back)."""

    values: dict[str, list[tuple]] = field(default_factory=dict)
    ids: dict[str, list[int]] = field(default_factory=dict)
    first_order: dict[str, int] = field(default_factory=dict)


_RECORD_COLUMNS = ", ".join(f"v.{c}" for c in VALUE_COLUMNS)
# Items of a [device id, field] pair: SQLite 3.38+ has ->>, 40% faster than json_extract.
_JSON_ITEM0, _JSON_ITEM1 = (("j.value ->> 0", "j.value ->> 1")
                            if sqlite3.sqlite_version_info >= (3, 38) else
                            ("json_extract(j.value, '$[0]')", "json_extract(j.value, '$[1]')"))


@_reading
def read_records(db: Database, wanted: Mapping[int, Iterable[str] | None], *,
                 positions: bool = False, scan: Iterable[int] = ()) -> dict[int, StoredFields]:
    """device id -> StoredFields with the named fields of each device (None: all of them).

    A device's fields are found through the (device_id, field) index, one probe each,
    except for the devices in ``scan``, whose rows are read in one sweep and filtered:
    cheaper once a good part of a device's fields is wanted. ``positions``: also the rows'
    ids and first row orders (what rewrite_fields needs)."""
    out = {device_id: StoredFields() for device_id in wanted}
    scan = set(scan)
    swept = [i for i, names in wanted.items() if names is None or i in scan]
    pairs = [[i, f] for i, names in wanted.items() if names is not None and i not in scan
             for f in names]
    where = "v.row_order, v.id, " if positions else ""
    select = f"SELECT v.device_id, v.field, {where}{_RECORD_COLUMNS} FROM json_each(?) j"
    if swept:
        keep = {i: None if (names := wanted[i]) is None else set(names) for i in swept}
        # IN (not a join): the (device_id, row_order) index then gives the rows in order.
        rows = db.execute(f"SELECT v.device_id, v.field, {where}{_RECORD_COLUMNS} "
                          f"FROM device_values v WHERE v.device_id IN "
                          f"(SELECT value FROM json_each(?)) ORDER BY v.device_id, v.row_order",
                          [json.dumps(swept)]).fetchall()
        _collect(rows, out, keep, positions)
    if pairs:
        rows = db.execute(f"{select} JOIN device_values v ON v.device_id = {_JSON_ITEM0} "
                          f"AND v.field = {_JSON_ITEM1} ORDER BY v.device_id, v.row_order",
                          [json.dumps(pairs)]).fetchall()
        _collect(rows, out, {}, positions)
    return out


def _collect(rows, out: dict[int, StoredFields], keep: Mapping[int, set | None],
             positions: bool) -> None:
    """Sort rows (ordered by device and row order) into ``out``; ``keep``: the fields to
    keep per device (absent or None: all)."""
    device_id, values, ids, first, wanted = None, {}, {}, {}, None
    skip = 4 if positions else 2
    for row in rows:
        if row[0] != device_id:
            device_id = row[0]
            stored = out[device_id]
            values, ids, first = stored.values, stored.ids, stored.first_order
            wanted = keep.get(device_id)
        name = row[1]
        if wanted is not None and name not in wanted:
            continue
        records = values.get(name)
        if records is None:
            values[name] = [row[skip:]]
            if positions:
                ids[name] = [row[3]]
                first[name] = row[2]
        else:
            records.append(row[skip:])
            if positions:
                ids[name].append(row[3])


@_reading
def citing_fields(db: Database, source_keys) -> dict[int, set[str]]:
    """device id -> its fields with a record citing one of ``source_keys``."""
    out: dict[int, set[str]] = {}
    keys = sorted(source_keys)
    if keys:
        for device_id, field_name in db.execute(
                "SELECT DISTINCT device_id, field FROM device_values "
                "WHERE source_key IN (SELECT value FROM json_each(?))", [json.dumps(keys)]):
            out.setdefault(device_id, set()).add(field_name)
    return out


@_reading
def read_raw(db: Database, names_lower=None) -> dict[str, RawDevice]:
    """name_lower -> RawDevice for all devices (or those named), in name order."""
    devices: dict[int, RawDevice] = {}
    keys: dict[int, str] = {}
    where, params = "", []
    if names_lower is not None:
        where, params = (" WHERE name_lower IN (SELECT value FROM json_each(?))",
                         [json.dumps(sorted(names_lower))])
    for (id_, kind, name, name_lower, aliases, family, origin, created,
         modified) in db.execute(
            "SELECT id, kind, name, name_lower, aliases, family, origin, created, modified "
            f"FROM devices{where} ORDER BY name_lower", params).fetchall():
        devices[id_] = RawDevice(kind, name, aliases_from_json(aliases), family, origin, {},
                                 created, modified)
        keys[id_] = name_lower
    if devices:
        value_where = where.replace(
            "name_lower IN", "device_id IN (SELECT id FROM devices WHERE name_lower IN") + (
            ")" if where else "")
        for row in db.execute(
                f"SELECT device_id, field, {RECORD_SELECT} FROM device_values{value_where} "
                f"ORDER BY device_id, row_order", params).fetchall():
            values = devices[row[0]].values
            field_name = row[1]
            if field_name in values:
                values[field_name].append(row[2:])
            else:
                values[field_name] = [row[2:]]
    return {keys[i]: d for i, d in sorted(devices.items(), key=lambda kv: keys[kv[0]])}


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _case_of(column: str, cases: Mapping[str, str], otherwise: str) -> str:
    """CASE column WHEN 'key' THEN expression ... ELSE otherwise END: each WHEN compares
    as ``column = 'key'`` does (the column's collation and affinity), as IN would."""
    whens = " ".join(f"WHEN {_sql_text(k)} THEN {e}" for k, e in cases.items())
    return f"CASE {column} {whens} ELSE {otherwise} END"


#: A number's value as record_problem refuses it: of another type than integer, real or
#: unknown (NULL), or infinite.
_BAD_NUMBER = ("CASE typeof(v.value) WHEN 'real' THEN v.value IN (9e999, -9e999) "
               "WHEN 'integer' THEN 0 WHEN 'null' THEN 0 ELSE 1 END")
#: The records record_problem (or the 0/1 default flag) might refuse, in SQL: every one it
#: refuses, given how SQLite's types reach Python (TEXT is str, INTEGER int, REAL float,
#: BLOB bytes; no bool, no NaN). Each column is asked once, by a CASE on its value: the
#: unit (unknown, or NULL: refused) decides what the value may be; a known provenance or
#: NULL; a flag that is the integer 0 or 1. Every column read and every test of the
#: 310 000 records of a shared file counts: this form screens them in two thirds of the
#: time the same tests took written with IN lists and one CASE on the value's type.
SUSPECT_RECORD = (
    _case_of("v.unit", {u: "typeof(v.value) NOT IN ('null', 'text')" if u == "text"
                        else _BAD_NUMBER for u in UNITS}, "1")
    + " OR (v.provenance IS NOT NULL AND "
    + _case_of("v.provenance", {p: "0" for p in PROVENANCES}, "1") + ") OR "
    "CASE v.is_default WHEN 0 THEN typeof(v.is_default) <> 'integer' "
    "WHEN 1 THEN typeof(v.is_default) <> 'integer' ELSE 1 END")


@_reading
def refused_devices(db: Database, path) -> tuple[set[str], list[str]]:
    """The devices of a shared file that must not enter the store, by normalized name,
    and one line per reason naming the file, table, row, column and what is valid: a
    kind we do not know, or a value record the device editors would refuse
    (fields.record_problem: a number column holding text, a unit we do not know, an
    unknown provenance) or whose default flag is not 0 or 1. A device is refused whole:
    merged without a field, it would read as if the file had none."""
    refused: set[str] = set()
    problems: list[str] = []
    # Only the devices whose kind SQLite finds unknown reach Python (compared as stored,
    # whatever collation the column declares; a NULL kind too), sorted once found: reading
    # every devices row in name order, a probe of the table per device, cost 0.02 s of a
    # merge of 10 000 devices. (+name_lower: the table is scanned, not the name index;
    # ties in the order that index keeps them.)
    for id_, key, name, kind in db.execute(
            "SELECT id, name_lower, name, kind FROM devices WHERE kind IS NULL OR kind "
            "COLLATE BINARY NOT IN (SELECT value FROM json_each(?)) ORDER BY +name_lower, id",
            [json.dumps(KINDS)]).fetchall():
        if kind not in KINDS:
            refused.add(key)
            problems.append(f"{path}: table devices, row {id_} ({name}), column kind: "
                            f"{kind!r} is not one of {', '.join(KINDS)}; not imported")
    # Only the rows SQLite finds suspect reach Python (a 310 000-record file is scanned
    # in C in a fraction of the time a loop in Python takes), where record_problem decides.
    # CROSS JOIN keeps the values the outer loop: read in stored order, each suspect row's
    # device looked up by id (the planner walked the devices by name instead and found each
    # one's rows through an index: a quarter more time).
    for id_, key, name, field_name, value, unit, provenance, flag in db.execute(
            "SELECT v.id, d.name_lower, d.name, v.field, v.value, v.unit, v.provenance, "
            "v.is_default FROM device_values v CROSS JOIN devices d ON d.id = v.device_id "
            f"WHERE {SUSPECT_RECORD} ORDER BY d.name_lower, v.row_order, v.id").fetchall():
        why = record_problem(unit, value, provenance)
        column = ("unit" if unit not in UNITS else "value" if check_value_type(unit, value)
                  else "provenance")
        if why is None and (type(flag) is not int or flag not in (0, 1)):
            why, column = f"must be 0 or 1, got {flag!r}", "is_default"
        if why is not None:
            refused.add(key)
            problems.append(f"{path}: table device_values, row {id_} ({name}.{field_name}), "
                            f"column {column}: {why}; device not imported")
    return refused, problems


def refresh_content_hashes(db: Database) -> None:
    """Compute the digest of every device that has none (after a migration or an edit by
    another tool)."""
    stale = [r[0] for r in db.execute(
        "SELECT name_lower FROM devices WHERE content_hash IS NULL").fetchall()]
    for start in range(0, len(stale), 500):
        for key, device in read_raw(db, stale[start:start + 500]).items():
            db.execute("UPDATE devices SET content_hash = ? WHERE name_lower = ?",
                       [device_digest(device.kind, device.family, device.aliases,
                                      device.values), key])


def write_device(db: Database, device: RawDevice, *, device_id: int | None = None,
                 digest: str | None = None) -> int:
    """Insert ``device``, replacing a device of the same name; returns its id. ``digest``:
    the device's digest when the caller already has it (a device copied unchanged)."""
    name_lower = normalize_name(device.name)
    old = device_row(db, name_lower)
    if old is not None:
        db.execute("DELETE FROM device_values WHERE device_id = ?", [old["id"]])
        db.execute("UPDATE devices SET kind = ?, name = ?, aliases = ?, family = ?, origin = ?,"
                   " modified = ? WHERE id = ?",
                   [device.kind, device.name, aliases_to_json(device.aliases), device.family,
                    device.origin, device.modified, old["id"]])
        device_id = old["id"]
    else:
        cur = db.execute(
            "INSERT INTO devices (id, kind, name, name_lower, aliases, family, origin, created,"
            " modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [device_id, device.kind, device.name, name_lower, aliases_to_json(device.aliases),
             device.family, device.origin, device.created, device.modified])
        device_id = cur.lastrowid
        assert device_id is not None  # an INSERT sets it
    db.conn.executemany(INSERT_VALUE_SQL, value_rows(device_id, device.values))
    if digest is None:
        digest = device_digest(device.kind, device.family, device.aliases, device.values)
    db.execute("UPDATE devices SET content_hash = ? WHERE id = ?", [digest, device_id])
    return device_id


def copy_devices(db: Database, alias: str, keys: Iterable[str], *,
                 renamed: Mapping[str, str] | None = None,
                 imported_at: str | None = None) -> set[str]:
    """Copy the devices named by ``keys`` (normalized names) from the database attached as
    ``alias`` (schema.attached_read_only) into ``db``; returns the source keys their
    records cite, as written here.

    Two INSERT ... SELECT statements run in SQLite, with no row passing through Python:
    10 000 devices of 31 records take about a second where writing them one by one took
    5.6 s (benchmarks/bench_devices.py). Each device reads back as it reads there: its records keep their row orders.
    ``renamed``: their source keys written under another key here (merge.plan_sources).
    ``imported_at``: the devices become "imported", created and modified at that time;
    None keeps their origin and timestamps (an export). Their digests are copied when of
    the current form and nothing was renamed, else computed afresh. No device of those
    names may exist in ``db``: the UNIQUE name fails the caller's transaction instead.
    Runs inside the caller's transaction."""
    renamed = dict(renamed or {})
    db.execute("CREATE TEMP TABLE IF NOT EXISTS copy_keys (name_lower TEXT PRIMARY KEY)")
    db.execute("CREATE TEMP TABLE IF NOT EXISTS copy_renamed "
               "(old TEXT PRIMARY KEY, new TEXT NOT NULL)")
    try:
        db.conn.executemany("INSERT INTO temp.copy_keys VALUES (?)",
                            [(k,) for k in sorted(set(keys))])
        db.conn.executemany("INSERT INTO temp.copy_renamed VALUES (?, ?)",
                            sorted(renamed.items()))
        # Their digest goes in with the device when it is of the current form and no
        # source key is renamed (else it is computed afresh below).
        copied = db.execute(
            "INSERT INTO main.devices (kind, name, name_lower, aliases, family, origin, "
            "created, modified, content_hash) SELECT t.kind, t.name, t.name_lower, "
            "t.aliases, t.family, coalesce(?1, t.origin), coalesce(?2, t.created), "
            "coalesce(?2, t.modified), CASE WHEN ?3 AND substr(t.content_hash, 1, ?4) = ?5 "
            "THEN t.content_hash END "
            f"FROM temp.copy_keys k JOIN {alias}.devices t ON t.name_lower = k.name_lower "
            "ORDER BY t.name_lower", ["imported" if imported_at else None, imported_at,
                                      0 if renamed else 1, len(PREFIX), PREFIX]).rowcount
        everything = copied == db.execute(f"SELECT count(*) FROM {alias}.devices").fetchone()[0]
        rebuilt = _index_set_aside(db)
        # (The renamed keys are joined only when there are some: a probe per record.)
        db.execute(
            f"INSERT INTO main.device_values (device_id, field, {RECORD_SELECT}, row_order) "
            "SELECT m.id, v.field, " + ", ".join(
                "coalesce(r.new, v.source_key)" if c == "source_key" and renamed
                else f"v.{c}" for c in VALUE_COLUMNS) + ", v.row_order "
            f"FROM temp.copy_keys k JOIN {alias}.devices t ON t.name_lower = k.name_lower "
            "JOIN main.devices m ON m.name_lower = k.name_lower "
            f"JOIN {alias}.device_values v ON v.device_id = t.id "
            + ("LEFT JOIN temp.copy_renamed r ON r.old = v.source_key " if renamed else "")
            + "ORDER BY m.id, v.row_order")
        if rebuilt is not None:
            db.execute(rebuilt)
        # Digest triggers, unless the caller suspended them, cleared the digests while the
        # records went in: set again.
        if not renamed:
            db.execute(
                f"UPDATE main.devices SET content_hash = (SELECT t.content_hash FROM "
                f"{alias}.devices t WHERE t.name_lower = main.devices.name_lower AND "
                f"substr(t.content_hash, 1, {len(PREFIX)}) = ?) "
                "WHERE content_hash IS NULL AND name_lower IN "
                "(SELECT name_lower FROM temp.copy_keys)", [PREFIX])
        # The keys cited, read where they come from: one scan of their records (all of
        # them when every device is copied, no join needed), renamed as written here.
        only_copied = "" if everything else (
            f" AND v.device_id IN (SELECT t.id FROM temp.copy_keys k JOIN {alias}.devices t "
            "ON t.name_lower = k.name_lower)")
        cited = {renamed.get(row[0], row[0]) for row in db.execute(
            f"SELECT DISTINCT v.source_key FROM {alias}.device_values v "
            f"WHERE v.source_key IS NOT NULL{only_copied}")}
    finally:
        db.execute("DROP TABLE temp.copy_keys")
        db.execute("DROP TABLE temp.copy_renamed")
    refresh_content_hashes(db)
    return cited


#: The index of a device's fields, left out while records are copied into a table holding
#: none (a merge into an empty database, an export) and built again once they are in.
_FIELD_INDEX = "device_values_by_field"


def _index_set_aside(db: Database) -> str | None:
    """Drop the (device_id, field) index when device_values holds no record and return the
    statement that builds it again (the one stored: the schema reads as before), else None.

    SQLite builds an index over rows already there by sorting them once, where inserting
    310 000 records entry by entry cost twice that (a merge into an empty database or an
    export of 10 000 devices: 0.1 s of about 1). Dropped inside the caller's transaction,
    so a failure or a kill before the index is back rolls the drop back with the rest."""
    if db.execute("SELECT EXISTS (SELECT 1 FROM main.device_values)").fetchone()[0]:
        return None
    row = db.execute("SELECT sql FROM main.sqlite_master WHERE type = 'index' AND name = ?",
                     [_FIELD_INDEX]).fetchone()
    if row is None or not row[0]:
        return None
    db.execute(f'DROP INDEX main."{_FIELD_INDEX}"')
    return row[0]


def _same_content(a: tuple, b: tuple) -> bool:
    """Equal records but for the default flag, value types included (1 is not 1.0 here,
    because the row kept must be what the new digest describes)."""
    return (a[:IS_DEFAULT] == b[:IS_DEFAULT] and a[IS_DEFAULT + 1:] == b[IS_DEFAULT + 1:]
            and type(a[0]) is type(b[0]))


def _row_flag(record: tuple) -> tuple:
    """``record`` with its default flag as the 0 or 1 the column holds (INSERT_VALUE_SQL
    takes a raw record's columns in order after device id and field)."""
    flag = record[IS_DEFAULT]
    if type(flag) is int and (flag == 0 or flag == 1):     # not a bool: binds as it is
        return record
    return record[:IS_DEFAULT] + (1 if flag else 0,) + record[IS_DEFAULT + 1:]


def _stored_order(row: tuple) -> tuple:
    return row[0], row[-1]      # device id, row order


def rewrite_fields(db: Database, rewrites: Iterable[tuple]) -> None:
    """Give some fields of stored devices new records and leave every other row alone.

    Each rewrite is (device id, field, records after the write, StoredFields the field is
    read from). When the stored records begin the new ones, they stay (default flags set
    as the new ones say) and the rest is appended; otherwise the field's rows are replaced,
    the first new record taking the old first place. Either way the device reads back with
    the field where it was and its records in the given order (a field new to the device
    comes last), as if the whole device had been rewritten. Callers set the digests.
    """
    rewrites = list(rewrites)
    ids = sorted({r[0] for r in rewrites})
    # Each device's last row order, one probe of the (device_id, row_order) index apiece
    # (the MIN/MAX optimization, sqlite.org/optoverview.html); a GROUP BY walked all of
    # each device's index entries instead (4x the time for 9 400 devices).
    ends = {device_id: end for device_id, end in db.execute(
        "SELECT j.value, (SELECT max(row_order) FROM device_values WHERE device_id = j.value) "
        "FROM json_each(?) j", [json.dumps(ids)]).fetchall() if end is not None}
    deletes: list = []
    to_default: list = []
    from_default: list = []
    rows: list = []
    append = rows.append
    flag = IS_DEFAULT
    same = _same_content
    for device_id, field_name, records, stored in rewrites:
        old = stored.values.get(field_name)
        after = ends.get(device_id, -1) + 1
        head = (device_id, field_name)
        if old and len(records) >= len(old) and all(map(same, records, old)):
            for new, kept, row_id in zip(records, old, stored.ids[field_name]):
                if bool(new[flag]) != bool(kept[flag]):
                    (to_default if new[flag] else from_default).append(row_id)
            records = records[len(old):]
        elif old:
            deletes += stored.ids[field_name]
            if not records:
                continue
            append(head + _row_flag(records[0]) + (stored.first_order[field_name],))
            records = records[1:]
        for record in records:
            append(head + _row_flag(record) + (after,))
            after += 1
        ends[device_id] = after - 1
    # Rows are written in the order they are stored (by id; by device and row order), not
    # the order of the devices' names: each page of the table and its indexes is then
    # visited once, not once per run of names (a third of the time of 27 000 inserts).
    if deletes:
        db.execute("DELETE FROM device_values WHERE id IN (SELECT value FROM json_each(?))",
                   [json.dumps(sorted(deletes))])
    for value, ids_to in ((0, from_default), (1, to_default)):
        if ids_to:
            db.execute(f"UPDATE device_values SET is_default = {value} WHERE id IN "
                       f"(SELECT value FROM json_each(?))", [json.dumps(sorted(ids_to))])
    rows.sort(key=_stored_order)
    insert_value_rows(db, rows)


#: Rows a statement of insert_value_rows writes: 64 rows of 11 columns bind 704
#: parameters, under the 999 and the 500 rows of VALUES older SQLite builds allow.
_ROWS_PER_INSERT = 64
_INSERT_ROWS_SQL = INSERT_VALUE_SQL + (
    ", (" + ", ".join("?" * (len(VALUE_COLUMNS) + 3)) + ")") * (_ROWS_PER_INSERT - 1)


def insert_value_rows(db: Database, rows: list[tuple]) -> None:
    """INSERT_VALUE_SQL for each row, in order: 64 rows a statement (the rest one by one),
    the same rows and ids as executemany writes. A statement per row paid its step and
    reset 28 000 times in a large merge: a fifth of the time of its inserts."""
    whole = len(rows) - len(rows) % _ROWS_PER_INSERT
    execute, flat = db.conn.execute, chain.from_iterable
    for start in range(0, whole, _ROWS_PER_INSERT):
        execute(_INSERT_ROWS_SQL, list(flat(rows[start:start + _ROWS_PER_INSERT])))
    if whole < len(rows):
        db.conn.executemany(INSERT_VALUE_SQL, rows[whole:])


def set_device_heads(db: Database, heads: Iterable[tuple]) -> None:
    """(aliases as JSON, family, id) for devices whose aliases or family changed."""
    db.conn.executemany("UPDATE devices SET aliases = ?, family = ? WHERE id = ?", heads)


def set_device_digests(db: Database, stamps: Iterable[tuple]) -> None:
    """(modified, digest, id): set after the records (the triggers cleared the digests)."""
    db.conn.executemany("UPDATE devices SET modified = ?, content_hash = ? WHERE id = ?",
                        stamps)


@_reading
def read_digests(db: Database, ids: Iterable[int]) -> dict[int, str | None]:
    return dict(db.execute("SELECT id, content_hash FROM devices WHERE id IN "
                           "(SELECT value FROM json_each(?))", [json.dumps(sorted(ids))]))


def delete_device(db: Database, name_lower: str) -> bool:
    row = device_row(db, name_lower)
    if row is None:
        return False
    db.execute("DELETE FROM device_values WHERE device_id = ?", [row["id"]])
    db.execute("DELETE FROM calibrations WHERE device_id = ?", [row["id"]])
    db.execute("DELETE FROM devices WHERE id = ?", [row["id"]])
    return True
