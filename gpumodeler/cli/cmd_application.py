"""`gpumodeler application import report.sqlite --project P.gpm [--name NAME]`: an
application from an Nsight Systems trace (docs/timeline.md, "Applications from a trace").

Every kernel and copy of the trace becomes a step on its stream and GPU, keeping its
measured time; the trace's GPU is matched in the device database (or added to the user
database) and joined to a host by a link fitted to the copies. The project file is written
atomically; when it does not exist it is created with the trace's system. The export is
only read.
"""
from __future__ import annotations

import os


def register(sub) -> None:
    p = sub.add_parser("application", help="applications from traces (Nsight Systems import)",
                       description="Build a project's application from measured traces.")
    actions = p.add_subparsers(dest="application_command", metavar="ACTION",
                               parser_class=type(p))
    actions.required = True
    imp = actions.add_parser(
        "import", help="an application from an Nsight Systems SQLite export",
        description="Add an application to a project from an Nsight Systems export (nsys "
                    "export --type sqlite): every kernel and copy becomes a step on its stream "
                    "and GPU with its measured time. The project is created when it does not "
                    "exist. Then: gpumodeler timeline P.gpm --by kernel.")
    imp.add_argument("file", metavar="report.sqlite")
    imp.add_argument("--project", required=True, metavar="P.gpm",
                     help="the project to add the application to (created if missing)")
    imp.add_argument("--name", metavar="NAME",
                     help="the application's name (default: the export's file name)")
    imp.add_argument("--json", action="store_true", help="print what was imported as JSON")
    imp.set_defaults(func=run_import)


def run_import(args) -> int:
    from gpumodeler.core.project import Project
    from gpumodeler.db.project_file import save_project
    from gpumodeler.service.trace_import import plan_import

    from . import common
    from .main import CLIError

    if args.name is not None and not args.name.strip():
        raise CLIError("--name needs a non-empty name")
    if not os.path.exists(args.file):
        raise CLIError(f"{args.file}: no such file; give an Nsight Systems export "
                       f"(nsys export --type sqlite report.nsys-rep)")
    if os.path.exists(args.project):
        project, _info = common.read_project(args.project)
        created = False
    else:
        folder = os.path.dirname(os.path.abspath(args.project))
        if not os.path.isdir(folder):
            raise CLIError(f"{args.project}: the folder {folder} does not exist; give a project "
                           f"file in an existing folder")
        project, created = Project(os.path.splitext(os.path.basename(args.project))[0]), True
    if os.path.exists(args.project) and os.path.samefile(args.file, args.project):
        raise CLIError(f"{args.project}: is the trace itself; give another project file")
    with common.open_catalog() as catalog:
        plan = plan_import(project, args.file, catalog, args.name)
        plan.command.do(project)
    save_project(project, args.project)
    if args.json:
        common.print_json(dict(plan.to_json(), project=args.project, created=created),
                          checked=True)
        return 0
    print(f"{'created' if created else 'updated'} {args.project}: application "
          f"{plan.name} ({plan.application}), {plan.steps} steps: {plan.kernels} kernel(s), "
          f"{plan.copies} copy(ies), {plan.host_gaps} host gap(s), {plan.host_delays} host "
          f"delay(s), "
          f"{plan.inferred_dependencies} dependency(ies) across streams inferred; "
          + (f"{plan.api_dependencies} event wait(s) and {plan.host_waits} host "
             f"synchronisation(s) read from the CUDA API; "
             if plan.api_dependencies or plan.host_waits else "")
          + (f"{plan.legacy_dependencies} implicit wait(s) through the legacy default "
             f"stream; " if plan.legacy_dependencies else "")
          + f"{plan.launches} launch(es)")
    for g in plan.gpus:
        how = "added to your device database" if g["created"] else "found in the device database"
        print(f"gpu          {g['trace']}: {g['device']} ({how}), placed as {g['placed']}")
    if plan.link:
        fit = plan.link["fit"]
        print(f"link         {plan.link['link']} with the copies' rates: "
              + "; ".join(f"{d} startup {common.fmt_time(fit[d]['startup_s'])}, "
                          f"{fit[d]['bandwidth_bytes_per_s'] / 1e9:.3g} GB/s "
                          f"({fit[d]['copies']} copies)" for d in ("htod", "dtoh")))
    print(f"measured     makespan {common.fmt_time(plan.measured_makespan_s)}")
    for note in plan.notes:
        print(f"note         {note}")
    return 0
