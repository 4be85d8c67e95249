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

import re

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.parsing import (
    ImportResult, csv_fields, positive, split_lines, where)
from gpumodeler.core.measurements.records import Measurement
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
    lines = split_lines(text)
    result = ImportResult("ncu", source)
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if not s or s.startswith("==") or not s.startswith('"'):
            result.noise_lines += 1
            i += 1
            continue
        fields = csv_fields(s, source, i + 1)
        kind = _header_kind(fields)
        if kind == "raw":
            i = _raw_block(lines, i, fields, result)
        elif kind == "details":
            i = _details_block(lines, i, fields, result)
        else:
            shown = ", ".join(fields[:6]) + (", ..." if len(fields) > 6 else "")
            raise FormatError(f"{where(source, i + 1)}: a CSV header Nsight Compute does not write "
                              f"({shown}); expected \"ID\",\"Process ID\",...,\"Kernel Name\" with "
                              f"metric columns (--page raw) or Metric Name/Unit/Value (--page details)")
    return result


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


def _rows(lines, start, header, source):
    """([(line index, {column: cell})...], index of the first line after the table)."""
    out = []
    j = start
    while j < len(lines):
        s = lines[j].strip()
        if not s or s.startswith("==") or not s.startswith('"'):
            break
        fields = csv_fields(s, source, j + 1)
        if _header_kind(fields) is not None:
            break
        if len(fields) != len(header):
            raise FormatError(f"{where(source, j + 1)}: {len(fields)} fields for the {len(header)} "
                              f"columns of the header at row {start} (is the file truncated?)")
        out.append((j, dict(zip(header, fields))))
        j += 1
    return out, j


def _raw_block(lines, i, header, result) -> int:
    source = result.source
    if i + 1 >= len(lines) or not lines[i + 1].strip():
        raise FormatError(f"{where(source, i + 2)}: the raw-page header has no unit row under it "
                          f"(is the file truncated?); units are never guessed")
    units = csv_fields(lines[i + 1].strip(), source, i + 2)
    if len(units) != len(header) or (units and units[0] not in ("", "ID")) \
            or any(u and split_number(u) is not None for u in units):
        raise FormatError(f"{where(source, i + 2)}: expected the unit row of the raw page under "
                          f"the header (empty for ID, Kernel Name..., then byte, usecond...); "
                          f"units are never guessed")
    unit = dict(zip(header, units))
    rows, end = _rows(lines, i + 2, header, source)
    for j, cells in rows:
        metrics, attrs = {}, {}
        for name, text in cells.items():
            if name in META or not text:
                continue
            v = _value(text, source, j + 1, name)
            if v is None:
                attrs[name] = text
                continue
            factor, norm = ncu_unit(unit.get(name, ""))
            metrics[name] = (v * factor, norm)
        result.records.append(_record(cells, metrics, attrs, source, j + 1, {}))
    return end


def _details_block(lines, i, header, result) -> int:
    source = result.source
    launches: dict = {}
    rows_, end = _rows(lines, i + 1, header, source)
    for j, cells in rows_:
        key = (cells.get("ID", ""), cells["Kernel Name"])
        entry = launches.setdefault(key, [j + 1, cells, {}, {}, {}])
        name, text = cells["Metric Name"], cells["Metric Value"]
        if not text:
            continue
        v = _value(text, source, j + 1, "Metric Value")
        if v is None:
            entry[3][name] = text
            continue
        factor, norm = ncu_unit(cells.get("Metric Unit", ""))
        entry[2][name] = (v * factor, norm)
        entry[4][name] = j + 1
    for row, cells, metrics, attrs, rows in launches.values():
        result.records.append(_record(cells, metrics, attrs, source, row, rows))
    return end


def _dims(text):
    m = _DIMS.match(text.strip()) if text else None
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def _record(cells, metrics, attrs, source, row, rows) -> Measurement:
    time_s = None
    for name in TIME_METRICS:
        if name in metrics:
            value, unit = metrics[name]
            if unit != "s":
                raise FormatError(f"{where(source, rows.get(name, row), _col(rows, name))}: "
                                  f"{name} "
                                  f"needs a time unit (nsecond, usecond, msecond, second), "
                                  f"got {unit!r}")
            time_s = positive(value, source, rows.get(name, row), _col(rows, name),
                              f"{name} (a duration)", f"{value:g} s")
            break
    grid = _dims(cells.get("Grid Size", ""))
    block = _dims(cells.get("Block Size", ""))
    for key, names in (("grid", ("launch__grid_size", "Grid Size")),
                       ("block", ("launch__block_size", "Block Size"))):
        if (grid if key == "grid" else block) is None:
            for n in names:
                if n in metrics:
                    v = int(round(metrics[n][0]))
                    if key == "grid":
                        grid = (v,)
                    else:
                        block = (v,)
                    break
    regs = next((int(round(metrics[n][0])) for n in
                 ("launch__registers_per_thread", "Registers Per Thread") if n in metrics), None)
    smem = None
    for names in (("launch__shared_mem_per_block_static", "Static Shared Memory Per Block"),
                  ("launch__shared_mem_per_block_dynamic", "Dynamic Shared Memory Per Block")):
        metric = next((n for n in names if n in metrics), None)
        if metric is not None:
            smem = (smem or 0) + metrics[metric][0]
    device = cells.get("Device", "")
    gpu = attrs.get("device__attribute_display_name") or (
        device if device and not device.isdigit() else (f"device {device}" if device else ""))
    cc = cells.get("CC", "")
    if not cc and "device__attribute_compute_capability_major" in metrics:
        cc = (f"{int(metrics['device__attribute_compute_capability_major'][0])}."
              f"{int(metrics.get('device__attribute_compute_capability_minor', (0, ''))[0])}")
    return Measurement(kind="kernel", time_s=time_s, name=cells["Kernel Name"], gpu=gpu,
                       grid=grid, block=block, registers_per_thread=regs,
                       shared_mem_bytes=None if smem is None else int(round(smem)),
                       metrics=metrics, source=source, row=row, compute_capability=cc)


def _col(rows, name):
    """Details rows name the Metric Value column; raw rows the metric's own column."""
    return "Metric Value" if name in rows else name
