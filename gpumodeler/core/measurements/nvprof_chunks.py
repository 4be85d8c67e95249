"""nvprof GPU-trace rows read a chunk at a time by column position: the common case only
(plain numbers, units given, values valid), every other row answered :data:`SLOW` and read by
the reference :func:`nvprof_rows.trace_row`, which gives the same record or the row's error
message. Split from :mod:`nvprof` (which reads the file's tables and feeds the chunks) because
it is the hot loop of an import and most of the code."""
import math
from collections.abc import Iterable
from itertools import compress, repeat
from operator import add, is_, itemgetter, sub
from typing import Protocol

from gpumodeler.core.measurements.nvprof_rows import (
    COPY_DIRECTIONS, COPY_NAME, KNOWN_TRACE, MEMORY_KINDS, TOLERANCE, check_rate, extra_metric)
from gpumodeler.core.measurements.parsing import Remembered, scaled, scaled_positive
from gpumodeler.core.measurements.records import FIELD_DEFAULTS, Measurement
from gpumodeler.core.measurements.units import NVPROF_RATE, NVPROF_SIZE, NVPROF_TIME, printed_half_unit

#: :meth:`TraceTable.row`'s answer for a row it leaves to :func:`trace_row`
SLOW = object()
_INF = math.inf
#: distinct texts of each kind (sizes, names...) remembered per table at most
CACHE = 4096
#: half a unit in the last digit of a plain decimal with k digits after its point
#: (:func:`units.printed_half_unit`'s expression for an exponent of 0)
_HALF_UNITS = tuple(0.5 * 10.0 ** (0 - k) for k in range(32))


class Formatter(Protocol):
    """What a caller that only writes the records out (``measure import --json``) may give
    the reader, so that the rows of the chunk path become its output straight from their
    columns, without their records (a record's dict, and the writer's look at the types of
    its 19 fields, cost more than its line). One call per kind of row per chunk, made once
    every row of the chunk is read by the column path (none for a chunk read row by row),
    one item per row returned, in place of the row's record. The columns
    hold what the record's fields would: the values are checked and of exact types (names,
    GPUs and memory kinds ``str``, ``""`` for none; times finite floats > 0; a launch (grid,
    block, registers, shared memory) of two 3-tuples of ints and two ints or None; a size
    (exact bytes, whole bytes, their uncertainty, the size's text) of finite floats; a rate
    a finite float or None), so that each field's output can be written without looking at
    its type. A kernel's metrics are empty; a copy's are its size's uncertainty when > 0,
    then its throughput when given, as :meth:`TraceTable.row` makes them."""

    def kernels(self, source: str, names: list, gpus: Iterable, launches: list,
                times: list, rows: list) -> list: ...

    def copies(self, source: str, names: list, directions: list, gpus: Iterable,
               sizes: list, times: list, memory_kinds: list, rates: Iterable,
               rows: list) -> list: ...


class TraceTable:
    """One GPU-trace table's columns and unit factors, found once, and its rows read by
    position with the common case only: plain numbers, units given, values valid. Any other
    row is answered :data:`SLOW` and read by :func:`trace_row`, which gives the same record
    or the row's error message (a test compares the two on every sample row and on edited
    ones)."""

    def __init__(self, header, units, result, formatter: Formatter | None = None):
        self.result = result
        self.formatter = formatter
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
        formatter = self.formatter
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
            m = COPY_NAME.match(name)
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
                # (check_rate's first test inline: a row whose numbers agree costs no call)
                if not (thr > 0 and abs(exact / time_s / thr - 1) <= TOLERANCE):
                    check_rate(text, time_text.strip(), thr_text, exact, time_s, thr, source,
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
            later: list = []        # (the formatter's calls: made once every row is read)
            try:
                if any(kernels) and not kernel_rows(columns, kernels, cells, out, first,
                                                    later):
                    return None
                if any(copies) and not copy_rows(columns, copies, directions, cells, out,
                                                 first, later):
                    return None
            except ValueError:      # (a cell float() or int() does not read)
                return None
            for make, at, args in later:
                for k, item in zip(at, make(source, *args, [first + k for k in at])):
                    out[k] = item
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

        def kernel_rows(columns, mask, cells, out, first, later) -> bool:
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
            if formatter is not None:
                later.append((formatter.kernels, list(compress(range(len(mask)), mask)),
                              (names, gpus, launched, times)))
                return True
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

        def copy_rows(columns, mask, directions, cells, out, first, later) -> bool:
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
            names: Iterable[str] = map(named.__getitem__, column(columns, name_col, mask, every))
            gpus: Iterable[str] = map(str.strip, column(columns, device_col, mask, every)) \
                if device_col is not None else repeat("")
            if formatter is not None:     # (read twice: by the loop, then by the formatter)
                names, gpus = list(names), list(gpus) if device_col is not None else gpus
            at = list(compress(range(len(mask)), mask))
            ways = [directions[k] for k in at]
            kinds = {side: column(columns, side, mask, every) for side in (src_col, dst_col)
                     if side is not None}
            memory_kinds: list = []     # (each row's, for the formatter)
            for j, k, time_s, name, direction, gpu, (exact, size, uncertainty, text), thr, \
                    thr_text in zip(range(len(at)), at, times, names, ways, gpus, known, rates,
                                    thr_texts):
                # (row()'s memory kind, check and record of a copy, inlined as there: a call
                # per row is 2 % of an import; the tests compare the two paths)
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
                if thr is not None and not (thr > 0 and abs(exact / time_s / thr - 1) <=
                                            TOLERANCE):
                    check_rate(text, time_texts[j].strip(), thr_text, exact, time_s, thr,
                               source, first + k, result)
                if formatter is not None:
                    memory_kinds.append(kind)
                    continue
                extra: dict = {}
                if uncertainty > 0:
                    extra["size_uncertainty"] = (uncertainty, "B")
                if thr is not None:
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
            if formatter is not None:
                later.append((formatter.copies, at,
                              (names, ways, gpus, known, times, memory_kinds, rates)))
            return True

        row.rows = rows     # type: ignore[attr-defined]
        return row

    def _extra(self, f, out: dict) -> bool:
        """The extra columns' metrics into ``out``; False when one is not finite."""
        unit = self.unit
        for k, name in self.extra:
            metric = extra_metric(f[k].strip(), unit.get(name, ""))
            if metric is not None:
                if not -_INF < metric[0] < _INF:
                    return False
                out[name] = metric
        return True
