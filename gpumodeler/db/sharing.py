"""Sharing devices as files: export from a catalog, compare (import report), merge, diff.

The rules of comparison and merging are in merge.py, what to read in comparison.py, what to
write in merge_plan.py; this module opens and writes the files. A merge writes only what
changes: new devices (copied from their file by SQL, store.copy_devices, their rows never
passing through Python), and the fields (and aliases or family) of existing devices that
take records from the other side, each field's rows replaced or appended in place, the
device digest patched, all in one transaction that first checks nobody changed those
devices since they were compared.

A file to import or compare gets the full integrity check up to
schema.QUICK_CHECK_MAX_BYTES and a structural one beyond; every read of it is wrapped so a
damaged page still ends in a DatabaseFormatError naming the file, before anything is
written.
"""
from __future__ import annotations

import sqlite3
from contextlib import ExitStack, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from .calibration_sharing import (CalibrationChanges, compare_calibrations,
                                  copy_calibrations, plan_calibrations,
                                  read_checked_calibrations, write_calibrations)
from .calibrations import read_calibrations
from .comparison import Comparison, compare_stored, gc_paused
from .errors import DeviceEditError, UnresolvedConflicts
from .mapping import normalize_name
from .merge import MINE, THEIRS, MergeReport, Records, changes_default, conflict_message, \
    declined_key, default_content, make_resolver, plan_sources, with_conflicts, with_declined
# (Under the name this module always called it: tests replace _plan_merge to act between
# the comparison and the writes.)
from .merge_plan import MergePlan, plan_writes as _plan_merge
from .schema import attached_read_only, backing_file, digest_triggers_suspended, \
    file_stamp, foreign_keys_unchecked, new_database_replacing, open_database, reading, \
    utc_timestamp, write_error
from .store import RawDevice, copy_devices, read_digests, read_index, read_raw, read_records, \
    read_sources, refused_devices, rewrite_fields, set_device_digests, set_device_heads, \
    write_device, write_sources

if TYPE_CHECKING:
    from .sqlite_read import Database


# Files being imported or compared: quick_check when small, structure only when large.
_THEIRS_CHECK = "auto"


def export_devices(catalog, names: Iterable[str], path: str | Path, *,
                   overwrite: bool = False) -> Path:
    """Write the named devices of ``catalog`` and the sources they cite to a new device
    database at ``path``; written to a temporary name first, so a failure leaves no file.
    Devices are copied file to file in SQL (store.copy_devices) from each layer that reads
    a file, one by one from a layer held in memory."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise DeviceEditError(f"{path} already exists; not overwriting it")
    picked: dict[str, list[str]] = {"user": [], "shipped": []}
    for name in names:
        summary, layer = catalog.resolve_with_layer(name)
        picked[layer].append(normalize_name(summary.name))
    if not any(picked.values()):
        raise DeviceEditError("nothing to export: name at least one device")
    layers = {"user": catalog.user_db, "shipped": catalog.shipped_db}
    files = {layer: backing_file(layers[layer]) for layer, keys in picked.items() if keys}
    try:
        _write_export(catalog, path, picked, layers, files)
    except sqlite3.Error as exc:     # a full disk...: the temporary file is gone
        raise write_error(path, exc) from None
    return path


def _write_export(catalog, path: Path, picked, layers, files) -> None:
    with new_database_replacing(path) as db, ExitStack() as stack:
        for layer, file in files.items():
            if file is not None:
                stack.enter_context(attached_read_only(db, file, layer))
        # A new file, filled with devices and the rows that name them: nothing to check
        # against but what the same statements write (schema.foreign_keys_unchecked).
        with foreign_keys_unchecked(db), db.atomic(), digest_triggers_suspended(db):
            sources: dict[str, str] = {}
            for layer, file in files.items():
                keys = sorted(set(picked[layer]))
                if file is not None:
                    with reading(file):
                        cited = copy_devices(db, layer, keys)
                else:
                    cited = set()
                    for key in keys:
                        device = catalog.raw_device(key, layer)
                        write_device(db, device)
                        cited.update(r[2] for rs in device.values.values() for r in rs if r[2])
                have = read_sources(layers[layer])
                for key in sorted(cited):
                    if key in have:
                        sources.setdefault(key, have[key])
                copy_calibrations(layers[layer], db, keys)   # they travel with their device
            write_sources(db, sources)


def _mine_entries(catalog) -> dict:
    """name_lower -> (database, devices row) over the catalog, user over shipped."""
    mine: dict = {}
    for db in (catalog.shipped_db, catalog.user_db):
        if db is not None:
            mine.update((k, (db, e)) for k, e in read_index(db).items())
    return mine


def _compare_catalog(catalog, theirs_db: Database,
                     path, for_merge: bool = False) -> tuple[Comparison, dict[str, str]]:
    """The comparison, and their sources under the keys they get here."""
    with reading(path):
        theirs_sources = read_sources(theirs_db)
        theirs_index = read_index(theirs_db)
        refused, problems = refused_devices(theirs_db, path)
    for key in refused:             # neither compared nor merged: reported
        theirs_index.pop(key, None)
    renamed = plan_sources(catalog.sources(), theirs_sources)
    cmp = compare_stored(
        _mine_entries(catalog), theirs_db, theirs_index, renamed=renamed,
        mine_label=str(catalog.user_path), theirs_label=str(path),
        guard=lambda db: reading(path) if db is theirs_db else nullcontext(),
        for_merge=for_merge)
    cmp.report = with_declined(with_conflicts(cmp.report, _chosen_defaults(cmp, catalog)),
                               _declined(catalog.user_db))
    if problems:
        cmp.report = replace(cmp.report, problems=tuple(problems))
    return cmp, {renamed.get(k, k): c for k, c in theirs_sources.items()}


def _declined(db) -> set[tuple[str, str, str]]:
    """The conflicts the user answered "keep mine" (merge.declined_key), from the user
    database (none in a file older than the table)."""
    if db is None or "declined_conflicts" not in db.table_names():
        return set()
    return set(db.execute(
        "SELECT device, field, theirs_digest FROM declined_conflicts").fetchall())


def _with_calibrations(catalog, theirs_db, path, report) -> CalibrationChanges:
    """The report with the calibration differences of the devices compared."""
    mine: dict = {}
    for _, db in reversed(catalog.layers()):      # shipped first, the user's shadow it
        mine.update(read_calibrations(db))
    with reading(path):
        theirs, problems = read_checked_calibrations(theirs_db, path)
    return compare_calibrations(mine, theirs, report, problems)


def _chosen_defaults(cmp: Comparison, catalog) -> dict[tuple[str, str], str]:
    """(device, field) -> reason, for the fields taking theirs would change a default the
    user chose: mine is a user copy of a shipped device whose default for that field is
    no longer the shipped one (the user picked another record), and theirs has another.

    The shipped device is the common ancestor the records alone lack. A device with no
    shipped counterpart has none, so there a default moved by theirs is taken as their
    edit (as merge.py's rules say)."""
    if catalog.shipped_db is None:
        return {}
    candidates = {}
    for change in cmp.report.devices:
        key = normalize_name(change.name)
        entry = cmp.mine_entries.get(key)
        if entry is None or entry[0] is not catalog.user_db:
            continue
        fields = [c for c in change.fields if c.status == THEIRS and changes_default(c)]
        if fields:
            candidates[key] = (change.name, fields)
    if not candidates or catalog.shipped_db is None:
        return {}
    shipped_index = read_index(catalog.shipped_db)
    wanted = {shipped_index[k].id: [c.field for c in fields]
              for k, (_, fields) in candidates.items() if k in shipped_index}
    if not wanted:
        return {}
    stored = read_records(catalog.shipped_db, wanted)
    made = {}
    for key, (name, fields) in candidates.items():
        if key not in shipped_index:
            continue
        shipped = stored[shipped_index[key].id].values
        for c in fields:
            known = [r for r in shipped.get(c.field, []) if r[0] is not None]
            mine = [r for r in (c.mine.raws if isinstance(c.mine, Records) else c.mine)
                    if r[0] is not None]
            if known and default_content(known) != default_content(mine):
                made[(name, c.field)] = ("your default differs from the shipped one (you "
                                         "chose it) and theirs would replace it")
    return made


def compare_with_file(catalog, path: str | Path) -> MergeReport:
    """Compare the device database at ``path`` with the catalog (user over shipped)."""
    theirs_db = open_database(path, integrity=_THEIRS_CHECK)
    try:
        with gc_paused():
            report = _compare_catalog(catalog, theirs_db, path)[0].report
            return _with_calibrations(catalog, theirs_db, path, report).report
    finally:
        theirs_db.close()


def merge_file(catalog, path: str | Path, resolutions: Mapping | None = None, *,
               policy: str | None = None) -> MergeReport:
    """Merge the file at ``path`` into the catalog's user database in one transaction;
    see Catalog.merge."""
    theirs_db = open_database(path, integrity=_THEIRS_CHECK)
    compared = file_stamp(catalog.user_path)      # the user file as it is being compared
    with gc_paused():
        try:    # (their file stays open until written: it may be a private copy)
            cmp, theirs_sources = _compare_catalog(catalog, theirs_db, path, for_merge=True)
            calibrations = _with_calibrations(catalog, theirs_db, path, cmp.report)
            resolve = make_resolver(calibrations.report, resolutions, policy)
            cal_writes, cal_open = plan_calibrations(calibrations, resolve)
            try:
                plan = _plan_merge(cmp, resolve, theirs_db, catalog, path)
            except UnresolvedConflicts as exc:
                everything = list(exc.conflicts) + cal_open
                raise UnresolvedConflicts(conflict_message(everything), everything) from None
            if cal_open:
                raise UnresolvedConflicts(conflict_message(cal_open), cal_open)
            # the conflicts answered "keep mine": not asked again for the same content
            declined = sorted({declined_key(c) for c in cmp.report.conflicts
                               if resolve(c.device, c.field) == MINE})
            if plan or cal_writes or declined:
                _write_merge(catalog, plan, theirs_sources, utc_timestamp(), compared, cal_writes,
                             declined)
        finally:
            theirs_db.close()
    report = calibrations.report
    return replace(report, applied=True)


def _write_merge(catalog, plan: MergePlan, theirs_sources: dict[str, str],
                 now: str, compared: tuple | None, cal_writes=(), declined=()) -> None:
    shipped_sources = read_sources(catalog.shipped_db) if catalog.shipped_db is not None else {}
    db = catalog.user_for_write()
    copy_from = plan.copy_from
    attach = (attached_read_only(db, copy_from, "theirs") if plan.copied and copy_from is not None
              else nullcontext())
    # New devices copied in bulk: each record's device is the one its INSERT joins, and a
    # merge deletes no device, so foreign keys go unchecked (schema.foreign_keys_unchecked).
    unchecked = foreign_keys_unchecked(db) if plan.copied else nullcontext()
    with unchecked, attach, db.atomic():
        have = read_sources(db)     # holds a read lock: the file cannot change from here on
        if compared is None or file_stamp(catalog.user_path) != compared:
            _refuse_if_changed(db, plan)
        needed: dict[str, str | None] = {}

        def cite_keys(keys: Iterable[str | None]) -> None:
            for k in keys:
                if k and k not in have and k not in needed:
                    needed[k] = theirs_sources.get(k, shipped_sources.get(k))

        def cite(records: Iterable[tuple]) -> None:
            cite_keys(r[2] for r in records)

        for key, device, is_new, from_shipped, digest in plan.whole:
            for records in device.values.values():
                cite(records)
            fresh = is_new or from_shipped
            write_device(db, RawDevice(device.kind, device.name, device.aliases,
                                       device.family, "imported" if fresh else device.origin,
                                       device.values, now if fresh else device.created, now),
                         digest=digest)
        cite_keys({r[2] for rewrite in plan.rewrites for r in rewrite[2]})
        with digest_triggers_suspended(db):   # every digest touched is set below
            if plan.copied:
                with reading(plan.copy_named or copy_from):  # type: ignore[arg-type]  # set with copied
                    cite_keys(copy_devices(db, "theirs", plan.copied, renamed=plan.renamed,
                                           imported_at=now))
            if plan.rewrites:
                rewrite_fields(db, plan.rewrites)
            set_device_heads(db, plan.heads)
            set_device_digests(db, [(now, d, i) for i, d in sorted(plan.digests.items())])

        def device_id_of(key: str) -> int:
            row = db.execute("SELECT id FROM devices WHERE name_lower = ?", [key]).fetchone()
            if row is not None:
                return row[0]
            # A shipped device whose calibrations alone changed: copied here, as any edit.
            device = read_raw(catalog.shipped_db, [key])[key]
            for records in device.values.values():
                cite(records)
            return write_device(db, RawDevice(device.kind, device.name, device.aliases,
                                              device.family, "imported", device.values,
                                              now, now))
        write_calibrations(db, cal_writes, device_id_of)
        write_sources(db, {k: c for k, c in needed.items() if c is not None})
        db.conn.executemany("INSERT OR IGNORE INTO declined_conflicts (device, field, "
                            "theirs_digest, declined) VALUES (?, ?, ?, ?)",
                            [(*key, now) for key in declined])


def _refuse_if_changed(db, plan: MergePlan) -> None:
    """Nothing is overwritten unseen: the devices compared must be as they were then."""
    # (A device that had no digest cannot be checked this way; it is rewritten whole from
    # rows read moments ago, as every merged device was before digests.)
    current = read_digests(db, plan.expected)
    changed = [i for i, digest in plan.expected.items() if current.get(i) != digest]
    taken = [k for k in plan.absent if db.execute(
        "SELECT 1 FROM devices WHERE name_lower = ?", [k]).fetchone()]
    if changed or taken:
        raise DeviceEditError(
            f"{len(changed) + len(taken)} device(s) of your database changed while merging "
            f"(another gpumodeler?); nothing was written, merge again")


def diff(a: str | Path, b: str | Path) -> MergeReport:
    """Compare two device database files: ``a`` as mine, ``b`` as theirs, including the
    devices only ``a`` has (status "missing")."""
    dbs = []
    try:
        for path in (a, b):
            dbs.append(open_database(path, integrity=_THEIRS_CHECK))
        mine_db, theirs_db = dbs
        with gc_paused():
            with reading(a):
                mine_sources, mine_index = read_sources(mine_db), read_index(mine_db)
            with reading(b):
                theirs_sources, theirs_index = read_sources(theirs_db), read_index(theirs_db)
            report = compare_stored(
                {k: (mine_db, e) for k, e in mine_index.items()}, theirs_db, theirs_index,
                renamed=plan_sources(mine_sources, theirs_sources), mine_label=str(a),
                theirs_label=str(b), with_missing=True,
                guard=lambda db: reading(a if db is mine_db else b)).report
            with reading(a):
                mine_cal, mine_problems = read_checked_calibrations(mine_db, a)
            with reading(b):
                theirs_cal, theirs_problems = read_checked_calibrations(theirs_db, b)
            return compare_calibrations(mine_cal, theirs_cal, report,
                                        mine_problems + theirs_problems).report
    finally:
        for db in dbs:
            db.close()
