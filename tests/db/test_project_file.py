"""Project files (.gpm): round trips of every table, migration from the first schema, safe
saving (a failed save leaves the previous file), bad files refused untouched, the example."""
import dataclasses
import hashlib
import importlib.util
import json
import math
import os
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import HealthCheck, given, settings, strategies as st

from gpumodeler.core.application.app import MEASURED_FIELDS, STEP_FIELDS, Application, Step
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop, from_dict, to_dict
from gpumodeler.core.kernel.kernel_format import LAUNCH_ONLY_FIELDS
from gpumodeler.core.kernel.latency_tables import MEMORY_LEVELS
from gpumodeler.core.project import (Calibration, Connection, LaunchConfig, LaunchTerms, Measurement,
                                     PlacedDevice, PredictionRecord, Project, SweepDef,
                                     Transfer)
from gpumodeler.db import project_file as pf
from gpumodeler.db import project_schema
from gpumodeler.db.errors import DatabaseFormatError
from gpumodeler.core.errors import FormatError
from gpumodeler.db.project_file import (APPLICATION_COLUMNS, STEP_COLUMNS, ProjectAccessError, ProjectFormatError, load_project,
                                        read_project_file, save_project)

from repetitions import repetitions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"


def file_hash(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def saxpy2_graph() -> KernelGraph:
    return from_dict(json.loads((ROOT / "resources/kernels/saxpy2-maxwell.json").read_text()))


def nested_graph() -> KernelGraph:
    """Every instruction attribute, every edge kind, explicit latencies, taken flags, and
    loops nested two deep."""
    g = KernelGraph(name="nested", latency_table="maxwell-volkov", description="tiled kernel",
                    variables={"a": 16, "b": 2.5})
    g.add_instruction(Instruction.make("s", "S2R", label="S2R R0, SR_TID.X", x=-10, y=2.25))
    g.add_instruction(Instruction.make("ld", "LDG", memory_level="l2", width_bytes=16,
                                       stride=2.5, pattern="random", hit_ratio=0.25,
                                       segment_bytes=128, x=0.0, y=40.0))
    g.add_instruction(Instruction.make("lds", "LDS", memory_level="shared_2way",
                                       bank_conflict_degree=4, pattern="broadcast"))
    g.add_instruction(Instruction.make("f", "FFMA"))
    g.add_instruction(Instruction.make("mystery", "XYZZY", unit="sfu", latency_class="sfu",
                                       label="an opcode the classifier does not know"))
    g.add_instruction(Instruction.make("bar", "BAR"))
    g.add_instruction(Instruction.make("br", "BRA"))
    g.add_instruction(Instruction.make("end", "END"))
    # insert one out of order to make program order differ from insertion order
    g.add_instruction(Instruction.make("first", "MOV"), index=0)
    g.add_edge(Edge("e1", "first", "s", "ilp"))
    g.add_edge(Edge("e2", "s", "ld", "dual", latency=0))
    g.add_edge(Edge("e3", "ld", "f", "memory", latency=350))
    g.add_edge(Edge("e4", "lds", "f", "dependency", latency=24.5))
    g.add_edge(Edge("e5", "f", "mystery", "ilp"))
    g.add_edge(Edge("e6", "mystery", "bar", "barrier"))
    g.add_edge(Edge("e7", "bar", "br", "ilp", latency=6))
    g.add_edge(Edge("back", "br", "ld", "branch", latency=12, taken=True))
    g.add_edge(Edge("fall", "br", "end", "branch", taken=False))
    g.add_edge(Edge("inner_back", "f", "lds", "branch"))
    g.add_edge(Edge("repl", "br", "end", "replacement", latency=150.0))
    g.add_loop(Loop.make("outer", ["ld", "lds", "f", "mystery", "bar", "br"], "N/256",
                         "grid-stride loop"))
    g.add_loop(Loop.make("inner", ["lds", "f"], "2*a + 1"))
    return g


def full_project() -> Project:
    """One of everything a project holds."""
    p = Project("every table — ünïcode")
    p.description = "a project with one of everything\nover two lines"
    p.put("devices", PlacedDevice("host1", "host", "Gajger GTX 970 testbed host", label="host",
                                  x=0, y=0.5))
    p.put("devices", PlacedDevice("gpu1", "gpu", "GeForce GTX 970", count=2,
                                  overrides={"sms": 16, "sm_clock_hz": 1.1e9,
                                             "compute_capability": "5.2"},
                                  label="two 970s", x=360.25, y=-12))
    p.put("devices", PlacedDevice("gpu0", "gpu", "GeForce GTX 980"))
    p.put("connections", Connection("c2", "NVLink", "gpu1", "gpu0", "nvlink"))
    p.put("connections", Connection("c1", "PCIe 3.0 x16", "host1", "gpu1", "pcie",
                                    overrides={"bandwidth_bytes_per_s": 12e9,
                                               "lambda_htod": 0.7}, label="slot 1"))
    p.put_kernel("saxpy2", saxpy2_graph())
    p.put_kernel("k0", nested_graph())
    p.put("launches", LaunchConfig(
        "l1", name="Fig. 5.24", gpu="gpu1", kernel="saxpy2", block_size=256,
        data_size=400_000_000, registers=8, lam=0.703787, variables={"a": 128},
        transfers=(Transfer("htod", "4*N", "c1"), Transfer("htod", "4*N"),
                   Transfer("dtoh", "4*N", "c1"))))
    p.put("launches", LaunchConfig(
        "l0", name="expert", gpu="gpu0", kernel="k0", block_size=128, grid_size=4096,
        registers=32, shared_mem=8192, occupancy_override=32.5, lam=1,
        variables={"a": 3, "b": 0.5},
        kernel_overrides={"issued_instructions": "26 + 4*a", "latency_bound": "1000"}))
    p.put("launches", LaunchConfig("l2"))  # all defaults, no GPU or kernel chosen yet
    p.put("sweeps", SweepDef("s1", "l1", "a", tuple(2 ** k for k in range(13)), name="a"))
    p.put("sweeps", SweepDef("s2", "l1", "gpu", ("GeForce GTX 970", "GeForce GTX 980"),
                             devices=("GeForce GTX 970", "GeForce GTX 980")))
    p.put("sweeps", SweepDef("s3", "l0", "occupancy", (8, 16.5, 32), ()))
    p.put("measurements", Measurement("m1", "l1", "kernel", {"data_size": 4e8, "a": 128},
                                      0.1466549, "Gajger Fig. 5.24"))
    p.put("measurements", Measurement("m2", None, "htod", {"bytes": 1600000000}, 0.147))
    p.put("calibrations", Calibration("cal1", "l1", "kernel", {"lam": 0.703787}, 1.25,
                                      "2024-05-01T12:00:00Z"))
    p.put("calibrations", Calibration("cal2", None, "htod",
                                      {"startup_s": 3.96868e-6, "bandwidth_bytes_per_s": 15.8e9},
                                      0))
    p.put("history", PredictionRecord(
        "h1", "2024-05-01T12:00:00Z", "l1",
        {"variables": {"a": 128}, "block_size": 256, "gpu": "GeForce GTX 970"},
        {"kernel_time_s": 0.1458, "transfer_times_s": [0.147, 0.147, 0.155],
         "mode": "throughput", "knee_occupancy": math.inf, "nested": {"deep": [1, "x", None]}}))
    p.put("applications", Application("app1", "two streams", (
        Step("s1", "copy", "upload", "0", src="host1", dst="gpu1", size="4*N"),
        Step("s2", "kernel", "", "0", launch="l1", fraction=0.25, concurrent=True,
             measured_s=2.5e-5, measured_start_s=0.0, traced_gpu="NVIDIA A100"),
        Step("s3", "copy", "peer", "1", after=("s1",), src="gpu1", dst="gpu0", size="1e6"),
        Step("s4", "sync", "wait", "2", after=("s2", "s3"), host_s=1e-3)),
        variables={"N": 1e6}, policy="greedy", host_power_w=120.5))
    p.put("applications", Application("app0"))
    return p


def dump(path) -> list[str]:
    """The file's content as SQL, without the time the migrations were recorded."""
    conn = sqlite3.connect(path)
    lines = [line for line in conn.iterdump() if "_sqlite_migrations" not in line]
    conn.close()
    return lines


# -- round trips -----------------------------------------------------------------------------
def test_every_table_round_trips(tmp_path):
    project = full_project()
    path = save_project(project, tmp_path / "p.gpm")
    loaded, info = read_project_file(path)
    assert loaded == project
    assert (info.format, info.schema_version, info.upgraded) == ("gpumodeler-project", project_schema.SCHEMA_VERSION, False)
    # what == does not see: order, value types, ids
    for name in ("devices", "connections", "launches", "sweeps", "measurements",
                 "calibrations", "history"):
        assert list(getattr(loaded, name)) == list(getattr(project, name)), name
        assert repr(getattr(loaded, name)) == repr(getattr(project, name)), name
    assert list(loaded.kernels) == ["saxpy2", "k0"]
    for kid, graph in project.kernels.items():
        got = loaded.kernels[kid]
        assert list(got.instructions) == list(graph.instructions)  # program order
        assert repr(got.instructions) == repr(graph.instructions)
        assert repr(got.edges) == repr(graph.edges)
        assert {k: (lp.members, lp.iterations.text, lp.name) for k, lp in got.loops.items()} \
            == {k: (lp.members, lp.iterations.text, lp.name) for k, lp in graph.loops.items()}
    k0 = loaded.kernels["k0"]
    assert list(k0.instructions)[0] == "first"
    assert k0.edges["back"].taken is True and k0.edges["fall"].taken is False
    assert k0.edges["inner_back"].taken is None and k0.edges["e1"].latency is None
    assert k0.instructions["ld"].stride == 2.5 and k0.instructions["lds"].bank_conflict_degree == 4
    assert loaded.history["h1"].outputs["knee_occupancy"] == math.inf


def test_loaded_kernels_relay_edits_to_the_project(tmp_path):
    loaded = load_project(save_project(full_project(), tmp_path / "p.gpm"))
    events = []
    loaded.listeners.append(lambda event, payload: events.append(event))
    loaded.kernels["k0"].update_instruction("f", label="edited")
    assert events == ["kernel_edited"]


def test_saving_is_idempotent(tmp_path):
    project = full_project()
    a, b = tmp_path / "a.gpm", tmp_path / "b.gpm"
    save_project(project, a)
    save_project(load_project(a), b)
    assert dump(a) == dump(b)
    save_project(project, a)  # over itself
    assert dump(a) == dump(b)
    assert load_project(a) == load_project(b) == project
    assert sorted(os.listdir(tmp_path)) == ["a.gpm", "b.gpm"]


def test_an_empty_project_round_trips(tmp_path):
    project = Project()
    assert load_project(save_project(project, tmp_path / "empty.gpm")) == project


@pytest.mark.parametrize("cls, columns", [
    (PlacedDevice, pf.DEVICE_COLUMNS), (Connection, pf.CONNECTION_COLUMNS),
    # an instruction's launch-time fields (the L1 share a launch sets) are never stored
    (Instruction, pf.INSTRUCTION_COLUMNS + tuple(sorted(LAUNCH_ONLY_FIELDS))), (Edge, pf.EDGE_COLUMNS),
    (Loop, ("id", "members", "name", "iterations")),
    (LaunchConfig, pf.LAUNCH_COLUMNS + ("transfers",)), (Transfer, pf.TRANSFER_COLUMNS),
    (SweepDef, pf.SWEEP_COLUMNS + ("values", "devices")),
    (Measurement, pf.MEASUREMENT_COLUMNS),
    (Calibration, tuple(c.replace("calibrated_values", "values")
                        for c in pf.CALIBRATION_COLUMNS)),
    (PredictionRecord, pf.HISTORY_COLUMNS),
])
def test_every_field_of_the_document_has_a_column(cls, columns):
    """A field added to a core class needs a migration and a mapping here."""
    assert {f.name for f in dataclasses.fields(cls)} == set(columns)
    if cls in (Instruction, Edge):  # read positionally, so the order matters too
        assert tuple(f.name for f in dataclasses.fields(cls)) == columns


def test_every_field_of_the_graph_and_project_is_stored():
    stored = {"name", "latency_table", "description", "variables", "instructions", "edges",
              "loops", "registers_per_thread", "static_shared_bytes", "guards", "block_trips",
              "trip_tests"}
    assert {f.name for f in dataclasses.fields(KernelGraph)} - {"listeners"} == stored
    attrs = set(vars(Project()))
    assert attrs - {"listeners", "_kernel_relays"} == {
        "name", "description", "devices", "connections", "kernels", "launches", "sweeps",
        "measurements", "calibrations", "history", "applications"}
    assert {f.name for f in dataclasses.fields(Application)} - {"steps"} == set(APPLICATION_COLUMNS)
    assert {f.name for f in dataclasses.fields(Step)} | {"after_steps", "measured"} == \
        set(STEP_COLUMNS) | {"after"} | set(MEASURED_FIELDS)
    # (the reader makes a step from its row by position)
    assert tuple(f.name for f in dataclasses.fields(Step)) == (
        "id", "kind", "name", "stream", "after", "launch", "gpu", "fraction", "concurrent", "src",
        "dst", "size") + MEASURED_FIELDS


# -- random projects -------------------------------------------------------------------------
ident = st.text("abcxyz019_-.", min_size=1, max_size=5)
text = st.text(max_size=10)
finite = st.floats(allow_nan=False, allow_infinity=False)
number = st.one_of(st.integers(-10**9, 10**9), finite)
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), finite, text)
json_value = json_scalar | st.lists(json_scalar, max_size=2) \
    | st.dictionaries(text, json_scalar, max_size=2)
small_dict = st.dictionaries(text, json_value, max_size=3)
OPCODES = ["MOV", "IADD", "FFMA", "LDG", "LDS", "STG", "BRA", "BAR", "EXIT", "MUFU", "DFMA",
           "END"]


@st.composite
def graphs(draw):
    g = KernelGraph(name=draw(text), latency_table=draw(st.none() | text),
                    description=draw(text),
                    variables=draw(st.dictionaries(ident, number, max_size=3)))
    n = draw(st.integers(1, 7))
    for i in range(n):
        kw = dict(label=draw(text), x=draw(number), y=draw(number),
                  memory_level=draw(st.none() | st.sampled_from(MEMORY_LEVELS)),
                  width_bytes=draw(st.sampled_from((1, 2, 4, 8, 16))),
                  stride=draw(st.floats(1, 1e6)), pattern=draw(st.sampled_from(
                      ("strided", "random", "broadcast"))),
                  hit_ratio=draw(st.floats(0, 1)),
                  segment_bytes=draw(st.sampled_from((32, 64, 128))),
                  bank_conflict_degree=draw(st.integers(1, 32)))
        g.add_instruction(Instruction.make(f"i{i}", draw(st.sampled_from(OPCODES)), **kw),
                          index=draw(st.none() | st.integers(0, n)))
    ids = list(g.instructions)
    for j in range(draw(st.integers(0, 8)) if n > 1 else 0):
        src, dst = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=2, unique=True))
        g.add_edge(Edge(f"e{j}", src, dst, draw(st.sampled_from(
            ("ilp", "dual", "dependency", "memory", "branch", "barrier", "replacement"))),
            draw(st.none() | st.integers(0, 1000) | st.floats(0, 1e6)),
            draw(st.none() | st.booleans())))
    lo, hi = 0, n  # nested loops over shrinking ranges of program order
    for k in range(draw(st.integers(0, 3))):
        if hi - lo < 1:
            break
        a = draw(st.integers(lo, hi - 1))
        b = draw(st.integers(a + 1, hi))
        if (a, b) == (lo, hi) and k:
            break
        g.add_loop(Loop.make(f"loop{k}", ids[a:b], draw(st.sampled_from(
            ("a", "4", "N/256", "2*a + 1", "ceil(N / 1024)"))), draw(text)))
        lo, hi = a, b
    return g


@st.composite
def projects(draw):
    p = Project(draw(text))
    p.description = draw(text)
    for d in draw(st.lists(st.builds(PlacedDevice, ident, st.sampled_from(("gpu", "host")),
                                     text, st.integers(1, 1024), small_dict, text, number,
                                     number), max_size=3, unique_by=lambda d: d.id)):
        p.put("devices", d)
    for c in draw(st.lists(st.builds(Connection, ident, text, ident, ident,
                                     st.sampled_from(("pcie", "nvlink", "network", "other")),
                                     small_dict, text), max_size=2, unique_by=lambda c: c.id)):
        p.put("connections", c)
    for kid in draw(st.lists(ident, max_size=2, unique=True)):
        p.put_kernel(kid, draw(graphs()))
    transfers = st.lists(st.builds(Transfer, st.sampled_from(("htod", "dtoh")),
                                   st.sampled_from(("4*N", "1e9", "N*a")), st.none() | ident),
                         max_size=3).map(tuple)
    for la in draw(st.lists(st.builds(
            LaunchConfig, ident, text, st.none() | ident, st.none() | ident,
            st.integers(1, 1024), st.none() | st.integers(1, 2**40),
            st.none() | st.integers(1, 2**40), st.integers(0, 255), st.integers(0, 2**20),
            st.none() | st.floats(0.5, 64), st.one_of(st.integers(1, 4), st.floats(0.01, 10)),
            st.dictionaries(ident, number, max_size=3), transfers,
            st.dictionaries(st.sampled_from(("latency_bound", "issued_instructions")),
                            st.sampled_from(("26 + 4*a", "1000")), max_size=2),
            st.builds(LaunchTerms, st.booleans(), st.booleans(), st.booleans(),
                      st.none() | st.floats(0, 1e-3), st.none() | st.floats(1e9, 1e13))),
            max_size=2, unique_by=lambda la: la.id)):
        p.put("launches", la)
    values = st.lists(st.one_of(number, text), max_size=5).map(tuple)
    for s in draw(st.lists(st.builds(SweepDef, ident, ident, text, values,
                                     st.lists(text, max_size=2).map(tuple), text),
                           max_size=2, unique_by=lambda s: s.id)):
        p.put("sweeps", s)
    for m in draw(st.lists(st.builds(Measurement, ident, st.none() | ident,
                                     st.sampled_from(("kernel", "htod", "dtoh")), small_dict,
                                     number, text), max_size=2, unique_by=lambda m: m.id)):
        p.put("measurements", m)
    for c in draw(st.lists(st.builds(Calibration, ident, st.none() | ident, text, small_dict,
                                     number, text), max_size=2, unique_by=lambda c: c.id)):
        p.put("calibrations", c)
    for h in draw(st.lists(st.builds(PredictionRecord, ident, text, st.none() | ident,
                                     small_dict, small_dict), max_size=2,
                           unique_by=lambda h: h.id)):
        p.put("history", h)
    return p


@settings(max_examples=repetitions(8, 20), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(project=projects())
def test_random_projects_round_trip(project, tmp_path):
    path = tmp_path / "random.gpm"
    save_project(project, path)
    loaded = load_project(path)
    assert loaded == project
    for name in ("devices", "connections", "launches", "sweeps", "measurements",
                 "calibrations", "history"):
        assert repr(getattr(loaded, name)) == repr(getattr(project, name)), name
    assert [repr(to_dict(g)) for g in loaded.kernels.values()] == \
        [repr(to_dict(g)) for g in project.kernels.values()]


def test_numpy_values_and_non_finite_numbers_are_stored(tmp_path):
    import numpy as np
    p = Project()
    p.put("history", PredictionRecord("h", "now", None, {"a": np.int64(3)},
                                      {"t": np.float64(0.5), "v": np.arange(3), "nan": math.nan,
                                       "ninf": -math.inf}))
    p.put("sweeps", SweepDef("s", "l", "block_size", tuple(np.array([32, 64]))))
    got = load_project(save_project(p, tmp_path / "np.gpm"))
    out = got.history["h"].outputs
    assert got.history["h"].inputs == {"a": 3}
    assert out["t"] == 0.5 and out["v"] == [0, 1, 2] and math.isnan(out["nan"])
    assert out["ninf"] == -math.inf
    assert got.sweeps["s"].values == (32, 64)


# -- migrations ------------------------------------------------------------------------------
def test_a_file_of_the_first_schema_opens_upgraded_and_untouched(tmp_path):
    path = tmp_path / "v1.gpm"
    db = sqlite_utils.Database(path)
    project_schema.migrations.apply(db, stop_before="m002_descriptions")
    assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0] == "1"
    assert "description" not in db["project"].columns_dict
    db.execute("INSERT INTO project (id, name) VALUES (1, 'old project')")
    db.execute("INSERT INTO devices VALUES (0, 'gpu1', 'gpu', 'GeForce GTX 970', 1, "
               "'{\"sms\": 13}', '', 10, 20.5)")
    db.execute("INSERT INTO kernels VALUES (0, 'k', 'k', NULL, '', '{\"a\": 4}')")
    for pos, (iid, opcode, unit) in enumerate([("i2", "FADD", "cuda_core"),
                                               ("i1", "BRA", "branch")]):
        db.execute("INSERT INTO kernel_instructions VALUES (?, ?, ?, ?, ?, NULL, NULL, 0, '', "
                   "NULL, 4, 1.0, 'strided', 0.0, 32, 1, 0, 0)", ["k", pos, iid, opcode, unit])
    db.execute("INSERT INTO kernel_edges VALUES ('k', 0, 'b', 'i1', 'i2', 'branch', 12, 1)")
    db.execute("INSERT INTO kernel_loops VALUES ('k', 0, 'L', 'loop', 'a')")
    db.execute("INSERT INTO kernel_loop_members VALUES ('k', 'L', 'i1'), ('k', 'L', 'i2')")
    db.execute("INSERT INTO launches VALUES (0, 'l1', 'run', 'gpu1', 'k', 256, NULL, 1000, 8, "
               "0, NULL, 0.7, '{}', '{}')")
    db.execute("INSERT INTO transfers VALUES ('l1', 0, 'htod', '4*N', NULL)")
    db.execute("INSERT INTO sweeps VALUES (0, 's1', 'l1', 'a')")
    db.execute("INSERT INTO sweep_values VALUES ('s1', 0, 1), ('s1', 1, 2)")
    db.conn.commit()
    db.close()
    before = file_hash(path)

    project, info = read_project_file(path)
    assert file_hash(path) == before  # upgraded in memory, never rewritten on open
    assert (info.schema_version, info.upgraded) == (1, True)
    assert project.name == "old project" and project.description == ""
    assert project.devices["gpu1"] == PlacedDevice("gpu1", "gpu", "GeForce GTX 970", 1,
                                                   {"sms": 13}, "", 10, 20.5)
    assert list(project.kernels["k"].instructions) == ["i2", "i1"]
    assert project.kernels["k"].edges["b"] == Edge("b", "i1", "i2", "branch", 12, True)
    assert project.launches["l1"].transfers == (Transfer("htod", "4*N"),)
    assert project.sweeps["s1"] == SweepDef("s1", "l1", "a", (1, 2), (), "")

    project.description = "now described"
    save_project(project, path)  # an older project of ours may be replaced
    again, info = read_project_file(path)
    assert again == project and (info.schema_version, info.upgraded) == (project_schema.SCHEMA_VERSION, False)


def test_a_file_of_version_2_opens_with_no_applications_and_saves_them(tmp_path):
    path = tmp_path / "v2.gpm"
    db = sqlite_utils.Database(path)
    project_schema.migrations.apply(db, stop_before="m003_applications")
    db.execute("INSERT INTO project (id, name, description) VALUES (1, 'v2 project', 'd')")
    db.execute("INSERT INTO devices VALUES (0, 'gpu1', 'gpu', 'GeForce GTX 970', 1, '{}', '', 0, 0)")
    db.execute("INSERT INTO devices VALUES (1, 'h', 'host', 'Gajger GTX 970 testbed host', 1, '{}', '', 0, 0)")
    db.conn.commit()
    db.close()
    before = file_hash(path)
    project, info = read_project_file(path)
    assert file_hash(path) == before
    assert (info.schema_version, info.upgraded) == (2, True) and project.applications == {}
    project.put("applications", Application("a", steps=(Step("c", "copy", src="h", dst="gpu1", size="8"),)))
    save_project(project, path)
    again, info = read_project_file(path)
    assert again == project and info.schema_version == project_schema.SCHEMA_VERSION


def _version_6_file(path):
    db = sqlite_utils.Database(path)
    project_schema.migrations.apply(db, stop_before="m007_launch_terms")
    db.execute("INSERT INTO project (id, name, description) VALUES (1, 'v6 project', '')")
    db.execute("INSERT INTO launches (position, id, name, gpu, kernel, block_size, grid_size, data_size, "
               "registers, shared_mem, occupancy_override, lam, variables, kernel_overrides) VALUES "
               "(0, 'l1', 'run', 'gpu1', 'k1', 256, NULL, 1000000, 32, 0, NULL, 1.0, '{}', '{}')")
    db.conn.commit()
    db.close()


def test_a_file_of_version_6_opens_with_the_default_kernel_terms_and_saves_them(tmp_path):
    path = tmp_path / "v6.gpm"
    _version_6_file(path)
    before = file_hash(path)
    project, info = read_project_file(path)
    assert file_hash(path) == before and (info.schema_version, info.upgraded) == (6, True)
    assert project.launches["l1"].terms == LaunchTerms()      # predict's defaults
    terms = LaunchTerms(underfill=False, tail=True, launch_overhead=True, launch_overhead_s=5e-6,
                        l2_bandwidth_bytes_per_s=3e12)
    project.launches["l1"] = dataclasses.replace(project.launches["l1"], terms=terms)
    save_project(project, path)
    again, info = read_project_file(path)
    assert again.launches["l1"].terms == terms
    assert info.schema_version == project_schema.SCHEMA_VERSION
    stored = sqlite3.connect(path).execute("SELECT terms FROM launches").fetchone()[0]
    assert json.loads(stored) == {"underfill": False, "tail": True, "launch_overhead_s": 5e-6,
                                  "l2_bandwidth_bytes_per_s": 3e12}   # only what differs


def _version_7_file(path, steps):
    """A project file as gpumodeler wrote it at schema version 7 (each step's measured values
    one JSON object in ``measured``): ``steps`` of one application, in program order."""
    db = sqlite_utils.Database(path)
    project_schema.migrations.apply(db, stop_before="m008_shared_wavefronts")
    db.execute("INSERT INTO project (id, name, description) VALUES (1, 'v7 project', '')")
    db.execute("""INSERT INTO applications VALUES (0, 'app', 'traced', '{"N": 8}', 'greedy', 95.5)""")
    db.conn.executemany(
        "INSERT INTO application_steps (application_id, position, id, kind, name, stream, after_steps, "
        "launch, gpu, fraction, concurrent, src, dst, size, measured) VALUES "
        "('app', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(j, s.id, s.kind, s.name, s.stream, json.dumps(list(s.after)), s.launch, s.gpu, s.fraction,
          int(s.concurrent), s.src, s.dst, s.size, json.dumps(s.measured()))
         for j, s in enumerate(steps)])
    db.conn.commit()
    db.close()


def _traced_steps(n):
    """Steps with every field, measured and not, as a trace and a hand leave them."""
    return tuple(Step(f"x{i}", ["copy", "kernel", "sync"][i % 3], f"n{i % 7}", str(i % 4),
                      after=tuple(f"x{j}" for j in range(max(0, i - i % 3), i)),
                      launch="l1" if i % 3 == 1 else None, gpu="gpu1" if i % 6 == 1 else None,
                      src="host1", dst="gpu1", size=f"{i}*N" if i % 8 == 0 else str(i),
                      measured_s=None if i % 5 == 0 else 1e-6 * i + 1 / 3,
                      measured_start_s=None if i % 5 == 0 else 0.1 * i,
                      traced_gpu="GPU ü" * (i % 2), host_s=0.1 * i if i % 3 == 2 else 0.0,
                      concurrent=bool(i % 2), fraction=1 / (1 + i % 4))
                 for i in range(n))


def test_a_file_of_version_7_opens_with_every_step_and_field_and_saves_them(tmp_path):
    """The measured values of a file before version 9 (JSON per step) are read as before,
    the file untouched; saved, they move to the typed columns and read back equal."""
    path = tmp_path / "v7.gpm"
    steps = _traced_steps(300)
    _version_7_file(path, steps)
    before = file_hash(path)
    project, info = read_project_file(path)
    assert file_hash(path) == before and (info.schema_version, info.upgraded) == (7, True)
    app = project.applications["app"]
    assert app == Application("app", "traced", steps, {"N": 8}, "greedy", 95.5)
    assert [type(s.measured_s) for s in app.steps] == [type(s.measured_s) for s in steps]
    assert [s.concurrent for s in app.steps] == [bool(i % 2) for i in range(300)]
    save_project(project, path)
    again, info = read_project_file(path)
    assert again == project and (info.schema_version, info.upgraded) == (project_schema.SCHEMA_VERSION, False)
    conn = sqlite3.connect(path)
    assert {r[0] for r in conn.execute("SELECT measured FROM application_steps")} == {"{}"}
    stored = conn.execute("SELECT measured_s, traced_gpu, host_s FROM application_steps "
                          "WHERE id = 'x2'").fetchone()
    assert stored == (steps[2].measured_s, "", steps[2].host_s)
    conn.close()


def test_steps_round_trip_through_the_typed_columns(tmp_path):
    steps = _traced_steps(200)
    project = full_project()
    project.put("applications", Application("big", "many steps", steps, {"N": 4}))
    path = save_project(project, tmp_path / "p.gpm")
    again = load_project(path)
    assert again.applications == project.applications
    assert list(again.applications) == list(project.applications)
    assert all(type(s.concurrent) is bool and type(s.host_s) is float and type(s.after) is tuple
               for a in again.applications.values() for s in a.steps)
    read = again.applications["big"].steps
    # every slot set (an unset one raises), to the value and type __init__ sets
    def slots(s):
        return [(getattr(s, f), type(getattr(s, f))) for f in STEP_FIELDS]
    assert [slots(s) for s in read] == [slots(dataclasses.replace(s)) for s in steps]
    assert all(type(s) is Step and not hasattr(s, "__dict__") for s in read)
    with pytest.raises(dataclasses.FrozenInstanceError):
        read[0].size = "1"


@pytest.mark.parametrize("applications", [1, 2])
def test_steps_read_either_way_are_the_objects_step_makes(tmp_path, monkeypatch, applications):
    """(the steps are made as StepSlots objects that become steps: the usual file's one
    application and the general reading of two give every slot the value and type
    Step(...) gives, as Step objects, frozen)"""
    steps = _traced_steps(60)
    project = Project("one")
    project.put("applications", Application("big", "many steps", steps))
    if applications == 2:
        project.put("applications", Application("small", "a few", steps[:5]))
    path = save_project(project, tmp_path / "p.gpm")
    taken = []
    one_application = pf._one_application
    monkeypatch.setattr(pf, "_one_application",
                        lambda db: taken.append(one_application(db)) or taken[-1])
    read = load_project(path).applications["big"].steps
    assert (taken[0] is not None) == (applications == 1)

    def slots(s):
        return [(getattr(s, f), type(getattr(s, f))) for f in STEP_FIELDS]
    assert [slots(s) for s in read] == [slots(dataclasses.replace(s)) for s in steps]
    assert all(type(s) is Step and not hasattr(s, "__dict__") for s in read)
    assert read == steps and list(map(hash, read)) == list(map(hash, steps))
    with pytest.raises(dataclasses.FrozenInstanceError):
        read[-1].name = "other"


@pytest.mark.parametrize("stored, reason", [
    ('{"tail": "yes"}', "kernel term tail is text"),
    ('{"launch_overhead_s": -1}', "launch_overhead_s is -1"),
    ('{"l2_bandwidth_bytes_per_s": 0}', "expected a number > 0"),
    ('{"warp_drive": true}', "unknown kernel term(s) warp_drive"),
    ('[1]', "must be a JSON object"),
])
def test_damaged_kernel_terms_are_refused_and_the_file_left_untouched(tmp_path, stored, reason):
    path = save_project(full_project(), tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE launches SET terms = ?", [stored])
    conn.commit()
    conn.close()
    before = file_hash(path)
    with pytest.raises(ProjectFormatError) as info:
        read_project_file(path)
    assert reason in str(info.value) and file_hash(path) == before


def test_migrations_are_numbered_and_recorded():
    assert project_schema.KNOWN_MIGRATIONS == ("m001_initial", "m002_descriptions", "m003_applications",
                                               "m004_instruction_address", "m005_kernel_extras",
                                               "m006_step_measurements", "m007_launch_terms",
                                               "m008_shared_wavefronts",
                                               "m009_step_measured_columns")
    assert project_schema.SCHEMA_VERSION == 9
    assert project_schema.migrations.names() == \
        list(project_schema.KNOWN_MIGRATIONS)


# -- safety of saving ------------------------------------------------------------------------
def _previous(tmp_path):
    old = full_project()
    path = save_project(old, tmp_path / "work.gpm")
    return old, path, file_hash(path)


@pytest.mark.parametrize("failure", [sqlite3.OperationalError("database or disk is full"),
                                     RuntimeError("a bug in the middle of a save")])
def test_a_save_failing_mid_way_leaves_the_previous_file(failure, tmp_path, monkeypatch):
    old, path, before = _previous(tmp_path)
    real_insert = pf._insert_rows

    def failing_insert(db, table, columns, rows):
        if table == "kernel_edges":  # after devices, kernels and instructions went in
            raise failure
        real_insert(db, table, columns, rows)
    monkeypatch.setattr(pf, "_insert_rows", failing_insert)
    new = full_project()
    new.name = "changed"
    expected = ProjectAccessError if isinstance(failure, sqlite3.Error) else RuntimeError
    with pytest.raises(expected) as err:
        save_project(new, path)
    if expected is ProjectAccessError:
        assert "disk is full" in str(err.value) and "previous file is unchanged" in str(err.value)
    assert file_hash(path) == before
    assert load_project(path) == old
    assert os.listdir(tmp_path) == ["work.gpm"]


def test_a_failed_rename_leaves_the_previous_file(tmp_path, monkeypatch):
    old, path, before = _previous(tmp_path)

    def no_space(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(pf.os, "replace", no_space)
    with pytest.raises(ProjectAccessError, match="No space left on device"):
        save_project(Project("new"), path)
    monkeypatch.undo()
    assert file_hash(path) == before and load_project(path) == old
    assert os.listdir(tmp_path) == ["work.gpm"]


def test_a_value_that_cannot_be_stored_is_a_clear_error(tmp_path):
    old, path, before = _previous(tmp_path)
    bad = full_project()
    bad.put("devices", PlacedDevice("gpu9", "gpu", "X", overrides={"sms": object()}))
    with pytest.raises(ProjectAccessError, match="device gpu9 overrides"):
        save_project(bad, path)
    assert file_hash(path) == before and os.listdir(tmp_path) == ["work.gpm"]


def test_saving_into_a_missing_folder_or_onto_a_folder(tmp_path):
    with pytest.raises(ProjectAccessError, match="cannot save the project there"):
        save_project(Project(), tmp_path / "nowhere" / "p.gpm")
    with pytest.raises(ProjectAccessError, match="is a folder"):
        save_project(Project(), tmp_path)
    assert os.listdir(tmp_path) == []


def test_saving_keeps_the_files_permissions_and_follows_a_link(tmp_path):
    _, path, _ = _previous(tmp_path)
    os.chmod(path, 0o640)
    link = tmp_path / "link.gpm"
    link.symlink_to(path)
    save_project(Project("through the link"), link)
    assert link.is_symlink() and load_project(path).name == "through the link"
    assert os.stat(path).st_mode & 0o777 == 0o640


# -- bad files -------------------------------------------------------------------------------
def _not_sqlite(path, good):
    path.write_text("name,sms\nGTX 970,13\n")


def _empty(path, good):
    path.write_bytes(b"")


def _truncated(path, good):
    path.write_bytes(good.read_bytes()[:3000])


def _garbled(path, good):
    data = bytearray(good.read_bytes())
    for i in range(2048, 2048 + 3 * 1024):
        data[i] = 0xA5
    path.write_bytes(bytes(data))


def _foreign(path, good):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, title TEXT)")
    conn.commit()
    conn.close()


def _edit(sql):
    def make(path, good):
        path.write_bytes(good.read_bytes())
        conn = sqlite3.connect(path)
        conn.execute(sql)
        conn.commit()
        conn.close()
    return make


BAD_FILES = {
    "not sqlite": (_not_sqlite, "not an SQLite database, so not a gpumodeler project"),
    "empty": (_empty, "an empty file"),
    "truncated": (_truncated, "corrupted"),
    "garbled": (_garbled, "corrupted"),
    "foreign sqlite": (_foreign, "not a gpumodeler project (no meta table"),
    "device database": (_edit("UPDATE meta SET value = 'gpumodeler-devices' "
                              "WHERE key = 'format'"), "it is a device database"),
    "other format": (_edit("UPDATE meta SET value = 'photos' WHERE key = 'format'"),
                     "format 'photos', expected 'gpumodeler-project'"),
    "future version": (_edit(f"UPDATE meta SET value = '{project_schema.SCHEMA_VERSION + 1}' "
                             f"WHERE key = 'version'"),
                       f"newer gpumodeler (project schema version {project_schema.SCHEMA_VERSION + 1}"),
    "future migration": (_edit("INSERT INTO _sqlite_migrations (migration_set, name, "
                               "applied_at) VALUES ('gpumodeler-project', 'm005_x', 'x')"),
                         "newer gpumodeler"),
    "bad version": (_edit("UPDATE meta SET value = 'two' WHERE key = 'version'"),
                    "unreadable schema version 'two'"),
    "damaged graph": (_edit("UPDATE kernel_edges SET src = 'ghost' WHERE kernel_id = 'k0' AND id = 'e3'"),
                      "kernel k0: edge e3: no instruction 'ghost'"),
    "damaged json": (_edit("UPDATE devices SET overrides = '[1' WHERE id = 'gpu1'"),
                     "device gpu1 overrides is not valid JSON"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_bad_files_are_refused_clearly_and_left_untouched(kind, tmp_path):
    good = save_project(full_project(), tmp_path / "good.gpm")
    make, message = BAD_FILES[kind]
    path = tmp_path / "bad.gpm"
    make(path, good)
    before, listing = file_hash(path), sorted(os.listdir(tmp_path))
    with pytest.raises(ProjectFormatError) as err:
        load_project(path)
    assert message in str(err.value) and str(path) in str(err.value)
    assert isinstance(err.value, FormatError) and isinstance(err.value, DatabaseFormatError)
    assert file_hash(path) == before and sorted(os.listdir(tmp_path)) == listing
    if kind in ("empty", "truncated", "garbled", "damaged graph", "damaged json"):
        return  # an unreadable project of ours may be replaced by a save
    with pytest.raises(ProjectFormatError, match="not overwriting"):
        save_project(full_project(), path)
    assert file_hash(path) == before and sorted(os.listdir(tmp_path)) == listing
    save_project(full_project(), path, force=True)
    assert load_project(path) == full_project()


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ProjectFormatError, match="no such file"):
        load_project(tmp_path / "missing.gpm")
    with pytest.raises(ProjectFormatError, match="is a folder"):
        load_project(tmp_path)
    assert os.listdir(tmp_path) == []


def test_opening_a_good_file_does_not_write(tmp_path):
    path = save_project(full_project(), tmp_path / "p.gpm")
    os.chmod(path, 0o444)  # SQLite would fail on any write attempt, too
    stat_before, before = os.stat(path), file_hash(path)
    load_project(path)
    assert file_hash(path) == before and os.stat(path).st_mtime_ns == stat_before.st_mtime_ns
    assert os.listdir(tmp_path) == ["p.gpm"]


# -- the bundled example ---------------------------------------------------------------------
def _example_tool():
    spec = importlib.util.spec_from_file_location("make_example_project",
                                                  ROOT / "tools" / "make_example_project.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bundled_example_equals_a_fresh_build(tmp_path):
    tool = _example_tool()
    fresh = tool.build_project()
    assert load_project(EXAMPLE) == fresh
    assert tool.main([str(tmp_path / "again.gpm")]) == 0
    assert dump(tmp_path / "again.gpm") == dump(EXAMPLE)  # deterministic content


def test_the_bundled_example_is_gajgers_testbed():
    p = load_project(EXAMPLE)
    assert {d.device_name: d.kind for d in p.devices.values()} == {
        "GeForce GTX 970": "gpu", "Gajger GTX 970 testbed host": "host"}
    (link,) = p.connections.values()
    assert (link.link_name, link.link_type) == ("PCIe 3.0 x16 (Gajger GTX 970 testbed)", "pcie")
    (launch,) = p.launches.values()
    assert (launch.name, launch.kernel, launch.block_size, launch.data_size, launch.registers,
            launch.occupancy_override, launch.lam, launch.variables) == \
        ("Fig. 5.24", "saxpy2", 256, 400_000_000, 8, None, 0.703787, {"a": 128})
    assert [(t.direction, t.size, t.connection) for t in launch.transfers] == \
        [("htod", "4*N", link.id), ("htod", "4*N", link.id), ("dtoh", "4*N", link.id)]
    assert p.kernels["saxpy2"] == saxpy2_graph()
    (sweep,) = p.sweeps.values()
    assert sweep.variable == "a" and sweep.values == tuple(2 ** k for k in range(13))


@pytest.mark.parametrize("column, stored, reason", [
    ("after_steps", "[1]", "dependencies must be a JSON list of step ids"),
    ("after_steps", '["s1"] x', "dependencies must be a JSON list of step ids"),
    ("after_steps", '["s1"], ["s2"]', "dependencies must be a JSON list of step ids"),
    ("after_steps", "", "dependencies must be a JSON list of step ids"),
    ("after_steps", "7", "dependencies must be a JSON list of step ids"),
    ("after_steps", '{"s1": 1}', "dependencies must be a JSON list of step ids"),
    ("measured", '{"measured_s": 1e-3}{}', "measurement is not valid JSON"),
    ("measured", '{"measured_s": ', "measurement is not valid JSON"),
    ("measured", "[1]", "measurement must be a JSON object, got list"),
    ("measured", '{"measured_s": -1.0}', "measured measured_s must be a number >= 0, got -1.0"),
    ("measured", '{"host_s": true}', "measured host_s must be a number >= 0, got True"),
    ("measured", '{"measured_s": NaN}', "measured measured_s must be a number >= 0"),
    ("measured", '{"traced_gpu": 3}', "measured traced_gpu must be text, got 3"),
    ("measured", '{"power": 1.0}', "unknown measured value 'power'"),
    # the typed columns of schema 8
    ("measured_s", -1.0, "measured measured_s must be a number >= 0, got -1.0"),
    ("measured_s", "fast", "measured measured_s must be a number >= 0, got 'fast'"),
    ("measured_start_s", math.inf, "measured measured_start_s must be a number >= 0, got inf"),
    ("host_s", -0.5, "measured host_s must be a number >= 0, got -0.5"),
    ("host_s", b"\x00", "measured host_s must be a number >= 0"),
    ("traced_gpu", b"GPU", "measured traced_gpu must be text, got b'GPU'"),
    ("fraction", None, "share must be a number"),
    ("fraction", "half", "share must be a number"),
])
def test_damaged_step_columns_are_refused_naming_the_step(tmp_path, column, stored, reason):
    """(the steps' JSON columns are parsed all at once and the typed ones checked by one
    query: one damaged row among many is still found and named, whichever row it is)"""
    project = full_project()
    steps = tuple(Step(f"x{i}", "copy", "c", "0", src="host1", dst="gpu1", size="8",
                       measured_s=1e-6 * i, measured_start_s=2e-6 * i, traced_gpu="GPU")
                  for i in range(300))
    project.put("applications", Application("big", "many steps", steps))
    path = save_project(project, tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    conn.execute(f"UPDATE application_steps SET {column} = ? WHERE id = 'x123'", [stored])
    conn.commit()
    conn.close()
    before = file_hash(path)
    with pytest.raises(ProjectFormatError) as info:
        read_project_file(path)
    assert reason in str(info.value) and "step x123" in str(info.value)
    assert file_hash(path) == before


def test_steps_read_back_whole_with_their_measurements(tmp_path):
    """Every field of many imported steps (the columns read at once) comes back equal, an
    integer measurement as a float."""
    project = full_project()
    steps = tuple(Step(f"x{i}", ["copy", "kernel", "sync"][i % 3], f"n{i % 7}", str(i % 4),
                       after=tuple(f"x{j}" for j in range(max(0, i - i % 3), i)),
                       launch="l1" if i % 3 == 1 else None, src="host1", dst="gpu1",
                       size=str(i), measured_s=None if i % 5 == 0 else 1e-6 * i,
                       measured_start_s=None if i % 5 == 0 else 0.5 * i, traced_gpu="G" * (i % 2),
                       host_s=float(i % 3 == 2), concurrent=bool(i % 2), fraction=1 / (1 + i % 4))
                  for i in range(400))
    project.put("applications", Application("big", "many steps", steps))
    path = save_project(project, tmp_path / "p.gpm")
    assert load_project(path).applications["big"] == project.applications["big"]
    conn = sqlite3.connect(path)
    conn.execute("""UPDATE application_steps SET measured = '{"measured_s": 3}' WHERE id = 'x7'""")
    conn.commit()
    conn.close()
    step = load_project(path).applications["big"].steps[7]
    assert step.measured_s == 3.0 and type(step.measured_s) is float


def test_steps_come_back_in_their_positions_whatever_the_tables_order(tmp_path):
    """(the steps are read in the table's own order and sorted by application and
    position: rows stored in another order, as another program may leave them, still read
    back in program order)"""
    project = full_project()
    path = save_project(project, tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT * FROM application_steps").fetchall()
    conn.execute("DELETE FROM application_steps")
    conn.executemany(f"INSERT INTO application_steps VALUES ({', '.join('?' * len(rows[0]))})",
                     rows[::-1])
    conn.commit()
    conn.close()
    assert load_project(path).applications == project.applications


@pytest.mark.parametrize("order", ["reversed", "two swapped", "positions with a gap"])
def test_one_applications_steps_come_back_in_program_order_however_stored(tmp_path, order):
    """(one application's rows at positions 0, 1, 2, ... in the table's order are taken as
    they are, unsorted; any other order or numbering is sorted by position)"""
    steps = _traced_steps(50)
    project = Project("one")
    project.put("applications", Application("big", "many steps", steps))
    path = save_project(project, tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT * FROM application_steps").fetchall()
    at = [c[1] for c in conn.execute("PRAGMA table_info(application_steps)")].index("position")
    if order == "reversed":
        rows = rows[::-1]
    elif order == "two swapped":
        rows[3], rows[4] = rows[4], rows[3]
    else:
        rows = [r[:at] + (r[at] * 2,) + r[at + 1:] for r in rows[::-1]]
    conn.execute("DELETE FROM application_steps")
    conn.executemany(f"INSERT INTO application_steps VALUES ({', '.join('?' * len(rows[0]))})", rows)
    conn.commit()
    conn.close()
    assert load_project(path).applications["big"].steps == steps


@pytest.mark.parametrize("layout, usual", [
    ("as saved", True), ("a row deleted", True), ("rowids with a gap", False),
    ("a JSON measurement", False), ("two applications", False), ("no steps", True)])
def test_the_usual_files_steps_read_without_their_order_columns_as_any_other(
        tmp_path, monkeypatch, layout, usual):
    """(one application's rows stored in program order with no JSON measurement, what a
    save writes, are read in rowid order without the application, position and JSON
    columns; the same steps come back as the general reading gives, and any other file is
    read the general way)"""
    steps = _traced_steps(40)
    project = Project("one")
    project.put("applications", Application("big", "many steps", steps))
    if layout == "two applications":
        project.put("applications", Application("small", "a few", steps[:5]))
    elif layout == "no steps":
        project.put("applications", Application("big", "many steps", ()))
    path = save_project(project, tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    if layout == "a row deleted":   # (positions renumbered: what a save of the rest writes)
        conn.execute("DELETE FROM application_steps WHERE id = 'x39'")
        steps = steps[:-1]
    elif layout == "rowids with a gap":   # (the positions no longer follow the rowids)
        conn.execute("UPDATE application_steps SET rowid = rowid + 100 WHERE position >= 20")
    elif layout == "a JSON measurement":
        conn.execute("""UPDATE application_steps SET measured = '{"host_s": 2}' WHERE id = 'x7'""")
        steps = steps[:7] + (dataclasses.replace(steps[7], host_s=2.0),) + steps[8:]
    conn.commit()
    conn.close()
    taken = []
    one_application = pf._one_application
    monkeypatch.setattr(pf, "_one_application",
                        lambda db: taken.append(one_application(db)) or taken[-1])
    got = load_project(path).applications
    assert (taken[0] is not None) == usual
    assert got["big"].steps == (steps if layout != "no steps" else ())
    if layout == "two applications":
        assert got["small"].steps == steps[:5]


_ODD_VALUES = (0, 1, -1, 0.5, -0.5, 2 ** 62, -(2 ** 62), 1e308, float("inf"), float("-inf"), "1.5",
               "-1", "abc", "", b"", b"\x01", None)


@pytest.mark.parametrize("column", ["fraction", "measured_s", "measured_start_s", "host_s",
                                    "traced_gpu"])
def test_the_usual_files_scan_holds_exactly_where_the_typed_checks_do(tmp_path, column):
    """(the usual file's scan tests the steps' numbers and text without typeof() when the
    measured columns are declared REAL: whatever is stored, each row passes exactly when
    the typed tests pass it)"""
    project = Project("one")
    project.put("applications", Application("big", "many", _traced_steps(len(_ODD_VALUES))))
    path = save_project(project, tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    for rowid, value in zip(conn.execute("SELECT rowid FROM application_steps ORDER BY rowid")
                            .fetchall(), _ODD_VALUES):
        try:
            conn.execute(f"UPDATE application_steps SET {column} = ? WHERE rowid = ?",
                         [value, rowid[0]])
        except sqlite3.IntegrityError:   # (NULL in a NOT NULL column)
            pass
    conn.commit()
    db = sqlite_utils.Database(conn)
    assert pf._tests_for(db) == pf._DECLARED_REAL_TESTS
    passed = conn.execute(f"SELECT coalesce({pf._STEP_TESTS}, 0), "
                          f"coalesce({pf._DECLARED_REAL_TESTS}, 0) FROM application_steps "
                          f"ORDER BY rowid").fetchall()
    assert [bool(typed) for typed, _ in passed] == [bool(plain) for _, plain in passed]
    assert not all(typed for typed, _ in passed) and any(typed for typed, _ in passed)
    conn.close()


def test_a_table_whose_measured_numbers_are_not_declared_real_is_scanned_with_typeof():
    """(an integer can be stored in a column not declared REAL: the typed tests then)"""
    for declared in ("measured_s, measured_start_s REAL, host_s REAL",
                     "measured_s REAL, measured_start_s REAL, host_s NUMERIC",
                     "measured_s REAL, measured_start_s REAL"):
        db = sqlite_utils.Database(memory=True)
        db.execute(f"CREATE TABLE application_steps ({declared})")
        assert pf._tests_for(db) == pf._STEP_TESTS
    real = sqlite_utils.Database(memory=True)
    real.execute("CREATE TABLE application_steps (measured_s real, measured_start_s REAL, host_s Real)")
    assert pf._tests_for(real) == pf._DECLARED_REAL_TESTS


@pytest.mark.parametrize("stored", ["[1]", '["x1"] x', '["x1"], ["x2"]', "", "7", '{"x1": 1}',
                                    '["x1"', b"[]", '[["x1"]]'])
def test_the_usual_files_damaged_dependencies_are_named_with_their_application(tmp_path, stored):
    """(the usual file's lists of dependencies are parsed as the steps are made, each
    distinct one once: a wrong one is named by its first step)"""
    project = Project("one")
    project.put("applications", Application("big", "many steps", _traced_steps(30)))
    path = save_project(project, tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE application_steps SET after_steps = ? WHERE id IN ('x12', 'x20')", [stored])
    conn.commit()
    conn.close()
    with pytest.raises(ProjectFormatError, match="application big, step x12: dependencies must be"):
        read_project_file(path)


def test_the_usual_files_repeated_text_is_one_object_per_value(tmp_path):
    """(the text a trace repeats in every step is shared, as the program's own constants:
    one object per value, whatever row it came from)"""
    project = Project("one")
    project.put("applications", Application("big", "many steps", _traced_steps(40)))
    steps = load_project(save_project(project, tmp_path / "p.gpm")).applications["big"].steps
    for field in ("kind", "name", "stream", "launch", "gpu", "src", "dst", "traced_gpu"):
        values = [getattr(s, field) for s in steps if getattr(s, field)]
        assert values and len({id(v) for v in values}) == len(set(values)), field
    assert {id(s.kind) for s in steps} == {id(k) for k in ("copy", "kernel", "sync")}


@pytest.mark.parametrize("column", ["kind", "name", "stream", "launch", "src", "traced_gpu"])
def test_the_usual_files_binary_text_is_refused_naming_the_step(tmp_path, column):
    project = Project("one")
    project.put("applications", Application("big", "many steps", _traced_steps(30)))
    path = save_project(project, tmp_path / "p.gpm")
    conn = sqlite3.connect(path)
    conn.execute(f"UPDATE application_steps SET {column} = ? WHERE id = 'x13'", [b"bin"])
    conn.commit()
    conn.close()
    with pytest.raises(ProjectFormatError, match="application big, step x13: .* must be text"):
        read_project_file(path)


def test_a_version_7_file_gets_the_wavefront_degrees_of_wide_shared_accesses(tmp_path):
    """m008: a 64/128-bit shared access whose degree the import wrote by the old whole-warp
    rule (recognised from its address) takes the half-warp wavefronts; a value set by hand,
    or without an address the import followed, is kept (docs/kernel-format.md)."""
    g = KernelGraph(name="wide", latency_table="maxwell-volkov")
    rows = {"row": ("LDS.128", 16, "64·tid.y", 1, 2),      # a row broadcast: 1 then, 2 now
            "col": ("LDS.128", 16, "16 + 64·tid.x", 4, 16),  # a column of float4s: 4 then
            "dbl": ("LDS.64", 8, "16·tid.x", 2, 4),          # every other double: 2-way then
            "hand": ("LDS.128", 16, "64·tid.y", 7, 7),       # set by hand: kept
            "new": ("STS.128", 16, "16·tid.x", 4, 4),        # already the new rule's
            "none": ("LDS.128", 16, "", 1, 1),               # no address: cannot be told
            "word": ("LDS", 4, "4·tid.x", 1, 1)}
    for nid, (opcode, width, address, stored, _) in rows.items():
        g.add_instruction(Instruction.make(nid, opcode, width_bytes=width, address=address,
                                           bank_conflict_degree=stored))
    p = Project("old")
    p.put_kernel("k1", g)
    path = save_project(p, tmp_path / "v7.gpm")
    conn = sqlite3.connect(path)  # as gpumodeler with schema version 7 left it
    conn.execute(f"DELETE FROM {project_schema.MIGRATIONS_TABLE} "
                 "WHERE name IN ('m008_shared_wavefronts', 'm009_step_measured_columns')")
    for column in ("measured_s", "measured_start_s", "traced_gpu", "host_s"):   # m009's
        conn.execute(f"ALTER TABLE application_steps DROP COLUMN {column}")
    conn.execute("UPDATE meta SET value = '7' WHERE key = 'version'")
    conn.commit()
    conn.close()
    before = file_hash(path)
    project, info = read_project_file(path)
    assert file_hash(path) == before and (info.schema_version, info.upgraded) == (7, True)
    got = {nid: ins.bank_conflict_degree for nid, ins in project.kernels["k1"].instructions.items()}
    assert got == {nid: row[4] for nid, row in rows.items()}
    again, info = read_project_file(save_project(project, path))
    assert info.schema_version == project_schema.SCHEMA_VERSION == 9
    assert {nid: i.bank_conflict_degree for nid, i in again.kernels["k1"].instructions.items()} == got
