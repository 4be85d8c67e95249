"""Round trip through a trace with its CUDA API tables: an application with event waits
across streams and device synchronizes, simulated by the timeline, written as an Nsight
Systems export of what the simulation scheduled together with the host's calls (each
launch, a cudaEventRecord after each step another stream waits for, the
cudaStreamWaitEvent before the waiting step, cudaDeviceSynchronize), imported back: every
wait of the original is read back as the same dependency, and the replay on the same
system gives the same makespan."""
import random
import sys
from pathlib import Path

import pytest

from gpumodeler.core.application.app import Application, Step
from gpumodeler.service.application import run_application

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import (A100, CONTEXT_SYNC, DEVICE, PINNED, STREAM_WAIT, call,  # noqa: E402
                          copy, kernel, sync, write_export)
from test_trace_roundtrip import GPU, round_trip  # noqa: E402

#: GPU times are shifted by this much, so that the first launches' calls come before them
SHIFT = 1e-3


def random_program(rng: random.Random, n: int, streams: int) -> Application:
    """Kernels and copies on ``streams`` streams, some waiting for a recent step of
    another stream (an event), with a device synchronize and host work every 20 steps."""
    steps: list = []
    last: dict = {}         # stream -> its last step since the last synchronize
    fresh: set = set()      # streams whose next step must wait for the synchronize
    sync_id = None
    for i in range(n):
        if i and i % 20 == 0 and last:
            sync_id = f"y{i}"
            steps.append(Step(sync_id, "sync", "sync", "host", tuple(last.values()),
                              host_s=rng.uniform(50e-6, 300e-6)))
            fresh = {str(s + 7) for s in range(streams)}
            last = {}
        stream = str(rng.randrange(streams) + 7)
        after: tuple = ()
        others = [sid for st, sid in last.items() if st != stream]
        if others and rng.random() < 0.35:
            after = (rng.choice(others),)
        if stream in fresh:
            after = after + (sync_id,)
            fresh.discard(stream)
        kind = rng.choice(("kernel", "kernel", "htod", "dtoh"))
        if kind == "kernel":
            j = rng.randrange(3)
            steps.append(Step(f"s{i}", "kernel", f"kern{j}(float*)", stream, after,
                              launch=f"l{j}", measured_s=rng.uniform(20e-6, 400e-6),
                              traced_gpu=GPU))
        else:
            size = rng.choice((1, 2, 4, 8, 16)) * 2 ** 20
            src, dst = ("host1", "gpu1") if kind == "htod" else ("gpu1", "host1")
            steps.append(Step(f"s{i}", "copy", "copy", stream, after, src=src, dst=dst,
                              size=str(size)))
        last[stream] = f"s{i}"
    return Application("app1", "original", tuple(steps))


def export_with_api(result: dict, app: Application, path: Path) -> Path:
    """The simulated schedule as an export, with the host's calls on one thread."""
    ns = lambda s: int(round((s + SHIFT) * 1e9))  # noqa: E731
    when = {r["id"]: (r["start_s"], r["end_s"]) for r in result["steps"]}
    waited = {d for s in app.steps if s.kind != "sync" for d in s.after
              if not d.startswith("y")}
    kernels, copies, calls, syncs, events = [], [], [], [], []
    corr = [0]
    clock = [-SHIFT]

    def host_call(name, end=None, at=None):
        corr[0] += 1
        start = clock[0] if at is None else at
        calls.append(call(ns(start), ns(end if end is not None else start + 1e-9), name,
                          corr[0]))
        clock[0] = max(clock[0], end if end is not None else start) + 1e-9
        return corr[0]
    event_of = {}
    for s in app.steps:
        if s.kind == "sync":
            start, end = when[s.id]     # the host waited until what it waited for ended
            host_call("cudaDeviceSynchronize", end=start)
            syncs.append(sync(calls[-1]["start"], calls[-1]["end"], CONTEXT_SYNC, corr[0]))
            clock[0] = end              # then worked host_s
            continue
        for d in s.after:
            if d in event_of:
                c = host_call("cudaStreamWaitEvent")
                syncs.append(sync(calls[-1]["start"], calls[-1]["end"], STREAM_WAIT, c,
                                  stream=int(s.stream), event=event_of[d]))
        start, end = when[s.id]
        if s.kind == "kernel":
            c = host_call("cudaLaunchKernel")
            kernels.append(kernel(ns(start), ns(end), s.name, grid=(100, 1, 1),
                                  stream=int(s.stream), corr=c))
        else:
            c = host_call("cudaMemcpyAsync")
            htod = s.src == "host1"
            copies.append(copy(ns(start), ns(end), int(s.size), 1 if htod else 2,
                               src=PINNED if htod else DEVICE, dst=DEVICE if htod else PINNED,
                               stream=int(s.stream), corr=c))
        if s.id in waited:
            c = host_call("cudaEventRecord")
            event_of[s.id] = 100 + len(event_of)
            events.append(dict(deviceId=0, streamId=int(s.stream), correlationId=c,
                               eventId=event_of[s.id]))
    return write_export(path, kernels=kernels, copies=copies,
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", dict(A100, asyncEngines=2))],
                        calls=calls, syncs=syncs, events=events)


@pytest.mark.parametrize("seed", range(4))
def test_waits_read_back_and_the_makespan_replayed(catalog, tmp_path, seed):
    rng = random.Random(seed)
    app = random_program(rng, 70, streams=rng.choice((2, 3)))
    truth, plan, project, lookups = round_trip(catalog, app, export_with_api,
                                               tmp_path / "sim.sqlite")
    syncs = sum(1 for s in app.steps if s.kind == "sync")
    event_waits = sum(1 for s in app.steps if s.kind != "sync"
                      for d in s.after if not d.startswith("y"))
    assert (plan.kernels + plan.copies, plan.inferred_dependencies) == (70, 0)
    assert (plan.host_waits, plan.api_dependencies) == (syncs, event_waits)
    # every event wait of the original is a dependency of the imported step on the step
    # the event was recorded after (the trace's steps in the original's order by start)
    imported = project.applications[plan.application]
    by_start = {(round(s.measured_start_s, 9), s.stream): s for s in imported.steps
                if s.kind != "sync"}
    first = min(r["start_s"] for r in truth["steps"] if r["kind"] != "sync")
    when = {r["id"]: (round(r["start_s"] - first, 9), r["stream"]) for r in truth["steps"]}
    by_id = {s.id: s for s in imported.steps}
    for s in app.steps:
        for d in s.after:
            if s.kind == "sync" or d.startswith("y"):
                continue
            mine, theirs = by_start[when[s.id]], by_start[when[d]]
            before = [x for x in imported.steps[:imported.steps.index(mine)]
                      if x.stream == mine.stream]
            delay = before[-1] if before and before[-1].name == "host delay" else None
            assert theirs.id in set(mine.after) | set(delay.after if delay else ()), \
                (s.id, d)
    assert sum(1 for s in imported.steps if s.name == "cudaDeviceSynchronize") == syncs
    assert all(by_id[a] for s in imported.steps for a in s.after)
    replay = run_application(project, plan.application, lookups)
    assert replay["measured_makespan_s"] == pytest.approx(truth["makespan_s"], abs=2e-9)
    assert replay["makespan_s"] == pytest.approx(truth["makespan_s"], rel=1e-3)
