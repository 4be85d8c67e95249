"""A project's launch predicted against the device catalog, as the JSON-ready dict that
``gpumodeler project predict`` prints and the report shows (Gajger 2017 eq. 4.1-4.3 for the
kernel, eq. 5.5 or a stored calibrated model for the copies)."""
from __future__ import annotations


def predict_launch(project, launch_id: str, catalog, *, lookups: dict | None = None,
                   terms=None, evaluation=None) -> dict:
    """One launch evaluated like the launch panel, as the dict ``project predict --json``
    prints per launch. ``lookups``: core's resolvers (default: over ``catalog``); ``terms``
    the kernel terms (default ``predict``'s); ``evaluation`` a
    :class:`~gpumodeler.service.evaluation.ProjectEvaluation` whose graph analyses to share
    (it then gives the lookups and the terms)."""
    if evaluation is None:
        from gpumodeler.service.evaluation import ProjectEvaluation
        from gpumodeler.service.lookups import catalog_lookups
        evaluation = ProjectEvaluation(project, lookups if lookups is not None
                                       else catalog_lookups(catalog), terms=terms)
    result = evaluation.launch(launch_id)
    launch = project.launches[launch_id]
    out = {"launch": launch_id, "name": launch.name, "kernel": launch.kernel,
           "device": result.gpu.name, "link": result.link.name if result.link else None}
    out.update(result.prediction.summary())
    out.update({
        "grid_size": result.grid_size,
        "occupancy_warps_per_sm": result.occupancy_warps_per_sm,
        "latency_bound_cycles": result.latency_bound_cycles,
        "latency_bound_formula": result.latency_bound_formula,
    })
    if result.occupancy_detail is not None:
        out["occupancy_limited_by"] = list(result.occupancy_detail.limited_by)
    out["transfer_calibration"] = (transfer_calibration_of(project, launch_id, catalog)
                                   if out.get("transfers") else None)
    return out


def transfer_calibration_of(project, launch_id: str, catalog) -> dict | None:
    """The stored link calibration the launch's transfers use (the connection's
    ``transfer_calibration``): ``{"label", "link", "directions": {htod|dtoh: {"loo_mape",
    "loo_median_ape"}}}``, or None for the nominal link."""
    from gpumodeler.core.pipeline import transfer_calibration
    from gpumodeler.db.calibrations import list_calibrations
    launch = project.launches[launch_id]
    conn_id = next((t.connection for t in launch.transfers if t.connection), None)
    conn = project.connections.get(conn_id) if conn_id else project.host_link_for(launch.gpu)
    label = transfer_calibration(conn) if conn is not None else None
    if label is None:
        return None
    cals = [c for c in list_calibrations(catalog, conn.link_name, "link")
            if c.is_current and c.label == label]
    return {"label": label, "link": conn.link_name,
            "directions": {c.subject: {"loo_mape": c.loo_mape, "loo_median_ape": c.loo_median_ape}
                           for c in sorted(cals, key=lambda c: c.subject)}}


def calibration_text(cal: dict) -> str:
    """“calibrated model 'LABEL' (LOO error htod 1.2 %, dtoh 2.3 %)”."""
    errs = [f"{d} {v['loo_mape']:.3g} %" for d, v in cal["directions"].items()
            if v["loo_mape"] is not None]
    return (f"calibrated model {cal['label']!r}"
            + (f" (LOO error {', '.join(errs)})" if errs else " (LOO error not recorded)"))
