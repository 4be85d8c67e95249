"""What the measurement parsers (:mod:`~gpumodeler.core.measurements.nvprof`,
:mod:`~gpumodeler.core.measurements.ncu`, :mod:`~gpumodeler.core.measurements.timings`) share:
the result shape (:class:`ImportResult`, :class:`Disagreement`), CSV line and table reading,
and the row-and-column messages of bad values. The dispatcher
(:mod:`~gpumodeler.core.measurements.importer`) imports the parsers; the parsers import only
this module, never the dispatcher.
"""
from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain

from gpumodeler.core.errors import FormatError
from gpumodeler.core.physical import describe, is_finite


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


#: the characters ``str.splitlines`` ends a line at
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def text_lines(chunks: Iterable[str]) -> Iterator[str]:
    """The lines of a text given in pieces (a file read a block at a time), exactly as
    ``str.splitlines`` of the whole text gives them: a line split across two pieces is one
    line, and so is a ``\r`` ending one piece and the ``\n`` starting the next."""
    return chain.from_iterable(_line_lists(chunks))


#: the characters ``str.strip`` strips (every one is below U+3001)
SPACES = frozenset(c for c in map(chr, range(0x3001)) if c.isspace())


def _line_lists(chunks: Iterable[str]) -> Iterator[list[str]]:
    """:func:`text_lines` a list of lines per piece."""
    carry = ""
    for chunk in chunks:
        text = carry + chunk if carry else chunk
        if not text:
            continue
        lines = text.splitlines()
        end = text[-1]
        if end == "\r":
            carry = lines.pop() + "\r"
        elif end in LINE_BREAKS:
            carry = ""
        else:
            carry = lines.pop()
        yield lines
    if carry:
        yield carry.splitlines()


class LineSource:
    """A text's lines one at a time, ``number`` the 1-based number of the last one given;
    a line read ahead can be pushed back (the parsers read a table until the line that ends
    it, which the caller then reads again)."""

    __slots__ = ("lines", "_back", "number")

    def __init__(self, lines: Iterable[str]):
        self.lines = iter(lines)   # (the lines after those pushed back)
        self._back: list[str] = []
        self.number = 0

    def next(self) -> str | None:
        """The next line, or None at the end."""
        if self._back:
            self.number += 1
            return self._back.pop()
        line = next(self.lines, None)
        if line is not None:
            self.number += 1
        return line

    def push_back(self, line: str) -> None:
        self._back.append(line)
        self.number -= 1

    def pending(self) -> Iterator[str]:
        """The lines pushed back, each counted as it is taken; ``lines`` then gives the
        rest (counted by its reader: a table's rows are read straight from it)."""
        while self._back:
            self.number += 1
            yield self._back.pop()

    def __iter__(self) -> Iterator[str]:
        yield from self.pending()
        for line in self.lines:
            self.number += 1
            yield line


_NUMBERS = ("time_s", "size_bytes", "start_s", "end_s")


def record_non_finite(record):
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


def check_finite(record, source: str):
    """``record`` if every number of it is finite, else a FormatError naming its row (a size
    or a time beyond a float is no measurement)."""
    found = record_non_finite(record)
    if found:
        name, value = found
        raise FormatError(f"{where(source, record.row)}: {name} is not a finite number "
                          f"({describe(value)}: the value times its unit is beyond about "
                          f"1.8e308); give the measured value in a unit that keeps it finite")
    return record


def whole_number(text: str) -> int | float | None:
    """The number a cell meant to hold a whole number writes: an int when ``int()`` reads the
    text (exact at any length, as the fast row readers read a plain count: a float would round
    a count of more than 17 digits), else the float ``float()`` reads ("1e3", "64.0", "1.5",
    "inf": the caller checks it is whole), None when it is no number at all."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def scaled(text: str, factor: float | None) -> float | None:
    """``float(text) * factor`` for a plain decimal number (the fast row readers' common
    case), None when ``factor`` is unknown or the text is not one (digit separators ``_``,
    which float() takes and the reference readers refuse, or no number: the row is then left
    to the reference reader, which says what is wrong)."""
    if factor is None or "_" in text:
        return None
    try:
        return float(text) * factor
    except ValueError:
        return None


def scaled_positive(text: str, factor: float) -> float | None:
    """:func:`scaled` when the value is > 0 and finite (a duration, a size), else None."""
    if "_" in text:
        return None
    try:
        value = float(text) * factor
    except ValueError:
        return None
    return value if 0 < value < math.inf else None


class Remembered(dict):
    """Parsed values by their cells' text, remembered while that pays: a real trace repeats
    some (one kernel launched alike again and again, one buffer copied each iteration) and
    not others. Each miss is kept (:meth:`keep`); when :data:`size` are kept, the memory is
    cleared, and given up for good (:attr:`use` False: the caller then parses every row
    without looking) when it had fewer hits than misses since it was last cleared, so that a
    trace whose values all differ pays for at most ``size`` useless look-ups. The caller
    counts :attr:`hits`."""

    def __init__(self, size: int):
        super().__init__()
        self.size = size
        self.use = True
        self.hits = 0

    def keep(self, key, value) -> None:
        if len(self) >= self.size:
            self.use = self.hits >= len(self)
            self.hits = 0
            self.clear()
        if self.use:
            self[key] = value
