"""Learning rows from measurement files over the device catalog: what `gpumodeler learn` and
the GUI's Learn dialog both read (docs/learning.md), so they learn from the same rows."""
from __future__ import annotations

from pathlib import Path

from gpumodeler.core.errors import InvalidParameter, ModelError


def gpu_lookup(catalog, name: str):
    """The GPUSpec of a GPU as a profiler names it (``NVIDIA GeForce ...`` too), or None."""
    for candidate in (name, name[len("NVIDIA "):] if name.startswith("NVIDIA ") else None):
        if candidate:
            try:
                entry = catalog.get(candidate)
            except ModelError:
                continue
            if getattr(entry, "kind", "gpu") == "gpu":
                return entry.to_gpu_spec()
    return None


def read_records(path) -> list:
    """The measurement records of one file: JSON records, nvprof / Nsight Compute / timings
    CSV, or an Nsight Systems SQLite export (told by its header)."""
    from gpumodeler.core.measurements.from_json import read_measurements  # lazy: the importers
    from gpumodeler.db.nsys_export import is_sqlite, read_export
    if is_sqlite(path):
        return list(read_export(path).records)
    return list(read_measurements(Path(path)))


def rows_of_records(catalog, records):
    """(rows with the analytical models' predictions, notes); every GPU of the records must
    be in ``catalog`` (InvalidParameter naming the first that is not)."""
    from gpumodeler.core.learn.dataset import build_rows, gpu_names, with_analytical
    gpus = {}
    for name in gpu_names(records):
        spec = gpu_lookup(catalog, name) if name else None
        if spec is None:
            raise InvalidParameter(f"the measured GPU {name or '(unnamed)'!r} is not in the device "
                                   f"database; add it (gpumodeler devices) or name it as the "
                                   f"database does (gpumodeler devices list)")
        gpus[name] = spec
    rows, notes = build_rows(records, gpus)
    return with_analytical(rows), notes
