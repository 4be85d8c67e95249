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
    evaluations of the project.

    The cyclic collector is paused meanwhile: the document of 10^5 steps holds millions of
    objects, and each full pass over them held the GIL 0.3-0.5 s (the GUI thread waited
    that long while a worker built it) and took half of the time here."""
    from gpumodeler.core.kernel.collector import collector_paused

    with collector_paused():
        return _run_application(project, app_id, lookups, analyses)


def _run_application(project, app_id: str, lookups: dict, analyses) -> dict:
    from gpumodeler.core.application.app import run
    from gpumodeler.core.application.trace import measured_makespan

    app = project.applications[app_id]
    built, timeline, energy = run(project, app, **lookups, analyses=analyses)
    critical = set(timeline.critical_path)
    steps: list = []
    add = steps.append
    predictions = built.predictions
    step_energy = energy.step_j.get
    t0 = min((s.measured_start_s for s in app.steps if s.measured_start_s is not None),
             default=0.0)
    # the activities are the steps in program order (build makes one per step)
    in_order = len(timeline.activities) == len(app.steps) and all(
        a.id == s.id for a, s in zip(timeline.activities, app.steps))
    if in_order:
        pairs = zip(timeline.activities, app.steps)
    else:
        by_id = {s.id: s for s in app.steps}
        pairs = ((a, by_id[a.id]) for a in timeline.activities)
    for a, step in pairs:
        id_, name, engines, links, start, end, ready, cause = a
        p = predictions[id_]
        measured_s, measured_start = step.measured_s, step.measured_start_s
        measured = measured_start is not None and measured_s is not None
        add({
            "id": id_, "name": name, "kind": step.kind, "stream": step.stream,
            "engine": engines[0] if engines else None, "engines": list(engines),
            "links": list(links), "device": p.device,
            "start_s": start, "end_s": end, "ready_s": ready,
            "alone_s": p.alone_s, "waited_s": start - ready,
            "stretched_s": (end - start) - p.alone_s,
            "energy_j": step_energy(id_), "critical": id_ in critical,
            "cause": cause, "prediction": p.detail,
            "measured_s": measured_s,
            "measured_start_s": measured_start - t0 if measured else None,
            "measured_end_s": measured_start - t0 + measured_s if measured else None})
    return {
        "application": app.id, "name": app.name, "policy": app.policy,
        "steps": steps, "makespan_s": timeline.makespan_s,
        "measured_makespan_s": measured_makespan(app),
        "critical_path": list(timeline.critical_path),
        "busy_fraction": dict(timeline.busy_fraction), "busy_s": dict(timeline.busy_s),
        "energy_j": energy.energy_j, "energy_delay_js": energy.energy_delay_js,
        "device_energy_j": energy.device_j, "host_energy_j": energy.host_j,
        "energy_unknown": list(energy.unknown), "energy_bound": ENERGY_BOUND,
        "notes": list(built.notes)}


#: What ``timeline --by`` groups steps by.
GROUPINGS = ("kernel", "stream")


def aggregate(result: dict, by: str) -> list[dict]:
    """Per kernel name (``by="kernel"``: kernels and copies by their name) or per stream
    (``by="stream"``) of a ``timeline --json`` document: count, total and mean measured and
    predicted time, largest predicted total first. A step's predicted time is its duration
    in the simulated timeline (end − start: with any stretching by shared bandwidth); its
    measured time is the trace's (None for a step built by hand: the measured totals are
    then None too). Syncs and host time are not counted; the lanes of a stream count as
    the stream."""
    if by not in GROUPINGS:
        raise InvalidParameter(f"--by must be one of {', '.join(GROUPINGS)}, got {by!r}")
    groups: dict = {}
    for s in result["steps"]:
        if s["kind"] == "sync":
            continue
        # (a stream's lanes, 7~1, which an import makes for overlapping steps, are stream 7)
        key = s["name"] if by == "kernel" else s["stream"].split("~")[0]
        g = groups.setdefault(key, {by: key, "kind": s["kind"], "count": 0,
                                    "predicted_total_s": 0.0, "measured_total_s": 0.0,
                                    "measured_count": 0})
        if g["kind"] != s["kind"]:
            g["kind"] = "mixed"
        g["count"] += 1
        g["predicted_total_s"] += s["end_s"] - s["start_s"]
        if s.get("measured_s") is not None:
            g["measured_total_s"] += s["measured_s"]
            g["measured_count"] += 1
    rows = []
    for g in groups.values():
        measured = g.pop("measured_count")
        if measured < g["count"]:   # not every step was measured: no measured total
            g["measured_total_s"] = None
        g["predicted_mean_s"] = g["predicted_total_s"] / g["count"]
        g["measured_mean_s"] = (None if g["measured_total_s"] is None
                                else g["measured_total_s"] / g["count"])
        g["ratio"] = (g["predicted_total_s"] / g["measured_total_s"]
                      if g["measured_total_s"] else None)
        rows.append(g)
    rows.sort(key=lambda g: (-g["predicted_total_s"], str(g[by])))
    return rows
