"""The gpumodeler timings CSV: measured times from any tool, one row per kernel or copy.

Columns (header names are case-insensitive; order free; ``#`` lines are comments)::

    kind        kernel | transfer                                  (required)
    time        the duration, > 0                                  (required)
    unit        s | ms | us | µs | ns   — or a suffix on time: 3.2ms (not both, unless equal)
    name        kernel name or copy label
    direction   htod | dtoh | dtod | ptop                          (transfers: required)
    size        bytes moved, > 0                                   (transfers: required)
    size_unit   B | kB | KB | MB | GB | TB (decimal) | KiB | MiB | GiB | TiB (binary)
                — or a suffix on size: 4MiB
    grid        blocks: 256, 16x16 or 64x8x2                       (kernels)
    block       threads per block: 256 or 16x16                    (kernels)
    gpu         the device, as the user names it
    memory_kind pageable | pinned | managed | device               (transfers)
    registers   registers per thread                               (kernels)
    shared_mem  shared memory per block in bytes (static + dynamic)

Any other column with a number becomes a metric of the row (unit ``1``, or the text in
brackets of its name: ``energy [J]``).
"""
from __future__ import annotations

import csv
import re

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.parsing import (
    ImportResult, positive, split_lines, where)
from gpumodeler.core.measurements.records import DIRECTIONS, KINDS, Measurement
from gpumodeler.core.measurements.units import (TIMINGS_SIZE, TIMINGS_TIME, split_number, valid,
                                               whole_bytes)

COLUMNS = ("kind", "time", "unit", "name", "direction", "size", "size_unit", "grid", "block",
           "gpu", "memory_kind", "registers", "shared_mem")
MEMORY_KINDS = ("pageable", "pinned", "managed", "device")
_BRACKET = re.compile(r"^(.*?)\s*\[(.+)\]$")


def _is_comment(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("#")


def looks_like_timings(lines) -> bool:
    """True when the first non-comment line is a header with kind and time columns."""
    for line in lines:
        if _is_comment(line):
            continue
        names = {f.strip().lower() for f in line.split(",")}
        return {"kind", "time"} <= names
    return False


def parse(text: str, source: str = "timings.csv") -> ImportResult:
    """The rows of a timings CSV (module docstring). One CSV reader reads the whole file
    (comments and blank lines filtered out before it, counted as noise)."""
    lines = split_lines(text)
    result = ImportResult("timings", source)
    header, hrow = None, 0
    at = [0]   # the line number of the row the reader returned last

    def data_lines():
        for i, line in enumerate(lines):
            if _is_comment(line):
                result.noise_lines += 1
                continue
            at[0] = i + 1
            yield line

    reader = csv.reader(data_lines(), strict=True)
    records = result.records
    while True:
        try:
            fields = next(reader, None)
        except csv.Error as exc:
            raise FormatError(f"{where(source, at[0])}: not a valid CSV line ({exc})") from None
        if fields is None:
            break
        fields = [f.strip() for f in fields]
        if header is None:
            header, hrow = [f.lower() for f in fields], at[0]
            missing = [c for c in ("kind", "time") if c not in header]
            if missing:
                raise FormatError(
                    f"{where(source, hrow)}: the timings header has no {' and no '.join(missing)} "
                    f"column (columns: {', '.join(fields[:8])}); it needs kind and time, see "
                    f"docs/measurements.md")
            names = dict(zip(header, fields))
            continue
        if len(fields) != len(header):
            raise FormatError(f"{where(source, at[0])}: {len(fields)} fields for the "
                              f"{len(header)} columns of the header at row {hrow} (is the file "
                              f"truncated?)")
        records.append(_row(dict(zip(header, fields)), names, source, at[0]))
    return result


def _quantity(cells, value_col, unit_col, table, source, row, what):
    text = cells.get(value_col, "")
    if not text:
        raise FormatError(f"{where(source, row, value_col)}: empty; a {what} is required here")
    parsed = split_number(text)
    if parsed is None:
        raise FormatError(f"{where(source, row, value_col)}: {text!r} is not a number")
    value, suffix = parsed
    col_unit = cells.get(unit_col, "")
    if suffix and col_unit and suffix != col_unit:
        raise FormatError(f"{where(source, row, value_col)}: {text!r} says {suffix} but column "
                          f"{unit_col} says {col_unit}; mixed units are refused")
    unit = suffix or col_unit
    if not unit:
        raise FormatError(f"{where(source, row, unit_col if unit_col in cells else value_col)}: "
                          f"no unit for {value_col}: give a {unit_col} column or a suffix like "
                          f"{'3.2ms' if value_col == 'time' else '4MiB'} (valid: {valid(table)}); "
                          f"units are never guessed")
    if unit not in table:
        col = value_col if suffix else unit_col
        raise FormatError(f"{where(source, row, col)}: unknown unit {unit!r} (valid: {valid(table)})")
    return value * table[unit], text


def _dims(cells, col, source, row):
    text = cells.get(col, "")
    if not text:
        return None
    parts = text.lower().replace("×", "x").strip("()").replace(",", "x").split("x")
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise FormatError(f"{where(source, row, col)}: {text!r} is not a size like 256, 16x16 or "
                          f"64x8x2")
    return dims


def _whole(cells, col, source, row):
    text = cells.get(col, "")
    if not text:
        return None
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v.is_integer() or v < 0:
        raise FormatError(f"{where(source, row, col)}: {text!r} is not a whole number >= 0")
    return int(v)


def _row(cells, names, source, row) -> Measurement:
    kind = cells["kind"].lower()
    if kind not in KINDS:
        raise FormatError(f"{where(source, row, 'kind')}: {cells['kind']!r} is not a kind "
                          f"(valid: {', '.join(KINDS)})")
    time_s, shown = _quantity(cells, "time", "unit", TIMINGS_TIME, source, row, "time")
    positive(time_s, source, row, "time", "a duration", shown)
    metrics = {}
    for col, text in cells.items():
        if col in COLUMNS or not text:
            continue
        parsed = split_number(text)
        if parsed is None:
            continue
        m = _BRACKET.match(names[col])
        metrics[m.group(1) if m else names[col]] = (parsed[0], m.group(2) if m else (parsed[1] or "1"))
    memory_kind = cells.get("memory_kind", "").lower()
    if memory_kind and memory_kind not in MEMORY_KINDS:
        raise FormatError(f"{where(source, row, 'memory_kind')}: {cells['memory_kind']!r} is not a "
                          f"memory kind (valid: {', '.join(MEMORY_KINDS)})")
    common = dict(name=cells.get("name", ""), gpu=cells.get("gpu", ""), metrics=metrics,
                  source=source, row=row)
    if kind == "transfer":
        direction = cells.get("direction", "").lower()
        if direction not in DIRECTIONS:
            raise FormatError(f"{where(source, row, 'direction')}: {cells.get('direction', '')!r} "
                              f"is not a direction (valid: {', '.join(DIRECTIONS)})")
        if "size" not in cells:
            raise FormatError(f"{where(source, row, 'size')}: a transfer needs a size column")
        size, shown = _quantity(cells, "size", "size_unit", TIMINGS_SIZE, source, row, "size")
        positive(size, source, row, "size", "a copy size", shown)
        size, _ = whole_bytes(size)   # our format: the size as written, to whole bytes
        if size < 1:
            raise FormatError(f"{where(source, row, 'size')}: {shown} is less than one byte; a "
                              f"copy moves whole bytes")
        return Measurement(kind="transfer", time_s=time_s, direction=direction, size_bytes=size,
                           memory_kind=memory_kind, **common)
    smem = _whole(cells, "shared_mem", source, row)
    return Measurement(kind="kernel", time_s=time_s, grid=_dims(cells, "grid", source, row),
                       block=_dims(cells, "block", source, row),
                       registers_per_thread=_whole(cells, "registers", source, row),
                       shared_mem_bytes=smem, **common)
