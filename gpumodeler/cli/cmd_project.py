"""`gpumodeler project`: look into a project file (.gpm) and predict its launches.

``show`` summarises the system (devices and links), the kernels with their symbolic latency
bound, the launches and saved sweeps. ``predict`` evaluates launches exactly as the launch
panel and the report do (:mod:`gpumodeler.service`), resolving device and link names
in the device catalog, with each launch's own kernel terms (saved with it; defaults
``predict``'s: under-filled GPU on, tail off) where ``--tail``, ``--no-underfill``,
``--launch-overhead``, ``--no-launch-overhead`` and ``--l2-bandwidth``, when given, take the
place of the launch's; ``sweep --model`` overlays the registered models
(a column ``time_s_<model>`` each). Both take ``--json``. A file that is not a project, is corrupted or
is from a newer gpumodeler ends with exit status 2 and one line saying so.
"""
from __future__ import annotations

import sys

from typing import TYPE_CHECKING

from gpumodeler.core.errors import ModelError
from gpumodeler.service.launches import calibration_text, transfer_calibration_of  # noqa: F401  (re-exported)

from . import common, model_flags
from .main import EXIT_USAGE, CLIError, one_line

if TYPE_CHECKING:  # the model and the project file are loaded by the action that runs
    from gpumodeler.core.project import Project


def read_project_file(path):
    return common.read_project(path)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "project", help="show a project file or predict its launches",
        description="Read a gpumodeler project file (.gpm) without changing it.")
    sub = parser.add_subparsers(dest="project_command", metavar="ACTION",
                                parser_class=type(parser))
    sub.required = True

    p = sub.add_parser("show", help="devices, links, kernels (latency bound) and launches")
    p.add_argument("file", metavar="FILE.gpm")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_show)

    p = sub.add_parser("predict", help="kernel and transfer times of the project's launches",
                       description="Evaluate launches like the launch panel, with devices "
                                   "and links from the device catalog.")
    p.add_argument("file", metavar="FILE.gpm")
    p.add_argument("--launch", metavar="NAME_OR_ID",
                   help="only this launch (id, or name; case-insensitive)")
    p.add_argument("--json", action="store_true", help="print JSON")
    model_flags.add_term_flags(p.add_argument_group("kernel terms (as predict)"))
    p.set_defaults(func=_predict)

    p = sub.add_parser("sweep", help="a launch over a range of one variable (CSV or JSON)",
                       description="Evaluate a launch over values of one variable (block_size, "
                                   "occupancy, data_size, a loop variable, or gpu), like the "
                                   "launch panel's sweep; or run a sweep saved in the project.")
    p.add_argument("file", metavar="FILE.gpm")
    p.add_argument("--launch", metavar="NAME_OR_ID", help="the launch (default: the only one)")
    p.add_argument("--saved", metavar="SWEEP_ID_OR_NAME", help="run a sweep saved in the project")
    p.add_argument("--variable", help="block_size, occupancy, data_size, gpu, or a loop variable")
    p.add_argument("--values", type=common.list_of(common.float_arg), metavar="LIST",
                   help="comma list or START:STOP[:STEP]")
    p.add_argument("--device", action="append", default=[], metavar="NAME",
                   help="compare GPUs from the catalog (repeatable; one curve each)")
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("--output", "-o", metavar="FILE")
    model_flags.add_model_flags(p, overlay=True)
    p.set_defaults(func=_sweep)


def _lookups(args, catalog) -> dict:
    """The catalog's resolvers, the GPU carrying ``--launch-overhead`` when given."""
    from gpumodeler.service.lookups import with_gpu_values
    return with_gpu_values(common.catalog_lookups(catalog),
                           launch_overhead_s=getattr(args, "launch_overhead", None),
                           l2_bandwidth_bytes_per_s=getattr(args, "l2_bandwidth", None),
                           l2_bytes=getattr(args, "l2_size", None),
                           l1_bytes_per_sm=getattr(args, "l1_size", None))


def _terms(args, project=None):
    """None: each launch's own kernel terms decide (saved with it, LaunchTerms), the flags
    given on the command line taking the place of the launch's (:func:`_with_flag_terms`,
    applied to ``project`` when given)."""
    if project is not None:
        _with_flag_terms(project, args)
    return None


def _with_flag_terms(project, args) -> None:
    """Each launch of ``project`` (this run's copy, never saved) with the kernel-term flags
    that were given in place of its saved terms: ``--tail``, ``--no-underfill`` and
    ``--no-launch-overhead`` switch, ``--launch-overhead`` and ``--l2-bandwidth`` give the
    value; a flag not given keeps what the launch saved (the launch panel's Kernel terms)."""
    from dataclasses import replace
    changes = {}
    if getattr(args, "tail", False):
        changes["tail"] = True
    if getattr(args, "no_underfill", False):
        changes["underfill"] = False
    if getattr(args, "no_launch_overhead", False):
        changes["launch_overhead"] = False
    for name, flag in (("launch_overhead_s", "launch_overhead"),
                       ("l2_bandwidth_bytes_per_s", "l2_bandwidth")):
        if getattr(args, flag, None) is not None:
            changes[name] = getattr(args, flag)
    if changes:
        for lid, launch in list(project.launches.items()):
            project.launches[lid] = replace(launch, terms=replace(launch.terms, **changes))


# -- show ------------------------------------------------------------------------------------
def _latency_formula(graph) -> str:
    from gpumodeler.core.kernel.latency_bound import analyze
    try:
        return analyze(graph, common.latency_table_for(graph.latency_table)).formula()
    except ModelError as exc:
        return f"(cannot analyse: {exc})"


def _overrides_text(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items())


def summary(project: Project, info) -> dict:
    """The ``show --json`` document."""
    from gpumodeler.core.project import TERM_FIELDS
    return {
        "file": str(info.path), "format": info.format, "schema_version": info.schema_version,
        "app_version": info.app_version, "name": project.name,
        "description": project.description,
        "devices": [{"id": d.id, "kind": d.kind, "device_name": d.device_name,
                     "count": d.count, "label": d.label, "overrides": d.overrides}
                    for d in project.devices.values()],
        "links": [{"id": c.id, "link_name": c.link_name, "link_type": c.link_type,
                   "a": c.a, "b": c.b, "label": c.label, "overrides": c.overrides}
                  for c in project.connections.values()],
        "kernels": [{"id": kid, "name": g.name, "latency_table": g.latency_table,
                     "instructions": len(g.instructions), "edges": len(g.edges),
                     "loops": len(g.loops), "variables": g.variables,
                     "latency_bound_formula": _latency_formula(g)}
                    for kid, g in project.kernels.items()],
        "launches": [{"id": la.id, "name": la.name, "gpu": la.gpu, "kernel": la.kernel,
                      "block_size": la.block_size, "grid_size": la.grid_size,
                      "data_size": la.data_size, "registers": la.registers,
                      "shared_mem": la.shared_mem, "occupancy_override": la.occupancy_override,
                      "lambda": la.lam, "variables": la.variables,
                      "kernel_overrides": la.kernel_overrides,
                      "kernel_terms": {name: getattr(la.terms, name) for name in TERM_FIELDS},
                      "transfers": [{"direction": t.direction, "size": t.size,
                                     "connection": t.connection} for t in la.transfers]}
                     for la in project.launches.values()],
        "sweeps": [{"id": s.id, "name": s.name, "launch": s.launch, "variable": s.variable,
                    "values": list(s.values), "devices": list(s.devices)}
                   for s in project.sweeps.values()],
        "applications": [{"id": a.id, "name": a.name, "policy": a.policy, "variables": a.variables,
                          "steps": len(a.steps)} for a in project.applications.values()],
        "measurements": len(project.measurements),
        "calibrations": len(project.calibrations),
        "history": len(project.history),
    }


def _check_launches(project: Project, path) -> None:
    """Refuse launches whose values no launch can have (a file edited outside gpumodeler):
    ``show`` would print them as if they were fine."""
    for la in project.launches.values():
        try:
            la.checked()
        except ModelError as exc:
            raise CLIError(f"{path}: launch {la.id} ({la.name}): {exc}") from None


def _show(args) -> int:
    project, info = read_project_file(args.file)
    _check_launches(project, info.path)
    s = summary(project, info)
    common.require_finite(s)
    if args.json:
        common.print_json(s, checked=True)
        return 0
    print(f"project  {project.name}")
    print(f"file     {info.path} (schema version {info.schema_version}, saved by gpumodeler "
          f"{info.app_version or '?'})")
    if project.description:
        print(f"         {project.description}")
    _section("devices", [
        f"{d.id}: {d.kind} {d.device_name}" + (f" ×{d.count}" if d.count != 1 else "")
        + (f" [{d.label}]" if d.label else "")
        + (f" (overrides {_overrides_text(d.overrides)})" if d.overrides else "")
        for d in project.devices.values()])
    _section("links", [
        f"{c.id}: {c.link_name} ({c.link_type}) {c.a} <-> {c.b}"
        + (f" (overrides {_overrides_text(c.overrides)})" if c.overrides else "")
        for c in project.connections.values()])
    _section("kernels", [
        f"{k['id']}: {k['name']}, {k['instructions']} instructions, {k['edges']} edges, "
        f"{k['loops']} loop(s); latency bound {k['latency_bound_formula']} cycles"
        for k in s["kernels"]])
    _section("launches", [_launch_text(project, la) for la in project.launches.values()])
    _section("sweeps", [
        f"{sw.id}: {sw.name + ', ' if sw.name else ''}{sw.variable} over {len(sw.values)} "
        f"value(s)" + (f" ({sw.values[0]}..{sw.values[-1]})" if sw.values else "")
        + f" for launch {sw.launch}" for sw in project.sweeps.values()])
    _section("apps", [f"{a['id']}: {a['name']}, {a['steps']} step(s), engine queues {a['policy']}"
                      for a in s["applications"]])
    print(f"data     {s['measurements']} measurement(s), {s['calibrations']} calibration(s), "
          f"{s['history']} saved prediction(s)")
    return 0


def _section(title: str, lines: list[str]) -> None:
    if not lines:
        print(f"{title:<8} (none)")
    for i, line in enumerate(lines):
        print(f"{title if i == 0 else '':<8} {line}")


def _launch_text(project: Project, la) -> str:
    gpu = project.devices.get(la.gpu)
    where = f"{la.gpu} ({gpu.device_name})" if gpu else (la.gpu or "no GPU")
    size = f"data size {la.data_size}" if la.data_size is not None else f"grid {la.grid_size}"
    occ = (f"occupancy {la.occupancy_override:g} warps/SM" if la.occupancy_override is not None
           else f"{la.registers} registers" + (f", {la.shared_mem} B shared" if la.shared_mem else ""))
    text = (f"{la.id}: {la.name}, kernel {la.kernel or '(none)'} on {where}, block "
            f"{la.block_size}, {size}, {occ}, λ {la.lam:g}")
    if la.variables:
        text += ", " + _overrides_text(la.variables)
    if la.transfers:
        text += "; copies " + ", ".join(f"{t.direction} {t.size}" for t in la.transfers)
    return text


# -- predict ---------------------------------------------------------------------------------
def pick_launches(project: Project, wanted: str | None) -> list[str]:
    """Launch ids to evaluate: all, or the one whose id or name is ``wanted``."""
    if not project.launches:
        raise CLIError("the project has no launches; add one in the launch panel")
    if wanted is None:
        return list(project.launches)
    if wanted in project.launches:
        return [wanted]
    for match in (lambda la: la.name == wanted,
                  lambda la: la.name.casefold() == wanted.casefold()):
        found = [la.id for la in project.launches.values() if match(la)]
        if len(found) == 1:
            return found
        if len(found) > 1:
            raise CLIError(f"several launches are named {wanted!r} ({', '.join(found)}); "
                           f"give its id")
    known = ", ".join(f"{la.id} ({la.name})" for la in project.launches.values())
    raise CLIError(f"no launch {wanted!r} in the project; launches: {known}")


def predict_launch(project: Project, launch_id: str, catalog, args=None, evaluation=None) -> dict:
    """One launch evaluated like the launch panel, as the JSON-ready dict ``predict`` prints
    (``args``: the kernel-term flags; default ``predict``'s defaults):
    :func:`gpumodeler.service.launches.predict_launch` with the flags' lookups and terms."""
    from gpumodeler.service.launches import predict_launch as predict
    if evaluation is not None:
        return predict(project, launch_id, catalog, evaluation=evaluation)
    if args is None:
        return predict(project, launch_id, catalog)
    return predict(project, launch_id, catalog, lookups=_lookups(args, catalog),
                   terms=_terms(args, project))


def _predict(args) -> int:
    project, info = read_project_file(args.file)
    ids = pick_launches(project, args.launch)
    from gpumodeler.service.evaluation import ProjectEvaluation
    catalog = common.open_catalog()
    results, failed = [], 0
    try:
        evaluation = ProjectEvaluation(project, _lookups(args, catalog), terms=_terms(args, project))
        for launch_id in ids:
            try:
                results.append(predict_launch(project, launch_id, catalog, evaluation=evaluation))
            except ModelError as exc:
                if args.launch is not None:
                    raise
                failed += 1
                name = project.launches[launch_id].name
                results.append({"launch": launch_id, "name": name, "error": str(exc)})
                print(one_line(f"gpumodeler project: launch {launch_id} ({name}): {exc}"),
                      file=sys.stderr)
    finally:
        catalog.close()
    common.require_finite(results)
    if args.json:
        common.print_json({"project": project.name, "file": str(info.path),
                           "launches": results})
    else:
        for r in results:
            if "error" not in r:
                _print_result(r)
    return EXIT_USAGE if failed else 0


def _sweep(args) -> int:
    import numpy as np

    project, _ = read_project_file(args.file)
    saved = None
    if args.saved:
        matches = [sw for sw in project.sweeps.values()
                   if args.saved in (sw.id, sw.name) or sw.name.casefold() == args.saved.casefold()]
        if len(matches) != 1:
            known = ", ".join(f"{sw.id} ({sw.name or sw.variable})" for sw in project.sweeps.values()) or "none"
            raise CLIError(f"no single saved sweep {args.saved!r}; saved sweeps: {known}")
        saved = matches[0]
    launch_id = saved.launch if saved else None
    if launch_id is None:
        ids = pick_launches(project, args.launch)
        if len(ids) != 1:
            raise CLIError("the project has several launches; choose one with --launch")
        launch_id = ids[0]
    variable = args.variable or (saved.variable if saved else None)
    values = args.values if args.values is not None else (np.asarray(saved.values) if saved else None)
    devices = tuple(args.device) or (tuple(saved.devices) if saved else ())
    if variable is None or (values is None and variable != "gpu"):
        raise CLIError("give --variable and --values (or --saved SWEEP)")
    from gpumodeler.service.evaluation import ProjectEvaluation
    catalog = common.open_catalog()
    try:
        evaluation = ProjectEvaluation(project, _lookups(args, catalog), terms=_terms(args, project))
        snap, result = evaluation.sweep(launch_id, variable, values if values is not None else (),
                                        devices, models=args.model,
                                        model_parameters=model_flags.parameters_of(args))
    finally:
        catalog.close()
    columns: dict = {}
    labels = list(result.x_labels) or None
    for curve in result.curves:
        n = curve.kernel_time_s.size
        columns.setdefault("device", []).append(
            np.array(labels if labels else [curve.label] * n, dtype=object))
        columns.setdefault(variable, []).append(np.asarray(result.x)[:n])
        columns.setdefault("kernel_time_s", []).append(curve.kernel_time_s)
        columns.setdefault("total_time_s", []).append(curve.total_time_s)
        columns.setdefault("mode", []).append(curve.mode)
        columns.setdefault("limiting_resource", []).append(curve.limiting_resource)
        columns.setdefault("terms", []).append(curve.terms)
        for m in snap.models:
            columns.setdefault(f"time_s_{m}", []).append(curve.model_times[m])
        columns.setdefault("error", []).append(curve.reasons)
        for m, (exc, k) in curve.model_errors.items():
            print(one_line(f"gpumodeler project sweep: {m} ({curve.label}): {k} point(s) left empty: "
                           f"{model_flags.error_text(exc)}"), file=sys.stderr)
    table = {k: np.concatenate(v) for k, v in columns.items()}
    return common.write_table(table, args.output, args.format,
                              inputs=common.inputs_and_catalog((args.file, "the project file")))


def _print_result(s: dict) -> None:
    print(f"launch   {s['launch']}: {s['name']} (kernel {s['kernel']} on {s['device']})")
    print(f"kernel   {common.fmt_time(s['kernel_time_s'])}  ({s['mode']}-bound, limited by "
          f"{s['limiting_resource']}; λ = {s['lambda']:g})")
    print(f"         {s['warps_launched']:g} warps in {s['grid_size']} blocks; warp throughput "
          f"{s['warp_throughput']:.6g} warps/cycle/SM = min(occupancy "
          f"{s['occupancy_warps_per_sm']:g} / latency bound {s['latency_bound_cycles']:g}, "
          f"throughput bound {s['throughput_bound']:.6g})")
    print(f"         latency bound {s['latency_bound_formula']} cycles")
    applied = [t for t in s.get("terms", ()) if ": off" not in t]
    if applied:
        print(f"         terms: {'; '.join(applied)} (eq. 4.1 alone: {common.fmt_time(s['eq_4_1_time_s'])})")
    if s.get("transfer_calibration"):
        print(f"         transfers: {calibration_text(s['transfer_calibration'])}")
    for t, tr in zip(s["transfer_times_s"], s["transfers"]):
        arrow = "host->device" if tr["direction"] == "htod" else "device->host"
        print(f"transfer {arrow} {tr['bytes']:g} B over {s['link']}: {common.fmt_time(t)}")
    print(f"total    {common.fmt_time(s['total_time_s'])}")
