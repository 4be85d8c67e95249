"""The legacy default stream in an imported trace: a kernel on it sits between two blocking
streams' work; the export names the stream (TARGET_INFO_CUDA_CONTEXT_INFO.nullStreamId,
TARGET_INFO_CUDA_STREAM.flag), so the implicit synchronisation CUDA applies becomes
dependencies, and a replay on a slower GPU keeps it."""
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.project_file import load_project, save_project

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import (A100, BLOCKING, DEVICE, NON_BLOCKING, NULL_STREAM,  # noqa: E402
                          PINNED, SAXPY, call, copy, kernel, write_export)

pytestmark = pytest.mark.usefixtures("gpumodeler_env")

MiB = 2 ** 20
US = 1e-6
SCALE = "void scale<float>(float*, int)"
BACKGROUND = "void background(float*)"
LEGACY, S1, S2, S3 = 7, 13, 14, 15
CONTEXT = 1
#: a launch's latency after the end of what it waited for: beyond the window in which a
#: wait is inferred from timing alone, so only the legacy stream's rule explains it
LATENCY = 30 * US
BW = 18e9


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def legacy_run(path: Path, *, tables=True, s2_flag=BLOCKING, api=False,
               contexts=True) -> dict:
    """One A100: stream 13 copies in (H0) and runs K0, stream 14 runs K1 beside it; the
    legacy stream's kernel L starts LATENCY after both ended; then stream 13 runs K3 and
    stream 14 copies out (D1), each LATENCY after L ended. A non-blocking stream 15 runs
    a background kernel through it all (the GPU is never idle: no host gap orders the
    steps). ``tables``: write the stream and context tables (``s2_flag``: stream 14's
    flag; ``contexts``: the context table too); ``api``: the runtime table too.
    Returns each operation's (start, end) in s."""
    t = {}
    t["h0"] = (10 * US, 10 * US + 12 * US + 16 * MiB / BW)
    t["k0"] = (t["h0"][1] + 2 * US, t["h0"][1] + 2 * US + 1.0e-3)
    t["k1"] = (20 * US, t["k0"][1] + 0.4e-3)
    t["l"] = (t["k1"][1] + LATENCY, t["k1"][1] + LATENCY + 0.5e-3)
    t["k3"] = (t["l"][1] + LATENCY, t["l"][1] + LATENCY + 0.3e-3)
    t["d1"] = (t["l"][1] + LATENCY, t["l"][1] + LATENCY + 12 * US + 8 * MiB / BW)
    t["bg"] = (5 * US, t["d1"][1] + 0.2e-3)
    corr = {name: i for i, name in enumerate(sorted(t), start=1)}

    def k(name, kernel_name, stream):
        return kernel(ns(t[name][0]), ns(t[name][1]), kernel_name, stream=stream,
                      corr=corr[name])
    kw: dict = {}
    if tables:
        kw["streams"] = [(LEGACY, CONTEXT, NULL_STREAM), (S1, CONTEXT, BLOCKING),
                         (S2, CONTEXT, s2_flag), (S3, CONTEXT, NON_BLOCKING)]
        if contexts:
            kw["contexts"] = [(CONTEXT, 0, LEGACY)]
    if api:     # each call 5 µs before its operation starts
        kw["calls"] = [call(ns(a - 5 * US), ns(a - 4 * US),
                            "cudaMemcpyAsync" if n in ("h0", "d1") else "cudaLaunchKernel",
                            corr[n]) for n, (a, _b) in t.items()]
        kw["syncs"] = []
    write_export(path, kernels=[k("k0", SAXPY, S1), k("k1", SCALE, S2), k("l", SAXPY, LEGACY),
                                k("k3", SCALE, S1), k("bg", BACKGROUND, S3)],
                 copies=[copy(ns(t["h0"][0]), ns(t["h0"][1]), 16 * MiB, 1, src=PINNED,
                              dst=DEVICE, stream=S1, corr=corr["h0"]),
                         copy(ns(t["d1"][0]), ns(t["d1"][1]), 8 * MiB, 2, src=DEVICE,
                              dst=PINNED, stream=S2, corr=corr["d1"])],
                 gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)], **kw)
    if tables and not contexts:     # the kernels and copies ran in the stream's context
        import sqlite3
        conn = sqlite3.connect(path)
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY"):
            conn.execute(f'UPDATE "{table}" SET contextId = ?', (CONTEXT,))
        conn.commit()
        conn.close()
    return t


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys, folder: Path, **kw):
    folder.mkdir(exist_ok=True)
    trace = folder / "run.sqlite"
    t = legacy_run(trace, **kw)
    project = folder / "p.gpm"
    code, out, err = run(capsys, "application", "import", trace, "--project", project,
                         "--json")
    assert code == 0, err
    (app,) = load_project(project).applications.values()
    streams = {"h0": S1, "k0": S1, "k1": S2, "l": LEGACY, "k3": S1, "d1": S2, "bg": S3}
    by_start = {(round(s.measured_start_s * 1e9), s.stream): s for s in app.steps
                if s.kind != "sync"}
    steps = {name: by_start[(round((a - t["bg"][0]) * 1e9), str(streams[name]))]
             for name, (a, _b) in t.items()}
    return project, t, json.loads(out), app, steps


def waits_of(app, step) -> set:
    """What ``step`` waits for: its own list and that of the host delay before it."""
    before = [s for s in app.steps[:app.steps.index(step)] if s.stream == step.stream]
    delay = before[-1] if before and before[-1].name == "host delay" else None
    return set(step.after) | (set(delay.after) if delay else set())


def replay(capsys, project, kernel_factor=1.0) -> dict:
    """The timeline of ``project``'s application with every kernel's measured time
    multiplied by ``kernel_factor`` (a slower GPU); the document."""
    if kernel_factor != 1.0:
        p = load_project(project)
        (app,) = p.applications.values()
        p.applications[app.id] = replace(app, steps=tuple(
            replace(s, measured_s=s.measured_s * kernel_factor) if s.kind == "kernel" else s
            for s in app.steps))
        save_project(p, project)
    code, out, err = run(capsys, "timeline", project, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("api", [False, True], ids=["timing", "runtime-table"])
def test_the_legacy_stream_kernel_depends_on_both_streams(capsys, tmp_path, api):
    project, t, summary, app, steps = imported(capsys, tmp_path / "a", api=api)
    # L waits for K0 and K1 (the last steps of the blocking streams before it); K3 and D1
    # for L; the background kernel of the non-blocking stream takes no part
    assert {steps["k0"].id, steps["k1"].id} <= waits_of(app, steps["l"])
    assert steps["l"].id in waits_of(app, steps["k3"])
    assert steps["l"].id in waits_of(app, steps["d1"])
    assert steps["bg"].id not in waits_of(app, steps["l"])
    assert steps["l"].id not in waits_of(app, steps["bg"])
    assert summary["legacy_dependencies"] == 4
    assert summary["inferred_dependencies"] == 0
    # the host delay before L is the launch's latency, not the time since the trace began
    (delay,) = [s for s in app.steps if s.name == "host delay" and s.stream == str(LEGACY)]
    assert delay.host_s == pytest.approx(LATENCY, abs=1e-9)
    # on the traced GPU the replay gives the measured makespan
    doc = replay(capsys, project)
    measured = t["bg"][1] - t["bg"][0]
    assert doc["measured_makespan_s"] == pytest.approx(measured, abs=1e-9)
    assert doc["makespan_s"] == pytest.approx(measured, rel=0.05)
    by = {s["id"]: s for s in doc["steps"]}
    assert by[steps["l"].id]["start_s"] == pytest.approx(t["l"][0] - t["bg"][0], rel=0.05)


def test_on_a_slower_gpu_the_legacy_kernel_still_waits(capsys, tmp_path):
    """Kernels four times as long: L starts LATENCY after K1 (which it waited for) ends,
    and K3 and D1 after L ends. Without the stream tables the same export's L keeps its
    measured start (a host delay from the trace's start) and runs beside K1."""
    ends = {}
    for tables in (True, False):
        project, t, summary, app, steps = imported(capsys, tmp_path / str(tables),
                                                   tables=tables)
        by = {s["id"]: s for s in replay(capsys, project, kernel_factor=4.0)["steps"]}
        ends[tables] = {name: (by[s.id]["start_s"], by[s.id]["end_s"])
                        for name, s in steps.items()}
    slow = ends[True]
    assert slow["l"][0] >= slow["k1"][1] + LATENCY - 1e-9
    assert slow["l"][0] >= slow["k0"][1]
    assert slow["k3"][0] >= slow["l"][1] + LATENCY - 1e-9
    assert slow["d1"][0] >= slow["l"][1] + LATENCY - 1e-9
    plain = ends[False]
    assert plain["l"][0] < plain["k1"][1]       # the implicit wait is lost without the tables
    assert plain["l"][0] == pytest.approx(t["l"][0] - t["bg"][0], rel=1e-6)


def test_without_the_stream_tables_no_stream_is_taken_as_legacy(capsys, tmp_path):
    """Stream 7 is the NULL stream's usual id, but nothing says so: no dependency."""
    _project, _t, summary, app, steps = imported(capsys, tmp_path / "a", tables=False)
    assert summary["legacy_dependencies"] == 0
    assert steps["k1"].id not in waits_of(app, steps["l"])


def test_a_non_blocking_stream_takes_no_part(capsys, tmp_path):
    """Stream 14 created with cudaStreamNonBlocking: L waits for stream 13 only, and
    stream 14's copy after L does not wait for it."""
    _project, _t, summary, app, steps = imported(capsys, tmp_path / "a",
                                                 s2_flag=NON_BLOCKING)
    assert steps["k0"].id in waits_of(app, steps["l"])
    assert steps["k1"].id not in waits_of(app, steps["l"])
    assert steps["l"].id not in waits_of(app, steps["d1"])
    assert steps["l"].id in waits_of(app, steps["k3"])
    assert summary["legacy_dependencies"] == 2


def test_an_unknown_flag_is_a_blocking_stream(capsys, tmp_path):
    _project, _t, summary, app, steps = imported(capsys, tmp_path / "a", s2_flag=0)
    assert steps["k1"].id in waits_of(app, steps["l"])
    assert summary["legacy_dependencies"] == 4


def test_without_the_context_table_the_kernels_give_the_stream_s_device(capsys, tmp_path):
    """Only TARGET_INFO_CUDA_STREAM (flag 3: the NULL stream): the context's device is
    the one its kernels ran on."""
    _project, _t, summary, app, steps = imported(capsys, tmp_path / "a", contexts=False)
    assert steps["k1"].id in waits_of(app, steps["l"])
    assert summary["legacy_dependencies"] == 4


def test_a_step_the_trace_shows_overlapping_gets_no_dependency(capsys, tmp_path):
    """The background stream marked blocking although it ran beside L (another context
    on the GPU, say): the trace contradicts the rule for it, so no dependency is added
    and the import says so; the replay keeps the measured makespan."""
    folder = tmp_path / "a"
    folder.mkdir()
    trace = folder / "run.sqlite"
    t = legacy_run(trace)
    import sqlite3
    conn = sqlite3.connect(trace)
    conn.execute('UPDATE TARGET_INFO_CUDA_STREAM SET flag = ? WHERE streamId = ?',
                 (BLOCKING, S3))
    conn.commit()
    conn.close()
    project = folder / "p.gpm"
    code, out, err = run(capsys, "application", "import", trace, "--project", project,
                         "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert any("legacy default stream" in n for n in summary["notes"])
    (app,) = load_project(project).applications.values()
    (bg,) = [s for s in app.steps if s.name == BACKGROUND]
    (legacy,) = [s for s in app.steps if s.kind == "kernel" and s.stream == str(LEGACY)]
    assert bg.id not in waits_of(app, legacy)
    doc = replay(capsys, project)
    assert doc["makespan_s"] == pytest.approx(t["bg"][1] - t["bg"][0], rel=0.05)


def test_the_text_summary_counts_the_implicit_waits(capsys, tmp_path):
    trace = tmp_path / "run.sqlite"
    legacy_run(trace)
    code, out, err = run(capsys, "application", "import", trace, "--project",
                         tmp_path / "p.gpm")
    assert code == 0, err
    assert "4 implicit wait(s) through the legacy default stream" in out
