"""What the HTML report of a project shows, computed (:mod:`gpumodeler.report.html` only
formats it): each kernel's latency bound and per-warp counts, each launch's prediction, each
saved sweep and each application's timeline, or for each the reason it cannot be computed.
One :class:`~.evaluation.ProjectEvaluation` analyses each kernel graph once for the whole
report."""
from __future__ import annotations

from gpumodeler.core.errors import ModelError


def report_data(project, catalog, lookups: dict | None = None) -> dict:
    """``{"kernels", "launches", "sweeps", "applications"}``, each a list in the document's
    order of dicts with the item's ``id``, the item, its results and ``error`` (the message
    of the ModelError that stopped it, else None):

    - kernels: ``graph``, ``formula`` (latency bound, cycles), ``counts`` (per warp);
    - launches: ``launch``, ``prediction`` (:func:`.launches.predict_launch`'s dict),
      ``spread`` (the min and max time over every registered model of the same launch,
      :meth:`~gpumodeler.core.models.registry.Spread.summary`, None when no model gives a
      time) and ``spread_error`` (why the models could not be compared, else None);
    - sweeps: ``sweep``, ``snapshot``, ``result`` (SweepResult);
    - applications: ``application``, ``result`` (:func:`.application.run_application`'s dict);
    - calibrations: :func:`project_calibrations`.
    """
    from gpumodeler.service.evaluation import ProjectEvaluation
    from gpumodeler.service.launches import predict_launch
    from gpumodeler.service.lookups import catalog_lookups

    evaluation = ProjectEvaluation(project, catalog_lookups(catalog) if lookups is None else lookups)

    def kernel(kid, entry):   # the bound stays shown when the counts fail
        entry["formula"] = evaluation.kernel_bound(kid).formula()
        entry["counts"] = evaluation.kernel_counts(kid)

    def launch(lid, entry):
        entry["prediction"] = predict_launch(project, lid, catalog, evaluation=evaluation)
        try:  # the comparison failing keeps the prediction shown
            entry["spread"] = models_spread(project, lid, evaluation)
        except ModelError as exc:
            entry["spread_error"] = str(exc)

    def sweep(sid, entry):
        entry["snapshot"], entry["result"] = evaluation.saved_sweep(sid)

    def application(aid, entry):
        entry["result"] = evaluation.application(aid)

    return {"kernels": _entries(project.kernels, "graph", ("formula", "counts"), kernel),
            "launches": _entries(project.launches, "launch",
                                 ("prediction", "spread", "spread_error"), launch),
            "sweeps": _entries(project.sweeps, "sweep", ("snapshot", "result"), sweep),
            "applications": _entries(project.applications, "application", ("result",),
                                     application),
            "calibrations": project_calibrations(project, catalog)}


def project_calibrations(project, catalog) -> list:
    """The current stored calibrations (link models, kernel λ) of each device and link the
    project places, in the order of their first placement: ``{"name", "calibrations"
    (Calibration list), "error"}`` (the error when the name is not in the catalog)."""
    from gpumodeler.db.calibrations import list_calibrations

    names = [d.device_name for d in project.devices.values()]
    names += [c.link_name for c in project.connections.values()]
    out = []
    for name in dict.fromkeys(names):
        entry = {"name": name, "calibrations": [], "error": None}
        try:
            entry["calibrations"] = [c for c in list_calibrations(catalog, name) if c.is_current]
        except ModelError as exc:
            entry["error"] = str(exc)
        out.append(entry)
    return out


def models_spread(project, launch_id: str, evaluation) -> dict | None:
    """The spread of every registered model's time for the launch (same GPU, occupancy,
    grid and kernel values as its prediction): ``{"min_s", "max_s", "max_over_min",
    "fastest", "slowest", "models"}``, None when no model gives a time."""
    from gpumodeler.core.models.graph_inputs import compare_launch
    from gpumodeler.core.models.registry import spread

    result = evaluation.launch(launch_id)
    sp = spread(compare_launch(project, launch_id, result,
                               table_lookup=evaluation.lookups.get("table_lookup"),
                               terms=evaluation.terms, analyses=evaluation.analyses))
    return sp.summary() if sp is not None else None


def _entries(items: dict, name: str, results: tuple, compute) -> list:
    """One entry per item, in order: ``{"id", name: item, *results, "error"}``, the results
    filled by ``compute(item_id, entry)`` until a ModelError stops it (its message kept)."""
    entries = []
    for item_id, item in items.items():
        entry = {"id": item_id, name: item, **dict.fromkeys(results), "error": None}
        try:
            compute(item_id, entry)
        except ModelError as exc:
            entry["error"] = str(exc)
        entries.append(entry)
    return entries
