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

import math
from itertools import accumulate, count, islice
from operator import itemgetter, mul

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


#: a node of at most this many rows grows its subtree in plain Python (numpy's per-call cost
#: outweighs its speed on a few rows); both paths make the same cuts
SMALL_NODE = 48


def _best_splits(xs, ys, k):
    """(lower value, upper value, gain) per row of ``xs``: the best cut of each candidate
    feature's values ``xs`` (one row a feature, sorted ascending) with the targets ``ys`` in
    the same order; ``k`` is ``1 … m−1`` for ``m`` values.

    CART on the residual sum of squares (Amarís 2018 §4.1): for a cut after the k-th value
    the two sides' sums of squared deviations are ``Σy² − (Σy)²/k`` from the running sums,
    so one scan of the cumulative sums prices every cut. A cut between equal values is no
    cut; a feature with none has gain −∞."""
    m = xs.shape[1]
    csum = np.cumsum(ys, axis=1)
    csq = np.cumsum(ys * ys, axis=1)
    total, total_sq = csum[:, -1:], csq[:, -1:]
    head, head_sq = csum[:, :-1], csq[:, :-1]
    sse = head_sq - head * head / k + ((total_sq - head_sq) - (total - head) * (total - head) / (m - k))
    sse[xs[:, 1:] <= xs[:, :-1]] = np.inf
    i = sse.argmin(axis=1)
    at = np.arange(xs.shape[0])
    gain = (total_sq[:, 0] - total[:, 0] * total[:, 0] / m) - sse[at, i]
    return xs[at, i], xs[at, i + 1], gain


def _best_split_small(rows, pairs_j):
    """(gain, threshold) of the best cut of one feature on a few rows, in plain Python: the
    same arithmetic as :func:`_best_splits`, operation for operation (so the same cut);
    ``pairs_j``: (feature value, target) per row."""
    pairs = sorted(map(pairs_j.__getitem__, rows), key=_first)  # stable: ties keep the row order
    xs, ys = zip(*pairs)
    csum = list(accumulate(ys))
    csq = list(accumulate(map(mul, ys, ys)))
    m = len(ys)
    total, total_sq = csum[-1], csq[-1]
    best, at = math.inf, 0
    for k, a, b, h, hq in zip(count(1), xs, islice(xs, 1, None), csum, csq):
        if b > a:
            rest = total - h
            sse = hq - h * h / k + ((total_sq - hq) - rest * rest / (m - k))
            if sse < best:
                best, at = sse, k
    if not at:
        return -math.inf, 0.0
    return (total_sq - total * total / m) - best, 0.5 * (xs[at - 1] + xs[at])


_first = itemgetter(0)


def fit_tree(x, y, rng=None, candidates: int | None = None) -> dict:
    """A CART regression tree as arrays ``feature``, ``threshold``, ``left``, ``right``,
    ``value`` (a leaf has feature, left and right −1); ``candidates`` features drawn per
    split by ``rng`` (all features when None).

    A node of fewer than :data:`MIN_SPLIT` rows, at :data:`MAX_DEPTH`, or whose rows all
    have one target is a leaf; otherwise its candidates are drawn and the largest positive
    gain of their best cuts wins (the first drawn on a tie). The children are grown depth
    first, left before right, and the generator is drawn in that order. The rows are sorted
    by every feature once; a split keeps each child's rows in that order (a stable
    partition), so a large node's candidates need no sort and are scanned together
    (:func:`_best_splits`); a node of at most :data:`SMALL_NODE` rows grows its subtree in
    plain Python (:func:`_best_split_small`). A node's value, the mean of its rows' targets,
    is summed once the tree is grown (:func:`_node_means`)."""
    x, y = _check(x, y)
    n, p = x.shape
    all_features = candidates is None or candidates >= p
    xt = x.T.copy()
    order = np.argsort(xt, axis=1, kind="stable")  # per feature, the rows by value
    ks = np.arange(1, max(n, 1), dtype=float)
    everything = np.arange(p)
    columns, yl = xt.tolist(), y.tolist()
    pairs = [list(zip(c, yl)) for c in columns]
    target = yl.__getitem__
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []

    def new_node(parent: int, side: int) -> int:
        node = len(feature)
        if parent >= 0:
            (left if side == 0 else right)[parent] = node
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        return node

    def draw() -> list:
        return list(range(p)) if all_features else rng.choice(p, size=candidates, replace=False).tolist()

    def grow_small(rows: list, depth: int, parent: int, side: int) -> None:
        todo = [(rows, depth, parent, side)]
        while todo:
            rows, depth, parent, side = todo.pop()
            node = new_node(parent, side)
            if len(rows) < MIN_SPLIT or depth >= MAX_DEPTH:
                continue
            ys = list(map(target, rows))
            if max(ys) == min(ys):
                continue
            best, j, thr = -math.inf, -1, 0.0
            for c in draw():
                gain, cut = _best_split_small(rows, pairs[c])
                if gain > best:
                    best, j, thr = gain, c, cut
            if not best > 0:
                continue
            feature[node], threshold[node] = j, thr
            xj = columns[j]
            todo.append(([r for r in rows if xj[r] > thr], depth + 1, node, 1))
            todo.append(([r for r in rows if xj[r] <= thr], depth + 1, node, 0))

    go = np.zeros(n, dtype=bool)
    stack: list[tuple] = [(order, 0, -1, 0)]  # each feature's rows in order, depth, parent, side
    while stack:
        sorted_rows, depth, parent, side = stack.pop()
        m = sorted_rows.shape[1]
        if m <= max(SMALL_NODE, MIN_SPLIT) or depth >= MAX_DEPTH:
            grow_small(np.sort(sorted_rows[0]).tolist(), depth, parent, side)
            continue
        node = new_node(parent, side)
        ys = y[sorted_rows[0]]
        if ys.max() == ys.min():
            continue
        pool = everything if all_features else np.array(draw())
        cand = sorted_rows[pool]
        lo, hi, gain = _best_splits(xt[pool[:, None], cand], y[cand], ks[:m - 1])
        best = int(gain.argmax())
        if not gain[best] > 0:
            continue
        j = int(pool[best])
        thr = 0.5 * (lo[best] + hi[best])
        feature[node], threshold[node] = j, float(thr)
        go[sorted_rows[0]] = xt[j, sorted_rows[0]] <= thr
        take = go[sorted_rows]
        width = int(take[0].sum())
        # right first on the stack so the left subtree is numbered first (depth-first order)
        stack.append((sorted_rows[~take].reshape(p, m - width), depth + 1, node, 1))
        stack.append((sorted_rows[take].reshape(p, width), depth + 1, node, 0))
    tree = {"feature": np.array(feature, dtype=np.int64), "threshold": np.array(threshold),
            "left": np.array(left, dtype=np.int64), "right": np.array(right, dtype=np.int64)}
    tree["value"] = _node_means(tree, x, y)
    return tree


def _node_means(tree: dict, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The mean target of the rows that reach each node (the rows taken down the tree as
    :func:`predict_tree` takes them, one level a step)."""
    count = len(tree["feature"])
    sums, sizes = np.zeros(count), np.zeros(count)
    node = np.zeros(len(y), dtype=np.int64)
    rows = np.arange(len(y))
    feature, thr = tree["feature"], tree["threshold"]
    while len(rows):
        sums += np.bincount(node, y[rows], minlength=count)
        sizes += np.bincount(node, minlength=count)
        f = feature[node]
        inner = f >= 0
        rows, node, f = rows[inner], node[inner], f[inner]
        node = np.where(x[rows, f] <= thr[node], tree["left"][node], tree["right"][node])
    return sums / np.maximum(sizes, 1)


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
