"""Measurement records from JSON (the shape :meth:`Measurement.to_json` writes, e.g. the
output of ``gpumodeler measure import --json``), and one entry point that reads a file of
any supported kind: JSON here, nvprof / Nsight Compute / timings CSV through the importer
(importer.import_text).
"""
from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

from gpumodeler.core.errors import FormatError

from .records import DIRECTIONS, KINDS, Measurement

#: The most bytes read from a measurement file: more is no measurement file (a device such
#: as /dev/zero would otherwise be read until the memory is full).
MAX_FILE_BYTES = 512 * 2**20


def _number(item, key, where, *, integer=False, required=False):
    v = item.get(key)
    if v is None:
        if required:
            raise FormatError(f"{where}: '{key}' is missing (a number is required)")
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise FormatError(f"{where}: '{key}' must be a finite number, got {v!r}")
    if integer:
        if float(v) != int(v):
            raise FormatError(f"{where}: '{key}' must be a whole number, got {v!r}")
        return int(v)
    return float(v)


def _triple(item, key, where):
    v = item.get(key)
    if v is None:
        return None
    if (not isinstance(v, list) or not 1 <= len(v) <= 3
            or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)):
        raise FormatError(f"{where}: '{key}' must be a list of 1-3 whole numbers > 0, got {v!r}")
    return tuple(v) + (1,) * (3 - len(v))


def measurement_from_json(item, where: str) -> Measurement:
    """One record; FormatError naming ``where`` and the key for anything malformed."""
    if not isinstance(item, dict):
        raise FormatError(f"{where}: expected an object, got {type(item).__name__}")
    kind = item.get("kind")
    if kind not in KINDS:
        raise FormatError(f"{where}: 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    direction = item.get("direction") or ""
    if direction and direction not in DIRECTIONS:
        raise FormatError(f"{where}: 'direction' must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    metrics = {}
    raw = item.get("metrics") or {}
    if not isinstance(raw, dict):
        raise FormatError(f"{where}: 'metrics' must be an object of name: {{value, unit}}")
    for name, m in raw.items():
        if not isinstance(m, dict) or "value" not in m:
            raise FormatError(f"{where}: metric {name!r} must be {{\"value\": ..., \"unit\": ...}}")
        metrics[name] = (m["value"], str(m.get("unit") or "1"))
    time_s = _number(item, "time_s", where)      # None: a record of metrics only
    row = item.get("row")
    return Measurement(
        kind=kind, time_s=time_s, name=str(item.get("name") or ""), direction=direction,
        gpu=str(item.get("gpu") or ""), grid=_triple(item, "grid", where),
        block=_triple(item, "block", where),
        registers_per_thread=_number(item, "registers_per_thread", where, integer=True),
        shared_mem_bytes=_number(item, "shared_mem_bytes", where, integer=True),
        size_bytes=_number(item, "size_bytes", where),
        memory_kind=str(item.get("memory_kind") or ""), metrics=metrics,
        source=str(item.get("source") or ""),
        row=row if isinstance(row, int) and not isinstance(row, bool) else None,
        stream=_number(item, "stream", where, integer=True),
        device=_number(item, "device", where, integer=True),
        start_s=_number(item, "start_s", where), end_s=_number(item, "end_s", where))


def measurements_from_json(data, source: str) -> list[Measurement]:
    if isinstance(data, dict) and isinstance(data.get("records"), list):
        data = data["records"]
    if not isinstance(data, list):
        raise FormatError(f"{source}: expected a JSON list of measurement records")
    out = []
    for i, item in enumerate(data, 1):
        m = measurement_from_json(item, f"{source} record {i}")
        if not m.source:
            m = replace(m, source=source, row=i)
        out.append(m)
    return out


def read_measurements(path: str | Path) -> list[Measurement]:
    """Records from ``path``: a JSON list of records, or any format the measurement
    importer reads (nvprof, Nsight Compute, timings CSV; format detected). FormatError
    with a one-line reason otherwise."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:  # at most the largest input a command reads whole
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FormatError(f"{path}: is a folder, not a measurement file") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot read it ({exc.strerror})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise FormatError(f"{path}: more than {MAX_FILE_BYTES >> 20} MiB: not a measurement "
                          f"file (a device such as /dev/zero, or a file given by mistake)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FormatError(f"{path}: not a text file (expected JSON records or a profiler CSV)") from None
    if text.lstrip().startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        return measurements_from_json(data, path.name)
    if "\x00" in text:
        raise FormatError(f"{path}: not a text file (expected JSON records or a profiler CSV)")
    from .importer import import_text
    return list(import_text(text, path.name).records)
