"""Synthetic learning rows for the tests of gpumodeler.core.learn (no device database:
GPUSpec values are made up, and so are the metrics)."""
from __future__ import annotations

import numpy as np

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.learn.dataset import Row


def gpus(count: int, seed: int = 3) -> list[GPUSpec]:
    rng = np.random.default_rng(seed)
    return [GPUSpec(name=f"GPU {i}", compute_capability="5.2", sms=int(rng.integers(8, 80)),
                    sm_clock_hz=float(rng.uniform(0.8e9, 1.9e9)), cuda_cores_per_sm=int(rng.choice([64, 128, 192])),
                    memory_bandwidth_bytes_per_s=float(rng.uniform(100e9, 900e9)),
                    l2_bytes=float(rng.choice([1, 2, 4, 6]) * 2 ** 20)) for i in range(count)]


def rows(specs, kernels=("a", "b", "c"), sizes=range(12, 20), seed: int = 5, time=None,
         analytical=None) -> list[Row]:
    """One row per (GPU, kernel, size) with random Table 4.1 metrics; ``time(row)`` gives the
    measured time (default 1 s), ``analytical(row)`` the gajger time (default: none)."""
    rng = np.random.default_rng(seed)
    out = []
    for g in specs:
        for k in kernels:
            for e in sizes:
                block = int(rng.choice([64, 128, 256, 512]))
                grid = max(1, 2 ** e // block)
                n = grid * block
                metrics = {"gld_transactions": float(n * rng.uniform(0.05, 2)),
                           "gst_transactions": float(n * rng.uniform(0.05, 1)),
                           "shared_load_transactions": float(n * rng.uniform(0, 3)),
                           "shared_store_transactions": float(n * rng.uniform(0, 1)),
                           "flop_count_sp": float(n * rng.uniform(1, 100)),
                           "achieved_occupancy": float(rng.uniform(0.2, 1.0))}
                size = float(n * rng.uniform(0.5, 4))  # Input_Size, not the thread count
                row = Row(k, g, (grid,), (block,), 1.0, metrics, (), size)
                if analytical is not None:
                    row = Row(k, g, (grid,), (block,), 1.0, metrics, (), size,
                              {"gajger": analytical(row)}, {},
                              {"occupancy_warps_per_sm": 32.0, "warps": n / 32.0,
                               "issued_instructions": 10.0, "gmem_bytes": 128.0})
                if time is not None:
                    row = Row(row.kernel, g, row.grid, row.block, float(time(row)), metrics, (),
                              row.size, row.analytical, {}, row.quantities)
                out.append(row)
    return out
