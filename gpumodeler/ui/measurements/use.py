"""What the import dialog does with kernel records, without Qt: fit λ of a project
launch's kernel (core/measurements/launch_lambda.py, as ``calibrate kernel --project``)
and store it, and turn timed launches into measured points of a launch."""
from __future__ import annotations

import hashlib
import math
from datetime import datetime, timezone
from pathlib import Path

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.measurements.launch_lambda import (fit_launches, kernel_report,
                                                        launch_estimator)
from gpumodeler.core.project import Measurement


def short_name(name: str) -> str:
    """A kernel's name without its parameter list: 'saxpy2(float*, float)' -> 'saxpy2'
    (the name ``calibrate kernel --kernel`` takes and calibrations are stored under)."""
    return name.split("(", 1)[0].strip() or name


def kernels_of(records) -> list[tuple[str, str]]:
    """(name, gpu) of every kernel with timed launches, in file order."""
    seen: dict[tuple[str, str], None] = {}
    for r in records:
        if r.kind == "kernel" and r.time_s is not None:
            seen.setdefault((r.name, r.gpu), None)
    return list(seen)


def timed_launches(records, name: str, gpu: str) -> list:
    return [r for r in records if r.kind == "kernel" and r.time_s is not None
            and r.name == name and r.gpu == gpu]


def launch_gpu_name(project, launch_id: str) -> str:
    launch = project.launches[launch_id]
    device = project.devices.get(launch.gpu) if launch.gpu else None
    if device is None:
        raise InvalidParameter(f"launch {launch.name!r} has no GPU; choose one in the launch panel")
    return device.device_name


def launch_match(project, launch_id: str, name: str, gpu: str, gpu_aliases=()):
    """How the file's launches of kernel ``name`` on ``gpu`` fit the project launch: a
    :class:`~gpumodeler.core.measurements.matching.LaunchMatch` (the launch's GPU by its
    database name and ``gpu_aliases``, its kernel by the kernel's name)."""
    from gpumodeler.core.measurements.matching import match_launch
    launch = project.launches[launch_id]
    device = project.devices.get(launch.gpu) if launch.gpu else None
    graph = project.kernels.get(launch.kernel) if launch.kernel else None
    kernel = (getattr(graph, "name", None) or launch.kernel or "") if launch.kernel else ""
    return match_launch(gpu, name, device.device_name if device is not None else "", kernel,
                        gpu_aliases)


def fit_lambda(project, launch_id: str, launches, kernel: str, *, gpu_lookup, link_lookup,
               table_lookup=None) -> dict:
    """The ``calibrate kernel`` report of ``launches`` predicted with the project's launch."""
    gpu_name = launch_gpu_name(project, launch_id)
    estimate, missing = launch_estimator(project, launch_id, gpu_lookup=gpu_lookup,
                                         link_lookup=link_lookup, table_lookup=table_lookup)
    fitted = fit_launches(launches, estimate)
    notes = []
    if missing:
        notes.append(f"{len(missing)} launch(es) without registers per thread (first: "
                     f"{missing[0]}) used the launch's {project.launches[launch_id].registers}")
    return kernel_report(kernel, gpu_name, "relative", fitted, notes)


def save_lambda(catalog, report: dict, label: str, path) -> object:
    """Store the fit as the current kernel calibration (kernel, label) of its GPU."""
    from gpumodeler.db.calibrations import Calibration, save_calibration
    path = Path(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    cal = Calibration(report["gpu"], "kernel", report["kernel"], label, report["parameters"],
                      tuple(report["residuals"]), report["mape_percent"], report["loo_mape"],
                      report["loo_median_ape"], path.name, digest,
                      datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                      note=report["warning"])
    return save_calibration(catalog, cal)


def measured_points(launches, launch_id: str, taken) -> list[Measurement]:
    """One kernel Measurement of ``launch_id`` per timed launch with a grid and block:
    ``data_size`` = its thread count (grid × block, as ``calibrate kernel`` takes N) and
    ``block_size`` = threads per block, so sweeps over either show it; ids ``m<k>`` not in
    ``taken``."""
    out, taken, k = [], set(taken), 1
    for r in launches:
        if not r.grid or not r.block:
            raise InvalidParameter(f"{r.source} row {r.row}: the launch has no grid/block size, "
                                   "so it cannot be placed on a sweep")
        while f"m{k}" in taken:
            k += 1
        taken.add(f"m{k}")
        block = math.prod(r.block)
        out.append(Measurement(f"m{k}", launch_id, "kernel",
                               {"data_size": math.prod(r.grid) * block, "block_size": block},
                               float(r.time_s), source=f"{r.source} row {r.row}"))
    return out
