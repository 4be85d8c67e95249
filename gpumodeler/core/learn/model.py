"""A learned model: fitted on measured rows, predicting kernel times, kept as plain data.

Every method works in log2 space (Amarís 2018 §4.2.1: log2 of all data, predictions
back-transformed by 2^x) on features standardised with the training rows' mean and
standard deviation (§4.2.2 normalises after the log2 transform):

* ``lr``, ``svr``, ``rf`` predict log2 of the time from the feature set (default
  ``amaris``, Table 4.1); :mod:`~gpumodeler.core.learn.algorithms` says how each is fitted.
* ``hybrid`` (not in the thesis) predicts log2 of the default analytical model's time
  (Gajger 2017 eq. 4.1–4.7, model ``gajger``) plus a learned residual
  ``r = log2(T_measured / T_gajger)``, an additive model
  ``r̂ = b + offset_kernel + offset_kernel@architecture + offset_gpu + w·x`` (the
  kernel-on-architecture offset only where the cross-validation below keeps it: a GPU never
  seen still gets what its architecture's other GPUs showed for the kernel), with ``x`` the
  analytical quantities that vary
  within one kernel on one GPU (:data:`~gpumodeler.core.learn.features.HYBRID_FEATURES`).
  ``w, b`` minimise ``Σ (r − offsets − w·x − b)² + k (‖w‖² + b²)`` (ridge, shrinking
  towards 0); a kernel's (kernel-on-architecture's) offset is the mean of its rows'
  remaining residual shrunk by ``n / (n + k)``; these shared terms are fitted alternately
  (:data:`BACKFIT_ROUNDS` rounds from zero), then each GPU's offset from what they leave,
  shrunk with ``k =`` :data:`HYBRID_SHRINKAGE`, so it holds only what is that GPU's own.
  For the shared terms, ``k``, whether ``w·x`` is used at all and whether the
  kernel-on-architecture offsets are used are chosen from :data:`HYBRID_SETTINGS` (from
  ``k = 1`` to ``k = 10⁹``, which leaves only the GPU offsets) by leave-one-group-out inside
  the training rows, over the groups of the evaluation protocol (GPUs by default), on the
  mean of ``|T_predicted / T_measured − 1|``; with fewer than 3 groups the first setting
  (``k = 10``, no features, no architecture offsets). With no rows every term is 0,
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

import functools
import hashlib
import json
import math
from dataclasses import dataclass, field

import numpy as np

from gpumodeler.core.architectures import architecture_name
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
HYBRID_SETTINGS = tuple((k, use, arch) for arch in (False, True)
                        for k, use in ((10.0, False), (HYBRID_SHRINKAGE, True), (10.0, True),
                                       (100.0, True), (HYBRID_SHRINKAGE, False), (100.0, False),
                                       (1e9, False)))
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

    def _table(self, rows, memo=None):
        table, _ = log2_table(rows, self.features, self.feature_names, memo)
        return table

    def predict_log2(self, rows, memo: dict | None = None) -> np.ndarray:
        """log2 of the predicted times (NaN where the hybrid's base model has no time);
        ``memo`` as :func:`~gpumodeler.core.learn.features.log2_table`'s."""
        if not rows:
            return np.zeros(0)
        z = (self._table(rows, memo) - self.mean) / self.scale
        p = self.params
        if self.method in ("lr", "svr"):
            return z @ p["weights"] + p["intercept"]
        if self.method == "rf":
            return alg.predict_forest(p["trees"], z)
        base = np.array([math.log2(r.analytical[HYBRID_BASE]) if HYBRID_BASE in r.analytical
                         else math.nan for r in rows])
        offsets = np.array([p["kernel_offsets"].get(r.kernel, 0.0)
                            + p["gpu_offsets"].get(r.gpu.name, 0.0)
                            + p.get("arch_offsets", {}).get(arch_key(r), 0.0) for r in rows])
        return base + offsets + z @ p["weights"] + p["intercept"]

    def predict(self, rows, memo: dict | None = None) -> np.ndarray:
        """Predicted times in seconds (NaN where the model cannot predict)."""
        with np.errstate(over="ignore"):
            return np.exp2(self.predict_log2(rows, memo))

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


def _digest_item(row, values) -> str:
    return json.dumps([row.kernel, row.gpu.name, list(row.grid), list(row.block), repr(row.time_s),
                       [repr(float(v)) for v in values]])


def training_digest(rows, table, memo: dict | None = None, key=None) -> str:
    """SHA-256 of the training rows as canonical JSON (order-independent). With ``memo``
    (as :func:`~gpumodeler.core.learn.features.log2_table`'s) and ``key`` naming the table's
    features, each row's part is written once."""
    if memo is None or key is None:
        items = [_digest_item(r, table[i]) for i, r in enumerate(rows)]
    else:
        items = []
        for i, r in enumerate(rows):
            hit = memo.get((id(r), "digest", key))
            if hit is None or hit[0] is not r:
                hit = memo[(id(r), "digest", key)] = (r, _digest_item(r, table[i]))
            items.append(hit[1])
    return hashlib.sha256("\n".join(sorted(items)).encode()).hexdigest()


def fit(rows, method: str, features: str | None = None, *, seed: int = 0,
        extracted: int = 5, cv_by: str = "gpu", memo: dict | None = None) -> LearnedModel:
    """A :class:`LearnedModel` of ``method`` on ``features`` fitted to ``rows``; ``cv_by``
    (``gpu``, ``kernel``, ``size``): the groups the hybrid's shrinkage is chosen over;
    ``memo`` as :func:`~gpumodeler.core.learn.features.log2_table`'s."""
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
    table, lacking = log2_table(rows, features, names, memo)
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
                "rows": len(rows), "digest": training_digest(rows, table, memo, (features, tuple(names))),
                "ranges": ranges}
    return LearnedModel(method, features, names, mean, scale, params, training, seed, notes)


def _codes(names):
    """(the distinct names in order of appearance, each name's index among them); the
    hybrid's cross-validation asks for the same lists once per setting, so kept."""
    return _codes_of(tuple(names))


@functools.lru_cache(maxsize=64)
def _codes_of(names: tuple):
    uniq = tuple(dict.fromkeys(names))
    index = {k: i for i, k in enumerate(uniq)}
    codes = np.array([index[k] for k in names], dtype=np.int64)
    codes.flags.writeable = False  # shared by every caller
    return uniq, codes


def arch_key(row) -> str:
    """The kernel-on-architecture key of a row's offset: ``vadd @ Kepler``."""
    return f"{row.kernel} @ {architecture_name(row.gpu.compute_capability) or 'unknown'}"


def backfit(z, resid, groups, shrinkage: float, use_features: bool):
    """(w, b, one offset array per group) of the hybrid's additive residual model (module
    docstring), by :data:`BACKFIT_ROUNDS` rounds of backfitting from zero. ``groups``:
    (codes, shrinkage of its offsets) per offset group; ``shrinkage`` that of ``w`` and ``b``."""
    n = len(resid)
    offsets = [np.zeros(int(c.max()) + 1 if n else 0) for c, _ in groups]
    counts = [np.bincount(c, minlength=len(o)) + k for (c, k), o in zip(groups, offsets)]
    w, b = np.zeros(z.shape[1]), 0.0
    solve = alg.ridge(z, shrinkage) if use_features else None

    def others(skip):
        total = np.zeros(n)
        for g, ((c, _), o) in enumerate(zip(groups, offsets)):
            if g != skip:
                total += o[c]
        return total

    for _ in range(BACKFIT_ROUNDS):
        target = resid - others(None)
        if solve is not None:
            w, b = solve(target)
        else:
            b = float(target.sum() / (n + shrinkage))
        fitted = z @ w + b
        for g, (c, _) in enumerate(groups):
            offsets[g] = np.bincount(c, resid - fitted - others(g), minlength=len(offsets[g])) / counts[g]
    return w, float(b), offsets


def _offset_groups(keys: dict, k: float, use_arch: bool):
    """(names per group, [(codes, shrinkage)]) of the shared offset groups of one setting."""
    wanted = [("kernel", k)] + ([("arch", k)] if use_arch else [])
    names, groups = [], []
    for key, shrink in wanted:
        uniq, codes = _codes(keys[key])
        names.append((key, uniq))
        groups.append((codes, shrink))
    return names, groups


def fit_residual(z, resid, keys: dict, k: float, use: bool, use_arch: bool):
    """(w, b, {group: {name: offset}}) of the hybrid's residual model: first the terms an
    unseen GPU shares (``b``, ``w·x``, kernel and kernel-on-architecture offsets, by
    :func:`backfit`), then each GPU's offset from what those leave, shrunk with
    :data:`HYBRID_SHRINKAGE` (so a GPU's offset holds only what is its own)."""
    names, groups = _offset_groups(keys, k, use_arch)
    w, b, offsets = backfit(z, resid, groups, k, use)
    found = {key: dict(zip(uniq, (float(v) for v in o))) for (key, uniq), o in zip(names, offsets)}
    shared = z @ w + b + sum((o[c] for (c, _), o in zip(groups, offsets)), np.zeros(len(resid)))
    uniq, codes = _codes(keys["gpu"])
    if len(resid):
        gpu = np.bincount(codes, resid - shared, minlength=len(uniq)) / \
            (np.bincount(codes, minlength=len(uniq)) + HYBRID_SHRINKAGE)
        found["gpu"] = dict(zip(uniq, (float(v) for v in gpu)))
    else:
        found["gpu"] = {}
    return w, b, found


def choose_shrinkage(z, resid, keys: dict, groups) -> tuple:
    """(shrinkage, use_features, use_arch, inner error) chosen by leave-one-group-out inside
    the training rows (:data:`HYBRID_SETTINGS`); the first setting when fewer than 3 groups."""
    uniq, gcodes = _codes(groups)
    if len(uniq) < 3:
        return HYBRID_SETTINGS[0] + (None,)
    best = None
    # each group's training keys once: the settings only change what is fitted on them
    names = {key: np.array(v, dtype=object) for key, v in keys.items()}
    folds = []
    for g in range(len(uniq)):
        test = gcodes == g
        tr = np.nonzero(~test)[0]
        folds.append((test, tr, {key: v[tr].tolist() for key, v in names.items()},
                      {key: v[test].tolist() for key, v in names.items()}))
    for k, use, use_arch in HYBRID_SETTINGS:
        errors = []
        for test, tr, sub, held in folds:
            w, b, found = fit_residual(z[tr], resid[tr], sub, k, use, use_arch)
            offset = np.zeros(int(test.sum()))
            for key in found:  # in found's order, as the sum of a row's offsets was taken
                offset = offset + np.array([found[key].get(name, 0.0) for name in held[key]])
            pred = z[test] @ w + b + offset
            errors.append(np.abs(np.exp2(pred - resid[test]) - 1.0))
        err = float(np.concatenate(errors).mean())
        if best is None or err < best[3] - 1e-12:
            best = (k, use, use_arch, err)
    assert best is not None  # HYBRID_SETTINGS is not empty
    return best


def _fit_hybrid(rows, z, y, cv_by: str) -> dict:
    base = np.array([math.log2(r.analytical[HYBRID_BASE]) for r in rows])
    resid = y - base
    keys = {"kernel": [r.kernel for r in rows], "gpu": [r.gpu.name for r in rows],
            "arch": [arch_key(r) for r in rows]}
    groups = {"gpu": keys["gpu"], "kernel": keys["kernel"]}.get(cv_by) or [f"{r.size:g}" for r in rows]
    shrinkage, use, use_arch, err = choose_shrinkage(z, resid, keys, groups)
    w, b, found = fit_residual(z, resid, keys, shrinkage, use, use_arch)
    return {"weights": w, "intercept": float(b),
            "kernel_offsets": found["kernel"], "gpu_offsets": found["gpu"],
            "arch_offsets": found.get("arch", {}),
            "shrinkage": shrinkage, "use_features": use, "use_arch": use_arch, "cv_by": cv_by,
            "cv_error": err, "base_model": HYBRID_BASE}
