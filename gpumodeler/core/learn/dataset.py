"""Measured kernel runs as learning rows: one row per (kernel, GPU, launch configuration),
with its measured time, its profiler metrics and the GPU's parameters, and the analytical
models' predictions of it.

Rows come from the records every importer produces (nvprof traces and metric tables,
Nsight Compute, Nsight Systems, timings CSV with metric columns; docs/measurements.md).
Records of one kernel on one GPU with one grid and block are one row: the time is the
median of their durations, each metric the mean of the values given (Amarís 2018 §4.2
averages ten runs of each trace). Metric-only records (nvprof metric tables carry no launch
configuration) join the row of the same kernel and GPU when that kernel ran with one
configuration there, else the configuration timed in the same file or in a file whose
name carries the same numbers (:func:`attach`), and are left out otherwise.

**The analytical models' prediction of a row never uses a time measured on that row's
GPU.** Counts and the achieved occupancy come from the row's own profile (as the thesis'
features do), but the latency bound, which no profiler reports, is estimated by inverting
Gajger 2017 eq. 4.1 and 4.3 on the *other* GPUs' runs of the same kernel
(:func:`gpumodeler.core.measurements.profiled.estimate_latency_bound`, as
``predict --profile`` does): the median over the other GPUs' runs with the same grid and
block, else over their runs of any configuration; only a kernel measured on one GPU falls
back to its other configurations on that GPU. Without any of them the row has no
analytical prediction (``n/a``).
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.core.measurements.profiled import (clean_gpu_name, derive, kernel_inputs,
                                                   model_counts, profile_kernel,
                                                   profiled_occupancy)
from gpumodeler.core.models.registry import MODELS, evaluate_all
from gpumodeler.core.models.result import ModelInputs, ModelResult

#: metric names read as the problem size (Amarís 2018 Table 4.1 ``Input_Size``), first found
SIZE_METRICS = ("input_size", "Input_Size", "size", "data_size", "n")


def short_name(name: str) -> str:
    """A kernel's name without return type, template arguments and parameter list."""
    n = re.sub(r"^(void|__global__)\s+", "", (name or "").strip())
    return n.split("(")[0].split("<")[0].strip() or n


@dataclass(frozen=True)
class Row:
    """One measured kernel configuration on one GPU."""

    kernel: str  # short name
    gpu: GPUSpec
    grid: tuple
    block: tuple
    time_s: float
    metrics: dict  # metric name -> mean value
    records: tuple  # the measurement records it came from
    size: float  # Amarís' Input_Size: a size metric, else the threads launched
    analytical: dict = field(default_factory=dict)  # model name -> time_s (models that ran)
    analytical_errors: dict = field(default_factory=dict)  # model name -> why it did not run
    quantities: dict = field(default_factory=dict)  # the models' inputs: occupancy, counts, warps

    @property
    def gpu_name(self) -> str:
        return self.gpu.name

    @property
    def threads(self) -> int:
        return math.prod(self.grid) * math.prod(self.block)


def gpu_names(records) -> list[str]:
    """The distinct GPU names (cleaned) of the kernel records, in order of appearance."""
    return list(dict.fromkeys(clean_gpu_name(r.gpu) for r in records if r.kind == "kernel"))


def build_rows(records, gpus: dict) -> tuple[list[Row], list[str]]:
    """(rows, notes) from measurement records; ``gpus`` maps each cleaned GPU name of the
    records to its :class:`GPUSpec` (the caller resolves them in the device database)."""
    groups: dict = {}
    for r in records:
        if r.kind != "kernel":
            continue
        key = (short_name(r.name), clean_gpu_name(r.gpu))
        groups.setdefault(key, []).append(r)
    rows, notes = [], []
    for (kernel, gpu_name), recs in groups.items():
        if gpu_name not in gpus:
            raise InvalidParameter(f"GPU {gpu_name or '(unnamed)'!r} of kernel {kernel!r} has no "
                                   f"device parameters; give a GPU of the device database")
        configs: dict = {}
        loose = []
        for r in recs:
            if r.grid and r.block:
                configs.setdefault((tuple(r.grid), tuple(r.block)), []).append(r)
            else:
                loose.append(r)
        attached, left = attach(loose, configs)
        if left:
            notes.append(f"{kernel} on {gpu_name}: {left} metric-only record(s) left out (the "
                         f"kernel ran with {len(configs)} configurations and neither the file nor "
                         f"the numbers in its name tell which)")
        for (grid, block), crecs in configs.items():
            times = [r.time_s for r in crecs if r.time_s is not None]
            if not times:
                notes.append(f"{kernel} on {gpu_name}, grid {grid} block {block}: no duration, left out")
                continue
            members = crecs + attached[(grid, block)]
            metrics = _mean_metrics(members)
            size = next((metrics[m] for m in SIZE_METRICS if m in metrics),
                        float(math.prod(grid) * math.prod(block)))
            rows.append(Row(kernel, gpus[gpu_name], grid, block, statistics.median(times),
                            metrics, tuple(members), float(size)))
    if not rows:
        raise InvalidParameter("the measurements hold no kernel run with a duration and a "
                               "launch configuration (grid and block) to learn from")
    return rows, notes


def _numbers(source: str) -> tuple:
    stem = str(source).rsplit(".", 1)[0]
    return tuple(re.findall(r"\d+", stem))


def attach(loose, configs) -> tuple[dict, int]:
    """({configuration: metric-only records}, records left out): a metric-only record joins
    the one configuration of its kernel and GPU, else the configuration timed in the same
    file, else the one timed in a file whose name has the same numbers (``vadd-4096-trace.csv``
    and ``vadd-4096-metrics.csv``: a profile's trace and metrics of one run)."""
    out: dict = {c: [] for c in configs}
    left = 0
    for m in loose:
        if len(configs) == 1:
            out[next(iter(configs))].append(m)
            continue
        match = [c for c, recs in configs.items() if any(r.source == m.source for r in recs)]
        if len(match) != 1:
            nums = _numbers(m.source)
            match = [c for c, recs in configs.items()
                     if nums and any(_numbers(r.source) == nums for r in recs)]
        if len(match) == 1:
            out[match[0]].append(m)
        else:
            left += 1
    return out, left


def _mean_metrics(records) -> dict:
    sums: dict = {}
    for r in records:
        for name, (value, _unit) in r.metrics.items():
            v = float(value)
            if math.isfinite(v):
                sums.setdefault(name, []).append(v)
    return {n: sum(v) / len(v) for n, v in sums.items()}


# -- the analytical models on the rows -------------------------------------------------------

def _profile(row: Row):
    return profile_kernel(list(row.records), row.records[0].name)


def _latency_estimate(row: Row):
    """The latency bound (cycles per warp) inverted from this row's own time, or None."""
    try:
        return derive(_profile(row), row.gpu).inputs.latency_bound
    except (ModelError, ArithmeticError):
        return None


def with_analytical(rows: list[Row], models=None) -> list[Row]:
    """The rows with every registered model's prediction (``analytical``) or the reason it
    has none (``analytical_errors``); latency bounds from other GPUs (module docstring)."""
    names = list(models or MODELS)
    own = [_latency_estimate(r) for r in rows]
    by_kernel: dict = {}
    for j, r in enumerate(rows):
        if own[j] is not None:
            by_kernel.setdefault(r.kernel, []).append(j)
    out = []
    for i, row in enumerate(rows):
        same = by_kernel.get(row.kernel, [])

        def median_of(pick):
            vals = [own[j] for j in same if j != i and pick(rows[j])]
            return statistics.median(vals) if vals else None
        other_gpu = lambda o: o.gpu.name != row.gpu.name  # noqa: E731
        latency = median_of(lambda o: other_gpu(o) and (o.grid, o.block) == (row.grid, row.block))
        if latency is None:
            latency = median_of(other_gpu)
        if latency is None:
            latency = median_of(lambda o: True)
        results, errors, quantities = {}, {}, {}
        try:
            if latency is None:
                raise InvalidParameter(f"kernel {row.kernel!r} has no other measured run to "
                                       f"estimate its latency bound from")
            pk = _profile(row)
            counts, _notes = model_counts(pk)
            occ, _note = profiled_occupancy(pk, row.gpu)
            quantities = {"occupancy_warps_per_sm": float(occ), "warps": float(pk.warps_launched),
                          "latency_bound_cycles": float(latency),
                          **{k: float(v) for k, v in counts.items()
                             if isinstance(v, (int, float))}}  # (a pipe mix is a dict or None)
            grid = row.grid[0] if len(row.grid) == 1 else row.grid
            block = row.block[0] if len(row.block) == 1 else row.block
            inputs = ModelInputs(gpu=row.gpu, kernel=kernel_inputs(counts, latency),
                                 grid_size=grid, block_size=block, occupancy=float(occ))
            for name, res in evaluate_all(inputs, names).items():
                if isinstance(res, ModelResult) and math.isfinite(res.time_s) and res.time_s > 0:
                    results[name] = float(res.time_s)
                else:
                    errors[name] = str(res)
        except (ModelError, ArithmeticError) as exc:
            errors = {n: str(exc) for n in names}
        out.append(Row(row.kernel, row.gpu, row.grid, row.block, row.time_s, row.metrics,
                       row.records, row.size, results, errors, quantities))
    return out
