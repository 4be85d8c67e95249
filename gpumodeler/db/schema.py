"""Opening device database files safely: checked before anything is written, upgraded by
the numbered migrations of migrations.py (re-exported here), created at the current schema.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
import threading
import weakref
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from gpumodeler import __version__
from gpumodeler.core.errors import ModelError

from .atomic_files import create_temp, fsync_path, output_file, release, remove_stale_temps
from .errors import DatabaseAccessError, DatabaseFormatError, damaged_content, is_bad_text, \
    is_damaged_schema
from .fields import FORMAT
# The schema and its migrations, re-exported: callers and tests import them from here.
from .migrations import (DIGEST_TRIGGERS, KNOWN_MIGRATIONS, MIGRATION_SET,  # noqa: F401
                         MIGRATIONS_TABLE, SCHEMA_VERSION, set_meta_version,
                         digest_triggers_suspended, foreign_keys_unchecked, migrations)

# (re-exported: callers and tests import them from here)
from .sqlite_files import (BUSY_TIMEOUT_S, LOG_SUFFIXES, SQLITE_MAGIC, pending_log,  # noqa: F401
                           read_only_uri)
from .sqlite_read import ReadDatabase, table_columns

if TYPE_CHECKING:
    import sqlite_utils

    from .sqlite_read import Database

# SQLite's default page cache is 2 MB; comparing or merging a 50 MB database then re-reads
# (and, when writing, spills) pages all the time. Pages are allocated only when used.
CACHE_KIB = 64 * 1024


class _PrivateCopy(ReadDatabase):
    """A read-only database on a copy of a file in a private temporary folder, removed
    when closed (or collected)."""

    def __init__(self, conn: sqlite3.Connection, folder: str, original: Path):
        super().__init__(conn)
        self.original = original  # type: ignore[assignment]  # (None on the class)
        self._remove = weakref.finalize(self, shutil.rmtree, folder, True)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._remove()


def read_only_connection(path: Path) -> ReadDatabase:
    """``path`` opened read-only, never creating a file beside it (-shm, -wal, -journal)
    whatever its journal mode. A file with a -wal or -journal beside it (pending_log) is
    copied with it into a private temporary folder, where SQLite applies the log (or
    rolls back the journal of a killed write) to the copy, which is read instead and
    removed when the connection closes. Raises sqlite3.Error as sqlite3.connect does,
    DatabaseAccessError when no copy can be made."""
    path = Path(path)
    log = pending_log(path)
    if log is None:
        return ReadDatabase(sqlite3.connect(read_only_uri(path), uri=True,
                                            timeout=BUSY_TIMEOUT_S))
    folder = tempfile.mkdtemp(prefix="gpumodeler-read-")
    try:
        copy = Path(folder) / path.name
        # The file first, then its log: a page a writer changes in between had its old
        # content written to the journal before, so the copy rolls back consistently.
        shutil.copyfile(path, copy)
        try:
            shutil.copyfile(log, copy.with_name(copy.name + log.name[len(path.name):]))
        except FileNotFoundError:     # the writer finished meanwhile: the file is whole
            pass
        fixer = sqlite3.connect(copy.as_uri() + "?mode=rw", uri=True)
        try:
            fixer.execute("SELECT count(*) FROM sqlite_master").fetchone()
            fixer.execute("PRAGMA journal_mode = DELETE").fetchone()
        finally:
            fixer.close()
        conn = sqlite3.connect(read_only_uri(copy), uri=True)
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise DatabaseAccessError(f"{path}: cannot read it: its {log.name} must be applied to "
                                  f"a private copy, which failed ({exc.strerror or exc}); free "
                                  f"some space in the temporary folder") from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return _PrivateCopy(conn, folder, path)


def recover_in_place(path: Path) -> None:
    """Roll back the hot journal a killed write left beside ``path`` (or apply its WAL
    log), as SQLite does for a connection that can write: before a read of the user's own
    database, so that it is read as it is and later read-only opens need no copy.
    DatabaseAccessError when the file cannot be opened for writing or stays locked."""
    log = pending_log(path)
    if log is None:
        return
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True,
                               timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise _recovery_error(path, log, exc) from None
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise _recovery_error(path, log, exc) from None
    finally:
        conn.close()


def _recovery_error(path: Path, log: Path, exc: sqlite3.Error) -> ModelError:
    if _is_corruption(exc):
        return DatabaseFormatError(f"{path}: the database is corrupted ({exc})")
    if is_locked(exc):
        return write_error(path, exc)
    return DatabaseAccessError(
        f"{path}: an interrupted write left {log.name} beside it, which only a process that "
        f"can write the file rolls back, and it cannot be opened for writing ({exc}); make "
        f"the file and its folder writable (or run gpumodeler as their owner) and run the "
        f"command again")


def is_locked(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(exc)


def write_error(path, exc: BaseException) -> ModelError:
    """The one-line error for an SQLite error met while writing ``path`` (the transaction
    was rolled back: the file holds what it held before)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if isinstance(exc, sqlite3.Error) and _is_corruption(exc):
        return DatabaseFormatError(f"{path}: the database is corrupted ({exc})")
    if name.startswith("SQLITE_FULL") or "database or disk is full" in str(exc):
        return DatabaseAccessError(f"{path}: the disk is full (SQLite: {exc}); nothing was "
                                   f"changed: free some space and run the command again")
    if is_locked(exc):
        return DatabaseAccessError(
            f"{path}: locked by another program for more than {BUSY_TIMEOUT_S:g} s ({exc}); "
            f"nothing was changed: wait for it to finish (or close the program that holds it) "
            f"and run the command again")
    if name.startswith("SQLITE_READONLY") or "readonly database" in str(exc):
        return DatabaseAccessError(f"{path}: cannot write it ({exc}); make the file and its "
                                   f"folder writable and run the command again")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return DatabaseAccessError(f"{path}: cannot write it ({reason}); nothing was changed")


def _connect_read_only(path: Path, private: bool = True) -> ReadDatabase:
    """See read_only_connection; ``private=False`` reads the file itself
    even with a log beside it (the user's own file, just recovered: a log there now is a
    live writer's, which SQLite's locks handle; a copy would be a stale snapshot)."""
    # Always by URI: a connection opened so also takes URIs in ATTACH (attached_read_only).
    if private:
        db = read_only_connection(path)
    else:
        db = ReadDatabase(sqlite3.connect(read_only_uri(path), uri=True,
                                          timeout=BUSY_TIMEOUT_S))
    _tune(db.conn)
    return db


def _connect_writable(path: Path) -> sqlite_utils.Database:
    """``path`` opened for writing, by URI like the read-only connections."""
    db = writable_database(sqlite3.connect(path.resolve().as_uri(), uri=True,
                                           timeout=BUSY_TIMEOUT_S))
    _tune(db.conn)
    return db


def _tune(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")


def writable_database(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """``conn`` as the sqlite-utils database that writers use (transactions, migrations)."""
    # lazy: only a command that writes a database (or migrates a copy) imports sqlite-utils
    import sqlite_utils
    return sqlite_utils.Database(conn, execute_plugins=False)


def backing_file(db: Database) -> Path | None:
    """The file ``db`` reads, or None for a database in memory (a new one, or the upgraded
    copy of an older file that open_database made). A file-backed database that
    open_database returned is at the current schema."""
    for _, name, file in db.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return Path(file) if file else None
    return None


@contextmanager
def attached_read_only(db: Database, path: Path, alias: str):
    """``path`` attached to ``db`` as schema ``alias``, read-only, for the length of the
    block (INSERT ... SELECT between files, in C instead of row by row in Python). Must be
    entered and left outside a transaction (SQLite cannot attach or detach inside one)."""
    db.execute(f"ATTACH DATABASE ? AS {alias}", [read_only_uri(Path(path))])
    try:
        yield alias
    finally:
        db.execute(f"DETACH DATABASE {alias}")


@contextmanager
def new_database_replacing(path: Path, *, inputs=()):
    """A new device database in a temporary file next to ``path``, which replaces ``path``
    in one step when the block succeeds; on any failure the temporary file is removed and
    ``path`` is left as it was (:func:`atomic_files.output_file`, which also refuses a
    ``path`` that is one of ``inputs`` and names the file in every error). The block fills
    the database; it is closed afterwards."""
    with output_file(path, inputs=inputs, mode="path") as tmp:
        # Nobody reads the temporary file before it replaces ``path``: its transactions
        # need not reach the disk one by one (an fsync of the journal and of the file for
        # each). output_file syncs it once, whole, before the rename that publishes it.
        db = _create(tmp, durable=False, shown=path)
        try:
            yield db
        finally:
            db.close()


def publish_new_database(path: Path) -> None:
    """Create the device database ``path`` in one step: made whole in a temporary file
    beside it (locked, so an interrupted creation's leftover is removed by the next,
    atomic_files.py), synced, then linked to ``path`` (a hard link never replaces a file),
    so no process ever sees a half-created database. When another process created
    ``path`` first, its file is kept. DatabaseAccessError when the folder cannot take it."""
    remove_stale_temps(path)
    try:
        tmp, fd = create_temp(path)
    except OSError as exc:
        raise DatabaseAccessError(f"{path}: cannot create it ({exc.strerror or exc})") from None
    try:
        create_database(tmp, durable=False, empty_ok=True).close()
        fsync_path(tmp)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass                        # made meanwhile by another process: theirs stays
        except OSError:                 # no hard links here (some file systems)
            if not path.exists():
                os.replace(tmp, path)
        fsync_path(path.parent)
    except OSError as exc:
        raise DatabaseAccessError(f"{path}: cannot create it ({exc.strerror or exc})") from None
    finally:
        tmp.unlink(missing_ok=True)
        release(fd)


def create_database(path: str | Path, *, durable: bool = True,
                    empty_ok: bool = False) -> sqlite_utils.Database:
    """A new, empty device database at ``path`` (which must not exist, or be an empty
    file when ``empty_ok``), fully migrated.

    ``durable=False``: no transaction waits for the disk (``PRAGMA synchronous = OFF``:
    a dozen fsyncs for the migrations alone, two more per later transaction), for a
    temporary file its owner syncs once before using it (new_database_replacing). A
    crash can leave such a file damaged, so it must never be the user's database."""
    path = Path(path)
    if path.exists() and not (empty_ok and path.stat().st_size == 0):
        raise DatabaseFormatError(f"{path}: already exists; not overwriting it")
    return _create(path, durable=durable, shown=path)


def _create(path: Path, *, durable: bool, shown: Path) -> sqlite_utils.Database:
    """create_database in ``path`` (new, or an empty file); errors name ``shown``."""
    try:
        db = _connect_writable(path)
    except sqlite3.Error as exc:
        raise DatabaseAccessError(f"{shown}: cannot create it ({exc})") from None
    try:
        if not durable:
            db.execute("PRAGMA synchronous = OFF")
        migrations.apply(db)
        with db.atomic():
            set_meta_version(db)
    except sqlite3.Error as exc:
        db.close()
        path.unlink(missing_ok=True)
        raise DatabaseAccessError(f"{shown}: cannot create it ({exc})") from None
    except BaseException:
        db.close()
        raise
    return db


def memory_database() -> sqlite_utils.Database:
    """A new, empty device database in memory (for comparisons and tests)."""
    db = writable_database(sqlite3.connect(":memory:"))
    migrations.apply(db)
    with db.atomic():
        set_meta_version(db)
    return db


# Integrity checks when opening a file. "full": PRAGMA quick_check, which reads every page
# (about 0.2 s for 40 MB here). "structure": the header's size against the file's, the
# schema and the meta table; damage elsewhere surfaces when a page is read (see reading()).
# "auto": full up to QUICK_CHECK_MAX_BYTES, structure beyond (files being imported).
INTEGRITY_CHECKS = ("full", "structure", "auto")
QUICK_CHECK_MAX_BYTES = 8 * 1024 * 1024

# Columns of version 1 that every reader relies on.
_REQUIRED_COLUMNS = {
    "sources": {"key", "citation"},
    "devices": {"id", "kind", "name", "name_lower", "aliases", "family", "origin", "created",
                "modified"},
    "device_values": {"id", "device_id", "field", "value", "unit", "source_key",
                      "source_text", "source_where", "provenance", "note", "is_default",
                      "row_order"},
}


# Tables later migrations add, with the migration that adds them and the columns readers
# rely on: a file that ran the migration must have them (a damaged schema text renames a
# column and the file still passes quick_check; reading it then failed with "no such
# column" as an internal error).
_LATER_COLUMNS = {
    "calibrations": ("m005_calibrations", {
        "id", "device_id", "kind", "subject", "label", "parameters", "residuals",
        "mape_percent", "loo_mape", "loo_median_ape", "measurements_name",
        "measurements_sha256", "created", "note", "is_current"}),
    "declined_conflicts": ("m006_declined_conflicts", {
        "device", "field", "theirs_digest", "declined"}),
}


def _check_size(path: Path) -> None:
    """Refuse a file shorter than its header says (truncated), without reading pages."""
    with open(path, "rb") as fh:
        header = fh.read(100)
        size = os.fstat(fh.fileno()).st_size
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if len(header) < 100 or page_size < 512 or page_size & (page_size - 1):
        raise DatabaseFormatError(f"{path}: the database is corrupted (invalid header)")
    pages = int.from_bytes(header[28:32], "big")
    # The page count is trusted only when it was written with the current change counter.
    expected = pages * page_size if pages and header[24:28] == header[92:96] else page_size
    if size < expected:
        raise DatabaseFormatError(f"{path}: the database is corrupted (truncated: {size} "
                                  f"bytes, the header says {expected})")


#: SHA-256 digests of the files that passed the full check (quick_check, no binary
#: values) in this process, the latest last: opening a file with the same bytes again (a
#: script or a test suite calling the CLI's main() many times, a window re-opening its
#: catalog) skips reading and checking every page again, which was about 3 ms of each open
#: of the shipped database. The same bytes pass the same checks, so a changed file, however
#: small the change, is checked again. At most FULLY_CHECKED_MAX are kept.
_fully_checked: dict[bytes, None] = {}
_fully_checked_lock = threading.Lock()
FULLY_CHECKED_MAX = 64


def content_digest(path: Path) -> bytes | None:
    """The SHA-256 of the bytes a read of ``path`` sees: the file's, when nothing is beside
    it that SQLite would also read (a -wal or -journal file, even an empty one); None when
    something is, or the file cannot be read."""
    if any(os.path.lexists(path.with_name(path.name + suffix)) for suffix in LOG_SUFFIXES):
        return None
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").digest()
    except OSError:
        return None


def _remember_checked(digest: bytes | None) -> None:
    if digest is None:
        return
    with _fully_checked_lock:   # the GUI opens databases from worker threads too
        _fully_checked.pop(digest, None)
        _fully_checked[digest] = None
        while len(_fully_checked) > FULLY_CHECKED_MAX:
            del _fully_checked[next(iter(_fully_checked))]


def _inspect(db: Database, path: Path, integrity: str = "full") -> bool:
    """Check ``db`` is a device database we can read; True when migrations are pending.
    A "full" check of a file whose bytes passed it before in this process (content_digest)
    checks only what the other levels check."""
    if integrity not in INTEGRITY_CHECKS:
        raise ValueError(f"integrity must be one of {INTEGRITY_CHECKS}, got {integrity!r}")
    if integrity == "auto":
        integrity = "full" if path.stat().st_size <= QUICK_CHECK_MAX_BYTES else "structure"
    digest = content_digest(path) if integrity == "full" else None
    if digest is not None and digest in _fully_checked:
        integrity = "structure"   # these bytes passed the full check already
    try:
        if integrity == "full":
            check = db.execute("PRAGMA quick_check").fetchall()
            if [tuple(r) for r in check] != [("ok",)]:
                problem = "; ".join(str(r[0]) for r in check[:3])
                raise DatabaseFormatError(f"{path}: the database is corrupted ({problem})")
        else:
            _check_size(path)
        tables = set(db.table_names())
        if "meta" not in tables:
            raise DatabaseFormatError(
                f"{path}: an SQLite database but not a gpumodeler device database "
                f"(no meta table)")
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        applied = migrations.applied_names(db) if MIGRATIONS_TABLE in tables else []
        columns = {t: table_columns(db, t)
                   for t in (*_REQUIRED_COLUMNS, *_LATER_COLUMNS) if t in tables}
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if is_locked(exc):      # another program writing it, for too long: not damage
            raise write_error(path, exc) from None
        raise DatabaseFormatError(f"{path}: the database is corrupted ({exc})") from exc
    except KeyError as exc:   # sqlite-utils reading a migrations table that lost a column
        raise DatabaseFormatError(f"{path}: a damaged gpumodeler device database (its "
                                  f"migrations table lacks column {exc})") from None
    if meta.get("format") != FORMAT:
        raise DatabaseFormatError(
            f"{path}: not a gpumodeler device database (format {meta.get('format')!r}, "
            f"expected {FORMAT!r})")
    version = check_version(meta, applied, KNOWN_MIGRATIONS, path)
    required = dict(_REQUIRED_COLUMNS)
    required.update((t, needed) for t, (migration, needed) in _LATER_COLUMNS.items()
                    if migration in applied)
    for table, needed in required.items():
        lacking = sorted(needed - columns.get(table, set()))
        if lacking:
            what = (f"no {table} table" if table not in columns
                    else f"{table} lacks {', '.join(lacking)}")
            raise DatabaseFormatError(f"{path}: a damaged gpumodeler device database ({what})")
    if integrity == "full":   # every page is read anyway: look for binary data too
        _refuse_binary_values(db, path)
        _remember_checked(digest)
    return version < SCHEMA_VERSION or len(applied) < len(KNOWN_MIGRATIONS)


def _refuse_binary_values(db: Database, path: Path) -> None:
    """gpumodeler never stores binary data (BLOBs) in a device database: one in a column
    (a damaged record header, another program's edit) would reach the user as b'...'."""
    for table, columns in _REQUIRED_COLUMNS.items():
        test = " OR ".join(f"typeof({c}) = 'blob'" for c in sorted(columns))
        try:
            row = db.execute(f"SELECT 1 FROM {table} WHERE {test} LIMIT 1").fetchone()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise DatabaseFormatError(f"{path}: the database is corrupted ({exc})") from exc
        if row is not None:
            raise DatabaseFormatError(f"{path}: a damaged gpumodeler device database (binary "
                                      f"data in table {table}, where text or numbers belong)")


def check_version(meta: dict, applied: list[str], known_migrations, path: Path, *,
                  error=DatabaseFormatError, what: str = "schema") -> int:
    """The schema version a file's meta table records; ``error`` when it is unreadable or
    newer than this gpumodeler reads (a higher version, or a migration it does not know).
    ``known_migrations``: this gpumodeler's, whose count is the version it writes;
    ``what`` names the schema in the message ("project schema")."""
    current = len(known_migrations)
    try:
        version = int(meta.get("version", ""))
    except (TypeError, ValueError, OverflowError):
        raise error(f"{path}: unreadable schema version {meta.get('version')!r} "
                    f"(expected a whole number 1..{current})") from None
    if version < 1:
        raise error(f"{path}: unreadable schema version {meta.get('version')!r} "
                    f"(expected a whole number 1..{current})")
    unknown = [name for name in applied if name not in known_migrations]
    if version > current or unknown:
        raise error(
            f"{path}: written by a newer gpumodeler ({what} version {version}, app "
            f"{meta.get('app_version', '?')}); this gpumodeler {__version__} reads up to "
            f"version {current}. Update gpumodeler to open it")
    return version


def _is_corruption(exc: sqlite3.Error | UnicodeDecodeError) -> bool:
    if isinstance(exc, UnicodeDecodeError):  # SQLite's message quoting a damaged schema
        return True
    name = getattr(exc, "sqlite_errorname", "") or ""
    return type(exc) is sqlite3.DatabaseError or name.startswith(("SQLITE_CORRUPT",
                                                                   "SQLITE_NOTADB"))


@contextmanager
def reading(path: str | Path):
    """Report a damaged page met while reading ``path`` as DatabaseFormatError (a file
    opened with the structural check only has not had every page read)."""
    try:
        yield
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if _is_corruption(exc):
            raise DatabaseFormatError(f"{path}: the database is corrupted ({exc})") from exc
        if is_bad_text(exc) or is_damaged_schema(exc):
            raise damaged_content(path, exc) from None
        raise       # (the block may write another file: a full disk there is not this one's)
    except DatabaseFormatError as exc:
        raise damaged_content(path, exc) from None


def file_stamp(path: Path) -> tuple | None:
    """Size, modification time and SQLite change counter: equal stamps mean nobody wrote
    the file in between (so a check made at the first stamp still holds). None when that
    cannot be told: no file, or a WAL-mode file (its writes go to the -wal file first)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(28)
            st = os.fstat(fh.fileno())
    except OSError:
        return None
    if len(header) < 28 or header[18] == 2:
        return None
    return (st.st_size, st.st_mtime_ns, header[24:28])


def check_header(path: Path, what_file: str = "a gpumodeler device database",
                 error=DatabaseFormatError, expected: str = "") -> None:
    """Refuse, without opening it with SQLite, a file that is missing or not SQLite.

    ``what_file`` names what the file should be in the messages ("a gpumodeler project"),
    ``error`` is the exception class to raise, ``expected`` an optional hint."""
    hint = f" ({expected})" if expected else ""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a folder (directory), not {what_file}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror})") from None
    if head != SQLITE_MAGIC:
        what = "an empty file" if not head else "not an SQLite database"
        raise error(f"{path}: {what}, so not {what_file}{hint}")


def open_database(path: str | Path, *, writable: bool = False,
                  integrity: str = "full", recover: bool = False) -> Database:
    """Open an existing device database, checked before anything can be written.

    Read-only opening (``mode=ro``) never changes the file: when its schema is older, the
    migrations run on an in-memory copy. Writable opening migrates the file itself, each
    migration in its own transaction. Raises DatabaseFormatError for a file that is not
    ours, corrupted or from a newer version, leaving it untouched. ``integrity``: "full"
    (PRAGMA quick_check), "structure" or "auto" (see INTEGRITY_CHECKS); callers reading
    a file checked only for its structure wrap their reads in ``reading(path)``.

    A read-only open never creates a file beside ``path``: a file with a WAL log or a
    journal beside it is read from a private copy (read_only_connection). ``recover``
    (always so when ``writable``): the user's own file, whose hot journal a killed write
    left is first rolled back in place (recover_in_place).
    """
    path = Path(path)
    check_header(path)
    if writable or recover:
        recover_in_place(path)
    try:
        ro = _connect_read_only(path, private=not (writable or recover))
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        if is_locked(exc):
            raise write_error(path, exc) from None
        what = "the database is corrupted" if _is_corruption(exc) else "cannot open it"
        raise DatabaseFormatError(f"{path}: {what} ({exc})") from exc
    try:
        pending = _inspect(ro, path, integrity)
    except BaseException:
        ro.close()
        raise
    if not writable and not pending:
        return ro
    if not writable:
        copy = sqlite3.connect(":memory:")
        ro.conn.backup(copy)
        ro.close()
        db = writable_database(copy)
    else:
        ro.close()
        try:
            db = _connect_writable(path)
        except sqlite3.Error as exc:
            raise DatabaseAccessError(f"{path}: cannot open it for writing ({exc})") from None
    if pending:
        try:
            migrations.apply(db)
            with db.atomic():
                set_meta_version(db)
        except sqlite3.Error as exc:
            db.close()
            raise DatabaseFormatError(f"{path}: cannot upgrade its schema ({exc})") from exc
        except BaseException:
            db.close()
            raise
    return db


def utc_timestamp() -> str:
    """Now, in UTC, as the databases store times: ``2024-05-01T12:00:00Z``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
