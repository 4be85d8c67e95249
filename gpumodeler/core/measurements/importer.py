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

from collections.abc import Iterable, Iterator
from itertools import chain, islice

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements import ncu, nvprof, timings
from gpumodeler.core.measurements.nvprof_chunks import Formatter
from gpumodeler.core.measurements.parsing import (  # noqa: F401  (re-exported)
    Disagreement, ImportResult, check_finite, csv_fields, positive, record_non_finite,
    split_lines, table_rows, text_lines, where)
from gpumodeler.core.measurements.records import Measurement

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
    return _detect(lines[:DETECT_LINES], iter(lines[DETECT_LINES:]), source)


def _detect(head: list[str], rest: Iterator[str], source: str) -> str:
    """The format from the first lines ``head``; ``rest`` (the lines after them) is read
    only to name the first non-blank line of a file whose format is not told."""
    if _looks_ncu(head):
        return "ncu"
    if _looks_nvprof(head):
        return "nvprof"
    if timings.looks_like_timings(head):
        return "timings"
    first, shown = next(((i, l.strip()) for i, l in enumerate(chain(head, rest)) if l.strip()),
                        (None, ""))
    if first is None:
        raise FormatError(f"{source} is empty; expected an nvprof, Nsight Compute or "
                          f"gpumodeler timings CSV (see docs/measurements.md)")
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise FormatError(
        f"{source} row {first + 1}: cannot tell the format from {shown!r}; expected nvprof "
        f"--csv output (a \"Start\",\"Duration\" or \"Metric Name\" header, ==PID== lines), "
        f"Nsight Compute --csv output (\"ID\",\"Process ID\" header) or a timings CSV with "
        f"kind and time columns; give --format nvprof|ncu|timings if it is one of them")


def import_text(text: str, source: str = "file", fmt: str | None = None) -> ImportResult:
    """Parse ``text`` (the file's content; ``source`` names it in messages)."""
    result, records = stream_lines(split_lines(text), source, fmt)
    result.records = list(records)
    return result


#: lines read ahead to tell a file's format (the whole file when it is shorter)
DETECT_LINES = 400


def stream_lines(lines: Iterable[str], source: str = "file", fmt: str | None = None,
                 formatter: Formatter | None = None) -> tuple[ImportResult, Iterator]:
    """``(result, records)`` of a measurement file given line by line (as
    :func:`~gpumodeler.core.measurements.parsing.text_lines` gives a file read a block at a
    time): ``records`` yields the records as the lines are read, so neither the file nor its
    records are ever held whole; ``result`` (its ``records`` left empty) counts noise lines,
    other rows and disagreements as they go, and is complete once ``records`` is exhausted.

    The format is told from the first :data:`DETECT_LINES` lines before this returns (a
    FormatError then); a bad row raises FormatError when ``records`` reaches it, and a file
    without a record of a known kind when it ends. An Nsight Compute details page is held
    one launch's rows at a time (:func:`~gpumodeler.core.measurements.ncu.stream`).
    ``formatter``: :func:`~gpumodeler.core.measurements.nvprof.stream`'s (nvprof only)."""
    it = iter(lines)
    head = list(islice(it, DETECT_LINES))
    if head and head[0].startswith("\ufeff"):
        head[0] = head[0][1:]
    if fmt is None:
        fmt = _detect(head, it, source)
    if fmt not in FORMATS:
        raise FormatError(f"unknown measurement format {fmt!r}; valid: {', '.join(FORMATS)}")
    all_lines = chain(head, it)
    result = ImportResult(fmt, source)
    if fmt == "ncu":
        records = (check_finite(r, source) for r in ncu.stream(all_lines, source, result))
        return result, _counted(records, result, fmt)
    if fmt == "nvprof":
        return result, _counted(nvprof.stream(all_lines, source, result, formatter), result,
                                fmt)
    return result, _counted(timings.stream(all_lines, source, result), result, fmt)


def _counted(records: Iterator[Measurement], result: ImportResult,
             fmt: str) -> Iterator[Measurement]:
    """``records``, then a FormatError if there was none (the records after the first
    passed on by ``yield from``: this is on every record's path)."""
    for record in records:
        yield record
        yield from records
        return
    raise FormatError(
        f"{result.source}: no rows of a known kind (read as {fmt}: {result.noise_lines} "
        f"noise line(s), {result.other_rows} row(s) of other kinds); expected kernel "
        f"launches or [CUDA memcpy HtoD/DtoH/DtoD/PtoP] copies, or kernel metrics")


__all__ = ["Disagreement", "FORMATS", "ImportResult", "Measurement", "detect_format",
           "import_text", "stream_lines", "text_lines"]
