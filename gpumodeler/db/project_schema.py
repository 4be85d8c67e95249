"""The project file schema (``.gpm``), its numbered migrations, and checked opening.

A project file is an SQLite database of format ``gpumodeler-project``. Schema changes are
appended as new migrations (``m003_...``) of the sqlite-utils migration set
``gpumodeler-project``; an applied migration is never edited, because project files out in
the world already ran it. Each migration sets ``meta.version`` to its own number in the same
transaction, so a file from a newer gpumodeler is recognised (and refused, untouched) even by
tools that do not know the migration table.

Tables (every list keeps the document's order in ``position``; ids are the document's ids)

version 1
- ``meta(key, value)``: format = "gpumodeler-project", version, app_version.
- ``project(id = 1, name)``: the single document row.
- ``devices(position, id, kind, device_name, count, overrides, label, x, y)``.
- ``connections(position, id, link_name, a, b, link_type, overrides, label)``.
- ``kernels(position, id, name, latency_table, description, variables)``.
- ``kernel_instructions(kernel_id, position, id, opcode, unit, latency_class, space,
  is_load, label, memory_level, width_bytes, stride, pattern, hit_ratio, segment_bytes,
  bank_conflict_degree, x, y)``: ``position`` is the program order.
- ``kernel_edges(kernel_id, position, id, src, dst, kind, latency, taken)``.
- ``kernel_loops(kernel_id, position, id, name, iterations)`` and
  ``kernel_loop_members(kernel_id, loop_id, instruction_id)``.
- ``launches(position, id, name, gpu, kernel, block_size, grid_size, data_size, registers,
  shared_mem, occupancy_override, lam, variables, kernel_overrides)`` and
  ``transfers(launch_id, position, direction, size, connection)``.
- ``sweeps(position, id, launch, variable)``, ``sweep_values(sweep_id, position, value)``,
  ``sweep_devices(sweep_id, position, device_name)``.
- ``measurements(position, id, launch, what, parameters, time_s, source)``.
- ``calibrations(position, id, launch, what, calibrated_values, mape_percent, created)``.
- ``history(position, id, created, launch, inputs, outputs)``.

version 2 (``m002_descriptions``): ``project.description`` and ``sweeps.name``.

version 4 (``m004_instruction_address``): ``kernel_instructions.address``, the address of a
memory instruction as the SASS import followed it (text, empty when unknown).

version 6 (``m006_step_measurements``): ``application_steps.measured``, what a trace
measured of an imported step (JSON: ``measured_s``, ``measured_start_s``, ``traced_gpu``,
``host_s``; ``{}`` for a step built by hand).

version 7 (``m007_launch_terms``): ``launches.terms``, the launch's kernel terms (JSON: the
fields of ``core.project.LaunchTerms`` that differ from the defaults — ``underfill``,
``tail``, ``launch_overhead``, ``launch_overhead_s``, ``l2_bandwidth_bytes_per_s``; ``{}``
for a launch saved before, which keeps ``predict``'s defaults).

version 8 (``m008_shared_wavefronts``): no new column; a 64- or 128-bit shared-memory
access's ``kernel_instructions.bank_conflict_degree`` is its wavefronts per half-warp (as the
kernel format's version 2): a value the import wrote by the old rule is upgraded, one set by
hand kept (``core.kernel.format_upgrade``).

version 9 (``m009_step_measured_columns``): ``application_steps.measured_s``,
``measured_start_s``, ``traced_gpu`` and ``host_s``, what a trace measured of a step in
typed columns (REAL, NULL when not measured; text, ``''``; REAL, ``0.0``), read without
parsing JSON per step (10^5 imported steps). ``measured`` is kept: a save writes ``{}``
there; a file of version 6 to 8 keeps its values there (the migration adds the columns
only, never rewriting what a user saved) and they are read from it as before (a value
there is taken over its typed column's).

version 3 (``m003_applications``): ``applications(position, id, name, variables, policy,
host_power_w)`` and ``application_steps(application_id, position, id, kind, name, stream,
after_steps, launch, gpu, fraction, concurrent, src, dst, size)``; ``after_steps`` is a JSON
list of step ids (docs/timeline.md).

Columns named overrides, variables, kernel_overrides, parameters, calibrated_values, inputs
and outputs hold small JSON objects. Numeric columns that may hold an int or a float (canvas
positions, latencies, λ, times) have no declared type, so SQLite keeps the value's own type
and a round trip gives back ``2`` as ``2`` and ``2.5`` as ``2.5``. References between
entities (a launch's GPU, a connection's ends) are plain text, not foreign keys: a document
with a dangling reference must still save, never lose work.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from gpumodeler import __version__

from . import schema
from .errors import DatabaseAccessError, DatabaseFormatError
from .sqlite_read import MigrationSet, ReadDatabase

if TYPE_CHECKING:
    import sqlite_utils

    from .sqlite_read import Database

FORMAT = "gpumodeler-project"
DEVICE_DB_FORMAT = "gpumodeler-devices"
MIGRATION_SET = "gpumodeler-project"
MIGRATIONS_TABLE = MigrationSet.migrations_table


class ProjectFormatError(DatabaseFormatError):
    """A file that is not a gpumodeler project, is corrupted, or was written by a newer
    gpumodeler. Raised before anything is written: the file is left byte-for-byte as it was."""


class ProjectAccessError(DatabaseAccessError):
    """A project that cannot be saved (missing or read-only folder, full disk, a value
    SQLite cannot store). The previous file, if any, is left as it was."""


migrations = MigrationSet(MIGRATION_SET)

_V1 = [
    """CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE project (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        name TEXT NOT NULL
    )""",
    """CREATE TABLE devices (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        device_name TEXT NOT NULL,
        count INTEGER NOT NULL,
        overrides TEXT NOT NULL,
        label TEXT NOT NULL,
        x NOT NULL CHECK (typeof(x) = 'integer' OR typeof(x) = 'real'),
        y NOT NULL CHECK (typeof(y) = 'integer' OR typeof(y) = 'real')
    )""",
    """CREATE TABLE connections (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        link_name TEXT NOT NULL,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        link_type TEXT NOT NULL,
        overrides TEXT NOT NULL,
        label TEXT NOT NULL
    )""",
    """CREATE TABLE kernels (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        latency_table TEXT,
        description TEXT NOT NULL,
        variables TEXT NOT NULL
    )""",
    """CREATE TABLE kernel_instructions (
        kernel_id TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        id TEXT NOT NULL,
        opcode TEXT NOT NULL,
        unit TEXT NOT NULL,
        latency_class TEXT,
        space TEXT,
        is_load INTEGER NOT NULL CHECK (is_load = 0 OR is_load = 1),
        label TEXT NOT NULL,
        memory_level TEXT,
        width_bytes INTEGER NOT NULL,
        stride NOT NULL CHECK (typeof(stride) = 'integer' OR typeof(stride) = 'real'),
        pattern TEXT NOT NULL,
        hit_ratio NOT NULL CHECK (typeof(hit_ratio) = 'integer' OR typeof(hit_ratio) = 'real'),
        segment_bytes INTEGER NOT NULL,
        bank_conflict_degree INTEGER NOT NULL,
        x NOT NULL CHECK (typeof(x) = 'integer' OR typeof(x) = 'real'),
        y NOT NULL CHECK (typeof(y) = 'integer' OR typeof(y) = 'real'),
        PRIMARY KEY (kernel_id, id),
        UNIQUE (kernel_id, position)
    )""",
    """CREATE TABLE kernel_edges (
        kernel_id TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        id TEXT NOT NULL,
        src TEXT NOT NULL,
        dst TEXT NOT NULL,
        kind TEXT NOT NULL,
        latency CHECK (latency IS NULL OR typeof(latency) = 'integer'
                       OR typeof(latency) = 'real'),
        taken INTEGER CHECK (taken IS NULL OR taken = 0 OR taken = 1),
        PRIMARY KEY (kernel_id, id),
        UNIQUE (kernel_id, position)
    )""",
    """CREATE TABLE kernel_loops (
        kernel_id TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        iterations TEXT NOT NULL,
        PRIMARY KEY (kernel_id, id),
        UNIQUE (kernel_id, position)
    )""",
    """CREATE TABLE kernel_loop_members (
        kernel_id TEXT NOT NULL,
        loop_id TEXT NOT NULL,
        instruction_id TEXT NOT NULL,
        PRIMARY KEY (kernel_id, loop_id, instruction_id),
        FOREIGN KEY (kernel_id, loop_id) REFERENCES kernel_loops(kernel_id, id)
            ON DELETE CASCADE
    )""",
    """CREATE TABLE launches (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        gpu TEXT,
        kernel TEXT,
        block_size INTEGER NOT NULL,
        grid_size INTEGER,
        data_size INTEGER,
        registers INTEGER NOT NULL,
        shared_mem INTEGER NOT NULL,
        occupancy_override,
        lam NOT NULL,
        variables TEXT NOT NULL,
        kernel_overrides TEXT NOT NULL
    )""",
    """CREATE TABLE transfers (
        launch_id TEXT NOT NULL REFERENCES launches(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        direction TEXT NOT NULL,
        size TEXT NOT NULL,
        connection TEXT,
        PRIMARY KEY (launch_id, position)
    )""",
    """CREATE TABLE sweeps (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        launch TEXT NOT NULL,
        variable TEXT NOT NULL
    )""",
    """CREATE TABLE sweep_values (
        sweep_id TEXT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        value NOT NULL,
        PRIMARY KEY (sweep_id, position)
    )""",
    """CREATE TABLE sweep_devices (
        sweep_id TEXT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        device_name TEXT NOT NULL,
        PRIMARY KEY (sweep_id, position)
    )""",
    """CREATE TABLE measurements (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        launch TEXT,
        what TEXT NOT NULL,
        parameters TEXT NOT NULL,
        time_s NOT NULL,
        source TEXT NOT NULL
    )""",
    """CREATE TABLE calibrations (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        launch TEXT,
        what TEXT NOT NULL,
        calibrated_values TEXT NOT NULL,
        mape_percent NOT NULL,
        created TEXT NOT NULL
    )""",
    """CREATE TABLE history (
        position INTEGER NOT NULL UNIQUE,
        id TEXT PRIMARY KEY,
        created TEXT NOT NULL,
        launch TEXT,
        inputs TEXT NOT NULL,
        outputs TEXT NOT NULL
    )""",
]


def _set_version(db: sqlite_utils.Database, version: int) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)", [str(version)])


@migrations(name="m001_initial")
def m001_initial(db: sqlite_utils.Database) -> None:
    for statement in _V1:
        db.execute(statement)
    db.execute("INSERT INTO meta (key, value) VALUES ('format', ?), ('app_version', ?)",
               [FORMAT, __version__])
    _set_version(db, 1)


@migrations(name="m002_descriptions")
def m002_descriptions(db: sqlite_utils.Database) -> None:
    # A project says what it models; a saved sweep has a name to find it by in the panel.
    db.execute("ALTER TABLE project ADD COLUMN description TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE sweeps ADD COLUMN name TEXT NOT NULL DEFAULT ''")
    _set_version(db, 2)


@migrations(name="m003_applications")
def m003_applications(db: sqlite_utils.Database) -> None:
    # Applications: steps (kernels, copies, syncs) on streams across the system's devices.
    db.execute("""CREATE TABLE applications (
        position INTEGER NOT NULL,
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        variables TEXT NOT NULL,
        policy TEXT NOT NULL,
        host_power_w
    )""")
    db.execute("""CREATE TABLE application_steps (
        application_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        id TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        stream TEXT NOT NULL,
        after_steps TEXT NOT NULL,
        launch TEXT,
        gpu TEXT,
        fraction,
        concurrent INTEGER NOT NULL,
        src TEXT,
        dst TEXT,
        size TEXT NOT NULL,
        PRIMARY KEY (application_id, id)
    )""")
    _set_version(db, 3)


@migrations(name="m004_instruction_address")
def m004_instruction_address(db: sqlite_utils.Database) -> None:
    # The address of a memory instruction as the SASS import followed it (text).
    db.execute("ALTER TABLE kernel_instructions ADD COLUMN address TEXT NOT NULL DEFAULT ''")
    _set_version(db, 4)


@migrations(name="m005_kernel_extras")
def m005_kernel_extras(db: sqlite_utils.Database) -> None:
    # What an imported kernel's listing said: registers, static shared memory and guards
    # (the kernel format's registers_per_thread, static_shared_bytes, guards), as JSON.
    db.execute("ALTER TABLE kernels ADD COLUMN extras TEXT NOT NULL DEFAULT '{}'")
    _set_version(db, 5)


@migrations(name="m006_step_measurements")
def m006_step_measurements(db: sqlite_utils.Database) -> None:
    # What a trace measured of an imported step (measured_s, measured_start_s, traced_gpu,
    # host_s), as a JSON object; {} for a step built by hand.
    db.execute("ALTER TABLE application_steps ADD COLUMN measured TEXT NOT NULL DEFAULT '{}'")
    _set_version(db, 6)


@migrations(name="m007_launch_terms")
def m007_launch_terms(db: sqlite_utils.Database) -> None:
    # A launch's kernel terms (switches and values) as a JSON object of what differs from
    # the defaults; {} for a launch saved before, which keeps the defaults.
    db.execute("ALTER TABLE launches ADD COLUMN terms TEXT NOT NULL DEFAULT '{}'")
    _set_version(db, 7)


@migrations(name="m008_shared_wavefronts")
def m008_shared_wavefronts(db: sqlite_utils.Database) -> None:
    # A 64- or 128-bit shared-memory access's bank_conflict_degree is now its wavefronts, per
    # half-warp (docs/kernel-format.md, "Older files"): the value the import wrote by the
    # old rule, recognised from the address it followed, becomes the new rule's; a value set
    # by hand, or on an instruction without a followed address, is kept (it cannot be told).
    from gpumodeler.core.kernel.format_upgrade import upgraded_degree
    rows = db.execute(
        "SELECT kernel_id, id, address, width_bytes, bank_conflict_degree "
        "FROM kernel_instructions WHERE space = 'shared' AND width_bytes IN (8, 16) "
        "AND unit = 'ldst' AND address != ''").fetchall()
    for kernel_id, nid, address, width, degree in rows:
        now = upgraded_degree(address, int(width), degree)
        if now is not None:
            db.execute("UPDATE kernel_instructions SET bank_conflict_degree = ? "
                       "WHERE kernel_id = ? AND id = ?", [now, kernel_id, nid])
    _set_version(db, 8)


@migrations(name="m009_step_measured_columns")
def m009_step_measured_columns(db: sqlite_utils.Database) -> None:
    # What a trace measured of a step in typed columns (a JSON object per step cost more
    # to read than the rest of the step); the JSON column stays, its values still read.
    db.execute("ALTER TABLE application_steps ADD COLUMN measured_s REAL")
    db.execute("ALTER TABLE application_steps ADD COLUMN measured_start_s REAL")
    db.execute("ALTER TABLE application_steps ADD COLUMN traced_gpu TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE application_steps ADD COLUMN host_s REAL NOT NULL DEFAULT 0.0")
    _set_version(db, 9)


# Append new migrations above this line and bump both; never edit one that shipped.
KNOWN_MIGRATIONS = ("m001_initial", "m002_descriptions", "m003_applications",
                    "m004_instruction_address", "m005_kernel_extras", "m006_step_measurements",
                    "m007_launch_terms", "m008_shared_wavefronts",
                    "m009_step_measured_columns")
SCHEMA_VERSION = len(KNOWN_MIGRATIONS)


def check_header(path: Path) -> None:
    """Refuse, without opening it with SQLite, a file that is missing or not SQLite."""
    schema.check_header(path, "a gpumodeler project", ProjectFormatError,
                        "expected a .gpm file saved by gpumodeler")


def connect_read_only(path: Path) -> ReadDatabase:
    """The file opened with ``mode=ro``: SQLite itself refuses any write, and no file is
    created beside it (one with a WAL log or a journal beside it is read from a private
    copy: schema.read_only_connection)."""
    try:
        return schema.read_only_connection(path)
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        raise ProjectFormatError(f"{path}: cannot open it ({exc})") from None


def inspect_file(db: Database, path: Path, *, integrity: bool = True) -> dict:
    """Check that ``db`` is a project file this gpumodeler reads; returns its meta dict
    (format, version, app_version) with ``pending`` = True when migrations are due.
    ``integrity`` runs SQLite's quick_check over every page first."""
    try:
        check = db.execute("PRAGMA quick_check").fetchall() if integrity else [("ok",)]
        if [tuple(r) for r in check] != [("ok",)]:
            problem = "; ".join(str(r[0]) for r in check[:3])
            raise ProjectFormatError(f"{path}: the project file is corrupted ({problem})")
        tables = set(db.table_names())
        if "meta" not in tables:
            raise ProjectFormatError(f"{path}: an SQLite database but not a gpumodeler project "
                                     f"(no meta table; expected format {FORMAT!r})")
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        applied = migrations.applied_names(db) if MIGRATIONS_TABLE in tables else []
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        raise ProjectFormatError(f"{path}: the project file is corrupted ({exc})") from None
    except KeyError as exc:   # sqlite-utils reading a migrations table that lost a column
        raise ProjectFormatError(f"{path}: damaged project file (its migrations table lacks "
                                 f"column {exc})") from None
    fmt = meta.get("format")
    if fmt != FORMAT:
        hint = ("; it is a device database: use `gpumodeler devices import` for it"
                if fmt == DEVICE_DB_FORMAT else "")
        raise ProjectFormatError(f"{path}: not a gpumodeler project (format {fmt!r}, expected "
                                 f"{FORMAT!r}){hint}")
    version = schema.check_version(meta, applied, KNOWN_MIGRATIONS, path,
                                   error=ProjectFormatError, what="project schema")
    if version < 1 or applied != list(KNOWN_MIGRATIONS[:len(applied)]) \
            or len(applied) != version:
        raise ProjectFormatError(
            f"{path}: damaged project file (schema version {version} but migrations "
            f"{', '.join(applied) or 'none'} recorded; expected the first {version} of "
            f"{', '.join(KNOWN_MIGRATIONS)})")
    return {"format": fmt, "version": version, "app_version": meta.get("app_version", ""),
            "pending": version < SCHEMA_VERSION}


def upgraded_copy(db: Database, path: Path) -> sqlite_utils.Database:
    """An in-memory copy of ``db`` with the pending migrations applied (the file is not
    touched: an older project opens without being rewritten until the user saves)."""
    copy = sqlite3.connect(":memory:")
    db.conn.backup(copy)
    mem = schema.writable_database(copy)
    try:
        migrations.apply(mem)
    except sqlite3.Error as exc:
        mem.close()
        raise ProjectFormatError(f"{path}: cannot upgrade its schema to version "
                                 f"{SCHEMA_VERSION} ({exc})") from None
    return mem


def new_database(path: Path) -> sqlite_utils.Database:
    """A fully migrated, empty project database in the (new or empty) file ``path``.

    Built for one-shot writing into a temporary file: no rollback journal on disk and no
    syncs per transaction (the caller fsyncs the finished file once, then renames it)."""
    conn = sqlite3.connect(str(path))
    # 1 KiB pages: a project has ~25 small tables and indexes, each at least one page, so
    # the bundled example is ~50 KB instead of ~200 KB; large kernels read as fast.
    conn.execute("PRAGMA page_size = 1024")
    conn.execute("PRAGMA journal_mode = MEMORY")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA foreign_keys = ON")
    db = schema.writable_database(conn)
    migrations.apply(db)
    return db

