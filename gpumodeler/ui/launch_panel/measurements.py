"""Measured times of a launch: read from CSV, gathered for the swept variable, set against
the sweep's prediction. Plain functions (no Qt); the sweep panel pushes and shows them.

CSV columns: the swept variable (or an alias: ``N`` for ``data_size``...), ``measured_s``
(seconds) and optionally ``what`` = ``kernel`` | ``total`` (default kernel).
"""
from __future__ import annotations

import csv

import numpy as np

from gpumodeler.core.launch_sweep import relative_errors
from gpumodeler.core.project import Measurement

from .fields import FieldError, parse_float

MEASURED_COLUMN = "measured_s"
ALIASES = {"data_size": ("data_size", "N"), "block_size": ("block_size", "block"),
           "occupancy": ("occupancy", "warps_per_sm")}


class MeasurementsRefused(ValueError):
    """A file that cannot be imported; the message says why, naming the file."""


def _keys(variable: str) -> tuple[str, ...]:
    return ALIASES.get(variable, (variable,))


def measured_points(project, launch_id: str, variable: str):
    """(x, time_s, what) arrays of the launch's measurements of ``variable``."""
    xs, ts, whats = [], [], []
    for m in project.measurements.values():
        if m.launch != launch_id or m.what not in ("kernel", "total"):
            continue
        key = next((k for k in _keys(variable) if k in m.parameters), None)
        if key is None:
            continue
        xs.append(float(m.parameters[key]))
        ts.append(float(m.time_s))
        whats.append(m.what)
    return np.array(xs), np.array(ts), np.array(whats, dtype=object)


def read_csv(path, name: str) -> tuple[list[dict], list[str]]:
    """(rows, column names) of a CSV file with a header and at least one row."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise MeasurementsRefused(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    if not rows:
        raise MeasurementsRefused(f"{name} has no data rows (expected a header and one row per measurement)")
    return rows, [c.strip() for c in rows[0].keys() if c]


def column_for(columns, variable: str, others) -> tuple[str, str | None]:
    """(variable, column): the file's column of ``variable``, else of the first of the
    ``others`` (sweepable variables) it has; column None when it has none of them."""
    for v in [variable] + [o for o in others if o and o != "gpu"]:
        column = next((k for k in _keys(v) if k in columns), None)
        if column is not None:
            return v, column
    return variable, None


def measurements_from_rows(rows, columns, column: str | None, variable: str, launch_id: str,
                           taken, name: str) -> list[Measurement]:
    """One Measurement of ``launch_id`` per row, with ids ``m<k>`` not in ``taken``."""
    if column is None or MEASURED_COLUMN not in columns:
        missing = [c for c in ((None if column else variable), MEASURED_COLUMN if MEASURED_COLUMN
                               not in columns else None) if c]
        raise MeasurementsRefused(
            f"{name}: missing column(s) {', '.join(missing)}; the file needs the swept variable "
            f"({variable}) and {MEASURED_COLUMN} (seconds); it has: {', '.join(columns)}")
    out, next_n, taken = [], 1, set(taken)
    for line, row in enumerate(rows, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        try:
            x = parse_float(row.get(column, ""), f"line {line}: {column}")
            t = parse_float(row.get(MEASURED_COLUMN, ""), f"line {line}: {MEASURED_COLUMN}", 0.0,
                            strict_minimum=True)
        except FieldError as exc:
            raise MeasurementsRefused(f"{name}: {exc}") from None
        what = row.get("what") or "kernel"
        if what not in ("kernel", "total"):
            raise MeasurementsRefused(f"{name}: line {line}: what must be kernel or total, got {what!r}")
        while f"m{next_n}" in taken:
            next_n += 1
        mid = f"m{next_n}"
        taken.add(mid)
        out.append(Measurement(mid, launch_id, what, {variable: x}, t, source=name))
    return out


def compare(curve, measured):
    """The measured points (x, time_s, what) against a sweep's prediction ``curve``:
    ((x, measured_s, predicted_s, relative_error, what) for the plot, a note for the user)."""
    mx, mt, mw = measured
    predicted = np.where(mw == "total", curve.measured_total_s, curve.measured_kernel_s)
    err = relative_errors(predicted, mt)
    finite = np.isfinite(err)
    note = ""
    if finite.any():
        note = (f"{mx.size} measured point(s) vs {curve.label}: mean absolute error "
                f"{np.mean(np.abs(err[finite])) * 100:.1f} %, largest "
                f"{np.max(np.abs(err[finite])) * 100:.1f} % (hover a point for its error)")
    return (mx, mt, predicted, err, mw), note
