"""The range a sweep covers: a default for each variable around the launch's own value,
the values of a range, and the range a saved sweep's values were made from. Plain
functions (no Qt); the sweep panel shows a range in its fields.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.kernel.graph_items import guard_variables

# variables whose values are whole numbers
WHOLE = ("block_size", "data_size")


@dataclass(frozen=True)
class SweepRange:
    lo: float
    hi: float
    points: int
    log: bool = False


def default_range(variable: str, launch, graph, max_warps_per_sm: float = 64) -> SweepRange:
    """What to sweep ``variable`` over for ``launch`` (None: no launch) whose kernel is
    ``graph``: block sizes 32..1024, occupancy 1..the GPU's maximum, data sizes over four
    decades up to the launch's, a guard's share of the warps from 0 to 1, a loop variable
    from 0 to twice its value."""
    if variable == "block_size":
        return SweepRange(32, 1024, 32)
    if variable == "occupancy":
        return SweepRange(1, max_warps_per_sm, int(max_warps_per_sm))
    if variable == "data_size":
        n = launch.data_size if launch and launch.data_size else 1_000_000
        return SweepRange(max(1, n // 10_000), n, 60, log=True)
    if variable != "gpu" and launch is not None and graph is not None and \
            variable in guard_variables(graph):   # a share of the warps (not warps_per_block)
        return SweepRange(0, 1, 11)
    if variable != "gpu" and launch is not None:
        current = launch.variables.get(variable, graph.variables.get(variable) if graph else None)
        current = float(current) if current is not None else 50.0
        hi = max(2 * current, 1.0)
        return SweepRange(0, hi, int(min(hi + 1, 513)) if float(hi).is_integer() else 200)
    return SweepRange(1.0, 100.0, 50)


def range_values(variable: str, r: SweepRange) -> np.ndarray:
    """The values of range ``r`` (log: evenly spaced in the logarithm; whole-number variables
    rounded, without repeats). A log range needs lo and hi > 0."""
    values = np.geomspace(r.lo, r.hi, r.points) if r.log else np.linspace(r.lo, r.hi, r.points)
    if variable in WHOLE:
        values = np.unique(np.round(values))
    return values


def range_of(values) -> SweepRange:
    """The range that gives ``values`` (a saved sweep's): log when they grow by a constant
    ratio rather than a constant step."""
    v = np.asarray(values, dtype=float)
    ratios = v[1:] / v[:-1] if v.size > 2 and np.all(v > 0) else None
    log = bool(ratios is not None and np.allclose(ratios, ratios[0], rtol=1e-3)
               and not np.allclose(np.diff(v), np.diff(v)[0], rtol=1e-3))
    return SweepRange(float(v.min()), float(v.max()), int(v.size), log)
