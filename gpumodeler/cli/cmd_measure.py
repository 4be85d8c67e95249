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

from . import common
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
    from gpumodeler.core.measurements.importer import import_text
    name = "standard input" if path == "-" else Path(path).name
    if path != "-" and is_nsys_candidate(path):
        if fmt is not None:
            raise CLIError(f"{path} is a SQLite file (an Nsight Systems export), not "
                           f"{fmt} CSV; leave out --format")
        from gpumodeler.db.nsys_export import read_export
        return read_export(path)
    try:
        text = common.read_input(path, "a measurement file").decode("utf-8-sig")
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not a text file (expected a CSV measurement file)") from None
    if "\x00" in text:
        raise CLIError(f"{path} is not a text file (expected a CSV measurement file)")
    return import_text(text, name, fmt)


def is_nsys_candidate(path: str) -> bool:
    """Whether ``path`` starts with the SQLite header (then read as an nsys export)."""
    from gpumodeler.db.nsys_export import is_sqlite
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


def _fmt_size(n) -> str:
    if n is None:
        return ""
    for unit, f in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= f:
            return f"{n / f:.4g} {unit}"
    return f"{n:g} B"


def write_records_json(records, out=None, batch: int = 1000) -> None:
    """The records as a JSON list on ``out`` (stdout), one record per line, written record
    by record (the whole document is never built: a 10^5-row trace's JSON is ten times its
    file) by the standard library's C encoder. The importers have checked every number
    finite (core.measurements.importer.record_non_finite)."""
    import json
    out = out or sys.stdout
    encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
    out.write("[")
    chunk, sep = [], "\n"
    for r in records:
        chunk.append(sep + encode(r.to_json()))
        sep = ",\n"
        if len(chunk) >= batch:
            out.write("".join(chunk))
            chunk = []
    out.write("".join(chunk) + ("\n]\n" if sep != "\n" else "]\n"))


def _stream_nsys_json(path: str) -> None:
    """``measure import --json`` of an Nsight Systems export, each record written as it is
    read (db.nsys_export.streamed_export): memory does not grow with the export."""
    from collections import Counter
    from gpumodeler.db.nsys_export import require_content, streamed_export
    counts: Counter = Counter()

    def counted(records):
        for r in records:
            counts[r.kind] += 1
            yield r
    with streamed_export(path) as (records, summary):
        first = next(records, None)
        if first is None:
            require_content(summary(), 0)
        write_records_json(counted([] if first is None else _chain(first, records)))
        result = summary()
    print(_counts_line(result, dict(counts)), file=sys.stderr)
    for line in _gpu_lines(result):
        print(line, file=sys.stderr)


def _chain(first, rest):
    yield first
    yield from rest


def run_import(args) -> int:
    if args.json and args.file != "-" and is_nsys_candidate(args.file):
        if args.format is not None:
            raise CLIError(f"{args.file} is a SQLite file (an Nsight Systems export), not "
                           f"{args.format} CSV; leave out --format")
        _stream_nsys_json(args.file)
        return 0
    result = read_file(args.file, args.format)
    if args.json:
        write_records_json(result.records)
        print(_counts_line(result), file=sys.stderr)
        for line in _gpu_lines(result):
            print(line, file=sys.stderr)
        for d in result.disagreements:
            print(f"row {d.row}, column {d.column}: {d.message}", file=sys.stderr)
        return 0
    streams = any(r.stream is not None for r in result.records)
    rows = [("row", "kind", "dir", "name", "gpu", "launch / size", "time", "memory", "metrics")
            + (("stream", "start") if streams else ())]
    for r in result.records:
        if r.kind == "kernel":
            launch = (f"{'x'.join(map(str, r.grid))} x {'x'.join(map(str, r.block))}"
                      if r.grid and r.block else "")
        else:
            launch = _fmt_size(r.size_bytes)
        name = r.name if len(r.name) <= 40 else r.name[:37] + "..."
        rows.append((str(r.row), r.kind, r.direction, name, r.gpu,
                     launch, "" if r.time_s is None else common.fmt_time(r.time_s),
                     r.memory_kind, str(len(r.metrics)) if r.metrics else "")
                    + ((("" if r.stream is None else str(r.stream)),
                        "" if r.start_s is None else f"{r.start_s:.9f} s") if streams else ()))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    print(_counts_line(result))
    for line in _gpu_lines(result):
        print(line)
    for d in result.disagreements:
        print(f"  row {d.row}, column {d.column}: {d.message}")
    return 0
