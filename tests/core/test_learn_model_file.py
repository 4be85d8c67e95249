"""Learned-model files are data: a saved model predicts as the fitted one, and hostile
files (huge sizes, wrong types, cyclic trees, NaN, code) are refused with FormatError."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.learn.model import fit
from gpumodeler.core.learn.model_file import (MAX_TREES, model_from_text, model_to_json,
                                              model_to_text)
from learn_rows import gpus, rows


def timed(row):
    return 1e-9 * row.threads * (1 + row.metrics["flop_count_sp"] / row.threads / 50)


@pytest.fixture(scope="module")
def data():
    return rows(gpus(3), analytical=lambda r: 1e-9 * r.threads, time=timed)


@pytest.mark.parametrize("method", ["lr", "svr", "rf", "hybrid"])
def test_a_saved_model_predicts_as_the_fitted_one(data, method):
    model = fit(data, method)
    again = model_from_text(model_to_text(model))
    assert np.array_equal(again.predict(data), model.predict(data))
    assert again.training == json.loads(json.dumps(model.training))


def test_extracted_features_round_trip(data):
    model = fit(data, "lr", "extracted")
    assert model.feature_names[-2:] == ["num_of_cores", "L2_size"]
    assert 2 < len(model.feature_names) <= 7
    again = model_from_text(model_to_text(model))
    assert np.array_equal(again.predict(data), model.predict(data))


@pytest.fixture(scope="module")
def forest(data):
    return model_to_json(fit(data, "rf"))


def refused(doc, words):
    text = doc if isinstance(doc, str) else json.dumps(doc)
    with pytest.raises(FormatError, match=words):
        model_from_text(text)


def test_nan_and_infinity_are_refused(forest):
    text = json.dumps(forest)
    refused(text.replace(str(forest["mean"][0]), "NaN", 1), "not a number JSON allows")
    refused(text.replace(str(forest["mean"][0]), "Infinity", 1), "not a number JSON allows")
    refused(text.replace(str(forest["mean"][0]), "1e999", 1), "finite")


def test_cyclic_tree_indices_are_refused(forest):
    doc = copy.deepcopy(forest)
    tree = doc["params"]["trees"][0]
    inner = next(i for i, f in enumerate(tree["feature"]) if f >= 0)
    tree["left"][inner] = inner  # a node that is its own child
    refused(doc, "later node")
    doc = copy.deepcopy(forest)
    doc["params"]["trees"][0]["right"][0] = 0
    refused(doc, "later node")


def test_out_of_range_indices_are_refused(forest):
    doc = copy.deepcopy(forest)
    tree = doc["params"]["trees"][1]
    tree["left"][0] = len(tree["value"]) + 5
    refused(doc, "within its")
    doc = copy.deepcopy(forest)
    doc["params"]["trees"][1]["feature"][0] = 999
    refused(doc, "beyond the model")


def test_huge_sizes_are_refused(forest):
    doc = copy.deepcopy(forest)
    doc["params"]["trees"] = doc["params"]["trees"][:1] * (MAX_TREES + 1)
    refused(doc, "1 to 1000 trees")
    doc = copy.deepcopy(forest)
    doc["feature_names"] = [f"f{i}" for i in range(100_000)]
    refused(doc, "at most 512")
    refused('{"format": "gpumodeler-learned-model", "version": 1, "seed": 1' + "0" * 5000 + "}",
            "not valid JSON")
    refused("[" * 100_000 + "]" * 100_000, "not valid JSON")


@pytest.mark.parametrize("path, value, words", [
    (("mean",), "0.1", "list of"),
    (("mean",), [1.0], "list of"),
    (("params", "trees"), {"a": 1}, "list of 1 to"),
    (("training",), [], "must be an object"),
    (("method",), "pickle", "method must be one of"),
    (("format",), "other", "not a gpumodeler learned model"),
    (("version",), 2, "version 2"),
    (("scale",), "neg", "list of"),
])
def test_wrong_types_are_refused(forest, path, value, words):
    doc = copy.deepcopy(forest)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    refused(doc, words)


def test_a_tree_of_wrong_types_is_refused(forest):
    doc = copy.deepcopy(forest)
    doc["params"]["trees"][0]["threshold"][0] = "__import__('os').system('false')"
    refused(doc, "numbers only")
    doc = copy.deepcopy(forest)
    doc["params"]["trees"][0]["left"][0] = 1.5
    refused(doc, "whole numbers")


def test_a_pickle_is_no_model_file(tmp_path):
    import pickle
    payload = pickle.dumps({"format": "gpumodeler-learned-model"}).decode("latin-1")
    refused(payload, "not valid JSON")


def test_the_file_is_plain_json(data):
    text = model_to_text(fit(data, "rf"))
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert all(isinstance(v, (int, float)) and math.isfinite(v)
               for t in doc["params"]["trees"] for v in t["value"])
