"""An application from an Nsight Systems export that has its CUDA API tables
(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION): the event waits and the
host's synchronisations are read, not inferred, and a replay on the traced GPU gives the
measured makespan of a program that synchronises."""
import json
import sys
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.project_file import load_project

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import (A100, CONTEXT_SYNC, DEVICE, PINNED, SAXPY, STREAM_SYNC,  # noqa: E402
                          STREAM_WAIT, call, copy, kernel, sync, write_export)

pytestmark = pytest.mark.usefixtures("gpumodeler_env")

MiB = 2 ** 20
SCALE = "void scale<float>(float*, int)"
TS, BW = 12e-6, 18e9
US = 1e-6
#: how long after the end of what it waited for an event-waiting kernel starts: longer
#: than the window in which a wait is inferred from timing alone
EVENT_LATENCY = 30 * US
EVENT = 5


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def copy_time(n: int) -> float:
    return TS + n / BW


def synchronised(path: Path, api=True, record_table=False, sync_table=True,
                 extra_calls=(), driver=False) -> dict:
    """Two streams, an event wait and a device synchronize between two phases, on one A100:
    phase 1 copies in on streams 7 and 8, runs K1 on 7, records an event after it, copies
    out on 7, makes stream 8 wait for the event, runs K2 and copies out on 8; the host synchronizes the
    device, works 1 ms, then phase 2 runs K3 and a synchronous copy out on 7 (the host
    blocked in it) and K4 on 8. ``api``: write the runtime and synchronisation tables
    (``sync_table``: the latter too; ``record_table``: the CUDA event table too;
    ``extra_calls``: more runtime rows; ``driver``: the calls are the driver API's, in its
    table). Returns the GPU intervals and the host calls by name (s)."""
    t, host = {}, {}
    clock = [1 * US]

    def issue(name, length=4 * US):
        host[name] = (clock[0], clock[0] + length)
        clock[0] += length + 1 * US
        return host[name][0]
    issue("a_in")
    t["a_in"] = (10 * US, 10 * US + copy_time(16 * MiB))
    issue("b_in")
    t["b_in"] = (t["a_in"][1], t["a_in"][1] + copy_time(32 * MiB))
    issue("k1")
    t["k1"] = (t["a_in"][1], t["a_in"][1] + 2.5e-3)
    issue("record", 2 * US)
    issue("a_mid")      # (keeps the GPU busy while K2 waits for the event)
    t["a_mid"] = (t["k1"][1], t["k1"][1] + copy_time(8 * MiB))
    issue("wait", 2 * US)
    issue("k2")
    t["k2"] = (t["k1"][1] + EVENT_LATENCY, t["k1"][1] + EVENT_LATENCY + 0.5e-3)
    issue("b_out")
    t["b_out"] = (t["k2"][1], t["k2"][1] + copy_time(8 * MiB))
    phase1 = t["b_out"][1]
    host["sync"] = (clock[0], phase1 + 8 * US)
    clock[0] = host["sync"][1] + 1e-3          # the host works 1 ms
    start = issue("k3")
    t["k3"] = (start + 12 * US, start + 12 * US + 0.3e-3)
    start = issue("c_in")
    t["c_in"] = (start + 10 * US, start + 10 * US + copy_time(4 * MiB))
    start = issue("a_out")
    t["a_out"] = (t["k3"][1], t["k3"][1] + copy_time(4 * MiB))
    host["a_out"] = (start, t["a_out"][1] + 5 * US)   # cudaMemcpy: returns when done
    clock[0] = host["a_out"][1] + 2 * US
    start = issue("k4")
    t["k4"] = (start + 10 * US, start + 10 * US + 0.2e-3)
    corr = {name: i for i, name in enumerate(
        ["a_in", "b_in", "k1", "record", "a_mid", "wait", "k2", "b_out", "sync", "k3",
         "c_in", "a_out", "k4"], start=1)}
    names = {"a_in": "cudaMemcpyAsync", "b_in": "cudaMemcpyAsync", "k1": "cudaLaunchKernel",
             "record": "cudaEventRecord", "a_mid": "cudaMemcpyAsync",
             "wait": "cudaStreamWaitEvent",
             "k2": "cudaLaunchKernel", "b_out": "cudaMemcpyAsync",
             "sync": "cudaDeviceSynchronize", "k3": "cudaLaunchKernel",
             "c_in": "cudaMemcpyAsync", "a_out": "cudaMemcpy", "k4": "cudaLaunchKernel"}
    if driver:
        names = {n: {"cudaMemcpyAsync": "cuMemcpyAsync", "cudaLaunchKernel": "cuLaunchKernel",
                     "cudaEventRecord": "cuEventRecord",
                     "cudaStreamWaitEvent": "cuStreamWaitEvent",
                     "cudaDeviceSynchronize": "cuCtxSynchronize",
                     "cudaMemcpy": "cuMemcpyDtoH"}[v] for n, v in names.items()}
    kw: dict = {"calls_table": "CUPTI_ACTIVITY_KIND_DRIVER"} if driver else {}
    if api:
        kw["calls"] = [call(ns(a), ns(b), names[n], corr[n]) for n, (a, b) in host.items()]
        kw["calls"] += list(extra_calls)
        kw["syncs"] = None if not sync_table else [sync(ns(host["wait"][0]), ns(host["wait"][1]), STREAM_WAIT,
                            corr["wait"], stream=8, event=EVENT),
                       sync(ns(host["sync"][0]), ns(host["sync"][1]), CONTEXT_SYNC,
                            corr["sync"])]
        if record_table:
            kw["events"] = [dict(deviceId=0, streamId=7, correlationId=corr["record"],
                                 eventId=EVENT)]

    def k(name, kernel_name, stream):
        return kernel(ns(t[name][0]), ns(t[name][1]), kernel_name, stream=stream,
                      corr=corr[name])

    def c(name, n, kind, stream):
        src, dst = (PINNED, DEVICE) if kind == 1 else (DEVICE, PINNED)
        return copy(ns(t[name][0]), ns(t[name][1]), n, kind, src=src, dst=dst, stream=stream,
                    corr=corr[name])
    write_export(path, kernels=[k("k1", SAXPY, 7), k("k2", SCALE, 8), k("k3", SAXPY, 7),
                                k("k4", SCALE, 8)],
                 copies=[c("a_in", 16 * MiB, 1, 7), c("b_in", 32 * MiB, 1, 8),
                         c("a_mid", 8 * MiB, 2, 7),
                         c("b_out", 8 * MiB, 2, 8), c("c_in", 4 * MiB, 1, 8),
                         c("a_out", 4 * MiB, 2, 7)],
                 gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)], **kw)
    return dict(t, host=host)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys, tmp_path, **kw):
    trace = tmp_path / "run.sqlite"
    times = synchronised(trace, **kw)
    project = tmp_path / "p.gpm"
    code, out, err = run(capsys, "application", "import", trace, "--project", project,
                         "--json")
    assert code == 0, err
    return project, times, json.loads(out)


def steps_by_measured_start(project):
    (app,) = load_project(project).applications.values()
    return app, {round(s.measured_start_s * 1e9): s for s in app.steps if s.kind != "sync"}


def step_at(steps, times, name):
    return steps[round((times[name][0] - times["a_in"][0]) * 1e9)]


def waits_of(app, step):
    """What ``step`` waits for: its own list, and the list of the host delay it follows in
    its stream (the time from what it waited for to its start)."""
    before = [s for s in app.steps[:app.steps.index(step)] if s.stream == step.stream]
    delay = before[-1] if before and before[-1].name == "host delay" else None
    return set(step.after) | (set(delay.after) if delay else set()), delay


def test_event_wait_and_device_synchronize_are_read_and_replayed(capsys, tmp_path):
    project, t, summary = imported(capsys, tmp_path)
    assert summary["api_dependencies"] == 1
    assert summary["host_waits"] == 2      # the device synchronize, the synchronous copy
    assert summary["inferred_dependencies"] == 0
    app, steps = steps_by_measured_start(project)
    k1, k2 = step_at(steps, t, "k1"), step_at(steps, t, "k2")
    # K2 waits for K1 through the event (the host delay before it: the event's latency)
    waits, delay = waits_of(app, k2)
    assert k1.id in waits
    assert delay is not None and delay.host_s == pytest.approx(EVENT_LATENCY, abs=1e-9)
    # the device synchronize: a host step after both streams' last steps of phase 1,
    # holding the host's time from their end to the next launch call
    (device_sync,) = [s for s in app.steps if s.name == "cudaDeviceSynchronize"]
    assert set(device_sync.after) == {step_at(steps, t, "a_mid").id,
                                      step_at(steps, t, "b_out").id}
    assert device_sync.host_s == pytest.approx(t["host"]["k3"][0] - t["b_out"][1], abs=1e-9)
    order = [s.id for s in app.steps]
    assert order.index(device_sync.id) < order.index(step_at(steps, t, "k3").id)
    # the synchronous copy: the host waited for it before launching K4
    (blocking,) = [s for s in app.steps if s.name == "cudaMemcpy"]
    assert step_at(steps, t, "a_out").id in blocking.after
    # the replay on the traced GPU gives the measured makespan
    code, out, err = run(capsys, "timeline", project, "--json")
    assert code == 0, err
    doc = json.loads(out)
    measured = t["k4"][1] - t["a_in"][0]
    assert doc["measured_makespan_s"] == pytest.approx(measured, abs=1e-9)
    assert doc["makespan_s"] == pytest.approx(measured, rel=0.05)


def test_without_the_api_tables_the_event_wait_is_not_seen(capsys, tmp_path):
    """The same run exported without the CUDA API tables imports as before: K2's late
    start (30 µs after K1, beyond the inference's window) is a host delay, not a wait on
    K1, and the synchronize is an idle gap."""
    project, t, summary = imported(capsys, tmp_path, api=False)
    assert summary["api_dependencies"] == 0 and summary["host_waits"] == 0
    assert summary["host_gaps"] >= 1
    app, steps = steps_by_measured_start(project)
    k1, k2 = step_at(steps, t, "k1"), step_at(steps, t, "k2")
    assert k1.id not in waits_of(app, k2)[0]
    assert not [s for s in app.steps if s.name.startswith("cuda")]


def test_the_event_dependency_holds_on_a_slower_gpu(capsys, tmp_path):
    """Replayed with K1 four times as long, K2 still starts the event's latency after K1
    ends (the read dependency, then the measured host delay); without the API tables its
    host delay hangs on its stream's copy, long done, and it starts as soon as the compute
    engine frees."""
    results = {}
    for api in (True, False):
        folder = tmp_path / ("api" if api else "plain")
        folder.mkdir()
        project, t, _summary = imported(capsys, folder, api=api)
        p = load_project(project)
        (app,) = p.applications.values()
        from dataclasses import replace
        k1 = next(s for s in app.steps if s.kind == "kernel")
        steps = tuple(replace(s, measured_s=s.measured_s * 4) if s.id == k1.id else s
                      for s in app.steps)
        p.applications[app.id] = replace(app, steps=steps)
        from gpumodeler.db.project_file import save_project
        save_project(p, project)
        code, out, err = run(capsys, "timeline", project, "--json")
        assert code == 0, err
        doc = json.loads(out)
        by = {s["id"]: s for s in doc["steps"]}
        k2 = next(s for s in app.steps if s.kind == "kernel" and s.name == SCALE)
        results[api] = (by[k1.id]["end_s"], by[k2.id]["start_s"])
    k1_end, k2_start = results[True]
    assert k2_start >= k1_end + EVENT_LATENCY - 1e-9
    k1_end, k2_start = results[False]
    assert k2_start < k1_end + EVENT_LATENCY / 2


def test_a_recorded_event_table_names_the_stream(capsys, tmp_path):
    project, t, summary = imported(capsys, tmp_path, record_table=True)
    assert summary["api_dependencies"] == 1
    app, steps = steps_by_measured_start(project)
    k2 = step_at(steps, t, "k2")
    assert step_at(steps, t, "k1").id in waits_of(app, k2)[0]


def test_a_stream_synchronize_waits_for_its_stream_only(tmp_path):
    """A cudaStreamSynchronize on stream 8 while stream 7 runs on: the next launch waits
    for stream 8's last step, not for stream 7's."""
    from gpumodeler.core.project import Project
    from gpumodeler.db.catalog import Catalog
    from gpumodeler.service.trace_import import plan_import
    t = {"a": (0, 3_000_000), "b": (10_000, 500_000), "c": (520_000, 700_000)}
    host = {"a": (0, 2_000), "b": (3_000, 5_000), "sync": (6_000, 505_000),
            "c": (510_000, 512_000)}
    corr = {"a": 1, "b": 2, "sync": 3, "c": 4}
    path = write_export(
        tmp_path / "s.sqlite",
        kernels=[kernel(*t["a"], SAXPY, stream=7, corr=1), kernel(*t["b"], SCALE, stream=8,
                                                                   corr=2),
                 kernel(*t["c"], SCALE, stream=8, corr=4)],
        gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)],
        calls=[call(*host[n], "cudaStreamSynchronize" if n == "sync" else "cudaLaunchKernel",
                    corr[n]) for n in host],
        syncs=[sync(*host["sync"], STREAM_SYNC, 3, stream=8)])
    with Catalog(user_db=tmp_path / "u.db") as catalog:
        plan = plan_import(Project("p"), path, catalog)
    app = plan.command.commands[-1].item
    (wait,) = [s for s in app.steps if s.name == "cudaStreamSynchronize"]
    kernels = [s for s in app.steps if s.kind == "kernel"]
    assert wait.after == (kernels[1].id,)      # stream 8's kernel, not stream 7's
    assert wait.host_s == pytest.approx((510_000 - 500_000) / 1e9)


def test_the_runtime_table_alone_gives_the_same_waits(capsys, tmp_path):
    """Without the synchronisation table the calls are known by name: the wait is for the
    stream of the thread's next launch, the event for the stream of its last launch before
    the record, the device synchronize by its name."""
    project, t, summary = imported(capsys, tmp_path, sync_table=False)
    assert (summary["api_dependencies"], summary["host_waits"]) == (1, 2)
    app, steps = steps_by_measured_start(project)
    assert step_at(steps, t, "k1").id in waits_of(app, step_at(steps, t, "k2"))[0]
    code, out, err = run(capsys, "timeline", project, "--json")
    doc = json.loads(out)
    assert doc["makespan_s"] == pytest.approx(t["k4"][1] - t["a_in"][0], rel=0.05)


def test_damaged_api_rows_are_left_out(capsys, tmp_path):
    """Runtime rows whose times are not whole numbers, and synchronisation types nobody
    numbers, are left out; the rest is read."""
    bad = [dict(start="soon", end=5, name="cudaDeviceSynchronize_v3020", corr=90,
                thread=1),
           dict(start=20, end=10, name="cudaLaunchKernel_v7000", corr=3, thread=1)]
    project, t, summary = imported(capsys, tmp_path, extra_calls=bad)
    assert (summary["api_dependencies"], summary["host_waits"]) == (1, 2)


def test_calls_that_launch_nothing_of_the_export_import_as_before(capsys, tmp_path):
    """A runtime table whose correlation ids match no kernel or copy (another process's
    calls): the waits are inferred as without the table."""
    trace = tmp_path / "run.sqlite"
    write_export(trace, kernels=[kernel(0, 1000, SAXPY), kernel(2000, 3000, SAXPY)],
                 gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)],
                 calls=[call(0, 10, "cudaLaunchKernel", 77)], syncs=[])
    from gpumodeler.db.nsys_export import read_api
    assert read_api(trace) is None
    code, out, err = run(capsys, "application", "import", trace, "--project",
                         tmp_path / "p.gpm", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["api_dependencies"], doc["host_waits"], doc["host_gaps"]) == (0, 0, 1)


def test_driver_api_calls_are_read_as_the_runtime_s(capsys, tmp_path):
    """A program that launches through the driver API (cuLaunchKernel, cuCtxSynchronize…):
    its calls are in CUPTI_ACTIVITY_KIND_DRIVER, read the same way."""
    project, t, summary = imported(capsys, tmp_path, driver=True)
    assert (summary["api_dependencies"], summary["host_waits"]) == (1, 2)
    app, steps = steps_by_measured_start(project)
    assert step_at(steps, t, "k1").id in waits_of(app, step_at(steps, t, "k2"))[0]
    assert [s.name for s in app.steps if s.kind == "sync" and s.stream == "host"] == \
        ["cuCtxSynchronize", "cuMemcpyDtoH"]
    code, out, err = run(capsys, "timeline", project, "--json")
    assert json.loads(out)["makespan_s"] == pytest.approx(t["k4"][1] - t["a_in"][0], rel=0.05)
