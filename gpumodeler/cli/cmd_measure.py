"""`gpumodeler measure import`: read nvprof, Nsight Compute or timings CSV measurements, or
an Nsight Systems SQLite export (told by its SQLite header and tables, whatever its suffix)."""
from __future__ import annotations

import sys
from pathlib import Path

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the importers load when a file is read, not to parse flags
    from gpumodeler.core.measurements.importer import ImportResult

#: core.measurements.importer.FORMATS (a test keeps them equal), here so that parsing flags
#: loads no importer
FORMATS = ("nvprof", "ncu", "timings")

from .main import CLIError


def register(sub) -> None:
    p = sub.add_parser("measure", help="import measured kernel and copy times",
                       description="Read measurement files into normalised records "
                                   "(docs/measurements.md).")
    s = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    imp = s.add_parser("import", help="read nvprof, Nsight Compute or timings CSV, or an "
                                      "Nsight Systems SQLite export",
                       description="Print the kernel launches and copies of a measurement file "
                                   "in SI units, with the noise lines skipped and the rows whose "
                                   "size, duration and throughput disagree.")
    imp.add_argument("file", metavar="FILE", help="the CSV file ('-' for standard input) or "
                                                  "an nsys SQLite export")
    imp.add_argument("--format", choices=FORMATS, default=None,
                     help="CSV file format (detected from the header lines when not given; "
                          "an nsys SQLite export is detected from its content)")
    imp.add_argument("--json", action="store_true",
                     help="print a JSON list of records (counts go to standard error)")
    imp.set_defaults(func=run_import)


def read_file(path: str, fmt: str | None = None) -> ImportResult:
    """Import one measurement file; CLIError when it cannot be read."""
    if path != "-" and is_nsys_candidate(path):
        if fmt is not None:
            raise CLIError(f"{path} is a SQLite file (an Nsight Systems export), not "
                           f"{fmt} CSV; leave out --format")
        from gpumodeler.db.nsys_export import read_export
        return read_export(path)
    result, records = stream_file(path, fmt)
    result.records = list(records)
    return result


def stream_file(path: str, fmt: str | None = None, formatter=None):
    """``(result, records)`` of a CSV measurement file read a block at a time
    (core.measurements.importer.stream_lines: the records come as the file is read, the
    counts in ``result`` are complete once they are all read; ``formatter``: stream_lines's,
    given for --json)."""
    # lazy: the readers load when a file is read, not to parse flags
    from gpumodeler.core.measurements.importer import stream_lines, text_lines

    from .measure_stream import file_chunks
    name = "standard input" if path == "-" else Path(path).name
    return stream_lines(text_lines(file_chunks(path)), name, fmt, formatter)


def is_nsys_candidate(path: str) -> bool:
    """Whether ``path`` starts with the SQLite header (then read as an nsys export)."""
    from gpumodeler.db.sqlite_files import is_sqlite   # lazy: a file is read (not nsys_export)
    return is_sqlite(path)


def _counts_line(result: ImportResult, counts: dict | None = None) -> str:
    counts = result.counts() if counts is None else counts
    per_kind = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in sorted(counts.items()))
    cut = f"; {result.cut_names} name(s) cut with \"...\" by the profiler" \
        if result.cut_names else ""
    return (f"{result.source} ({result.format}): {per_kind}; {result.noise_lines} noise line(s) "
            f"skipped; {result.other_rows} row(s) of other kinds skipped; "
            f"{len(result.disagreements)} unit disagreement(s){cut}")


def _gpu_lines(result: ImportResult) -> list[str]:
    """One line per GPU the file describes (Nsight Systems exports)."""
    if not result.devices:
        return []
    from gpumodeler.db.nsys_export import describe_gpu
    return [describe_gpu(g) for g in result.devices]


def write_records_json(records, out=None, batch: int = 1000) -> None:
    """The records as a JSON list on ``out`` (stdout), one record per line, written as they
    come (the whole document is never built: a 10^5-row trace's JSON is ten times its file;
    cli.measure_stream.write_json). The importers have checked every number finite
    (core.measurements.parsing.check_finite)."""
    from .measure_stream import write_json   # lazy: loads when a file is read
    write_json(records, out, batch)


def _nsys_records(path: str, stack):
    """``(head, records, summary)`` of an Nsight Systems export, read as it is written
    (db.nsys_export.streamed_export; the export stays open until ``stack`` closes)."""
    # lazy: the nsys reader loads for an nsys export only
    from gpumodeler.db.nsys_export import require_content, streamed_export

    from .measure_stream import read_ahead
    records, summary = stack.enter_context(streamed_export(path))
    head, records = read_ahead(records)
    if not head:
        require_content(summary(), 0)
    return head, records, summary


def run_import(args) -> int:
    """The records written as they are read (cli.measure_stream): text or --json, counts
    and GPUs after them (on standard error with --json)."""
    from contextlib import ExitStack   # lazy: not needed to parse flags

    from .measure_stream import JsonLines, read_ahead, write_json, write_table   # lazy: idem
    # (--json: an nvprof trace's plain rows are written as JSON from their columns, without
    # their records: JsonLines.kernels and copies)
    lines = JsonLines() if args.json else None
    with ExitStack() as stack:
        if args.file != "-" and is_nsys_candidate(args.file):
            if args.format is not None:
                raise CLIError(f"{args.file} is a SQLite file (an Nsight Systems export), not "
                               f"{args.format} CSV; leave out --format")
            head, records, summary = _nsys_records(args.file, stack)
        else:
            result, stream = stream_file(args.file, args.format, lines)
            head, records = read_ahead(stream)

            def summary():
                return result
        counts = write_json(records, lines=lines) if args.json else write_table(head, records)
        final = summary()
    out = sys.stderr if args.json else sys.stdout
    print(_counts_line(final, counts), file=out)
    for line in _gpu_lines(final):
        print(line, file=out)
    indent = "" if args.json else "  "
    for d in final.disagreements:
        print(f"{indent}row {d.row}, column {d.column}: {d.message}", file=out)
    return 0
