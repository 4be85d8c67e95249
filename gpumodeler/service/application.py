"""A project's application simulated against the device catalog: the JSON document of
``gpumodeler timeline``, the GUI's Application tab and the report (docs/timeline.md)."""
from __future__ import annotations

from itertools import repeat
from operator import is_

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
        document, columns = application_columns(project, app_id, lookups, analyses)
        document["steps"] = step_rows(columns)
        return document


def application_columns(project, app_id: str, lookups: dict, analyses=None,
                        keep=None, details: bool = True, shown=None) -> tuple[dict, tuple]:
    """:func:`run_application`'s document with its ``"steps"`` still None, and the steps as
    columns: one list per key of :data:`STEP_KEYS` (in that order), one value per step
    (program order). :func:`step_rows` makes the steps of the document from them; the
    ``--json`` writer writes them without making the rows (a 10^5-step application: the
    rows alone take a fifth of a second). The collector is the caller's to pause.
    ``keep``: given the build and the timeline the document is made from, which it does not
    hold (a command line leaves them to the end of its process: freeing a 10^5-step build's
    activities and predictions one by one costs 0.05 s). ``details=False``: the predictions'
    details are not made (None in their column: for an output that shows none), only
    checked as the build would make them; made after all when the build cannot tell they
    are plain and finite (the document's check then reads them). ``shown``: the keys of
    the only columns the caller reads (the text output's); the others are None, not made,
    when their sources tell they would hold only plain values and finite numbers
    (:func:`_shown_columns`), and made as usual when not."""
    from gpumodeler.core.application.app import build, run

    app = project.applications[app_id]
    built, timeline, energy = run(project, app, details=details, **lookups, analyses=analyses)
    if not details and not built.plain_details:
        built = build(project, app, **lookups, analyses=analyses)   # (the same activities)
    if keep is not None:
        keep(built, timeline)
    document = {
        "application": app.id, "name": app.name, "policy": app.policy,
        "steps": None, "makespan_s": timeline.makespan_s,
        "measured_makespan_s": None,
        "critical_path": list(timeline.critical_path),
        "busy_fraction": dict(timeline.busy_fraction), "busy_s": dict(timeline.busy_s),
        "energy_j": energy.energy_j, "energy_delay_js": energy.energy_delay_js,
        "device_energy_j": energy.device_j, "host_energy_j": energy.host_j,
        "energy_unknown": list(energy.unknown), "energy_bound": ENERGY_BOUND,
        "notes": list(built.notes)}
    columns, document["measured_makespan_s"] = _step_columns(app, built, timeline, energy, shown)
    return document, columns


def step_rows(columns) -> list[dict]:
    """The document's steps (one dict per step, the keys of :data:`STEP_KEYS` in order)
    from :func:`application_columns`' columns (a column not made, None: None in each step;
    its values would hold no number that is not finite, so a walk of these steps names the
    same number as one of the whole document's)."""
    n = next((len(c) for c in columns if c is not None), 0)
    columns = [repeat(None, n) if c is None else c for c in columns]
    return [{"id": id_, "name": name, "kind": kind, "stream": stream, "engine": engine,
             "engines": engines, "links": links, "device": device, "start_s": start,
             "end_s": end, "ready_s": ready, "alone_s": alone, "waited_s": waited,
             "stretched_s": stretched, "energy_j": energy, "critical": critical,
             "cause": cause, "prediction": prediction, "measured_s": measured,
             "measured_start_s": measured_start, "measured_end_s": measured_end}
            for (id_, name, kind, stream, engine, engines, links, device, start, end, ready,
                 alone, waited, stretched, energy, critical, cause, prediction, measured,
                 measured_start, measured_end) in zip(*columns)]


#: The keys of a step of the document, in their order.
STEP_KEYS = ("id", "name", "kind", "stream", "engine", "engines", "links", "device",
             "start_s", "end_s", "ready_s", "alone_s", "waited_s", "stretched_s", "energy_j",
             "critical", "cause", "prediction", "measured_s", "measured_start_s",
             "measured_end_s")


def _step_columns(app, built, timeline, energy, shown=None) -> tuple:
    """The columns of the document's steps (:func:`application_columns`), one value per
    simulated activity (program order), each column computed at once (a 10^5-step
    application: in C, not one Python statement per step and key), and the measured
    makespan (:func:`_measured_makespan`). The activities' own columns are the
    simulation's when it kept them (:func:`~gpumodeler.core.application.timeline.step_columns`).
    ``shown``: see :func:`application_columns`."""
    from operator import attrgetter, sub

    from gpumodeler.core.application.timeline import step_columns

    ids, names, engines, links, starts, ends, readies, causes = step_columns(timeline)
    if not ids:
        return tuple([] for _ in STEP_KEYS), _measured_makespan(app)
    if shown is not None:
        made = _shown_columns(app, built, timeline, energy, shown)
        if made is not None:
            return made
    step_ids = list(map(attrgetter("id"), app.steps))
    in_order = ids == step_ids   # the activities are the steps in program order (build makes one per step)
    steps = app.steps if in_order else list(map({s.id: s for s in app.steps}.__getitem__, ids))
    predictions = _values_by_id(built.predictions, ids, built.predictions.__getitem__)
    alone = list(map(attrgetter("alone_s"), predictions))
    measured_s = list(map(attrgetter("measured_s"), steps))
    measured_start = list(map(attrgetter("measured_start_s"), steps))
    measured = _measured_columns(measured_start, measured_s) if in_order else None
    if measured is None:
        t0 = min((t for t in map(attrgetter("measured_start_s"), app.steps) if t is not None),
                 default=0.0)
        measured = ([None if t is None or d is None else t - t0
                     for t, d in zip(measured_start, measured_s)],
                    [None if t is None or d is None else t - t0 + d
                     for t, d in zip(measured_start, measured_s)],
                    _measured_makespan(app))
    columns = (
        ids, names, list(map(attrgetter("kind"), steps)),
        list(map(attrgetter("stream"), steps)),
        _engine_column(engines), list(map(list, engines)),
        list(map(list, links)), list(map(attrgetter("device"), predictions)),
        starts, ends, readies, alone, list(map(sub, starts, readies)),
        list(map(sub, map(sub, ends, starts), alone)),
        _energy_column(energy, ids), _critical_column(timeline, ids),
        causes,
        _details(built, predictions), measured_s, measured[0], measured[1])
    return columns, measured[2]


def _engine_column(engines: list) -> list:
    """Each step's engine: the first it holds (None for none)."""
    return [e[0] if e else None for e in engines]


def _energy_column(energy, ids: list) -> list:
    """Each step's energy (None when unknown)."""
    step_energy = energy.step_j
    return _values_by_id(step_energy, ids, step_energy.get)


def _critical_column(timeline, ids: list) -> list:
    """Whether each step is on the critical path."""
    return list(map(set(timeline.critical_path).__contains__, ids))


#: below this, a sum of magnitudes leaves a difference of two such numbers finite (2^1022)
_HALF_OF_THE_LARGEST = 2.0 ** 1022


def _shown_columns(app, built, timeline, energy, shown) -> tuple | None:
    """:func:`_step_columns` with only the columns of the keys ``shown`` made (the text's:
    a 10^5-step document's other 15 columns take 0.1 s to make and as much to check), the
    others None, and the measured makespan; or None when the sources of a column not
    shown cannot tell that it would hold only plain values and finite numbers (the caller
    then makes every column, and the document's check reads them).

    What the simulation's own timeline holds needs no look: the ids are text (it checks
    them), its times are whole picoseconds divided into seconds (finite floats; the time
    waited, start - ready, two of them >= 0: finite), the causes ids or None; the
    activities' engines and links are tuples of the text the build writes. Each step's
    kind and each prediction's device are read for their types; the predictions' times
    alone for their types and their magnitudes (their sum and the makespan below 2^1022:
    then each and every stretch, end - start - alone, is finite); the measured starts and
    durations when every step has both: their types, and the sum of the measured ends
    (finite only when every start from the first and every duration is)."""
    import math
    from operator import add, attrgetter, sub

    from gpumodeler.core.application.timeline import positions_of, step_columns

    if not shown or ("prediction" not in shown and not built.plain_details) or \
            positions_of(timeline) is None:   # (no column shown: the steps' count is in them)
        return None
    ids, names, engines, _links, starts, ends, _readies, _causes = step_columns(timeline)
    made = {"id": lambda: ids, "name": lambda: names, "engine": lambda: _engine_column(engines),
            "start_s": lambda: starts, "end_s": lambda: ends,
            "energy_j": lambda: _energy_column(energy, ids),
            "critical": lambda: _critical_column(timeline, ids)}
    if not set(shown) <= made.keys():
        return None
    steps, predictions = app.steps, built.predictions.values()
    alone = list(map(attrgetter("alone_s"), predictions))
    measured_s = list(map(attrgetter("measured_s"), steps))
    measured_start = list(map(attrgetter("measured_start_s"), steps))
    numbers = {float, int}
    try:
        if not (_types_within(map(attrgetter("kind"), steps), {str})
                and _types_within(map(attrgetter("device"), predictions), {str, type(None)})
                and _types_within(alone, numbers)
                and sum(map(abs, alone)) < _HALF_OF_THE_LARGEST
                and timeline.makespan_s < _HALF_OF_THE_LARGEST
                and _types_within(measured_s, numbers) and _types_within(measured_start, numbers)):
            return None
        t0 = min(measured_start, default=0.0)
        if not math.isfinite(sum(map(add, map(sub, measured_start, repeat(t0)), measured_s))):
            return None
        makespan = _measured_span(measured_start, measured_s, t0)
    except OverflowError:   # (whole numbers too large for a float)
        return None
    return tuple(made[k]() if k in shown else None for k in STEP_KEYS), makespan


def _types_within(values, types: set) -> bool:
    """Whether every value of ``values`` is of one of ``types`` (exactly)."""
    return set(map(type, values)) <= types


class CheckedWhereMade(list):
    """A column of the document whose values were checked plain and finite where they were
    made (``made``: those very objects, in order)."""

    __slots__ = ("made",)


def checked_where_made(column) -> bool:
    """Whether ``column`` holds only values checked plain and finite where they were made:
    a :class:`CheckedWhereMade` still holding exactly those objects (a value put in its
    place since is not)."""
    return type(column) is CheckedWhereMade and len(column) == len(column.made) and \
        all(map(is_, column, column.made))


def _details(built, predictions: list) -> list:
    """The column of the steps' prediction details: a :class:`CheckedWhereMade` when the
    build checked every detail as it made it, or would have made it (``plain_details``: what
    a step shares with others once, its own values each), so that the document's check need
    not read them again (10^5 steps: 0.1 s, a fifth of a million dicts and lists read from
    memory)."""
    from operator import attrgetter

    details = list(map(attrgetter("detail"), predictions))
    if not built.plain_details:
        return details
    column = CheckedWhereMade(details)
    column.made = tuple(details)
    return column


def _values_by_id(by_id: dict, ids: list, look_up) -> list:
    """``list(map(look_up, ids))`` (``look_up`` a look-up in ``by_id``): the dict's values
    as they are when its keys are ``ids`` in that order, as the build and the energy make
    them (one list compared, pointer to pointer, in place of 10^5 look-ups)."""
    if len(by_id) == len(ids) and list(by_id) == ids:
        return list(by_id.values())
    return list(map(look_up, ids))


def _measured_columns(starts: list, durations: list) -> tuple | None:
    """(measured start and end of each step from the first measured start, the measured
    makespan) from the steps' measured starts and durations (program order, every step of
    the application) when every step has both: the same subtractions and additions on the
    same floats as the general rule (``t - t0``, ``t - t0 + d``; the first measured start
    to the last measured end) in C, a column at a time; None when a step lacks one (or
    they are not numbers): the general rule then."""
    from operator import add, sub

    try:
        t0 = min(starts)   # (None among numbers: TypeError)
        if t0 is None:
            return None
        relative = list(map(sub, starts, repeat(t0)))
        ends = list(map(add, relative, durations))
        return relative, ends, _measured_span(starts, durations, t0)
    except TypeError:
        return None


def _measured_span(starts, durations, t0):
    """From ``t0`` to the last measured end (the starts and durations of the steps)."""
    from operator import add
    return max(map(add, starts, durations)) - t0


def _measured_makespan(app) -> float | None:
    """:func:`gpumodeler.core.application.trace.measured_makespan` (from the first measured
    start to the last measured end; None when no step was measured), read a column at a
    time: the same sums and comparisons on the same floats, so the same number."""
    from operator import attrgetter

    pairs = [(t, d) for t, d in zip(map(attrgetter("measured_start_s"), app.steps),
                                    map(attrgetter("measured_s"), app.steps))
             if t is not None and d is not None]
    if not pairs:
        return None
    starts, durations = zip(*pairs)
    return _measured_span(starts, durations, min(starts))


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
