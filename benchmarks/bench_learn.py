"""Learned-predictor speed: ``learn evaluate`` of all four methods (lr, svr, rf, hybrid),
leave-one-GPU-out, on 3 240 synthetic rows (9 GPUs × 15 kernels × 24 sizes, Table 4.1
metrics, an analytical time and the analytical quantities), as the CLI runs it after reading
the measurements: 9 held-out GPUs, each method fitted on the other 2 880 rows. The random
forest (50 trees × 3 candidates, Amarís 2018 §4.1) and the hybrid's inner cross-validation
are the costly parts; each is also timed on its own.

Target: all four under 30 s of CPU time. Run: python benchmarks/bench_learn.py; exit status 1 when the
target is missed.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.learn.dataset import Row
from gpumodeler.core.learn.evaluate import evaluate

TARGET_S = 30.0


def synthetic_rows(gpus: int = 9, kernels: int = 15, sizes: int = 24, seed: int = 7) -> list:
    """Rows whose time is a noisy power law of the metrics, per-kernel and per-GPU factors on
    an analytical time (so every method has something to learn)."""
    rng = np.random.default_rng(seed)
    specs = [GPUSpec(name=f"GPU {i}", compute_capability=str(rng.choice(["3.5", "5.2", "6.1", "7.0"])),
                     sms=int(rng.integers(8, 80)), sm_clock_hz=float(rng.uniform(0.8e9, 1.9e9)),
                     cuda_cores_per_sm=int(rng.choice([64, 128, 192])),
                     memory_bandwidth_bytes_per_s=float(rng.uniform(100e9, 900e9)),
                     l2_bytes=float(rng.choice([1, 2, 4, 6]) * 2 ** 20)) for i in range(gpus)]
    kernel_factor = rng.uniform(0.5, 2.0, kernels)
    out = []
    for g, spec in enumerate(specs):
        gpu_factor = rng.uniform(0.7, 1.4)
        for k in range(kernels):
            for e in range(sizes):
                block = int(rng.choice([64, 128, 256, 512]))
                n = int(2 ** (10 + e * 0.75))
                grid = max(1, n // block)
                n = grid * block
                metrics = {"gld_transactions": float(n * rng.uniform(0.05, 2)),
                           "gst_transactions": float(n * rng.uniform(0.05, 1)),
                           "shared_load_transactions": float(n * rng.uniform(0, 3)),
                           "shared_store_transactions": float(n * rng.uniform(0, 1)),
                           "flop_count_sp": float(n * rng.uniform(1, 100)),
                           "achieved_occupancy": float(rng.uniform(0.2, 1.0))}
                analytical = 1e-6 * (1 + n / spec.sms / 2 ** 12) * kernel_factor[k]
                time_s = analytical * gpu_factor * float(rng.lognormal(0, 0.1))
                quantities = {"occupancy_warps_per_sm": float(rng.uniform(8, 64)),
                              "warps": n / 32.0, "issued_instructions": float(rng.uniform(10, 1e3)),
                              "gmem_bytes": float(n * rng.uniform(4, 16))}
                out.append(Row(f"k{k}", spec, (grid,), (block,), time_s, metrics, (), float(n),
                               {"gajger": analytical, "roofline": analytical / 2}, {}, quantities))
    return out


def timed(rows, methods) -> tuple[float, dict]:
    """(CPU seconds, result): CPU time, since other work on a shared machine stretches the
    wall clock but not this process' own time."""
    t0 = time.process_time()
    result = evaluate(rows, methods, "gpu", models=["gajger", "roofline"])
    return time.process_time() - t0, result


def main() -> int:
    rows = synthetic_rows()
    print(f"{len(rows)} rows, {len({r.gpu.name for r in rows})} GPUs, "
          f"{len({r.kernel for r in rows})} kernels; leave-one-GPU-out")
    for method in ("lr", "svr", "rf", "hybrid"):
        seconds, result = timed(rows, [method])
        summary = {s["method"]: s for s in result["summary"]}[method]
        print(f"  {method:7s} {seconds:7.2f} s CPU  (MAPE {summary['mape_percent']:.1f} %)")
    seconds, _ = timed(rows, ["lr", "svr", "rf", "hybrid"])
    ok = seconds < TARGET_S
    print(f"  all four {seconds:6.2f} s CPU (target < {TARGET_S:.0f} s){'' if ok else '  MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
