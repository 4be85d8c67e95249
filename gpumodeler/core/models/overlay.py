"""The registered models over a sweep: one kernel time per model and launch point.

``sweep --model``, ``project sweep --model`` and the launch panel's sweep overlay the
models of :mod:`gpumodeler.core.models.registry` on a sweep. The gajger model's numbers come
from the vectorised engine (:func:`gpumodeler.core.models.gajger.predict` with the kernel
terms, equal to the registry's to 1e-12, tests/core/test_kernel_terms_vec.py); the other
models are scalar and evaluated point by point (a few milliseconds per point and model,
measured in docs/models.md), so the GUI runs them in its sweep worker and the CLI caps
their points (:data:`MAX_MODEL_POINTS`).

A point a model cannot evaluate (an input nobody gave, a time that is not finite) is NaN,
and the first error per model is kept with the number of points it cost, so a caller can say
once which value is missing and which flag sets it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpumodeler.core.errors import InvalidParameter, ModelError

#: the most launch points the scalar models are evaluated at in one sweep
MAX_MODEL_POINTS = 200_000
#: models with a vectorised path (their time is the sweep's own kernel time)
VECTORISED = ("gajger",)


def model_list(names) -> tuple:
    """Model names from ``NAME[,NAME]`` / ``all`` / an iterable, checked against the registry."""
    from gpumodeler.core.models.registry import MODELS
    if isinstance(names, str):
        names = [n.strip().lower() for n in names.split(",") if n.strip()]
    names = list(names)
    if "all" in names:
        return tuple(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown or not names:
        raise InvalidParameter(f"unknown model {', '.join(repr(n) for n in unknown) or '(none given)'}; valid: "
                               f"{', '.join(MODELS)}, all (comma-separated)", item="model")
    return tuple(dict.fromkeys(names))


def column_name(model: str) -> str:
    """The table column of a model's kernel time: ``time_s_<model>`` (registry name as is)."""
    return f"time_s_{model}"


@dataclass
class ModelOverlay:
    """Per model: kernel times (s; NaN where not computed), and the first error with the
    number of points it left empty."""

    times: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)  # name -> [ModelError, points]

    def merge(self, other: "ModelOverlay") -> None:
        """Add another chunk's errors (times are per chunk)."""
        for name, (exc, count) in other.errors.items():
            if name in self.errors:
                self.errors[name][1] += count
            else:
                self.errors[name] = [exc, count]


def evaluate_points(names, n: int, inputs_at, *, valid=None, vectorised=None,
                    cancelled=None) -> ModelOverlay:
    """``names``' kernel times at ``n`` points; ``inputs_at(i) -> ModelInputs`` builds point
    ``i`` (only where ``valid``); ``vectorised`` {name: times} are taken as they are;
    ``cancelled()`` is polled every few points (it raises to stop)."""
    from gpumodeler.core.models.registry import evaluate
    out = ModelOverlay()
    valid = np.ones(n, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    points = np.flatnonzero(valid)
    scalar = [m for m in names if not (vectorised and m in vectorised)]
    for m in names:
        if vectorised and m in vectorised:
            out.times[m] = np.where(valid, np.asarray(vectorised[m], dtype=float), np.nan)
        else:
            out.times[m] = np.full(n, np.nan)
    if not scalar:
        return out
    for j, i in enumerate(points):
        if cancelled is not None and j % 16 == 0:
            cancelled()
        inputs = inputs_at(int(i))
        for m in scalar:
            try:
                out.times[m][i] = evaluate(m, inputs).time_s
            except ModelError as exc:
                if m in out.errors:
                    out.errors[m][1] += 1
                else:
                    out.errors[m] = [exc, 1]
    return out


def _pick(value, j):
    if isinstance(value, dict):
        return {k: _pick(v, j) for k, v in value.items()}
    return value[j] if np.ndim(value) else value


def kernel_at(kernel, j: int):
    """Launch point ``j`` of per-warp kernel inputs whose fields are arrays or scalars."""
    from dataclasses import fields, replace
    return replace(kernel, **{f.name: _pick(getattr(kernel, f.name), j) for f in fields(kernel)
                              if getattr(kernel, f.name) is not None})


def overlay_launch_points(snap, gpu, kernel, variables: dict, grid, block, occupancy, gajger_s,
                          *, cancelled=None) -> ModelOverlay:
    """``snap.models`` at the runnable points of one chunk of a launch sweep
    (:mod:`gpumodeler.core.launch_sweep`): ``kernel`` the chunk's per-warp inputs,
    ``variables`` its variable values (arrays over the points or scalars), ``grid``,
    ``block`` and ``occupancy`` per point, ``gajger_s`` the vectorised gajger times. The
    graph's extra counts are evaluated once per distinct value of the swept variables."""
    from gpumodeler.core.models.graph_inputs import GraphCounter
    from gpumodeler.core.models.result import KernelTerms, ModelInputs
    n = int(np.size(grid))
    if n > MAX_MODEL_POINTS and any(m not in VECTORISED for m in snap.models):
        raise InvalidParameter(f"the models are evaluated at most {MAX_MODEL_POINTS} launch points "
                               f"a sweep; this one has {n}", item="model")
    needs_counts = any(m not in VECTORISED for m in snap.models)
    counter = GraphCounter(snap.graph, snap.table, gpu.warp_size) if needs_counts else None
    swept = {k: v for k, v in variables.items() if np.ndim(v)}
    cache: dict = {}
    terms = snap.terms or KernelTerms()

    def counts_at(j):
        key = tuple(float(v[j]) for v in swept.values())
        if key not in cache:
            cache[key] = counter.at({**variables, **{k: v[j] for k, v in swept.items()}})
        return cache[key]

    def inputs_at(j):
        return ModelInputs(gpu=gpu, kernel=kernel_at(kernel, j), grid_size=int(grid[j]),
                           block_size=int(block[j]), occupancy=float(occupancy[j]),
                           lam=float(snap.launch.lam), counts=counts_at(j),
                           parameters=dict(snap.model_parameters), terms=terms)

    return evaluate_points(snap.models, n, inputs_at, vectorised={"gajger": gajger_s},
                           cancelled=cancelled)


__all__ = ["MAX_MODEL_POINTS", "ModelOverlay", "VECTORISED", "column_name", "evaluate_points",
           "kernel_at", "model_list", "overlay_launch_points"]
