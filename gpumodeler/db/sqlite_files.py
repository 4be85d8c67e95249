"""SQLite files as files: the header, and how to open one read-only without creating
anything beside it. Standard library only, so that reading an Nsight Systems export, or
telling a CSV file from one, does not load the database layer (sqlite-utils and numpy: a
fifth of a second of start-up); :mod:`gpumodeler.db.schema` re-exports these."""
from __future__ import annotations

from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path) -> bool:
    """Whether ``path`` starts with the SQLite header (whatever its suffix)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` read-only without leaving anything next to it, for a
    file with no -wal or -journal beside it (read_only_connection copies the others).

    SQLite opens a WAL-mode file (header byte 18 = 2) with a -wal and a -shm file beside it,
    even read-only, and leaves them there. When the file has no -wal file (or an empty
    one), everything is in the file itself, so it is opened ``immutable``: no locks, no
    files created."""
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        with open(path, "rb") as fh:
            header = fh.read(20)
    except OSError:
        return uri
    wal_log = path.with_name(path.name + "-wal")
    try:
        logged = wal_log.stat().st_size > 0
    except OSError:
        logged = False
    if len(header) == 20 and header[18] == 2 and not logged:   # (an empty log adds nothing)
        uri += "&immutable=1"
    return uri


#: How long a connection waits for another process's lock before "database is locked".
BUSY_TIMEOUT_S = 20.0
#: The files beside a database that SQLite reads with it (a WAL log, a rollback journal).
LOG_SUFFIXES = ("-wal", "-journal")


def pending_log(path: Path) -> Path | None:
    """The -wal or -journal file beside ``path`` that reading it would have to use: a
    WAL log (SQLite would create a -shm to read it), or a rollback journal (hot when a
    write was killed: only a connection that can write rolls it back). None when there
    is none."""
    for suffix in LOG_SUFFIXES:
        log = path.with_name(path.name + suffix)
        try:
            with open(log, "rb") as fh:
                head = fh.read(1)
        except OSError:
            continue
        # (A journal whose header is still zero was never synced: the file was not
        # changed yet, and SQLite reads past it; so does a read-only connection.)
        if head and (suffix == "-wal" or head != b"\0"):
            return log
    return None
