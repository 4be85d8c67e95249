"""The thesis' evaluation protocols: leave one group out, train on the rest, compare.

Amarís 2018 §4.2.1 and §4.2.2 evaluate each learned predictor by leaving out one GPU
(train on the other GPUs' rows, test on all of that GPU's rows) or one kernel; ``size``
leaves out one problem size (Input_Size) likewise. Per held-out group and per method the
result gives the mean absolute percentage error (Amarís 2018 eq. 4.7,
``MAPE = 100/n Σ |T_m − T_k| / T_m``), the median APE and the number of rows predicted; the
summary pools every held-out prediction of a method. The analytical models are not trained,
so their predictions of a group's rows are the same whichever group is held out (their
latency bound comes from other GPUs, :mod:`~gpumodeler.core.learn.dataset`); they are
listed by their registry names (``gajger``, …, ``roofline``, the baseline).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.core.learn.model import METHODS, fit

LEAVE_OUT = ("gpu", "kernel", "size")


def group_of(row, leave_out: str) -> str:
    if leave_out == "gpu":
        return row.gpu.name
    if leave_out == "kernel":
        return row.kernel
    if leave_out == "size":
        return f"{row.size:g}"
    raise InvalidParameter(f"unknown protocol {leave_out!r}; valid: {', '.join(LEAVE_OUT)}")


def ape_stats(predicted, measured) -> dict:
    """MAPE (eq. 4.7), median APE and n of the pairs where a prediction exists."""
    p, m = np.asarray(predicted, float), np.asarray(measured, float)
    ok = np.isfinite(p)
    if not ok.any():
        return {"mape_percent": None, "median_ape_percent": None, "n": 0}
    ape = np.abs(p[ok] - m[ok]) / m[ok] * 100.0
    return {"mape_percent": float(ape.mean()), "median_ape_percent": float(np.median(ape)),
            "n": int(ok.sum())}


@dataclass(frozen=True)
class Point:
    """One held-out prediction (for the predicted-vs-measured plot)."""

    held_out: str
    method: str
    kernel: str
    gpu: str
    measured_s: float
    predicted_s: float


def evaluate(rows, methods, leave_out: str, *, models=None, features=None, seed: int = 0,
             extracted: int = 5) -> dict:
    """``{"summary": [...], "groups": [...], "points": [Point, ...]}`` (module docstring);
    ``models``: the analytical models to list (their names as in the registry)."""
    for m in methods:
        if m not in METHODS:
            raise InvalidParameter(f"unknown method {m!r}; valid: {', '.join(METHODS)}")
    groups = list(dict.fromkeys(group_of(r, leave_out) for r in rows))
    if len(groups) < 2:
        raise InvalidParameter(f"leave-one-{leave_out}-out needs rows of at least 2 "
                               f"{leave_out}s; the measurements have {len(groups)}")
    models = list(models or [])
    names = list(methods) + [m for m in models if m not in methods]
    per_method: dict[str, tuple[list, list]] = {n: ([], []) for n in names}
    out_groups: list = []
    points: list = []
    keys = [group_of(r, leave_out) for r in rows]
    memo: dict = {}  # each row's features and digest part, worked out once for every fold
    for g in groups:
        test = [r for r, k in zip(rows, keys) if k == g]
        train = [r for r, k in zip(rows, keys) if k != g]
        measured = np.array([r.time_s for r in test])
        for name in names:
            if name in methods:
                try:
                    pred = fit(train, name, features, seed=seed, extracted=extracted,
                               cv_by=leave_out, memo=memo).predict(test, memo)
                except ModelError:
                    pred = np.full(len(test), math.nan)
            else:
                pred = np.array([r.analytical.get(name, math.nan) for r in test])
            per_method[name][0].extend(pred.tolist())
            per_method[name][1].extend(measured.tolist())
            out_groups.append({"held_out": g, "method": name, **ape_stats(pred, measured)})
            points.extend(Point(g, name, r.kernel, r.gpu.name, r.time_s, float(p))
                          for r, p in zip(test, pred) if math.isfinite(p))
    summary = [{"method": n, **ape_stats(*per_method[n])} for n in names]
    return {"summary": summary, "groups": out_groups, "points": points}
