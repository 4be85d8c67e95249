"""Kernel λ per (GPU, kernel) from measured launches, with leave-one-out over sizes and a
plausibility check (Gajger eq. 4.1 and 4.4, Gajger 2017 §4.2 and §5.3).

λ scales the predicted kernel time, ``t = t_est(λ = 1) / λ`` (eq. 4.1); from one launch
λ = t_est / t_meas (eq. 4.4), from several the relative least-squares fit of
:func:`~gpumodeler.core.transfers.calibration.fit_kernel_lambda`. Gajger found λ ≈ 0.7 on
his two testbeds (Table 6.2); Amarís' λ tables (Amarís 2018) stay within about 0.3–1.5 for
kernels the model describes. Outside that band the model is usually missing something, and
the fit says what it usually is rather than hiding it in λ.

Leave-one-out over sizes: launches are grouped by their size (threads launched); each
group is predicted with λ fitted to the others. ``loo_mape``/``loo_median_ape`` (percent)
tell how well one λ carries across sizes — the point of calibrating once and predicting
other sizes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.errors import InvalidParameter

from .calibration import LambdaFit, fit_kernel_lambda

PLAUSIBLE_LAMBDA = (0.3, 1.5)


@dataclass(frozen=True)
class KernelLambdaFit:
    fit: LambdaFit
    sizes: np.ndarray
    loo_relative_errors: np.ndarray | None
    loo_mape: float | None
    loo_median_ape: float | None
    warning: str | None
    notes: tuple = ()

    @property
    def lam(self) -> float:
        return self.fit.lam


def lambda_warning(lam: float, relative_residuals=None, sizes=None,
                   band=PLAUSIBLE_LAMBDA) -> str | None:
    """A message when λ is outside ``band``, naming the usual causes; None inside."""
    lo, hi = band
    if lo <= lam <= hi:
        return None
    trend = ""
    if relative_residuals is not None and sizes is not None and np.unique(sizes).size >= 3:
        # Predictions too slow for small launches and fine for large ones: a fixed cost.
        r = np.corrcoef(np.log(sizes), relative_residuals)[0, 1]
        if np.isfinite(r) and abs(r) > 0.7:
            trend = (" The residuals change with the launch size (correlation "
                     f"{r:+.2f}), which points at a fixed per-launch cost or an under-filled "
                     "GPU rather than a constant factor.")
    if lam < lo:
        return (f"λ = {lam:.3g} is below {lo}: the kernel ran {1 / lam:.2g}× slower than the "
                "model's λ = 1 prediction. Usual causes: launch overhead (a few µs per launch "
                "dominates short kernels), an under-filled GPU (fewer blocks than the SMs can "
                "hold, so neither bound is reached), memory traffic the per-warp counts miss "
                "(uncoalesced accesses, bank conflicts, DRAM instead of cache), or inputs "
                "from another architecture." + trend)
    return (f"λ = {lam:.3g} is above {hi}: the kernel ran {lam:.2g}× faster than the model's "
            "bound. Usual causes: caches (L1/L2 hits where the counts assume DRAM traffic), "
            "per-warp counts higher than what ran (the compiler removed or merged "
            "instructions, a loop count set too high), or a device value too low (clock, "
            "SMs, bandwidth)." + trend)


def fit_kernel_lambda_loo(estimated_at_lambda_1_s, measured_s, sizes, *,
                          weighting: str = "relative", band=PLAUSIBLE_LAMBDA) -> KernelLambdaFit:
    """λ (eq. 4.4, least squares), leave-one-out over ``sizes`` and the plausibility
    warning. ``sizes`` labels each launch (e.g. threads launched)."""
    fit = fit_kernel_lambda(estimated_at_lambda_1_s, measured_s, weighting)
    s = np.atleast_1d(np.asarray(sizes, dtype=float))
    if s.shape != fit.measured_s.shape:
        raise InvalidParameter(f"give one size per measurement ({s.size} vs {fit.measured_s.size})")
    notes = []
    distinct = np.unique(s)
    if distinct.size < 2:
        loo = mape = median = None
        notes.append("all launches have one size: leave-one-out over sizes needs two or more")
    else:
        est = fit.predicted_s * fit.lam            # the λ = 1 estimates
        loo = np.empty_like(fit.measured_s)
        for v in distinct:
            out = s == v
            lam = fit_kernel_lambda(est[~out], fit.measured_s[~out], weighting).lam
            loo[out] = (est[out] / lam - fit.measured_s[out]) / fit.measured_s[out]
        mape = float(np.mean(np.abs(loo)) * 100.0)
        median = float(np.median(np.abs(loo)) * 100.0)
    return KernelLambdaFit(fit, s, loo, mape, median,
                           lambda_warning(fit.lam, fit.relative_residuals, s, band), tuple(notes))
