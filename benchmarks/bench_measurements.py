"""Measurement import and link calibration speed and growth (speed targets,
docs/contributing.md; docs/measurements.md).

1. Import, in process, streamed (the records counted as they come, none kept: the readers
   are generators over the file's lines, core.measurements.importer.stream_lines and
   db.nsys_export.streamed_export): an nvprof GPU trace (the sample file's copy and kernel
   rows repeated in one run), a timings CSV, an Nsight Compute details page and an Nsight
   Systems export (modern layout, kernels and copies alternating) of 10^3, 10^4 and 10^5
   rows. CPU time (best of the rounds), rows per second at 10^5 (target >= 10^5 rows/s),
   the growth exponent of time against rows (least squares on log-log, must be <= 1.1) and
   the peak of traced memory per size (tracemalloc; target: flat, the 10^5-row peak at most
   twice the 10^4-row one).
2. The command, in a process of its own with its output discarded: ``measure import`` of
   the nvprof trace, timings CSV, Nsight Compute page and nsys export of 10^5 and 10^6
   rows, text and ``--json``: rows per second of CPU time, interpreter start-up included
   (target >= 10^5 at each size), the exponent of CPU time from 10^5 to 10^6 rows, and the
   peak resident memory (target: flat, at most twice from 10^5 to 10^6 rows: the file is
   read a block at a time and the output written as records come, cli.measure_stream).
3. ``calibrate link`` on 10^3, 10^4 and 10^5 copies of distinct sizes (a timings CSV; two
   bandwidth regimes, 2 % noise): CPU time, target 10^5 copies in under 5 s, exponent.

The nvprof, timings and nsys rows repeat a few sample rows, so the readers' memories of
repeating texts (an nvprof copy's size and kernel's launch cells, the words of a row) always
hit; real traces repeat them less. The "distinct" files (:func:`nvprof_distinct_text`,
:func:`timings_distinct_text`, :func:`nsys_distinct_file`) are the other end: every number
differs from row to row, so those memories never help (and the nvprof reader gives them up).
The "ncu" file is an Nsight Compute details page (:func:`ncu_distinct_text`: the default
``ncu --csv`` page, one row per launch and metric, twelve per launch) of distinct numbers;
its rows are the file's rows (a record is a launch: one per twelve rows).

A row that misses its target is reported as such and the script ends with status 1.
Run: python benchmarks/bench_measurements.py [--quick]   (--quick: 10^4 and 10^5 rows for
the command, 10^3 and 10^4 in process)
"""
from __future__ import annotations

import contextlib
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))

from bench_graph import fit_exponent  # noqa: E402

import numpy as np  # noqa: E402

SAMPLES = ROOT / "resources" / "measurements"
ROWS_PER_S = 1e5
MAX_EXPONENT = 1.1
MAX_PEAK_GROWTH = 2.0
LINK_TARGET_S = 5.0


def nvprof_text(rows: int) -> str:
    lines = (SAMPLES / "nvprof-gpu-trace-multirun.csv").read_text().splitlines()
    body = [line for line in lines[5:11] if "memset" not in line]
    return "\n".join(lines[:5] + (body * (rows // len(body) + 1))[:rows]) + "\n"


#: kernel names of the distinct-values trace
_KERNELS = ("saxpy2(int, float, float const *, float*, int)",
            "bpnn_layerforward(float*, float*, float*, float*, int, int)",
            "calculate_temp(int, float*, float*, float*, int, int, int, int, float, float, "
            "float, float, float, float)")


def nvprof_distinct_text(rows: int) -> str:
    """An nvprof GPU trace (the sample's header and units) whose numbers all differ from row
    to row: start, duration, grid, block, registers, shared memory, size and throughput (the
    readers' and writers' memories of repeated texts never hit); two kernels in five rows,
    copies of three directions and memory kinds between them."""
    import random
    rng = random.Random(rows)
    lines = (SAMPLES / "nvprof-gpu-trace-multirun.csv").read_text().splitlines()[:5]
    copies = (("HtoD", "Pageable", "Device"), ("DtoH", "Device", "Pinned"),
              ("DtoD", "Device", "Device"))
    start = 0.0
    for i in range(rows):
        start += rng.uniform(1, 100)
        if i % 5 < 2:
            lines.append(f"{start:.6f},{rng.uniform(0.5, 5000):.6f},{rng.randint(1, 65535)},"
                         f"{rng.randint(1, 64)},1,{rng.choice((64, 128, 256, 512, 1024))},1,1,"
                         f"{rng.randint(8, 255)},{rng.randint(0, 48):.6f},0.000000,,,,,"
                         f'GeForce GTX 970 (0),1,7,"{rng.choice(_KERNELS)}",{i}')
        else:
            size = rng.randint(4, 2 ** 28)
            duration = rng.uniform(1.5, 50000)
            rate = size / (duration * 1e-6) / 2 ** 30
            name, src, dst = rng.choice(copies)
            lines.append(f"{start:.6f},{duration:.6f},,,,,,,,,,{size / 1024:.6f},{rate:.6f},"
                         f"{src},{dst},GeForce GTX 970 (0),1,7,[CUDA memcpy {name}],{i}")
    return "\n".join(lines) + "\n"


#: the details page's metrics of one launch: (section, name, unit, value maker); the launch
#: cells (grid, block, registers, shared memory) come from the launch's own numbers
_NCU_METRICS = (
    ("GPU Speed Of Light Throughput", "Duration", "usecond",
     lambda r, l: f"{r.uniform(1, 5000):.2f}"),
    ("Launch Statistics", "Block Size", "", lambda r, l: f"{l['block']:,}"),
    ("Launch Statistics", "Grid Size", "", lambda r, l: f"{l['grid']:,}"),
    ("Launch Statistics", "Registers Per Thread", "register/thread", lambda r, l: str(l["regs"])),
    ("Launch Statistics", "Static Shared Memory Per Block", "Kbyte/block",
     lambda r, l: f"{l['smem'] / 1000:.2f}"),
    ("Launch Statistics", "Dynamic Shared Memory Per Block", "byte/block", lambda r, l: "0"),
    ("Instruction Statistics", "Executed Instructions", "inst",
     lambda r, l: f"{r.randint(1000, 10 ** 9):,}"),
    ("Command line profiler metrics", "dram__bytes_read.sum", "Mbyte",
     lambda r, l: f"{r.uniform(0.01, 900):.6f}"),
    ("Command line profiler metrics", "dram__bytes_write.sum", "Kbyte",
     lambda r, l: f"{r.uniform(0.01, 900):.6f}"),
    ("Command line profiler metrics", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
     "", lambda r, l: str(r.randint(0, 10 ** 6))),
    ("Occupancy", "Achieved Occupancy", "%", lambda r, l: f"{r.uniform(5, 100):.2f}"),
    ("Command line profiler metrics", "sm__cycles_elapsed.avg.per_second", "cycle/nsecond",
     lambda r, l: f"{r.uniform(0.5, 2.1):.2f}"),
)


def ncu_distinct_text(rows: int) -> str:
    """An Nsight Compute details page (``ncu --csv --page details``) of ``rows`` metric rows,
    twelve per launch (the last launch cut short), whose numbers all differ from launch to
    launch: ID, grid, block, registers, shared memory and every metric value."""
    import random
    rng = random.Random(rows)
    lines = ['==PROF== Connected to process 5188 (/home/user/app)',
             '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
             '"Block Size","Grid Size","Device","CC","Section Name","Metric Name",'
             '"Metric Unit","Metric Value"']
    launch: dict = {}
    for i in range(rows):
        k = i % len(_NCU_METRICS)
        if k == 0:
            block = rng.choice((64, 128, 256, 512, 1024))
            launch = {"id": i // len(_NCU_METRICS) + 1, "name": rng.choice(_KERNELS),
                      "block": block, "grid": rng.randint(1, 2 ** 20),
                      "regs": rng.randint(8, 255), "smem": rng.randint(0, 48_000)}
            cells = (f'"{launch["id"]}","5188","app","127.0.0.1","{launch["name"]}","1","7",'
                     f'"({block}, 1, 1)","({launch["grid"]}, 1, 1)",'
                     f'"NVIDIA GeForce RTX 2080 Ti","7.5"')
        section, name, unit, value = _NCU_METRICS[k]
        lines.append(f'{cells},"{section}","{name}","{unit}","{value(rng, launch)}"')
    return "\n".join(lines) + "\n"


def timings_text(rows: int) -> str:
    lines = (SAMPLES / "timings.csv").read_text().splitlines()
    body = lines[2:]
    return "\n".join(lines[1:2] + (body * (rows // len(body) + 1))[:rows]) + "\n"


def timings_distinct_text(rows: int) -> str:
    """A timings CSV (the sample's columns) whose numbers all differ from row to row: time,
    size, grid, block, registers and the energy metric; kernels (two in five rows) of three
    names, copies of three directions and memory kinds, in units that vary per row."""
    import random
    rng = random.Random(rows)
    lines = [(SAMPLES / "timings.csv").read_text().splitlines()[1]]
    copies = (("htod", "pageable"), ("dtoh", "pinned"), ("dtod", "device"))
    for i in range(rows):
        if i % 5 < 2:
            name = ("saxpy2", "bpnn_layerforward", "calculate_temp")[i % 3]
            lines.append(f"kernel,{name},,,,{rng.randint(1, 65535)},"
                         f"{rng.choice((64, 128, 256, 512, 1024))},{rng.uniform(0.5, 5000):.6g},"
                         f"{rng.choice(('us', 'ms'))},GeForce GTX 970,,{rng.randint(8, 255)},"
                         f"{rng.uniform(1e-5, 1):.6g}")
        else:
            direction, memory = rng.choice(copies)
            unit = rng.choice(("B", "KiB", "MiB", "kB"))
            size = rng.uniform(1, 2 ** 20) if unit != "B" else rng.randint(4, 2 ** 28)
            lines.append(f"transfer,{direction} copy,{direction},{size:.9g},{unit},,,"
                         f"{rng.uniform(1.5, 50000):.6g},us,GeForce GTX 970,{memory},,")
    return "\n".join(lines) + "\n"


def nsys_distinct_file(folder: Path, rows: int) -> Path:
    """An Nsight Systems export whose numbers all differ from row to row: start, duration,
    grid, block, registers, shared memory, copy size; kernels and copies alternating."""
    import random
    from nsys_exports import SAXPY, copy, kernel, write_export
    rng = random.Random(rows)
    kernels, copies, start = [], [], 0
    for i in range(rows):
        start += rng.randint(1000, 100_000)
        end = start + rng.randint(500, 5_000_000)
        if i % 2 == 0:
            kernels.append(kernel(start, end, SAXPY, grid=(rng.randint(1, 65535),
                                                            rng.randint(1, 64), 1),
                                  block=(rng.choice((64, 128, 256, 512, 1024)), 1, 1),
                                  regs=rng.randint(8, 255), static=rng.randint(0, 48) * 1024,
                                  dynamic=rng.randint(0, 4) * 256, stream=rng.randint(7, 14)))
        else:
            copies.append(copy(start, end, rng.randint(4, 2 ** 28), rng.choice((1, 2, 8)),
                               stream=rng.randint(7, 14)))
    path = folder / f"report-distinct-{rows}.sqlite"
    write_export(path, kernels=kernels, copies=copies)
    return path


def nsys_file(folder: Path, rows: int) -> Path:
    from nsys_exports import SAXPY, copy, kernel, write_export
    kernels = [kernel(1000 * i, 1000 * i + 700, SAXPY) for i in range(0, rows, 2)]
    copies = [copy(1000 * i, 1000 * i + 400, 4096 + i, 1) for i in range(1, rows, 2)]
    path = folder / f"report-{rows}.sqlite"
    write_export(path, kernels=kernels, copies=copies)
    return path


def cpu(fn, rounds: int):
    best, out = math.inf, None
    for _ in range(rounds):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _streamed_csv(text: str, source: str) -> int:
    from gpumodeler.cli.measure_stream import CHUNK_BYTES as step   # (as the command reads)
    from gpumodeler.core.measurements.importer import stream_lines, text_lines
    chunks = (text[k:k + step] for k in range(0, len(text), step))
    _result, records = stream_lines(text_lines(chunks), source)
    return sum(1 for _ in records)


def _streamed_nsys(path: Path) -> int:
    from gpumodeler.db.nsys_export import streamed_export
    with streamed_export(path) as (records, _summary):
        return sum(1 for _ in records)


def import_rows(sizes, folder: Path, rounds: int) -> bool:
    ok = True
    formats = {
        "nvprof": lambda n: (lambda text=nvprof_text(n): _streamed_csv(text, "trace.csv")),
        "nvprof distinct": lambda n: (lambda text=nvprof_distinct_text(n):
                                      _streamed_csv(text, "trace.csv")),
        "timings": lambda n: (lambda text=timings_text(n): _streamed_csv(text, "timings.csv")),
        "ncu": lambda n: (lambda text=ncu_distinct_text(n): _streamed_csv(text, "ncu.csv")),
        "timings distinct": lambda n: (lambda text=timings_distinct_text(n):
                                       _streamed_csv(text, "timings.csv")),
        "nsys": lambda n: (lambda path=nsys_file(folder, n): _streamed_nsys(path)),
        "nsys distinct": lambda n: (lambda path=nsys_distinct_file(folder, n):
                                    _streamed_nsys(path)),
    }
    for name, make in formats.items():
        times, peaks = [], []
        for n in sizes:
            fn = make(n)
            t, count = cpu(fn, rounds)
            times.append(t)
            peaks.append(peak_bytes(fn))
            assert count == (-(-n // len(_NCU_METRICS)) if name == "ncu" else n), (name, n, count)
        k = fit_exponent(sizes, times)
        rate = sizes[-1] / times[-1]
        growth = peaks[-1] / peaks[-2]
        verdict = []
        if sizes[-1] == 100_000 and rate < ROWS_PER_S:
            verdict.append(f"rate below {ROWS_PER_S:.0e} rows/s")
        if k > MAX_EXPONENT:
            verdict.append(f"exponent above {MAX_EXPONENT}")
        if growth > MAX_PEAK_GROWTH:
            verdict.append(f"memory not flat (x{growth:.3g} from {sizes[-2]} to {sizes[-1]} rows)")
        ok = ok and not verdict
        cells = ", ".join(f"{n}: {t:.3g} s, peak {p / 2**20:.3g} MiB"
                          for n, t, p in zip(sizes, times, peaks))
        print(f"import {name} (streamed): {cells}; {rate:,.0f} rows/s at {sizes[-1]}; "
              f"exponent {k:.2f} -> {'; '.join(verdict) or 'ok'}", flush=True)
    return ok


#: the child: the command, then its own peak resident memory (KiB) as the last stderr line
#: (VmHWM of /proc/self/status: ru_maxrss would carry the parent's peak across fork and exec)
CHILD = ("import sys\n"
         "from gpumodeler.cli.main import main\n"
         "code = main(sys.argv[1:])\n"
         "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
         "sys.stderr.write('\\nMAXRSS %s\\n' % hwm[0])\n"
         "sys.exit(code)\n")


def child_run(argv) -> tuple:
    """(CPU seconds, peak resident MiB) of ``gpumodeler`` run with ``argv`` in a process of
    its own, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], check=True, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu_s, int(done.stderr.strip().splitlines()[-1].split()[1]) / 1024


#: the files of the command's rows
NAMES = ("nvprof", "nvprof distinct", "timings", "timings distinct", "ncu", "nsys",
         "nsys distinct")


def command_rows(sizes, folder: Path) -> bool:
    """``measure import`` as a command, text and --json, per format: CPU time, rows/s at
    each size (interpreter start-up included), the exponent of time from the smaller to the
    larger size, and peak resident memory at each size (flat: the command streams)."""
    ok = True
    paths = {}
    for n in sizes:
        for name, make in (("nvprof", nvprof_text), ("nvprof distinct", nvprof_distinct_text),
                           ("timings", timings_text),
                           ("timings distinct", timings_distinct_text),
                           ("ncu", ncu_distinct_text)):
            path = folder / f"{name.replace(' ', '-')}-{n}.csv"
            path.write_text(make(n))
            paths[name, n] = path
        paths["nsys", n] = folder / f"report-{n}.sqlite"
        if not paths["nsys", n].exists():
            nsys_file(folder, n)
        paths["nsys distinct", n] = folder / f"report-distinct-{n}.sqlite"
        if not paths["nsys distinct", n].exists():
            nsys_distinct_file(folder, n)
    for name in NAMES:
        for extra in ([], ["--json"]):
            runs = [child_run(["measure", "import", str(paths[name, n]), *extra]) for n in sizes]
            rates = [n / t for n, (t, _m) in zip(sizes, runs)]
            k = fit_exponent(sizes, [t for t, _m in runs])
            growth = runs[-1][1] / runs[-2][1]
            verdict = []
            if min(rates) < ROWS_PER_S and sizes[-1] >= 100_000:
                verdict.append(f"below {ROWS_PER_S:.0e} rows/s")
            if growth > MAX_PEAK_GROWTH:
                verdict.append(f"memory not flat (x{growth:.3g})")
            ok = ok and not verdict
            cells = ", ".join(f"{n}: {t:.3g} s, {r:,.0f} rows/s, peak RSS {m:.0f} MiB"
                              for n, (t, m), r in zip(sizes, runs, rates))
            print(f"measure import {name} {' '.join(extra) or '(text)'}: {cells}; exponent "
                  f"{k:.2f}; peak x{growth:.2f} -> {'; '.join(verdict) or 'ok'}", flush=True)
    for n in sizes:       # (the 10^6-row files are 66 to 240 MB)
        for name in NAMES:
            paths[name, n].unlink()
    return ok


def link_rows(sizes, folder: Path, rounds: int) -> bool:
    from gpumodeler.cli.main import main
    rng = np.random.default_rng(1)
    times = []
    for n in sizes:
        sizes_b = np.unique(np.round(np.exp(rng.uniform(np.log(4), np.log(2**30), 3 * n))))
        sizes_b = rng.permutation(sizes_b)[:n]
        t = (6e-6 + sizes_b / np.where(sizes_b < 2**20, 10e9, 6e9)) * (
            1 + 0.02 * rng.standard_normal(sizes_b.size))
        path = folder / f"copies-{n}.csv"
        path.write_text("kind,direction,size,size_unit,time,unit,memory_kind\n" + "".join(
            f"transfer,htod,{int(s)},B,{x:.9g},s,pinned\n" for s, x in zip(sizes_b, t)))

        def run():
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                assert main(["calibrate", "link", "--measurements", str(path), "--json"]) == 0
        times.append(cpu(run, rounds)[0])
    k = fit_exponent(sizes, times)
    missed = sizes[-1] == 100_000 and times[-1] >= LINK_TARGET_S
    cells = ", ".join(f"{n}: {t:.3g} s" for n, t in zip(sizes, times))
    print(f"calibrate link, copies of distinct sizes (import, fit, nested validation, JSON): "
          f"{cells} CPU; exponent {k:.2f}; 10^5 copies target < {LINK_TARGET_S} s -> "
          f"{'missed' if missed else 'ok'}", flush=True)
    return not missed


def main() -> int:
    quick = "--quick" in sys.argv
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ok = import_rows(sizes, folder, rounds=2)
        ok = command_rows([10 * n for n in sizes[-2:]], folder) and ok
        ok = link_rows(sizes, folder, rounds=1) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
