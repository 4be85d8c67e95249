"""Reading a database with the standard library's sqlite3; sqlite-utils only where written.

Importing sqlite-utils (and what it pulls in) cost about 60 ms of every command that reads
the device database or a project (``predict --device``, ``devices show``, ``project
predict``, ``timeline``), out of about 150 ms. Those commands only read: they need a
connection, ``execute`` and the list of tables. So a file opened read-only is a
:class:`ReadDatabase` on a plain ``sqlite3`` connection, and the migrations' record of
what was applied is read with one SELECT (:meth:`MigrationSet.applied_names`). Writers
(migrations, saves, edits, merges, schema creation) still get a ``sqlite_utils.Database``,
imported where they make one. Anything else asked of a ReadDatabase (a caller using more of
sqlite-utils' API) is answered by a ``sqlite_utils.Database`` on the same connection,
made on first use, so such a caller behaves as before, only without the saving.
"""
from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    from typing import TypeAlias

    import sqlite_utils

    #: What a database argument may be: a read-only file or a database that is written.
    Database: TypeAlias = "sqlite_utils.Database | ReadDatabase"

F = TypeVar("F", bound=Callable)


class ReadDatabase:
    """A database opened for reading: its ``conn`` (a ``sqlite3.Connection``), ``execute``
    and ``table_names`` as sqlite-utils gives them, with the same SQL."""

    #: The file a private copy stands for (schema.read_only_connection sets it).
    original = None

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._full: sqlite_utils.Database | None = None

    def execute(self, sql: str, parameters: Any = None) -> sqlite3.Cursor:
        """``sql`` run on the connection (reads open no transaction, so nothing to end)."""
        if parameters is not None:
            return self.conn.execute(sql, parameters)
        return self.conn.execute(sql)

    def table_names(self) -> list[str]:
        """The tables' names, as sqlite-utils lists them."""
        return [r[0] for r in self.conn.execute(
            "select name from sqlite_master where type = 'table'").fetchall()]

    def close(self) -> None:
        self.conn.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._sqlite_utils(), name)

    def __getitem__(self, table: str) -> Any:
        return self._sqlite_utils()[table]

    def _sqlite_utils(self) -> sqlite_utils.Database:
        if self._full is None:
            # lazy: only a caller using more of sqlite-utils' API than the reads above pays
            # for importing it
            import sqlite_utils
            self._full = sqlite_utils.Database(self.conn, execute_plugins=False)
        return self._full


def table_columns(db: Database, table: str) -> set[str]:
    """The column names of ``table`` (PRAGMA table_info, as sqlite-utils reads them)."""
    return {row[1] for row in db.execute(f"PRAGMA table_info([{table}])").fetchall()}


class MigrationSet:
    """A named set of numbered migrations, registered with ``@migrations(name=...)`` as
    with ``sqlite_utils.Migrations``, whose record of what was applied is read without
    sqlite-utils (:meth:`applied_names`); ``apply``, ``pending`` and the rest are
    sqlite-utils' own, on a ``Migrations`` made on first use with the same functions."""

    migrations_table = "_sqlite_migrations"

    def __init__(self, name: str):
        self.name = name
        self._registered: list[tuple[str, Callable, bool]] = []
        self._full: Any = None

    def __call__(self, *, name: str | None = None,
                 transactional: bool = True) -> Callable[[F], F]:
        def inner(func: F) -> F:
            migration_name = name or func.__name__
            if any(m[0] == migration_name for m in self._registered):
                raise ValueError(f"Migration '{migration_name}' is already registered in set "
                                 f"'{self.name}'")
            self._registered.append((migration_name, func, transactional))
            return func
        return inner

    def names(self) -> list[str]:
        """The registered migrations' names, in the order they run."""
        return [m[0] for m in self._registered]

    def applied_names(self, db: Database) -> list[str]:
        """The names of the migrations of this set applied to ``db``, in the order applied
        (what ``[m.name for m in Migrations.applied(db)]`` gives: the same SELECT, and a
        KeyError naming the column when the table lacks ``name``)."""
        if self.migrations_table not in db.table_names():
            return []
        cursor = db.execute(f"select * from [{self.migrations_table}] where migration_set = ? "
                            f"order by rowid", [self.name])
        keys = [d[0] for d in cursor.description]
        names = []
        for row in cursor:
            record = dict(zip(keys, row))
            names.append(record["name"])
            if "applied_at" not in record:      # damaged too: sqlite-utils reads it
                raise KeyError("applied_at")
        return names

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._full is None:
            # lazy: applying migrations writes, and writers use sqlite-utils
            from sqlite_utils import Migrations
            full = Migrations(self.name)
            for migration_name, func, transactional in self._registered:
                full(name=migration_name, transactional=transactional)(func)
            self._full = full
        return getattr(self._full, name)
