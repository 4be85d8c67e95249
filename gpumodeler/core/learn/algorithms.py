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
    return ridge(x, shrinkage)(y)


def ridge(x, shrinkage: float):
    """:func:`fit_ridge` on the table ``x`` as a function of the targets: the design and its
    Gram matrix formed once (the hybrid's backfitting fits the same table 20 times)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        _check(x)  # refused as a table of the wrong shape
    if not shrinkage > 0:
        raise InvalidParameter(f"shrinkage must be > 0, got {shrinkage}")
    design = np.hstack([x, np.ones((x.shape[0], 1))])
    gram = design.T @ design + shrinkage * np.eye(design.shape[1])

    def solve(y) -> tuple[np.ndarray, float]:
        y = np.asarray(y, dtype=float)
        if len(y):
            _check(x, y)
        coef = np.linalg.solve(gram, design.T @ y)
        return coef[:-1], float(coef[-1])
    return solve


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


class Draws:
    """A ``numpy.random.Generator``'s ``choice(p, size=k, replace=False)`` and
    ``integers(0, n, size)``, the same numbers in the same order, drawn from the generator's
    32-bit stream in blocks: numpy spends some 15 µs a call on a choice of 3 of 13, the
    forest makes half a million of them.

    Both draw a bounded integer as numpy does for a range below 2³²: Lemire's multiply and
    reject (``m = u · (r + 1)``, redrawn while ``m mod 2³² < (2³² − r − 1) mod (r + 1)``,
    the value ``m >> 32``; nothing drawn for r = 0); the choice without replacement is
    numpy's for a population up to 10 000: Floyd's selection (for j = p − k … p − 1 a value
    in [0, j], j itself when already taken), then a Fisher–Yates shuffle of the k
    (i = k − 1 … 1 swapped with a value in [0, i]). The generator is read ahead by whole
    blocks, so it must not be drawn from otherwise while the Draws is in use. The test
    compares both with the generator's own."""

    BLOCK = 8192

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._array = np.zeros(0, dtype=np.uint32)
        self._list: list[int] = []
        self._pos = 0

    def _refill(self, need: int) -> None:
        """At least ``need`` unread values in the buffer."""
        rest = self._array[self._pos:]
        more = max(self.BLOCK, need - len(rest))
        self._array = np.concatenate([rest, self._rng.integers(0, 2 ** 32, size=more, dtype=np.uint32)])
        self._list = self._array.tolist()
        self._pos = 0

    def _bounded(self, r: int) -> int:
        """A value in [0, r] (r < 2³²), numpy's bounded draw (class docstring)."""
        if r == 0:
            return 0
        if self._pos >= len(self._list):
            self._refill(1)
        u = self._list[self._pos]
        self._pos += 1
        if r == 0xFFFFFFFF:
            return u
        excl = r + 1
        m = u * excl
        if (m & 0xFFFFFFFF) < excl:
            threshold = (0xFFFFFFFF - r) % excl
            while (m & 0xFFFFFFFF) < threshold:
                if self._pos >= len(self._list):
                    self._refill(1)
                m = self._list[self._pos] * excl
                self._pos += 1
        return m >> 32

    def choice(self, p: int, size: int, replace: bool = False) -> list[int]:
        """``size`` distinct values of ``range(p)``, as ``Generator.choice(p, size,
        replace=False)`` draws them (p <= 10 000)."""
        if replace or not 0 <= size <= p <= 10_000:
            raise InvalidParameter(f"Draws.choice draws 0 <= size <= p <= 10000 values without "
                                   f"replacement, got p={p}, size={size}, replace={replace}")
        if self._pos + 2 * size > len(self._list):
            self._refill(2 * size)
        # _bounded(r) written out for r >= 1 (a draw with no rejection; the rare rejection,
        # m mod 2³² < r + 1, goes to _bounded's loop)
        values, pos = self._list, self._pos
        out: list[int] = []
        for j in range(p - size, p):
            if j:
                m = values[pos] * (j + 1)
                pos += 1
                if (m & 0xFFFFFFFF) <= j:
                    self._pos = pos - 1
                    v = self._bounded(j)
                    values, pos = self._list, self._pos
                else:
                    v = m >> 32
            else:
                v = 0
            out.append(j if v in out else v)
        for i in range(size - 1, 0, -1):
            m = values[pos] * (i + 1)
            pos += 1
            if (m & 0xFFFFFFFF) <= i:
                self._pos = pos - 1
                k = self._bounded(i)
                values, pos = self._list, self._pos
            else:
                k = m >> 32
            out[i], out[k] = out[k], out[i]
        self._pos = pos
        return out

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        """``size`` values of [low, high) as ``Generator.integers(low, high, size)`` (int64)
        draws them (high − low <= 2³²)."""
        r = high - low - 1
        if not 0 <= r <= 0xFFFFFFFF or size < 0:
            raise InvalidParameter(f"Draws.integers draws from 1 to 2**32 values, got [{low}, {high})")
        out = np.empty(size, dtype=np.int64)
        if r == 0:
            out[:] = low
            return out
        excl = np.uint64(r + 1)
        threshold = np.uint64((0xFFFFFFFF - r) % (r + 1))
        done = 0
        while done < size:
            need = size - done
            if self._pos + need > len(self._array):
                self._refill(need)
            m = self._array[self._pos:self._pos + need].astype(np.uint64) * excl
            bad = np.flatnonzero((m & np.uint64(0xFFFFFFFF)) < threshold)  # none for r = 2³² − 1
            if len(bad) == 0:
                out[done:] = (m >> np.uint64(32)).astype(np.int64) + low
                self._pos += need
                break
            i = int(bad[0])                 # rejected: numpy redraws this one value
            out[done:done + i] = (m[:i] >> np.uint64(32)).astype(np.int64) + low
            self._pos += i + 1
            m1 = int(m[i])
            while (m1 & 0xFFFFFFFF) < int(threshold):
                if self._pos >= len(self._list):
                    self._refill(1)
                m1 = self._list[self._pos] * (r + 1)
                self._pos += 1
            out[done + i] = (m1 >> 32) + low
            done += i + 1
        return out


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


def _best_split_small(of_rows, rank_j, xs_j, ys_j):
    """(gain, threshold) of the best cut of one feature on a few rows, in plain Python: the
    same arithmetic as :func:`_best_splits`, operation for operation (so the same cut).
    ``of_rows``: ``itemgetter(*rows)`` of the node's rows (2 or more); ``rank_j``: each row's
    place in the tree's rows sorted by the feature (ties by row), and ``xs_j``, ``ys_j`` the
    feature values and targets in that order, so sorting the rows' places (plain integers)
    sorts the rows as a stable sort by value would."""
    of_places = itemgetter(*sorted(of_rows(rank_j)))
    xs = of_places(xs_j)
    if xs[0] == xs[-1]:  # one value: no cut
        return -math.inf, 0.0
    ys = of_places(ys_j)
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




def fit_tree(x, y, rng=None, candidates: int | None = None, *, order=None) -> dict:
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
    is summed once the tree is grown (:func:`_node_means`). ``order``, when given, is that
    sort (``numpy.argsort(x.T, axis=1, kind="stable")``, as :func:`fit_forest` finds it)."""
    x, y = _check(x, y)
    n, p = x.shape
    all_features = candidates is None or candidates >= p
    xt = x.T.copy()
    if order is None:
        order = np.argsort(xt, axis=1, kind="stable")  # per feature, the rows by value
    ks = np.arange(1, max(n, 1), dtype=float)
    everything = np.arange(p)
    columns, yl = xt.tolist(), y.tolist()
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n), axis=1)
    ranks = rank.tolist()
    sorted_x, sorted_y = np.take_along_axis(xt, order, axis=1).tolist(), y[order].tolist()
    # a split leaves rows on both sides, so a tree of n rows has at most 2n − 1 nodes
    feature: list[int] = [-1] * (2 * n)
    threshold: list[float] = [0.0] * (2 * n)
    left: list[int] = [-1] * (2 * n)
    right: list[int] = [-1] * (2 * n)
    nodes = 0

    def new_node(parent: int, side: int) -> int:
        nonlocal nodes
        node = nodes
        nodes += 1
        if parent >= 0:
            (left if side == 0 else right)[parent] = node
        return node

    if all_features:
        def draw() -> list:
            return list(range(p))
    elif isinstance(rng, Draws):
        drawn = int(candidates or 0)  # not None here: all_features is False

        def draw() -> list:
            return rng.choice(p, drawn)
    else:
        def draw() -> list:
            return rng.choice(p, size=candidates, replace=False).tolist()

    def grow_small(rows: list, depth: int, parent: int, side: int) -> None:
        nonlocal nodes
        todo = [(rows, depth, parent, side)]
        while todo:
            rows, depth, parent, side = todo.pop()
            node = nodes  # new_node(parent, side), inline: the small nodes are most of them
            nodes += 1
            if parent >= 0:
                if side:
                    right[parent] = node
                else:
                    left[parent] = node
            if len(rows) < MIN_SPLIT or depth >= MAX_DEPTH:  # MIN_SPLIT >= 2: getters give tuples
                continue
            of_rows = itemgetter(*rows)
            ys = of_rows(yl)
            if max(ys) == min(ys):
                continue
            best, j, thr = -math.inf, -1, 0.0
            for c in draw():
                gain, cut = _best_split_small(of_rows, ranks[c], sorted_x[c], sorted_y[c])
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
    tree = {"feature": np.array(feature[:nodes], dtype=np.int64), "threshold": np.array(threshold[:nodes]),
            "left": np.array(left[:nodes], dtype=np.int64), "right": np.array(right[:nodes], dtype=np.int64)}
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
    split (Amarís 2018 §4.1: 50 and 3), drawn by ``numpy.random.default_rng(seed)`` (through
    :class:`Draws`: the same numbers)."""
    x, y = _check(x, y)
    rng = Draws(np.random.default_rng(seed))  # the generator's numbers, drawn faster
    # each feature's values as their place among its distinct values: a bootstrap sample's
    # stable sort by these integers is its stable sort by value (a radix sort when small)
    codes = np.empty(x.shape[::-1], dtype=np.uint16 if len(y) < 2 ** 16 else np.int64)
    for j, column in enumerate(x.T):
        codes[j] = np.unique(column, return_inverse=True)[1].reshape(-1)
    forest = []
    for _ in range(trees):
        sample = rng.integers(0, len(y), size=len(y))
        order = np.argsort(codes[:, sample], axis=1, kind="stable")
        forest.append(fit_tree(x[sample], y[sample], rng, candidates, order=order))
    return forest


def predict_forest(forest: list, x) -> np.ndarray:
    """The mean of the trees' predictions."""
    return np.mean([predict_tree(t, x) for t in forest], axis=0)
