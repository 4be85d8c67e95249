"""The learners of Amarís 2018 ch. 4 (gpumodeler.core.learn): linear regression recovers a
known function of the Table 4.1 features; SVR stays within its ε; the random forest is
seeded, deterministic and its trees point forward."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.learn import algorithms as alg
from gpumodeler.core.learn.features import AMARIS_FEATURES, amaris_values, log2_table, spearman
from gpumodeler.core.learn.model import fit
from learn_rows import gpus, rows

#: log2 T = C0 + Σ c_j log2(1 + x_j) over Table 4.1 (Amarís 2018 §4.2.1)
COEFFS = dict(zip(AMARIS_FEATURES, np.linspace(-0.6, 0.9, len(AMARIS_FEATURES))))
C0 = -30.0


def known_time(row) -> float:
    values = amaris_values(row)
    return 2.0 ** (C0 + sum(c * math.log2(1 + values[n]) for n, c in COEFFS.items()))


def test_lr_recovers_a_known_function_of_the_table_4_1_features():
    train = rows(gpus(6), time=known_time)
    model = fit(train, "lr")
    assert model.feature_names == list(AMARIS_FEATURES)
    # weights back in log2 units of the features: w / scale
    recovered = model.params["weights"] / model.scale
    assert recovered == pytest.approx(list(COEFFS.values()), abs=1e-6)
    fresh = rows(gpus(6), seed=11, time=known_time)  # other sizes and metrics, same GPUs
    assert model.predict(fresh) == pytest.approx([r.time_s for r in fresh], rel=1e-6)


def test_lr_fails_to_recover_a_function_it_cannot_express():
    """The check above can fail: a time quadratic in log2 of a feature is not recovered."""
    def quadratic(row):
        return 2.0 ** (0.3 * math.log2(1 + amaris_values(row)["FLOPS_SP"]) ** 2 - 80)
    train = rows(gpus(6), time=quadratic)
    pred = fit(train, "lr").predict(train)
    assert np.max(np.abs(np.log2(pred) - np.log2([r.time_s for r in train]))) > 0.5


def test_svr_fits_exact_linear_data_to_about_its_epsilon():
    """The regularised fit (½‖w‖², C = 1) sits near the ε tube: errors of the order of ε in
    log2 units, on targets spanning many."""
    train = rows(gpus(6), time=known_time)
    model = fit(train, "svr")
    y = np.log2([r.time_s for r in train])
    err = np.abs(model.predict_log2(train) - y)
    assert np.ptp(y) > 20 * alg.SVR_EPSILON
    assert np.median(err) < 1.5 * alg.SVR_EPSILON
    assert err.max() > 1e-6  # an ε-insensitive, regularised fit, not least squares


def test_svr_primal_solution_is_optimal():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = x @ [1.0, -2.0, 0.5, 0.0] + 0.3 + rng.normal(0, 0.3, 200)
    w, b = alg.fit_svr(x, y)
    f = alg._svr_objective(x, y, w, b, alg.SVR_EPSILON, alg.SVR_C)
    for d in np.eye(5) * 1e-4:
        assert alg._svr_objective(x, y, w + d[:4], b + d[4], alg.SVR_EPSILON, alg.SVR_C) >= f - 1e-9
        assert alg._svr_objective(x, y, w - d[:4], b - d[4], alg.SVR_EPSILON, alg.SVR_C) >= f - 1e-9


def test_a_tree_splits_a_step_and_its_children_point_forward():
    x = np.arange(40, dtype=float).reshape(-1, 1)
    y = np.where(x[:, 0] < 17, 1.0, 5.0)
    tree = alg.fit_tree(x, y)
    assert tree["feature"][0] == 0 and 16 < tree["threshold"][0] < 17
    assert alg.predict_tree(tree, [[3.0], [30.0]]) == pytest.approx([1.0, 5.0])
    inner = tree["feature"] >= 0
    idx = np.arange(len(tree["feature"]))
    assert np.all(tree["left"][inner] > idx[inner]) and np.all(tree["right"][inner] > idx[inner])


def test_the_forest_is_seeded_and_uses_50_trees_of_3_candidates():
    data = rows(gpus(4), time=known_time)
    a, b = fit(data, "rf", seed=7), fit(data, "rf", seed=7)
    c = fit(data, "rf", seed=8)
    assert len(a.params["trees"]) == alg.FOREST_TREES == 50
    assert np.array_equal(a.predict(data), b.predict(data))
    assert not np.array_equal(a.predict(data), c.predict(data))
    # in-sample, a forest of log2 times is close
    assert np.median(np.abs(a.predict(data) / [r.time_s for r in data] - 1)) < 0.25


def test_ridge_with_no_rows_is_zero():
    w, b = alg.fit_ridge(np.zeros((0, 3)), np.zeros(0), 1.0)
    assert b == 0 and not w.any()


def test_bad_tables_are_refused():
    with pytest.raises(InvalidParameter):
        alg.fit_linear([[1.0, math.nan]], [1.0])
    with pytest.raises(InvalidParameter):
        alg.fit_linear([[1.0], [2.0]], [1.0])
    with pytest.raises(InvalidParameter):
        fit([], "lr")


def test_spearman_of_ranks():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert spearman(a, a ** 3) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)
    assert spearman(a, np.ones(4)) == 0.0


def test_missing_features_are_zero_and_named():
    data = rows(gpus(2))
    for r in data:
        r.metrics.pop("shared_load_transactions")
    table, lacking = log2_table(data, "amaris", AMARIS_FEATURES)
    assert lacking == ["TotalLoadSM"]
    assert not table[:, AMARIS_FEATURES.index("TotalLoadSM")].any()


def test_extraction_keeps_correlated_metrics_one_per_cluster():
    """Amarís 2018 Algorithm 1: noise metrics fail |ρ| >= 0.75; near-duplicate metrics fall in
    one cluster, so no two of them are kept; 5 features plus 2 GPU parameters."""
    from gpumodeler.core.learn.features import EXTRACTED_GPU, extract
    rng = np.random.default_rng(1)
    data = rows(gpus(3), sizes=range(10, 22))
    base = {}
    for r in data:
        t = r.threads * rng.uniform(0.9, 1.1)
        base[id(r)] = t
        for g in range(6):  # six groups of two near-duplicates, all rising with the time
            v = t ** (1 + g / 3) * rng.uniform(0.8, 1.25) * (g + 1)
            r.metrics[f"g{g}a"] = v
            r.metrics[f"g{g}b"] = v * 1.0001
        for k in range(4):
            r.metrics[f"noise{k}"] = float(rng.uniform(1, 1e6))
    y = np.log2([base[id(r)] for r in data])
    names, details = extract(data, y, 5)
    kept = names[:-2]
    assert names[-2:] == list(EXTRACTED_GPU) and len(kept) == 5
    assert not [n for n in kept if n.startswith("noise")]
    groups = [n[:2] for n in kept if n.startswith("g")]
    assert len(groups) == len(set(groups))
    assert details["passing"] >= 12
