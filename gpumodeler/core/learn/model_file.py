"""Learned-model files: JSON with the parameters and the trees' arrays as data.

A shared model file must not be able to run code, so it is never unpickled or evaluated:
:func:`model_from_text` parses JSON (NaN and infinities refused), checks every key's type,
every number's finiteness and every array's length against the model's feature count and
the limits below, and checks that each tree's child indices point forward inside the tree
(so a tree has no cycle and a prediction ends). Anything else raises
:class:`~gpumodeler.core.errors.FormatError` saying what is wrong.

Format (``"format": "gpumodeler-learned-model"``, ``"version": 1``): ``method``,
``features``, ``feature_names``, ``mean``, ``scale``, ``seed``, ``params`` (``lr``/``svr``:
``weights``, ``intercept``; ``rf``: ``trees``, each ``feature``, ``threshold``, ``left``,
``right``, ``value``; ``hybrid``: ``weights``, ``intercept``, ``kernel_offsets``, ``gpu_offsets``, ``arch_offsets``,
``shrinkage``, ``base_model``), ``training`` (``gpus``, ``kernels``, ``rows``, ``digest``,
``ranges``) and ``notes``.
"""
from __future__ import annotations

import json
import math

import numpy as np

from gpumodeler.core.errors import FormatError
from gpumodeler.core.learn.features import FEATURE_SETS
from gpumodeler.core.learn.model import HYBRID_BASE, METHODS, LearnedModel

FORMAT = "gpumodeler-learned-model"
VERSION = 1
MAX_FEATURES = 512
MAX_TREES = 1000
MAX_NODES = 1 << 20  # per tree
MAX_TOTAL_NODES = 4_000_000
MAX_NAMES = 100_000
MAX_TEXT = 2000


def model_to_json(model: LearnedModel) -> dict:
    """The model as a JSON object (lists of numbers, no code)."""
    p = model.params
    if model.method == "rf":
        params = {"trees": [{k: t[k].tolist() for k in ("feature", "threshold", "left", "right", "value")}
                            for t in p["trees"]]}
    else:
        params = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in p.items()}
    return {"format": FORMAT, "version": VERSION, "method": model.method,
            "features": model.features, "feature_names": list(model.feature_names),
            "mean": model.mean.tolist(), "scale": model.scale.tolist(), "seed": model.seed,
            "params": params, "training": model.training, "notes": list(model.notes)}


def model_to_text(model: LearnedModel) -> str:
    return json.dumps(model_to_json(model), indent=1, allow_nan=False) + "\n"


def _bad(what: str):
    raise FormatError(f"learned model file: {what}")


def _refuse_constant(name):
    _bad(f"{name} is not a number JSON allows; give finite numbers")


def _obj(v, what):
    if not isinstance(v, dict):
        _bad(f"{what} must be an object, got {type(v).__name__}")
    return v


def _text(v, what):
    if not isinstance(v, str) or len(v) > MAX_TEXT:
        _bad(f"{what} must be a text of at most {MAX_TEXT} characters")
    return v


def _int(v, what, lo=0, hi=2 ** 62):
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        _bad(f"{what} must be a whole number from {lo} to {hi}")
    return v


def _number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        _bad(f"{what} must be a finite number")
    return float(v)


def _floats(v, what, size=None, limit=MAX_NODES):
    if not isinstance(v, list) or len(v) > limit or (size is not None and len(v) != size):
        _bad(f"{what} must be a list of {size if size is not None else f'at most {limit}'} numbers")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        _bad(f"{what} must hold numbers only")
    arr = np.array(v, dtype=float)
    if not np.all(np.isfinite(arr)):
        _bad(f"{what} must hold finite numbers only")
    return arr


def _ints(v, what, size):
    if not isinstance(v, list) or len(v) != size:
        _bad(f"{what} must be a list of {size} whole numbers")
    if not all(isinstance(x, int) and not isinstance(x, bool) and -1 <= x < MAX_NODES for x in v):
        _bad(f"{what} must hold whole numbers from -1 to {MAX_NODES - 1}")
    return np.array(v, dtype=np.int64)


def _names(v, what, limit=MAX_NAMES):
    if not isinstance(v, list) or len(v) > limit:
        _bad(f"{what} must be a list of at most {limit} texts")
    return [_text(x, f"an entry of {what}") for x in v]


def _tree(t, k, features):
    t = _obj(t, f"tree {k}")
    value = _floats(t.get("value"), f"tree {k} value")
    n = len(value)
    if n == 0:
        _bad(f"tree {k} has no nodes")
    tree = {"value": value, "threshold": _floats(t.get("threshold"), f"tree {k} threshold", n),
            "feature": _ints(t.get("feature"), f"tree {k} feature", n),
            "left": _ints(t.get("left"), f"tree {k} left", n),
            "right": _ints(t.get("right"), f"tree {k} right", n)}
    idx = np.arange(n)
    leaf = tree["feature"] < 0
    if np.any(tree["feature"] >= features):
        _bad(f"tree {k} splits on a feature beyond the model's {features}")
    if np.any(leaf & ((tree["left"] != -1) | (tree["right"] != -1))):
        _bad(f"tree {k}: a leaf (feature -1) must have children -1")
    inner = ~leaf
    for side in ("left", "right"):
        child = tree[side][inner]
        if np.any(child <= idx[inner]) or np.any(child >= n):
            _bad(f"tree {k}: a {side} child index must point to a later node of the tree "
                 f"(no cycles), within its {n} nodes")
    return tree


def model_from_json(data) -> LearnedModel:
    """A validated :class:`LearnedModel` from a parsed JSON object (module docstring)."""
    data = _obj(data, "the file")
    if data.get("format") != FORMAT:
        _bad(f"not a gpumodeler learned model (\"format\" must be {FORMAT!r})")
    if data.get("version") != VERSION:
        _bad(f"version {data.get('version')!r} is not supported; this gpumodeler reads version {VERSION}")
    method = data.get("method")
    if method not in METHODS:
        _bad(f"method must be one of {', '.join(METHODS)}")
    features = data.get("features")
    if features not in FEATURE_SETS:
        _bad(f"features must be one of {', '.join(FEATURE_SETS)}")
    names = _names(data.get("feature_names"), "feature_names", MAX_FEATURES)
    p = len(names)
    mean = _floats(data.get("mean"), "mean", p)
    scale = _floats(data.get("scale"), "scale", p)
    if np.any(scale <= 0):
        _bad("scale must hold numbers > 0")
    seed = _int(data.get("seed", 0), "seed")
    raw = _obj(data.get("params"), "params")
    if method == "rf":
        trees = raw.get("trees")
        if not isinstance(trees, list) or not 1 <= len(trees) <= MAX_TREES:
            _bad(f"params.trees must be a list of 1 to {MAX_TREES} trees")
        total = sum(len(t.get("value", ())) if isinstance(t, dict) and isinstance(t.get("value"), list)
                    else 0 for t in trees)
        if total > MAX_TOTAL_NODES:
            _bad(f"the forest has {total} nodes; at most {MAX_TOTAL_NODES} are read")
        params: dict = {"trees": [_tree(t, k, p) for k, t in enumerate(trees)]}
    else:
        params = {"weights": _floats(raw.get("weights"), "params.weights", p),
                  "intercept": _number(raw.get("intercept"), "params.intercept")}
        if method == "svr":
            params["epsilon"] = _number(raw.get("epsilon", 0.1), "params.epsilon")
            params["c"] = _number(raw.get("c", 1.0), "params.c")
        if method == "hybrid":
            for key in ("kernel_offsets", "gpu_offsets", "arch_offsets"):
                offsets = _obj(raw.get(key, {}), f"params.{key}")
                if len(offsets) > MAX_NAMES:
                    _bad(f"params.{key} has more than {MAX_NAMES} entries")
                params[key] = {_text(k, "a name"): _number(v, f"the offset of {k[:40]!r}")
                               for k, v in offsets.items()}
            params["shrinkage"] = _number(raw.get("shrinkage"), "params.shrinkage")
            params["use_features"] = raw.get("use_features", True) is True
            params["use_arch"] = raw.get("use_arch", False) is True
            cv_error = raw.get("cv_error")
            params["cv_error"] = None if cv_error is None else _number(cv_error, "params.cv_error")
            params["cv_by"] = _text(raw.get("cv_by", "gpu"), "params.cv_by")
            if raw.get("base_model") != HYBRID_BASE:
                _bad(f"params.base_model must be {HYBRID_BASE!r}")
            params["base_model"] = HYBRID_BASE
    t = _obj(data.get("training"), "training")
    ranges = _obj(t.get("ranges"), "training.ranges")
    if set(ranges) != set(names):
        _bad("training.ranges must give one [low, high] per feature name")
    training = {"gpus": _names(t.get("gpus"), "training.gpus"),
                "kernels": _names(t.get("kernels"), "training.kernels"),
                "rows": _int(t.get("rows"), "training.rows"),
                "digest": _text(t.get("digest"), "training.digest"),
                "ranges": {n: _floats(ranges[n], f"the range of {n}", 2).tolist() for n in names}}
    notes = _names(data.get("notes", []), "notes", 100)
    return LearnedModel(method, features, names, mean, scale, params, training, seed, notes)


def model_from_text(text: str) -> LearnedModel:
    """Parse and validate a model file's text (FormatError on anything unexpected)."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except FormatError:
        raise
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"learned model file: not valid JSON ({str(exc)[:80]})") from None
    return model_from_json(data)
