"""A learned model: fitted on measured rows, predicting kernel times, kept as plain data.

Every method works in log2 space (Amarís 2018 §4.2.1: log2 of all data, predictions
back-transformed by 2^x) on features standardised with the training rows' mean and
standard deviation (§4.2.2 normalises after the log2 transform):

* ``lr``, ``svr``, ``rf`` predict log2 of the time from the feature set (default
  ``amaris``, Table 4.1); :mod:`~gpumodeler.core.learn.algorithms` says how each is fitted.
* ``hybrid`` (not in the thesis) predicts log2 of the default analytical model's time
  (Gajger 2017 eq. 4.1–4.7, model ``gajger``) plus a learned residual
  ``r = log2(T_measured / T_gajger)``, an additive model
  ``r̂ = b + offset_kernel + offset_gpu + w·x`` with ``x`` the analytical quantities that vary
  within one kernel on one GPU (:data:`~gpumodeler.core.learn.features.HYBRID_FEATURES`).
  ``w, b`` minimise ``Σ (r − offsets − w·x − b)² + k (‖w‖² + b²)`` (ridge, shrinking
  towards 0); a kernel's (a GPU's) offset is the mean of its rows' remaining residual shrunk
  by ``n / (n + k)``; the three are fitted alternately (:data:`BACKFIT_ROUNDS` rounds from
  zero). A GPU's offset is shrunk with ``k =`` :data:`HYBRID_SHRINKAGE`; for ``b``, ``w``
  and the kernels' offsets, ``k`` and whether ``w·x`` is used at all are chosen from
  :data:`HYBRID_SETTINGS` (from ``k = 1`` to ``k = 10⁹``, which leaves only the GPU offsets)
  by leave-one-group-out inside the training rows, over the groups of the evaluation
  protocol (GPUs by default), on the mean of ``|T_predicted / T_measured − 1|``; with fewer
  than 3 groups the first setting (``k = 10``, no features). With no rows every term is 0,
  so the hybrid
  *is* the analytical model; with a few rows it moves only part of the way; a kernel or a
  GPU it never saw gets no offset of its own (the common ``b`` and ``w·x`` still apply).
  Rows the default model cannot predict cannot be predicted by the hybrid either.

A model records its training data: GPUs, kernels, rows, a SHA-256 digest of the rows
(kernel, GPU, grid, block, time, features) and each feature's range; :meth:`LearnedModel.
outside` names the features of a row outside those ranges (a prediction there is an
extrapolation and is flagged).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field

import numpy as np

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.learn import algorithms as alg
from gpumodeler.core.learn.features import (
    AMARIS_FEATURES, ANALYTICAL_FEATURES, FEATURE_SETS, HYBRID_FEATURES, extract, log2_table)

METHODS = ("lr", "svr", "rf", "hybrid")
DEFAULT_FEATURES = {"lr": "amaris", "svr": "amaris", "rf": "amaris", "hybrid": "analytical"}
HYBRID_BASE = "gajger"
HYBRID_SHRINKAGE = 1.0
#: (shrinkage k, whether the ridge on features is used), tried in this order; the first
#: is used when the training rows have fewer than 3 groups to cross-validate over
HYBRID_SETTINGS = ((10.0, False), (HYBRID_SHRINKAGE, True), (10.0, True), (100.0, True),
                   (HYBRID_SHRINKAGE, False), (100.0, False), (1e9, False))
BACKFIT_ROUNDS = 20
#: a feature counts as outside the trained range beyond this margin in log2 units
RANGE_MARGIN = 0.05


@dataclass
class LearnedModel:
    method: str
    features: str
    feature_names: list
    mean: np.ndarray
    scale: np.ndarray
    params: dict
    training: dict
    seed: int = 0
    notes: list = field(default_factory=list)

    def _table(self, rows):
        table, _ = log2_table(rows, self.features, self.feature_names)
        return table

    def predict_log2(self, rows) -> np.ndarray:
        """log2 of the predicted times (NaN where the hybrid's base model has no time)."""
        if not rows:
            return np.zeros(0)
        z = (self._table(rows) - self.mean) / self.scale
        p = self.params
        if self.method in ("lr", "svr"):
            return z @ p["weights"] + p["intercept"]
        if self.method == "rf":
            return alg.predict_forest(p["trees"], z)
        base = np.array([math.log2(r.analytical[HYBRID_BASE]) if HYBRID_BASE in r.analytical
                         else math.nan for r in rows])
        offsets = np.array([p["kernel_offsets"].get(r.kernel, 0.0)
                            + p["gpu_offsets"].get(r.gpu.name, 0.0) for r in rows])
        return base + offsets + z @ p["weights"] + p["intercept"]

    def predict(self, rows) -> np.ndarray:
        """Predicted times in seconds (NaN where the model cannot predict)."""
        with np.errstate(over="ignore"):
            return np.exp2(self.predict_log2(rows))

    def outside(self, row) -> list[str]:
        """The features of ``row`` outside the trained ranges (an extrapolation)."""
        values = self._table([row])[0]
        out = []
        for name, v in zip(self.feature_names, values):
            lo, hi = self.training["ranges"][name]
            if v < lo - RANGE_MARGIN or v > hi + RANGE_MARGIN:
                out.append(name)
        return out

    def describe(self) -> str:
        t = self.training
        return (f"{self.method} on {self.features} features, trained on {t['rows']} row(s): "
                f"{len(t['kernels'])} kernel(s), GPUs {', '.join(t['gpus']) or '(none)'}; "
                f"digest {t['digest'][:12]}")


def training_digest(rows, table) -> str:
    """SHA-256 of the training rows as canonical JSON (order-independent)."""
    items = sorted(json.dumps([r.kernel, r.gpu.name, list(r.grid), list(r.block), repr(r.time_s),
                               [repr(float(v)) for v in table[i]]])
                   for i, r in enumerate(rows))
    return hashlib.sha256("\n".join(items).encode()).hexdigest()


def fit(rows, method: str, features: str | None = None, *, seed: int = 0,
        extracted: int = 5, cv_by: str = "gpu") -> LearnedModel:
    """A :class:`LearnedModel` of ``method`` on ``features`` fitted to ``rows``; ``cv_by``
    (``gpu``, ``kernel``, ``size``): the groups the hybrid's shrinkage is chosen over."""
    if method not in METHODS:
        raise InvalidParameter(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    features = features or DEFAULT_FEATURES[method]
    if features not in FEATURE_SETS:
        raise InvalidParameter(f"unknown feature set {features!r}; valid: {', '.join(FEATURE_SETS)}")
    notes = []
    if method == "hybrid":
        kept = [r for r in rows if HYBRID_BASE in r.analytical]
        if len(kept) < len(rows):
            notes.append(f"{len(rows) - len(kept)} row(s) without a {HYBRID_BASE} prediction left out")
        rows = kept
    elif not rows:
        raise InvalidParameter(f"no rows to fit {method} to; give measurements with durations")
    y = np.array([math.log2(r.time_s) for r in rows])
    if features == "amaris":
        names = list(AMARIS_FEATURES)
    elif features == "analytical":
        names = list(HYBRID_FEATURES if method == "hybrid" else ANALYTICAL_FEATURES)
    else:
        names, details = extract(rows, y, extracted)
        notes.append(f"feature extraction: {details['passing']} of {details['candidates']} "
                     f"metrics with |Spearman rho| >= 0.75; kept {', '.join(names)}")
    table, lacking = log2_table(rows, features, names)
    if lacking:
        notes.append(f"features missing in some rows (taken as 0): {', '.join(lacking)}")
    mean = table.mean(axis=0) if len(rows) else np.zeros(len(names))
    scale = table.std(axis=0) if len(rows) else np.ones(len(names))
    scale = np.where(scale > 1e-12, scale, 1.0)
    z = (table - mean) / scale
    if method == "lr":
        w, b = alg.fit_linear(z, y)
        params = {"weights": w, "intercept": b}
    elif method == "svr":
        w, b = alg.fit_svr(z, y)
        params = {"weights": w, "intercept": b, "epsilon": alg.SVR_EPSILON, "c": alg.SVR_C}
    elif method == "rf":
        params = {"trees": alg.fit_forest(z, y, seed)}
    else:
        params = _fit_hybrid(rows, z, y, cv_by)
    ranges = {n: [float(table[:, j].min()), float(table[:, j].max())] if len(rows) else [0.0, 0.0]
              for j, n in enumerate(names)}
    training = {"gpus": sorted({r.gpu.name for r in rows}), "kernels": sorted({r.kernel for r in rows}),
                "rows": len(rows), "digest": training_digest(rows, table), "ranges": ranges}
    return LearnedModel(method, features, names, mean, scale, params, training, seed, notes)


def _codes(names):
    uniq = list(dict.fromkeys(names))
    index = {k: i for i, k in enumerate(uniq)}
    return uniq, np.array([index[k] for k in names], dtype=np.int64)


def backfit(z, resid, kernel_codes, gpu_codes, shrinkage: float, use_features: bool):
    """(w, b, kernel offsets, GPU offsets) of the hybrid's additive residual model (module
    docstring), fitted by :data:`BACKFIT_ROUNDS` rounds of backfitting from zero."""
    n = len(resid)
    nk = int(kernel_codes.max()) + 1 if n else 0
    ng = int(gpu_codes.max()) + 1 if n else 0
    ko, go = np.zeros(nk), np.zeros(ng)
    w, b = np.zeros(z.shape[1]), 0.0
    kn = np.bincount(kernel_codes, minlength=nk) + shrinkage
    gn = np.bincount(gpu_codes, minlength=ng) + HYBRID_SHRINKAGE
    for _ in range(BACKFIT_ROUNDS):
        target = resid - ko[kernel_codes] - go[gpu_codes]
        if use_features:
            w, b = alg.fit_ridge(z, target, shrinkage)
        else:
            b = float(target.sum() / (n + shrinkage))
        fitted = z @ w + b
        ko = np.bincount(kernel_codes, resid - fitted - go[gpu_codes], minlength=nk) / kn
        go = np.bincount(gpu_codes, resid - fitted - ko[kernel_codes], minlength=ng) / gn
    return w, float(b), ko, go


def choose_shrinkage(z, resid, kernels, gpus, groups) -> tuple[float, bool, float | None]:
    """(shrinkage, use_features, inner error) chosen by leave-one-group-out inside the
    training rows (:data:`HYBRID_SETTINGS`); the first setting when fewer than 3 groups."""
    uniq, gcodes = _codes(groups)
    if len(uniq) < 3:
        return HYBRID_SETTINGS[0] + (None,)
    best = None
    for k, use in HYBRID_SETTINGS:
        errors = []
        for g in range(len(uniq)):
            test = gcodes == g
            train = ~test
            _, kc = _codes([kernels[i] for i in np.nonzero(train)[0]])
            _, gc = _codes([gpus[i] for i in np.nonzero(train)[0]])
            w, b, ko, go = backfit(z[train], resid[train], kc, gc, k, use)
            known_k = {name: ko[c] for name, c in zip((kernels[i] for i in np.nonzero(train)[0]), kc)}
            known_g = {name: go[c] for name, c in zip((gpus[i] for i in np.nonzero(train)[0]), gc)}
            idx = np.nonzero(test)[0]
            pred = z[test] @ w + b + np.array([known_k.get(kernels[i], 0.0) + known_g.get(gpus[i], 0.0)
                                              for i in idx])
            errors.append(np.abs(np.exp2(pred - resid[test]) - 1.0))
        err = float(np.concatenate(errors).mean())
        if best is None or err < best[2] - 1e-12:
            best = (k, use, err)
    return best


def _fit_hybrid(rows, z, y, cv_by: str) -> dict:
    base = np.array([math.log2(r.analytical[HYBRID_BASE]) for r in rows])
    resid = y - base
    kernels = [r.kernel for r in rows]
    gpus = [r.gpu.name for r in rows]
    groups = {"gpu": gpus, "kernel": kernels}.get(cv_by) or [f"{r.size:g}" for r in rows]
    shrinkage, use, err = choose_shrinkage(z, resid, kernels, gpus, groups)
    kn, kc = _codes(kernels)
    gn, gc = _codes(gpus)
    w, b, ko, go = backfit(z, resid, kc, gc, shrinkage, use)
    return {"weights": w, "intercept": float(b),
            "kernel_offsets": {k: float(v) for k, v in zip(kn, ko)},
            "gpu_offsets": {g: float(v) for g, v in zip(gn, go)},
            "shrinkage": shrinkage, "use_features": use, "cv_by": cv_by,
            "cv_error": err, "base_model": HYBRID_BASE}
