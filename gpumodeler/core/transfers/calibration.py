"""Calibration of λ and of link parameters from measurements (Gajger eq. 4.4, 5.4–5.5).

Kernel λ. One measurement: λ = t_est / t_meas (eq. 4.4), with t_est the prediction at
λ = 1. Several (e.g. a data-size sweep): the model is t_i = e_i / λ, so with μ = 1/λ the
least-squares fit minimises Σ w_i (μ e_i − m_i)². We weight *relative* residuals by default
(w_i = 1/m_i²): measurements spanning orders of magnitude then count equally, which is how
Gajger reports accuracy (relative error). ``weighting='absolute'`` gives plain least squares.

Link. Measured (size, time) pairs of one direction fit T = t_s + n·k (eq. 4.8), effective
bandwidth 1/k and λ = (1/k) / nominal bandwidth (eq. 5.5). Weighted least squares, relative
by default: Gajger's sizes go from 4 B to 2 GB, and unweighted least squares would let the
largest transfers decide t_s alone (it can come out negative). A negative t_s is refitted
with t_s = 0 and reported in ``notes``.

Each result carries residuals (model − measured, s), relative residuals and the mean
absolute percentage error (MAPE, %).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.errors import InvalidParameter


def _positive_array(name, values):
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.size == 0:
        raise InvalidParameter(f"{name}: give at least one value")
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise InvalidParameter(f"{name} must all be numbers > 0, got {values}")
    return arr


@dataclass(frozen=True)
class LambdaFit:
    lam: float
    predicted_s: np.ndarray
    measured_s: np.ndarray
    residuals_s: np.ndarray
    relative_residuals: np.ndarray
    mape_percent: float


@dataclass(frozen=True)
class LinkFit:
    startup_s: float
    effective_bandwidth_bytes_per_s: float
    lam: float | None
    predicted_s: np.ndarray
    measured_s: np.ndarray
    residuals_s: np.ndarray
    relative_residuals: np.ndarray
    mape_percent: float
    notes: tuple = ()


def _weights(measured, weighting):
    if weighting == "relative":
        return 1.0 / measured**2
    if weighting == "absolute":
        return np.ones_like(measured)
    raise InvalidParameter(f"weighting must be 'relative' or 'absolute', got {weighting!r}")


def fit_kernel_lambda(estimated_at_lambda_1_s, measured_s, weighting: str = "relative") -> LambdaFit:
    """λ from one or more (prediction at λ = 1, measurement) pairs."""
    est = _positive_array("estimated times (λ = 1)", estimated_at_lambda_1_s)
    meas = _positive_array("measured times", measured_s)
    if est.shape != meas.shape:
        raise InvalidParameter(f"give as many estimates as measurements ({est.size} vs {meas.size})")
    w = _weights(meas, weighting)
    mu = float(np.sum(w * est * meas) / np.sum(w * est * est))
    lam = 1.0 / mu
    pred = est / lam
    res = pred - meas
    rel = res / meas
    return LambdaFit(lam, pred, meas, res, rel, float(np.mean(np.abs(rel)) * 100.0))


def fit_link(sizes_bytes, measured_s, nominal_bandwidth_bytes_per_s: float | None = None,
             weighting: str = "relative") -> LinkFit:
    """Startup time and effective bandwidth of one direction from (size, time) pairs."""
    n = np.atleast_1d(np.asarray(sizes_bytes, dtype=float))
    t = _positive_array("measured transfer times", measured_s)
    if n.shape != t.shape:
        raise InvalidParameter(f"give as many sizes as times ({n.size} vs {t.size})")
    if np.any(~np.isfinite(n)) or np.any(n < 0):
        raise InvalidParameter("transfer sizes must be numbers of bytes >= 0")
    if np.unique(n).size < 2:
        raise InvalidParameter("give measurements at two or more different sizes to separate "
                               "startup time from bandwidth")
    w = _weights(t, weighting)
    sw = np.sqrt(w)
    a = np.column_stack([np.ones_like(n), n]) * sw[:, None]
    (ts, k), *_ = np.linalg.lstsq(a, t * sw, rcond=None)
    notes = []
    if ts < 0:
        notes.append(f"the unconstrained fit gave a negative startup time ({ts:.3g} s); refitted with startup 0")
        ts = 0.0
        k = float(np.sum(w * n * t) / np.sum(w * n * n))
    if not k > 0:
        raise InvalidParameter("the measurements do not grow with size; cannot fit a bandwidth")
    bw = 1.0 / k
    pred = ts + n * k
    res = pred - t
    rel = res / t
    lam = None
    if nominal_bandwidth_bytes_per_s is not None:
        if not nominal_bandwidth_bytes_per_s > 0:
            raise InvalidParameter("nominal bandwidth must be > 0 B/s")
        lam = bw / nominal_bandwidth_bytes_per_s
    return LinkFit(float(ts), float(bw), lam, pred, t, res, rel,
                   float(np.mean(np.abs(rel)) * 100.0), tuple(notes))
