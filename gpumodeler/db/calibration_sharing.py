"""Calibrations in device export, import reports and merges: a calibration travels with its
device, and differences are reported and resolved like a field's records (merge.py).

Per device and (kind, subject, label), the rows of each side (current flag set aside):
the same on both sides -> nothing; theirs a subset of mine -> keep mine ("mine"); mine a
subset of theirs -> take theirs ("theirs"); anything else, or the same rows with another
current one -> a conflict, resolved with mine, theirs or both (both: every row kept, mine
stays current). The report shows each as a FieldChange of the device whose field is
``calibration KIND SUBJECT [LABEL]`` and whose sides are one line per calibration, so
resolutions name it like any field. Nothing is overwritten unless the report says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpumodeler.core.errors import shown

from .calibrations import (CAL_COLUMNS, DEVICE_KIND, IS_CURRENT, calibration_from_raw,
                           check_raw_calibration, content, has_table, read_calibrations,
                           replace_calibrations)
from .errors import DeviceEditError
from .mapping import normalize_name
from .merge import BOTH, MINE, THEIRS, DeviceChange, FieldChange, MergeReport

PREFIX = "calibration "


def field_name(key: tuple) -> str:
    kind, subject, label = key
    return f"{PREFIX}{kind} {subject} [{label}]"


def is_calibration_field(name: str) -> bool:
    return name.startswith(PREFIX)


def _by_key(rows):
    out: dict[tuple, list[tuple]] = {}
    for r in rows:
        out.setdefault(tuple(r[:3]), []).append(r)
    return out


def _current(rows):
    return next((content(r) for r in rows if r[IS_CURRENT]), None)


def compare_rows(mine: list[tuple], theirs: list[tuple]) -> str | None:
    """None (same), "mine", "theirs" or "conflict" for one key's rows."""
    if not theirs:
        return MINE if mine else None
    if not mine:
        return THEIRS
    set_m, set_t = {content(r) for r in mine}, {content(r) for r in theirs}
    if set_m == set_t:
        return None if _current(mine) == _current(theirs) else "conflict"
    if set_t < set_m:
        return MINE
    if set_m < set_t:
        return THEIRS
    return "conflict"


_SELECT_CHECKED = ", ".join(f"c.{c}" for c in CAL_COLUMNS)


def read_checked_calibrations(db, path) -> tuple[dict[str, tuple[str, list[tuple]]],
                                                  list[str]]:
    """read_calibrations() of a shared file, keeping only what `calibrate --save` would
    store, and the problems found, one line each naming the file, table, row, column and
    what is valid. Every row goes through calibrations.check_raw_calibration (its device's
    kind included); each (device, kind, subject, label) must have exactly one current row.
    A key with any row refused is set aside whole: part of its history would say another
    calibration is current than the file does."""
    if db is None or not has_table(db):
        return {}, []
    rows = db.execute(f"SELECT c.id, d.name_lower, d.name, d.kind, {_SELECT_CHECKED} "
                      "FROM calibrations c JOIN devices d ON d.id = c.device_id "
                      "ORDER BY d.name_lower, c.id").fetchall()
    groups: dict[tuple, list[tuple]] = {}
    names: dict[str, str] = {}
    problems: list[str] = []
    refused: set[tuple] = set()

    def where(row_ids, name, key) -> str:
        rows_text = ", ".join(str(i) for i in row_ids)
        what = " ".join(shown(k, 40) if not isinstance(k, str) else k for k in key)
        return (f"{path}: table calibrations, row{'s' if len(row_ids) > 1 else ''} "
                f"{rows_text} ({name}, calibration {what})")

    for row in rows:
        row_id, name_lower, name, device_kind, raw = row[0], row[1], row[2], row[3], row[4:]
        key = (name_lower, tuple(raw[:3]))
        names[name_lower] = name
        groups.setdefault(key, []).append((row_id, tuple(raw)))
        try:
            check_raw_calibration(raw, name, device_kind)
        except DeviceEditError as exc:
            problems.append(f"{where([row_id], name, key[1])}: {exc}; not imported")
            refused.add(key)
    out: dict[str, tuple[str, list[tuple]]] = {}
    for key, members in groups.items():
        name_lower, ckey = key
        if key in refused:
            if len(members) > 1:
                problems.append(f"{where([i for i, _ in members], names[name_lower], ckey)}: "
                                "set aside with the row refused above")
            continue
        current = [i for i, raw in members if raw[IS_CURRENT]]
        if len(current) != 1:
            rows_text = ", ".join(map(str, current)) or "none"
            problems.append(
                f"{where([i for i, _ in members], names[name_lower], ckey)}: "
                f"{len(current)} current calibrations (rows {rows_text}); exactly one must "
                "be current (is_current = 1); not imported")
            continue
        out.setdefault(name_lower, (names[name_lower], []))[1].extend(r for _, r in members)
    return out, problems


@dataclass
class CalibrationChanges:
    """What the comparison found: per (device key, calibration key) the two sides' rows
    and status, and the calibrations of devices new to mine."""

    report: MergeReport
    changes: dict = field(default_factory=dict)     # (name_lower, key) -> (status, m, t)
    new_devices: dict = field(default_factory=dict)  # name_lower -> rows

    @property
    def conflicts(self) -> list[FieldChange]:
        return [c for c in self.report.conflicts if is_calibration_field(c.field)]


def _describe(name, rows):
    return tuple(_describe_row(name, r) for r in rows)


def _describe_row(name, raw) -> str:
    """One line for a calibration; a row stored before its checks (by an older merge)
    that cannot be read is shown as such, not a crash."""
    try:
        return calibration_from_raw(name, raw).describe()
    except (ValueError, TypeError, AttributeError, KeyError):
        return f"a damaged calibration row ({shown(raw, 120)})"


def compare_calibrations(mine: dict, theirs: dict, report: MergeReport,
                         problems=()) -> CalibrationChanges:
    """``mine``/``theirs``: read_calibrations() results. Adds the calibration differences
    of devices on both sides to ``report`` (a new MergeReport), and ``problems`` (the rows
    read_checked_calibrations refused) to its problems."""
    if problems:
        report = replace(report, problems=tuple(report.problems) + tuple(problems))
    out = CalibrationChanges(report)
    if not mine and not theirs:
        return out          # (no device lookup to build: 10 000 names cost 7 ms)
    status_of = {normalize_name(d.name): d for d in report.devices}
    extra: dict[str, list[FieldChange]] = {}
    for key in sorted(set(mine) | set(theirs)):
        device = status_of.get(key)
        if device is None or device.status == "missing":
            continue
        if device.status == "new":
            if key in theirs:
                out.new_devices[key] = theirs[key][1]
            continue
        m_rows = _by_key(mine.get(key, ("", []))[1])
        t_rows = _by_key(theirs.get(key, ("", []))[1])
        for ckey in sorted(set(m_rows) | set(t_rows)):
            m, t = m_rows.get(ckey, []), t_rows.get(ckey, [])
            status = compare_rows(m, t)
            if status is None:
                continue
            out.changes[(key, ckey)] = (status, m, t)
            extra.setdefault(key, []).append(FieldChange(
                device.name, field_name(ckey), status, _describe(device.name, m),
                _describe(device.name, t)))
    if extra:
        devices = []
        for d in report.devices:
            more = extra.get(normalize_name(d.name))
            if more:
                fields = d.fields + tuple(more)
                status = ("conflicting" if any(f.status == "conflict" for f in fields)
                          else "changed")
                d = DeviceChange(d.name, d.kind, status, fields)
            devices.append(d)
        out.report = replace(report, devices=tuple(devices))
    return out


def without_calibrations(report: MergeReport) -> MergeReport:
    """The report with the calibration fields taken out (what the device merge plans)."""
    devices = []
    for d in report.devices:
        fields = tuple(f for f in d.fields if not is_calibration_field(f.field))
        if fields != d.fields:
            status = ("conflicting" if any(f.status == "conflict" for f in fields)
                      else "changed" if fields else "identical")
            d = DeviceChange(d.name, d.kind, status, fields)
        devices.append(d)
    return replace(report, devices=tuple(devices))


def plan_calibrations(found: CalibrationChanges, resolve) -> tuple[list, list]:
    """(writes, open conflicts): writes are (name_lower, key or None, rows); key None
    writes every calibration of a new device."""
    writes, open_ = [], []
    # Looked up only when a calibration is a conflict: the report's device conflicts (some
    # 13 000 in a large merge) are otherwise not walked at all.
    conflicts = ({(normalize_name(c.device), c.field): c for c in found.conflicts}
                 if any(v[0] not in (MINE, THEIRS) for v in found.changes.values()) else {})
    for name_lower, rows in found.new_devices.items():
        writes.append((name_lower, None, rows))
    for (name_lower, key), (status, m, t) in found.changes.items():
        if status == MINE:
            continue
        if status == THEIRS:
            writes.append((name_lower, key, t))
            continue
        change = conflicts[(name_lower, field_name(key))]
        choice = resolve(change.device, change.field)
        if choice is None:
            open_.append(change)
        elif choice == THEIRS:
            writes.append((name_lower, key, t))
        elif choice == BOTH:
            have = {content(r) for r in m}
            writes.append((name_lower, key, list(m) + [
                r[:IS_CURRENT] + (0,) + r[IS_CURRENT + 1:] for r in t if content(r) not in have]))
    return writes, open_


def write_calibrations(db, writes, device_id_of) -> None:
    """Apply plan_calibrations' writes; ``device_id_of(name_lower)`` gives the user
    database's device id (copying a shipped device there first when needed)."""
    for name_lower, key, rows in writes:
        device_id = device_id_of(name_lower)
        name, kind = db.execute("SELECT name, kind FROM devices WHERE id = ?",
                                [device_id]).fetchone()
        for raw in rows:        # their device's kind was checked; the merged one may differ
            if DEVICE_KIND.get(raw[0]) != kind:
                raise DeviceEditError(
                    f"{name}: their {field_name(tuple(raw[:3]))} belongs to a "
                    f"{DEVICE_KIND.get(raw[0])} and the device stays a {kind}; nothing was "
                    f"merged: take their kind too (--take-theirs kind) to merge it")
        replace_calibrations(db, device_id, key, rows)


def copy_calibrations(src_db, dst_db, keys) -> None:
    """Every calibration of the devices ``keys`` (normalized names) from ``src_db`` to the
    same-named devices of ``dst_db`` (export)."""
    for name_lower, (_, rows) in read_calibrations(src_db, keys).items():
        row = dst_db.execute("SELECT id FROM devices WHERE name_lower = ?",
                             [name_lower]).fetchone()
        if row is not None:
            replace_calibrations(dst_db, row[0], None, rows)
