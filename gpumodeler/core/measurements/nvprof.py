"""nvprof ``--csv`` output: GPU traces (``--print-gpu-trace``) and metric/event tables.

A file may hold several runs. Each table starts with a header line and, for traces, a
unit row under it (nvprof picks the units per run: ``us`` in one, ``ms`` in the next;
``B``, ``KB``, ``MB`` or ``GB`` for sizes; ``B/s``...``GB/s`` for throughput; the byte
prefixes are binary, see :mod:`units`). Lines nvprof writes around the tables
(``==1234== Profiling result:``, ``No kernels were profiled.``, ``======== Error: ...``,
blank lines) are noise: skipped and counted.

GPU-trace header (nvprof 7-10; older versions lack SrcMemType/DstMemType, multi-GPU runs
add ``Src Dev``/``Dst Dev``... — any extra numeric column becomes a metric)::

    "Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",
    "Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput",
    "SrcMemType","DstMemType","Device","Context","Stream","Name","Correlation_ID"
    us,us,,,,,,,,KB,KB,KB,GB/s,,,,,,,

Rows named ``[CUDA memcpy HtoD]``, ``DtoH``, ``DtoD``, ``PtoP`` are transfers (memory kind
from SrcMemType for host-to-device, DstMemType for device-to-host: ``Pageable`` ->
pageable, ``Pinned`` -> pinned, ``Device`` -> device); other bracketed rows
(``[CUDA memset]``, unified-memory events) are counted as other rows; every other row is a
kernel launch.

Metric and event tables (``--metrics``/``--events``; one row per kernel and metric, values
are per invocation: ``Avg``)::

    "Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"
    "Device","Kernel","Invocations","Event Name","Min","Max","Avg","Total"

become one kernel record per (device, kernel) with ``time_s`` None (nvprof measures
metrics in replayed runs, without durations; take the duration from a GPU trace).
"""
from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from itertools import islice

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.nvprof_chunks import SLOW, Formatter, TraceTable
from gpumodeler.core.measurements.nvprof_rows import ALL_UNITS, UNIT_TABLES, trace_row
from gpumodeler.core.measurements.parsing import (
    SPACES, ImportResult, LineSource, check_finite, csv_fields, split_lines, where)
from gpumodeler.core.measurements.records import Measurement
from gpumodeler.core.measurements.units import is_number, split_number, valid

_LEVEL = re.compile(r"^(Idle|Low|Mid|High|Max)\s*\((\d+)\)$")


def header_kind(fields: list[str]) -> str | None:
    """'trace', 'api', 'metrics', 'events', 'summary' or None for a header line's fields."""
    f = set(fields)
    if {"Start", "Duration", "Name"} <= f:
        return "trace" if ({"Grid X", "Size", "Device"} & f) else "api"
    if {"Device", "Kernel", "Metric Name", "Avg"} <= f:
        return "metrics"
    if {"Device", "Kernel", "Event Name", "Avg"} <= f:
        return "events"
    if {"Type", "Time(%)", "Name"} <= f or {"Time(%)", "Calls", "Name"} <= f:
        return "summary"
    return None


HEADER_STARTS = {"Start", "Device", "Type", "Time(%)"}


def _ends_block(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("==") or not ("," in s or s.startswith('"'))


def parse(text: str, source: str = "nvprof.csv") -> ImportResult:
    """Every GPU-trace, metric and event table of an nvprof --csv log (module docstring)."""
    result = ImportResult("nvprof", source)
    result.records = list(stream(split_lines(text), source, result))
    return result


def stream(lines: Iterable[str], source: str, result: ImportResult,
           formatter: Formatter | None = None) -> Iterator:
    """The records of an nvprof --csv log given line by line, yielded as they are read (a
    GPU trace's rows one by one; a metric table's kernels at the end, when every metric of
    them is known). ``result`` counts noise lines, other rows and disagreements as it goes.

    ``formatter`` (optional: a command that only writes the records out) makes, in place of
    its record, what is yielded for each GPU-trace row that :class:`TraceTable`'s chunk
    path reads (:class:`~gpumodeler.core.measurements.nvprof_chunks.Formatter`); every
    other row still gives its record."""
    src = LineSource(lines)
    per_kernel: dict = {}  # (device, kernel) -> [row, metrics]
    while True:
        line = src.next()
        if line is None:
            break
        k = src.number
        if _ends_block(line):
            result.noise_lines += 1
            continue
        s = line.strip()
        fields = csv_fields(s, source, k)
        kind = header_kind(fields)
        if kind == "trace":
            yield from _trace_block(src, k, fields, result, formatter)
        elif kind in ("metrics", "events"):
            _metric_block(src, k, fields, kind, result, per_kernel)
        elif kind in ("summary", "api"):
            _skip_block(src, result)
        elif len(fields) >= 4 and is_number(fields[0]) and is_number(fields[1]):
            raise FormatError(
                f"{where(source, k)}: a data row outside any table (its header line, "
                f"\"Start\",\"Duration\",..., is missing: is the file cut or edited?)")
        elif s.startswith('"'):
            shown = ", ".join(fields[:6]) + (", ..." if len(fields) > 6 else "")
            raise FormatError(
                f"{where(source, k)}: a CSV header nvprof does not write ({shown}); "
                f"expected a GPU trace (\"Start\",\"Duration\",...,\"Name\") or a metric/event "
                f"table (\"Device\",\"Kernel\",\"Invocations\",\"Metric Name\"...)")
        else:
            result.noise_lines += 1
    for (device, kernel), (row, metrics) in per_kernel.items():
        yield check_finite(Measurement(kind="kernel", time_s=None, name=kernel, gpu=device,
                                       metrics=metrics, source=source, row=row), source)


def _skip_block(src: LineSource, result) -> None:
    """A table gpumodeler does not read (summary, API trace): header counted as noise, rows
    as other rows."""
    result.noise_lines += 1
    while (line := src.next()) is not None:
        if _ends_block(line):
            src.push_back(line)
            return
        result.other_rows += 1


def _unit_row(src: LineSource, hrow: int, header, source) -> list[str]:
    row = hrow + 1
    line = src.next()
    if line is None or not line.strip():
        raise FormatError(f"{where(source, row)}: the header at row {hrow} has no unit row under "
                          f"it (is the file truncated?); nvprof writes one like "
                          f"us,us,,,...,KB,GB/s and units are never guessed")
    units = csv_fields(line.strip(), source, row)
    if any(u and u not in ALL_UNITS for u in units) or len(units) != len(header):
        bad = next((f"{h} = {u!r}" for h, u in zip(header, units) if u and u not in ALL_UNITS),
                   f"{len(units)} fields for {len(header)} columns")
        raise FormatError(f"{where(source, row)}: expected nvprof's unit row under the header at "
                          f"row {hrow} (like us,us,,,...,KB,GB/s), got {bad}; units are never "
                          f"guessed")
    for col, table in UNIT_TABLES.items():
        if col in header:
            u = units[header.index(col)]
            if u and u not in table:
                raise FormatError(f"{where(source, row, col)}: unit {u!r} is not a unit of "
                                  f"{col} (valid: {valid(table)})")
    return units


def _trace_block(src: LineSource, hrow: int, header, result,
                 formatter: Formatter | None = None) -> Iterator:
    """The rows of one GPU-trace table, read a chunk of lines at a time (:data:`FIRST_ROWS`,
    doubling up to :data:`ROWS_AT_ONCE`), each chunk by :class:`TraceTable`'s ``rows`` a
    column at a time; a chunk with a row off the common case row by row (the row as the
    reference :func:`trace_row` reads it, at a fraction of the cost), and one that is not
    plain CSV of the header's width (a quoted line break, a bad line, a header) and the rest
    of the table by one CSV reader a line at a time, as before; the line that ends the table
    is pushed back."""
    source = result.source
    for col in ("Duration", "Name"):
        if col not in header:  # header_kind guarantees these; kept for clarity
            raise FormatError(f"{where(source, hrow)}: the GPU-trace header has no {col} column")
    units = _unit_row(src, hrow, header, source)
    table = TraceTable(header, units, result, formatter)
    ended: list[str] = []
    last = [""]

    def block():
        for line in src.pending():
            if _ends_block(line):
                ended.append(line)
                return
            last[0] = line
            yield line
        number = src.number
        for line in src.lines:
            number += 1
            src.number = number
            c = line[:1]
            # (a line starting with neither "=" nor a space, with a comma, ends no table)
            if (c == "=" or c in SPACES or "," not in line) and _ends_block(line):
                ended.append(line)
                return
            last[0] = line
            yield line
    width = len(header)
    fast = table.row
    at_once = getattr(fast, "rows", None)   # (None: every row through fast)

    def one(fields, row: int):
        """The record of a table row of the header's width, None for a row of another kind."""
        rec = fast(fields, row)
        if rec is SLOW:
            rec = trace_row(dict(zip(header, [f.strip() for f in fields])), table.unit,
                             table.column, source, row, result)
            if rec is not None:
                check_finite(rec, source)
        return rec

    def by_row(lines):
        """The records of the table's rows read one at a time from ``lines`` (``src.number``
        the last line's number); True when a header line stopped the table."""
        reader = csv.reader(lines, strict=True)
        try:
            for fields in reader:
                row = src.number
                if fields[0].strip() in HEADER_STARTS:
                    stripped = [f.strip() for f in fields]
                    if header_kind(stripped) is not None:
                        return True
                if len(fields) != width:
                    raise FormatError(
                        f"{where(source, row)}: {len(fields)} fields for the {width} columns of "
                        f"the header at row {hrow} (is the file truncated or were columns "
                        f"edited?)")
                rec = one(fields, row)
                if rec is None:
                    result.other_rows += 1
                else:
                    yield rec
        except csv.Error as exc:
            raise FormatError(f"{where(source, src.number)}: not a valid CSV line "
                              f"({exc})") from None
        return False

    lines = block()
    if at_once is None:
        if (yield from by_row(lines)):
            src.push_back(last[0])
            return
    else:
        size = FIRST_ROWS
        while True:
            before = src.number
            chunk = list(islice(lines, size))
            if not chunk:
                break
            size = min(2 * size, ROWS_AT_ONCE)
            try:
                rows = list(csv.reader(chunk, strict=True))
            except csv.Error:
                rows = []
            columns = list(zip(*rows))
            if len(rows) != len(chunk) or len(columns) != width or \
                    not all(map(width.__eq__, map(len, rows))) or \
                    not HEADER_STARTS.isdisjoint(map(str.strip, columns[0])):
                # (a quoted line break, a bad line, a row of another width or a header: the
                # chunk's lines and the rest of the table one at a time, as they always were)
                if (yield from by_row(_replay(src, chunk, before, last, ended, lines))):
                    header_at = src.number
                    k = header_at - before       # (the chunk's lines read, the header's too)
                    if k <= len(chunk):
                        if ended:
                            src.push_back(ended[0])
                        for line in reversed(chunk[k - 1:]):
                            src.push_back(line)
                        src.number = header_at - 1
                    else:
                        src.push_back(last[0])
                    return
                break
            n = len(rows)
            del rows      # (the rows' lists: the fewer objects alive, the fewer collections)
            records = at_once(columns, n, before + 1)
            if records is None:     # (a row off the common case: the chunk row by row)
                for k, fields in enumerate(zip(*columns), before + 1):
                    rec = one(fields, k)
                    if rec is None:
                        result.other_rows += 1
                    else:
                        yield rec
                continue
            for rec in records:
                if rec is None:
                    result.other_rows += 1
                else:
                    yield rec
    if ended:
        src.push_back(ended[0])


def _replay(src: LineSource, chunk: list[str], before: int, last: list, ended: list, lines):
    """``chunk`` (lines ``before + 1``... taken ahead), then ``lines``, each counted in
    ``src.number`` and kept in ``last[0]`` as it is given, as the table's line generator does
    (past its end when it ended at ``ended[0]``)."""
    number = before
    for line in chunk:
        number += 1
        src.number = number
        last[0] = line
        yield line
    if ended:
        src.number = number + 1
        return
    yield from lines


#: rows of a trace table read at once (:meth:`TraceTable.rows`), the first time, then at most
#: (doubling: a short file's first record comes after a few rows)
FIRST_ROWS = 16
ROWS_AT_ONCE = 128


def _metric_block(src: LineSource, hrow, header, kind, result, per_kernel) -> None:
    source = result.source
    name_col = "Metric Name" if kind == "metrics" else "Event Name"
    while (line := src.next()) is not None:
        j = src.number
        if _ends_block(line):
            src.push_back(line)
            return
        fields = csv_fields(line.strip(), source, j)
        if header_kind(fields) is not None:
            src.push_back(line)
            return
        if len(fields) != len(header):
            raise FormatError(
                f"{where(source, j)}: {len(fields)} fields for the {len(header)} columns of "
                f"the header at row {hrow} (is the file truncated?)")
        cells = dict(zip(header, fields))
        metric = cells[name_col]
        value = _metric_value(cells["Avg"], source, j)
        key = (cells["Device"], cells["Kernel"])
        entry = per_kernel.setdefault(key, [j, {}])
        if value is not None:
            entry[1][metric] = value
        if cells.get("Invocations"):
            try:
                entry[1]["invocations"] = (float(cells["Invocations"]), "1")
            except ValueError:
                raise FormatError(f"{where(source, j, 'Invocations')}: "
                                  f"{cells['Invocations']!r} is not a number") from None


def _metric_value(text, source, row):
    """(value, unit) of a metric cell: 123, 45.2%, 12.3GB/s, Low (2); None for n/a."""
    t = text.strip()
    if not t or t.lower() in ("n/a", "<overflow>", "nan"):
        return None
    lv = _LEVEL.match(t)
    if lv:
        return float(lv.group(2)), "level 0-10"
    parsed = split_number(t)
    if parsed is None:
        raise FormatError(f"{where(source, row, 'Avg')}: {text!r} is not a metric value (a number, "
                          f"optionally with %, B/s...GB/s, or a level like Low (2))")
    value, u = parsed
    return value, u or "1"
