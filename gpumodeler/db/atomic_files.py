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

This module needs only the standard library (the CLI's table writer uses it too).
"""
from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

_SIDE_FILES = ("-journal", "-wal", "-shm")


def temp_name(target: Path) -> Path:
    """A fresh temporary name next to ``target``."""
    return target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")


def _pattern(target: Path):
    return re.compile(re.escape(f".{target.name}.") + r"[0-9a-f]{8}\.tmp")


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
    removed = []
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
