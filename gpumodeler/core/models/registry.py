"""The models side by side: one registry, one input shape, one result shape (docs/models.md).

``MODELS`` maps a model name to its module's ``evaluate(ModelInputs) -> ModelResult``:

* ``gajger`` — Gajger 2017 eq. 4.1–4.7 (the default; :mod:`gajger`);
* ``volkov-contention`` — Volkov 2016 §6.3–6.5, memory latency rising with throughput
  (:mod:`volkov_contention`);
* ``mwp-cwp`` — Hong & Kim 2009 with Sánchez Gil's K40 parameters (:mod:`mwp_cwp`);
* ``bsp`` — Amarís 2018 / HiPC 2015 (:mod:`bsp`);
* ``roofline`` — Williams et al. 2009, per memory level (:mod:`roofline`).

:func:`evaluate` refuses an occupancy above the GPU's maximum before any model runs;
:func:`evaluate_all` keeps, per model, either its result or the error saying which input it
lacks, and :func:`spread` summarises the times that could be computed.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.core.models.result import ModelInputs, ModelResult
from gpumodeler.core.models.sanity import check_occupancy

#: name -> (module, one-line description with its equations)
MODELS = {
    "gajger": ("gajger", "Gajger 2017 eq. 4.1–4.7: warps / (min(n/L, TB) · SMs · clock · λ)"),
    "volkov-contention": ("volkov_contention",
                          "Volkov 2016 §6.4–6.5: latency a + b·λ/(c−λ), self-consistent by bisection"),
    "mwp-cwp": ("mwp_cwp", "Hong & Kim 2009 (H1–H21): MWP vs CWP, three cases, synchronisation cost"),
    "bsp": ("bsp", "Amarís 2018 eq. 3.3–3.5: t·(comp + comm_GM + comm_SM) / (R·P·λ)"),
    "roofline": ("roofline", "Williams et al. 2009: min(peak, intensity × bandwidth) per level"),
}
DEFAULT_MODEL = "gajger"


def model_names() -> tuple:
    return tuple(MODELS)


def _module(name: str):
    try:
        module = MODELS[name][0]
    except KeyError:
        raise InvalidParameter(f"unknown model {name!r}; valid: {', '.join(MODELS)} or all",
                               item="model") from None
    return importlib.import_module(f"gpumodeler.core.models.{module}")


def evaluate(name: str, inputs: ModelInputs) -> ModelResult:
    """One model's result for one launch (ModelError when it cannot be computed)."""
    module = _module(name)
    occ = float(inputs.occupancy)
    if not occ > 0:
        raise InvalidParameter(f"occupancy (warps per SM) must be a number > 0, got {inputs.occupancy}")
    check_occupancy(inputs.gpu, occ)
    return module.evaluate(inputs)


@dataclass(frozen=True)
class Spread:
    """Min and max time over the models that produced one, and their ratio."""

    min_s: float
    max_s: float
    ratio: float
    fastest: str
    slowest: str
    models: int

    def summary(self) -> dict:
        return {"min_s": self.min_s, "max_s": self.max_s, "max_over_min": self.ratio,
                "fastest": self.fastest, "slowest": self.slowest, "models": self.models}


def evaluate_all(inputs: ModelInputs, names=None) -> dict:
    """{name: ModelResult or ModelError} for ``names`` (all models by default), in order.

    The launch itself (occupancy) is checked once and its error raised, since no model can
    run a launch the GPU cannot hold."""
    check_occupancy(inputs.gpu, inputs.occupancy)
    out: dict[str, ModelResult | ModelError] = {}
    for name in names or MODELS:
        try:
            out[name] = evaluate(name, inputs)
        except ModelError as exc:
            out[name] = exc
    return out


def spread(results: dict) -> Spread | None:
    """The spread of the results that are times (None when none is)."""
    times = {n: r.time_s for n, r in results.items() if isinstance(r, ModelResult)}
    if not times:
        return None
    fastest = min(times, key=lambda n: times[n])
    slowest = max(times, key=lambda n: times[n])
    return Spread(times[fastest], times[slowest], times[slowest] / times[fastest],
                  fastest, slowest, len(times))
