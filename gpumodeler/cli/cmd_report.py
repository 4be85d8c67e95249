"""`gpumodeler report PROJECT.gpm -o report.html`: the reproducible, self-contained HTML
report of a project (gpumodeler/report/html.py)."""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report", help="write a self-contained HTML report of a project",
        description="Write one HTML file (no external resources) with the system, every device "
                    "and link value with its provenance, kernels, launch predictions with their "
                    "equations, saved sweeps, application timelines and the digests that make "
                    "it reproducible.")
    p.add_argument("file", metavar="PROJECT.gpm")
    p.add_argument("--output", "-o", metavar="REPORT.html", required=True)
    p.set_defaults(func=_report)


def _report(args) -> int:
    import shlex

    from gpumodeler.report.files import write_text_atomically
    from gpumodeler.report.html import build_report

    from . import common
    from .main import CLIError

    if not args.output.strip():
        raise CLIError("--output needs a file name")
    project, _info = common.read_project(args.file)
    command = f"gpumodeler report {shlex.quote(args.file)} -o {shlex.quote(args.output)}"
    with common.open_catalog() as catalog:
        html = build_report(project, catalog, project_path=args.file, command=command)
    write_text_atomically(args.output, html,
                          inputs=common.inputs_and_catalog((args.file, "the project file")))
    print(f"wrote {args.output}")
    return 0
