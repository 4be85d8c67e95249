"""Sharing devices as files: export from a catalog, compare (import report), merge, diff.

The rules of comparison and merging are in merge.py; this module reads and writes the
files. Comparisons skip devices whose digests (devices.content_hash) are equal on both sides
and read the records of the others only.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

import sqlite_utils

from .errors import DeviceEditError
from .mapping import normalize_name
from .merge import MergeReport, compare, make_resolver, plan_merge, plan_sources, \
    remap_sources
from .schema import create_database, open_database
from .store import RawDevice, devices_citing, read_hashes, read_raw, read_sources, \
    write_device, write_sources

if TYPE_CHECKING:
    from .catalog import Catalog


def export_devices(catalog: "Catalog", names: Iterable[str], path: str | Path, *,
                   overwrite: bool = False) -> Path:
    """Write the named devices of ``catalog`` and the sources they cite to a new device
    database at ``path``; written to a temporary name first, so a failure leaves no file."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise DeviceEditError(f"{path} already exists; not overwriting it")
    picked: dict[str, tuple[RawDevice, str]] = {}
    for name in names:
        summary, layer = catalog._resolve(name)
        key = normalize_name(summary.name)
        picked[key] = (catalog._raw(key, layer), layer)
    if not picked:
        raise DeviceEditError("nothing to export: name at least one device")
    layer_sources = {"user": read_sources(catalog._user) if catalog._user is not None else {},
                     "shipped": read_sources(catalog._shipped)
                     if catalog._shipped is not None else {}}
    sources = {}
    for device, layer in picked.values():
        for records in device.values.values():
            for r in records:
                if r[2] and r[2] in layer_sources[layer]:
                    sources.setdefault(r[2], layer_sources[layer][r[2]])
    tmp = path.with_name(path.name + ".exporting")
    tmp.unlink(missing_ok=True)
    db = create_database(tmp)
    try:
        with db.atomic():
            write_sources(db, sources)
            for key in sorted(picked):
                write_device(db, picked[key][0])
        db.close()
        os.replace(tmp, path)
    except BaseException:
        db.close()
        tmp.unlink(missing_ok=True)
        raise
    return path


def _differing(mine_hashes: dict, theirs_db: sqlite_utils.Database, renamed) -> tuple:
    """(their hashes, keys identical on both sides, their devices that differ, as raw)."""
    theirs_hashes = read_hashes(theirs_db)
    # A renamed source key means equal records cite different documents: read those.
    recheck = devices_citing(theirs_db, renamed)
    same = {k for k, (_, _, digest) in theirs_hashes.items()
            if digest is not None and k not in recheck and k in mine_hashes
            and mine_hashes[k][2] == digest}
    theirs = read_raw(theirs_db, set(theirs_hashes) - same)
    return theirs_hashes, same, {k: remap_sources(d, renamed) for k, d in theirs.items()}


@dataclass
class FileComparison:
    report: MergeReport
    mine: dict[str, RawDevice]
    user_keys: set[str]
    theirs: dict[str, RawDevice]
    theirs_sources: dict[str, str]


def compare_with_file(catalog: "Catalog", path: str | Path) -> FileComparison:
    """Compare the device database at ``path`` with the catalog (user over shipped)."""
    theirs_db = open_database(path)
    try:
        theirs_sources = read_sources(theirs_db)
        renamed = plan_sources(catalog.sources(), theirs_sources)
        mine_hashes = read_hashes(catalog._shipped) if catalog._shipped is not None else {}
        if catalog._user is not None:
            mine_hashes.update(read_hashes(catalog._user))
        _, same, theirs = _differing(mine_hashes, theirs_db, renamed)
    finally:
        theirs_db.close()
    keys = set(theirs) & set(mine_hashes)
    user = read_raw(catalog._user, keys) if catalog._user is not None else {}
    mine = read_raw(catalog._shipped, keys - set(user)) if catalog._shipped is not None else {}
    mine.update(user)
    report = compare(mine, theirs, mine_label=str(catalog.user_path), theirs_label=str(path),
                     identical=[mine_hashes[k][:2] for k in same], renamed=renamed)
    return FileComparison(report, mine, set(user), theirs,
                          {renamed.get(k, k): c for k, c in theirs_sources.items()})


def merge_file(catalog: "Catalog", path: str | Path, resolutions: Mapping | None = None, *,
               policy: str | None = None) -> MergeReport:
    """Merge the file at ``path`` into the catalog's user database in one transaction;
    see Catalog.merge."""
    from .catalog import _now
    cmp = compare_with_file(catalog, path)
    resolve = make_resolver(cmp.report, resolutions, policy)
    writes = plan_merge(cmp.mine, cmp.theirs, cmp.report, resolve)
    if writes:
        now = _now()
        db = catalog._user_for_write()
        shipped_sources = (read_sources(catalog._shipped) if catalog._shipped is not None
                           else {})
        with db.atomic():
            have = read_sources(db)
            needed = {}
            for key, device, is_new in writes:
                from_shipped = not is_new and key not in cmp.user_keys
                for records in device.values.values():
                    for r in records:
                        k = r[2]
                        if k and k not in have and k not in needed:
                            needed[k] = cmp.theirs_sources.get(k, shipped_sources.get(k))
                origin = "imported" if is_new or from_shipped else device.origin
                created = now if is_new or from_shipped else device.created
                write_device(db, RawDevice(device.kind, device.name, device.aliases,
                                           device.family, origin, device.values, created,
                                           now))
            write_sources(db, {k: c for k, c in needed.items() if c is not None})
    report = cmp.report
    return MergeReport(report.mine, report.theirs, report.devices, report.renamed_sources,
                       applied=True)


def diff(a: str | Path, b: str | Path) -> MergeReport:
    """Compare two device database files: ``a`` as mine, ``b`` as theirs, including the
    devices only ``a`` has (status "missing")."""
    dbs = []
    try:
        for path in (a, b):
            dbs.append(open_database(path))
        mine_db, theirs_db = dbs
        renamed = plan_sources(read_sources(mine_db), read_sources(theirs_db))
        mine_hashes = read_hashes(mine_db)
        theirs_hashes, same, theirs = _differing(mine_hashes, theirs_db, renamed)
        mine = read_raw(mine_db, set(theirs) & set(mine_hashes))
    finally:
        for db in dbs:
            db.close()
    missing = [v[:2] for k, v in mine_hashes.items() if k not in theirs_hashes]
    return compare(mine, theirs, mine_label=str(a), theirs_label=str(b),
                   identical=[mine_hashes[k][:2] for k in same], missing=missing,
                   renamed=renamed)
