"""The Nsight Compute reader as it was before it streamed, kept as the reference the
streaming reader (gpumodeler.core.measurements.ncu.stream) is compared with: the whole
file's lines in a list, each table's rows read before any record is made, and a details
page's rows grouped by (ID, kernel name) over the whole table. The cell reader it shares
with the streaming reader (_value) is the module's own; _record and _dims are those before.

One change from the reader as it was: a raw-page row of the wrong width named the unit row
as "the header" (its row number was one too high); it names the header's own row, as the
details page always did."""
from __future__ import annotations

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.importer import check_finite
from gpumodeler.core.measurements.ncu import (
    _DIMS, META, TIME_METRICS, _col, _header_kind, _value)
from gpumodeler.core.measurements.parsing import positive
from gpumodeler.core.measurements.records import Measurement
from gpumodeler.core.measurements.parsing import ImportResult, csv_fields, split_lines, where
from gpumodeler.core.measurements.units import ncu_unit, split_number


def import_whole(text: str, source: str) -> ImportResult:
    """What import_text gave for an Nsight Compute file: the file parsed, then every record
    checked for numbers beyond a float."""
    result = parse(text, source)
    for record in result.records:
        check_finite(record, source)
    return result


def parse(text: str, source: str = "ncu.csv") -> ImportResult:
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


def _rows(lines, start, header, source, hrow):
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
                              f"columns of the header at row {hrow} (is the file truncated?)")
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
    rows, end = _rows(lines, i + 2, header, source, i + 1)
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
    rows_, end = _rows(lines, i + 1, header, source, i + 1)
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


def _dims(text):
    m = _DIMS.match(text.strip()) if text else None
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)
