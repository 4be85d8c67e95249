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

import csv
from collections import Counter
from dataclasses import dataclass, field

from gpumodeler.core.errors import FormatError
from gpumodeler.core.physical import describe, first_non_finite, is_finite
from gpumodeler.core.measurements.records import Measurement

FORMATS = ("nvprof", "ncu", "timings")


@dataclass(frozen=True)
class Disagreement:
    """A row whose own numbers contradict each other (size vs duration × throughput)."""

    row: int
    column: str
    message: str


@dataclass
class ImportResult:
    format: str
    source: str
    records: list = field(default_factory=list)
    noise_lines: int = 0
    other_rows: int = 0  # rows of kinds gpumodeler does not model (memset, summaries...)
    disagreements: list = field(default_factory=list)
    devices: list = field(default_factory=list)  # GPUs the file describes (JSON objects)
    cut_names: int = 0  # kernel names the profiler cut short with "..."

    def counts(self) -> dict:
        """Records per kind, e.g. {"kernel": 3, "transfer": 8}."""
        return dict(Counter(r.kind for r in self.records))

    def summary(self) -> dict:
        return {"format": self.format, "source": self.source, "records": self.counts(),
                "noise_lines_skipped": self.noise_lines, "other_rows_skipped": self.other_rows,
                "unit_disagreements": [{"row": d.row, "column": d.column, "message": d.message}
                                       for d in self.disagreements],
                **({"devices": self.devices} if self.devices else {})}


def where(source: str, row: int, column: str | None = None) -> str:
    """``file.csv row 12, column Duration`` for messages."""
    return f"{source} row {row}" + (f", column {column}" if column else "")


def csv_fields(line: str, source: str, row: int) -> list[str]:
    """The fields of one CSV line (quoted commas allowed)."""
    try:
        rows = list(csv.reader([line], strict=True))
    except csv.Error as exc:
        raise FormatError(f"{where(source, row)}: not a valid CSV line ({exc})") from None
    return [f.strip() for f in rows[0]] if rows else []


def table_rows(lines, start: int, end: int, source: str):
    """(line index, stripped fields) of ``lines[start:end]`` read as one CSV table (one
    reader for the block: much faster than a reader per line on long traces)."""
    reader = csv.reader(lines[start:end], strict=True)
    k = start
    try:
        for fields in reader:
            yield k, [f.strip() for f in fields]
            k += 1
    except csv.Error as exc:
        raise FormatError(f"{where(source, k + 1)}: not a valid CSV line ({exc})") from None


def split_lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.splitlines()


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
    from gpumodeler.core.measurements.timings import looks_like_timings
    if looks_like_timings(head):
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


def import_text(text: str, source: str = "file", fmt: str | None = None) -> ImportResult:
    """Parse ``text`` (the file's content; ``source`` names it in messages)."""
    if fmt is None:
        fmt = detect_format(text, source)
    if fmt == "nvprof":
        from gpumodeler.core.measurements.nvprof import parse
    elif fmt == "ncu":
        from gpumodeler.core.measurements.ncu import parse
    elif fmt == "timings":
        from gpumodeler.core.measurements.timings import parse
    else:
        raise FormatError(f"unknown measurement format {fmt!r}; valid: {', '.join(FORMATS)}")
    result = parse(text, source)
    for record in result.records:  # a size or a time beyond a float is no measurement
        found = first_non_finite(record.to_json())
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


def positive(value: float, source: str, row: int, column: str, what: str, shown: str) -> float:
    """``value`` if it is a finite number > 0, else a FormatError naming the row and column."""
    if not value > 0:
        raise FormatError(f"{where(source, row, column)}: {what} must be > 0, got {shown}")
    if not is_finite(value):
        raise FormatError(f"{where(source, row, column)}: {what} of {shown} (in the file's "
                          f"unit) is beyond about 1.8e308 in SI units, not a finite number; "
                          f"give a finite value")
    return value


__all__ = ["Disagreement", "FORMATS", "ImportResult", "Measurement", "detect_format",
           "import_text"]
