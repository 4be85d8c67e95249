"""Sweep of one launch variable, vectorised, on a snapshot (pure: the GUI runs it in a worker
thread, the CLI `gpumodeler project sweep` directly).

The snapshot is taken on the GUI thread (:func:`make_snapshot`): the launch, a copy of its
kernel graph with the graph analysed once, resolved GPU and link specs (the catalog is a
database connection that stays on the GUI thread) and the transfers as parsed expressions.
:func:`run_sweep` then evaluates the same model as
:func:`gpumodeler.core.pipeline.evaluate_launch`, with the swept variable as a numpy array:
one :func:`gpumodeler.core.models.gajger.predict` call per GPU and chunk, occupancy from
:func:`gpumodeler.core.occupancy.calculator.occupancy_array` when the block size is swept. Launches
that cannot run (occupancy 0) are NaN with the reason kept. The kernel terms apply as in
``predict`` (``terms``; each curve's ``terms`` says per point which changed the time), and
the registered models in ``models`` are overlaid per point (:mod:`gpumodeler.core.models.overlay`;
each curve's ``model_times`` and ``model_errors``).

Swept variables: ``block_size``, ``occupancy`` (warps per SM, overriding the calculator),
``data_size`` (N; the grid follows and so do transfer sizes in N), a loop variable of the
kernel, or ``gpu`` (one point per GPU). With several GPUs and a numeric variable each GPU
is one curve.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gpumodeler.core.device import LinkSpec
from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.latency_bound import LatencyBound
from gpumodeler.core.kernel.latency_tables import LatencyTable
from gpumodeler.core.kernel.warp_counts import WarpCounts
from gpumodeler.core.models.result import KernelTerms
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.launch_limits import launch_problems
from gpumodeler.core.models.kernel_time import grid_for
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.models.gajger import kernel_inputs_from_graph, predict
from gpumodeler.core.pipeline import evaluate_launch, resolve_gpu, resolve_table
from gpumodeler.core.project import LaunchConfig
from gpumodeler.core.kernel.warp_counts import count
from gpumodeler.core.kernel.sass.launch_memory import memory_may_change

LAUNCH_VARIABLES = ("block_size", "occupancy", "data_size", "gpu")
CHUNK = 20_000
MAX_POINTS = 200_000


class SweepCancelled(Exception):
    """The user cancelled the sweep."""


@dataclass(frozen=True)
class SweepSnapshot:
    launch: LaunchConfig
    graph: KernelGraph  # a copy
    bound: LatencyBound
    counts: WarpCounts
    variables: dict  # graph defaults, launch values, N
    variable: str
    values: np.ndarray  # swept values (GPU sweeps: indices)
    gpus: tuple  # ((label, GPUSpec), ...): curves, or points of a GPU sweep
    link: LinkSpec | None
    transfers: tuple  # ((direction, Expression), ...)
    measured_x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # A graph without its own latency table takes each GPU's: the bound (or the ModelError
    # saying why there is none) per entry of ``gpus``; empty = ``bound`` for every GPU.
    bounds: tuple = ()
    # the kernel terms' switches (KernelTerms; None = predict's defaults)
    terms: KernelTerms | None = None
    # registered models overlaid on the sweep (core.models.overlay), and the latency table
    # their graph counts read: ``table`` for the GPU being evaluated, ``tables`` per GPU
    models: tuple = ()
    model_parameters: dict = field(default_factory=dict)  # ModelInputs.parameters
    table: LatencyTable | None = None
    tables: tuple = ()
    # the user's values (launch values and N, no graph defaults): what the launch's guards
    # and reuse read (core.kernel.sass.launch_memory), as evaluate_launch gives them
    given: dict = field(default_factory=dict)


def _for_gpu(snap: SweepSnapshot, index: int) -> SweepSnapshot:
    """The snapshot with GPU ``index``'s latency bound and table (raises its ModelError)."""
    return replace(snap, bound=_bound_of(snap, index),
                   table=snap.tables[index] if snap.tables else snap.table)


def _bound_of(snap: SweepSnapshot, index: int):
    """The latency bound for GPU ``index`` of the snapshot (raises its ModelError)."""
    if not snap.bounds:
        return snap.bound
    bound = snap.bounds[index]
    if isinstance(bound, ModelError):
        raise bound
    return bound


@dataclass(frozen=True)
class SweepCurve:
    label: str
    kernel_time_s: np.ndarray
    total_time_s: np.ndarray
    mode: np.ndarray
    limiting_resource: np.ndarray
    reasons: np.ndarray  # '' where the launch runs
    knee_occupancy: float  # warps/SM where the mode changes (at the base values)
    measured_kernel_s: np.ndarray  # predictions at the measured x values
    measured_total_s: np.ndarray
    # per point, the kernel terms that changed the time ('' where none did)
    terms: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    # overlaid models: {name: kernel time s per point (NaN: not computed)} and
    # {name: (first ModelError, points it left empty)}
    model_times: dict = field(default_factory=dict)
    model_errors: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SweepResult:
    variable: str
    x: np.ndarray
    x_labels: tuple  # tick labels of a GPU sweep, else ()
    curves: tuple
    base_x: float | None  # the launch's own value of the variable


def variable_label(variable: str, graph=None) -> str:
    """Axis title with unit; a kernel variable says what it is in ``graph`` (the launch's
    kernel): a guard's share (``guard1``), the block's warps (``warps_per_block``) or a loop
    variable."""
    launch = {"block_size": "Block size (threads)", "occupancy": "Occupancy (warps per SM)",
              "data_size": "Data size N", "gpu": "GPU"}.get(variable)
    if launch is not None:
        return launch
    if graph is not None:
        from gpumodeler.core.kernel.graph_items import WARPS_PER_BLOCK, guard_variables
        if variable in guard_variables(graph):
            return f"{variable} (guard)"
        if variable == WARPS_PER_BLOCK and variable in graph.variables:
            return f"{variable} (warps in a block)"  # the once-per-block guards' count
    return f"{variable} (loop variable)"


def base_value(launch: LaunchConfig, variables: dict, variable: str, occupancy: float | None):
    if variable == "block_size":
        return float(launch.block_size)
    if variable == "occupancy":
        return occupancy
    if variable == "data_size":
        return None if launch.data_size is None else float(launch.data_size)
    v = variables.get(variable)
    return None if v is None else float(v)


def make_snapshot(project, launch_id: str, gpu_lookup, link_lookup, variable: str, values,
                  devices=(), measured_x=(), table_lookup=None,
                  include_transfers: bool = True, calibration_lookup=None,
                  terms=None, models=(), model_parameters=None,
                  analyses=None) -> SweepSnapshot:
    """Validate the launch (evaluate it once) and freeze what the sweep needs.

    ``devices``: catalog GPU names to compare (empty: the launch's GPU). Raises ModelError
    with a message for the user. ``include_transfers=False``: the kernel alone (total =
    kernel), for a launch whose transfers cannot be predicted. ``terms``: the kernel terms'
    switches (KernelTerms; default the launch's own), as :func:`evaluate_launch` takes them;
    the launch's own launch overhead and L2 bandwidth apply to every GPU compared.
    ``models``: registered model names to overlay (:mod:`gpumodeler.core.models.overlay`),
    ``model_parameters`` their own inputs (ModelInputs.parameters; ``working_set_bytes``
    also drives the L2 term of the sweep's own prediction). ``analyses``
    (:class:`~gpumodeler.core.pipeline.GraphAnalyses`) serves the validating evaluation; the
    snapshot's own copy of the graph is analysed here, so a worker thread reads nothing the
    document shares."""
    from gpumodeler.core.models.overlay import model_list
    models = model_list(models) if models else ()
    terms = project.launches[launch_id].terms.kernel_terms() if (
        terms is None and launch_id in project.launches) else terms
    base = evaluate_launch(project, launch_id, gpu_lookup, link_lookup,  # raises if it cannot run
                           table_lookup=table_lookup, include_transfers=include_transfers,
                           calibration_lookup=calibration_lookup, terms=terms,
                           analyses=analyses)
    launch = project.launches[launch_id]
    graph = project.kernels[launch.kernel].copy()
    variables = dict(graph.variables, **launch.variables)
    given = dict(launch.variables)
    if launch.data_size is not None:
        variables.setdefault("N", launch.data_size)
        given.setdefault("N", launch.data_size)
    table = resolve_table(graph.latency_table or base.gpu.latency_table, table_lookup)
    bound = analyze(graph, table)
    counts = count(graph, base.gpu.warp_size)
    if variable not in LAUNCH_VARIABLES:
        known = sorted(set(variables) | set(bound.variables))
        if variable not in known:
            raise InvalidParameter(f"cannot sweep {variable!r}: it is not a variable of this launch "
                                   f"(variables: {', '.join(known) or 'none'})", item="variable")
    if variable == "data_size" and launch.data_size is None:
        raise InvalidParameter("sweeping the data size needs a launch given by data size N, not grid size",
                               item="variable")
    if devices:
        gpus = tuple((name, launch.terms.on_gpu(gpu_lookup(name))) for name in devices)
    else:
        gpus = ((base.gpu.name, launch.terms.on_gpu(resolve_gpu(project, launch.gpu, gpu_lookup))),)
    if variable == "gpu":
        values = np.arange(len(gpus), dtype=float)
    else:
        values = np.asarray(values, dtype=float).ravel()
    if values.size == 0:
        raise InvalidParameter("the sweep has no points; give a range with at least one value", item="values")
    if values.size * len(gpus) > MAX_POINTS:
        raise InvalidParameter(f"the sweep has {values.size * len(gpus)} points; at most {MAX_POINTS}",
                               item="values")
    if not np.all(np.isfinite(values)):
        raise InvalidParameter("sweep values must be finite numbers", item="values")
    if variable in ("block_size", "data_size"):
        if np.any(values < 1) or np.any(values != np.floor(values)):
            raise InvalidParameter(f"{variable_label(variable).lower()} values must be whole numbers >= 1",
                                   item="values")
        if variable == "block_size" and np.any(values > 1024):
            raise InvalidParameter("block size values must be 1..1024 threads", item="values")
    if variable == "occupancy" and np.any(values <= 0):
        raise InvalidParameter("occupancy values must be > 0 warps per SM", item="values")
    if variable not in LAUNCH_VARIABLES and np.any(values < 0):
        raise InvalidParameter(f"{variable} counts loop iterations; values must be >= 0", item="values")
    transfers = tuple((t.direction, parse(t.size)) for t in launch.transfers) if include_transfers else ()
    link = base.link
    bounds: list[LatencyBound | ModelError] = []
    tables: list[LatencyTable | None] = []
    if graph.latency_table is None:
        for _, gpu in gpus:
            try:
                gpu_table = resolve_table(gpu.latency_table, table_lookup)
                bounds.append(analyze(graph, gpu_table))
                tables.append(gpu_table)
            except ModelError as exc:
                bounds.append(exc)
                tables.append(None)
    return SweepSnapshot(launch=launch, graph=graph, bound=bound, counts=counts, variables=variables,
                         variable=variable, values=values, gpus=gpus, link=link, transfers=transfers,
                         measured_x=np.asarray(measured_x, dtype=float).ravel(),
                         bounds=tuple(bounds), terms=terms, models=models, table=table,
                         model_parameters=dict(model_parameters or {}),
                         tables=tuple(tables), given=given)


def _evaluate(snap: SweepSnapshot, gpu, x: np.ndarray, cancelled=None) -> dict:
    """Predictions at the swept values ``x`` (1-D) on ``gpu``; NaN where it cannot run."""
    L, var = snap.launch, snap.variable
    n = x.size
    block = x.astype(np.int64) if var == "block_size" else np.full(n, L.block_size, dtype=np.int64)
    variables = dict(snap.variables)
    if var not in LAUNCH_VARIABLES:
        variables[var] = x
    data_size = x.astype(np.int64) if var == "data_size" else L.data_size
    if var == "data_size" and "N" not in L.variables:
        variables["N"] = x
    valid = np.ones(n, dtype=bool)
    reasons = np.full(n, "", dtype=object)
    if var == "occupancy":
        warps = x.astype(float)
    elif L.occupancy_override is not None:
        warps = np.full(n, float(L.occupancy_override))
    else:
        if not gpu.compute_capability:
            raise InvalidParameter(f"{gpu.name}: the compute capability is unknown, so occupancy cannot be "
                                   f"computed; give an occupancy override", item="occupancy_override")
        from gpumodeler.core.occupancy.calculator import occupancy_array
        occ = occupancy_array(gpu.compute_capability, block, L.registers, L.shared_mem)
        warps = np.asarray(occ.active_warps_per_sm, dtype=float)
        valid &= np.asarray(occ.valid, dtype=bool)
        reasons = np.where(valid, reasons, np.asarray(occ.reasons, dtype=object))
    if data_size is not None:
        grid = grid_for(np.broadcast_to(np.asarray(data_size), (n,)).astype(np.int64), block)
    else:
        grid = np.full(n, L.grid_size, dtype=np.int64)
    beyond = launch_problems(grid, block, gpu.compute_capability)  # CUDA's launch limits
    beyond_any = beyond != ""
    if beyond_any.any():
        reasons = np.where(valid & beyond_any, beyond, reasons).astype(object)
        valid &= ~beyond_any
    out: dict[str, Any] = {"kernel": np.full(n, np.nan), "total": np.full(n, np.nan),
           "mode": np.full(n, "", dtype=object), "limit": np.full(n, "", dtype=object), "reasons": reasons,
           "terms": np.full(n, "", dtype=object)}
    if not valid.any():
        return out
    for mask, snap_v, launch_values in _launch_views(snap, gpu, x, block, grid, warps, valid,
                                                     cancelled):
        _predict_points(snap_v, gpu, mask, dict(variables, **launch_values), grid, block, warps,
                        out, cancelled)
    return out


#: distinct launches of one sweep chunk whose memory is evaluated one by one, at most
MAX_LAUNCH_VIEWS = 4096


def _launch_views(snap: SweepSnapshot, gpu, x, block, grid, warps, valid, cancelled=None) -> list:
    """[(points, snapshot, values)]: the runnable points grouped by the graph their launch
    sees (:func:`gpumodeler.core.kernel.sass.launch_memory.graph_for_launch`: guards, block
    shape, reuse across blocks and L2 fit, each point with its own block, grid, occupancy
    and swept value, as :func:`evaluate_launch` gives its one point), each group with its
    graph, counts and latency bound, and the guard values it adds. ``cancelled()`` is polled
    every few launches (it raises to stop): a view costs about 3 ms for an 81-instruction
    graph and 35 ms for 3 300 instructions (its reuse and its counts)."""
    if not memory_may_change(snap.graph):
        return [(valid, snap, {})]
    from gpumodeler.core.kernel.sass.launch_memory import LaunchViews
    var = snap.variable
    own = var not in ("block_size", "occupancy", "gpu")   # data size or a loop variable
    points: dict = {}
    for i in np.flatnonzero(valid):
        key = (int(block[i]), int(grid[i]), float(warps[i]), float(x[i]) if own else None)
        points.setdefault(key, []).append(i)
    if len(points) > MAX_LAUNCH_VIEWS:
        raise InvalidParameter(f"the sweep has {len(points)} distinct launches of a kernel whose "
                               f"memory depends on the launch (each is evaluated for its reuse); "
                               f"at most {MAX_LAUNCH_VIEWS}: sweep fewer points", item="values")
    views = LaunchViews(snap.graph, snap.table, gpu.warp_size, bound=snap.bound,
                        counts=snap.counts if gpu.warp_size == 32 else None)
    groups: dict = {}
    for j, ((b, g, w, v), members) in enumerate(points.items()):
        if cancelled is not None and j % 8 == 0:
            cancelled()
        values = dict(snap.given)
        if v is not None:
            values["N" if var == "data_size" else var] = v
        if var == "data_size" and "N" in snap.launch.variables:
            values["N"] = snap.launch.variables["N"]
        seen = views.view(values, block_size=b, gpu=gpu, grid_size=g, occupancy=w,
                          working_set_bytes=snap.model_parameters.get("working_set_bytes"),
                          shared_bytes_per_block=snap.launch.shared_mem or None)
        gkey = (id(seen.graph), id(seen.bound), tuple(sorted(seen.guards.items())))
        if gkey not in groups:
            view = snap
            if seen.graph is not snap.graph or seen.bound is not snap.bound:
                view = replace(snap, graph=seen.graph, counts=seen.counts, bound=seen.bound)
            groups[gkey] = (np.zeros(valid.size, dtype=bool), view, seen.guards)
        groups[gkey][0][members] = True
    return list(groups.values())


def _predict_points(snap: SweepSnapshot, gpu, valid, variables: dict, grid, block, warps, out: dict,
                    cancelled=None) -> None:
    """The predictions at the points ``valid`` (a mask) of one launch view, into ``out``."""
    L = snap.launch
    n = valid.size
    sub = {k: (v[valid] if isinstance(v, np.ndarray) and v.shape == (n,) else v) for k, v in variables.items()}
    counts = snap.counts if gpu.warp_size == 32 else count(snap.graph, gpu.warp_size)
    inputs = kernel_inputs_from_graph(snap.graph, sub, bound=snap.bound, counts=counts, warp_size=gpu.warp_size)
    if L.kernel_overrides:
        inputs = inputs.overridden(**{k: parse(v).evaluate(sub) for k, v in L.kernel_overrides.items()})
    transfers = [(d, np.broadcast_to(np.asarray(expr.evaluate(sub), dtype=float), (int(valid.sum()),)))
                 for d, expr in snap.transfers]
    pred = predict(gpu, inputs, grid_size=grid[valid], block_size=block[valid], occupancy=warps[valid],
                   lam=L.lam, link=snap.link, transfers=transfers, terms=snap.terms,
                   working_set_bytes=snap.model_parameters.get("working_set_bytes"))
    out["kernel"][valid] = pred.kernel.time_s
    out["total"][valid] = np.broadcast_to(pred.total_time_s, (int(valid.sum()),))
    out["mode"][valid] = pred.kernel.mode
    out["limit"][valid] = pred.kernel.limiting_resource
    if pred.terms is not None:
        out["terms"][valid] = np.broadcast_to(pred.terms.applied_text(), (int(valid.sum()),))
    if snap.models:
        from gpumodeler.core.models.overlay import overlay_launch_points
        overlay = overlay_launch_points(snap, gpu, inputs, sub, grid[valid], block[valid], warps[valid],
                                        pred.kernel.time_s, cancelled=cancelled)
        model_times = out.setdefault("models", {})
        for m, t in overlay.times.items():
            model_times.setdefault(m, np.full(n, np.nan))[valid] = t
        errors = out.setdefault("model_errors", {})
        for m, (exc, k) in overlay.errors.items():
            errors[m] = (errors[m][0], errors[m][1] + k) if m in errors else (exc, k)


def _own_view(snap: SweepSnapshot, gpu) -> tuple:
    """(snapshot, guard values) of the launch at its own values on ``gpu``
    (:func:`_launch_views` of that one point)."""
    if not memory_may_change(snap.graph):
        return snap, {}
    L = snap.launch
    if L.occupancy_override is not None:
        warps = float(L.occupancy_override)
    else:
        from gpumodeler.core.occupancy.calculator import occupancy
        warps = occupancy(gpu.require("compute_capability"), L.block_size, L.registers,
                          L.shared_mem).active_warps_per_sm
    grid = int(grid_for(L.data_size, L.block_size)) if L.data_size is not None else L.grid_size
    var = snap.variable
    own = 0.0   # the swept value at the launch: read only for a data size or a loop variable
    if var == "data_size" and L.data_size is not None:
        own = float(L.data_size)
    elif var not in LAUNCH_VARIABLES:
        own = float(snap.variables.get(var, 0.0))
    ((_, view, guards),) = _launch_views(snap, gpu, np.array([own]), np.array([L.block_size]),
                                         np.array([grid]), np.array([float(warps)]),
                                         np.array([True]))
    return view, guards


def _knee(snap: SweepSnapshot, gpu) -> float:
    """Occupancy (warps/SM) where the mode changes, at the launch's own values (Volkov
    §3.10: latency bound × throughput bound)."""
    from gpumodeler.core.models.throughput import throughput_bound
    L, variables = snap.launch, dict(snap.variables)
    try:
        snap, guards = _own_view(snap, gpu)   # the launch's memory view, as its point has it
        variables.update(guards)
        counts = snap.counts if gpu.warp_size == 32 else count(snap.graph, gpu.warp_size)
        inputs = kernel_inputs_from_graph(snap.graph, variables, bound=snap.bound, counts=counts,
                                          warp_size=gpu.warp_size)
        if L.kernel_overrides:
            inputs = inputs.overridden(**{k: parse(v).evaluate(variables) for k, v in L.kernel_overrides.items()})
        tb = throughput_bound(gpu, **inputs.worksheet())
        return float(inputs.latency_bound * tb.warps_per_cycle)
    except (ModelError, ValueError, TypeError):
        return float("nan")


def run_sweep(snap: SweepSnapshot, progress=None, cancelled=None) -> SweepResult:
    """Evaluate the sweep; ``progress(fraction)`` after each chunk, ``cancelled()`` checked
    between chunks (raises SweepCancelled)."""
    def check():
        if cancelled is not None and cancelled():
            raise SweepCancelled()

    overlays: dict = {}  # curve label -> ({model: [times...]}, {model: [exc, points]})

    def keep_models(label, r):
        times, errors = overlays.setdefault(label, ({}, {}))
        for m, t in r.get("models", {}).items():
            times.setdefault(m, []).append(t)
        for m, (exc, k) in r.get("model_errors", {}).items():
            errors[m] = [errors[m][0], errors[m][1] + k] if m in errors else [exc, k]

    def models_of(label, n):
        times, errors = overlays.get(label, ({}, {}))
        out = {m: np.concatenate(parts) for m, parts in times.items()}
        for m in snap.models:  # a GPU that could not run at all: empty columns
            out.setdefault(m, np.full(n, np.nan))
        return out, {m: (exc, k) for m, (exc, k) in errors.items()}

    curves = []
    if snap.variable == "gpu":
        kernel, total, mode, limit, reasons, terms = [], [], [], [], [], []
        for i, (label, gpu) in enumerate(snap.gpus):
            check()
            try:
                snap1 = replace(_for_gpu(snap, i), variable="block_size")
                r = _evaluate(snap1, gpu, np.array([float(snap.launch.block_size)]), check)
                keep_models("predicted", r)
                kernel.append(r["kernel"][0]); total.append(r["total"][0])
                mode.append(r["mode"][0]); limit.append(r["limit"][0]); reasons.append(r["reasons"][0])
                terms.append(r["terms"][0])
            except ModelError as exc:
                kernel.append(np.nan); total.append(np.nan); mode.append(""); limit.append("")
                reasons.append(f"{label}: {exc}"); terms.append("")
                keep_models("predicted", {"models": {m: np.array([np.nan]) for m in snap.models}})
            if progress:
                progress((i + 1) / len(snap.gpus))
        empty = np.zeros(0)
        curves.append(SweepCurve("predicted", np.array(kernel), np.array(total), np.array(mode, dtype=object),
                                 np.array(limit, dtype=object), np.array(reasons, dtype=object), float("nan"),
                                 empty, empty, np.array(terms, dtype=object),
                                 *models_of("predicted", len(snap.gpus))))
        return SweepResult("gpu", snap.values, tuple(label for label, _ in snap.gpus), tuple(curves), None)

    n = snap.values.size
    total_steps = len(snap.gpus) * max(1, -(-n // CHUNK)) + (1 if snap.measured_x.size else 0)
    step = 0
    for index, (label, gpu) in enumerate(snap.gpus):
        parts = []
        snap_g, knee = snap, None
        try:
            snap_g = _for_gpu(snap, index)
            for start in range(0, n, CHUNK):
                check()
                parts.append(_evaluate(snap_g, gpu, snap.values[start:start + CHUNK], check))
                keep_models(label, parts[-1])
                step += 1
                if progress:
                    progress(step / total_steps)
            joined = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]
                      if k not in ("models", "model_errors")}
            if snap.measured_x.size:
                m = _evaluate(replace(snap_g, models=()), gpu, snap.measured_x)
                mk, mt = m["kernel"], m["total"]
            else:
                mk = mt = np.zeros(0)
        except ModelError as exc:  # this GPU cannot run the model (a parameter is unknown)
            if len(snap.gpus) == 1:
                raise
            overlays.pop(label, None)
            joined = {"kernel": np.full(n, np.nan), "total": np.full(n, np.nan),
                      "mode": np.full(n, "", dtype=object), "limit": np.full(n, "", dtype=object),
                      "reasons": np.full(n, str(exc), dtype=object), "terms": np.full(n, "", dtype=object)}
            mk = mt = np.full(snap.measured_x.size, np.nan)
            knee = float("nan")
        curves.append(SweepCurve(label, joined["kernel"], joined["total"], joined["mode"], joined["limit"],
                                 joined["reasons"], _knee(snap_g, gpu) if knee is None else knee,
                                 mk, mt, joined["terms"], *models_of(label, n)))
    if progress:
        progress(1.0)
    base = base_value(snap.launch, snap.variables, snap.variable, None)
    return SweepResult(snap.variable, snap.values, (), tuple(curves), base)


def relative_errors(predicted_s: np.ndarray, measured_s: np.ndarray) -> np.ndarray:
    """(predicted − measured) / measured, per point."""
    measured_s = np.asarray(measured_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.asarray(predicted_s, dtype=float) - measured_s) / measured_s
