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
3. **Candidates.** 1 to ``max_regimes`` regimes, and the **log-log interpolation** of the
   bandwidth between measured sizes (every size its own knot: the plain data, the baseline
   a regime model must beat). Outside the measured sizes every candidate extrapolates no
   faster than the nearest measured size (``TransferModel.edge_bandwidths``).
4. **Model selection by grouped cross-validation.** Copies of one size (after
   :func:`~gpumodeler.core.transfers.selection.merge_sizes`) leave together: with at most
   ``MAX_LOO_SIZES`` (32) distinct sizes each size is a fold (leave-one-size-out); with
   more, the sorted sizes are dealt into ``MAX_FOLDS`` (10) interleaved folds (size rank
   mod ``MAX_FOLDS``, so every fold spans the range and the end sizes test extrapolation;
   beyond ``MANY_SIZES`` (1000) sizes the inner validation of step 5 uses ``INNER_FOLDS``
   (5)) — choice: exact
   leave-one-out over 10⁵ sizes would be 10⁵ refits, and with so many sizes leaving a tenth
   out moves each neighbour gap by about as little. The whole procedure (startup,
   breakpoints, bandwidths) is rerun per fold. The fewest regimes within 5 % (relative) of
   the best regime count is taken, then the interpolation instead when it does better
   (``candidates``: each candidate's error).
5. **The reported error is nested**: step 4's choice is itself made inside each outer fold,
   on that fold's training copies only (an inner cross-validation by the same rule), and
   the left-out copies are predicted by the model so chosen; ``loo_mape`` and
   ``loo_median_ape`` are the absolute percentage errors over every copy. Choosing the
   regime count on the same folds it reports would make the error optimistic (a K40
   device→host calibration: 10.4 % reported, 24.8 % nested).

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
from .models import Regime, TransferModel, knot_time_s

STARTUP_WINDOW_BYTES = 64 * 1024
MAX_REGIMES = 5
#: A model with more regimes is chosen only when its LOO MAPE beats every simpler one by
#: more than this fraction of itself.
SIMPLER_TOLERANCE = 0.05
#: Breakpoints fall between at most this many groups of consecutive sizes: with more
#: distinct sizes, neighbours are grouped (equal counts), which keeps leave-one-out at
#: O(sizes × groups²) — 500 sizes took 36 s ungrouped, about 2 s grouped.
MAX_BREAKPOINT_GROUPS = 96
#: Cross-validation folds (step 4): leave-one-size-out up to MAX_LOO_SIZES distinct sizes
#: (a sweep of powers of two from 4 B to 16 GiB), else MAX_FOLDS interleaved groups of sizes.
MAX_LOO_SIZES = 32
MAX_FOLDS = 10
#: inner folds of the nested cross-validation with more than MANY_SIZES sizes (each inner
#: fold then refits on most of 10^3 or more copies, and two fold counts choose alike)
INNER_FOLDS = 5
MANY_SIZES = 1000


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
    chosen: str = ""  # the candidate chosen: '1'..'5' regimes or 'interpolation'

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


def _unique(n):
    """(distinct sizes ascending, index of each copy's size): ``np.unique`` with
    ``return_inverse``, in linear time when ``n`` is already sorted (the fit sorts once)."""
    if n.size and np.all(n[1:] >= n[:-1]):
        first = np.empty(n.size, dtype=bool)
        first[0] = True
        first[1:] = n[1:] != n[:-1]
        return n[first], np.cumsum(first) - 1
    return np.unique(n, return_inverse=True)


def _grouped(n, t, ts):
    """Per distinct size (ascending) of the copies slower than ts: size, W, Σwy, Σwy²."""
    keep = (t > ts) & (n > 0)
    n, t = n[keep], t[keep]
    y = np.log(n / (t - ts))
    w = ((t - ts) / t) ** 2
    sizes, inverse = _unique(n)
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
        if j <= i:  # an empty segment (more regimes than the fold's sizes hold): no regime
            continue
        w = W[i:j].sum()
        y = Y[i:j].sum() / w if w > 0 else float(np.mean(np.log(sizes[i:j])))
        out.append(Regime(float(sizes[i]), float(sizes[j - 1]), float(np.exp(y))))
    return tuple(out)


INTERPOLATION = "interpolation"


def folds_of(n, max_folds: int | None = None) -> list:
    """Boolean masks of the cross-validation folds of sizes ``n`` (step 4): one per distinct
    size up to ``MAX_LOO_SIZES`` sizes, else ``MAX_FOLDS`` interleaved groups of sizes."""
    sizes, rank = _unique(n)
    if max_folds is None:
        max_folds = sizes.size if sizes.size <= MAX_LOO_SIZES else MAX_FOLDS
    if sizes.size <= max_folds:
        return [rank == k for k in range(sizes.size)]
    fold = rank % max_folds
    return [fold == k for k in range(max_folds)]


def candidate_knots(n, t, names, window_bytes: float = STARTUP_WINDOW_BYTES):
    """Steps 1–3 for the candidates ``names`` (``'1'``..``'R'``, :data:`INTERPOLATION`):
    ``({name: (startup, log sizes, log bandwidths, edge bandwidths)}, regimes by name,
    notes)``, as arrays (a model of 10⁵ knots is cheap to cross-validate this way)."""
    ts, notes = estimate_startup_s(n, t, window_bytes)
    sizes, W, Y, Q = _grouped(n, t, ts)
    if sizes.size == 0:
        raise InvalidParameter("every copy is as fast as the startup time; measure larger "
                               "copies (MiB and more) to fit a bandwidth")
    per_size = Y / W   # log of each size's weighted geometric-mean bandwidth
    edges = (float(np.exp(per_size[0])), float(np.exp(per_size[-1])))
    out, regimes = {}, {}
    counts = [int(k) for k in names if k != INTERPOLATION]
    if counts:
        for r, bounds in _segmentations(sizes, W, Y, Q, max(counts)).items():
            if str(r) not in names:
                continue
            regs = _regimes(sizes, W, Y, bounds)
            xs, ys = [], []
            for g in regs:
                for x in dict.fromkeys((g.first_size_bytes, g.last_size_bytes)):
                    xs.append(np.log(x))
                    ys.append(np.log(g.bandwidth_bytes_per_s))
            out[str(r)] = (ts, np.asarray(xs), np.asarray(ys), edges)
            regimes[str(r)] = regs
        for name in (str(c) for c in counts):   # fewer sizes than regimes: the most there are
            if name not in out:
                top = str(max(int(k) for k in out))
                out[name], regimes[name] = out[top], regimes[top]
    if INTERPOLATION in names:
        out[INTERPOLATION] = (ts, np.log(sizes), per_size, edges)
    return out, regimes, notes


def _predict(knots, n):
    ts, xs, ys, edges = knots
    return knot_time_s(ts, xs, ys, n, edges)


def cv_errors(n, t, names, window_bytes: float = STARTUP_WINDOW_BYTES,
              max_folds: int | None = None, *, strict: bool = True) -> dict:
    """{name: relative error of every copy predicted with its fold left out} (step 4). A
    fold whose training copies cannot be fitted raises (``strict``) or, inside another
    fold's validation, gives an infinite error."""
    err = {k: np.empty_like(t) for k in names}
    for out in folds_of(n, max_folds):
        try:
            if _unique(n[~out])[0].size < 2:
                raise InvalidParameter("too few sizes to train")
            models, _, _ = candidate_knots(n[~out], t[~out], names, window_bytes)
        except InvalidParameter:
            if strict:
                raise
            for k in names:
                err[k][out] = np.inf
            continue
        for k in names:
            err[k][out] = (_predict(models[k], n[out]) - t[out]) / t[out]
    return err


def mape_of(errors) -> float:
    return float(np.mean(np.abs(errors)) * 100.0)


def choose(mape: dict) -> str:
    """Step 4's choice among cross-validated candidates ``{name: MAPE}``."""
    counts = sorted((k for k in mape if k != INTERPOLATION), key=int)
    if not counts:
        return INTERPOLATION
    best = min(mape[k] for k in counts)
    chosen = next(k for k in counts if mape[k] <= best * (1.0 + SIMPLER_TOLERANCE))
    if INTERPOLATION in mape and mape[INTERPOLATION] < mape[chosen]:
        chosen = INTERPOLATION
    return chosen


def nested_errors(n, t, names, window_bytes: float = STARTUP_WINDOW_BYTES,
                  max_folds: int | None = None) -> np.ndarray:
    """Step 5: the relative error of every copy predicted by the candidate chosen (by
    :func:`choose` over :func:`cv_errors` of the training copies) with its fold left out."""
    err = np.empty_like(t)
    simplest = min(names, key=lambda k: (k == INTERPOLATION, k))
    # many sizes: fewer inner folds (each inner fold refits on nine tenths of the copies)
    inner_folds = None if _unique(n)[0].size <= MANY_SIZES else INNER_FOLDS
    for out in folds_of(n, max_folds):
        train_n, train_t = n[~out], t[~out]
        if len(names) == 1:
            chosen = names[0]
        elif _unique(train_n)[0].size < 3:   # no inner validation possible: the simplest
            chosen = simplest
        else:
            inner = cv_errors(train_n, train_t, names, window_bytes,
                              max_folds if max_folds is not None else inner_folds,
                              strict=False)
            chosen = choose({k: mape_of(e) for k, e in inner.items()})
        # a fold that cannot be fitted raises, as in the plain cross-validation
        models, _, _ = candidate_knots(train_n, train_t, [chosen], window_bytes)
        err[out] = (_predict(models[chosen], n[out]) - t[out]) / t[out]
    return err


def fit_transfer_model(sizes_bytes, times_s, *, max_regimes: int = MAX_REGIMES,
                       regimes: int | None = None,
                       startup_window_bytes: float = STARTUP_WINDOW_BYTES,
                       interpolation: bool = True) -> TransferFit:
    """Fit ``T(n) = t_s + n / bw(n)`` to copies of one direction and one memory kind.

    ``regimes`` forces the number of regimes; otherwise 1..``max_regimes`` and (with
    ``interpolation``) the log-log interpolation are compared by grouped cross-validation
    and the error reported is nested (module docstring). Copies of 0 bytes are left out
    (note). Needs copies of at least three different sizes > 0. A bandwidth that comes out
    not finite (sizes near 1e308 B) is refused."""
    # overflow to inf is refused by the regimes' own check (Regime), not a warning
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _fit_transfer_model(sizes_bytes, times_s, max_regimes, regimes,
                                   startup_window_bytes, interpolation)


def _fit_transfer_model(sizes_bytes, times_s, max_regimes, regimes, startup_window_bytes,
                        interpolation):
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
        names = [str(regimes)]
    else:
        if max_regimes < 1:
            raise InvalidParameter(f"max_regimes must be >= 1, got {max_regimes}")
        names = [str(r) for r in range(1, min(max_regimes, distinct - 1) + 1)]
        if interpolation:
            names.append(INTERPOLATION)
    order = np.argsort(n, kind="stable")   # sorted once: grouping by size is then linear
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    n, t = n[order], t[order]
    plain = cv_errors(n, t, names, startup_window_bytes)
    mape = {k: mape_of(e) for k, e in plain.items()}
    chosen = choose(mape) if len(names) > 1 else names[0]
    nested = plain[chosen] if len(names) == 1 else nested_errors(n, t, names, startup_window_bytes)
    knots, regs, fit_notes = candidate_knots(n, t, [chosen], startup_window_bytes)
    ts, xs, ys, edges = knots[chosen]
    if chosen == INTERPOLATION:
        sizes = np.exp(xs)
        model = TransferModel(ts, tuple(Regime(float(x), float(x), float(b))
                                        for x, b in zip(sizes, np.exp(ys))), edges)
    else:
        model = TransferModel(ts, regs[chosen], edges)
    notes.extend(fit_notes)
    if chosen == INTERPOLATION:
        notes.append(f"chosen: log-log interpolation of the bandwidth between the "
                     f"{len(model.regimes)} measured sizes (it predicts left-out sizes better "
                     f"than any number of regimes)")
    elif len(model.regimes) < int(chosen):
        notes.append(f"only {len(model.regimes)} size(s) carry bandwidth information")
    n, t, nested = n[back], t[back], nested[back]   # the copies in the caller's order
    pred = np.asarray(model.time_s(n), dtype=float)
    res = pred - t
    rel = res / t
    return TransferFit(model, n, t, pred, res, rel, float(np.mean(np.abs(rel)) * 100.0), nested,
                       mape_of(nested), float(np.median(np.abs(nested)) * 100.0),
                       {(k if k == INTERPOLATION else int(k)): v for k, v in mape.items()},
                       tuple(notes), chosen=chosen)
