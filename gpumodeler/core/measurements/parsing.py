"""What the measurement parsers (:mod:`~gpumodeler.core.measurements.nvprof`,
:mod:`~gpumodeler.core.measurements.ncu`, :mod:`~gpumodeler.core.measurements.timings`) share:
the result shape (:class:`ImportResult`, :class:`Disagreement`), CSV line and table reading,
and the row-and-column messages of bad values. The dispatcher
(:mod:`~gpumodeler.core.measurements.importer`) imports the parsers; the parsers import only
this module, never the dispatcher.
"""
from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field

from gpumodeler.core.errors import FormatError
from gpumodeler.core.physical import is_finite


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


def positive(value: float, source: str, row: int, column: str, what: str, shown: str) -> float:
    """``value`` if it is a finite number > 0, else a FormatError naming the row and column."""
    if not value > 0:
        raise FormatError(f"{where(source, row, column)}: {what} must be > 0, got {shown}")
    if not is_finite(value):
        raise FormatError(f"{where(source, row, column)}: {what} of {shown} (in the file's "
                          f"unit) is beyond about 1.8e308 in SI units, not a finite number; "
                          f"give a finite value")
    return value
