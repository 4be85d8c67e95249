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
from gpumodeler.core.physical import require_physical


def _positive_array(name, values):
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.size == 0:
        raise InvalidParameter(f"{name}: give at least one value")
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise InvalidParameter(f"{name} must all be numbers > 0, got {values}")
    return arr


#: No copy between host and device is measured below this: its startup alone takes
#: microseconds (Gajger Table 5.1: 4-10 µs), and timers resolve about half a microsecond. A
#: shorter time is a unit slip, and it would give a bandwidth no link has.
MIN_COPY_TIME_S = 1e-9


def check_copy_times(t) -> None:
    """InvalidParameter when a measured copy time is below :data:`MIN_COPY_TIME_S`."""
    short = t < MIN_COPY_TIME_S
    if np.any(short):
        raise InvalidParameter(
            f"a measured copy time of {float(t[short][0]):.3g} s is below 1 ns; a copy takes at "
            f"least its startup time (microseconds): check the times' unit (e.g. 3.97us)")


def common_sizes(n, t) -> str:
    """``1 B: 1 ms, 2 B: 1 ms`` for a message (at most four pairs, smallest sizes first)."""
    order = np.argsort(n, kind="stable")[:4]
    more = ", …" if n.size > 4 else ""
    return ", ".join(f"{n[i]:g} B: {t[i]:.6g} s" for i in order) + more


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


def _check_weighting(weighting) -> None:
    """The weighting's name: relative (w = 1/m², written as residuals divided by m, so that
    times of 1e-300 s do not overflow a square) or absolute."""
    if weighting not in ("relative", "absolute"):
        raise InvalidParameter(f"weighting must be 'relative' or 'absolute', got {weighting!r}")


def fit_kernel_lambda(estimated_at_lambda_1_s, measured_s, weighting: str = "relative") -> LambdaFit:
    """λ from one or more (prediction at λ = 1, measurement) pairs."""
    est = _positive_array("estimated times (λ = 1)", estimated_at_lambda_1_s)
    meas = _positive_array("measured times", measured_s)
    if est.shape != meas.shape:
        raise InvalidParameter(f"give as many estimates as measurements ({est.size} vs {meas.size})")
    _check_weighting(weighting)
    # relative: with r = e/m, μ = Σr / Σr²; absolute: in units of the longest time. Times
    # too far apart give no finite λ, which is refused below.
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if weighting == "relative":
            r = est / meas
            mu = float(np.sum(r) / np.sum(r * r))
        else:
            unit = float(max(est.max(), meas.max()))
            e, m = est / unit, meas / unit
            mu = float(np.sum(e * m) / np.sum(e * e))
    lam = require_physical(1.0 / mu if mu else float("inf"), "λ", positive=True,
                           cause="the estimated and measured times are too far apart for a "
                                 "number; check their units")
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
    check_copy_times(t)
    # fitted in units of the largest time and the largest size, so that times of 1e-300 s
    # or sizes of 1e300 B neither overflow the weights nor defeat the least squares
    t_unit = float(t.max())
    n_unit = float(n.max()) or 1.0
    tu, nu = t / t_unit, n / n_unit
    _check_weighting(weighting)
    sw = 1.0 / tu if weighting == "relative" else np.ones_like(tu)
    a = np.column_stack([np.ones_like(nu), nu]) * sw[:, None]
    (ts, k), *_ = np.linalg.lstsq(a, tu * sw, rcond=None)
    notes = []
    if ts < 0:
        notes.append(f"the unconstrained fit gave a negative startup time ({ts * t_unit:.3g} s); "
                     f"refitted with startup 0")
        ts = 0.0
        w = sw * sw
        k = float(np.sum(w * nu * tu) / np.sum(w * nu * nu))
    # the payload time across the sizes, in units of the largest time: below rounding
    # (1e-9), the times do not grow with size and the bandwidth would be infinite
    if not k * (nu.max() - nu.min()) > 1e-9:
        raise InvalidParameter(
            f"the measured times do not grow with size ({common_sizes(n, t)}): the bandwidth "
            f"would be infinite; measure copies large enough that the payload shows in the "
            f"time (MiB and more) and give their sizes and times")
    ts, k = ts * t_unit, k * t_unit / n_unit
    bw = require_physical(1.0 / k, "the effective bandwidth", "B/s", positive=True,
                          kind="bandwidth", cause="check the sizes and times")
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
