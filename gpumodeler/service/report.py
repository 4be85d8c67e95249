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
    - launches: ``launch``, ``prediction`` (:func:`.launches.predict_launch`'s dict);
    - sweeps: ``sweep``, ``snapshot``, ``result`` (SweepResult);
    - applications: ``application``, ``result`` (:func:`.application.run_application`'s dict).
    """
    from gpumodeler.service.evaluation import ProjectEvaluation
    from gpumodeler.service.launches import predict_launch
    from gpumodeler.service.lookups import catalog_lookups

    evaluation = ProjectEvaluation(project, catalog_lookups(catalog) if lookups is None else lookups)
    kernels = []
    for kid, graph in project.kernels.items():
        entry = {"id": kid, "graph": graph, "formula": None, "counts": None, "error": None}
        try:
            entry["formula"] = evaluation.kernel_bound(kid).formula()
            entry["counts"] = evaluation.kernel_counts(kid)
        except ModelError as exc:
            entry["error"] = str(exc)
        kernels.append(entry)
    launches = []
    for lid, launch in project.launches.items():
        entry = {"id": lid, "launch": launch, "prediction": None, "error": None}
        try:
            entry["prediction"] = predict_launch(project, lid, catalog, evaluation=evaluation)
        except ModelError as exc:
            entry["error"] = str(exc)
        launches.append(entry)
    sweeps = []
    for sid, sw in project.sweeps.items():
        entry = {"id": sid, "sweep": sw, "snapshot": None, "result": None, "error": None}
        try:
            entry["snapshot"], entry["result"] = evaluation.saved_sweep(sid)
        except ModelError as exc:
            entry["error"] = str(exc)
        sweeps.append(entry)
    applications = []
    for aid, app in project.applications.items():
        entry = {"id": aid, "application": app, "result": None, "error": None}
        try:
            entry["result"] = evaluation.application(aid)
        except ModelError as exc:
            entry["error"] = str(exc)
        applications.append(entry)
    return {"kernels": kernels, "launches": launches, "sweeps": sweeps,
            "applications": applications}
