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

import re

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.parsing import (
    Disagreement, ImportResult, csv_fields, positive, split_lines, table_rows, where)
from gpumodeler.core.measurements.records import Measurement
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
    lines = split_lines(text)
    result = ImportResult("nvprof", source)
    per_kernel: dict = {}  # (device, kernel) -> [row, metrics]
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if _ends_block(lines[i]):
            result.noise_lines += 1
            i += 1
            continue
        fields = csv_fields(s, source, i + 1)
        kind = header_kind(fields)
        if kind == "trace":
            i = _trace_block(lines, i, fields, result)
        elif kind in ("metrics", "events"):
            i = _metric_block(lines, i, fields, kind, result, per_kernel)
        elif kind in ("summary", "api"):
            i = _skip_block(lines, i, result)
        elif len(fields) >= 4 and is_number(fields[0]) and is_number(fields[1]):
            raise FormatError(
                f"{where(source, i + 1)}: a data row outside any table (its header line, "
                f"\"Start\",\"Duration\",..., is missing: is the file cut or edited?)")
        elif s.startswith('"'):
            shown = ", ".join(fields[:6]) + (", ..." if len(fields) > 6 else "")
            raise FormatError(
                f"{where(source, i + 1)}: a CSV header nvprof does not write ({shown}); "
                f"expected a GPU trace (\"Start\",\"Duration\",...,\"Name\") or a metric/event "
                f"table (\"Device\",\"Kernel\",\"Invocations\",\"Metric Name\"...)")
        else:
            result.noise_lines += 1
            i += 1
    for (device, kernel), (row, metrics) in per_kernel.items():
        result.records.append(Measurement(kind="kernel", time_s=None, name=kernel, gpu=device,
                                          metrics=metrics, source=source, row=row))
    return result


def _skip_block(lines, i, result) -> int:
    """A table gpumodeler does not read (summary, API trace): header counted as noise, rows
    as other rows."""
    result.noise_lines += 1
    i += 1
    while i < len(lines) and not _ends_block(lines[i]):
        result.other_rows += 1
        i += 1
    return i


def _unit_row(lines, i, header, source) -> list[str]:
    row = i + 2
    if i + 1 >= len(lines) or not lines[i + 1].strip():
        raise FormatError(f"{where(source, row)}: the header at row {i + 1} has no unit row under "
                          f"it (is the file truncated?); nvprof writes one like "
                          f"us,us,,,...,KB,GB/s and units are never guessed")
    units = csv_fields(lines[i + 1].strip(), source, row)
    if any(u and u not in ALL_UNITS for u in units) or len(units) != len(header):
        bad = next((f"{h} = {u!r}" for h, u in zip(header, units) if u and u not in ALL_UNITS),
                   f"{len(units)} fields for {len(header)} columns")
        raise FormatError(f"{where(source, row)}: expected nvprof's unit row under the header at "
                          f"row {i + 1} (like us,us,,,...,KB,GB/s), got {bad}; units are never "
                          f"guessed")
    for col, table in UNIT_TABLES.items():
        if col in header:
            u = units[header.index(col)]
            if u and u not in table:
                raise FormatError(f"{where(source, row, col)}: unit {u!r} is not a unit of "
                                  f"{col} (valid: {valid(table)})")
    return units


def _trace_block(lines, i, header, result) -> int:
    source = result.source
    for col in ("Duration", "Name"):
        if col not in header:  # header_kind guarantees these; kept for clarity
            raise FormatError(f"{where(source, i + 1)}: the GPU-trace header has no {col} column")
    units = _unit_row(lines, i, header, source)
    column = {h: k for k, h in enumerate(header)}
    unit = {h: units[k] for k, h in enumerate(header)}
    start = end = i + 2
    while end < len(lines) and not _ends_block(lines[end]):
        end += 1
    for j, fields in table_rows(lines, start, end, source):
        if fields and fields[0] in HEADER_STARTS and header_kind(fields) is not None:
            return j
        if len(fields) != len(header):
            raise FormatError(
                f"{where(source, j + 1)}: {len(fields)} fields for the {len(header)} columns of "
                f"the header at row {i + 1} (is the file truncated or were columns edited?)")
        rec = _trace_row(dict(zip(header, fields)), unit, column, source, j + 1, result)
        if rec is None:
            result.other_rows += 1
        else:
            result.records.append(rec)
    return end


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
            _check(cells, unit, exact, time_s, thr, source, row, result)
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
    return Measurement(kind="kernel", time_s=time_s, name=name, gpu=gpu, grid=grid, block=block,
                       registers_per_thread=regs,
                       shared_mem_bytes=None if smem is None else int(round(smem)),
                       metrics=extra, source=source, row=row)


def _extra_metrics(cells, unit, source, row) -> dict:
    out = {}
    for name, text in cells.items():
        if name in KNOWN_TRACE or not text:
            continue
        parsed = split_number(text)
        if parsed is None or parsed[1]:
            continue
        u = unit.get(name, "")
        for table, norm in ((NVPROF_TIME, "s"), (NVPROF_SIZE, "B"), (NVPROF_RATE, "B/s")):
            if u in table:
                out[name] = (parsed[0] * table[u], norm)
                break
        else:
            out[name] = (parsed[0], u or "1")
    return out


def _check(cells, unit, size, time_s, thr, source, row, result):
    """Size / Duration against Throughput (both binary-prefixed in nvprof)."""
    implied = size / time_s
    ratio = implied / thr if thr > 0 else float("inf")
    if abs(ratio - 1) <= TOLERANCE:
        return
    tol = TOLERANCE + sum(rounding_error(cells[c]) for c in ("Size", "Duration", "Throughput"))
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


def _metric_block(lines, i, header, kind, result, per_kernel) -> int:
    source = result.source
    name_col = "Metric Name" if kind == "metrics" else "Event Name"
    j = i + 1
    while j < len(lines) and not _ends_block(lines[j]):
        fields = csv_fields(lines[j].strip(), source, j + 1)
        if header_kind(fields) is not None:
            return j
        if len(fields) != len(header):
            raise FormatError(
                f"{where(source, j + 1)}: {len(fields)} fields for the {len(header)} columns of "
                f"the header at row {i + 1} (is the file truncated?)")
        cells = dict(zip(header, fields))
        metric = cells[name_col]
        value = _metric_value(cells["Avg"], source, j + 1)
        key = (cells["Device"], cells["Kernel"])
        entry = per_kernel.setdefault(key, [j + 1, {}])
        if value is not None:
            entry[1][metric] = value
        if cells.get("Invocations"):
            try:
                entry[1]["invocations"] = (float(cells["Invocations"]), "1")
            except ValueError:
                raise FormatError(f"{where(source, j + 1, 'Invocations')}: "
                                  f"{cells['Invocations']!r} is not a number") from None
        j += 1
    return j


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
