"""Build the shipped device database from the source files, deterministically.

    python -m gpumodeler.db.build_devices resources/devices devices.db

Validates every ``*.json`` file against docs/device-sources.md and reports each violation
with its file, device and field. The same inputs give a byte-identical file: files are read
in name order, devices in file order, ids are assigned in that order, timestamps are the
fixed BUILD_TIMESTAMP (never the clock), and the file is VACUUMed at the end. The output
replaces ``OUT.db`` only once complete, so a failed build leaves the old file intact.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SourceFormatError
from .fields import FIELDS, FORMAT, KINDS, SOURCE_PROVENANCES, UNITS, check_value_type, \
    provenance_for_source
from .mapping import normalize_name
from .schema import MIGRATIONS_TABLE, new_database_replacing
from .store import RawDevice, write_device, write_sources

SOURCE_VERSION = 1
# Shipped rows carry this instead of a clock time, so rebuilding changes no byte.
BUILD_TIMESTAMP = "1970-01-01T00:00:00Z"

_FILE_KEYS = {"format", "version", "family", "sources", "devices"}
_DEVICE_KEYS = {"kind", "name", "aliases", "values"}
_RECORD_KEYS = {"value", "unit", "source", "where", "note", "default", "provenance"}


@dataclass
class SourceFile:
    path: Path
    family: str | None
    sources: dict[str, str]
    devices: list[RawDevice] = field(default_factory=list)


class _Problems:
    def __init__(self):
        self.errors: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}")


def _reject_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _reject_constant(name):
    raise ValueError(f"{name} is not a valid value (use null for unknown)")


def _read_json(path: Path, problems: _Problems):
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(str(path), f"cannot read it ({exc})")
        return None
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicates,
                          parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        problems.add(f"{path}:{exc.lineno}:{exc.colno}", f"invalid JSON: {exc.msg}")
    except ValueError as exc:
        problems.add(str(path), f"invalid JSON: {exc}")
    return None


def _record(raw, kind: str, field_name: str, sources: dict, where: str, problems: _Problems):
    """A raw record tuple, or None after reporting what is wrong with ``raw``."""
    if not isinstance(raw, dict):
        problems.add(where, f"a value record must be an object, got {raw!r}")
        return None
    extra = sorted(set(raw) - _RECORD_KEYS)
    if extra:
        problems.add(where, f"unknown key(s) {', '.join(extra)}; valid: "
                     f"{', '.join(sorted(_RECORD_KEYS))}")
        return None
    ok = True
    if "value" not in raw:
        problems.add(where, "missing 'value' (use null for unknown)")
        ok = False
    value = raw.get("value")
    unit = raw.get("unit")
    expected_unit = FIELDS[kind][field_name]
    if unit is None:
        problems.add(where, f"missing 'unit' (expected {expected_unit!r})")
        ok = False
    elif unit not in UNITS:
        problems.add(where, f"unknown unit {unit!r}; valid: {', '.join(UNITS)}")
        ok = False
    elif unit != expected_unit:
        problems.add(where, f"unit must be {expected_unit!r}, got {unit!r}")
        ok = False
    elif (why := check_value_type(unit, value)) is not None:
        problems.add(where, why)
        ok = False
    source = raw.get("source")
    place = raw.get("where")
    for key in ("source", "where", "note", "provenance"):
        if raw.get(key) is not None and not (isinstance(raw[key], str) and raw[key].strip()):
            problems.add(where, f"'{key}' must be a non-empty string, got {raw[key]!r}")
            ok = False
    if "default" in raw and not isinstance(raw["default"], bool):
        problems.add(where, f"'default' must be true or false, got {raw['default']!r}")
        ok = False
    if source is not None and isinstance(source, str) and source not in sources:
        problems.add(where, f"source {source!r} is not in the file's sources "
                     f"({', '.join(sorted(sources)) or 'none'})")
        ok = False
    if value is not None and (source is None or place is None):
        problems.add(where, "a known value needs both 'source' and 'where'")
        ok = False
    provenance = raw.get("provenance")
    if provenance is not None and provenance not in SOURCE_PROVENANCES:
        problems.add(where, f"provenance must be one of {', '.join(SOURCE_PROVENANCES)}, "
                     f"got {provenance!r}")
        ok = False
    if not ok:
        return None
    if provenance is None:
        provenance = provenance_for_source(source)
    return (value, unit, source, place, provenance, raw.get("note"),
            bool(raw.get("default", False)), None)


def _values(values, kind: str, sources: dict, where: str, problems: _Problems):
    if not isinstance(values, dict):
        problems.add(where, "'values' must be an object of field -> record(s)")
        return {}
    out: dict[str, list[tuple]] = {}
    for field_name, entry in values.items():
        at = f"{where}: field '{field_name}'"
        if field_name not in FIELDS[kind]:
            problems.add(at, f"unknown field for a {kind}; valid: {', '.join(FIELDS[kind])}")
            continue
        entries = entry if isinstance(entry, list) else [entry]
        if not entries:
            problems.add(at, "an empty list; give a record or leave the field out")
            continue
        records = [_record(r, kind, field_name, sources, f"{at}[{i}]" if isinstance(
            entry, list) else at, problems) for i, r in enumerate(entries)]
        if any(r is None for r in records):
            continue
        defaults = sum(r[6] for r in records)
        if len(records) == 1:
            if "default" in entries[0] and not records[0][6]:
                problems.add(at, "a single record is the default; drop '\"default\": false'")
                continue
            records = [records[0][:6] + (True,) + records[0][7:]]
        elif defaults != 1:
            problems.add(at, f"{len(records)} records need exactly one '\"default\": true', "
                         f"found {defaults}")
            continue
        out[field_name] = records
    return out


def load_source_file(path: str | Path, problems: _Problems | None = None) -> SourceFile | None:
    """Read and validate one source file; raises SourceFormatError listing every problem
    (or, with ``problems`` given, records them there and returns None if it is unusable)."""
    own = problems is None
    problems = problems or _Problems()
    path = Path(path)
    before = len(problems.errors)
    data = _read_json(path, problems)
    result = None
    if data is not None:
        result = _check_file(path, data, problems)
    if own and problems.errors:
        raise SourceFormatError(problems.errors)
    return result if len(problems.errors) == before else None


def _check_file(path: Path, data, problems: _Problems) -> SourceFile | None:
    where = str(path)
    if not isinstance(data, dict):
        problems.add(where, "the top level must be an object")
        return None
    extra = sorted(set(data) - _FILE_KEYS)
    if extra:
        problems.add(where, f"unknown top-level key(s) {', '.join(extra)}; valid: "
                     f"{', '.join(sorted(_FILE_KEYS))}")
    if data.get("format") != FORMAT:
        problems.add(where, f"'format' must be {FORMAT!r}, got {data.get('format')!r}")
        return None
    if data.get("version") != SOURCE_VERSION:
        problems.add(where, f"'version' {data.get('version')!r} is not supported "
                     f"(this gpumodeler reads version {SOURCE_VERSION})")
        return None
    family = data.get("family")
    if family is not None and not (isinstance(family, str) and family.strip()):
        problems.add(where, f"'family' must be a non-empty string, got {family!r}")
    sources = data.get("sources", {})
    if not isinstance(sources, dict) or not all(
            isinstance(k, str) and k and isinstance(v, str) and v.strip()
            for k, v in sources.items()):
        problems.add(where, "'sources' must map keys to non-empty citation strings")
        sources = {}
    devices = data.get("devices")
    if not isinstance(devices, list):
        problems.add(where, "'devices' must be a list")
        return None
    out = SourceFile(path, family if isinstance(family, str) else None, dict(sources))
    for i, dev in enumerate(devices):
        at = f"{where}: device #{i + 1}"
        if not isinstance(dev, dict):
            problems.add(at, "a device must be an object")
            continue
        name = dev.get("name")
        if not (isinstance(name, str) and name.strip()):
            problems.add(at, f"'name' must be a non-empty string, got {name!r}")
            continue
        at = f"{where}: device '{name}'"
        extra = sorted(set(dev) - _DEVICE_KEYS)
        if extra:
            problems.add(at, f"unknown key(s) {', '.join(extra)}; valid: "
                         f"{', '.join(sorted(_DEVICE_KEYS))}")
            continue
        kind = dev.get("kind")
        if kind not in KINDS:
            problems.add(at, f"'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
            continue
        aliases = dev.get("aliases", [])
        if not isinstance(aliases, list) or not all(
                isinstance(a, str) and a.strip() for a in aliases):
            problems.add(at, "'aliases' must be a list of non-empty strings")
            continue
        values = _values(dev.get("values", {}), kind, out.sources, at, problems)
        out.devices.append(RawDevice(kind, name, tuple(aliases), out.family, "shipped", values,
                                     BUILD_TIMESTAMP, BUILD_TIMESTAMP))
    return out


def load_sources(src_dir: str | Path) -> list[SourceFile]:
    """Read and validate every ``*.json`` in ``src_dir`` (name order) and check names are
    unique across files; raises SourceFormatError listing every problem."""
    src_dir = Path(src_dir)
    problems = _Problems()
    if not src_dir.is_dir():
        raise SourceFormatError([f"{src_dir}: not a directory of device source files"])
    paths = sorted(src_dir.glob("*.json"), key=lambda p: p.name)
    if not paths:
        raise SourceFormatError([f"{src_dir}: no *.json device source files"])
    files = [f for f in (load_source_file(p, problems) for p in paths) if f is not None]
    names: dict[str, str] = {}
    citations: dict[str, tuple[str, Path]] = {}
    for f in files:
        for dev in f.devices:
            key = normalize_name(dev.name)
            if key in names:
                problems.add(f"{f.path}: device '{dev.name}'",
                             f"name already used in {names[key]} (names are unique, "
                             f"case-insensitive)")
            names[key] = str(f.path)
        for key, citation in f.sources.items():
            if key in citations and citations[key][0] != citation:
                problems.add(f"{f.path}: source '{key}'",
                             f"cited differently in {citations[key][1]}; one key, one citation")
            citations.setdefault(key, (citation, f.path))
    for f in files:
        for dev in f.devices:
            for alias in dev.aliases:
                owner = names.get(normalize_name(alias))
                if owner is not None and normalize_name(alias) != normalize_name(dev.name):
                    problems.add(f"{f.path}: device '{dev.name}'",
                                 f"alias '{alias}' is the name of another device")
    if problems.errors:
        raise SourceFormatError(problems.errors)
    return files


def build(src_dir: str | Path, out_path: str | Path) -> int:
    """Validate ``src_dir`` and write the device database to ``out_path``; returns the
    number of devices. Raises SourceFormatError (nothing written) on invalid sources."""
    files = load_sources(src_dir)
    out_path = Path(out_path)
    count = 0
    with new_database_replacing(out_path) as db:
        with db.atomic():
            sources = {}
            for f in files:
                sources.update(f.sources)
            write_sources(db, sources)
            for f in files:
                for dev in f.devices:
                    count += 1
                    write_device(db, dev, device_id=count)
            db.execute(f"UPDATE {MIGRATIONS_TABLE} SET applied_at = ?", [BUILD_TIMESTAMP])
        db.execute("VACUUM")
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpumodeler.db.build_devices",
        description="Build the device database from device source files.")
    parser.add_argument("src_dir", help="directory of *.json device source files")
    parser.add_argument("out", help="database file to write (replaced when complete)")
    args = parser.parse_args(argv)
    try:
        count = build(args.src_dir, args.out)
    except SourceFormatError as exc:
        for line in exc.errors:
            print(f"error: {line}", file=sys.stderr)
        print(f"{len(exc.errors)} problem(s); {args.out} not written", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {count} devices")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
