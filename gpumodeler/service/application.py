"""A project's application simulated against the device catalog: the JSON document of
``gpumodeler timeline``, the GUI's Application tab and the report (docs/timeline.md)."""
from __future__ import annotations

from gpumodeler.core.errors import InvalidParameter

#: What the energy is: a GPU's busy power is its board power (TDP), the most the board may
#: draw, not what a kernel draws, so the energy is an upper bound of the kernels' share
#: (copies are in the idle power: docs/timeline.md).
ENERGY_BOUND = "upper bound: busy power is the board's TDP"


def pick_application(project, wanted: str | None) -> str:
    """The id of the application ``wanted`` (id or name, case-insensitive), or the only one."""
    apps = project.applications
    if not apps:
        raise InvalidParameter("the project has no application; add one in the Application tab")
    if wanted is None:
        if len(apps) == 1:
            return next(iter(apps))
        raise InvalidParameter("the project has several applications; choose one with --application: "
                               + ", ".join(f"{a.id} ({a.name})" for a in apps.values()))
    if wanted in apps:
        return wanted
    found = [a.id for a in apps.values() if a.name.casefold() == wanted.casefold()]
    if len(found) == 1:
        return found[0]
    raise InvalidParameter(f"no application {wanted[:80]!r}; applications: "
                           + ", ".join(f"{a.id} ({a.name})" for a in apps.values()))


def run_application(project, app_id: str, lookups: dict, analyses=None) -> dict:
    """The ``timeline --json`` document of application ``app_id``. ``analyses``
    (:class:`~gpumodeler.core.pipeline.GraphAnalyses`) shares graph analyses with other
    evaluations of the project."""
    from gpumodeler.core.application.app import run

    app = project.applications[app_id]
    built, timeline, energy = run(project, app, **lookups, analyses=analyses)
    critical = set(timeline.critical_path)
    steps = []
    kinds = {s.id: s.kind for s in app.steps}
    for a in timeline.activities:
        p = built.predictions[a.id]
        steps.append({
            "id": a.id, "name": a.name, "kind": kinds[a.id],
            "engine": a.engines[0] if a.engines else None, "engines": list(a.engines),
            "links": list(a.links), "device": p.device,
            "start_s": a.start_s, "end_s": a.end_s, "ready_s": a.ready_s,
            "alone_s": p.alone_s, "waited_s": a.start_s - a.ready_s,
            "stretched_s": (a.end_s - a.start_s) - p.alone_s,
            "energy_j": energy.step_j.get(a.id), "critical": a.id in critical,
            "cause": a.cause, "prediction": p.detail})
    return {
        "application": app.id, "name": app.name, "policy": app.policy,
        "steps": steps, "makespan_s": timeline.makespan_s,
        "critical_path": list(timeline.critical_path),
        "busy_fraction": dict(timeline.busy_fraction), "busy_s": dict(timeline.busy_s),
        "energy_j": energy.energy_j, "energy_delay_js": energy.energy_delay_js,
        "device_energy_j": energy.device_j, "host_energy_j": energy.host_j,
        "energy_unknown": list(energy.unknown), "energy_bound": ENERGY_BOUND,
        "notes": list(built.notes)}
