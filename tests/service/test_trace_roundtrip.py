"""Round trip through a trace: an application simulated by the timeline, written as an
Nsight Systems export of what the simulation scheduled, imported back and replayed on the
same system gives the same makespan. This checks the import's reading of the trace (stream
order, engines, waits across streams, the link fitted to the copies) against the timeline's
own rules on schedules no hand-written case covers."""
import random
import sys
from pathlib import Path

import pytest

from gpumodeler.core.application.app import Application, Step
from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice, Project
from gpumodeler.service.application import run_application
from gpumodeler.service.lookups import catalog_lookups
from gpumodeler.service.trace_import import plan_import

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import A100, DEVICE, PINNED, copy, kernel, write_export  # noqa: E402

GPU = "A100 SXM4 40 GB"
TS, BW = 9e-6, 22e9


def system() -> Project:
    p = Project("traced")
    p.put("devices", PlacedDevice("host1", "host", "Workstation: Intel Core i9-14900K (PCIe 5.0)"))
    p.put("devices", PlacedDevice("gpu1", "gpu", GPU, overrides={"copy_engines": 2}))
    p.put("connections", Connection("conn1", "PCIe 4.0 x16", "host1", "gpu1", overrides={
        "bandwidth_bytes_per_s": BW, "lambda_htod": 1.0, "lambda_dtoh": 1.0,
        "startup_htod_s": TS, "startup_dtoh_s": TS}))
    for i in range(3):
        p.put("launches", LaunchConfig(f"l{i}", f"kern{i}", gpu="gpu1", grid_size=100))
    return p


def random_application(rng: random.Random, n: int, streams: int) -> Application:
    """Kernels (with measured times, so that their durations are fixed) and copies on
    ``streams`` streams, some steps waiting for a step of another stream."""
    steps = []
    for i in range(n):
        stream = str(rng.randrange(streams) + 7)
        after = ()
        if steps and rng.random() < 0.3:    # on a recent step of another stream
            other = [s.id for s in steps[-3:] if s.stream != stream]
            after = (other[-1],) if other else ()
        kind = rng.choice(("kernel", "kernel", "htod", "dtoh"))
        if kind == "kernel":
            j = rng.randrange(3)
            steps.append(Step(f"s{i}", "kernel", f"kern{j}(float*)", stream, after, launch=f"l{j}",
                              measured_s=rng.uniform(20e-6, 400e-6), traced_gpu=GPU))
        else:
            size = rng.choice((1, 2, 4, 8, 16)) * 2 ** 20
            src, dst = ("host1", "gpu1") if kind == "htod" else ("gpu1", "host1")
            steps.append(Step(f"s{i}", "copy", "copy", stream, after, src=src, dst=dst,
                              size=str(size)))
    return Application("app1", "original", tuple(steps))


def export_of(result: dict, app: Application, path: Path) -> Path:
    ns = lambda s: int(round(s * 1e9))  # noqa: E731
    by_id = {s.id: s for s in app.steps}
    kernels, copies = [], []
    for r in result["steps"]:
        s = by_id[r["id"]]
        if s.kind == "kernel":
            kernels.append(kernel(ns(r["start_s"]), ns(r["end_s"]), s.name,
                                  grid=(100, 1, 1), stream=int(s.stream)))
        else:
            htod = s.src == "host1"
            copies.append(copy(ns(r["start_s"]), ns(r["end_s"]), int(s.size), 1 if htod else 2,
                               src=PINNED if htod else DEVICE, dst=DEVICE if htod else PINNED,
                               stream=int(s.stream)))
    return write_export(path, kernels=kernels, copies=copies,
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", dict(A100, asyncEngines=2))])


def round_trip(catalog, app: Application, export, path: Path):
    """Simulate ``app`` on :func:`system`, write what was scheduled with ``export(result,
    app, path)``, import it into a new project: (the simulation's result, the import's
    plan, the project, the lookups)."""
    original = system()
    original.put("applications", app)
    lookups = catalog_lookups(catalog)
    truth = run_application(original, "app1", lookups)
    trace = export(truth, app, path)
    project = Project("imported")
    plan = plan_import(project, trace, catalog)
    plan.command.do(project)
    return truth, plan, project, lookups


@pytest.mark.parametrize("seed", range(6))
def test_a_simulated_schedule_imported_back_replays_to_its_makespan(catalog, tmp_path, seed):
    rng = random.Random(seed)
    app = random_application(rng, 80, streams=rng.choice((2, 3, 4)))
    truth, plan, project, lookups = round_trip(catalog, app, export_of, tmp_path / "sim.sqlite")
    assert (plan.kernels + plan.copies, plan.host_gaps, plan.host_delays) == (80, 0, 0)
    assert plan.inferred_dependencies > 0
    replay = run_application(project, plan.application, lookups)
    assert replay["measured_makespan_s"] == pytest.approx(truth["makespan_s"], abs=2e-9)
    # the trace's nanoseconds and the link fitted to them: agreement to well within 0.1 %
    assert replay["makespan_s"] == pytest.approx(truth["makespan_s"], rel=1e-3)
