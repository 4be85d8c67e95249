"""`gpumodeler timeline`: simulate a project's application on its system (docs/timeline.md).

Prints each step's start and end, its engine, the makespan, the critical path, each engine's
and link's busy fraction and the energy; ``--json`` the same as one document, ``--svg FILE``
writes the Gantt chart.
"""
from __future__ import annotations

from itertools import chain


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "timeline", help="simulate a project's application: steps, makespan, energy",
        description="Simulate an application of a project (kernels and copies on streams "
                    "across GPUs and links) and print its timeline.")
    p.add_argument("file", metavar="PROJECT.gpm")
    p.add_argument("--application", metavar="ID_OR_NAME",
                   help="which application (default: the only one)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--svg", metavar="FILE", help="write the Gantt chart as SVG")
    p.add_argument("--by", choices=("kernel", "stream"),
                   help="per kernel name or per stream: count, total and mean measured vs "
                        "predicted time, instead of every step")
    p.set_defaults(func=_timeline)


def _timeline(args) -> int:
    # The command builds millions of objects that live to its end (10^5 steps: the project,
    # the timeline, the document): the cyclic collector would rescan them again and again
    # (half the time of run_application). Nothing here makes cycles worth collecting.
    from gpumodeler.core.kernel.collector import collector_paused
    with collector_paused():
        return _timeline_without_collector(args)


def _timeline_without_collector(args) -> int:
    from gpumodeler.core import finite
    from gpumodeler.report.application import timeline_svg
    from gpumodeler.service import application as service

    from . import common
    from .main import CLIError, leave_to_exit

    if args.svg is not None and not args.svg.strip():
        raise CLIError("--svg needs a file name")
    project, _info = common.read_project(args.file)
    app_id = service.pick_application(project, args.application)
    text = not (args.json or args.svg or args.by)
    with common.open_catalog() as catalog:
        # (the predictions' details are only in the JSON document: not made for the other
        # outputs, only checked as they would be made; the text's columns alone are made
        # when the sources of the others tell them plain and finite)
        result, columns = service.application_columns(project, app_id,
                                                      common.catalog_lookups(catalog),
                                                      keep=leave_to_exit,
                                                      details=bool(args.json and not args.by),
                                                      shown=TEXT_KEYS if text else None)
    leave_to_exit(result, columns)   # plain data: freed by the system at exit
    if args.json and not (args.svg or args.by) and _print_columns(result, columns):
        return 0
    if (args.svg or args.by or not args.json) and not (
            finite.plain_finite_values([dict(result, steps=None)]) and
            all(finite.plain_finite_values(c) for c in columns
                if c is not None and not service.checked_where_made(c))):
        # one rule for the text, the JSON and the chart (the plain JSON document is checked
        # as it is written: print_json; a column the build checked as it made its values,
        # the predictions' details, is not read again, nor one not made); the document
        # walked to name the number
        common.require_finite(dict(result, steps=service.step_rows(columns)))
    if text:
        # the text: written from the columns (the step objects are never made)
        _print_text(result, columns, common.fmt_time)
        return 0
    result["steps"] = service.step_rows(columns)
    if args.svg:
        from gpumodeler.report.files import write_text_atomically
        write_text_atomically(args.svg, timeline_svg(result),
                              inputs=common.inputs_and_catalog((args.file, "the project file")))
    if args.by:
        rows = service.aggregate(result, args.by)
        if args.json:
            common.print_json({"application": result["application"], "name": result["name"],
                               "by": args.by, "groups": rows,
                               "makespan_s": result["makespan_s"],
                               "measured_makespan_s": result["measured_makespan_s"]},
                              checked=True)
            return 0
        _print_groups(result, rows, args.by, common.fmt_time)
        return 0
    if args.json:
        common.print_json(result, checked=bool(args.svg))
        return 0
    _print(result, common.fmt_time)
    return 0


#: the steps' columns the text prints
TEXT_KEYS = ("name", "engine", "start_s", "end_s", "energy_j", "critical")


def _print_columns(result: dict, columns) -> bool:
    """Print the ``--json`` document with its steps written from their columns
    (:class:`~gpumodeler.cli.columnar_json.Records`: the step objects are never made) —
    the text :func:`~gpumodeler.cli.common.print_json` prints for the whole document, byte
    for byte — and say True; or print nothing and say False when the document holds
    something the columnar writer leaves to the standard library, or a number that is not
    finite: the caller then prints the whole document the usual way (which refuses such a
    number, naming it; or a value only print_json's converter writes, as a numpy number)."""
    import sys

    from gpumodeler.service.application import STEP_KEYS

    from . import columnar_json

    document = dict(result, steps=columnar_json.Records(STEP_KEYS, columns))
    try:
        parts = columnar_json.dump_parts(document, None, allow_nan=False)
    except (columnar_json.Unsupported, TypeError, ValueError, RecursionError):
        return False
    parts.append("\n")
    _write_parts(sys.stdout, parts)
    return True


def _write_parts(stream, parts: list) -> None:
    """Write the texts ``parts`` to the text stream ``stream`` as ``stream.write`` of each
    would: to its bytes underneath, each encoded once as the stream encodes (a 10^5-step
    document's slices: no copy through the text layer), when it has them and encodes as
    UTF-8 where a line end is ``\\n``; else through ``stream.write``."""
    import codecs
    import os

    buffer = getattr(stream, "buffer", None)
    encoding = getattr(stream, "encoding", None)
    errors = getattr(stream, "errors", None) or "strict"
    try:
        utf8 = encoding is not None and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        utf8 = False
    if buffer is None or not utf8 or not isinstance(errors, str) or os.linesep != "\n":
        for part in parts:
            stream.write(part)
        return
    stream.flush()   # what was written before goes first
    write = buffer.write
    for part in parts:
        write(part.encode("utf-8", errors))


def step_lines(names, engines, starts, ends, energies, critical, width: int, fmt_time) -> str:
    """The text's step lines, one per step: its name (padded to ``width``), its engine
    (``-`` for none), start and end (``fmt_time``), energy (``?`` when unknown) and ``*``
    when it is on the critical path, each line ended by a line break.

    Written a column at a time (10^5 steps: half a second a line at a time): each column's
    cells made in one pass, padded and followed by what separates them from the next as
    the template ``%-Ns  %-18s %12s %12s %10s%s`` lays them out (each distinct name and
    engine once; the times by :func:`_times`, each distinct time once; the energies, each
    distinct one once), then all the cells joined (0.23 -> 0.19 s at 10^5 steps, when each
    line was one ``%`` of that template)."""
    n = len(starts)
    times = _times(list(starts) + list(ends), fmt_time, 12, " ")   # (a step starts where one ends)
    cells = (_cells(names, f"%-{width}s  "), _cells([e or "-" for e in engines], "%-18s "),
             times[:n], times[n:], _energies(energies), [" *\n" if c else "\n" for c in critical])
    return "".join(chain.from_iterable(zip(*cells)))


def _cells(texts: list, template: str) -> list:
    """``[template % (t,) for t in texts]``, each distinct text formatted once when they
    are all text (a few names and engines repeated over 10^5 steps)."""
    if not set(map(type, texts)) <= {str}:
        return [template % (t,) for t in texts]
    table = {t: template % (t,) for t in set(texts)}
    return list(map(table.__getitem__, texts))


def _energies(values: list) -> list:
    """Each step's energy cell: ``f"{e:.4g} J"`` (``?`` for None) right-aligned to 10
    characters, as ``%10s`` does; each distinct float (bit pattern) formatted once."""
    if len(values) < _COLUMN_FROM or not set(map(type, values)) <= {float}:
        return ["%10s" % ("?" if e is None else f"{e:.4g} J") for e in values]
    # ("%8.4g J": the number padded to 8 leaves the 10 that "%10s" pads the text to)
    return _each_distinct(values, lambda numbers: _written(["%8.4g J"] * len(numbers), numbers))


def _each_distinct(values: list, texts) -> list:
    """The texts of the floats ``values``, each distinct number (bit pattern: -0.0 is not
    0.0) written once: ``texts`` is given the distinct numbers (a numpy array, in
    ascending order of their bits) and gives their texts in that order."""
    import numpy as np

    distinct, inverse = np.unique(np.array(values, dtype=np.float64).view(np.int64),
                                  return_inverse=True)
    table = texts(distinct.view(np.float64))
    return list(map(table.__getitem__, inverse.ravel().tolist()))


def _times(values: list, fmt_time, width: int = 0, end: str = "") -> list:
    """``["%{width}s" % fmt_time(v) + end for v in values]`` (by default, each
    ``fmt_time(v)``); for :func:`~gpumodeler.cli.common.fmt_time` and floats, each
    distinct value once and a unit at a time: its unit chosen for all values at once
    (numpy; the rule of :func:`~gpumodeler.core.units_format.time_unit`: the largest of s,
    ms and µs in which the magnitude is at least 1, µs below), then each value divided by
    the unit's size and written with 6 significant digits, as
    :func:`~gpumodeler.core.units_format.format_time` does (the same division, the same
    ``g`` format: the same text), the number padded to what leaves ``width`` for the
    number, a space and the unit."""
    from . import common
    if fmt_time is not common.fmt_time or len(values) < _COLUMN_FROM or "\0" in end or \
            not set(map(type, values)) <= {float}:
        return [f"%{width}s" % fmt_time(v) + end for v in values] if width or end else \
            list(map(fmt_time, values))
    return _each_distinct(values, lambda numbers: _unit_texts(numbers, width, end))


def _unit_texts(numbers, width: int, end: str) -> list:
    """:func:`_times`' texts of the distinct numbers ``numbers`` (a numpy array): each
    number's template (its unit's) picked at once, each number divided by its unit's size
    at once, all written by :func:`_written`."""
    import numpy as np

    from gpumodeler.core.units_format import TIME_UNITS

    units = [(name, scale) for name, scale in TIME_UNITS if scale >= 1e-6]   # s, ms, µs
    size = np.abs(numbers)
    # the index in ``units`` of each value's unit: how many sizes it is not at least (NaN:
    # none, µs, as time_unit says)
    where = sum((~(size >= scale)).astype(np.intp) for _name, scale in units[:-1])
    # (each number divided by its unit's size: numpy's division of two doubles is Python's)
    scaled = numbers / np.array([scale for _name, scale in units])[where]
    templates = []
    for name, _scale in units:
        pad = width - len(name) - 1   # ("%9.6g ms" pads as "%12s" pads "… ms")
        templates.append(f"%{pad if pad > 0 else ''}.6g {name}" + end.replace("%", "%%"))
    return _written(list(map(templates.__getitem__, where.tolist())), scaled)


def _written(templates: list, numbers) -> list:
    """``[t % v for t, v in zip(templates, numbers.tolist())]`` (``numbers`` a numpy
    array; no template holds a NUL): the templates joined, each ended by a NUL, filled by
    one ``%`` and split apart (a third faster than a ``%`` call per number)."""
    text = "\0".join(templates) + "\0"
    return (text % tuple(numbers.tolist())).split("\0")[:-1]


#: from how many values :func:`_times` formats a column a unit at a time
_COLUMN_FROM = 64


#: the widest name ``--by`` prints in text (longer ones are cut with …)
NAME_WIDTH = 60


def _print_groups(r: dict, rows: list, by: str, fmt_time) -> None:
    """The ``--by`` table: one row per kernel name or stream."""
    def t(v):
        return "-" if v is None else fmt_time(v)
    print(f"application  {r['name']} ({r['application']}), per {by}")

    def name(g) -> str:   # C++ names run long: cut in the text (whole in --json)
        text = str(g[by])
        return text if len(text) <= NAME_WIDTH else text[:NAME_WIDTH - 1] + "…"
    width = max([len(name(g)) for g in rows] + [len(by)])
    print(f"{by:<{width}}  {'count':>7} {'measured':>12} {'mean':>12} {'predicted':>12} "
          f"{'mean':>12} {'pred/meas':>9}")
    for g in rows:
        ratio = "-" if g["ratio"] is None else f"{g['ratio']:.3f}"
        print(f"{name(g):<{width}}  {g['count']:>7} {t(g['measured_total_s']):>12} "
              f"{t(g['measured_mean_s']):>12} {t(g['predicted_total_s']):>12} "
              f"{t(g['predicted_mean_s']):>12} {ratio:>9}")
    _print_makespans(r, fmt_time)


def _print_makespans(r: dict, fmt_time) -> None:
    print(f"makespan     {fmt_time(r['makespan_s'])}")
    if r.get("measured_makespan_s") is not None:
        m = r["measured_makespan_s"]
        print(f"measured     {fmt_time(m)} (predicted/measured {r['makespan_s'] / m:.3f})"
              if m > 0 else f"measured     {fmt_time(m)}")


def _print(r: dict, fmt_time) -> None:
    """The text of the document ``r`` (its ``"steps"`` the step objects)."""
    from gpumodeler.service.application import STEP_KEYS

    steps = r["steps"]
    _print_text(r, [[s[k] for s in steps] for k in STEP_KEYS], fmt_time)


def _print_text(r: dict, columns, fmt_time) -> None:
    """The text of the document ``r`` whose steps are ``columns`` (one list per key of
    :data:`~gpumodeler.service.application.STEP_KEYS`), its numbers finite."""
    import sys

    from gpumodeler.service.application import STEP_KEYS

    column = dict(zip(STEP_KEYS, columns))
    print(f"application  {r['name']} ({r['application']}), engine queues {r['policy']}")
    names = column["name"]
    width = max(map(len, names), default=4)
    print(f"{'step':<{width}}  {'engine':<18} {'start':>12} {'end':>12} {'energy':>10}")
    sys.stdout.write(step_lines(names, column["engine"], column["start_s"], column["end_s"],
                                column["energy_j"], column["critical"], width, fmt_time))
    _print_makespans(r, fmt_time)
    print(f"critical     {' -> '.join(r['critical_path'])}  (* above)")
    print("busy         " + ", ".join(f"{k} {v:.1%}" for k, v in r["busy_fraction"].items()))
    if r["energy_j"] is None:
        print("energy       unknown: " + "; ".join(r["energy_unknown"]))
    else:
        print(f"energy       {r['energy_j']:.6g} J, energy-delay product {r['energy_delay_js']:.6g} J·s "
              f"({r['energy_bound']})")
    for note in r["notes"]:
        print(f"note         {note}")
