"""An evaluation works out each row's features and digest part once for all its folds and
methods (the ``memo`` of log2_table, fit and predict); the numbers are those of fitting and
predicting every fold afresh."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpumodeler.core.learn.evaluate import evaluate
from gpumodeler.core.learn.features import AMARIS_FEATURES, log2_table
from gpumodeler.core.learn.model import METHODS, fit, training_digest
from learn_rows import gpus, rows


def _rows():
    return rows(gpus(4), time=lambda r: 1e-6 * (1 + r.size / 2 ** 14) * (1 + len(r.kernel)),
                analytical=lambda r: 1e-6 * (1 + r.size / 2 ** 15))


def _same_model(a, b):
    assert a.training == b.training and a.feature_names == b.feature_names
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.scale, b.scale)
    for key, value in a.params.items():
        if key == "trees":
            for s, t in zip(value, b.params[key], strict=True):
                assert all(np.array_equal(s[k], t[k]) for k in s)
        elif isinstance(value, np.ndarray):
            assert np.array_equal(value, b.params[key])
        else:
            assert value == b.params[key]


def test_a_filled_memo_changes_no_fit_and_no_prediction():
    data = _rows()
    train, test = data[24:], data[:24]
    memo: dict = {}
    for method in METHODS:
        fit(data, method, seed=2, memo=memo)  # fills the memo with every row
    for method in METHODS:
        fresh, memoised = fit(train, method, seed=2), fit(train, method, seed=2, memo=memo)
        _same_model(fresh, memoised)
        assert np.array_equal(fresh.predict(test), memoised.predict(test, memo))
    assert len(memo) >= 2 * len(data)


def test_a_memo_entry_of_another_row_object_is_not_used():
    """Entries are keyed by the row's id and checked to be that row (an id can be reused
    once a row is gone)."""
    data = _rows()
    row, other = data[0], data[1]
    names = tuple(AMARIS_FEATURES)
    memo = {(id(row), "amaris", names): (other, [99.0] * len(names), ["Input_Size"]),
            (id(row), "digest", ("amaris", names)): (other, "not this row")}
    table, lacking = log2_table([row], "amaris", names, memo)
    expected, expected_lacking = log2_table([row], "amaris", names)
    assert np.array_equal(table, expected) and lacking == expected_lacking == []
    assert training_digest([row], table, memo, ("amaris", names)) == training_digest([row], expected)
    assert memo[(id(row), "amaris", names)][0] is row


def test_evaluate_gives_the_numbers_of_each_fold_fitted_afresh():
    data = _rows()
    result = evaluate(data, list(METHODS), "gpu", seed=4)
    for held in {r.gpu.name for r in data}:
        test = [r for r in data if r.gpu.name == held]
        train = [r for r in data if r.gpu.name != held]
        for method in METHODS:
            pred = fit(train, method, seed=4, cv_by="gpu").predict(test)
            got = [p.predicted_s for p in result["points"] if p.held_out == held and p.method == method]
            assert got == [float(v) for v in pred if math.isfinite(v)]
    assert {s["method"] for s in result["summary"]} == set(METHODS)


def test_the_hybrids_kept_codes_are_read_only_and_per_list_of_names():
    """The hybrid's cross-validation asks for the codes of the same name lists once per
    setting; they are kept, so no caller may change them."""
    from gpumodeler.core.learn.model import _codes
    uniq, codes = _codes(["b", "a", "b", "c"])
    assert uniq == ("b", "a", "c") and codes.tolist() == [0, 1, 0, 2]
    assert _codes(["b", "a", "b", "c"])[1] is codes and _codes(["a", "b"])[1].tolist() == [0, 1]
    with pytest.raises(ValueError):
        codes[0] = 5
