"""The Nsight Compute reader as it was before it streamed, kept as the reference the
streaming reader (gpumodeler.core.measurements.ncu.stream) is compared with: the whole
file's lines in a list, each table's rows read before any record is made, and a details
page's rows grouped by (ID, kernel name) over the whole table. The row and cell readers it
shares with the streaming reader (_value, _record) are the module's own.

One change from the reader as it was: a raw-page row of the wrong width named the unit row
as "the header" (its row number was one too high); it names the header's own row, as the
details page always did."""
from __future__ import annotations

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.importer import check_finite
from gpumodeler.core.measurements.ncu import META, _header_kind, _record, _value
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
