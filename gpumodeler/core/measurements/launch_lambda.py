"""λ of a project launch's kernel from measured launches: each measured launch is predicted
at λ = 1 by :func:`gpumodeler.core.pipeline.evaluate_launch` with its own grid, block,
registers and shared memory (the data size N of a measured launch is its thread count,
grid × block), then λ is fitted by eq. 4.4 (least squares) with leave-one-out over launch
sizes (:mod:`gpumodeler.core.transfers.lambda_fit`).

Shared by ``gpumodeler calibrate kernel`` (cli/calibrate_kernel.py) and the GUI's
File › Import Measurements… dialog, so both fit the same way.
"""
from __future__ import annotations

import math
from dataclasses import replace

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.transfers.lambda_fit import fit_kernel_lambda_loo
from gpumodeler.core.transfers.selection import where


def launch_estimator(project, launch_id: str, *, gpu_lookup, link_lookup, table_lookup=None,
                     occupancy: float | None = None, calibration_lookup=None):
    """(estimate(record) -> kernel time at λ = 1 in s, list of records' places that had no
    registers per thread and took the launch's). ``project`` is restored after each call."""
    from gpumodeler.core.pipeline import evaluate_launch
    base = project.launches[launch_id]
    missing_registers: list[str] = []

    def estimate(r) -> float:
        threads = math.prod(r.block)
        registers = r.registers_per_thread
        if registers is None and occupancy is None and base.occupancy_override is None:
            missing_registers.append(where(r))
            registers = base.registers
        project.launches[launch_id] = replace(
            base, grid_size=None, data_size=math.prod(r.grid) * threads, block_size=threads,
            registers=registers if registers is not None else base.registers,
            shared_mem=int(r.shared_mem_bytes or 0) if r.shared_mem_bytes is not None
            else base.shared_mem,
            occupancy_override=occupancy if occupancy is not None else base.occupancy_override,
            lam=1.0, transfers=())
        try:
            return float(evaluate_launch(project, launch_id, gpu_lookup, link_lookup,
                                         table_lookup=table_lookup,
                                         calibration_lookup=calibration_lookup).prediction.kernel.time_s)
        finally:
            project.launches[launch_id] = base
    return estimate, missing_registers


def fit_launches(launches, estimate, *, weighting: str = "relative"):
    """(KernelLambdaFit, estimates, measured, sizes, records) of the timed ``launches``;
    InvalidParameter naming the row of a launch without grid/block or a duration > 0."""
    estimates, measured, sizes, rows = [], [], [], []
    for r in launches:
        if not r.grid or not r.block:
            raise InvalidParameter(f"{where(r)}: the launch has no grid/block size; λ needs both")
        if not (isinstance(r.time_s, (int, float)) and math.isfinite(r.time_s) and r.time_s > 0):
            raise InvalidParameter(f"{where(r)}: time_s must be a duration > 0 s, got {r.time_s!r}")
        estimates.append(estimate(r))
        measured.append(float(r.time_s))
        sizes.append(float(math.prod(r.grid) * math.prod(r.block)))
        rows.append(r)
    fit = fit_kernel_lambda_loo(estimates, measured, sizes, weighting=weighting)
    return fit, estimates, measured, sizes, rows


def kernel_report(kernel: str, gpu_name: str, weighting: str, fitted, notes) -> dict:
    """The report of a kernel λ fit (what ``calibrate kernel --json`` prints and what the
    calibration store keeps): λ, errors, warning, notes and one residual per launch."""
    fit, estimates, measured, sizes, rows = fitted
    loo = fit.loo_relative_errors
    return {"kernel": kernel, "gpu": gpu_name, "launches": len(rows),
            "lambda": fit.lam, "parameters": {"lambda": fit.lam, "weighting": weighting},
            "mape_percent": fit.fit.mape_percent, "loo_mape": fit.loo_mape,
            "loo_median_ape": fit.loo_median_ape, "warning": fit.warning,
            "notes": list(notes) + list(fit.notes),
            "residuals": [{"threads": s, "grid": list(r.grid), "block": list(r.block),
                           "estimated_lambda_1_s": e, "measured_s": m, "predicted_s": float(p_),
                           "relative_residual": float(q),
                           "loo_relative_error": None if loo is None else float(loo[i])}
                          for i, (s, r, e, m, p_, q) in enumerate(zip(
                              sizes, rows, estimates, measured, fit.fit.predicted_s,
                              fit.fit.relative_residuals))]}
