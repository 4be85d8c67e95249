"""Temporary files for saves that replace a file in one step, and the clean-up of those an
interrupted save left behind.

A save writes ``.NAME.XXXXXXXX.tmp`` (8 hex digits) next to ``NAME`` and renames it over
``NAME`` when it is complete. A save killed before the rename (power cut, ``kill -9``, a
crash of the interpreter) cannot remove its temporary file; the next save of the same file
does. To tell such a leftover from the temporary file of a save still running in another
process, a save holds an exclusive lock on its temporary file until it is done: ``flock``
on POSIX (released by the system when the process dies), and on Windows the open file
itself, which cannot be deleted while it is open. A leftover is removed only when that
lock can be taken (POSIX) or the file can be deleted (Windows), with the SQLite journal
files next to it.

:func:`output_file` is the one way a command writes an output file (reports, charts,
tables, imported kernels, exported device databases, screenshots): it refuses an output that
is one of the command's input files, writes a temporary file as above, syncs it and renames
it over the target, and leaves no temporary file whatever fails. Every failure is an
:class:`OutputError` naming the file and the reason.

This module needs only the standard library and gpumodeler.core's errors (the CLI's table
writer uses it too).
"""
from __future__ import annotations

import errno
import io
import os
import re
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path

from gpumodeler.core.errors import InvalidParameter

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_SIDE_FILES = ("-journal", "-wal", "-shm")


#: The most bytes of the target's name a temporary name repeats: a file name may have 255
#: bytes, and ``.NAME.XXXXXXXX.tmp-journal`` adds 22 to NAME.
_NAME_ROOM = 200


def _stem(target: Path) -> str:
    """The target's name as temporary names repeat it: cut to :data:`_NAME_ROOM` bytes of
    UTF-8, so that a temporary name is a valid name whenever the target's is."""
    name = target.name
    data = name.encode("utf-8", "surrogateescape")
    if len(data) <= _NAME_ROOM:
        return name
    return data[:_NAME_ROOM].decode("utf-8", "surrogateescape")


def temp_name(target: Path) -> Path:
    """A fresh temporary name next to ``target``."""
    return target.with_name(f".{_stem(target)}.{secrets.token_hex(4)}.tmp")


def _pattern(target: Path):
    return re.compile(re.escape(f".{_stem(target)}.") + r"[0-9a-f]{8}\.tmp")


def create_temp(target: Path) -> tuple[Path, int]:
    """Create a new temporary file next to ``target`` and lock it; returns its path and the
    open descriptor holding the lock (close it with :func:`release` when the save is over,
    after the rename). Raises FileExistsError after 100 name collisions, OSError when the
    folder cannot take a new file."""
    for _ in range(100):
        tmp = temp_name(target)
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: never contended
        return tmp, fd
    raise FileExistsError(f"cannot create a temporary file next to {target}")


def release(fd: int) -> None:
    """End a save's hold on its temporary file."""
    try:
        os.close(fd)
    except OSError:
        pass


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove the temporary files interrupted saves of ``target`` left next to it (see the
    module docstring); returns those removed. Never raises: what cannot be removed stays."""
    pattern = _pattern(target)
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(target.parent) if pattern.fullmatch(e.name)]
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if _remove_if_abandoned(path):
            removed.append(path)
            for suffix in _SIDE_FILES:
                try:
                    os.unlink(f"{path}{suffix}")
                except OSError:
                    pass
    return removed


def _remove_if_abandoned(path: Path) -> bool:
    if fcntl is None:  # pragma: no cover - Windows: a file open in a running save stays
        try:
            os.unlink(path)
            return True
        except OSError:
            return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a save in progress holds it
            return False
        try:
            os.unlink(path)
            return True
        except OSError:
            return False
    finally:
        os.close(fd)


# -- output files ------------------------------------------------------------------------------

class OutputError(InvalidParameter):
    """An output file that must not or cannot be written: the message names it (and the
    input it would destroy) and says why."""


def _shown(path, limit: int = 120) -> str:
    text = os.fspath(path)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _cannot_write(shown: str, exc: BaseException) -> OutputError:
    """The error for a write the system refused: the file and the system's reason."""
    reason = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
    return OutputError(f"cannot write {shown}: {reason or type(exc).__name__}")


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same path once symbolic links,
    ``.`` and ``..`` are resolved, or the same inode (a hard link)."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_not_input(path, inputs) -> None:
    """OutputError when output ``path`` is one of ``inputs``: paths, or ``(path, what)``
    pairs where ``what`` says what the command reads it as ("the project file"). None,
    ``""`` and ``"-"`` (standard input) are skipped."""
    for item in inputs:
        name, what = item if isinstance(item, tuple) else (item, "the input file")
        if name is None or os.fspath(name) in ("", "-"):
            continue
        if same_file(path, name):
            raise OutputError(
                f"refusing to write {_shown(path)}: it is {what} {_shown(name)}, an input of "
                f"this command, which writing would destroy; give another output file name")


class _FdWriter(io.RawIOBase):
    """Raw writes to a descriptor (os.write); a failure is an OutputError naming the file."""

    def __init__(self, fd: int, shown: str):
        super().__init__()
        self._fd = fd
        self._shown = shown

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        try:
            return os.write(self._fd, data)
        except BrokenPipeError:  # a pipe's reader is gone (| head): as for standard output
            raise
        except OSError as exc:
            raise _cannot_write(self._shown, exc) from None


def _open_fd(fd: int, mode: str, shown: str, encoding: str, newline: str | None):
    binary = io.BufferedWriter(_FdWriter(fd, shown), buffer_size=1 << 16)
    if mode == "wb":
        return binary
    return io.TextIOWrapper(binary, encoding=encoding, newline=newline)


#: SQLite's messages for a file it cannot write (the disk, not the data).
_SQLITE_WRITE_ERRORS = ("disk is full", "disk I/O error", "readonly database",
                        "unable to open database file")

_MODES = ("w", "wb", "path")


@contextmanager
def output_file(path, *, inputs=(), mode: str = "w", encoding: str = "utf-8",
                newline: str | None = "\n"):
    """Write the output file ``path`` in one step; the block writes it.

    ``mode`` "w" yields a text file, "wb" a binary one, "path" the temporary file's path
    for a writer that opens it itself (SQLite; the file exists, empty). The output must not
    be any of ``inputs`` (see :func:`check_not_input`). The block writes a temporary file
    in the same folder (a name unique to this write, :func:`create_temp`); when it ends
    without an error the file is synced and renamed over ``path`` (a symbolic link is
    followed: its target is replaced), keeping the permissions of the file it replaces.
    Whatever ends it otherwise (an exception, a full disk, Ctrl+C) the temporary file and
    its SQLite journals are removed and ``path`` is left as it was. A special file (a pipe,
    a terminal, /dev/null) cannot be replaced and is written directly.

    Every failure to write is an OutputError with the file's name and the system's
    reason: a missing folder, a folder, a name too long, no permission, a read-only or full
    file system."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
    shown = _shown(path)
    target, info = _checked(path, inputs)
    if info is not None and not stat.S_ISREG(info.st_mode):
        if mode == "path":
            raise OutputError(f"cannot write {shown}: it is not a regular file")
        with _special(target, shown, mode, encoding, newline) as fh:
            yield fh
        return
    remove_stale_temps(target)  # left by writes of this file that were killed mid-way
    try:
        tmp, fd = create_temp(target)
    except OSError as exc:
        raise _cannot_write(shown, exc) from None
    done = False
    try:
        if mode == "path":
            import sqlite3  # (the writer of such a file; text outputs need not load it)
            try:
                yield tmp
            except sqlite3.OperationalError as exc:
                if not any(m in str(exc) for m in _SQLITE_WRITE_ERRORS):
                    raise
                raise _cannot_write(shown, exc) from None
        else:
            with _closing(_open_fd(fd, mode, shown, encoding, newline)) as fh:
                yield fh
        try:
            os.fsync(fd)
            if info is not None:  # keep the permissions the user gave the file
                os.chmod(tmp, stat.S_IMODE(info.st_mode))
            os.replace(tmp, target)
        except OSError as exc:
            raise _cannot_write(shown, exc) from None
        done = True
        fsync_folder(target.parent)
    finally:
        if not done:
            for name in (str(tmp), *(f"{tmp}{s}" for s in _SIDE_FILES)):
                try:
                    os.unlink(name)
                except OSError:
                    pass
        release(fd)


def check_output(path, inputs=()) -> None:
    """What :func:`output_file` checks before it writes anything, for a command that
    checks its output before long work: OutputError when ``path`` is empty, one of
    ``inputs``, a folder, in a folder that does not exist, a name too long, or a file we
    may not write (which a rename could replace all the same)."""
    _checked(path, inputs)


def _checked(path, inputs) -> tuple[Path, os.stat_result | None]:
    """The file ``path`` names (symbolic links resolved, but for a special file) and its
    status (None when it does not exist yet), once checked as check_output says."""
    text = os.fspath(path)
    shown = _shown(text)
    if not text.strip():
        raise OutputError("an output needs a file name, got an empty one")
    check_not_input(text, inputs)
    target = Path(os.path.realpath(text))
    try:
        info = os.stat(text)  # through links, /dev/stdout's to a pipe too
    except FileNotFoundError:
        info = None
        if not target.parent.is_dir():
            raise OutputError(f"cannot write {shown}: the folder {_shown(target.parent)} "
                              f"does not exist") from None
    except OSError as exc:  # a name too long, a file as a folder, a folder we may not search
        raise _cannot_write(shown, exc) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(f"cannot write {shown}: it is a folder; give a file name")
    if info is not None and not os.access(text, os.W_OK):  # a rename would replace it
        raise _cannot_write(shown, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
    if info is not None and not stat.S_ISREG(info.st_mode):
        target = Path(text)  # a special file: opened as given, never replaced
    return target, info


@contextmanager
def _closing(fh):
    """``fh``, closed (so flushed) when the block ends; when the block fails, closed
    without a second error (what could not be written is dropped with the file)."""
    try:
        yield fh
    except BaseException:
        try:
            fh.close()
        except Exception:
            pass
        raise
    fh.close()


@contextmanager
def _special(target: Path, shown: str, mode: str, encoding: str, newline: str | None):
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise _cannot_write(shown, exc) from None
    try:
        with _closing(_open_fd(fd, mode, shown, encoding, newline)) as fh:
            yield fh
    finally:
        os.close(fd)


def write_output(path, data: str | bytes, *, inputs=()) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` with :func:`output_file`; returns ``path``."""
    with output_file(path, inputs=inputs, mode="wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
    return Path(path)


def fsync_path(path: Path) -> None:
    """Flush a file, or a folder after a rename in it, to the disk; best effort (Windows
    cannot open a folder, some file systems cannot sync)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: A rename is made durable by syncing its folder.
fsync_folder = fsync_path
