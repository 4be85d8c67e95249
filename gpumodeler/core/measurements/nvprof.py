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
import math
import re
from collections.abc import Iterable, Iterator
from itertools import compress, islice, repeat
from operator import add, is_, itemgetter, sub

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.parsing import (
    SPACES, Disagreement, ImportResult, LineSource, check_finite, csv_fields, positive,
    Remembered, scaled, scaled_positive, split_lines, where)
from gpumodeler.core.measurements.records import FIELD_DEFAULTS, Measurement
from gpumodeler.core.measurements.units import (
    NVPROF_RATE, NVPROF_SIZE, NVPROF_TIME, is_number, rounding_error, split_number, valid, printed_half_unit, whole_bytes)

COPY_DIRECTIONS = {"HtoD": "htod", "DtoH": "dtoh", "DtoD": "dtod", "PtoP": "ptop"}
MEMORY_KINDS = {"pageable": "pageable", "pinned": "pinned", "device": "device",
                "managed": "managed"}
_COPY = re.compile(r"^\[CUDA memcpy (\w+)\]$")
_LEVEL = re.compile(r"^(Idle|Low|Mid|High|Max)\s*\((\d+)\)$")
KNOWN_TRACE = {"Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y",
               "Block Z", "Registers Per Thread", "Static SMem", "Dynamic SMem", "Size",
               "Throughput", "SrcMemType", "DstMemType", "Device", "Context", "Stream",
               "Name", "Correlation_ID", "Src Dev", "Src Ctx", "Dst Dev", "Dst Ctx"}
UNIT_TABLES = {"Duration": NVPROF_TIME, "Start": NVPROF_TIME, "Size": NVPROF_SIZE,
               "Static SMem": NVPROF_SIZE, "Dynamic SMem": NVPROF_SIZE,
               "Throughput": NVPROF_RATE}
ALL_UNITS = set(NVPROF_TIME) | set(NVPROF_SIZE) | set(NVPROF_RATE) | {"%"}
TOLERANCE = 0.01  # relative, on top of the printed values' rounding


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


def stream(lines: Iterable[str], source: str, result: ImportResult) -> Iterator[Measurement]:
    """The records of an nvprof --csv log given line by line, yielded as they are read (a
    GPU trace's rows one by one; a metric table's kernels at the end, when every metric of
    them is known). ``result`` counts noise lines, other rows and disagreements as it goes."""
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
            yield from _trace_block(src, k, fields, result)
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


def _trace_block(src: LineSource, hrow: int, header, result) -> Iterator[Measurement]:
    """The rows of one GPU-trace table, read a chunk of lines at a time (:data:`FIRST_ROWS`,
    doubling up to :data:`ROWS_AT_ONCE`), each chunk by :class:`_TraceTable`'s ``rows`` a
    column at a time; a chunk with a row off the common case row by row (the row as the
    reference :func:`_trace_row` reads it, at a fraction of the cost), and one that is not
    plain CSV of the header's width (a quoted line break, a bad line, a header) and the rest
    of the table by one CSV reader a line at a time, as before; the line that ends the table
    is pushed back."""
    source = result.source
    for col in ("Duration", "Name"):
        if col not in header:  # header_kind guarantees these; kept for clarity
            raise FormatError(f"{where(source, hrow)}: the GPU-trace header has no {col} column")
    units = _unit_row(src, hrow, header, source)
    table = _TraceTable(header, units, result)
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
            rec = _trace_row(dict(zip(header, [f.strip() for f in fields])), table.unit,
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


#: rows of a trace table read at once (:meth:`_TraceTable.rows`), the first time, then at most
#: (doubling: a short file's first record comes after a few rows)
FIRST_ROWS = 16
ROWS_AT_ONCE = 128


#: :meth:`_TraceTable.row`'s answer for a row it leaves to :func:`_trace_row`
SLOW = object()
_INF = math.inf
#: distinct texts of each kind (sizes, names...) remembered per table at most
CACHE = 4096
#: half a unit in the last digit of a plain decimal with k digits after its point
#: (:func:`units.printed_half_unit`'s expression for an exponent of 0)
_HALF_UNITS = tuple(0.5 * 10.0 ** (0 - k) for k in range(32))


class _TraceTable:
    """One GPU-trace table's columns and unit factors, found once, and its rows read by
    position with the common case only: plain numbers, units given, values valid. Any other
    row is answered :data:`SLOW` and read by :func:`_trace_row`, which gives the same record
    or the row's error message (a test compares the two on every sample row and on edited
    ones)."""

    def __init__(self, header, units, result):
        self.result = result
        self.source = result.source
        self.column = {h: k for k, h in enumerate(header)}
        self.unit = {h: units[k] for k, h in enumerate(header)}
        col, unit = self.column, self.unit
        self.name = col["Name"]
        self.duration = col["Duration"]
        self.time_factor = NVPROF_TIME.get(unit["Duration"])
        self.size = col.get("Size")
        self.size_factor = NVPROF_SIZE.get(unit.get("Size", ""))
        self.throughput = col.get("Throughput")
        self.rate_factor = NVPROF_RATE.get(unit.get("Throughput", ""))
        has_dims = "Grid X" in col and "Block X" in col
        self.grid = [col[f"Grid {a}"] for a in "XYZ" if f"Grid {a}" in col] if has_dims else None
        self.block = [col[f"Block {a}"] for a in "XYZ" if f"Block {a}" in col] \
            if has_dims else None
        self.registers = col.get("Registers Per Thread")
        self.smem = [(col[c], NVPROF_SIZE.get(unit[c])) for c in ("Static SMem", "Dynamic SMem")
                     if c in col]
        self.device = col.get("Device")
        self.src_kind = col.get("SrcMemType")
        self.dst_kind = col.get("DstMemType")
        # (as the reference reads a row: one cell per name, the last column of a repeated one)
        self.extra = [(k, h) for h, k in col.items() if h not in KNOWN_TRACE]
        base = dict(FIELD_DEFAULTS, source=self.source)
        self.kernel = dict(base, kind="kernel")
        self.copy = dict(base, kind="transfer")

        self.row = self._row_reader()

    def _row_reader(self):
        """``row(fields, number)``: the row's record, None for a row of another kind, or SLOW
        (a closure over the table's columns: the read of a row is the hot loop of a trace)."""
        name_col, duration_col, device_col = self.name, self.duration, self.device
        time_factor, size_factor, rate_factor = self.time_factor, self.size_factor, \
            self.rate_factor
        size_col, rate_col = self.size, self.throughput
        src_col, dst_col, reg_col = self.src_kind, self.dst_kind, self.registers
        smem_cols = self.smem
        dims = self.grid is not None and self.block is not None
        xyz = dims and len(self.grid) == 3 and len(self.block) == 3
        gx, gy, gz = self.grid if xyz else (0, 0, 0)
        bx, by, bz = self.block if xyz else (0, 0, 0)
        grid_cols, block_cols = self.grid, self.block
        extra_of = self._extra if self.extra else None
        kernel, copy = self.kernel, self.copy
        source, result = self.source, self.result
        # The words that repeat down a trace (a handful per file), each read once (bounded:
        # cleared when full): a row's name (copy direction or None), a memory-type cell. A
        # kernel's launch cells and a copy's size, remembered by their texts while that pays
        # (parsing.Remembered: given up in a trace whose launches and sizes all differ).
        names: dict = {}
        memory: dict = {}
        launches = Remembered(CACHE)
        sizes = Remembered(CACHE)
        launch_cols = [k for k in (grid_cols or []) + (block_cols or [])] + \
            ([reg_col] if reg_col is not None else []) + [k for k, _ in smem_cols]
        launch_key = itemgetter(*launch_cols) if len(launch_cols) > 1 else None
        directions = COPY_DIRECTIONS
        inf = _INF
        half_units = _HALF_UNITS
        new, set_fields = object.__new__, object.__setattr__

        def copy_direction(name: str):
            """The direction of a copy row's name, None for a kernel, "" for a row of another
            kind."""
            if name[:1] != "[":
                return None
            m = _COPY.match(name)
            return directions[m.group(1)] if m and m.group(1) in directions else ""

        def launch(f: list[str]):
            """(grid, block, registers, shared memory) of a kernel row, or SLOW."""
            try:
                grid: tuple[int, ...]
                block: tuple[int, ...]
                if xyz:
                    grid = (x, y, z) = (int(f[gx]), int(f[gy]), int(f[gz]))
                    if x < 1 or y < 1 or z < 1:
                        return SLOW
                    block = (x, y, z) = (int(f[bx]), int(f[by]), int(f[bz]))
                    if x < 1 or y < 1 or z < 1:
                        return SLOW
                else:
                    grid = tuple([int(f[k]) for k in grid_cols])
                    block = tuple([int(f[k]) for k in block_cols])
                    if (grid and min(grid) < 1) or (block and min(block) < 1):
                        return SLOW
                regs = None
                if reg_col is not None:
                    text = f[reg_col]
                    if text:
                        regs = int(text)
                        if regs < 0:
                            return SLOW
                smem = None
                for k, factor in smem_cols:
                    text = f[k]
                    if text:
                        # (parsing.scaled inlined)
                        if factor is None or "_" in text:
                            return SLOW
                        v = float(text) * factor
                        if not -inf < v < inf:
                            return SLOW
                        smem = v if smem is None else smem + v
            except ValueError:
                return SLOW
            return grid, block, regs, None if smem is None else int(round(smem))

        def copy_size(size_text: str):
            """(exact size in bytes, whole bytes, their uncertainty, the stripped text) of a
            copy's Size cell, or SLOW."""
            exact = scaled_positive(size_text, size_factor)
            if exact is None:
                return SLOW
            # (units.whole_bytes inlined; units.printed_half_unit of a plain decimal read
            # from its digits after the point, the same expression)
            text = size_text.strip()
            dot = text.find(".")
            decimals = len(text) - dot - 1 if dot >= 0 else 0
            if decimals < len(half_units) and "e" not in text and "E" not in text:
                half = half_units[decimals] * size_factor
            else:
                half = printed_half_unit(text) * size_factor
            size = float(round(exact))
            uncertainty = half - 0.5 if half - 0.5 > 0.0 else 0.0
            if size < 1 or not uncertainty < inf:
                return SLOW
            return exact, size, uncertainty, text

        def row(f: list[str], number: int):
            name = f[name_col].strip()
            direction = names.get(name, 0)
            if direction == 0:
                direction = copy_direction(name)
                if len(names) >= CACHE:
                    names.clear()
                names[name] = direction
            if direction == "":
                return None
            time_text = f[duration_col]
            # (parsing.scaled inlined: the hot loop of an import)
            if time_factor is None or "_" in time_text:
                return SLOW
            try:
                time_s = float(time_text) * time_factor
            except ValueError:
                return SLOW
            if not 0 < time_s < inf:
                return SLOW
            gpu = f[device_col].strip() if device_col is not None else ""
            extra: dict = {}
            if extra_of is not None and not extra_of(f, extra):
                return SLOW
            if direction is None:      # a kernel
                if not dims:
                    return SLOW
                if launches.use and launch_key is not None:
                    key = launch_key(f)
                    cells = launches.get(key)
                    if cells is None:
                        cells = launch(f)
                        if cells is SLOW:
                            return SLOW
                        launches.keep(key, cells)
                    else:
                        launches.hits += 1
                else:
                    cells = launch(f)
                    if cells is SLOW:
                        return SLOW
                d = kernel.copy()
                d["time_s"] = time_s
                d["name"] = name
                d["gpu"] = gpu
                d["grid"], d["block"], d["registers_per_thread"], d["shared_mem_bytes"] = cells
                d["metrics"] = extra
                d["row"] = number
                record = new(Measurement)
                set_fields(record, "__dict__", d)
                return record
            # a copy
            if size_col is None or size_factor is None:
                return SLOW
            size_text = f[size_col]
            known = sizes.get(size_text) if sizes.use else None
            if known is None:
                known = copy_size(size_text)
                if known is SLOW:
                    return SLOW
                if sizes.use:
                    sizes.keep(size_text, known)
            else:
                sizes.hits += 1
            exact, size, uncertainty, text = known
            if uncertainty > 0:
                extra["size_uncertainty"] = (uncertainty, "B")
            thr = None
            if rate_col is not None:
                thr_text = f[rate_col].strip()
                if thr_text:
                    thr = scaled(thr_text, rate_factor)
                    if thr is None or not -inf < thr < inf:
                        return SLOW
            side = src_col if direction == "htod" else dst_col
            kind = ""
            if side is not None:
                cell = f[side]
                known_kind = memory.get(cell)
                if known_kind is None:
                    known_kind = MEMORY_KINDS.get(cell.strip().lower(), "")
                    if len(memory) >= CACHE:
                        memory.clear()
                    memory[cell] = known_kind
                kind = known_kind
            if not kind and (direction == "dtod" or direction == "ptop"):
                kind = "device"
            if thr is not None:
                # (_check's first test inline: a row whose numbers agree costs no call)
                if not (thr > 0 and abs(exact / time_s / thr - 1) <= TOLERANCE):
                    _check(text, time_text.strip(), thr_text, exact, time_s, thr, source,
                           number, result)
                extra["throughput"] = (thr, "B/s")
            d = copy.copy()
            d["time_s"] = time_s
            d["name"] = name
            d["direction"] = direction
            d["gpu"] = gpu
            d["size_bytes"] = size
            d["memory_kind"] = kind
            d["metrics"] = extra
            d["row"] = number
            record = new(Measurement)
            set_fields(record, "__dict__", d)
            return record

        # The names (stripped) and directions of the name cells as the file gives them.
        named: dict = {}
        directed: dict = {}

        def rows(columns: list, n: int, first: int):
            """The records of ``n`` consecutive rows of the table (None for a row of
            another kind), the first of them row ``first``, from their ``columns`` (one
            tuple of cells per column): each column's numbers converted by one ``map``, then
            checked at once (min and max), so that a row costs what building its record
            costs. None when a row is off the common case (what :func:`row` answers SLOW
            for, or an extra column): the caller then reads each row with :func:`row`, which
            gives the same records, or the reference reader's error."""
            if extra_of is not None or time_factor is None:
                return None
            cells = columns[name_col]
            try:
                directions = list(map(directed.__getitem__, cells))
            except KeyError:
                if len(named) >= CACHE:
                    named.clear()
                    directed.clear()
                for cell in cells:
                    if cell not in named:
                        named[cell] = name = cell.strip()
                        directed[cell] = copy_direction(name)
                directions = list(map(directed.__getitem__, cells))
            kernels = list(map(is_, directions, repeat(None)))
            copies = list(map(bool, directions))
            out: list = [None] * n
            try:
                if any(kernels) and not kernel_rows(columns, kernels, cells, out, first):
                    return None
                if any(copies) and not copy_rows(columns, copies, directions, cells, out,
                                                 first):
                    return None
            except ValueError:      # (a cell float() or int() does not read)
                return None
            return out

        def column(columns: list, k: int, mask: list, every: bool):
            return columns[k] if every else list(compress(columns[k], mask))

        def plain(texts) -> bool:
            """No digit separator ("_": float() reads it, the reference reader refuses it),
            no inf or nan in ``texts`` (each has an n: what float() reads then has no nan)."""
            joined = "".join(texts)
            return "_" not in joined and "n" not in joined and "N" not in joined

        def scaled_column(texts, factor: float) -> list:
            return [v * factor for v in map(float, texts)]

        def one_text(texts) -> bool:
            """Whether every text of a column is the same (a launch's y and z, a constant
            block size, dynamic shared memory of 0: most traces), so that it is converted
            once and its value repeated (equal texts give equal numbers, and a text int()
            or float() refuses raises as the map over the column would)."""
            first = texts[0]
            return first == texts[-1] and texts.count(first) == len(texts)

        def ints(texts) -> list:
            """``int()`` of each text (:func:`one_text`)."""
            return [int(texts[0])] * len(texts) if one_text(texts) else list(map(int, texts))

        def scaled_once(texts, factor: float) -> list:
            """:func:`scaled_column` (:func:`one_text`)."""
            if one_text(texts):
                return [float(texts[0]) * factor] * len(texts)
            return scaled_column(texts, factor)

        def remembered(memory: Remembered, keys: list, compute):
            """``compute()``'s list of values for ``keys``, taken from ``memory`` when every
            key is in it (the misses kept, as :func:`row` keeps them); False when
            ``compute`` says False."""
            if not memory.use:
                return compute()
            known = list(map(memory.get, keys))
            if None not in known:
                memory.hits += len(known)
                return known
            values = compute()
            if values is not False:
                keep = memory.keep
                for key, old, value in zip(keys, known, values):
                    if old is None:
                        keep(key, value)
                    else:
                        memory.hits += 1
            return values

        def kernel_rows(columns, mask, cells, out, first) -> bool:
            if not xyz:
                return False
            every = all(mask)
            times = column(columns, duration_col, mask, every)
            if not plain(times):
                return False
            times = scaled_column(times, time_factor)
            if not (min(times) > 0 and max(times) < inf):
                return False
            if launch_key is not None and launches.use:
                keys = list(zip(*[column(columns, k, mask, every) for k in launch_cols]))
                launched = remembered(launches, keys, lambda: launch_cells(columns, mask, every))
            else:
                launched = launch_cells(columns, mask, every)
            if launched is False:
                return False
            names = list(map(named.__getitem__, column(columns, name_col, mask, every)))
            gpus = map(str.strip, column(columns, device_col, mask, every)) \
                if device_col is not None else repeat("")
            at = compress(range(len(mask)), mask)
            for k, time_s, name, gpu, (grid, block, regs, smem) in zip(
                    at, times, names, gpus, launched):
                d = kernel.copy()
                d["time_s"] = time_s
                d["name"] = name
                d["gpu"] = gpu
                d["grid"] = grid
                d["block"] = block
                d["registers_per_thread"] = regs
                d["shared_mem_bytes"] = smem
                d["metrics"] = {}
                d["row"] = first + k
                record = new(Measurement)
                set_fields(record, "__dict__", d)
                out[k] = record
            return True

        def launch_cells(columns, mask, every):
            """:func:`launch`'s (grid, block, registers, shared memory) of each kernel row,
            a column at a time; False when a row is off the common case."""
            launch = [ints(column(columns, k, mask, every)) for k in (gx, gy, gz, bx, by, bz)]
            if min(map(min, launch)) < 1:
                return False
            if reg_col is None:
                regs = repeat(None)
            else:
                texts = column(columns, reg_col, mask, every)
                if "" in texts:
                    return False
                regs = ints(texts)
                if min(regs) < 0:
                    return False
            total = None
            for k, factor in smem_cols:
                texts = column(columns, k, mask, every)
                if factor is None or "" in texts or not plain(texts):
                    return False
                values = scaled_once(texts, factor)
                total = values if total is None else list(map(add, total, values))
            if total is None:
                smems = repeat(None)
            elif min(total) > -inf and max(total) < inf:
                smems = list(map(round, total))
            else:
                return False
            return list(zip(zip(*launch[:3]), zip(*launch[3:]), regs, smems))

        def size_cells(texts: list):
            """:func:`copy_size`'s (exact size in bytes, whole bytes, their uncertainty, the
            stripped text) of each Size cell of ``texts``, a column at a time; False when
            one is off the common case."""
            stripped = list(map(str.strip, texts))
            joined = "".join(stripped)      # (plain(), and no exponent)
            if "_" in joined or "n" in joined or "N" in joined or "e" in joined or \
                    "E" in joined or max(map(len, stripped)) >= len(half_units):
                return False
            exact = scaled_column(stripped, size_factor)
            if not (min(exact) > 0 and max(exact) < inf):
                return False
            sizes = list(map(float, map(round, exact)))
            if min(sizes) < 1:
                return False
            # (half a unit in the last digit: units.printed_half_unit of a plain decimal; one
            # value for a column whose texts have as many digits after their points, nvprof's)
            dots = list(map(str.find, stripped, repeat(".")))
            places = list(map(sub, map(len, stripped), dots))
            if min(dots) >= 0 and places.count(places[0]) == len(places):
                u = half_units[places[0] - 1] * size_factor - 0.5
                uncertainties: Iterable[float] = repeat(u if u > 0.0 else 0.0)
            else:
                uncertainties = [
                    u if u > 0.0 else 0.0 for u in (
                        half_units[p - 1 if d >= 0 else 0] * size_factor - 0.5
                        for p, d in zip(places, dots))]
            return list(zip(exact, sizes, uncertainties, stripped))

        def copy_rows(columns, mask, directions, cells, out, first) -> bool:
            if size_col is None or size_factor is None:
                return False
            every = all(mask)
            time_texts = column(columns, duration_col, mask, every)
            if not plain(time_texts):
                return False
            times = scaled_column(time_texts, time_factor)
            if not (min(times) > 0 and max(times) < inf):
                return False
            texts = column(columns, size_col, mask, every)
            known = remembered(sizes, texts, lambda: size_cells(texts))
            if known is False:
                return False
            rates: Iterable[float | None]
            thr_texts: Iterable[str | None]
            if rate_col is None:
                rates, thr_texts = repeat(None), repeat(None)
            else:
                thr_texts = stripped = list(map(str.strip, column(columns, rate_col, mask,
                                                                  every)))
                if rate_factor is None or "" in stripped or not plain(stripped):
                    return False
                rates = values = scaled_column(stripped, rate_factor)
                if not (min(values) > -inf and max(values) < inf):
                    return False
            names = map(named.__getitem__, column(columns, name_col, mask, every))
            gpus = map(str.strip, column(columns, device_col, mask, every)) \
                if device_col is not None else repeat("")
            at = list(compress(range(len(mask)), mask))
            ways = [directions[k] for k in at]
            kinds = {side: column(columns, side, mask, every) for side in (src_col, dst_col)
                     if side is not None}
            for j, k, time_s, name, direction, gpu, (exact, size, uncertainty, text), thr, \
                    thr_text in zip(range(len(at)), at, times, names, ways, gpus, known, rates,
                                    thr_texts):
                # (row()'s memory kind, check and record of a copy, inlined as there: a call
                # per row is 2 % of an import; the tests compare the two paths)
                extra: dict = {}
                if uncertainty > 0:
                    extra["size_uncertainty"] = (uncertainty, "B")
                side = src_col if direction == "htod" else dst_col
                kind = ""
                if side is not None:
                    cell = kinds[side][j]
                    known_kind = memory.get(cell)
                    if known_kind is None:
                        known_kind = MEMORY_KINDS.get(cell.strip().lower(), "")
                        if len(memory) >= CACHE:
                            memory.clear()
                        memory[cell] = known_kind
                    kind = known_kind
                if not kind and (direction == "dtod" or direction == "ptop"):
                    kind = "device"
                if thr is not None:
                    if not (thr > 0 and abs(exact / time_s / thr - 1) <= TOLERANCE):
                        _check(text, time_texts[j].strip(), thr_text, exact, time_s, thr,
                               source, first + k, result)
                    extra["throughput"] = (thr, "B/s")
                d = copy.copy()
                d["time_s"] = time_s
                d["name"] = name
                d["direction"] = direction
                d["gpu"] = gpu
                d["size_bytes"] = size
                d["memory_kind"] = kind
                d["metrics"] = extra
                d["row"] = first + k
                record = new(Measurement)
                set_fields(record, "__dict__", d)
                out[k] = record
            return True

        row.rows = rows     # type: ignore[attr-defined]
        return row

    def _extra(self, f, out: dict) -> bool:
        """The extra columns' metrics into ``out``; False when one is not finite."""
        unit = self.unit
        for k, name in self.extra:
            metric = _extra_metric(f[k].strip(), unit.get(name, ""))
            if metric is not None:
                if not -_INF < metric[0] < _INF:
                    return False
                out[name] = metric
        return True


def _number(cells, unit, name, source, row, table=None, required=True):
    """A bare number of column ``name`` scaled by the block's unit for that column."""
    text = cells.get(name, "")
    if not text:
        if required:
            raise FormatError(f"{where(source, row, name)}: empty; this row needs a value here")
        return None
    parsed = split_number(text)
    if parsed is None:
        raise FormatError(f"{where(source, row, name)}: {text!r} is not a number")
    value, suffix = parsed
    u = unit.get(name, "")
    if suffix:
        raise FormatError(f"{where(source, row, name)}: {text!r} carries its own unit while the "
                          f"unit row says {u or 'none'}; mixed units are refused (nvprof writes "
                          f"bare numbers under one unit per column)")
    if table is not None:
        if not u:
            raise FormatError(f"{where(source, row, name)}: the unit row gives no unit for this "
                              f"column (valid: {valid(table)}); units are never guessed")
        value *= table[u]
    return value


def _whole(cells, name, source, row):
    text = cells.get(name, "")
    try:
        v = float(text)
    except ValueError:
        raise FormatError(f"{where(source, row, name)}: {text!r} is not a whole number") from None
    if not v.is_integer() or v < (0 if "Registers" in name or "SMem" in name else 1):
        raise FormatError(f"{where(source, row, name)}: {text!r} is not a valid {name.lower()}")
    return int(v)


def _trace_row(cells, unit, col, source, row, result):
    name = cells["Name"]
    m = _COPY.match(name)
    if name.startswith("[") and not (m and m.group(1) in COPY_DIRECTIONS):
        return None
    dur_text = cells["Duration"]
    time_s = _number(cells, unit, "Duration", source, row, NVPROF_TIME)
    positive(time_s, source, row, "Duration", "a duration", f"{dur_text} {unit['Duration']}")
    gpu = cells.get("Device", "")
    extra = _extra_metrics(cells, unit, source, row)
    if m:
        direction = COPY_DIRECTIONS[m.group(1)]
        if "Size" not in col:
            raise FormatError(f"{where(source, row, 'Size')}: a copy row needs the Size column "
                              f"(absent from this block's header)")
        size = _number(cells, unit, "Size", source, row, NVPROF_SIZE)
        positive(size, source, row, "Size", "a copy size", f"{cells['Size']} {unit['Size']}")
        # whole bytes: 2.5 KB and 2.441406e-03 MB are both 2560 B (units.whole_bytes)
        exact = size
        size, uncertainty = whole_bytes(size, printed_half_unit(cells["Size"])
                                        * NVPROF_SIZE[unit["Size"]])
        if size < 1:
            raise FormatError(f"{where(source, row, 'Size')}: {cells['Size']} {unit['Size']} is "
                              f"less than one byte; a copy moves whole bytes")
        if uncertainty > 0:
            extra["size_uncertainty"] = (uncertainty, "B")
        thr = _number(cells, unit, "Throughput", source, row, NVPROF_RATE, required=False) \
            if "Throughput" in col else None
        if thr is not None:
            _check(cells["Size"], cells["Duration"], cells["Throughput"], exact, time_s, thr,
                   source, row, result)
        side = "SrcMemType" if direction == "htod" else "DstMemType"
        kind = MEMORY_KINDS.get(cells.get(side, "").lower(), "")
        if direction in ("dtod", "ptop") and not kind:
            kind = "device"
        if thr is not None:
            extra["throughput"] = (thr, "B/s")
        return Measurement(kind="transfer", time_s=time_s, name=name, direction=direction,
                           gpu=gpu, size_bytes=size, memory_kind=kind, metrics=extra,
                           source=source, row=row)
    for c in ("Grid X", "Block X"):
        if c not in col:
            raise FormatError(f"{where(source, row, c)}: a kernel row needs the grid and block "
                              f"columns (absent from this block's header)")
    grid = tuple(_whole(cells, f"Grid {a}", source, row) for a in "XYZ" if f"Grid {a}" in col)
    block = tuple(_whole(cells, f"Block {a}", source, row) for a in "XYZ" if f"Block {a}" in col)
    regs = _whole(cells, "Registers Per Thread", source, row) \
        if cells.get("Registers Per Thread") else None
    smem = None
    for c in ("Static SMem", "Dynamic SMem"):
        v = _number(cells, unit, c, source, row, NVPROF_SIZE, required=False) if c in col else None
        if v is not None:
            smem = (smem or 0) + v
            if not math.isfinite(smem):
                raise FormatError(f"{where(source, row, c)}: {cells[c]} {unit[c]} of shared "
                                  f"memory is not a finite number of bytes; give a finite value")
    return Measurement(kind="kernel", time_s=time_s, name=name, gpu=gpu, grid=grid, block=block,
                       registers_per_thread=regs,
                       shared_mem_bytes=None if smem is None else int(round(smem)),
                       metrics=extra, source=source, row=row)


def _extra_metrics(cells, unit, source, row) -> dict:
    out = {}
    for name, text in cells.items():
        if name not in KNOWN_TRACE:
            metric = _extra_metric(text, unit.get(name, ""))
            if metric is not None:
                out[name] = metric
    return out


def _extra_metric(text: str, u: str):
    """(value, unit) of an extra column's cell under its unit row's unit ``u`` (times in s,
    sizes in B, rates in B/s); None for an empty cell or one that is not a bare number."""
    if not text:
        return None
    parsed = split_number(text)
    if parsed is None or parsed[1]:
        return None
    for table, norm in ((NVPROF_TIME, "s"), (NVPROF_SIZE, "B"), (NVPROF_RATE, "B/s")):
        if u in table:
            return parsed[0] * table[u], norm
    return parsed[0], u or "1"


def _check(size_text, time_text, thr_text, size, time_s, thr, source, row, result):
    """Size / Duration against Throughput (both binary-prefixed in nvprof); the three
    cells' texts give their printing's rounding."""
    implied = size / time_s
    ratio = implied / thr if thr > 0 else float("inf")
    if abs(ratio - 1) <= TOLERANCE:
        return
    tol = TOLERANCE + sum(rounding_error(t) for t in (size_text, time_text, thr_text))
    if abs(ratio - 1) <= tol:
        return
    hint = ""
    for factor, why in ((2 ** 30 / 1e9, "2^30/10^9: one of Size, Throughput is decimal, not "
                                        "binary as nvprof writes"),
                        (1024 / 1000, "1024/1000: a K prefix read as decimal")):
        if any(abs(ratio / f - 1) <= tol for f in (factor, 1 / factor)):
            hint = f"; the ratio is {why}"
            break
    result.disagreements.append(Disagreement(
        row, "Throughput",
        f"Size/Duration = {implied / 2 ** 30:.6g} GB/s but Throughput says "
        f"{thr / 2 ** 30:.6g} GB/s (ratio {ratio:.4f}){hint}"))


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
