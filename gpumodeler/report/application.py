"""Run a project's application against the device catalog and present the result: the
JSON document of ``gpumodeler timeline`` and its Gantt chart (docs/timeline.md)."""
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


def run_application(project, app_id: str, lookups: dict) -> dict:
    """The ``timeline --json`` document of application ``app_id``."""
    from gpumodeler.core.application.app import run

    app = project.applications[app_id]
    built, timeline, energy = run(project, app, **lookups)
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


def timeline_svg(result: dict, width: int = 900) -> str:
    """The Gantt chart of a :func:`run_application` result: one row per engine and link."""
    from gpumodeler.report.svg import gantt

    rows: list[str] = []
    bars = []
    for s in result["steps"]:
        places = s["engines"] + s["links"] or ["(no engine)"]
        for r in places:
            if r not in rows:
                rows.append(r)
            tip = (f"{s['name']} ({s['kind']}): {s['start_s']:.6g} s .. {s['end_s']:.6g} s; alone "
                   f"{s['alone_s']:.6g} s" + (f"; energy {s['energy_j']:.4g} J" if s["energy_j"] else ""))
            bars.append({"row": r, "start_s": s["start_s"], "end_s": s["end_s"], "label": s["name"],
                         "group": s["kind"] + (s["device"] or ""), "critical": s["critical"], "tooltip": tip})
    return gantt(rows, bars, title=f"{result['name']}: makespan {result['makespan_s']:.6g} s", width=width)
