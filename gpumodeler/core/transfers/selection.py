"""Which measured copies a link calibration uses: one direction, one memory kind, one GPU.

Pinned and pageable copies of the same size can differ by 2× on one host (calibration.md), so a
calibration never mixes memory kinds: the records are filtered by ``memory_kind``; records
whose memory kind the file does not say (``""``) are taken as the kind the user names.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpumodeler.core.errors import InvalidParameter

LINK_DIRECTIONS = ("htod", "dtoh")
MEMORY_KINDS = ("pageable", "pinned", "managed", "device")


def where(record) -> str:
    """'file.csv row 12' for messages (what the record knows of its origin)."""
    src = record.source or "measurements"
    return f"{src} row {record.row}" if record.row is not None else src


@dataclass(frozen=True)
class CopySelection:
    sizes_bytes: np.ndarray
    times_s: np.ndarray
    direction: str
    memory_kind: str        # the label the calibration is stored under ("" = not said)
    gpu: str
    records: tuple


def _one_of(values: set, what: str, flag: str, given):
    if given is not None:
        return given
    known = sorted(v for v in values if v)
    if len(known) > 1:
        raise InvalidParameter(f"the measurements hold copies of several {what}s "
                               f"({', '.join(known)}); choose one with {flag}")
    return known[0] if known else ""


def select_copies(records, *, direction: str | None = None, memory_kind: str | None = None,
                  gpu: str | None = None) -> CopySelection:
    """The copies of one direction (htod/dtoh), memory kind and GPU among ``records``
    (Measurement objects). Unspecified choices are taken from the records when they hold
    only one; several -> InvalidParameter asking to choose."""
    if direction is not None and direction not in LINK_DIRECTIONS:
        raise InvalidParameter(f"direction must be one of {', '.join(LINK_DIRECTIONS)}, got {direction!r}")
    if memory_kind is not None and not str(memory_kind).strip():
        raise InvalidParameter("memory kind must not be empty (e.g. pageable, pinned, or an application label)")
    records = list(records)
    copies = [r for r in records if r.kind == "transfer"]
    if not copies:
        kernels = sum(r.kind == "kernel" for r in records)
        raise InvalidParameter(f"no transfer records among {len(records)} measurement(s) "
                               f"({kernels} kernel launch(es)); a link calibration needs "
                               "host<->device copies")
    links = [r for r in copies if r.direction in LINK_DIRECTIONS]
    if not links:
        raise InvalidParameter("no host-to-device or device-to-host copies (only "
                               f"{', '.join(sorted({r.direction or '?' for r in copies}))})")
    direction = _one_of({r.direction for r in links}, "direction", "--direction htod|dtoh", direction)
    chosen = [r for r in links if r.direction == direction]
    if not chosen:
        raise InvalidParameter(f"no {direction} copies in the measurements (found "
                               f"{', '.join(sorted({r.direction for r in links}))})")
    gpu = _one_of({r.gpu for r in chosen}, "GPU", "--gpu NAME", gpu)
    if gpu:
        chosen = [r for r in chosen if r.gpu in (gpu, "")]
        if not chosen:
            raise InvalidParameter(f"no {direction} copies on GPU {gpu!r}")
    kinds = {r.memory_kind for r in chosen}
    if memory_kind is None:
        memory_kind = _one_of(kinds, "memory kind", "--memory-kind", None)
        if memory_kind and "" in kinds:
            raise InvalidParameter(f"some {direction} copies are {memory_kind} and some do not "
                                   "say their memory kind; choose with --memory-kind")
        chosen = [r for r in chosen if r.memory_kind in (memory_kind, "")]
    else:
        same = [r for r in chosen if r.memory_kind == memory_kind]
        # A file that does not say the memory kind: the user's label applies to all copies.
        chosen = same or [r for r in chosen if r.memory_kind == ""]
        if not chosen:
            raise InvalidParameter(f"no {memory_kind} {direction} copies (the file has "
                                   f"{', '.join(sorted(k or 'unlabelled' for k in kinds))})")
    sizes, times, uncertain = [], [], []
    for r in chosen:
        s, t = r.size_bytes, r.time_s
        if s is None or not isinstance(s, (int, float)) or not math.isfinite(s) or s < 0:
            raise InvalidParameter(f"{where(r)}: size_bytes must be a number of bytes >= 0, got {s!r}")
        if not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            raise InvalidParameter(f"{where(r)}: time_s must be a duration > 0 s, got {t!r}")
        sizes.append(float(s))
        times.append(float(t))
        u = (r.metrics or {}).get("size_uncertainty")
        uncertain.append(float(u[0]) if u else 0.0)
    return CopySelection(merge_sizes(np.asarray(sizes), np.asarray(uncertain)), np.asarray(times),
                         direction, memory_kind, gpu, tuple(chosen))


def merge_sizes(sizes_bytes, uncertainty_bytes=None) -> np.ndarray:
    """Sizes as whole bytes, with the prints of one size made one: a copy moves a whole
    number of bytes, and a profiler prints one size in several units (nvprof: 2.5 KB in one
    run, 2.441406e-03 MB in the next; 1.396984 GB is ± 537 B). Sizes are rounded to whole
    bytes; then sorted sizes whose uncertainty ranges (``uncertainty_bytes``, the printed
    digits' half unit beyond the byte) touch are one size, the one printed most precisely
    (the smallest uncertainty; among equals, the smallest size). Choice: a group is one
    chain of touching ranges, so no print is moved further than its own digits allow from
    a neighbour."""
    n = np.rint(np.asarray(sizes_bytes, dtype=float))
    u = np.zeros_like(n) if uncertainty_bytes is None else np.asarray(uncertainty_bytes, float)
    if n.size < 2 or not np.any(u > 0):
        return n
    order = np.argsort(n, kind="stable")
    ns, us = n[order], u[order]
    new_group = np.empty(ns.size, dtype=bool)
    new_group[0] = True
    new_group[1:] = (ns[1:] - ns[:-1]) > (us[1:] + us[:-1])
    group = np.cumsum(new_group) - 1
    # the representative of each group: its smallest uncertainty, then its smallest size
    key = np.lexsort((ns, us, group))
    first = np.ones(ns.size, dtype=bool)
    first[1:] = group[key][1:] != group[key][:-1]
    best = key[first]
    merged = np.empty_like(n)
    merged[order] = ns[best[group]]
    return merged
