"""CLI speed (speed targets), each figure next to its comparator as a ratio.

1. Cold start of ``gpumodeler --help`` and ``gpumodeler occupancy ...`` against
   ``python -c pass`` (target < 0.25 s).
   ``gpumodeler predict`` (explicit flags, and ``--device`` from the shipped database)
   likewise (target < 0.4 s).
2. ``sweep`` of 10^6 launch points to CSV, JSON and JSON Lines: wall time and peak memory of
   the process (target < 200 MB); the table written by the CLI's writer against
   ``numpy.savetxt`` writing the same table, and the whole command against that.
3. ``occupancy --batch`` of 10^5 JSON lines: lines per second (target >= 200 000), of wall
   time and per CPU second, with and without the fixed cost of importing numpy.

Rows 1 and 3 print CPU seconds too (user + system of the process), the steadier figure on a
busy machine, where wall time counts the waits for a core.

Run: python benchmarks/bench_cli.py [--points N]
     python benchmarks/bench_cli.py --batch-lines 1e5,1e6   (row 3 alone)
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MISSED: list[str] = []  # the targets missed in this run (exit status 1)


def verdict(row: str, met: bool, word: str = "ok", miss: str = "MISSED") -> str:
    if not met:
        MISSED.append(row)
    return word if met else miss

ROOT = Path(__file__).resolve().parents[1]
SAXPY2 = str(ROOT / "resources/kernels/saxpy2-maxwell.json")
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]
CLI = [sys.executable, "-m", "gpumodeler"]
#: The processes run with bytecode caches, as an installed package has them (pip compiles
#: at install): PYTHONDONTWRITEBYTECODE, if set, would make every run compile every module
#: it imports. The caches go to a folder of their own, not into the source tree.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "gpumodeler-bench-pycache")


def run(argv, stdout=subprocess.DEVNULL, stdin=None) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stdin=stdin, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode:
        raise RuntimeError(f"{argv} failed: {err}")
    return wall, usage.ru_maxrss / 1024  # KiB on Linux


def times(argv, stdin=None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process. On a loaded machine the CPU time
    is the steadier figure: wall time counts the waits for a core."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stdin=stdin, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"{argv} failed")
    return wall, usage.ru_utime + usage.ru_stime


def median_times(argv, repeat=7) -> tuple[float, float]:
    times(argv)  # writes the bytecode caches
    runs = [times(argv) for _ in range(repeat)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def cold_start() -> None:
    base, base_cpu = median_times([sys.executable, "-c", "pass"])
    for label, argv, target in (
            ("--help", ["--help"], 0.25),
            ("occupancy", ["occupancy", "--cc", "5.2", "--block-size", "256", "--registers", "32"],
             0.25),
            ("predict", ["predict", *GTX970, "--grid-size", "1562500", "--block-size", "256",
                         "--occupancy", "64", "--latency-bound", "4014",
                         "--issued-instructions", "538"], 0.4),
            # the device looked up in the shipped database (read with sqlite3, no sqlite-utils)
            ("predict --device", ["predict", "--device", "GTX 980", "--grid-size", "64",
                                  "--block-size", "256", "--occupancy", "32",
                                  "--latency-bound", "100", "--issued-instructions", "10"], 0.4)):
        t, cpu = median_times(CLI + argv)
        print(f"cli cold start `gpumodeler {label}`: {t:.3f} s = {t / base:.1f}x `python -c pass` "
              f"({base:.3f} s); target < {target} s: {verdict(f'cold start {label}', t < target, miss='SLOW')}; "
              f"CPU {cpu:.3f} s = {cpu / base_cpu:.1f}x ({base_cpu:.3f} s)")


def sweep_args(points: int) -> list:
    a = max(1, points // (10 * 10 * 100))
    return ["sweep", *GTX970, "--graph", SAXPY2, "--cc", "5.2", "--block-size", "64:1024:96",
            "--registers", "16:88:8", "--data-size", "1e6:1e8:1e6", "--set", f"a=1:{a}"]


def sweep_table(points: int) -> dict:
    """The sweep's table in memory: the CLI run in process with its writer collecting."""
    import gpumodeler.cli.tables as tables
    from gpumodeler.cli.main import main as cli_main

    chunks = []

    class Collect(tables.TableWriter):
        def write(self, columns):
            chunks.append({k: np.array(v) for k, v in columns.items()})

    real = tables.TableWriter
    tables.TableWriter = Collect
    try:
        cli_main(sweep_args(points) + ["-o", os.devnull])
    finally:
        tables.TableWriter = real
    return {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}


def writers(points: int) -> float:
    """Writing the same table: numpy.savetxt against the CLI's chunked writer."""
    import gpumodeler.cli.tables as tables

    table = sweep_table(points)
    rows = np.empty(len(table["device"]), dtype=[(k, v.dtype) for k, v in table.items()])
    for k, v in table.items():
        rows[k] = v
    with open(os.devnull, "w") as fh:
        t0 = time.perf_counter()
        np.savetxt(fh, rows, fmt="%s", delimiter=",", header=",".join(table), comments="")
        comparator = time.perf_counter() - t0
    for fmt in ("csv", "json", "jsonl"):
        t0 = time.perf_counter()
        with tables.TableWriter(os.devnull, fmt) as w:
            w.write(table)
        t = time.perf_counter() - t0
        print(f"table of {len(rows)} rows x {len(table)} columns to {fmt}: {t:.2f} s = "
              f"{t / comparator:.2f}x numpy.savetxt of it ({comparator:.2f} s, CSV)")
    return comparator


def sweeps(points: int) -> None:
    """The whole command, in its own process: wall time and peak memory (measured before
    this process holds a big table, since a child starts as a copy of it)."""
    results = [(fmt, *run(CLI + sweep_args(points) + ["--format", fmt, "-o", os.devnull]))
               for fmt in ("csv", "json", "jsonl")]
    comparator = writers(points)
    for fmt, wall, peak in results:
        print(f"sweep {points} points to {fmt}: {wall:.2f} s wall = {wall / comparator:.2f}x "
              f"numpy.savetxt of the table (target <= 1x: "
              f"{verdict(f'sweep {fmt} time', wall <= comparator)}); peak {peak:.0f} MB "
              f"(target < 200 MB: {verdict(f'sweep {fmt} memory', peak < 200, miss='TOO MUCH')})")


def write_batch(fh, lines: int, block: int = 100_000) -> None:
    """``lines`` launches as JSON Lines, written ``block`` lines at a time: this process stays
    small, since a child's peak memory counts the memory of the parent it was forked from."""
    rng = np.random.default_rng(3)
    ccs = ["5.2", "6.1", "7.0", "7.5", "8.0", "8.6", "9.0"]
    columns = (rng.integers(1, 33, lines) * 32, rng.integers(8, 256, lines),
               rng.integers(0, 48, lines) * 1024)
    for start in range(0, lines, block):
        fh.write("".join(
            json.dumps({"cc": ccs[i % len(ccs)], "block_size": b, "registers": r,
                        "shared_mem": s}) + "\n"
            for i, b, r, s in zip(range(start, lines), *(c[start:start + block].tolist()
                                                         for c in columns))))


def batch(lines: int = 100_000, repeat: int = 5) -> None:
    """``occupancy --batch -`` of ``lines`` JSON lines: lines per second of wall time and per
    CPU second, each also without the fixed cost of importing numpy (measured alone, as
    ``python -c "import numpy"`` less ``python -c pass``), and the peak memory."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        write_batch(fh, lines)
    try:
        runs = []
        for _ in range(repeat):
            with open(fh.name) as stdin:
                runs.append(times(CLI + ["occupancy", "--batch", "-"], stdin=stdin))
        with open(fh.name) as stdin:
            _, peak = run(CLI + ["occupancy", "--batch", "-"], stdin=stdin)
    finally:
        os.unlink(fh.name)
    wall, cpu = (statistics.median(r[k] for r in runs) for k in (0, 1))
    base, base_cpu = median_times([sys.executable, "-c", "pass"])
    numpy_wall, numpy_cpu = median_times([sys.executable, "-c", "import numpy"])
    numpy_wall, numpy_cpu = numpy_wall - base, numpy_cpu - base_cpu
    print(f"occupancy --batch {lines} lines: {wall:.2f} s = {lines / wall:,.0f} lines/s "
          f"(target >= 200,000: {lines / wall / 200_000:.2f}x of it, {verdict('batch', lines / wall >= 200_000)}); CPU {cpu:.2f} s = "
          f"{lines / cpu:,.0f} lines per CPU second; without importing numpy "
          f"({numpy_wall:.3f} s, CPU {numpy_cpu:.3f} s): {lines / (wall - numpy_wall):,.0f} "
          f"lines/s, {lines / (cpu - numpy_cpu):,.0f} per CPU second; peak {peak:.0f} MB")


def main(argv) -> int:
    if "--batch-lines" in argv:  # the batch row alone, at the sizes given (comma-separated)
        for lines in argv[argv.index("--batch-lines") + 1].split(","):
            batch(int(float(lines)))
        return 0
    points = int(argv[argv.index("--points") + 1]) if "--points" in argv else 1_000_000
    cold_start()
    # The batch runs before the sweeps: a child's peak memory (ru_maxrss of the children)
    # counts the parent it was forked from, and the sweep rows leave this process holding a
    # table of 10^6 rows.
    batch()
    sweeps(points)
    if MISSED:
        print(f"cli: missed {', '.join(MISSED)}")
    return 1 if MISSED else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
