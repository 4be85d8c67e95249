"""The first regression-tree search of gpumodeler.core.learn.algorithms, kept as the test
oracle of the faster one: each node sorts its rows by each candidate feature and scans the
cumulative sums (the same CART rule, Amarís 2018 §4.1), one node and one feature at a time.
The fast search must grow the identical tree from the same rows and the same generator."""
from __future__ import annotations

import numpy as np

from gpumodeler.core.learn.algorithms import MAX_DEPTH, MIN_SPLIT


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
    """The tree as the five arrays of ``algorithms.fit_tree``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    stack: list[tuple[np.ndarray, int, int | None, int | None]] = [(np.arange(len(y)), 0, None, None)]
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
        stack.append((rows[~go_left], depth + 1, node, 1))
        stack.append((rows[go_left], depth + 1, node, 0))
    return {"feature": np.array(feature, dtype=np.int64), "threshold": np.array(threshold),
            "left": np.array(left, dtype=np.int64), "right": np.array(right, dtype=np.int64),
            "value": np.array(value)}

