"""The SQLite file header, told without loading the database layer (its imports cost a
tenth of a second: ``measure import`` of a CSV file asks only whether a file is SQLite)."""
from __future__ import annotations

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path) -> bool:
    """Whether ``path`` starts with the SQLite header (whatever its suffix)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False
