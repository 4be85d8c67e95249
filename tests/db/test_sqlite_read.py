"""The read path without sqlite-utils (db/sqlite_read.py) gives what sqlite-utils gives, on
awkward files: tables and columns with unicode, quotes and spaces in their names, an empty
or damaged migrations table, several migration sets, duplicate names."""
from __future__ import annotations

import sqlite3

import pytest
import sqlite_utils
from sqlite_utils import Migrations

from gpumodeler.db.sqlite_read import MigrationSet, ReadDatabase, table_columns


def _both(conn):
    return ReadDatabase(conn), sqlite_utils.Database(conn, execute_plugins=False)


def _outcome(call):
    try:
        return "ok", call()
    except Exception as exc:      # the same exception, with the same text
        return type(exc), str(exc)


MIGRATIONS_TABLES = {
    "missing": None,
    "empty": "CREATE TABLE _sqlite_migrations (id INTEGER PRIMARY KEY, migration_set TEXT, "
             "name TEXT, applied_at TEXT)",
    "no name column": "CREATE TABLE _sqlite_migrations (id INTEGER PRIMARY KEY, "
                      "migration_set TEXT, applied_at TEXT)",
    "no applied_at column": "CREATE TABLE _sqlite_migrations (id INTEGER PRIMARY KEY, "
                            "migration_set TEXT, name TEXT)",
    "no migration_set column": "CREATE TABLE _sqlite_migrations (id INTEGER PRIMARY KEY, "
                               "name TEXT, applied_at TEXT)",
}


@pytest.mark.parametrize("kind", MIGRATIONS_TABLES)
def test_applied_migrations_read_as_sqlite_utils_reads_them(kind):
    conn = sqlite3.connect(":memory:")
    if MIGRATIONS_TABLES[kind]:
        conn.execute(MIGRATIONS_TABLES[kind])
        columns = [r[1] for r in conn.execute("PRAGMA table_info(_sqlite_migrations)")]
        rows = [("sät ✓", "m2", "2024"), ("other", "m1", None), ("sät ✓", "m1", ""),
                ("sät ✓", "m2", "dup"), ("sät ✓", "", "x"), ("sät ✓", None, "x")]
        for row in rows:
            values = dict(zip(("migration_set", "name", "applied_at"), row))
            keep = [c for c in values if c in columns]
            conn.execute(f"INSERT INTO _sqlite_migrations ({', '.join(keep)}) VALUES "
                         f"({', '.join('?' * len(keep))})", [values[c] for c in keep])
    fast, full = _both(conn)
    for name in ("sät ✓", "other", "none such"):
        ours, theirs = MigrationSet(name), Migrations(name)
        assert _outcome(lambda: ours.applied_names(fast)) == \
            _outcome(lambda: [m.name for m in theirs.applied(full)])


def test_tables_and_columns_read_as_sqlite_utils_reads_them():
    conn = sqlite3.connect(":memory:")
    conn.execute('CREATE TABLE "wéird ""name"" [x]" ("ä b" TEXT, "c""d" REAL, e)')
    conn.execute("CREATE TABLE plain (a, a2 INTEGER PRIMARY KEY)")
    conn.execute("CREATE VIEW v AS SELECT * FROM plain")
    conn.execute("CREATE INDEX i ON plain (a)")
    fast, full = _both(conn)
    assert fast.table_names() == full.table_names()
    for table in ("plain", "meta"):
        assert table_columns(fast, table) == {c.name for c in full[table].columns}
    for sql, params in (("SELECT ?, ?", [1.5, "ü"]), ("SELECT 1", None),
                        ("SELECT :a", {"a": float("nan")}), ("SELECT * FROM plain", ())):
        assert _outcome(lambda: fast.execute(sql, params).fetchall()) == \
            _outcome(lambda: full.execute(sql, params).fetchall())
    assert _outcome(lambda: fast.execute("SELECT * FROM nowhere")) == \
        _outcome(lambda: full.execute("SELECT * FROM nowhere"))


def test_the_rest_of_sqlite_utils_is_there_on_first_use():
    fast = ReadDatabase(sqlite3.connect(":memory:"))
    fast.execute("CREATE TABLE t (a)")
    assert fast["t"].count == 0 and fast.original is None
    with pytest.raises(AttributeError):
        fast._no_such_private_name
    ours = MigrationSet("s")

    @ours(name="m1")
    def m1(db):
        db.execute("CREATE TABLE made (x)")
    with pytest.raises(ValueError, match="already registered"):
        ours(name="m1")(m1)
    full = sqlite_utils.Database(sqlite3.connect(":memory:"), execute_plugins=False)
    ours.apply(full)
    assert ours.names() == ["m1"] == ours.applied_names(full) and "made" in full.table_names()
