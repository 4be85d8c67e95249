"""Normalised measurement records: what every importer (nvprof, Nsight Compute, timing CSV)
produces and what calibration and profiled-kernel prediction consume.

Units are SI and explicit in the names (bytes, seconds, bytes per second). ``source`` and
``row`` say where a record came from, so any message about a record can name the file's row.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: ``migration``: a unified-memory page migration (Nsight Systems copy kinds 11 and 12),
#: kept apart from explicit copies: it is no cudaMemcpy, and link calibration must not fit it.
KINDS = ("kernel", "transfer", "migration")
DIRECTIONS = ("htod", "dtoh", "dtod", "ptop")


@dataclass(frozen=True)
class Measurement:
    """One measured kernel launch or copy.

    ``kind``: ``kernel`` or ``transfer``. ``direction`` (transfers): ``htod``, ``dtoh``,
    ``dtod`` or ``ptop``. ``name``: the kernel's name (demangled where the file gives it) or
    a copy's label. ``gpu``: the device name as the file gives it (may be empty).
    ``grid``/``block``: (x, y, z) for kernels. ``registers_per_thread`` and
    ``shared_mem_bytes`` (static + dynamic) for kernels. ``size_bytes`` for transfers.
    ``time_s``: the duration, or None for a record that carries only metrics (nvprof
    ``--metrics``/``--events`` tables have no durations: nvprof replays the kernel to count;
    consumers of times skip such records). ``memory_kind`` for transfers: ``pageable``, ``pinned``,
    ``managed``, ``device`` or ``""`` (unknown). ``metrics``: name -> (value, unit) with units
    as the file gives them after normalisation (``"1"`` dimensionless, ``"B"``, ``"B/s"``,
    ``"s"``, ``"%"``...). ``source``: file name; ``row``: 1-based line number in that file.
    ``compute_capability``: as the file gives it (Nsight Compute's CC column), else ``""``.
    ``stream``, ``device``: the CUDA stream and device ids where the file gives them (Nsight
    Systems exports), else None. ``start_s``/``end_s``: the timestamps in seconds on the
    file's own clock (Nsight Systems), else None.
    """

    kind: str
    time_s: float | None
    name: str = ""
    direction: str = ""
    gpu: str = ""
    grid: tuple | None = None
    block: tuple | None = None
    registers_per_thread: int | None = None
    shared_mem_bytes: int | None = None
    size_bytes: float | None = None
    memory_kind: str = ""
    metrics: dict = field(default_factory=dict)
    source: str = ""
    row: int | None = None
    compute_capability: str = ""
    stream: int | None = None
    device: int | None = None
    start_s: float | None = None
    end_s: float | None = None

    def to_json(self) -> dict:
        """A plain JSON object (tuples as lists, metrics as {name: {"value", "unit"}})."""
        return {
            "kind": self.kind, "direction": self.direction or None, "name": self.name,
            "gpu": self.gpu or None,
            "grid": list(self.grid) if self.grid else None,
            "block": list(self.block) if self.block else None,
            "registers_per_thread": self.registers_per_thread,
            "shared_mem_bytes": self.shared_mem_bytes,
            "size_bytes": self.size_bytes, "time_s": self.time_s,
            "memory_kind": self.memory_kind or None,
            "metrics": {k: {"value": v, "unit": u} for k, (v, u) in self.metrics.items()},
            "source": self.source, "row": self.row,
            "compute_capability": self.compute_capability or None,
            # (registers: the short name of registers_per_thread, same value)
            "registers": self.registers_per_thread,
            "stream": self.stream, "device": self.device,
            "start_s": self.start_s, "end_s": self.end_s,
        }


#: every field of :class:`Measurement` with its default (``metrics``: a fresh dict per record,
#: see :func:`from_fields`), in the dataclass's order
FIELD_DEFAULTS: dict = {"kind": "kernel", "time_s": None, "name": "", "direction": "",
                        "gpu": "", "grid": None, "block": None, "registers_per_thread": None,
                        "shared_mem_bytes": None, "size_bytes": None, "memory_kind": "",
                        "metrics": None, "source": "", "row": None, "compute_capability": "",
                        "stream": None, "device": None, "start_s": None, "end_s": None}

_new = object.__new__
_set_attribute = object.__setattr__


def from_fields(values: dict) -> Measurement:
    """The :class:`Measurement` whose fields are ``values`` (a dict with every key of
    :data:`FIELD_DEFAULTS`, ``metrics`` a dict of its own), taken as the record's attribute
    dict: the streaming readers build one per row from a per-table template, where the frozen
    dataclass's ``__init__`` sets its 19 fields one by one (three times the cost)."""
    record = _new(Measurement)
    _set_attribute(record, "__dict__", values)
    return record
