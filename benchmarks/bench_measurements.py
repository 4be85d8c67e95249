"""Measurement import speed: a long nvprof GPU trace (100 000 copy and kernel rows in one
run, from the sample file's rows repeated) and a long timings CSV.

Run: python benchmarks/bench_measurements.py   (prints one line per measurement)
"""
from __future__ import annotations

import time
from pathlib import Path

from gpumodeler.core.measurements.importer import import_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "resources" / "measurements"


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    lines = (SAMPLES / "nvprof-gpu-trace-multirun.csv").read_text().splitlines()
    trace = "\n".join(lines[:5] + [l for l in lines[5:11] if "memset" not in l] * 20000) + "\n"
    t, r = best_of(lambda: import_text(trace, "big-trace.csv"))
    print(f"nvprof trace, {len(r.records)} rows: {t:.2f} s ({t / len(r.records) * 1e6:.1f} µs/row)")
    rows = (SAMPLES / "timings.csv").read_text().splitlines()
    timings = "\n".join(rows[1:2] + rows[2:] * 15000) + "\n"
    t, r = best_of(lambda: import_text(timings, "big-timings.csv"))
    print(f"timings CSV, {len(r.records)} rows: {t:.2f} s ({t / len(r.records) * 1e6:.1f} µs/row)")


if __name__ == "__main__":
    main()
