"""The fast regression-tree search grows the same trees as the first one (kept in
learn_tree_oracle.py): the same splits, thresholds and children for the same rows and the
same generator, and the same node means to rounding; through both of its paths (numpy for
large nodes, plain Python for small ones) and at their boundary."""
from __future__ import annotations

import numpy as np
import pytest

from gpumodeler.core.learn import algorithms as alg
from tests.core import learn_tree_oracle as oracle


def _data(seed: int, n: int, p: int):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p))
    x[:, 0] = np.round(x[:, 0] * 2)  # ties: cuts only between distinct values
    if p > 2:
        x[:, 2] = rng.integers(0, 3, n)  # few levels
    y = 2 * x[:, 0] + np.sin(3 * x[:, 1]) + rng.normal(0, 0.2, n)
    y[: n // 5] = 1.5  # a block of equal targets: constant nodes are leaves
    return x, y


def _same(a: dict, b: dict) -> None:
    for key in ("feature", "threshold", "left", "right"):
        assert np.array_equal(a[key], b[key]), key
    assert a["value"] == pytest.approx(b["value"], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("small_node", [0, 5, 12, alg.SMALL_NODE, 10 ** 6])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fast_tree_is_the_oracle_tree(monkeypatch, small_node, seed):
    monkeypatch.setattr(alg, "SMALL_NODE", small_node)
    x, y = _data(seed, 300, 6)
    sample = np.random.default_rng(seed).integers(0, len(y), len(y))  # duplicates, as bootstrap
    for candidates in (None, 3, 1):
        a = alg.fit_tree(x[sample], y[sample], np.random.default_rng(seed), candidates)
        b = oracle.fit_tree(x[sample], y[sample], np.random.default_rng(seed), candidates)
        _same(a, b)
        assert (a["feature"] >= 0).sum() > 10


def test_the_fast_forest_is_the_oracle_forest_and_draws_the_generator_alike(monkeypatch):
    x, y = _data(9, 500, 8)
    fast = alg.fit_forest(x, y, seed=4, trees=6, candidates=3)
    monkeypatch.setattr(alg, "fit_tree", lambda x, y, rng, candidates, order=None:
                        oracle.fit_tree(x, y, rng, candidates))  # the oracle sorts for itself
    slow = alg.fit_forest(x, y, seed=4, trees=6, candidates=3)
    for a, b in zip(fast, slow):
        _same(a, b)  # tree 2 onwards only match if tree 1 drew the generator as often


def test_the_node_means_are_the_means_of_the_rows_reaching_each_node():
    x, y = _data(5, 200, 3)
    tree = alg.fit_tree(x, y, np.random.default_rng(0), 2)
    leaf = tree["feature"] < 0
    # each training row falls in a leaf whose value is the mean of the rows falling there
    predicted = alg.predict_tree(tree, x)
    for v in np.unique(predicted):
        assert v == pytest.approx(y[predicted == v].mean())
    assert np.isclose(tree["value"][0], y.mean()) and leaf.sum() > 5


@pytest.mark.parametrize("small_node", [0, 10 ** 6])
def test_no_cut_between_equal_values_on_either_path(monkeypatch, small_node):
    """Targets rising within a run of equal values: the best cut of the targets alone falls
    inside the run, where no cut is allowed; the tree cuts at the run's end instead."""
    monkeypatch.setattr(alg, "SMALL_NODE", small_node)
    x = np.zeros((80, 2))
    x[60:, 0] = 1.0
    x[:, 1] = np.arange(80) % 2  # another feature of equal values only in pairs
    y = np.arange(80, dtype=float)
    tree = alg.fit_tree(x, y, None, None)
    _same(tree, oracle.fit_tree(x, y, None, None))
    assert (tree["feature"][0], tree["threshold"][0]) == (0, 0.5)


def test_draws_are_the_generators_numbers():
    """Draws reads the generator's 32-bit stream ahead in blocks and draws as numpy does:
    choices of k of p without replacement and bootstrap integers, interleaved, are the
    generator's own (ranges near 2**32 reject often, so the redraws are compared too)."""
    for seed in range(25):
        plan = np.random.default_rng(1000 + seed)
        gen, draws = np.random.default_rng(seed), alg.Draws(np.random.default_rng(seed))
        draws.BLOCK = 61  # refills inside every kind of draw
        for _ in range(40):
            kind = plan.integers(0, 3)
            if kind == 0:
                high = int(plan.choice([1, 2, 3, 2880, 3_000_000_000, 2 ** 32]))
                size = int(plan.integers(0, 200))
                assert np.array_equal(draws.integers(0, high, size), gen.integers(0, high, size=size))
            elif kind == 1:
                r = int(plan.choice([0, 1, 5, 2 ** 31 + 7, 3_000_000_000, 2 ** 32 - 1]))
                assert draws._bounded(r) == gen.integers(0, r, endpoint=True)
            else:
                p = int(plan.choice([1, 3, 13, 500, 10_000]))
                k = int(plan.integers(0, min(p, 40) + 1))
                assert draws.choice(p, k) == gen.choice(p, size=k, replace=False).tolist()


class _Stream:
    """A generator that gives the 32-bit values it is told to, then zeros."""

    def __init__(self, values):
        self.values = list(values)

    def integers(self, low, high, size, dtype):
        out, self.values = self.values[:size], self.values[size:]
        return np.array(out + [0] * (size - len(out)), dtype=dtype)


def test_a_choices_rare_redraw_is_the_bounded_draws():
    """choice writes numpy's bounded draw out for speed; where a value is rejected (here
    0, rejected for a range of 3, 5 and 13) it is the draw one value at a time."""
    stream = [0, 0, 7 << 29, 0, 5 << 28, 123456789, 0, 3 << 30, 99, 2 ** 32 - 1, 0, 1 << 31]
    slow_draws = alg.Draws(_Stream(stream))
    slow: list = []
    for j in range(9, 13):                     # Floyd's selection, then the shuffle
        v = slow_draws._bounded(j)
        slow.append(j if v in slow else v)
    for i in range(3, 0, -1):
        k = slow_draws._bounded(i)
        slow[i], slow[k] = slow[k], slow[i]
    fast_draws = alg.Draws(_Stream(stream))
    assert fast_draws.choice(13, 4) == slow
    assert fast_draws._pos == slow_draws._pos > 7  # 7 values without a rejection


def test_the_forest_is_grown_from_the_generators_own_draws():
    """fit_forest draws through Draws and sorts each bootstrap sample by integer codes; the
    trees are those of the plain loop over the generator and fit_tree's own sort."""
    x, y = _data(11, 400, 7)
    gen = np.random.default_rng(6)
    expected = []
    for _ in range(5):
        sample = gen.integers(0, len(y), size=len(y))
        expected.append(alg.fit_tree(x[sample], y[sample], gen, 3))
    for a, b in zip(alg.fit_forest(x, y, seed=6, trees=5, candidates=3), expected, strict=True):
        _same(a, b)
        assert np.array_equal(a["value"], b["value"])
