"""One writer at a time for the user's device database, across processes.

SQLite's own locks protect each transaction, but a merge compares the user database and
then writes what the comparison decided: a second merge that compared before the first
one wrote would find the devices changed under it and refuse. So every write to the user
database (the comparison of a merge included) holds an exclusive lock on ``NAME.lock``
beside it: ``flock``, which the system releases when the process dies, so a killed
gpumodeler never leaves it locked. The holder writes its process id and command into the
file; a process that waits longer than the timeout says who holds it. The holder removes
the file before letting it go; a waiter that then gets the lock of a removed file (the
name no longer leads to it) opens the name again, so two processes never hold locks on
two files of one name, and no file stays beside the database (but the unlocked one of a
killed holder, which the next writer takes and removes).

On systems without ``flock`` (Windows) there is no such lock; SQLite's still applies.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from .errors import DatabaseAccessError

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Seconds a writer waits for another to finish before giving up.
LOCK_TIMEOUT_S = 30.0


def lock_path(database: Path) -> Path:
    return database.with_name(database.name + ".lock")


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 300, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    pid, _, command = text.partition(" ")
    if not pid.isdigit():
        return "another process"
    return f"process {pid}" + (f" ({command})" if command else "")


@contextmanager
def write_lock(database: Path, timeout: float | None = None):
    """Hold the writer lock of ``database`` for the block; DatabaseAccessError, naming
    the file and the holder, after ``timeout`` seconds (LOCK_TIMEOUT_S) of waiting."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    path = lock_path(database)
    deadline = time.monotonic() + timeout
    while True:
        fd = _open_lock(database, path)
        try:
            if _take(fd, database, path, deadline, timeout):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)        # the file was removed or replaced by the last holder: again
    try:
        try:
            os.ftruncate(fd, 0)
            command = " ".join(["gpumodeler", *sys.argv[1:3]])
            os.pwrite(fd, f"{os.getpid()} {command}\n".encode("utf-8", "replace"), 0)
        except OSError:
            pass            # who holds it is a courtesy; the lock is what counts
        yield
    finally:
        try:
            path.unlink()   # while holding it: a waiter then finds it gone and retries
        except OSError:
            pass
        os.close(fd)


def _open_lock(database: Path, path: Path) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise DatabaseAccessError(f"{database}: cannot create its lock file {path.name} "
                                  f"({exc.strerror or exc}); make its folder writable") from None


def _take(fd: int, database: Path, path: Path, deadline: float, timeout: float) -> bool:
    """Lock ``fd``, waiting until ``deadline``; False when, once locked, ``path`` no
    longer names that file (its holder removed it on leaving)."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise DatabaseAccessError(
                    f"{database}: locked by {_holder(fd)}, which has been writing it for "
                    f"more than {timeout:g} s; nothing was changed: wait for it to finish "
                    f"and run the command again") from None
            time.sleep(0.05)
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except OSError:
        return False
