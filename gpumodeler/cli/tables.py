"""Tables written in chunks as CSV, JSON or JSON Lines (``sweep``, ``project sweep``).

A table is written column-chunk by column-chunk, so a sweep of 10^7 points never holds more
than one chunk of rows: :class:`TableWriter` takes ``{name: 1-D array}`` chunks with the
same columns and writes them as they come. Cells are formatted a column at a time (C-level
``repr``/``str`` over the column's Python values, each distinct string cell formatted once)
and rows are assembled with one ``str.join`` or ``%`` per row; numpy's own ``astype(str)``
gives the same digits but was measured slower.

Formats (the bytes are those the one-shot writer produced before, which the tests check):

``csv``
    a header row and one row per point (``csv`` module quoting); floats as Python's
    shortest round-trip ``repr``, NaN as an empty cell.
``json``
    one JSON array of row objects, as ``json.dump(rows, indent=1)`` writes it; NaN as
    ``null``.
``jsonl``
    JSON Lines: one row object per line (``json.dumps(row)``), NaN as ``null``; rows can be
    read one at a time, so it suits very large sweeps.

An output file is written to a temporary file next to it and renamed over it when the table
is complete, so an error part-way leaves any previous file as it was; the temporary files
of runs that were killed are removed by the next write of the same file, and an output
that is one of the command's inputs is refused (``output_file`` of
:mod:`gpumodeler.db.atomic_files`). ``-`` (or no file) writes to standard output.
"""
from __future__ import annotations

import csv
import io
import json
import math
import sys

import numpy as np


FORMATS = ("csv", "json", "jsonl")
CHUNK_ROWS = 16_384


def _csv_cell(v) -> str:
    """The one-shot writer's cell text (before csv quoting)."""
    if isinstance(v, (float, np.floating)):
        return "" if math.isnan(v) else repr(float(v))
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v)


def _csv_quoted(texts) -> list:
    """Cell texts quoted as csv.writer quotes them (it decides, one call for all)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    out = []
    for t in texts:
        w.writerow([t, ""])  # two fields: a lone empty field would be written as ""
        out.append(buf.getvalue()[:-2])
        buf.seek(0)
        buf.truncate()
    return out


def distinct_texts(values: np.ndarray, fmt) -> list:
    """``list(map(fmt, values.tolist()))`` for a 1-D numeric array, formatting each distinct
    value once when values repeat (a sweep's axes, derived counts, launch limits)."""
    if values.size < 64:
        return list(map(fmt, values.tolist()))
    if values.dtype.kind == "f" and np.any((values == 0) & np.signbit(values)):
        return list(map(fmt, values.tolist()))  # unique() would merge -0.0 into 0.0
    uniq, inverse = np.unique(values, return_inverse=True)
    if uniq.size * 2 > values.size:
        return list(map(fmt, values.tolist()))
    texts = np.array(list(map(fmt, uniq.tolist())), dtype=object)
    return texts[inverse.ravel()].tolist()


def _json_value(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v.item() if hasattr(v, "item") else v


_SCALARS = (str, int, float, bool, type(None))


def _format_column(values: np.ndarray, fmt: str) -> list:
    """The text of each cell of one column chunk."""
    kind = values.dtype.kind
    if kind == "f":
        nums = values.astype(float, copy=False)
        out = distinct_texts(nums, repr)
        if fmt == "csv":  # repr gives inf and -inf as the one-shot writer did; NaN is empty
            special = (("", np.isnan(nums)),)
        else:
            special = (("null", np.isnan(nums)), ("Infinity", nums == np.inf),
                       ("-Infinity", nums == -np.inf))
        for text, where in special:
            for i in np.flatnonzero(where).tolist():
                out[i] = text
        return out
    if kind in "iu":
        return distinct_texts(values, str)
    if kind == "b" and fmt != "csv":
        return ["true" if v else "false" for v in values.tolist()]
    # strings, objects, booleans in CSV: format each distinct value once
    items = values.tolist() if kind != "O" else list(values)
    try:
        distinct = list(dict.fromkeys(items))
        if len({type(v) for v in distinct}) > 1:  # 1, 1.0 and True are one dict key
            distinct = None
    except TypeError:  # unhashable cells
        distinct = None
    keys = distinct if distinct is not None else items
    if fmt == "csv":
        texts = _csv_quoted([_csv_cell(v) for v in keys])
    else:
        texts = []
        for v in keys:
            j = _json_value(v)
            if not isinstance(j, _SCALARS):
                raise _NotScalar
            texts.append(json.dumps(j))
    if distinct is None:
        return texts
    cache = dict(zip(distinct, texts))
    return [cache[v] for v in items]


class _NotScalar(Exception):
    """A cell that is a container: written by the json module itself."""


class TableWriter:
    """Write a table chunk by chunk; use as a context manager (the file is complete and in
    place when the block ends without an error)."""

    def __init__(self, output: str | None, fmt: str = "csv", stdout=None, inputs=()):
        if fmt not in FORMATS:
            raise ValueError(f"table format must be one of {', '.join(FORMATS)}, got {fmt!r}")
        self.output = None if output in (None, "", "-") else output
        self.fmt = fmt
        self._stdout = stdout
        self._inputs = inputs  # files the command reads: never the output
        self._fh = None
        self._file = None  # the output file's context (db.atomic_files.output_file)
        self._names = None
        self._rows = 0

    # -- output --------------------------------------------------------------------------
    def __enter__(self) -> "TableWriter":
        if self.output is None:
            self._fh = self._stdout or sys.stdout
            return self
        from gpumodeler.db.atomic_files import output_file  # (a file only)
        file = output_file(self.output, inputs=self._inputs, newline="")
        self._fh = file.__enter__()
        self._file = file
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._file is None:
            if exc_type is None:
                self._finish()
            return None
        if exc_type is None:
            try:
                self._finish()
            except BaseException as error:
                if not self._file.__exit__(type(error), error, error.__traceback__):
                    raise
                return None
        return self._file.__exit__(exc_type, exc, tb)

    # -- rows ----------------------------------------------------------------------------
    def write(self, columns: dict) -> None:
        """Append rows: ``columns`` maps each column name (the same names, in the same order,
        every time) to a 1-D array; all arrays have the same length."""
        names = list(columns)
        if self._names is None:
            self._names = names
            self._start()
        elif names != self._names:
            raise ValueError("every chunk of a table must have the same columns")
        n = len(columns[names[0]]) if names else 0
        for lo in range(0, n, CHUNK_ROWS):
            hi = min(n, lo + CHUNK_ROWS)
            self._write_rows({k: np.asarray(v)[lo:hi] for k, v in columns.items()})

    def _start(self) -> None:
        if self.fmt == "csv":
            if len(self._names) > 1:
                self._fh.write(",".join(_csv_quoted(self._names)) + "\n")
            else:
                csv.writer(self._fh, lineterminator="\n").writerow(self._names)
            return
        keys = [json.dumps(n).replace("%", "%%") for n in self._names]
        if self.fmt == "json":
            self._template = " {\n" + ",\n".join(f"  {k}: %s" for k in keys) + "\n }"
        else:
            self._template = "{" + ", ".join(f"{k}: %s" for k in keys) + "}"

    def _write_rows(self, chunk: dict) -> None:
        n = len(chunk[self._names[0]])
        if not n:
            return
        if self.fmt == "csv" and len(self._names) == 1:
            w = csv.writer(self._fh, lineterminator="\n")
            w.writerows([_csv_cell(v)] for v in chunk[self._names[0]])
            self._rows += n
            return
        try:
            cols = [_format_column(chunk[k], self.fmt) for k in self._names]
        except _NotScalar:
            self._write_rows_slowly(chunk)
            return
        if self.fmt == "csv":
            self._fh.write("\n".join(map(",".join, zip(*cols))) + "\n")
        else:
            template = self._template
            rows = [template % row for row in zip(*cols)]
            if self.fmt == "json":
                self._fh.write(("[\n" if not self._rows else ",\n") + ",\n".join(rows))
            else:
                self._fh.write("\n".join(rows) + "\n")
        self._rows += n

    def _write_rows_slowly(self, chunk: dict) -> None:
        n = len(chunk[self._names[0]])
        rows = [{k: _json_value(chunk[k][i]) for k in self._names} for i in range(n)]
        if self.fmt == "json":
            for row in rows:
                text = json.dumps([row], indent=1)[2:-2]  # " {...}" without the brackets
                self._fh.write(("[\n" if not self._rows else ",\n") + text)
                self._rows += 1
        else:
            for row in rows:
                self._fh.write(json.dumps(row) + "\n")
            self._rows += n

    def _finish(self) -> None:
        if self._names is None:  # no chunk at all: an empty table without columns
            self._names = []
            if self.fmt == "csv":
                self._fh.write("\n")
        if self.fmt == "json":
            self._fh.write("\n]\n" if self._rows else "[]\n")


def write_table(table: dict, output: str | None, fmt: str = "csv", inputs=()) -> None:
    """Columns (name -> equal-length arrays) in one call."""
    with TableWriter(output, fmt, inputs=inputs) as writer:
        writer.write(table)
