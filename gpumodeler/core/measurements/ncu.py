"""Nsight Compute ``ncu --csv`` output: the raw page and the details page.

Raw page (``--page raw``): one row per profiled launch, one column per metric, a unit row
under the header (Nsight Compute's unit words, SI-scaled, see :mod:`units`)::

    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",
    "Block Size","Grid Size","Device","CC","dram__bytes_read.sum","gpu__time_duration.sum",...
    "","","","","","","","","","","","Mbyte","usecond",...

Details page (``--page details``, the default): one row per launch and metric::

    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",
    "Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",
    "Metric Value"

Older versions lack Block Size, Grid Size, Device and CC (the launch comes from the
``launch__*`` metrics) and may add ``Kernel Time``; newer ones add rule columns. Numbers may
carry thousands separators (``"2,304"``). ``==PROF==`` lines and application output
around the table are noise. Each launch becomes a kernel record: duration from
``gpu__time_duration.sum`` (details: ``Duration``), grid and block from the columns or
``launch__grid_size``/``launch__block_size``, registers and shared memory from
``launch__registers_per_thread`` and ``launch__shared_mem_per_block_static`` +
``_dynamic`` (details: ``Registers Per Thread``, ``Static/Dynamic Shared Memory Per
Block``); every numeric metric is kept with its unit normalised (bytes ``B``, seconds
``s``, rates ``B/s``, frequencies ``Hz``).
"""
from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Iterator

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.parsing import (
    ImportResult, LineSource, csv_fields, positive, split_lines, where)
from gpumodeler.core.measurements.records import FIELD_DEFAULTS, Measurement, from_fields
from gpumodeler.core.measurements.units import ncu_unit, split_number

META = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
        "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
        "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type",
        "Estimated Speedup", "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
        "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg")
TIME_METRICS = ("gpu__time_duration.sum", "gpu__time_duration.avg", "Duration")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
_DIMS = re.compile(r"^\(?\s*(\d+)\s*(?:,\s*(\d+)\s*)?(?:,\s*(\d+)\s*)?\)?$")


def _header_kind(fields) -> str | None:
    f = set(fields)
    if "Kernel Name" not in f:
        return None
    if {"Metric Name", "Metric Value"} <= f:
        return "details"
    if "ID" in f:
        return "raw"
    return None


def parse(text: str, source: str = "ncu.csv") -> ImportResult:
    """Every raw-page and details-page table of an ncu --csv log (module docstring)."""
    result = ImportResult("ncu", source)
    result.records = list(stream(split_lines(text), source, result))
    return result


def stream(lines: Iterable[str], source: str, result: ImportResult) -> Iterator[Measurement]:
    """The records of an ncu --csv log given line by line, yielded as they are read: a raw
    page's launches row by row, a details page's launches when their rows are done, so that
    a few launches' rows are held at a time, never the file (memory does not grow with it).
    ``result`` counts the noise lines as it goes.

    A details page's launch is the rows of one ID and kernel name. ncu writes them together;
    rows of a launch may also come between those of the next :data:`HELD_LAUNCHES` - 1
    launches (a file edited or merged by hand) and are still one record, and records come in
    the order of their launches' first rows, as when the file was read whole. Rows of a launch
    whose record was already given (more launches than that began after it) make a record of
    their own. A bad row raises its FormatError when it is reached, a launch's duration
    (its unit, > 0) when its record is made."""
    src = LineSource(lines)
    while (line := src.next()) is not None:
        s = line.strip()
        if s[:1] != '"':
            result.noise_lines += 1
            continue
        k = src.number
        fields = csv_fields(s, source, k)
        kind = _header_kind(fields)
        if kind == "raw":
            yield from _raw_block(src, k, fields, result)
        elif kind == "details":
            yield from _details_block(src, k, fields, result)
        else:
            shown = ", ".join(fields[:6]) + (", ..." if len(fields) > 6 else "")
            raise FormatError(f"{where(source, k)}: a CSV header Nsight Compute does not write "
                              f"({shown}); expected \"ID\",\"Process ID\",...,\"Kernel Name\" with "
                              f"metric columns (--page raw) or Metric Name/Unit/Value (--page details)")


def _value(text: str, source, row, column):
    """A metric cell as a float (thousands separators removed); None for n/a or a string."""
    t = text.strip()
    if _THOUSANDS.match(t):
        t = t.replace(",", "")
    parsed = split_number(t)
    if parsed is None:
        return None
    if parsed[1]:
        raise FormatError(f"{where(source, row, column)}: {text!r} carries its own unit; Nsight "
                          f"Compute writes the unit in the unit row or Metric Unit column, so "
                          f"mixed units are refused")
    return parsed[0]


_PLAIN_START = frozenset("0123456789.+-")
_isfinite = math.isfinite


def _plain(text: str) -> float | None:
    """A stripped metric cell that is a plain decimal number, with thousands separators or
    not (the common cases), as :func:`_value` reads it, without its expressions; None for any
    other cell (then read by :func:`_value`, which says what is wrong)."""
    if text[0] in _PLAIN_START and "_" not in text:
        if "," in text:
            if not _THOUSANDS.match(text):
                return None
            text = text.replace(",", "")
        try:
            v = float(text)
        except ValueError:
            return None
        if _isfinite(v):
            return v
    return None


class _Table:
    """The rows of one table after ``src``'s current line, read by one CSV reader
    (:attr:`reader`: the fields of each row, not stripped; ``src.number`` is the row's line
    number as it is given). The table ends at a line that does not start with a quote (left
    in ``src`` by :meth:`close`) or at another table's header (:meth:`ends`, pushed back)."""

    def __init__(self, src: LineSource, hrow: int, header, source: str):
        self.src, self.hrow, self.width, self.source = src, hrow, len(header), source
        self.ended: list[str] = []
        self.last = ""   # the line given last, stripped
        self.reader = csv.reader(self._lines(), strict=True)

    def _lines(self) -> Iterator[str]:
        src, source, ended = self.src, self.source, self.ended
        for line in src.pending():
            s = line.strip()
            if s[:1] != '"':
                ended.append(line)
                return
            if s.count('"') & 1:   # (an open quote: the error of the line read alone)
                csv_fields(s, source, src.number)
            self.last = s
            yield s
        number = src.number
        for line in src.lines:
            number += 1
            src.number = number
            s = line.strip()
            if s[:1] != '"':
                ended.append(line)
                return
            if s.count('"') & 1:
                csv_fields(s, source, number)
            self.last = s
            yield s

    def rows(self) -> Iterator[list[str]]:
        """The fields of each row (:attr:`reader`'s) until the table ends."""
        width = self.width
        try:
            for fields in self.reader:
                if (len(fields) != width or "Kernel Name" in self.last) and self.ends(fields):
                    break
                yield fields
        except csv.Error as exc:
            raise self.error(exc) from None
        self.close()

    def ends(self, fields: list[str]) -> bool:
        """For a row of another width or one naming a Kernel Name: True when it is another
        table's header (the table ends there), else FormatError for another width."""
        if "Kernel Name" in self.last and _header_kind([f.strip() for f in fields]):
            self.ended.append(self.last)   # (read again by the caller)
            return True
        if len(fields) != self.width:
            raise FormatError(f"{where(self.source, self.src.number)}: {len(fields)} fields for "
                              f"the {self.width} columns of the header at row {self.hrow} (is "
                              f"the file truncated?)")
        return False

    def error(self, exc: csv.Error) -> FormatError:
        return FormatError(f"{where(self.source, self.src.number)}: not a valid CSV line "
                           f"({exc})")

    def close(self) -> None:
        if self.ended:
            self.src.push_back(self.ended[0])


class _Units(dict):
    """Nsight Compute unit word -> (factor, normalised unit), each worked out once."""

    def __missing__(self, unit: str):
        found = self[unit] = ncu_unit(unit)
        return found


def _raw_block(src: LineSource, hrow: int, header, result) -> Iterator[Measurement]:
    source = result.source
    line = src.next()
    if line is None or not line.strip():
        raise FormatError(f"{where(source, hrow + 1)}: the raw-page header has no unit row under "
                          f"it (is the file truncated?); units are never guessed")
    units = csv_fields(line.strip(), source, hrow + 1)
    if len(units) != len(header) or (units and units[0] not in ("", "ID")) \
            or any(u and split_number(u) is not None for u in units):
        raise FormatError(f"{where(source, hrow + 1)}: expected the unit row of the raw page under "
                          f"the header (empty for ID, Kernel Name..., then byte, usecond...); "
                          f"units are never guessed")
    index = {name: k for k, name in enumerate(header)}   # (a repeated name: its last column)
    columns = [(name, k, *ncu_unit(units[k])) for name, k in index.items() if name not in META]
    launch = [(name, index[name]) for name in _LAUNCH_CELLS if name in index]
    for fields in _Table(src, hrow, header, source).rows():
        yield _raw_row(fields, columns, launch, source, src.number)


def _raw_row(fields: list[str], columns, launch, source: str, j: int) -> Measurement:
    """The record of raw-page row ``j``: every metric column with its unit's factor."""
    metrics, attrs = {}, {}
    for name, k, factor, norm in columns:
        text = fields[k].strip()
        if not text:
            continue
        v = _plain(text)
        if v is None:
            v = _value(text, source, j, name)
        if v is None:
            attrs[name] = text
            continue
        metrics[name] = (v * factor, norm)
    cells = {name: fields[k].strip() for name, k in launch}
    return _record(cells, metrics, attrs, source, j, {})


#: launches of a details page held at once: a launch's record is made when this many
#: launches began after it (ncu writes a launch's rows together; the others are held in
#: case rows of a launch were moved by hand, docs/measurements.md)
HELD_LAUNCHES = 64
#: the launch's own cells a record reads
_LAUNCH_CELLS = ("Kernel Name", "Grid Size", "Block Size", "Device", "CC")


def _details_block(src: LineSource, hrow: int, header, result) -> Iterator[Measurement]:
    source = result.source
    index = {name: k for k, name in enumerate(header)}   # (a repeated name: its last column)
    i_id, i_kernel = index.get("ID"), index["Kernel Name"]
    i_name, i_value, i_unit = index["Metric Name"], index["Metric Value"], index.get("Metric Unit")
    launch = [(name, index[name]) for name in _LAUNCH_CELLS if name in index]
    units = _Units()
    held: dict = {}   # (ID, kernel name) -> [cells, metrics, attrs, source, row, rows]
    i_key = i_kernel if i_id is None else i_id
    last_key = last_kernel = None   # (the cells of the row before, as read)
    metrics: dict = {}
    attrs: dict = {}
    rows: dict = {}
    for fields in _Table(src, hrow, header, source).rows():
        j = src.number
        if fields[i_key] != last_key or fields[i_kernel] != last_kernel:
            last_key, last_kernel = fields[i_key], fields[i_kernel]
            this = (fields[i_id].strip() if i_id is not None else "", last_kernel.strip())
            entry = held.get(this)
            if entry is None:
                if len(held) >= HELD_LAUNCHES:   # the launch begun first is done
                    yield _record(*held.pop(next(iter(held))))
                entry = held[this] = [{name: fields[k].strip() for name, k in launch}, {},
                                      {}, source, j, {}]
            _cells, metrics, attrs, _source, _row, rows = entry
        text = fields[i_value].strip()
        if not text:
            continue
        name = fields[i_name].strip()
        v = _plain(text)
        if v is None:
            v = _value(text, source, j, "Metric Value")
            if v is None:
                attrs[name] = text
                continue
        factor, norm = units[fields[i_unit] if i_unit is not None else ""]
        metrics[name] = (v * factor, norm)
        rows[name] = j
    for entry in held.values():
        yield _record(*entry)


def _dims(text):
    """``(4096, 1, 1)`` of a Grid Size or Block Size cell, or None (each text read once:
    a kernel's launches repeat it)."""
    found = _DIMS_READ.get(text, _DIMS_READ)
    if found is _DIMS_READ:
        m = _DIMS.match(text.strip()) if text else None
        found = None if not m else tuple(int(g) for g in m.groups() if g is not None)
        if len(_DIMS_READ) >= 4096:
            _DIMS_READ.clear()
        _DIMS_READ[text] = found
    return found


#: launch cell texts read by _dims -> their dimensions (bounded)
_DIMS_READ: dict = {}


def _record(cells, metrics, attrs, source, row, rows) -> Measurement:
    """The kernel record of one launch: its launch cells (``cells``), numeric metrics and
    text metrics (``attrs``); ``rows`` gives a details page's metric rows for messages."""
    time_s = None
    for name in TIME_METRICS:
        if name in metrics:
            value, unit = metrics[name]
            if unit != "s":
                raise FormatError(f"{where(source, rows.get(name, row), _col(rows, name))}: "
                                  f"{name} "
                                  f"needs a time unit (nsecond, usecond, msecond, second), "
                                  f"got {unit!r}")
            if value > 0 and value - value == 0:   # (> 0 and finite: positive's common case)
                time_s = value
            else:
                time_s = positive(value, source, rows.get(name, row), _col(rows, name),
                                  f"{name} (a duration)", f"{value:g} s")
            break
    grid = _dims(cells.get("Grid Size", ""))
    if grid is None:
        grid = _size_metric(metrics, "launch__grid_size", "Grid Size")
    block = _dims(cells.get("Block Size", ""))
    if block is None:
        block = _size_metric(metrics, "launch__block_size", "Block Size")
    regs = None
    for n in ("launch__registers_per_thread", "Registers Per Thread"):
        if n in metrics:
            regs = int(round(metrics[n][0]))
            break
    smem = None
    for names in _SHARED_MEMORY:
        for n in names:
            if n in metrics:
                smem = (smem or 0) + metrics[n][0]
                break
    device = cells.get("Device", "")
    gpu = attrs.get("device__attribute_display_name") or (
        device if device and not device.isdigit() else (f"device {device}" if device else ""))
    cc = cells.get("CC", "")
    if not cc and "device__attribute_compute_capability_major" in metrics:
        cc = (f"{int(metrics['device__attribute_compute_capability_major'][0])}."
              f"{int(metrics.get('device__attribute_compute_capability_minor', (0, ''))[0])}")
    values = dict(FIELD_DEFAULTS)
    values.update(time_s=time_s, name=cells["Kernel Name"], gpu=gpu, grid=grid, block=block,
                  registers_per_thread=regs,
                  shared_mem_bytes=None if smem is None else int(round(smem)),
                  metrics=metrics, source=source, row=row, compute_capability=cc)
    return from_fields(values)   # (the dataclass's record, a third of the cost)


#: the metrics of static and of dynamic shared memory per block (launch__*: raw page)
_SHARED_MEMORY = (("launch__shared_mem_per_block_static", "Static Shared Memory Per Block"),
                  ("launch__shared_mem_per_block_dynamic", "Dynamic Shared Memory Per Block"))


def _size_metric(metrics, *names):
    """(the first of the metrics ``names`` there is, rounded,) or None."""
    for n in names:
        if n in metrics:
            return (int(round(metrics[n][0])),)
    return None


def _col(rows, name):
    """Details rows name the Metric Value column; raw rows the metric's own column."""
    return "Metric Value" if name in rows else name
