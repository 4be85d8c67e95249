"""nvprof GPU-trace rows read one at a time: the reference reader of a row (each cell checked, any
error given with its row and column) and the tables of nvprof's words and units it uses.

The chunk reader (:mod:`nvprof_chunks`) reads the common rows faster and hands any other row
to :func:`trace_row`; a test compares the two on every sample row and on edited ones. The
file's layout (tables, unit rows, noise) is read by :mod:`nvprof`."""
import math
import re

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.parsing import Disagreement, positive, where, whole_number
from gpumodeler.core.measurements.records import Measurement
from gpumodeler.core.measurements.units import (
    NVPROF_RATE, NVPROF_SIZE, NVPROF_TIME, printed_half_unit, rounding_error, split_number,
    valid, whole_bytes)

COPY_DIRECTIONS = {"HtoD": "htod", "DtoH": "dtoh", "DtoD": "dtod", "PtoP": "ptop"}
MEMORY_KINDS = {"pageable": "pageable", "pinned": "pinned", "device": "device",
                "managed": "managed"}
COPY_NAME = re.compile(r"^\[CUDA memcpy (\w+)\]$")
KNOWN_TRACE = {"Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y",
               "Block Z", "Registers Per Thread", "Static SMem", "Dynamic SMem", "Size",
               "Throughput", "SrcMemType", "DstMemType", "Device", "Context", "Stream",
               "Name", "Correlation_ID", "Src Dev", "Src Ctx", "Dst Dev", "Dst Ctx"}
UNIT_TABLES = {"Duration": NVPROF_TIME, "Start": NVPROF_TIME, "Size": NVPROF_SIZE,
               "Static SMem": NVPROF_SIZE, "Dynamic SMem": NVPROF_SIZE,
               "Throughput": NVPROF_RATE}
ALL_UNITS = set(NVPROF_TIME) | set(NVPROF_SIZE) | set(NVPROF_RATE) | {"%"}
TOLERANCE = 0.01  # relative, on top of the printed values' rounding


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
    v = whole_number(text)
    if v is None:
        raise FormatError(f"{where(source, row, name)}: {text!r} is not a whole number")
    if (isinstance(v, float) and not v.is_integer()) or \
            v < (0 if "Registers" in name or "SMem" in name else 1):
        raise FormatError(f"{where(source, row, name)}: {text!r} is not a valid {name.lower()}")
    return int(v)


def trace_row(cells, unit, col, source, row, result):
    name = cells["Name"]
    m = COPY_NAME.match(name)
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
            check_rate(cells["Size"], cells["Duration"], cells["Throughput"], exact, time_s, thr,
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
            metric = extra_metric(text, unit.get(name, ""))
            if metric is not None:
                out[name] = metric
    return out


def extra_metric(text: str, u: str):
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


def check_rate(size_text, time_text, thr_text, size, time_s, thr, source, row, result):
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
