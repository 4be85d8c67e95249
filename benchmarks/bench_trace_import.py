"""Application import speed: Nsight Systems exports of 10^3, 10^4 and 10^5 kernels and copies
on three streams of one GPU (written with the tests' export writer), read and turned into an
application (``plan_import``: reading, the steps, the launches; the project file is not
written), without and with the CUDA API tables, each with the growth exponent of the time
in the number of records between the two largest sizes (1 is linear).
Reports only: the timeline's own speed is bench_timeline.py's.

Run: python benchmarks/bench_trace_import.py
"""
from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from nsys_exports import streamed_trace  # noqa: E402

from gpumodeler.core.project import Project  # noqa: E402
from gpumodeler.db.catalog import Catalog  # noqa: E402
from gpumodeler.service.trace_import import plan_import  # noqa: E402

SIZES = (1_000, 10_000, 100_000)


def trace(path: Path, n: int, api: bool = False) -> Path:
    """Three streams; each record waits for its stream and its engine, some a little
    longer (host delays); ``api``: with the runtime and synchronisation tables (a device
    synchronize every 1000 records), whose waits are then read."""
    return streamed_trace(path, n, seed=n, api=api)


def main() -> None:
    for api in (False, True):
        times = []
        with tempfile.TemporaryDirectory() as folder, \
                Catalog(user_db=Path(folder) / "user.db") as catalog:
            for n in SIZES:
                path = trace(Path(folder) / f"t{n}.sqlite", n, api)
                t0 = time.perf_counter()
                plan = plan_import(Project("bench"), path, catalog)
                t = time.perf_counter() - t0
                times.append(t)
                print(f"import {n} records{' with the CUDA API tables' if api else ''} -> "
                      f"{plan.steps} steps ({plan.host_gaps} host gaps, {plan.host_delays} "
                      f"host delays, {plan.host_waits} host waits): {t:.2f} s "
                      f"({t / n * 1e6:.1f} µs/record)")
        # (from the two largest sizes: the smallest one's time is mostly opening the catalog)
        exponent = math.log(times[-1] / times[-2]) / math.log(SIZES[-1] / SIZES[-2])
        print(f"growth exponent {exponent:.2f} from 10^4 to 10^5 (time ~ n^{exponent:.2f})")


if __name__ == "__main__":
    main()
