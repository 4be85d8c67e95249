"""The three learners of Amarís 2018 ch. 4 in numpy: linear regression, support-vector
regression with a linear kernel, and a random forest of regression trees.

Amarís 2018 §4.1 fits them in R (``lm``, ``e1071::svm``, ``randomForest``); here they are
written out so that a fitted model is plain arrays (stored as JSON, never pickled) and
every fit is deterministic.

* **Linear regression** (Amarís 2018 eq. 4.1, ``Y ≈ β0 + β1·X1 + … + βp·Xp``): least
  squares, solved by ``numpy.linalg.lstsq`` (an SVD; the thesis used a QR decomposition,
  which gives the same minimiser for a full-rank design and the minimum-norm one otherwise).
* **Support-vector regression, linear kernel** (Amarís 2018 eq. 4.2): the *primal* of the
  ε-insensitive SVR with the squared (L2) loss,
  ``min ½‖w‖² + C Σ max(0, |y_i − w·x_i − b| − ε)²``, solved by the finite Newton method
  (the objective is convex, once differentiable and piecewise quadratic) with Armijo
  backtracking; the intercept b is not penalised. ``ε = 0.1`` and ``C = 1`` as e1071's
  defaults (on standardised features and log2 times); the squared loss instead of
  e1071's absolute one is this module's choice: it makes the solver an exact, deterministic
  Newton iteration without a dual coordinate order.
* **Regression trees and a random forest** (Amarís 2018 §4.1: 50 trees, 3 candidate
  features per split): CART trees grown on the residual sum of squares, each on a bootstrap
  sample drawn from a seeded ``numpy.random.Generator``; a node with fewer than
  :data:`MIN_SPLIT` rows, or whose rows all have one value, is a leaf (randomForest's
  ``nodesize = 5`` for regression). A tree is five arrays in depth-first order, so a
  child's index is always larger than its parent's (the loader checks it: no cycles).
"""
from __future__ import annotations

import numpy as np

from gpumodeler.core.errors import InvalidParameter

SVR_EPSILON = 0.1
SVR_C = 1.0
FOREST_TREES = 50
FOREST_CANDIDATES = 3
MIN_SPLIT = 5
MAX_DEPTH = 40


def _check(x, y=None):
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise InvalidParameter(f"features must be a table (rows × features), got {x.ndim} dimensions")
    if not np.all(np.isfinite(x)):
        raise InvalidParameter("features must be finite numbers")
    if y is None:
        return x, None
    y = np.asarray(y, dtype=float)
    if y.shape != (x.shape[0],):
        raise InvalidParameter(f"{y.shape[0] if y.ndim else 1} targets for {x.shape[0]} rows")
    if not np.all(np.isfinite(y)):
        raise InvalidParameter("targets must be finite numbers")
    if x.shape[0] == 0:
        raise InvalidParameter("no rows to learn from; give measurements with times")
    return x, y


def fit_linear(x, y) -> tuple[np.ndarray, float]:
    """(weights, intercept) of least squares (Amarís 2018 eq. 4.1)."""
    x, y = _check(x, y)
    design = np.hstack([x, np.ones((x.shape[0], 1))])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return coef[:-1], float(coef[-1])


def fit_ridge(x, y, shrinkage: float) -> tuple[np.ndarray, float]:
    """(weights, intercept) minimising ``Σ (y − w·x − b)² + k (‖w‖² + b²)``: least squares
    shrunk towards zero, intercept included, so that with no rows the answer is 0 and with
    n rows the mean is shrunk by n / (n + k) (used by the hybrid)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(y):
        x, y = _check(x, y)
    if not shrinkage > 0:
        raise InvalidParameter(f"shrinkage must be > 0, got {shrinkage}")
    design = np.hstack([x, np.ones((x.shape[0], 1))])
    gram = design.T @ design + shrinkage * np.eye(design.shape[1])
    coef = np.linalg.solve(gram, design.T @ y)
    return coef[:-1], float(coef[-1])


def _svr_objective(x, y, w, b, eps, c):
    slack = np.maximum(0.0, np.abs(y - x @ w - b) - eps)
    return 0.5 * float(w @ w) + c * float(slack @ slack)


def fit_svr(x, y, epsilon: float = SVR_EPSILON, c: float = SVR_C,
            max_iterations: int = 200) -> tuple[np.ndarray, float]:
    """(weights, intercept) of the linear L2-loss ε-SVR primal by finite Newton steps
    (module docstring; Amarís 2018 eq. 4.2 with a linear kernel)."""
    x, y = _check(x, y)
    n, p = x.shape
    w, b = np.zeros(p), float(np.median(y))
    f = _svr_objective(x, y, w, b, epsilon, c)
    for _ in range(max_iterations):
        r = y - x @ w - b
        active = np.abs(r) > epsilon
        s = np.where(active, r - np.sign(r) * epsilon, 0.0)
        xa = np.hstack([x[active], np.ones((int(active.sum()), 1))])
        grad = np.concatenate([w, [0.0]]) - 2 * c * (xa.T @ s[active])
        hess = 2 * c * (xa.T @ xa)
        hess[:p, :p] += np.eye(p)
        hess[p, p] += 1e-9 * (1 + n)
        step = -np.linalg.solve(hess, grad)
        slope = float(grad @ step)
        if not slope < -1e-14 * (1 + abs(f)):
            break
        t = 1.0
        while True:
            w2, b2 = w + t * step[:p], b + t * step[p]
            f2 = _svr_objective(x, y, w2, b2, epsilon, c)
            if f2 <= f + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        if f - f2 <= 1e-15 * (1 + abs(f)):
            w, b, f = w2, b2, f2
            break
        w, b, f = w2, b2, f2
    return w, float(b)


def _best_split(xs, y):
    """(threshold, gain) of the best split of one feature's values, or None."""
    order = np.argsort(xs, kind="stable")
    xs, ys = xs[order], y[order]
    n = len(ys)
    csum = np.cumsum(ys)
    csq = np.cumsum(ys * ys)
    total, total_sq = csum[-1], csq[-1]
    k = np.arange(1, n)
    valid = xs[1:] > xs[:-1]
    if not valid.any():
        return None
    left = csq[:-1] - csum[:-1] ** 2 / k
    right = (total_sq - csq[:-1]) - (total - csum[:-1]) ** 2 / (n - k)
    sse = np.where(valid, left + right, np.inf)
    i = int(np.argmin(sse))
    gain = (total_sq - total * total / n) - sse[i]
    return 0.5 * (xs[i] + xs[i + 1]), float(gain)


def fit_tree(x, y, rng=None, candidates: int | None = None) -> dict:
    """A CART regression tree as arrays ``feature``, ``threshold``, ``left``, ``right``,
    ``value`` (a leaf has feature, left and right −1); ``candidates`` features drawn per
    split by ``rng`` (all features when None)."""
    x, y = _check(x, y)
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    stack: list[tuple[np.ndarray, int, int | None, int | None]] = [(np.arange(len(y)), 0, None, None)]  # rows, depth, parent, side
    while stack:
        rows, depth, parent, side = stack.pop()
        node = len(feature)
        if parent is not None:
            (left if side == 0 else right)[parent] = node
        ys = y[rows]
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        value.append(float(ys.mean()))
        if len(rows) < MIN_SPLIT or depth >= MAX_DEPTH or np.ptp(ys) == 0:
            continue
        p = x.shape[1]
        if candidates is None or candidates >= p:
            pool = np.arange(p)
        else:
            pool = rng.choice(p, size=candidates, replace=False)
        best = None
        for j in pool:
            found = _best_split(x[rows, j], ys)
            if found is not None and found[1] > 0 and (best is None or found[1] > best[2]):
                best = (int(j), found[0], found[1])
        if best is None:
            continue
        j, thr, _ = best
        feature[node], threshold[node] = j, thr
        go_left = x[rows, j] <= thr
        # right first on the stack so the left subtree is numbered first (depth-first order)
        stack.append((rows[~go_left], depth + 1, node, 1))
        stack.append((rows[go_left], depth + 1, node, 0))
    return {"feature": np.array(feature, dtype=np.int64), "threshold": np.array(threshold),
            "left": np.array(left, dtype=np.int64), "right": np.array(right, dtype=np.int64),
            "value": np.array(value)}


def predict_tree(tree: dict, x) -> np.ndarray:
    """The leaf values the rows of ``x`` fall into (``x[:, f] <= threshold`` goes left)."""
    x = np.asarray(x, dtype=float)
    node = np.zeros(x.shape[0], dtype=np.int64)
    feature, thr = tree["feature"], tree["threshold"]
    for _ in range(len(feature)):  # children are numbered after parents: at most this many steps
        f = feature[node]
        inner = f >= 0
        if not inner.any():
            break
        rows = np.nonzero(inner)[0]
        goes_left = x[rows, f[rows]] <= thr[node[rows]]
        node[rows] = np.where(goes_left, tree["left"][node[rows]], tree["right"][node[rows]])
    return tree["value"][node]


def fit_forest(x, y, seed: int, trees: int = FOREST_TREES,
               candidates: int = FOREST_CANDIDATES) -> list[dict]:
    """``trees`` regression trees, each on a bootstrap sample, ``candidates`` features per
    split (Amarís 2018 §4.1: 50 and 3), drawn by ``numpy.random.default_rng(seed)``."""
    x, y = _check(x, y)
    rng = np.random.default_rng(seed)
    forest = []
    for _ in range(trees):
        sample = rng.integers(0, len(y), size=len(y))
        forest.append(fit_tree(x[sample], y[sample], rng, candidates))
    return forest


def predict_forest(forest: list, x) -> np.ndarray:
    """The mean of the trees' predictions."""
    return np.mean([predict_tree(t, x) for t in forest], axis=0)
