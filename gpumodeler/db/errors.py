"""Exceptions of the persistence layer; all are core ModelErrors so the CLI prints one line."""
from __future__ import annotations

import re
import sqlite3
from typing import Sequence

from gpumodeler.core.errors import FormatError, InvalidParameter, ModelError, shown


class DatabaseFormatError(FormatError):
    """A device database that is not ours, corrupted, or written by a newer gpumodeler.

    Raised before anything is written: the file is left byte-for-byte as it was.
    """


class DatabaseAccessError(ModelError):
    """A device database that cannot be created or written (missing folder, permissions)."""


class SourceFormatError(FormatError):
    """Device source files (resources/devices/*.json) that break the documented format.

    ``errors`` holds every problem found, each naming the file, device and field.
    """

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{errors[0]}{more}")


class DeviceNotFound(ModelError):
    """No device of that name or alias; the message lists the closest names."""

    def __init__(self, message: str, candidates: Sequence[str] = ()):
        self.candidates = list(candidates)
        super().__init__(message)


class AmbiguousDevice(ModelError):
    """A name prefix or alias matching several devices; the message lists them."""

    def __init__(self, message: str, candidates: Sequence[str] = ()):
        self.candidates = list(candidates)
        super().__init__(message)


class DeviceEditError(InvalidParameter):
    """An edit the catalog refuses (shipped device deleted, duplicate name, bad field...)."""


class UnresolvedConflicts(ModelError):
    """A merge with conflicts nobody chose a resolution for; nothing was written."""

    def __init__(self, message: str, conflicts: Sequence = ()):
        self.conflicts = list(conflicts)
        super().__init__(message)


def is_bad_text(exc: BaseException) -> bool:
    """True for SQLite's error on a TEXT value that is not valid UTF-8."""
    return (isinstance(exc, sqlite3.OperationalError)
            and str(exc).startswith("Could not decode to UTF-8"))


def is_damaged_schema(exc: BaseException) -> bool:
    """True for SQLite's error on a table or column our schema has but the file lacks
    (a file whose schema text was damaged, or edited by another program)."""
    return (isinstance(exc, sqlite3.OperationalError)
            and str(exc).startswith(("no such column", "no such table")))


def damaged_content(path, exc: BaseException) -> DatabaseFormatError:
    """A DatabaseFormatError naming ``path`` for damaged content met while reading it: text
    that is not valid UTF-8 (``exc`` is SQLite's error), or a DatabaseFormatError raised
    without the file's name (aliases that are not a JSON list)."""
    where = f"{path}: " if path else ""
    if isinstance(exc, DatabaseFormatError):
        text = str(exc)
        return DatabaseFormatError(text if path and text.startswith(str(path))
                                   else f"{where}{text}")
    if is_damaged_schema(exc):
        return DatabaseFormatError(f"{where}a damaged gpumodeler device database ({exc})")
    found = re.search(r"column '([^']*)'", str(exc))
    column = f" in column {found.group(1)}" if found else ""
    return DatabaseFormatError(f"{where}the database holds text that is not valid UTF-8"
                               f"{column}; it is damaged or was not written by gpumodeler")


def aliases_error(text) -> DatabaseFormatError:
    return DatabaseFormatError(f"a device's aliases are {shown(text, 60)}, not a JSON list of "
                               f"names (e.g. [\"GTX 970\"]); the database is damaged")
