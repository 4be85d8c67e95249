"""Read a measurement file of any supported format into :class:`Measurement` records.

:func:`import_text` detects the format when it is not given (nvprof, Nsight Compute or the
gpumodeler timings CSV, from their header lines and profiler prefixes) and dispatches to
:mod:`nvprof`, :mod:`ncu` or :mod:`timings`. Every parser returns an :class:`ImportResult`
with the records, the count of skipped noise lines (profiler messages, blank lines,
comments, summary tables), rows of kinds gpumodeler does not model (memsets...) and the
rows whose size, duration and throughput disagree. Bad input raises
:class:`~gpumodeler.core.errors.FormatError` naming the file, the row and the column.
"""
from __future__ import annotations

import math

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements import ncu, nvprof, timings
from gpumodeler.core.measurements.parsing import (  # noqa: F401  (re-exported)
    Disagreement, ImportResult, csv_fields, positive, split_lines, table_rows, where)
from gpumodeler.core.measurements.records import Measurement
from gpumodeler.core.physical import describe

FORMATS = ("nvprof", "ncu", "timings")


def _looks_nvprof(lines) -> bool:
    for line in lines:
        s = line.strip()
        if s.startswith("==") and not s.startswith("==PROF=="):
            return True
        if s.startswith('"Start","Duration"') or '"Metric Name","Metric Description"' in s \
                or '"Event Name"' in s or s.startswith('"Type","Time(%)"'):
            return True
    return False


def _looks_ncu(lines) -> bool:
    for line in lines:
        s = line.strip()
        if s.startswith("==PROF=="):
            return True
        if s.startswith('"ID","Process ID"') or ('"Kernel Name"' in s and '"Metric Value"' in s):
            return True
    return False


def detect_format(text: str, source: str = "file") -> str:
    """'nvprof', 'ncu' or 'timings' from the file's header lines; FormatError otherwise."""
    lines = split_lines(text)
    head = lines[:400]
    if _looks_ncu(head):
        return "ncu"
    if _looks_nvprof(head):
        return "nvprof"
    if timings.looks_like_timings(head):
        return "timings"
    first = next((i for i, l in enumerate(lines) if l.strip()), None)
    if first is None:
        raise FormatError(f"{source} is empty; expected an nvprof, Nsight Compute or "
                          f"gpumodeler timings CSV (see docs/measurements.md)")
    shown = lines[first].strip()
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise FormatError(
        f"{source} row {first + 1}: cannot tell the format from {shown!r}; expected nvprof "
        f"--csv output (a \"Start\",\"Duration\" or \"Metric Name\" header, ==PID== lines), "
        f"Nsight Compute --csv output (\"ID\",\"Process ID\" header) or a timings CSV with "
        f"kind and time columns; give --format nvprof|ncu|timings if it is one of them")


_NUMBERS = ("time_s", "size_bytes", "start_s", "end_s")


def record_non_finite(record: Measurement):
    """(name, value) of the first number of ``record`` that is not finite, or None: the
    numbers a file's value times its unit can overflow (durations, sizes, times, metric
    values; grids, registers and ids are whole numbers), checked without building the
    record's JSON."""
    for name in _NUMBERS:
        value = getattr(record, name)
        if value is not None and not math.isfinite(value):
            return name, value
    for name, (value, _unit) in record.metrics.items():
        if isinstance(value, float) and not math.isfinite(value):
            return f"metrics.{name}.value", value
    return None


def import_text(text: str, source: str = "file", fmt: str | None = None) -> ImportResult:
    """Parse ``text`` (the file's content; ``source`` names it in messages)."""
    if fmt is None:
        fmt = detect_format(text, source)
    parsers = {"nvprof": nvprof.parse, "ncu": ncu.parse, "timings": timings.parse}
    if fmt not in parsers:
        raise FormatError(f"unknown measurement format {fmt!r}; valid: {', '.join(FORMATS)}")
    result = parsers[fmt](text, source)
    for record in result.records:  # a size or a time beyond a float is no measurement
        found = record_non_finite(record)
        if found:
            name, value = found
            raise FormatError(f"{where(source, record.row)}: {name} is not a finite number "
                              f"({describe(value)}: the value times its unit is beyond about "
                              f"1.8e308); give the measured value in a unit that keeps it finite")
    if not result.records:
        raise FormatError(
            f"{source}: no rows of a known kind (read as {fmt}: {result.noise_lines} noise "
            f"line(s), {result.other_rows} row(s) of other kinds); expected kernel launches or "
            f"[CUDA memcpy HtoD/DtoH/DtoD/PtoP] copies, or kernel metrics")
    return result


__all__ = ["Disagreement", "FORMATS", "ImportResult", "Measurement", "detect_format",
           "import_text"]
