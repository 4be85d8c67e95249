"""Validation sets: measured runs of real kernels, read from CSV, and the models' errors on them.

A validation set (format: docs/validation.md) lists measured runs: the kernel (a kernel
graph, a SASS listing, a cubin or a ``.cu``), the GPU, the launch, the loop variables, the measured time or throughput and the
document it comes from. This module reads the CSV text into :class:`Run` records (a bad
cell raises :class:`~gpumodeler.core.errors.FormatError` naming the file, line and
column and what is valid), turns a measured throughput into a time from the kernel's own
work (:func:`measured_time_s`) and summarises absolute percentage errors per kernel family
and per GPU (:func:`summarise`).

The error of a prediction T_k against a measurement T_m is the absolute percentage error
|T_k − T_m| / T_m · 100, the per-point term of the MAPE Amarís (2018, eq. 4.7) reports.
"""
from __future__ import annotations

import csv
import io
import math
import re
import statistics
from dataclasses import dataclass, field

from gpumodeler.core.errors import FormatError

#: Columns every row needs, and the optional ones.
REQUIRED = ("kernel", "device", "block", "measured", "unit", "family", "source")
OPTIONAL = ("grid", "data_size", "registers", "shared_bytes", "occupancy", "sm_clock_mhz", "set",
            "function", "arch", "note")
#: Time units and their factor to seconds.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
#: Throughput units: what of the kernel's own work they count (docs/validation.md).
THROUGHPUT_UNITS = ("GB/s", "ops/cycle/scheduler", "IPC/SM", "CPI")
UNITS = tuple(TIME_UNITS) + THROUGHPUT_UNITS


@dataclass(frozen=True)
class Run:
    """One measured run (one CSV row); ``line`` is its line in the file."""

    line: int
    kernel: str
    device: str
    block: int | tuple[int, ...]
    measured: float
    unit: str
    family: str
    source: str
    grid: int | tuple[int, ...] | None = None
    data_size: int | None = None
    registers: int | None = None
    shared_bytes: int = 0
    occupancy: float | None = None
    sm_clock_mhz: float | None = None
    values: dict = field(default_factory=dict)
    function: str | None = None
    arch: str | None = None
    note: str = ""


def _number(text: str, where: str, what: str, *, integer: bool = False, positive: bool = True):
    try:
        value = float(text)
    except ValueError:
        raise FormatError(f"{where}: {text!r} is not a number; valid: {what}") from None
    if not math.isfinite(value) or (value <= 0 if positive else value < 0):
        raise FormatError(f"{where}: {text!r} is out of range; valid: {what}")
    if integer:
        if value != int(value):
            raise FormatError(f"{where}: {text!r} is not a whole number; valid: {what}")
        return int(value)
    return value


_DIM_SPLIT = re.compile("[xX×]")


def _dims(text: str, where: str, what: str):
    """A size of 1 to 3 whole numbers > 0: ``256`` -> 256, ``16x16`` -> (16, 16)."""
    parts = _DIM_SPLIT.split(text)
    if len(parts) > 3:
        raise FormatError(f"{where}: {text!r} has {len(parts)} dimensions; valid: {what}")
    dims = tuple(_number(p.strip(), where, what, integer=True) for p in parts)
    return dims[0] if len(dims) == 1 else dims


def threads(size) -> int:
    """Threads (or blocks) in a size given as 256 or (16, 16)."""
    return int(math.prod(size)) if isinstance(size, tuple) else int(size)


def parse_set(text: str, where: str) -> dict:
    """``a=128;b=4`` -> {'a': 128.0, 'b': 4.0} (the loop variables of a row)."""
    values = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        name, eq, value = part.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise FormatError(f"{where}: {part!r} is not NAME=VALUE; valid: a=128;b=4")
        values[name] = _number(value.strip(), where, "a number for each variable, e.g. a=128",
                               positive=False)
    return values


def parse_csv(text: str, name: str = "<csv>") -> list:
    """The runs of a validation CSV (header row first; ``#`` lines are comments)."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise FormatError(f"{name}:{line}: a NUL byte; valid: a CSV text file")
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1)
             if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise FormatError(f"{name}: no header row; valid: a CSV with the columns "
                          f"{', '.join(REQUIRED)} (docs/validation.md)")
    numbers = [i for i, _ in lines]
    reader = csv.reader(io.StringIO("\n".join(ln for _, ln in lines)), strict=True)
    try:
        records = [(numbers[min(reader.line_num, len(numbers)) - 1], cells) for cells in reader]
    except csv.Error as exc:
        line = numbers[min(reader.line_num, len(numbers)) - 1]
        raise FormatError(f"{name}:{line}: not CSV ({exc}); valid: comma-separated cells, "
                          f"a cell with commas in double quotes") from None
    header = [h.strip() for h in records[0][1]]
    known = set(REQUIRED) | set(OPTIONAL)
    unknown = [h for h in header if h not in known]
    if unknown:
        raise FormatError(f"{name}:{numbers[0]}: unknown column {unknown[0]!r}; valid: "
                          f"{', '.join(REQUIRED + OPTIONAL)}")
    missing = [h for h in REQUIRED if h not in header]
    if missing:
        raise FormatError(f"{name}:{numbers[0]}: missing column {missing[0]!r}; required: "
                          f"{', '.join(REQUIRED)}")
    if len(set(header)) != len(header):
        raise FormatError(f"{name}:{numbers[0]}: a column is named twice")
    runs = []
    for line, cells in records[1:]:
        if len(cells) != len(header):
            raise FormatError(f"{name}:{line}: {len(cells)} cells, the header has {len(header)}")
        runs.append(_run(dict(zip(header, (c.strip() for c in cells))), name, line))
    if not runs:
        raise FormatError(f"{name}: no rows after the header")
    return runs


def _run(row: dict, name: str, line: int) -> Run:
    def at(col):
        return f"{name}:{line}: column {col}"
    for col in REQUIRED:
        if not row[col]:
            raise FormatError(f"{at(col)}: empty; every row needs {', '.join(REQUIRED)}")
    unit = row["unit"]
    if unit not in UNITS:
        raise FormatError(f"{at('unit')}: {unit!r}; valid: {', '.join(UNITS)}")
    grid, data = row.get("grid", ""), row.get("data_size", "")
    if bool(grid) == bool(data):
        raise FormatError(f"{name}:{line}: give one of grid (blocks) or data_size (threads), not "
                          f"{'both' if grid else 'neither'}")
    if row.get("occupancy") and row.get("registers"):
        raise FormatError(f"{name}:{line}: give occupancy (warps per SM) or registers (occupancy "
                          f"from the calculator), not both")
    if not row.get("occupancy") and not row.get("registers"):
        raise FormatError(f"{name}:{line}: give occupancy (warps per SM) or registers (and "
                          f"shared_bytes)")

    def opt(col, **kw):
        return _number(row[col], at(col), kw.pop("what"), **kw) if row.get(col) else None
    return Run(
        line=line, kernel=row["kernel"], device=row["device"],
        block=_dims(row["block"], at("block"), "threads per block, a whole number > 0, or a "
                    "2-D or 3-D block shape like 16x16"),
        measured=_number(row["measured"], at("measured"), "a number > 0"),
        unit=unit, family=row["family"], source=row["source"],
        grid=(_dims(row["grid"], at("grid"), "blocks, a whole number > 0, or a 2-D or 3-D grid "
                    "like 64x64") if row.get("grid") else None),
        data_size=opt("data_size", what="threads, a whole number > 0", integer=True),
        registers=opt("registers", what="registers per thread, a whole number > 0", integer=True),
        shared_bytes=opt("shared_bytes", what="bytes per block, a whole number >= 0", integer=True,
                         positive=False) or 0,
        occupancy=opt("occupancy", what="warps per SM > 0"),
        sm_clock_mhz=opt("sm_clock_mhz", what="MHz > 0"),
        values=parse_set(row.get("set", ""), at("set")),
        function=row.get("function") or None, arch=row.get("arch") or None,
        note=row.get("note", ""))


def measured_time_s(run: Run, *, warps: float, gmem_bytes_per_warp: float,
                    instructions_per_warp: float, warp_size: int, schedulers: float, sms: float,
                    clock_hz: float) -> float:
    """The measured time of ``run`` in seconds.

    A time is converted from its unit. A throughput is turned into the time the kernel's
    own work takes at that rate: ``GB/s`` counts the kernel's global-memory bytes
    (bytes per warp × warps, Volkov 2016 §6.3 counts the bytes the loads move);
    ``ops/cycle/scheduler`` counts thread operations of the kernel's instructions, a
    replayed one (bank conflict, divergent access) counted once (Volkov 2016 Table 6.1:
    1 instruction = 32 ops), over all schedulers of all SMs at the SM clock; ``IPC/SM``
    counts the same instructions per cycle per SM, and ``CPI`` is its inverse, cycles per
    instruction per SM (Volkov 2016 §2.11 and §7.1 use both)."""
    if run.unit in TIME_UNITS:
        return run.measured * TIME_UNITS[run.unit]
    if run.unit == "GB/s":
        total = gmem_bytes_per_warp * warps
        if not total > 0:
            raise FormatError(f"line {run.line}: a throughput in GB/s needs a kernel that moves "
                              f"global-memory bytes; this one moves none")
        return total / (run.measured * 1e9)
    instructions = instructions_per_warp * warps
    if run.unit == "CPI":
        return instructions * run.measured / (sms * clock_hz)
    if run.unit == "IPC/SM":
        return instructions / (run.measured * sms * clock_hz)
    return instructions * warp_size / (run.measured * schedulers * sms * clock_hz)


def ape_percent(predicted_s: float, measured_s: float) -> float:
    """Absolute percentage error of a prediction (the term of Amarís 2018 eq. 4.7)."""
    return abs(predicted_s - measured_s) / measured_s * 100.0


def summarise(records: list, by: str) -> list:
    """Median and mean APE per (``by`` value, model) over ``records``.

    ``records`` are dicts with ``family``, ``gpu`` and ``errors`` ({model: APE % or
    None when the model could not run}); ``by`` is ``"family"`` or ``"gpu"``. Each
    entry: {family, gpu, model, median_ape_percent, mape_percent, n}, the key not grouped
    by being None; a model without a value on any row of a group is left out of that group."""
    if by not in ("family", "gpu"):
        raise ValueError(f"summarise by 'family' or 'gpu', not {by!r}")
    other = "gpu" if by == "family" else "family"
    groups: dict = {}
    for r in records:
        for model, ape in r["errors"].items():
            if ape is not None:
                groups.setdefault((r[by], model), []).append(ape)
    return [{by: key, other: None, "model": model, "median_ape_percent": statistics.median(v),
             "mape_percent": statistics.fmean(v), "n": len(v)}
            for (key, model), v in groups.items()]


def same_error(a: float, b: float) -> bool:
    """Whether two APEs (%) agree to nine significant digits: two models that reduce to the
    same formula on a row sum in another order and differ in the last bits only."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def below(a: float, b: float) -> bool:
    """Whether APE ``a`` ranks below ``b``: lower, and not the same error (:func:`same_error`)."""
    return a < b and not same_error(a, b)


def compare(records: list, model: str, baseline: str) -> list:
    """Per kernel family, ``model``'s median APE against ``baseline``'s on the same rows
    (those where both could run): {family, model, baseline, median_ape_percent,
    baseline_median_ape_percent, n, below, equal}, ``below`` True when the model's median
    is lower, ``equal`` when the two agree to nine significant digits (:func:`same_error`:
    the default model and the roofline reduce to one formula on a DRAM-bound kernel and
    differ in the last bits of their sums, which is no ranking)."""
    pairs: dict = {}
    for r in records:
        a, b = r["errors"].get(model), r["errors"].get(baseline)
        if a is not None and b is not None:
            pairs.setdefault(r["family"], []).append((a, b))
    out = []
    for family, v in pairs.items():
        m = statistics.median(a for a, _ in v)
        base = statistics.median(b for _, b in v)
        equal = same_error(m, base)
        out.append({"family": family, "model": model, "baseline": baseline,
                    "median_ape_percent": m, "baseline_median_ape_percent": base,
                    "n": len(v), "below": below(m, base), "equal": equal})
    return out
