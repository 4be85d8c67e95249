"""The device catalog: the user's database layered over the read-only shipped one.

Lookups are case-insensitive: an exact name, then an exact alias, then an unambiguous
prefix of a name or alias. A user (or imported) device with the name of a shipped one
shadows it. Edits go to the user database only, created on first write (whole, in one
step: schema.publish_new_database); editing a shipped device first copies it there. Every
write is one transaction, made holding the user database's writer lock (locking.py), so
gpumodeler processes take turns; an SQLite error while writing (a full disk, a lock held too
long) is one DatabaseAccessError naming the file. A hot journal a killed write left beside
the user database is rolled back before it is read (schema.recover_in_place).

Locations: the shipped database is ``GPUMODELER_DEVICES_DB``, else ``devices.db`` at the
repository root in a source checkout or ``gpumodeler/data/devices.db`` in an installed
package (see default_shipped_db_path); the user database is ``GPUMODELER_USER_DB`` or ``user-devices.db`` in the
platform's user-data folder. Explicit paths override both.
"""
from __future__ import annotations

import builtins
import difflib
import functools
import os
import sqlite3
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

import platformdirs

from .errors import (AmbiguousDevice, DatabaseAccessError, DatabaseFormatError,
                     DeviceEditError, DeviceNotFound)
from .fields import FIELDS, KINDS, USER_PROVENANCES, record_problem
from .mapping import normalize_name, raw_from_record, record_to_latency_table
from .records import DeviceRecord, DeviceSummary, ValueRecord
from .locking import write_lock
from .schema import file_stamp, open_database, publish_new_database, utc_timestamp, write_error
from .store import (RawDevice, delete_device, read_device, read_raw, read_sources,
                    read_summaries, write_device, write_sources)

if TYPE_CHECKING:  # (merging is imported where a database is merged: not by a look-up)
    from .sqlite_read import Database
    from .merge import MergeReport

ENV_DEVICES_DB = "GPUMODELER_DEVICES_DB"
ENV_USER_DB = "GPUMODELER_USER_DB"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent      # the gpumodeler package


def _source_checkout() -> Path | None:
    """The repository root when gpumodeler runs from a source checkout (an editable install
    included): the package's parent folder holds pyproject.toml and resources/devices."""
    root = _PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "resources" / "devices").is_dir():
        return root
    return None


def default_shipped_db_path() -> Path:
    """Where the shipped database is looked for when nothing overrides it: devices.db at
    the root of a source checkout (what `make devices-db` builds, even if a stale copy sits
    in gpumodeler/data), else gpumodeler/data/devices.db inside the installed package.
    Never the folder above an installed package (site-packages), whatever lies there."""
    env = os.environ.get(ENV_DEVICES_DB)
    if env:
        return Path(env)
    root = _source_checkout()
    if root is not None:
        return root / "devices.db"
    return _PACKAGE_DIR / "data" / "devices.db"


def default_user_db_path() -> Path:
    """The user's own device database (created on first write)."""
    env = os.environ.get(ENV_USER_DB)
    if env:
        return Path(env)
    return platformdirs.user_data_path("gpumodeler", appauthor=False) / "user-devices.db"


def _writes(method):
    """A Catalog method that writes the user database: run inside Catalog.writing()."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self.writing():
            return method(self, *args, **kwargs)
    return locked


class Catalog:
    """Devices from the shipped database and the user's, as one searchable catalog.

    ``shipped_db``: a path, or None for the default location. A missing database at the
    default location means an empty shipped layer (``shipped_path`` is then None); a
    missing explicit one is an error. ``use_shipped=False`` leaves the shipped layer out.
    """

    def __init__(self, user_db: str | Path | None = None, shipped_db: str | Path | None = None,
                 *, use_shipped: bool = True):
        self.user_path = Path(user_db) if user_db is not None else default_user_db_path()
        explicit = shipped_db is not None or bool(os.environ.get(ENV_DEVICES_DB))
        path = Path(shipped_db) if shipped_db is not None else default_shipped_db_path()
        self._shipped: Database | None = None
        self.shipped_path: Path | None = None
        if use_shipped and (explicit or path.exists()):
            self._shipped = open_database(path)
            self.shipped_path = path
        self._user: Database | None = None
        self._user_writable = False
        # The user file as it was when fully checked: reopening it for writing, unchanged,
        # needs no second integrity check (0.2 s for a 40 MB file).
        self._user_checked: tuple | None = None
        self._entries_cache: dict[str, tuple[DeviceSummary, str]] | None = None
        self._writing_depth = 0
        if self.user_path.exists():
            try:
                self._open_user()
            except BaseException:
                self.close()
                raise

    def _open_user(self) -> None:
        """Open the user database read-only, a hot journal a killed write left rolled back
        first (schema.recover_in_place)."""
        self._user = open_database(self.user_path, recover=True)
        self._user_checked = file_stamp(self.user_path)

    @property
    def shipped_db(self) -> Database | None:
        """The shipped database, read-only; None when not used."""
        return self._shipped

    @property
    def user_db(self) -> Database | None:
        """The user database as open now (None before it exists); write through
        :meth:`user_for_write`."""
        return self._user

    # --- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        for db in (self._shipped, self._user):
            if db is not None:
                db.close()
        self._shipped = self._user = None
        self._entries_cache = None
        self._closed = True

    def __enter__(self) -> "Catalog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def user_for_write(self) -> Database:
        """The user database opened for writing (created when missing); the caller writes
        inside :meth:`writing`."""
        if not self._user_writable:
            if self._user is not None:
                self._user.close()
                self._user = None
            if not self.user_path.exists():
                try:
                    self.user_path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise DatabaseAccessError(
                        f"{self.user_path}: cannot create its folder ({exc.strerror})") from None
                publish_new_database(self.user_path)
            unchanged = (self._user_checked is not None
                         and file_stamp(self.user_path) == self._user_checked)
            self._user = open_database(self.user_path, writable=True,
                                       integrity="structure" if unchanged else "full")
            self._user_writable = True
        self._entries_cache = None
        assert self._user is not None  # opened above
        return self._user

    @contextmanager
    def writing(self):
        """The block writes the user database: it holds the writer lock (locking.py), so
        other gpumodeler processes wait for it, and reads the user database afresh when
        another process wrote it since; an SQLite error (disk full, locked too long, read-only
        file) becomes one DatabaseAccessError naming the file, the transaction rolled back.
        Re-entrant."""
        if self._writing_depth:
            self._writing_depth += 1
            try:
                yield
            finally:
                self._writing_depth -= 1
            return
        with write_lock(self.user_path):
            self._writing_depth = 1
            try:
                self._reload_if_changed()
                yield
            except sqlite3.Error as exc:
                raise write_error(self.user_path, exc) from None
            except OSError as exc:
                raise write_error(self.user_path, exc) from None
            finally:
                self._writing_depth = 0

    def _reload_if_changed(self) -> None:
        """Another process wrote the user database since it was read: read it again (what
        is compared and written must be what is there now)."""
        if self._user_writable:
            return
        stamp = file_stamp(self.user_path)
        if stamp is not None and stamp == self._user_checked:
            return
        if self._user is None and not self.user_path.exists():
            return
        if self._user is not None:
            self._user.close()
            self._user = None
        self._entries_cache = None
        if self.user_path.exists():
            self._open_user()

    def layers(self) -> list[tuple[str, Database]]:
        """The open databases as ``(layer, database)``: the user's first, then the shipped one."""
        return [(name, db) for name, db in (("user", self._user), ("shipped", self._shipped))
                if db is not None]

    # --- reading --------------------------------------------------------------------

    def _entries(self) -> dict[str, tuple[DeviceSummary, str]]:
        """name_lower -> (summary, layer), user entries shadowing shipped ones."""
        if getattr(self, "_closed", False):
            raise DatabaseAccessError("the device catalog was closed; open it again to look devices up")
        if self._entries_cache is None:
            shipped = read_summaries(self._shipped) if self._shipped is not None else {}
            user = read_summaries(self._user) if self._user is not None else {}
            entries = {k: (s, "shipped") for k, s in shipped.items()}
            for key, summary in user.items():
                if key in shipped:
                    summary = replace(summary, shadows_shipped=True)
                entries[key] = (summary, "user")
            self._entries_cache = dict(sorted(entries.items()))
        return self._entries_cache

    def list(self, kind: str | None = None) -> list[DeviceSummary]:
        """Every device (of ``kind``: gpu, link, host or latency_table), in name order."""
        if kind is not None and kind not in KINDS:
            raise DeviceEditError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        return [s for s, _ in self._entries().values() if kind is None or s.kind == kind]

    def search(self, text: str) -> builtins.list[DeviceSummary]:
        """Devices whose name, alias, family, architecture or compute capability contains
        ``text`` (case-insensitive)."""
        needle = normalize_name(text)
        out = []
        for summary, _ in self._entries().values():
            hay = [summary.name, *summary.aliases, summary.family, summary.architecture,
                   summary.compute_capability]
            if any(h is not None and needle in normalize_name(h) for h in hay):
                out.append(summary)
        return out

    def resolve(self, name: str) -> DeviceSummary:
        """The device ``name`` designates (exact name, exact alias, unambiguous prefix)."""
        return self.resolve_with_layer(name)[0]

    def resolve_with_layer(self, name: str) -> tuple[DeviceSummary, str]:
        """:meth:`resolve`, with the layer (``"user"`` or ``"shipped"``) the device is read from."""
        query = normalize_name(name)
        entries = self._entries()
        if not query:
            raise DeviceNotFound("no device name given")
        if query in entries:
            return entries[query]
        by_alias = [e for e in entries.values()
                    if query in (normalize_name(a) for a in e[0].aliases)]
        if len(by_alias) == 1:
            return by_alias[0]
        if by_alias:
            names = [e[0].name for e in by_alias]
            raise AmbiguousDevice(f"'{name}' is an alias of several devices: "
                                  f"{', '.join(names)}; give the full name", names)
        by_prefix = [e for e in entries.values()
                     if any(normalize_name(n).startswith(query)
                            for n in (e[0].name, *e[0].aliases))]
        if len(by_prefix) == 1:
            return by_prefix[0]
        if by_prefix:
            names = [e[0].name for e in by_prefix]
            shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more"
                                            if len(names) > 10 else "")
            raise AmbiguousDevice(f"'{name}' matches several devices: {shown}; "
                                  f"give more of the name", names)
        candidates = self._closest(query)
        hint = (f"; did you mean: {', '.join(candidates)}" if candidates
                else "; see 'gpumodeler devices list'")
        raise DeviceNotFound(f"no device named '{name}'{hint}", candidates)

    def _closest(self, query: str, n: int = 5) -> builtins.list[str]:
        entries = self._entries()
        keys: dict = {}
        for key, (summary, _) in entries.items():
            for label in (summary.name, *summary.aliases):
                keys.setdefault(normalize_name(label), summary.name)
        found = [keys[k] for k in keys if query in k]
        found += [keys[k] for k in difflib.get_close_matches(query, list(keys), n=n,
                                                             cutoff=0.6)]
        return builtins.list(dict.fromkeys(found))[:n]

    def get(self, name: str) -> DeviceRecord:
        """The full record of the device ``name`` designates; raises DeviceNotFound or
        AmbiguousDevice (listing candidates)."""
        summary, layer = self.resolve_with_layer(name)
        db = self._user if layer == "user" else self._shipped
        device = read_device(db, normalize_name(summary.name), summary.shadows_shipped)
        if device is None:   # its name and its lookup key (name_lower) disagree
            path = self.user_path if layer == "user" else self.shipped_path
            raise DatabaseFormatError(f"{path}: a damaged device database (device "
                                      f"{summary.name!r} is listed but cannot be read)")
        return device

    def latency_table_keys(self) -> builtins.list[str]:
        """The keys (names) of every latency table in the catalog, in name order."""
        return [s.name for s in self.list("latency_table")]

    def latency_table(self, key: str):
        """The latency table ``key`` (a latency_table device's name, or exactly one of its
        aliases) as core's LatencyTable; unknown values stay unknown. Raises
        DeviceNotFound listing the keys there are. No prefix matching: a table is named
        exactly, as a kernel graph names it."""
        query = normalize_name(key)
        entries = self._entries()
        found = entries.get(query)
        if found is None or found[0].kind != "latency_table":
            by_alias = [e for e in entries.values() if e[0].kind == "latency_table"
                        and query in (normalize_name(a) for a in e[0].aliases)]
            found = by_alias[0] if len(by_alias) == 1 else None
        if found is None:
            keys = self.latency_table_keys()
            raise DeviceNotFound(
                f"unknown latency table '{key}': the device database has no table of "
                f"that name; tables: "
                f"{', '.join(keys) or 'none'}", keys)
        summary, layer = found
        db = self._user if layer == "user" else self._shipped
        return record_to_latency_table(
            read_device(db, normalize_name(summary.name), summary.shadows_shipped))

    def sources(self) -> dict[str, str]:
        """Source key -> citation over both databases (the user's citation wins)."""
        out = read_sources(self._shipped) if self._shipped is not None else {}
        if self._user is not None:
            out.update(read_sources(self._user))
        return out

    def raw_device(self, key: str, layer: str) -> RawDevice:
        """The stored rows of the device with lookup key ``key`` in ``layer``."""
        db = self._user if layer == "user" else self._shipped
        return read_raw(db, [key])[key]

    # --- editing --------------------------------------------------------------------

    @_writes
    def add_device(self, kind: str, name: str, *, aliases: Iterable[str] = (),
                   family: str | None = None,
                   values: Mapping[str, object] | None = None,
                   shadow: bool = False) -> DeviceRecord:
        """Add a user device. ``values`` maps fields to a plain value (recorded with user
        provenance and the field's unit), a ValueRecord or a list of ValueRecords.
        A name already in the user database is refused; a shipped name too, unless
        ``shadow=True`` (the new entry then hides the shipped one)."""
        if kind not in KINDS:
            raise DeviceEditError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if not str(name).strip():
            raise DeviceEditError("a device needs a non-empty name")
        key = normalize_name(name)
        existing = self._entries().get(key)
        if existing is not None and (existing[1] == "user" or not shadow):
            where = "your devices" if existing[1] == "user" else "the shipped devices"
            raise DeviceEditError(
                f"'{existing[0].name}' already exists in {where}; edit it with set_value"
                + ("" if existing[1] == "user" else " (or add with shadow=True)"))
        raw_values = {}
        for field_name, given in (values or {}).items():
            unit = self._check_field(kind, field_name)
            records = given if isinstance(given, (builtins.list, tuple)) else [given]
            raws = []
            for r in records:
                if not isinstance(r, ValueRecord):
                    r = ValueRecord(r, unit, provenance="user")  # type: ignore[arg-type]  # checked next
                self._check_record(kind, name, field_name, r)
                raws.append(raw_from_record(r))
            if len(raws) == 1:
                raws[0] = raws[0][:6] + (True,) + raws[0][7:]
            elif sum(r[6] for r in raws) != 1:
                raise DeviceEditError(f"{name}.{field_name}: exactly one record must be "
                                      f"the default")
            raw_values[field_name] = raws
        now = utc_timestamp()
        device = RawDevice(kind, " ".join(str(name).split()), tuple(aliases), family, "user",
                           raw_values, now, now)
        db = self.user_for_write()
        with db.atomic():
            write_device(db, device)
        return self.get(device.name)

    def _check_field(self, kind: str, field_name: str) -> str:
        if field_name not in FIELDS[kind]:
            raise DeviceEditError(f"unknown field '{field_name}' for a {kind}; valid: "
                                  f"{', '.join(FIELDS[kind])}")
        return FIELDS[kind][field_name]

    def _check_record(self, kind: str, device: str, field_name: str, r: ValueRecord):
        unit = FIELDS[kind][field_name]
        if r.unit != unit:
            raise DeviceEditError(f"{device}.{field_name}: unit must be '{unit}', got "
                                  f"'{r.unit}'")
        why = record_problem(r.unit, r.value, r.provenance)
        if why:
            raise DeviceEditError(f"{device}.{field_name}: {why}")

    def editable(self, name: str) -> tuple[RawDevice, Database]:
        """The device as a RawDevice in the user database, copied there if shipped."""
        summary, layer = self.resolve_with_layer(name)
        key = normalize_name(summary.name)
        device = self.raw_device(key, layer)
        db = self.user_for_write()
        if layer == "shipped":
            used = {r[2] for rs in device.values.values() for r in rs if r[2]}
            shipped_sources = read_sources(self._shipped)
            mine = read_sources(db)
            clash = [k for k in used if k in mine and mine[k] != shipped_sources.get(k)]
            if clash:
                raise DeviceEditError(
                    f"source key(s) {', '.join(sorted(clash))} of shipped '{summary.name}' "
                    f"are cited differently in your database; rename them there first")
            now = utc_timestamp()
            device = RawDevice(device.kind, device.name, device.aliases, device.family,
                               "user", device.values, now, now)
            with db.atomic():
                write_sources(db, {k: shipped_sources[k] for k in used
                                   if k in shipped_sources})
                write_device(db, device)
        return device, db

    @_writes
    def set_value(self, name: str, field_name: str, value, unit: str | None = None, *,
                  provenance: str = "user", source: str | None = None,
                  citation: str | None = None, source_text: str | None = None,
                  where: str | None = None, note: str | None = None,
                  make_default: bool = True) -> DeviceRecord:
        """Record a value for ``field_name`` with user, measurement or calibration
        provenance. The field's other records stay (as non-default when ``make_default``),
        except unknown placeholders and an earlier record from the same provenance, source
        and place, which this one replaces. ``source`` is a source key; a new key needs its
        ``citation``. Editing a shipped device makes a user copy that shadows it."""
        if provenance not in USER_PROVENANCES:
            raise DeviceEditError(f"provenance must be one of {', '.join(USER_PROVENANCES)}"
                                  f", got {provenance!r}")
        summary = self.resolve(name)
        expected = self._check_field(summary.kind, field_name)
        record = ValueRecord(value, unit or expected, source, where, provenance, note,
                             True, source_text)
        self._check_record(summary.kind, summary.name, field_name, record)
        known = self.sources()
        if source is not None and source not in known and not citation:
            raise DeviceEditError(f"source '{source}' is not known; give its citation")
        if source is not None and citation and known.get(source, citation) != citation:
            raise DeviceEditError(f"source '{source}' is already cited as "
                                  f"'{known[source]}'; use another key")
        # The user copy of a shipped device and the edit: one transaction.
        with self.user_for_write().atomic():
            device, db = self.editable(summary.name)
            same = (provenance, source, where, source_text)
            # Unknown placeholders and this origin's earlier record give way; the rest stay.
            others = [r for r in device.values.get(field_name, [])
                      if r[0] is not None and (r[4], r[2], r[3], r[7]) != same]
            new = raw_from_record(record)
            if make_default or not any(r[6] for r in others):
                others = [r[:6] + (False,) + r[7:] for r in others]
            else:
                new = new[:6] + (False,) + new[7:]
            values = dict(device.values)
            values[field_name] = others + [new]
            device = RawDevice(device.kind, device.name, device.aliases, device.family,
                               device.origin, values, device.created, utc_timestamp())
            with db.atomic():
                if source is not None and citation:
                    write_sources(db, {source: citation})
                elif source is not None and source not in read_sources(db):
                    write_sources(db, {source: known[source]})
                write_device(db, device)
        return self.get(device.name)

    @_writes
    def set_default(self, name: str, field_name: str, index: int) -> DeviceRecord:
        """Make record ``index`` (0-based, in shown order) the default of ``field_name``."""
        current = self.get(name)
        records = current.values.get(field_name, ())
        if not 0 <= index < len(records):
            raise DeviceEditError(f"{current.name}.{field_name} has {len(records)} record(s);"
                                  f" index {index} is out of range")
        # The user copy of a shipped device and the edit: one transaction.
        with self.user_for_write().atomic():
            device, db = self.editable(current.name)
            values = dict(device.values)
            values[field_name] = [r[:6] + (i == index,) + r[7:]
                                  for i, r in enumerate(device.values[field_name])]
            device = RawDevice(device.kind, device.name, device.aliases, device.family,
                               device.origin, values, device.created, utc_timestamp())
            with db.atomic():
                write_device(db, device)
        return self.get(device.name)

    @_writes
    def delete_device(self, name: str) -> None:
        """Delete a user or imported device (a shipped one it shadowed shows again)."""
        summary, layer = self.resolve_with_layer(name)
        if layer != "user":
            raise DeviceEditError(f"'{summary.name}' is a shipped device; shipped devices "
                                  f"are read-only")
        db = self.user_for_write()
        with db.atomic():
            delete_device(db, normalize_name(summary.name))

    # --- sharing (implemented in sharing.py) ------------------------------------------

    def export(self, names: Iterable[str], path: str | Path, *,
               overwrite: bool = False) -> Path:
        """Write the named devices and the sources they cite to a standalone device
        database at ``path`` (same schema). An existing file is kept unless ``overwrite``."""
        from .sharing import export_devices  # lazy: sharing loads 50 ms of modules a look-up never needs
        return export_devices(self, names, path, overwrite=overwrite)

    def import_file(self, path: str | Path) -> MergeReport:
        """What merging the device database at ``path`` would do; writes nothing."""
        from .sharing import compare_with_file  # lazy: sharing loads 50 ms of modules a look-up never needs
        return compare_with_file(self, path)

    @_writes
    def merge(self, path: str | Path, resolutions: Mapping | None = None, *,
              policy: str | None = None) -> MergeReport:
        """Merge the device database at ``path`` into the user database, in one
        transaction. Conflicts need a choice (mine, theirs or both) from ``resolutions``
        (``{device: {field: choice}}``, "*" as wildcard) or ``policy``; an open conflict
        raises UnresolvedConflicts listing them all, and nothing is written."""
        from .sharing import merge_file  # lazy: sharing loads 50 ms of modules a look-up never needs
        return merge_file(self, path, resolutions, policy=policy)


def diff(a: str | Path, b: str | Path) -> MergeReport:
    """Compare two device database files (``a`` mine, ``b`` theirs); see sharing.diff."""
    from .sharing import diff as diff_files  # lazy: sharing loads 50 ms of modules a look-up never needs
    return diff_files(a, b)


__all__ = ["Catalog", "diff", "default_shipped_db_path", "default_user_db_path",
           "ENV_DEVICES_DB", "ENV_USER_DB", "DatabaseFormatError"]
