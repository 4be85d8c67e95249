"""Fitting :class:`~gpumodeler.core.transfers.models.TransferModel` to measured copies, with
the number of bandwidth regimes chosen by leave-one-out over sizes.

Steps (each documented where it is done):

1. **Startup from small copies** (Gajger §5.4.2: the mean time of 4–512 B copies *is* the
   startup time, Table 5.1). The copies up to ``startup_window_bytes`` (64 KiB: at 10 GB/s
   the payload of 64 KiB is 6.5 µs, the same order as a startup of 4–10 µs, so the line
   through them still pins its intercept) are fitted with eq. 4.8 by relative least squares;
   ``t_s`` is its intercept, clamped to 0 when negative (with a note). One size only: the
   median time there (an upper bound). No copy that small: the line through the three
   smallest sizes, clamped to 0, with a note that the startup is poorly determined.
2. **Bandwidth regimes.** Given ``t_s``, each copy gives an effective payload bandwidth
   ``b_i = n_i / (T_i − t_s)``; in ``y = log b`` an error ``ε`` of the time is an error
   ``ε · T/(T − t_s)``, so weights ``w_i = ((T_i − t_s)/T_i)²`` make least squares in ``y``
   the relative least squares of the times. Copies no longer than ``t_s`` carry no
   bandwidth information and are left out of this step. The sizes, sorted, are split into
   ``R`` contiguous regimes minimising the weighted squared error (exact dynamic
   programming over split points, so the breakpoints are chosen by the fit); each regime's
   bandwidth is its weighted geometric mean.
3. **Model selection by leave-one-out over sizes.** For each ``R`` the whole procedure
   (startup, breakpoints, bandwidths) is rerun with all copies of one size left out and
   the left-out copies predicted; the absolute percentage errors over every copy give
   ``loo_mape`` and ``loo_median_ape``. The smallest ``R`` whose ``loo_mape`` is within 5 %
   (relative) of the best is chosen: a regime is added only when it predicts unseen sizes
   better. Because breakpoints are re-chosen in every fold the reported error is that of
   the procedure, not of one lucky segmentation.

Evidence for this form over a saturating curve: docs/calibration.md's pageable host has bandwidth
*falling* with size in both directions (10.3 → 6 GB/s, 6 → 2.2–2.8 GB/s) while pinned copies
rise towards a plateau; a saturating curve (``bw`` rising to an asymptote) cannot fall, a
piecewise form does both. ``tests/core/test_transfer_fit.py`` shows the regimes fit
synthetic copies with those bandwidths within the noise, where one line cannot.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpumodeler.core.errors import InvalidParameter

from .calibration import check_copy_times
from .models import Regime, TransferModel

STARTUP_WINDOW_BYTES = 64 * 1024
MAX_REGIMES = 5
#: A model with more regimes is chosen only when its LOO MAPE beats every simpler one by
#: more than this fraction of itself.
SIMPLER_TOLERANCE = 0.05
#: Breakpoints fall between at most this many groups of consecutive sizes: with more
#: distinct sizes, neighbours are grouped (equal counts), which keeps leave-one-out at
#: O(sizes × groups²) — 500 sizes took 36 s ungrouped, about 2 s grouped.
MAX_BREAKPOINT_GROUPS = 96


@dataclass(frozen=True)
class TransferFit:
    """A fitted transfer model with its in-sample residuals and leave-one-out errors.

    ``residuals_s`` = predicted − measured; ``relative_residuals`` = that / measured;
    ``loo_relative_errors``: per copy, (prediction with its size left out − measured) /
    measured. ``candidates``: ``{regimes: loo_mape}`` for every number of regimes tried.
    """

    model: TransferModel
    sizes_bytes: np.ndarray
    measured_s: np.ndarray
    predicted_s: np.ndarray
    residuals_s: np.ndarray
    relative_residuals: np.ndarray
    mape_percent: float
    loo_relative_errors: np.ndarray
    loo_mape: float
    loo_median_ape: float
    candidates: dict = field(default_factory=dict)
    notes: tuple = ()

    def parameters(self) -> dict:
        return self.model.to_dict()


def _check_inputs(sizes_bytes, times_s):
    n = np.atleast_1d(np.asarray(sizes_bytes, dtype=float))
    t = np.atleast_1d(np.asarray(times_s, dtype=float))
    if n.shape != t.shape or n.ndim != 1:
        raise InvalidParameter(f"give as many sizes as times ({n.size} vs {t.size})")
    if np.any(~np.isfinite(n)) or np.any(n < 0):
        raise InvalidParameter("transfer sizes must be numbers of bytes >= 0")
    if np.any(~np.isfinite(t)) or np.any(t <= 0):
        raise InvalidParameter("transfer times must be numbers of seconds > 0")
    check_copy_times(t)
    return n, t


def _relative_line(n, t):
    """(intercept, slope) of t = a + n·k by relative least squares."""
    sw = 1.0 / t
    a = np.column_stack([np.ones_like(n), n]) * sw[:, None]
    (ts, k), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    return float(ts), float(k)


def estimate_startup_s(n, t, window_bytes: float = STARTUP_WINDOW_BYTES) -> tuple[float, list]:
    """Step 1 of the module docstring: (t_s >= 0, notes)."""
    notes = []
    small = n <= window_bytes
    sizes = np.unique(n[small])
    if sizes.size >= 2:
        ts, _ = _relative_line(n[small], t[small])
        where = f"copies up to {window_bytes:g} B"
    elif sizes.size == 1:
        return float(np.median(t[small])), [
            f"startup taken as the median time of the {sizes[0]:g} B copies (one small size only)"]
    else:
        smallest = np.unique(n)[:3]
        pick = np.isin(n, smallest)
        ts, _ = _relative_line(n[pick], t[pick])
        where = "the three smallest sizes"
        notes.append(f"no copy of at most {window_bytes:g} B: the startup time is poorly "
                     "determined; measure a few copies of 4 B to 64 KiB")
    if ts < 0:
        notes.append(f"the line through {where} gave a negative startup ({ts:.3g} s); "
                     "startup set to 0")
        ts = 0.0
    return ts, notes


def _grouped(n, t, ts):
    """Per distinct size (ascending) of the copies slower than ts: size, W, Σwy, Σwy²."""
    keep = (t > ts) & (n > 0)
    n, t = n[keep], t[keep]
    y = np.log(n / (t - ts))
    w = ((t - ts) / t) ** 2
    sizes, inverse = np.unique(n, return_inverse=True)
    W = np.bincount(inverse, w, sizes.size)
    Y = np.bincount(inverse, w * y, sizes.size)
    Q = np.bincount(inverse, w * y * y, sizes.size)
    return sizes, W, Y, Q


def _segmentations(sizes, W, Y, Q, max_regimes: int) -> dict[int, list]:
    """Optimal splits of the sorted sizes into 1..``max_regimes`` contiguous groups (exact
    dynamic programming on the weighted squared error): ``{R: [(start, stop), ...]}``."""
    edges = None
    if sizes.size > MAX_BREAKPOINT_GROUPS:
        edges = np.unique(np.linspace(0, sizes.size, MAX_BREAKPOINT_GROUPS + 1).round().astype(int))
        W, Y, Q = (np.add.reduceat(a, edges[:-1]) for a in (W, Y, Q))
    m = W.size
    cW, cY, cQ = (np.concatenate([[0.0], np.cumsum(a)]) for a in (W, Y, Q))
    i, j = np.arange(m + 1)[:, None], np.arange(m + 1)[None, :]
    w = cW[j] - cW[i]
    y = cY[j] - cY[i]
    with np.errstate(invalid="ignore", divide="ignore"):
        cost = cQ[j] - cQ[i] - np.where(w > 0, y * y / np.where(w > 0, w, 1.0), 0.0)
    cost = np.where(i < j, np.maximum(cost, 0.0), np.inf)   # group [i, j) needs i < j
    best = np.full(m + 1, np.inf)
    best[0] = 0.0
    backs, out = [], {}
    for r in range(1, min(max_regimes, m) + 1):
        total = best[:, None] + cost
        back = np.argmin(total, axis=0)
        best = total[back, np.arange(m + 1)]
        backs.append(back)
        bounds, stop = [], m
        for b in reversed(backs):
            start = int(b[stop])
            bounds.append((start, stop))
            stop = start
        bounds = bounds[::-1]
        out[r] = bounds if edges is None else [(int(edges[i]), int(edges[j])) for i, j in bounds]
    return out


def _regimes(sizes, W, Y, bounds) -> tuple[Regime, ...]:
    out = []
    for i, j in bounds:
        w = W[i:j].sum()
        y = Y[i:j].sum() / w if w > 0 else float(np.mean(np.log(sizes[i:j])))
        out.append(Regime(float(sizes[i]), float(sizes[j - 1]), float(np.exp(y))))
    return tuple(out)


def _fits(n, t, max_regimes: int, window_bytes: float):
    """Steps 1–2 for every number of regimes 1..max_regimes: ({R: model}, notes)."""
    ts, notes = estimate_startup_s(n, t, window_bytes)
    sizes, W, Y, Q = _grouped(n, t, ts)
    if sizes.size == 0:
        raise InvalidParameter("every copy is as fast as the startup time; measure larger "
                               "copies (MiB and more) to fit a bandwidth")
    return {r: TransferModel(ts, _regimes(sizes, W, Y, b))
            for r, b in _segmentations(sizes, W, Y, Q, max_regimes).items()}, notes


def fit_regimes(n, t, regimes: int, window_bytes: float = STARTUP_WINDOW_BYTES):
    """One fit with (at most) ``regimes`` regimes (steps 1–2): (TransferModel, notes)."""
    models, notes = _fits(n, t, regimes, window_bytes)
    return models[max(models)], notes


def _loo(n, t, tried, window_bytes) -> dict[int, np.ndarray]:
    """Per number of regimes: relative errors of every copy predicted with all copies of
    its size left out."""
    err = {r: np.empty_like(t) for r in tried}
    for s in np.unique(n):
        out = n == s
        models, _ = _fits(n[~out], t[~out], max(tried), window_bytes)
        for r in tried:
            model = models[min(r, max(models))]
            err[r][out] = (model.time_s(n[out]) - t[out]) / t[out]
    return err


def fit_transfer_model(sizes_bytes, times_s, *, max_regimes: int = MAX_REGIMES,
                       regimes: int | None = None,
                       startup_window_bytes: float = STARTUP_WINDOW_BYTES) -> TransferFit:
    """Fit ``T(n) = t_s + n / bw(n)`` to copies of one direction and one memory kind.

    ``regimes`` forces the number of regimes; otherwise 1..``max_regimes`` are compared by
    leave-one-out over sizes (module docstring). Copies of 0 bytes are left out (note).
    Needs copies of at least three different sizes > 0. A bandwidth that comes out not
    finite (sizes near 1e308 B) is refused."""
    # overflow to inf is refused by the regimes' own check (Regime), not a warning
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _fit_transfer_model(sizes_bytes, times_s, max_regimes, regimes,
                                   startup_window_bytes)


def _fit_transfer_model(sizes_bytes, times_s, max_regimes, regimes, startup_window_bytes):
    n, t = _check_inputs(sizes_bytes, times_s)
    notes = []
    zero = n == 0
    if zero.any():
        notes.append(f"{int(zero.sum())} copy/copies of 0 bytes left out (the runtime "
                     "short-cuts them; Gajger §5.4.2)")
        n, t = n[~zero], t[~zero]
    distinct = np.unique(n).size
    if distinct < 3:
        raise InvalidParameter(f"give copies of at least 3 different sizes > 0 B (got {distinct}) "
                               "to fit and cross-validate a transfer model")
    if regimes is not None:
        if not 1 <= regimes <= distinct - 1:
            raise InvalidParameter(f"regimes must be 1..{distinct - 1} for {distinct} sizes, got {regimes}")
        tried = [regimes]
    else:
        if max_regimes < 1:
            raise InvalidParameter(f"max_regimes must be >= 1, got {max_regimes}")
        tried = list(range(1, min(max_regimes, distinct - 1) + 1))
    loo = _loo(n, t, tried, startup_window_bytes)
    mape = {r: float(np.mean(np.abs(e)) * 100.0) for r, e in loo.items()}
    best = min(mape.values())
    chosen = min(r for r in tried if mape[r] <= best * (1.0 + SIMPLER_TOLERANCE))
    model, fit_notes = fit_regimes(n, t, chosen, startup_window_bytes)
    notes.extend(fit_notes)
    if len(model.regimes) < chosen:
        notes.append(f"only {len(model.regimes)} size(s) carry bandwidth information")
    pred = np.asarray(model.time_s(n), dtype=float)
    res = pred - t
    rel = res / t
    e = loo[chosen]
    return TransferFit(model, n, t, pred, res, rel, float(np.mean(np.abs(rel)) * 100.0), e,
                       mape[chosen], float(np.median(np.abs(e)) * 100.0), mape, tuple(notes))
