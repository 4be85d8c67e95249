"""``gpumodeler timeline P.gpm --json`` end to end at trace scale (speed targets): the whole
command (reading the project, building and simulating the application, the JSON document and
its printing) on applications imported from generated Nsight Systems exports of 10^3, 10^4
and 10^5 kernels and copies on three streams of one GPU (bench_trace_import.py's traces), in
a process of its own with its output to /dev/null, as a user's shell would run it; the text
output (no ``--json``, the command as a user types it) at the same sizes, with its own
exponent.

Timed: CPU seconds (user + system) of the child process, the steadier figure on a busy
machine, best of a few runs; wall seconds next to them. The exponent of time against size is
fitted by least squares on log-log. Target: 10^5 steps in under 2 s, exponent <= 1.2.

Then the CPU time of each phase of the command at the largest size, in a process of its own:
reading the project, building the application, simulating it, its energy, the rest of the
document, and writing the JSON text (start-up and printing are the rest of the total).

Run: python benchmarks/bench_timeline_cli.py [--quick]   (--quick stops at 10^4 steps)
"""
from __future__ import annotations

import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_graph import fit_exponent  # noqa: E402
from bench_trace_import import trace  # noqa: E402

TARGET_S = 2.0
MAX_EXPONENT = 1.2


def cli(*argv, env) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``gpumodeler ARGV`` with its output to /dev/null."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "w") as null:
        subprocess.run([sys.executable, "-m", "gpumodeler", *map(str, argv)], check=True,
                       stdout=null, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def phases(project_path: str) -> str:
    """Where the command's time goes (CPU seconds, in this process, the collector paused as
    the command pauses it): reading the project, building the application, simulating it,
    its energy, the rest of the document, and writing the JSON text (as the command does
    both: the steps as columns, written from them)."""
    from gpumodeler.cli import columnar_json, common
    from gpumodeler.core.application.app import build
    from gpumodeler.core.application.energy import energy
    from gpumodeler.core.application.timeline import simulate
    from gpumodeler.core.kernel.collector import collector_paused
    from gpumodeler.service.application import STEP_KEYS, application_columns, pick_application

    spent = {}
    clock = time.process_time
    with collector_paused():
        t = clock()
        project, _info = common.read_project(project_path)
        spent["read"] = clock() - t
        app_id = pick_application(project, None)
        app = project.applications[app_id]
        with common.open_catalog() as catalog:
            lookups = common.catalog_lookups(catalog)
            t = clock()
            document, columns = application_columns(project, app_id, lookups)
            run = clock() - t
            # (its parts again, alone: the catalog's and the kernels' answers are cached now)
            t = clock()
            built = build(project, app, **lookups)
            spent["build"] = clock() - t
            t = clock()
            timeline = simulate(built.activities, built.capacities, policy=app.policy)
            spent["simulate"] = clock() - t
            t = clock()
            energy(timeline, built.kernel_device, built.powers, host_power_w=app.host_power_w,
                   devices=built.gpus)
            spent["energy"] = clock() - t
            spent["document"] = run - spent["build"] - spent["simulate"] - spent["energy"]
        t = clock()
        columnar_json.dumps(dict(document, steps=columnar_json.Records(STEP_KEYS, columns)),
                            common._json_default, allow_nan=False)
        spent["JSON"] = clock() - t
    return ", ".join(f"{k} {v:.2f}" for k, v in spent.items())


def main(argv) -> int:
    if argv[:1] == ["--phases-of"]:   # (run by main in a process of its own)
        print(phases(argv[1]), flush=True)
        return 0
    sizes = [1_000, 10_000] if "--quick" in argv else [1_000, 10_000, 100_000]
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, PYTHONPATH=str(ROOT),
                   GPUMODELER_USER_DB=str(Path(folder) / "user.db"),
                   GPUMODELER_SETTINGS_DIR=str(Path(folder) / "settings"),
                   GPUMODELER_LOG_DIR=str(Path(folder) / "logs"))
        projects = {}
        for n in sizes:
            projects[n] = Path(folder) / f"p{n}.gpm"
            cli("application", "import", trace(Path(folder) / f"t{n}.sqlite", n),
                "--project", projects[n], env=env)
        for flags, label in ((["--json"], "timeline --json"), ([], "timeline (text)")):
            rows = sizes
            times = [min(cli("timeline", projects[n], *flags, env=env)
                         for _ in range(3 if n < 100_000 else 2)) for n in rows]
            cells = ", ".join(f"10^{round(math.log10(n))}: {c:.2f} s CPU ({w:.2f} s wall)"
                              for n, (c, w) in zip(rows, times))
            if len(rows) > 1:
                k = fit_exponent(rows, [c for c, _ in times])
                growth = f"; exponent {k:.2f} (must be <= {MAX_EXPONENT})"
            else:
                k, growth = 0.0, ""
            verdict = "ok"
            if (rows[-1] == 100_000 and times[-1][0] >= TARGET_S) or k > MAX_EXPONENT:
                verdict, failed = "MISSED", True
            target = (f"10^5 steps target < {TARGET_S} s" if rows[-1] == 100_000
                      else "10^5 steps not run (--quick)")
            print(f"{label}, 3 streams on one GPU: {cells}{growth}; {target} -> {verdict}",
                  flush=True)
        where = subprocess.run([sys.executable, __file__, "--phases-of", str(projects[sizes[-1]])],
                               check=True, env=env, capture_output=True, text=True).stdout.strip()
        print(f"timeline --json at 10^{round(math.log10(sizes[-1]))} steps, CPU s by phase "
              f"(in process; document: the rest of building it, one-time look-ups included): {where}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
