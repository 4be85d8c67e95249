"""Project files: a :class:`~gpumodeler.core.project.Project` saved as one SQLite file (.gpm).

The schema and its migrations are in :mod:`gpumodeler.db.project_schema`; this module maps
the document's dataclasses to rows and back (the domain classes know nothing of SQLite).
Ids are stored as they are, and every collection keeps its order in a ``position`` column:
the program order of a kernel's instructions is the order of its rows.

Safety of saving: the whole project is written into a new temporary file next to the
target (``.NAME.XXXXXXXX.tmp`` in the same folder, so the rename stays on one file system),
the data in one transaction, then the file is fsynced, renamed over the target with
``os.replace`` (atomic on POSIX and Windows) and the folder is fsynced. The save holds a
lock on its temporary file; temporary files of earlier saves of the same file that were
killed before the rename (no lock held) are removed by the next save
(:mod:`gpumodeler.db.atomic_files`). The previous file is
never opened for writing: a crash, a full disk or an error anywhere before the rename leaves
it byte-for-byte as it was, and the temporary file is removed. Unless ``force=True``, a save
refuses to replace a file that is not recognisably a gpumodeler project (a text file,
another SQLite database, a project whose header or meta table is unreadable) or one written
by a newer gpumodeler, whose data this version would drop; an empty file or an older project
of ours is replaced. Saving through a symbolic link replaces the file
it points to. Because a save writes a fresh file, a saved file always has the newest schema
and its migration table records when it was written.

Safety of loading: the file is checked (SQLite header, integrity, format name, schema
version) with a read-only connection (``mode=ro``), so opening never writes; a file of an
older schema is upgraded in an in-memory copy. A file that is not a project, is corrupted
or is from a newer gpumodeler raises :class:`ProjectFormatError` saying what it is and what
was expected.

JSON columns (overrides, variables, kernel_overrides, parameters, calibrated values,
history inputs and outputs) hold JSON values: tuples come back as lists and non-string
dict keys as strings. NaN and infinities are kept.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
from sys import intern
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpumodeler import __version__
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.kernel_format import graph_extras, read_graph_extras
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop
from gpumodeler.core.application.app import (MEASURED_FIELDS, STEP_FIELDS, Application, Step,
                                             step_slots)
from gpumodeler.core.project import (Calibration, Connection, LaunchConfig, LaunchTerms, Measurement,
                                     PlacedDevice, PredictionRecord, Project, SweepDef,
                                     Transfer)

from .atomic_files import create_temp, fsync_folder, release, remove_stale_temps
from .project_schema import (FORMAT, SCHEMA_VERSION, ProjectAccessError, ProjectFormatError,
                             check_header, connect_read_only, inspect_file, new_database,
                             upgraded_copy)
if TYPE_CHECKING:
    from .sqlite_read import Database

SUFFIX = ".gpm"

# Columns written and read for each entity, in dataclass field order after the keys.
DEVICE_COLUMNS = ("id", "kind", "device_name", "count", "overrides", "label", "x", "y")
CONNECTION_COLUMNS = ("id", "link_name", "a", "b", "link_type", "overrides", "label")
KERNEL_COLUMNS = ("id", "name", "latency_table", "description", "variables", "extras")
INSTRUCTION_COLUMNS = ("id", "opcode", "unit", "latency_class", "space", "is_load", "label",
                       "memory_level", "width_bytes", "stride", "pattern", "hit_ratio",
                       "segment_bytes", "bank_conflict_degree", "x", "y", "address")
EDGE_COLUMNS = ("id", "src", "dst", "kind", "latency", "taken")
LOOP_COLUMNS = ("id", "name", "iterations")
LAUNCH_COLUMNS = ("id", "name", "gpu", "kernel", "block_size", "grid_size", "data_size",
                  "registers", "shared_mem", "occupancy_override", "lam", "variables",
                  "kernel_overrides", "terms")
TRANSFER_COLUMNS = ("direction", "size", "connection")
SWEEP_COLUMNS = ("id", "launch", "variable", "name")
MEASUREMENT_COLUMNS = ("id", "launch", "what", "parameters", "time_s", "source")
CALIBRATION_COLUMNS = ("id", "launch", "what", "calibrated_values", "mape_percent", "created")
HISTORY_COLUMNS = ("id", "created", "launch", "inputs", "outputs")


@dataclass(frozen=True)
class ProjectFileInfo:
    """What a project file says about itself."""

    path: Path
    format: str
    schema_version: int  # of the file as stored (before any in-memory upgrade)
    app_version: str  # the gpumodeler that wrote it
    upgraded: bool  # True when it was read through the migrations of a newer schema


APPLICATION_COLUMNS = ("id", "name", "variables", "policy", "host_power_w")
STEP_COLUMNS = ("id", "kind", "name", "stream", "after_steps", "launch", "gpu", "fraction", "concurrent",
                "src", "dst", "size", "measured_s", "measured_start_s", "traced_gpu", "host_s",
                "measured")


# -- values <-> columns ----------------------------------------------------------------------
def _scalar(value):
    """A value SQLite can bind: numpy scalars become Python numbers."""
    if value is not None and not isinstance(value, (bool, int, float, str)) \
            and hasattr(value, "item"):
        return value.item()
    return value


def _json_default(obj):
    if hasattr(obj, "tolist"):  # numpy arrays and scalars in prediction records
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    raise TypeError(f"a value of type {type(obj).__name__} cannot be stored as JSON")


def _to_json(obj: dict, what: str) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_json_default)
    except (TypeError, ValueError) as exc:
        raise ProjectAccessError(f"cannot save {what}: {exc}") from None


def _from_json(text, what: str) -> dict:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise ProjectFormatError(f"{what} is not valid JSON: {str(text)[:60]!r}") from None
    if not isinstance(value, dict):
        raise ProjectFormatError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _insert_rows(db: Database, table: str, columns: tuple, rows) -> None:
    """One executemany per table (all inside the save's single transaction)."""
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    db.conn.executemany(sql, rows)


# -- writing ---------------------------------------------------------------------------------
def _write(db: Database, project: Project) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('app_version', ?)", [__version__])
    _insert_rows(db, "project", ("id", "name", "description"),
                 [(1, project.name, project.description)])
    _insert_rows(db, "devices", ("position",) + DEVICE_COLUMNS, [
        (i, d.id, d.kind, d.device_name, _scalar(d.count),
         _to_json(d.overrides, f"device {d.id} overrides"), d.label, _scalar(d.x), _scalar(d.y))
        for i, d in enumerate(project.devices.values())])
    _insert_rows(db, "connections", ("position",) + CONNECTION_COLUMNS, [
        (i, c.id, c.link_name, c.a, c.b, c.link_type,
         _to_json(c.overrides, f"connection {c.id} overrides"), c.label)
        for i, c in enumerate(project.connections.values())])
    _write_kernels(db, project.kernels)
    launches = list(project.launches.values())
    _insert_rows(db, "launches", ("position",) + LAUNCH_COLUMNS, [
        (i, la.id, la.name, la.gpu, la.kernel, _scalar(la.block_size), _scalar(la.grid_size),
         _scalar(la.data_size), _scalar(la.registers), _scalar(la.shared_mem),
         _scalar(la.occupancy_override), _scalar(la.lam),
         _to_json(la.variables, f"launch {la.id} variables"),
         _to_json(la.kernel_overrides, f"launch {la.id} kernel overrides"),
         _to_json(la.terms.saved(), f"launch {la.id} kernel terms"))
        for i, la in enumerate(launches)])
    _insert_rows(db, "transfers", ("launch_id", "position") + TRANSFER_COLUMNS, [
        (la.id, j, t.direction, str(t.size), t.connection)
        for la in launches for j, t in enumerate(la.transfers)])
    sweeps = list(project.sweeps.values())
    _insert_rows(db, "sweeps", ("position",) + SWEEP_COLUMNS, [
        (i, s.id, s.launch, s.variable, s.name) for i, s in enumerate(sweeps)])
    _insert_rows(db, "sweep_values", ("sweep_id", "position", "value"), [
        (s.id, j, _scalar(v)) for s in sweeps for j, v in enumerate(s.values)])
    _insert_rows(db, "sweep_devices", ("sweep_id", "position", "device_name"), [
        (s.id, j, name) for s in sweeps for j, name in enumerate(s.devices)])
    _insert_rows(db, "measurements", ("position",) + MEASUREMENT_COLUMNS, [
        (i, m.id, m.launch, m.what, _to_json(m.parameters, f"measurement {m.id} parameters"),
         _scalar(m.time_s), m.source)
        for i, m in enumerate(project.measurements.values())])
    _insert_rows(db, "calibrations", ("position",) + CALIBRATION_COLUMNS, [
        (i, c.id, c.launch, c.what, _to_json(c.values, f"calibration {c.id} values"),
         _scalar(c.mape_percent), c.created)
        for i, c in enumerate(project.calibrations.values())])
    _insert_rows(db, "history", ("position",) + HISTORY_COLUMNS, [
        (i, h.id, h.created, h.launch, _to_json(h.inputs, f"history {h.id} inputs"),
         _to_json(h.outputs, f"history {h.id} outputs"))
        for i, h in enumerate(project.history.values())])
    apps = list(project.applications.values())
    _insert_rows(db, "applications", ("position",) + APPLICATION_COLUMNS, [
        (i, a.id, a.name, _to_json(a.variables, f"application {a.id} variables"), a.policy,
         _scalar(a.host_power_w))
        for i, a in enumerate(apps)])
    _insert_rows(db, "application_steps", ("application_id", "position") + STEP_COLUMNS, [
        (a.id, j, s.id, s.kind, s.name, s.stream, json.dumps(list(s.after)), s.launch, s.gpu,
         _scalar(s.fraction), int(bool(s.concurrent)), s.src, s.dst, str(s.size),
         _scalar(s.measured_s), _scalar(s.measured_start_s), s.traced_gpu, _scalar(s.host_s), "{}")
        for a in apps for j, s in enumerate(a.steps)])


def _write_kernels(db: Database, kernels: dict) -> None:
    _insert_rows(db, "kernels", ("position",) + KERNEL_COLUMNS, [
        (i, kid, g.name, g.latency_table, g.description,
         _to_json(g.variables, f"kernel {kid} variables"),
         _to_json(graph_extras(g), f"kernel {kid} extras"))
        for i, (kid, g) in enumerate(kernels.items())])
    # Instructions and edges passed their checks, so their numbers are Python (or numpy
    # float64, a float) values SQLite binds as they are: no per-value conversion.
    ins_values = attrgetter(*INSTRUCTION_COLUMNS)
    _insert_rows(db, "kernel_instructions", ("kernel_id", "position") + INSTRUCTION_COLUMNS, [
        (kid, j, *ins_values(ins))
        for kid, g in kernels.items() for j, ins in enumerate(g.instructions.values())])
    edge_values = attrgetter(*EDGE_COLUMNS)
    _insert_rows(db, "kernel_edges", ("kernel_id", "position") + EDGE_COLUMNS, [
        (kid, j, *edge_values(e))
        for kid, g in kernels.items() for j, e in enumerate(g.edges.values())])
    _insert_rows(db, "kernel_loops", ("kernel_id", "position") + LOOP_COLUMNS, [
        (kid, j, lp.id, lp.name, lp.iterations.text)
        for kid, g in kernels.items() for j, lp in enumerate(g.loops.values())])
    _insert_rows(db, "kernel_loop_members", ("kernel_id", "loop_id", "instruction_id"), [
        (kid, lp.id, member)
        for kid, g in kernels.items() for lp in g.loops.values()
        for member in sorted(lp.members)])


# -- reading ---------------------------------------------------------------------------------
def _rows(db, table: str, columns: tuple, order: str = "position"):
    return db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}").fetchall()


# Tables whose every column holds numbers or text (the kernels' rows are checked by the
# graph's own validation as they are added).
_PLAIN_TABLES = {"project": ("name", "description"), "devices": DEVICE_COLUMNS,
                 "connections": CONNECTION_COLUMNS, "launches": LAUNCH_COLUMNS,
                 "transfers": ("launch_id",) + TRANSFER_COLUMNS,
                 "sweeps": SWEEP_COLUMNS, "sweep_values": ("sweep_id", "value"),
                 "sweep_devices": ("sweep_id", "device_name"),
                 "measurements": MEASUREMENT_COLUMNS, "calibrations": CALIBRATION_COLUMNS}


def _refuse_blobs(db: Database) -> None:
    """gpumodeler never writes binary data (BLOBs): one where a number or text belongs
    (a λ, a block size) means the file was damaged or edited by another program."""
    for table, columns in _PLAIN_TABLES.items():
        test = " OR ".join(f"typeof({c}) = 'blob'" for c in columns)
        row = db.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {test} LIMIT 1").fetchone()
        if row is not None:
            column = next(c for c, v in zip(columns, row) if isinstance(v, bytes))
            raise ProjectFormatError(f"table {table}, column {column} holds binary data where "
                                     f"a number or text belongs")


def _read(db: Database) -> Project:
    _refuse_blobs(db)
    row = db.execute("SELECT name, description FROM project WHERE id = 1").fetchone()
    if row is None:
        raise ProjectFormatError("the project row is missing")
    project = Project(row[0])
    project.description = row[1]
    for (id_, kind, device_name, count, overrides, label, x, y) in _rows(db, "devices",
                                                                         DEVICE_COLUMNS):
        project.put("devices", PlacedDevice(id_, kind, device_name, count,
                                            _from_json(overrides, f"device {id_} overrides"),
                                            label, x, y))
    for (id_, link_name, a, b, link_type, overrides, label) in _rows(db, "connections",
                                                                     CONNECTION_COLUMNS):
        project.put("connections", Connection(
            id_, link_name, a, b, link_type,
            _from_json(overrides, f"connection {id_} overrides"), label))
    for kid, graph in _read_kernels(db).items():
        project.put_kernel(kid, graph)
    transfers = defaultdict(list)
    for launch_id, direction, size, connection in _rows(
            db, "transfers", ("launch_id",) + TRANSFER_COLUMNS, "launch_id, position"):
        transfers[launch_id].append(Transfer(direction, size, connection))
    for r in _rows(db, "launches", LAUNCH_COLUMNS):
        kw = dict(zip(LAUNCH_COLUMNS, r))
        kw["variables"] = _from_json(kw["variables"], f"launch {r[0]} variables")
        kw["kernel_overrides"] = _from_json(kw["kernel_overrides"],
                                            f"launch {r[0]} kernel overrides")
        kw["terms"] = LaunchTerms.from_saved(_from_json(kw["terms"], f"launch {r[0]} kernel terms"),
                                             f"launch {r[0]}")
        project.put("launches", LaunchConfig(**kw, transfers=tuple(transfers.pop(r[0], ()))))
    if transfers:
        raise ProjectFormatError(f"transfers of missing launch(es) {', '.join(sorted(transfers))}")
    values, devices = defaultdict(list), defaultdict(list)
    for sweep_id, value in _rows(db, "sweep_values", ("sweep_id", "value"), "sweep_id, position"):
        values[sweep_id].append(value)
    for sweep_id, name in _rows(db, "sweep_devices", ("sweep_id", "device_name"),
                                "sweep_id, position"):
        devices[sweep_id].append(name)
    for (id_, launch, variable, name) in _rows(db, "sweeps", SWEEP_COLUMNS):
        project.put("sweeps", SweepDef(id_, launch, variable, tuple(values[id_]),
                                       tuple(devices[id_]), name))
    for (id_, launch, what, parameters, time_s, source) in _rows(db, "measurements",
                                                                 MEASUREMENT_COLUMNS):
        project.put("measurements", Measurement(
            id_, launch, what, _from_json(parameters, f"measurement {id_} parameters"),
            time_s, source))
    for (id_, launch, what, cal_values, mape, created) in _rows(db, "calibrations",
                                                                CALIBRATION_COLUMNS):
        project.put("calibrations", Calibration(
            id_, launch, what, _from_json(cal_values, f"calibration {id_} values"), mape, created))
    for (id_, created, launch, inputs, outputs) in _rows(db, "history", HISTORY_COLUMNS):
        project.put("history", PredictionRecord(
            id_, created, launch, _from_json(inputs, f"history {id_} inputs"),
            _from_json(outputs, f"history {id_} outputs")))
    _read_applications(db, project)
    return project


def _read_applications(db: Database, project: Project) -> None:
    steps = _read_steps(db)
    for (id_, name, variables, policy, host_power_w) in _rows(db, "applications", APPLICATION_COLUMNS):
        if isinstance(host_power_w, (bytes, str)):
            raise ProjectFormatError(f"application {id_}: host power must be a number")
        project.put("applications", Application(
            id_, name, tuple(steps.pop(id_, ())), _from_json(variables, f"application {id_} variables"),
            policy, host_power_w))
    if steps:
        raise ProjectFormatError(f"steps of missing application(s) {', '.join(sorted(steps))}")


# The steps' columns as read: Step's fields in order (``after_steps`` for ``after``), then
# the application, the position and the JSON ``measured`` column of files before version 9.
_STEP_READ = tuple("after_steps" if f == "after" else f for f in STEP_FIELDS) + (
    "application_id", "position", "measured")
_AFTER = STEP_FIELDS.index("after")
_APP = len(STEP_FIELDS)
_MEASURED_AT = {key: STEP_FIELDS.index(key) for key in MEASURED_FIELDS}


def _read_steps(db: Database) -> dict[str, list]:
    """Every application's steps in program order, checked (application id -> steps).

    The typed columns are checked by one SQLite query; each distinct JSON list of
    dependencies other than ``[]`` is parsed once, and the ``measured`` object of a file
    before version 9 only where there is one (10^5 steps of an imported trace: 1.3 s ->
    1.0 s, most of it now fetching the rows and making the steps). The usual file (one
    application, its rows stored in program order, no JSON measurements: what a save
    writes) is told by one scan with those checks and read without the columns that say
    so (:func:`_one_application`)."""
    one = _one_application(db)
    if one is not None:
        return one
    _check_step_columns(db)
    # read in the table's own order and sorted here: ordered by SQLite, the rows were fetched
    # through the (application, id) index and sorted again in a temporary tree; they were
    # written in order, so the sort only checks that (and one application's rows, the usual
    # file, are checked without it)
    rows = db.execute(f"SELECT {', '.join(_STEP_READ)} FROM application_steps").fetchall()
    if not _in_order(rows):
        rows.sort(key=itemgetter(_APP, _APP + 1))
    afters = _dependencies(rows)
    old = [r[-1] for r in rows if r[-1] != "{}"]   # a file before version 9: JSON values
    measured = iter(_json_values(old) if old else ())
    steps: dict[str, list] = defaultdict(list)
    last_app: object = _NO_APP
    app_steps: list[Step] = []   # (the list of the row's application from its first row)
    new, slots, step_class = object.__new__, step_slots(), Step
    step: Any   # (a StepSlots that becomes a Step)
    for r in rows:
        if r[-1] == "{}":   # (the fields by position: their order is tested)
            # made by setting its slots, the same object as Step(r[0], ..., r[15]) makes
            step = new(slots)
            step.id = r[0]
            step.kind = r[1]
            step.name = r[2]
            step.stream = r[3]
            step.after = afters[r[4]]
            step.launch = r[5]
            step.gpu = r[6]
            step.fraction = r[7]
            step.concurrent = bool(r[8])
            step.src = r[9]
            step.dst = r[10]
            step.size = r[11]
            step.measured_s = r[12]
            step.measured_start_s = r[13]
            step.traced_gpu = r[14]
            step.host_s = r[15]
            step.__class__ = step_class
        else:   # a file before version 9: the measured values in JSON
            m = _step_measurement(next(measured), r[_APP], r[0], r[-1])
            step = Step(r[0], r[1], r[2], r[3], afters[r[4]], r[5], r[6], r[7], bool(r[8]), r[9],
                        r[10], r[11], *(m.get(key, r[_MEASURED_AT[key]]) for key in MEASURED_FIELDS))
        if r[_APP] != last_app:
            last_app, app_steps = r[_APP], steps[r[_APP]]
        app_steps.append(step)
    return steps


_NO_APP = object()


def _in_order(rows: list) -> bool:
    """Whether ``rows`` are one application's steps at positions 0, 1, 2, ... (as a save
    writes them; found a column at a time, without the sort's 10^5 keys)."""
    return (len(set(map(itemgetter(_APP), rows))) <= 1
            and list(map(itemgetter(_APP + 1), rows)) == list(range(len(rows))))


def _dependencies(rows: list) -> dict:
    """Each distinct ``after_steps`` text of ``rows`` -> its tuple of step ids (``[]`` and
    the lists a trace repeats parsed once, by the C scanner: json.loads costs ~4x as much
    per call); a text that is not a JSON list of text is refused naming its first step."""
    texts = list(dict.fromkeys(map(itemgetter(_AFTER), rows)))
    if "[]" in texts:
        texts.remove("[]")
    values = _json_values(texts)
    afters: dict = {"[]": ()}
    # (checked all at once, each value's type and then every id's, in C: a trace's
    # synchronisations each wait for their own list, 3*10^4 of them at 10^5 steps)
    if set(map(type, values)) <= {list} and set(map(type, chain.from_iterable(values))) <= {str}:
        afters.update(zip(texts, map(tuple, values)))
        return afters
    for text, after in zip(texts, values):
        if type(after) is not list or (after and not all(type(x) is str for x in after)):
            r = next(r for r in rows if r[_AFTER] == text)
            raise ProjectFormatError(f"application {r[_APP]}, step {r[0]}: dependencies must be a "
                                     f"JSON list of step ids")
    raise AssertionError("a refused list of dependencies not found")   # (unreachable)


def _step_checks() -> dict:
    """What the steps' number and text columns must hold: column -> (what a wrong value
    breaks, an SQL test true for a right one)."""
    def measure(c, null_ok):
        number = f"(typeof({c}) = 'real' AND {c} >= 0 AND {c} < 9e999)"
        return f"({c} IS NULL OR {number})" if null_ok else number
    return {"fraction": ("share must be a number", "typeof(fraction) IN ('integer', 'real')"),
            "measured_s": ("measured measured_s must be a number >= 0", measure("measured_s", True)),
            "measured_start_s": ("measured measured_start_s must be a number >= 0",
                                 measure("measured_start_s", True)),
            "host_s": ("measured host_s must be a number >= 0", measure("host_s", False)),
            "traced_gpu": ("measured traced_gpu must be text", "typeof(traced_gpu) = 'text'")}


_STEP_CHECKS = _step_checks()
_STEP_TESTS = " AND ".join(test for _what, test in _STEP_CHECKS.values())


def _declared_real_tests() -> str:
    """:data:`_STEP_TESTS` without ``typeof()`` (a third of the usual file's scan), for a
    table whose measured numbers are declared REAL, as every schema of ours declares them:
    a number in such a column is always a real (SQLite makes an integer written there a
    real, and reads one stored as an integer back as a real), and text and binary data
    compare greater than every number and text less than binary data, so each test holds
    exactly when the typed one does."""
    def measure(c, null_ok):
        number = f"({c} >= 0 AND {c} < 9e999)"
        return f"({c} IS NULL OR {number})" if null_ok else number
    return " AND ".join(("fraction >= -9e999 AND fraction <= 9e999", measure("measured_s", True),
                         measure("measured_start_s", True), measure("host_s", False),
                         "traced_gpu >= '' AND traced_gpu < x''"))


_DECLARED_REAL_TESTS = _declared_real_tests()
_MEASURED_REAL = ("measured_s", "measured_start_s", "host_s")


def _tests_for(db: Database) -> str:
    """The steps' tests for ``db``'s table: without typeof() when its measured numbers are
    declared REAL."""
    declared = {name: kind for _cid, name, kind, *_rest
                in db.execute("PRAGMA table_info(application_steps)").fetchall()}
    return (_DECLARED_REAL_TESTS if all(str(declared.get(c, "")).upper() == "REAL"
                                        for c in _MEASURED_REAL) else _STEP_TESTS)


def _check_step_columns(db: Database) -> None:
    """The steps' number and text columns hold values of their types (one query: the
    first wrong row in program order is named)."""
    checks = _STEP_CHECKS
    row = db.execute(f"SELECT application_id, id, "
                     f"{', '.join(f'NOT ({t})' for _w, t in checks.values())}, "
                     f"{', '.join(checks)} FROM application_steps WHERE NOT ({_STEP_TESTS}) "
                     f"ORDER BY application_id, position LIMIT 1").fetchone()
    if row is not None:
        k = len(checks)
        what, value = next((what, value) for (what, _t), wrong, value
                           in zip(checks.values(), row[2:2 + k], row[2 + k:]) if wrong)
        got = "" if what.startswith("share") else f", got {value!r}"
        raise ProjectFormatError(f"application {row[0]}, step {row[1]}: {what}{got}")


#: the steps' columns in Step's field order (``after_steps`` for ``after``)
_STEP_COLUMNS_READ = _STEP_READ[:_APP]


def _one_application(db: Database) -> dict[str, list] | None:
    """When the steps are the usual file's, one application's rows stored in program order
    (each row's position is its rowid less the first rowid), no ``measured`` JSON and every
    typed column right (:func:`_check_step_columns`' tests, without typeof() as
    :func:`_tests_for` allows), that application's steps read
    in rowid order without the application, position and JSON columns (application id ->
    steps; {} for no steps); None for any other file, read (and checked) by
    :func:`_read_steps`. One scan of the table that stops at the first other row tells it:
    the reading then fetches 16 columns of each row instead of 19, and neither sorts nor
    compares them (10^5 steps of a trace: about 0.1 s less). The rows are taken from the
    cursor as the steps are made (each row's tuple freed before the next is fetched) and
    each distinct list of dependencies parsed when first met (:func:`_dependency_list`)."""
    first = db.execute("SELECT application_id, rowid FROM application_steps "
                       "ORDER BY rowid LIMIT 1").fetchone()
    if first is None:
        return {}
    app, first_rowid = first
    other = db.execute(f"SELECT rowid FROM application_steps WHERE application_id IS NOT ? "
                       f"OR position IS NOT rowid - ? OR measured IS NOT '{{}}' "
                       f"OR NOT coalesce({_tests_for(db)}, 0) LIMIT 1", [app, first_rowid]).fetchone()
    if other is not None:
        return None
    rows = db.execute(f"SELECT {', '.join(_STEP_COLUMNS_READ)} FROM application_steps "
                      f"ORDER BY rowid")
    afters: dict = {"[]": ()}
    steps: list[Step] = []
    append, new, slots, step_class = steps.append, object.__new__, step_slots(), Step
    step: Any   # (a StepSlots that becomes a Step)
    try:
        for (id_, kind, name, stream, after, launch, gpu, fraction, concurrent, src, dst, size,
             measured_s, measured_start_s, traced_gpu, host_s) in rows:   # (Step's field order)
            # made by setting its slots, the same object as Step(*row) makes; the text a trace
            # repeats (kind, name, stream, launch, devices) one object per value, interned
            # (SQLite gives a new string per row): each is hashed once, and compared by
            # identity with the program's own constants and keys, when the steps are built,
            # simulated and written out (10^5 steps: the whole timeline --json 0.1 s less for
            # 0.02 s more here)
            step = new(slots)
            step.id = id_
            step.kind = intern(kind)
            step.name = intern(name)
            step.stream = intern(stream)
            deps = afters.get(after)
            if deps is None:
                deps = afters[after] = _dependency_list(after, app, id_)
            step.after = deps
            step.launch = launch and intern(launch)
            step.gpu = gpu and intern(gpu)
            step.fraction = fraction
            step.concurrent = bool(concurrent)
            step.src = src and intern(src)
            step.dst = dst and intern(dst)
            step.size = size
            step.measured_s = measured_s
            step.measured_start_s = measured_start_s
            step.traced_gpu = intern(traced_gpu)
            step.host_s = host_s
            step.__class__ = step_class
            append(step)
    except TypeError:   # (interning: text of another type, where only text is written)
        raise ProjectFormatError(f"application {app}, step {id_}: kind, name, stream, launch, "
                                 f"GPU, devices and traced GPU must be text") from None
    return {app: steps}


def _dependency_list(text, app: str, step: str) -> tuple:
    """The step ids of an ``after_steps`` text (a JSON list of text), else refused naming
    the step."""
    try:
        after, end = _SCAN(text, 0)
    except (StopIteration, ValueError, TypeError, RecursionError):
        after, end = None, -1
    if end != len(text) or type(after) is not list or not all(type(x) is str for x in after):
        raise ProjectFormatError(f"application {app}, step {step}: dependencies must be a "
                                 f"JSON list of step ids")
    return tuple(after)


#: one JSON value at a position: (value, end); the C scanner the decoder sets up for itself
#: (an attribute typeshed does not declare)
_SCAN = vars(json.JSONDecoder())["scan_once"]


class _NotJSON:
    """What :func:`_json_values` gives for a text that is not one JSON value."""


_NOT_JSON = _NotJSON()


def _json_values(texts: list) -> list:
    """The JSON value of each text (``json.loads``); :data:`_NOT_JSON` for one that is not
    exactly one JSON value (then each such row is told apart by its own check). One C call
    per text, and none for a repeated ``[]`` or ``{}``."""
    try:
        parsed = list(map(_SCAN, texts, [0] * len(texts)))
    except (StopIteration, ValueError, TypeError, RecursionError):
        return [_loads_or_not(t) for t in texts]
    if list(map(len, texts)) != [end for _value, end in parsed]:   # more text after a value
        return [_loads_or_not(t) for t in texts]
    return [value for value, _end in parsed]


def _loads_or_not(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return _NOT_JSON


_MEASURED_NUMBERS = frozenset(MEASURED_FIELDS) - {"traced_gpu"}


def _step_measurement(values, app_id: str, step_id: str, text) -> dict:
    """The ``measured`` column of a step (``text``, its JSON value ``values``): known keys
    with values of their type."""
    if type(values) is not dict:
        if values is _NOT_JSON:
            raise ProjectFormatError(f"application {app_id}, step {step_id} measurement is not valid JSON: "
                                     f"{str(text)[:60]!r}")
        raise ProjectFormatError(f"application {app_id}, step {step_id} measurement must be a JSON object, got "
                                 f"{type(values).__name__}")
    for key, value in values.items():
        if key in _MEASURED_NUMBERS:
            if type(value) is float and 0.0 <= value < math.inf:
                continue   # the common case: a float, as saved
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and value >= 0
        elif key == "traced_gpu":
            ok = isinstance(value, str)
        else:
            raise ProjectFormatError(f"application {app_id}, step {step_id}: unknown measured value {key!r}; known: "
                                     f"{', '.join(MEASURED_FIELDS)}")
        if not ok:
            raise ProjectFormatError(f"application {app_id}, step {step_id}: measured {key} must be "
                                     f"{'text' if key == 'traced_gpu' else 'a number >= 0'}, "
                                     f"got {value!r}")
        if key != "traced_gpu":
            values[key] = float(value)
    return values


def _read_kernels(db: Database) -> dict[str, KernelGraph]:
    """Kernels in order, built through the graph's own checked mutations."""
    instructions, edges, loops = defaultdict(list), defaultdict(list), defaultdict(list)
    load_at = INSTRUCTION_COLUMNS.index("is_load") + 1
    for r in _rows(db, "kernel_instructions", ("kernel_id",) + INSTRUCTION_COLUMNS,
                   "kernel_id, position"):
        # the columns are Instruction's fields in order; is_load is stored as 0/1
        instructions[r[0]].append(Instruction(  # type: ignore[call-arg]  # every field, in order
            *r[1:load_at], bool(r[load_at]), *r[load_at + 1:]))
    for kid, id_, src, dst, kind, latency, taken in _rows(
            db, "kernel_edges", ("kernel_id",) + EDGE_COLUMNS, "kernel_id, position"):
        edges[kid].append(Edge(id_, src, dst, kind, latency, None if taken is None else bool(taken)))
    members = defaultdict(set)
    for kid, loop_id, ins_id in db.execute(
            "SELECT kernel_id, loop_id, instruction_id FROM kernel_loop_members").fetchall():
        members[(kid, loop_id)].add(ins_id)
    for kid, id_, name, iterations in _rows(db, "kernel_loops", ("kernel_id",) + LOOP_COLUMNS,
                                            "kernel_id, position"):
        loops[kid].append((id_, name, iterations))
    kernels = {}
    for kid, name, latency_table, description, variables, extras in _rows(db, "kernels",
                                                                           KERNEL_COLUMNS):
        graph = KernelGraph(name=name, latency_table=latency_table, description=description,
                            variables=_from_json(variables, f"kernel {kid} variables"))
        try:
            for ins in instructions.pop(kid, ()):
                graph.add_instruction(ins)
            for edge in edges.pop(kid, ()):
                graph.add_edge(edge)
            graph.add_loops(Loop(id_, frozenset(members.pop((kid, id_), ())),
                                 parse(iterations), loop_name)
                            for id_, loop_name, iterations in loops.pop(kid, ()))
            read_graph_extras(graph, _from_json(extras or "{}", f"kernel {kid} extras"))
        except ModelError as exc:
            raise ProjectFormatError(f"kernel {kid}: {exc}") from None
        kernels[kid] = graph
    orphans = sorted(set(instructions) | set(edges) | set(loops) | {k for k, _ in members})
    if orphans:
        raise ProjectFormatError(f"rows of missing kernel(s) {', '.join(orphans)}")
    return kernels


# -- files -----------------------------------------------------------------------------------
def read_project_file(path: str | Path) -> tuple[Project, ProjectFileInfo]:
    """The project in ``path`` and what the file says about itself. Never writes.

    Raises ProjectFormatError for a file that is not a gpumodeler project, is corrupted or
    was written by a newer gpumodeler (the message names the file and what was expected)."""
    path = Path(path)
    check_header(path)
    db: Database = connect_read_only(path)
    try:
        # the pages the integrity check reads stay cached for the scans of the steps that
        # follow, up to 64 MiB (SQLite's default keeps 2 MiB: a trace of 10^5 steps is
        # ~18 MB, its pages read from the file again by each scan; 0.03 s at 10^5 steps)
        db.execute("PRAGMA cache_size = -65536")
        meta = inspect_file(db, path)
        if meta["pending"]:
            db, old = upgraded_copy(db, path), db
            old.close()
        project = _read(db)
    except ProjectFormatError as exc:
        text = str(exc)
        raise ProjectFormatError(text if text.startswith(str(path)) else
                                 f"{path}: damaged project file: {text}") from None
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        raise ProjectFormatError(f"{path}: the project file is corrupted ({exc})") from None
    except (ModelError, TypeError, ValueError) as exc:
        raise ProjectFormatError(f"{path}: damaged project file ({exc})") from None
    finally:
        db.close()
    info = ProjectFileInfo(path, meta["format"], meta["version"], meta["app_version"],
                           meta["pending"])
    return project, info


def load_project(path: str | Path) -> Project:
    """Read a project file (see :func:`read_project_file`)."""
    return read_project_file(path)[0]


def save_project(project: Project, path: str | Path, *, force: bool = False) -> Path:
    """Write ``project`` to ``path`` atomically (see the module docstring); returns ``path``.

    An existing file at ``path`` is replaced only if it is a gpumodeler project this version
    reads, or with ``force=True``; otherwise ProjectFormatError and nothing is written.
    Raises ProjectAccessError when the file cannot be written; the previous file is then
    unchanged and no temporary file is left behind."""
    path = Path(path)
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise ProjectAccessError(f"{path}: is a folder; give a file name inside it, e.g. "
                                 f"{path / ('project' + SUFFIX)}")
    if target.exists() and not force:
        _check_replaceable(target, path)
    kept = "the previous file is unchanged" if target.exists() else "nothing was written"
    remove_stale_temps(target)  # left by saves of this file that were killed mid-way
    tmp, lock = _create_temp(target, path)
    db = None
    try:
        db = new_database(tmp)
        with db.atomic():
            _write(db, project)
        db.close()
        db = None
        _fsync(tmp)
        if target.exists():  # keep the permissions the user gave the file
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
        fsync_folder(target.parent)
    except (sqlite3.Error, OSError, OverflowError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ProjectAccessError(f"{path}: cannot save the project ({reason}); {kept}") from None
    except ProjectAccessError as exc:
        raise ProjectAccessError(f"{path}: {exc}; {kept}") from None
    finally:
        if db is not None:
            db.close()
        try:
            tmp.unlink()
        except OSError:  # already renamed (FileNotFoundError), or cannot be removed
            pass
        release(lock)
    return path


def _check_replaceable(target: Path, shown: Path) -> None:
    """Refuse to overwrite something that is not a project we can read (cheap: no
    integrity scan, just the header and meta)."""
    if target.stat().st_size == 0:
        return
    try:
        check_header(target)
        db = connect_read_only(target)
        try:
            inspect_file(db, target, integrity=False)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise ProjectFormatError(f"{target}: the file is corrupted ({exc})") from None
        finally:
            db.close()
    except ProjectFormatError as exc:
        raise ProjectFormatError(f"{exc}; not overwriting {shown} (save under another name, "
                                 f"or force the save to replace it)") from None


def _create_temp(target: Path, shown: Path) -> tuple[Path, int]:
    """The save's temporary file and the descriptor that locks it until the save is over
    (:mod:`gpumodeler.db.atomic_files`)."""
    try:
        return create_temp(target)
    except FileExistsError:
        raise ProjectAccessError(f"{shown}: cannot create a temporary file next to it") from None
    except OSError as exc:
        raise ProjectAccessError(f"{shown}: cannot save the project there "
                                 f"({exc.strerror})") from None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["save_project", "load_project", "read_project_file", "ProjectFileInfo",
           "ProjectFormatError", "ProjectAccessError", "FORMAT", "SCHEMA_VERSION", "SUFFIX"]
