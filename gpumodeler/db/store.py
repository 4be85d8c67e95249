"""Reading and writing the rows of one device database file (no layering, no lookup rules).

Callers own transactions: every write here is meant to run inside ``db.atomic()``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import sqlite_utils

from .fields import SUMMARY_FIELDS
from .mapping import (INSERT_VALUE_SQL, RECORD_SELECT, aliases_from_json, aliases_to_json,
                      content_hash, normalize_name, record_from_rows, summary_from_row,
                      value_rows)
from .records import DeviceRecord, DeviceSummary


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


def read_sources(db: sqlite_utils.Database) -> dict[str, str]:
    return dict(db.execute("SELECT key, citation FROM sources ORDER BY key").fetchall())


def write_sources(db: sqlite_utils.Database, sources: dict[str, str]) -> None:
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


def read_summaries(db: sqlite_utils.Database) -> dict[str, DeviceSummary]:
    """name_lower -> summary, for every device of the file."""
    return {normalize_name(row[1]): summary_from_row(row)
            for row in db.execute(_summary_sql()).fetchall()}


def device_row(db: sqlite_utils.Database, name_lower: str) -> dict | None:
    cur = db.execute("SELECT * FROM devices WHERE name_lower = ?", [name_lower])
    row = cur.fetchone()
    return None if row is None else dict(zip([c[0] for c in cur.description], row))


def read_device(db: sqlite_utils.Database, name_lower: str,
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


def read_hashes(db: sqlite_utils.Database) -> dict[str, tuple[str, str, str | None]]:
    """name_lower -> (name, kind, content_hash or None) for every device."""
    return {key: (name, kind, digest) for key, name, kind, digest in db.execute(
        "SELECT name_lower, name, kind, content_hash FROM devices").fetchall()}


def devices_citing(db: sqlite_utils.Database, source_keys) -> set[str]:
    """name_lower of the devices with a record citing one of ``source_keys``."""
    keys = sorted(source_keys)
    if not keys:
        return set()
    return {r[0] for r in db.execute(
        "SELECT DISTINCT d.name_lower FROM device_values v JOIN devices d ON d.id = v.device_id"
        " WHERE v.source_key IN (SELECT value FROM json_each(?))", [json.dumps(keys)])}


def read_raw(db: sqlite_utils.Database, names_lower=None) -> dict[str, RawDevice]:
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


def refresh_content_hashes(db: sqlite_utils.Database) -> None:
    """Compute the digest of every device that has none (after a migration or an edit by
    another tool)."""
    stale = [r[0] for r in db.execute(
        "SELECT name_lower FROM devices WHERE content_hash IS NULL").fetchall()]
    for start in range(0, len(stale), 500):
        for key, device in read_raw(db, stale[start:start + 500]).items():
            db.execute("UPDATE devices SET content_hash = ? WHERE name_lower = ?",
                       [content_hash(device.kind, device.family, device.aliases,
                                     device.values), key])


def write_device(db: sqlite_utils.Database, device: RawDevice, *, device_id: int | None = None
                 ) -> int:
    """Insert ``device``, replacing a device of the same name; returns its id."""
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
    db.conn.executemany(INSERT_VALUE_SQL, value_rows(device_id, device.values))
    db.execute("UPDATE devices SET content_hash = ? WHERE id = ?",
               [content_hash(device.kind, device.family, device.aliases, device.values),
                device_id])
    return device_id


def delete_device(db: sqlite_utils.Database, name_lower: str) -> bool:
    row = device_row(db, name_lower)
    if row is None:
        return False
    db.execute("DELETE FROM device_values WHERE device_id = ?", [row["id"]])
    db.execute("DELETE FROM devices WHERE id = ?", [row["id"]])
    return True
