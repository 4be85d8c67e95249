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
import math
import re
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import cast

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.parsing import (
    ImportResult, Remembered, check_finite, positive, scaled_positive, split_lines, where,
    whole_number)
from gpumodeler.core.measurements.records import (DIRECTIONS, FIELD_DEFAULTS, KINDS,
                                                  Measurement, from_fields)
from gpumodeler.core.measurements.units import (TIMINGS_SIZE, TIMINGS_TIME, split_number, valid,
                                               whole_bytes)

COLUMNS = ("kind", "time", "unit", "name", "direction", "size", "size_unit", "grid", "block",
           "gpu", "memory_kind", "registers", "shared_mem")
MEMORY_KINDS = ("pageable", "pinned", "managed", "device")
#: the columns of words (read once per distinct combination by the fast row reader)
WORD_COLUMNS = ("kind", "unit", "name", "direction", "size_unit", "gpu", "memory_kind")
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
    """The rows of a timings CSV (module docstring)."""
    result = ImportResult("timings", source)
    result.records = list(stream(split_lines(text), source, result))
    return result


def stream(lines: Iterable[str], source: str, result: ImportResult) -> Iterator[Measurement]:
    """The rows of a timings CSV given line by line, yielded as they are read. One CSV
    reader reads the whole file (comments and blank lines filtered out before it, counted
    as noise); each row goes through :class:`_Table` (the row as the reference :func:`_row`
    reads it, at a fraction of the cost)."""
    at = [0]   # the line number of the row the reader returned last

    def data_lines():
        for i, line in enumerate(lines, 1):
            c = line[:1]
            if not c or c == "#" or c.isspace() and _is_comment(line):
                result.noise_lines += 1
                continue
            at[0] = i
            yield line

    reader = csv.reader(data_lines(), strict=True)
    try:
        fields = next(reader, None)
    except csv.Error as exc:
        raise FormatError(f"{where(source, at[0])}: not a valid CSV line ({exc})") from None
    if fields is None:
        return
    fields = [f.strip() for f in fields]
    header, hrow = [f.lower() for f in fields], at[0]
    missing = [c for c in ("kind", "time") if c not in header]
    if missing:
        raise FormatError(
            f"{where(source, hrow)}: the timings header has no {' and no '.join(missing)} "
            f"column (columns: {', '.join(fields[:8])}); it needs kind and time, see "
            f"docs/measurements.md")
    names = dict(zip(header, fields))
    table = _Table(header, names, source)
    fast = table.row
    width = len(header)
    try:
        for fields in reader:
            row = at[0]
            if len(fields) != width:
                raise FormatError(f"{where(source, row)}: {len(fields)} fields for the "
                                  f"{width} columns of the header at row {hrow} (is the file "
                                  f"truncated?)")
            rec = fast(fields, row)
            if rec is SLOW:
                rec = check_finite(_row(dict(zip(header, [f.strip() for f in fields])), names,
                                        source, row), source)
            yield rec
    except csv.Error as exc:
        raise FormatError(f"{where(source, at[0])}: not a valid CSV line ({exc})") from None


#: :meth:`_Table.row`'s answer for a row it leaves to :func:`_row`
SLOW = object()
_INF = math.inf
#: distinct texts of a row's fixed cells remembered at most
CACHE = 4096


class _Table:
    """A timings CSV's columns, found once, and its rows read by position with the common
    case only (plain numbers, units in the unit columns, known words); any other row is
    answered :data:`SLOW` and read by :func:`_row`, which gives the same record or the
    row's error message (a test compares the two)."""

    def __init__(self, header: list[str], names: dict, source: str):
        col = {h: k for k, h in enumerate(header)}
        self.col = col
        self.kind = col["kind"]
        self.time = col["time"]
        get = col.get
        self.unit, self.name, self.gpu = get("unit"), get("name"), get("gpu")
        self.direction, self.size, self.size_unit = get("direction"), get("size"), get("size_unit")
        self.memory_kind, self.grid, self.block = get("memory_kind"), get("grid"), get("block")
        self.registers, self.shared = get("registers"), get("shared_mem")
        self.metrics = []
        for name, k in col.items():
            if name in COLUMNS:
                continue
            m = _BRACKET.match(names[name])
            self.metrics.append((k, m.group(1) if m else names[name], m.group(2) if m else None))
        base = dict(FIELD_DEFAULTS, source=source)
        self.kernel = dict(base, kind="kernel")
        self.transfer = dict(base, kind="transfer")

        # the word columns (kind, unit, name, gpu, direction, memory kind, size unit): a
        # handful of combinations per file, read once each; the numbers (time, size, launch,
        # registers, metrics) are parsed per row (a launch and a size remembered below)
        words = [k for name, k in col.items() if name in WORD_COLUMNS]
        self.key = itemgetter(*words) if len(words) > 1 else (lambda f, k=words[0]: f[k])
        self.known: dict = {}
        # a kernel's launch cells and a transfer's size (with its unit's factor), remembered
        # by their texts while that pays (parsing.Remembered)
        launch = [k for k in (self.grid, self.block, self.registers, self.shared)
                  if k is not None]
        self.launch_key = itemgetter(*launch) if len(launch) > 1 else None
        self.launches = Remembered(CACHE)
        self.sizes = Remembered(CACHE)

        self.row = self._row_reader()

    def _row_reader(self):
        """``row(fields, number)``: the row's record, or SLOW (a closure over the table's
        columns: the read of a row is the hot loop of an import)."""
        key_of, known_of, fixed = self.key, self.known, self.fixed
        time_col, size_col = self.time, self.size
        grid_col, block_col, reg_col, shared_col = self.grid, self.block, self.registers, \
            self.shared
        launch_key, launches, sizes = self.launch_key, self.launches, self.sizes
        metric_cols = self.metrics
        inf = _INF

        def launch(f: list[str]):
            """(grid, block, registers, shared memory) of a kernel row, or SLOW. Each cell a
            plain whole number (digits, as str.isdigit and int() read them: a grid or block
            of one number >= 1, registers and shared memory >= 0) or empty (None); any other
            text is left to the reference reader (:func:`_dims`, :func:`_whole`), which reads
            it or says what is wrong."""
            try:
                g = f[grid_col].strip() if grid_col is not None else ""
                b = f[block_col].strip() if block_col is not None else ""
                r = f[reg_col].strip() if reg_col is not None else ""
                s = f[shared_col].strip() if shared_col is not None else ""
                if not ((g.isdigit() or not g) and (b.isdigit() or not b) and
                        (r.isdigit() or not r) and (s.isdigit() or not s)):
                    return SLOW
                grid = (int(g),) if g else None
                block = (int(b),) if b else None
                regs = int(r) if r else None
                shared = int(s) if s else None
            except ValueError:      # (a digit int() does not read: ², ⑦...)
                return SLOW
            if (grid is not None and grid[0] < 1) or (block is not None and block[0] < 1):
                return SLOW
            return grid, block, regs, shared

        def row(f: list[str], number: int):
            key = key_of(f)
            known = known_of.get(key)
            if known is None:
                known = fixed(f)
                if len(known_of) >= CACHE:
                    known_of.clear()
                known_of[key] = known
            if known is SLOW:
                return SLOW
            template, factor, size_factor = known
            text = f[time_col]
            try:        # (parsing.scaled_positive inlined: "_" gives 0, which is refused)
                time_s = float(text) * factor if "_" not in text else 0.0
            except ValueError:
                return SLOW
            if not 0 < time_s < inf:
                return SLOW
            d = template.copy()
            if size_factor is None:        # a kernel
                key = launch_key(f) if launches.use and launch_key is not None else None
                cells = launches.get(key) if key is not None else None
                if cells is None:
                    cells = launch(f)
                    if cells is SLOW:
                        return SLOW
                    if key is not None:
                        launches.keep(key, cells)
                else:
                    launches.hits += 1
                d["grid"], d["block"], d["registers_per_thread"], d["shared_mem_bytes"] = cells
            else:     # (a transfer's words were read only with a size column: fixed)
                text = f[cast(int, size_col)]
                key = (text, size_factor) if sizes.use else None
                size = sizes.get(key) if key is not None else None
                if size is None:
                    size = scaled_positive(text, size_factor)
                    if size is None:
                        return SLOW
                    size = float(round(size))   # our format: the size as written, to whole bytes
                    if size < 1:
                        return SLOW
                    if key is not None:
                        sizes.keep(key, size)
                else:
                    sizes.hits += 1
                d["size_bytes"] = size
            metrics = {}
            for k, name, unit in metric_cols:
                text = f[k].strip()
                if not text:
                    continue
                # (units.split_number's first case inlined: a plain finite decimal)
                value = None
                c = text[0]
                if "_" not in text and (c.isdigit() or c in ".+-") and text[-1] not in "fFnN":
                    try:
                        value = float(text)
                    except ValueError:
                        pass
                if value is not None and -inf < value < inf:
                    metrics[name] = (value, unit or "1")
                    continue
                parsed = split_number(text)
                if parsed is None:
                    continue
                value = parsed[0]
                if not -inf < value < inf:
                    return SLOW
                metrics[name] = (value, unit or (parsed[1] or "1"))
            d["time_s"] = time_s
            d["metrics"] = metrics
            d["row"] = number
            return from_fields(d)

        return row

    def fixed(self, f: list[str]):
        """(the record's fields but the numbers, metrics and row; the time unit's factor;
        a transfer's size unit's factor, None for a kernel) from the row's word cells, or
        SLOW."""
        kind = f[self.kind].strip().lower()
        if kind != "kernel" and kind != "transfer":
            return SLOW
        factor = TIMINGS_TIME.get(f[self.unit].strip()) if self.unit is not None else None
        if factor is None:
            return SLOW
        memory_kind = f[self.memory_kind].strip().lower() if self.memory_kind is not None \
            else ""
        if memory_kind and memory_kind not in MEMORY_KINDS:
            return SLOW
        size_factor = None
        if kind == "transfer":
            direction = f[self.direction].strip().lower() if self.direction is not None else ""
            if direction not in DIRECTIONS or self.size is None or self.size_unit is None:
                return SLOW
            size_factor = TIMINGS_SIZE.get(f[self.size_unit].strip())
            if size_factor is None:
                return SLOW
            d = self.transfer.copy()
            d["direction"] = direction
            d["memory_kind"] = memory_kind
        else:
            d = self.kernel.copy()
        d["name"] = f[self.name].strip() if self.name is not None else ""
        d["gpu"] = f[self.gpu].strip() if self.gpu is not None else ""
        return d, factor, size_factor


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
    v = whole_number(text)
    if v is None or (isinstance(v, float) and not v.is_integer()) or v < 0:
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
