"""`gpumodeler sweep`: predictions over the cartesian product of value lists, as CSV or JSON.

Any list flag takes a comma list (``128,256,512``) or an inclusive range
(``32:1024:32``). ``--device`` may be repeated: each GPU is a group of rows. Transfers may
be expressions of the data size ``N`` (``--htod 4*N``) so they follow a data-size sweep.
The product is evaluated in vectorised chunks of :data:`CHUNK_POINTS` launch points per
device and written as it goes (:mod:`gpumodeler.cli.tables`), so memory stays flat; a
hand-drawn graph's bound and counts are evaluated once over the swept loop variables alone.
A graph whose memory a launch changes (an imported kernel: followed addresses, hit ratios,
guards its block decides) is evaluated per distinct launch as ``predict`` sees it (guards,
block shape, reuse across and within blocks, L1 and L2 fit:
:class:`gpumodeler.core.kernel.sass.launch_memory.LaunchViews`), every launch before the
first row, at most :data:`MAX_LAUNCHES` of them.
``--format jsonl`` writes JSON Lines; ``-o -`` writes to standard output.

The kernel terms apply as in ``predict`` (under-filled GPU on, ``--tail``, the launch overhead
when known, ``--working-set`` in L2); the ``terms`` column lists those that changed a row's
time. ``--model NAME[,NAME]|all`` adds a column ``time_s_<model>`` per registered model
(:mod:`gpumodeler.cli.sweep_models`).
"""
from __future__ import annotations

import argparse
import math
import sys

from gpumodeler.core.errors import ModelError

from . import common, model_flags
from .cmd_predict import add_kernel_flags
from .main import CLIError

MAX_POINTS = 20_000_000
LIST_FLAGS = {  # CSV column -> argparse dest
    "sms": "sms", "sm_clock_mhz": "sm_clock_mhz", "cuda_cores": "cuda_cores",
    "schedulers": "schedulers", "gmem_bytes_per_cycle": "gmem_bytes_per_cycle",
    "block_size": "block_size", "grid_size": "grid_size", "data_size": "data_size",
    "occupancy": "occupancy", "registers": "registers", "shared_mem": "shared_mem",
    "lambda": "lam", "latency_bound": "latency_bound", "issued_instructions": "issued_instructions",
    "cuda_core_instructions": "cuda_core_instructions", "gmem_bytes": "gmem_bytes",
}


def register(sub) -> None:
    p = sub.add_parser("sweep", help="predictions over a grid of values (CSV or JSON)",
                       description=__doc__.split("\n\n")[0])
    common.add_device_flags(p, lists=True)
    add_kernel_flags(p, lists=True)
    for action in p._actions:
        if action.dest == "set":
            action.type = _set_list
    g = p.add_argument_group("transfers")
    g.add_argument("--htod", action="append", default=[], metavar="BYTES|EXPR",
                   help="host-to-device copy in bytes or an expression of N, e.g. 4*N")
    g.add_argument("--dtoh", action="append", default=[], metavar="BYTES|EXPR")
    g.add_argument("--link", metavar="NAME")
    g.add_argument("--link-bandwidth", type=common.bandwidth_arg)
    g.add_argument("--startup-htod", type=common.seconds_arg)
    g.add_argument("--startup-dtoh", type=common.seconds_arg)
    g.add_argument("--lambda-htod", type=common.float_arg)
    g.add_argument("--lambda-dtoh", type=common.float_arg)
    model_flags.add_model_flags(p, overlay=True)
    p.add_argument("--format", choices=("csv", "json", "jsonl"), default="csv",
                   help="csv, json (one array) or jsonl (JSON Lines: one object per line)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write here instead of standard output ('-': standard output)")
    p.set_defaults(func=run)


def _set_list(text):
    name, sep, values = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"--set takes NAME=VALUES (e.g. a=1,2,4 or a=1:64), got {text!r}")
    return name.strip(), common.list_of(common.float_arg)(values)


def _transfer_exprs(items):
    from gpumodeler.core.kernel.expressions import parse
    out = []
    for text in items:
        try:
            out.append(("value", common.bytes_arg(text)))
        except Exception:
            expr = parse(text)
            unknown = expr.variables - {"N"}
            if unknown:
                raise CLIError(f"transfer size {text!r} may only use N (the data size), not "
                               f"{', '.join(sorted(unknown))}")
            out.append(("expr", expr))
    return out


def _device_groups(args):
    names = args.device or [None]
    for name in names:
        ns = type(args)(**vars(args))
        ns.device = name
        for dest in ("sms", "sm_clock_mhz", "cuda_cores", "schedulers", "gmem_bytes_per_cycle"):
            setattr(ns, dest, None)  # lists are swept, applied below
        yield name, common.resolve_gpu(ns)


#: launch points evaluated at a time (memory stays flat whatever the sweep's size)
CHUNK_POINTS = 65_536


def run(args) -> int:
    import numpy as np

    from .tables import TableWriter

    from gpumodeler.core.kernel.sass.launch_memory import memory_may_change

    graph = common.load_graph(args.graph) if args.graph else None
    shape = None
    # A graph whose memory a launch changes (an imported kernel: followed addresses, hit
    # ratios, guards its block decides) is evaluated per distinct launch, as predict does.
    launch_graph = graph if graph is not None and memory_may_change(graph) else None
    if isinstance(args.block_size, tuple):  # one block shape (16x16): its thread count swept
        shape, args.block_size = args.block_size, [math.prod(args.block_size)]
        if graph is not None:
            from gpumodeler.core.kernel.sass.launch_shape import shaped_graph
            graph, notes = shaped_graph(graph, shape, args.warp_size or 32)
            for note in notes:
                print(f"note: {note}", file=sys.stderr)
    if graph is not None:
        common.launch_defaults_from_graph(args, graph, as_list=True)
    lists = {col: np.atleast_1d(getattr(args, dest)) for col, dest in LIST_FLAGS.items()
             if getattr(args, dest, None) is not None}
    variables = {}
    for name, values in args.set:
        if name in lists or name in variables:
            raise CLIError(f"{name} is swept twice")
        variables[name] = values
    if "grid_size" in lists and "data_size" in lists:
        raise CLIError("sweep --grid-size or --data-size, not both")
    if "block_size" not in lists:
        raise CLIError("give --block-size (one value or a list)")
    if "occupancy" in lists and "registers" in lists:
        raise CLIError("give --occupancy or --registers, not both")
    sizes = [len(v) for v in lists.values()] + [len(v) for v in variables.values()]
    total = math.prod(sizes) * len(args.device or [None])
    if total > MAX_POINTS:
        raise CLIError(f"the sweep has {total} points; at most {MAX_POINTS}")
    axes = {**lists, **{f"var:{k}": np.atleast_1d(np.asarray(v)) for k, v in variables.items()}}
    transfers = _transfer_exprs(args.htod), _transfer_exprs(args.dtoh)
    groups = list(_device_groups(args))  # every device resolved before a row is written
    # the graph's latency bound and counts: once for its own table, else per device's table
    kernels: dict = {}

    def table_key(gpu):  # --table, else the GPU's own, else the graph's
        return common.choose_table(args.table, gpu, graph)[0]

    def kernel_for(gpu):
        if graph is None or launch_graph is not None:
            return None
        key = table_key(gpu)
        if key not in kernels:
            kernels[key] = _kernel_per_variables(graph, axes, key)
        return kernels[key]

    for _, gpu in groups:  # every error before a row is written
        kernel_for(gpu)
    n_points = math.prod(len(v) for v in axes.values())
    from .sweep_models import ModelColumns
    models = ModelColumns(args, graph, table_key)
    models.check_size(total)
    chunks = [(lo, min(n_points, lo + CHUNK_POINTS)) for lo in range(0, n_points, CHUNK_POINTS)]

    def chunk_grid(lo, hi):
        index = np.unravel_index(np.arange(lo, hi), [len(v) for v in axes.values()])
        return index, {name: values[i] for (name, values), i in zip(axes.items(), index)}

    launches: list = [None] * len(groups)
    if launch_graph is not None:   # every launch's view before a row is written
        launches = _launch_inputs(args, launch_graph, shape, groups, table_key, chunks, chunk_grid)
    inputs = common.inputs_and_catalog((args.graph, "the kernel file"), output=args.output)
    with TableWriter(args.output, args.format, inputs=inputs) as table:
        for (_, gpu), per_launch in zip(groups, launches):
            for lo, hi in chunks:
                index, grid = chunk_grid(lo, hi)
                table.write(_evaluate(args, gpu, grid, hi - lo, kernel_for(gpu),
                                      dict(zip(axes, index)), transfers, models, per_launch))
    models.report()
    return 0


def _kernel_per_variables(graph, axes, table_key):
    """The graph's latency bound (with latency table ``table_key``: --table, else the
    device's, else the graph's own) and counts over the product of the swept loop variables only (not over every
    launch point): ``(names, shape, latency, counts)``, each value a number or an array over
    that product, looked up per point. For a graph whose memory no launch changes (a graph
    that does is evaluated per launch: :func:`_launch_inputs`)."""

    from gpumodeler.core.kernel.latency_bound import analyze
    from gpumodeler.core.kernel.warp_counts import count
    from gpumodeler.core.models.gajger import cartesian

    var_axes = {k[4:]: v for k, v in axes.items() if k.startswith("var:")}
    var_values = cartesian(**var_axes)
    fixed = {k: v for k, v in graph.variables.items() if k not in var_values}
    bound, counts = analyze(graph, common.latency_table_for(table_key)), count(graph)
    all_vars = {**fixed, **var_values}
    lat = bound.evaluate(all_vars)
    c = counts.evaluate(all_vars)
    common.require_finite({"latency_bound": lat, **{k: c[k] for k in (
        "issued_instructions", "cuda_core_instructions", "gmem_bytes", "sfu_instructions",
        "fp64_instructions", "smem_bank_cycles")}})
    return list(var_axes), [len(v) for v in var_axes.values()], lat, c


def _launch_points(args, gpu, grid, n_points):
    """The launch of each point of one chunk on one device: ``(spec, block, warps, grid
    size, valid, reasons)``, ``spec`` the device with the chunk's swept values, ``valid``
    the points a GPU can run (``reasons`` says why not)."""
    import numpy as np

    from gpumodeler.core.models.kernel_time import grid_for

    spec = model_flags.gpu_with_term_values(args, gpu).with_overrides(
        sms=grid.get("sms"), cuda_cores_per_sm=grid.get("cuda_cores"),
        schedulers_per_sm=grid.get("schedulers"),
        gmem_bytes_per_cycle_per_sm=grid.get("gmem_bytes_per_cycle"),
        sm_clock_hz=None if "sm_clock_mhz" not in grid else grid["sm_clock_mhz"] * 1e6)
    block = grid["block_size"].astype(np.int64)
    valid = np.ones(n_points, dtype=bool)
    reasons = np.full(n_points, "", dtype=object)
    if "registers" in grid:
        if not spec.compute_capability:
            raise CLIError("sweeping --registers needs the compute capability: give --cc or --device")
        from gpumodeler.core.occupancy.calculator import occupancy_array
        occ = occupancy_array(spec.compute_capability, block, grid["registers"].astype(np.int64),
                              grid.get("shared_mem", np.zeros(n_points)).astype(np.int64))
        warps = occ.active_warps_per_sm.astype(float)
        valid &= occ.valid
        reasons = np.where(occ.valid, reasons, occ.reasons)
    elif "occupancy" in grid:
        warps = grid["occupancy"]
    else:
        raise CLIError("give --occupancy WARPS or --registers N (lists allowed)")
    if "data_size" in grid:
        gsize = grid_for(grid["data_size"].astype(np.int64), block)
    elif "grid_size" in grid:
        gsize = grid["grid_size"].astype(np.int64)
    else:
        raise CLIError("give --grid-size or --data-size (lists allowed)")
    # CUDA's launch limits (core.launch_limits): a row beyond them says why, like a block
    # the GPU cannot hold
    from gpumodeler.core.launch_limits import launch_problems
    beyond = launch_problems(gsize, block, spec.compute_capability)
    beyond_any = beyond != ""
    if beyond_any.any():
        valid &= ~beyond_any
        reasons = np.where(beyond_any & (reasons == ""), beyond, reasons).astype(object)
    return spec, block, warps, gsize, valid, reasons


#: distinct launches of a sweep of a kernel whose memory a launch changes, at most (each is
#: evaluated for its reuse, about 3 ms for an 81-instruction graph, 35 ms for 3 300)
MAX_LAUNCHES = 4096


#: a launch key's value for what the sweep does not know (the SMs without a device, the
#: shared memory not given)
UNKNOWN = -1.0


def _launch_keys(spec, grid, block, warps, gsize, n_points):
    """One row per point: what decides the graph its launch sees (block, grid, occupancy,
    SMs, shared memory per block, the swept variables), as floats (-1: not known), and
    their names."""
    import numpy as np
    names = ["block", "grid", "warps", "sms", "shared"]
    cols = [block, gsize, warps, spec.sms if spec.sms is not None else UNKNOWN,
            grid.get("shared_mem", UNKNOWN)]
    for k, v in grid.items():
        if k.startswith("var:"):
            names.append(k[4:])
            cols.append(v)
    return np.column_stack([np.broadcast_to(np.asarray(c, dtype=float), (n_points,))
                            for c in cols]), names


def _launch_inputs(args, graph, shape, groups, table_key, chunks, chunk_grid) -> list:
    """Per device of ``groups``: ``{launch key: (kernel inputs, view graph, values)}`` over
    every runnable point of the sweep, each distinct launch's graph as ``predict`` sees it
    (:class:`gpumodeler.core.kernel.sass.launch_memory.LaunchViews`: the guards its block
    decides, the block shape, the reuse across and within blocks, the L1 and L2 fit). At
    most :data:`MAX_LAUNCHES` distinct launches over all devices: the message says so."""
    import numpy as np

    from gpumodeler.core.kernel.sass.launch_memory import LaunchViews
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph

    per_device: list = []
    seen_total = 0
    for _, gpu in groups:
        keys: set = set()
        for lo, hi in chunks:
            _, grid = chunk_grid(lo, hi)
            spec, block, warps, gsize, valid, _ = _launch_points(args, gpu, grid, hi - lo)
            rows, names = _launch_keys(spec, grid, block, warps, gsize, hi - lo)
            keys.update(map(tuple, np.unique(rows[valid], axis=0).tolist()))
            if seen_total + len(keys) > MAX_LAUNCHES:
                raise CLIError(f"the sweep has more than {MAX_LAUNCHES} distinct launches of a kernel "
                               f"whose memory depends on the launch (each is evaluated for its "
                               f"reuse, as predict does); sweep at most {MAX_LAUNCHES}")
        seen_total += len(keys)
        key = table_key(gpu)
        views = LaunchViews(graph, common.latency_table_for(key), gpu.warp_size)
        base = model_flags.gpu_with_term_values(args, gpu)   # --l2-size, --l1-size, ...
        out: dict = {}
        for row in sorted(keys):
            at = dict(zip(names, row))
            values = {k: at[k] for k in names[5:]}
            b = shape or (int(at["block"]),)
            device = None if at["sms"] == UNKNOWN else base.with_overrides(sms=int(at["sms"]))
            shared = None if at["shared"] == UNKNOWN else at["shared"]
            view = views.view(values, block_size=b, gpu=device,
                              grid_size=int(at["grid"]) if device is not None else None,
                              occupancy=at["warps"] if device is not None else None,
                              working_set_bytes=args.working_set,
                              shared_bytes_per_block=shared or None)
            full = {**values, **view.guards}
            inputs = kernel_inputs_from_graph(view.graph, full, bound=view.bound,
                                              counts=view.counts)
            common.require_finite({k: v for k, v in inputs.__dict__.items()
                                   if not isinstance(v, dict)})
            out[row] = (inputs, view.graph, full)
        per_device.append(out)
    return per_device


def _per_launch_columns(per_launch: dict, spec, grid, block, warps, gsize, valid, n_points):
    """``(kernel inputs, latency bound, views_at)`` of one chunk from the inputs per launch
    (:func:`_launch_inputs`): each input an array over the points (NaN where a point cannot
    run), ``views_at(i)`` the graph and values point ``i`` saw (for the --model columns)."""
    import numpy as np
    rows, _ = _launch_keys(spec, grid, block, warps, gsize, n_points)
    uniq, inverse = np.unique(rows[valid], axis=0, return_inverse=True)
    entries = [per_launch[row] for row in map(tuple, uniq.tolist())]
    at = np.full(n_points, len(entries))   # the NaN after the last entry
    at[valid] = inverse.reshape(-1)
    if not entries:
        nan = np.full(n_points, np.nan)
        return {"latency_bound": nan, "issued_instructions": nan}, nan, None

    def over_points(values):
        return np.append(np.asarray(values, dtype=float), np.nan)[at]

    first = entries[0][0].__dict__
    kin: dict = {}
    for name, value in first.items():
        if isinstance(value, dict):
            kin[name] = {k: over_points([e[0].__dict__[name][k] for e in entries]) for k in value}
        elif value is None:
            kin[name] = None
        else:
            kin[name] = over_points([e[0].__dict__[name] for e in entries])
    return kin, kin["latency_bound"], lambda i: entries[at[i]][1:]


def _evaluate(args, gpu, grid, n_points, kernel, index, transfers, models=None,
              per_launch=None) -> dict:
    """The table's columns for one chunk of launch points on one device; ``per_launch``:
    the kernel inputs per launch (:func:`_launch_inputs`) of a graph evaluated per launch."""
    import numpy as np

    from gpumodeler.core.models.gajger import KernelInputs, predict, worksheet_counts

    columns: dict = {}

    def col(name, values):
        columns[name] = np.broadcast_to(np.asarray(values), (n_points,))

    lat = c = None
    if kernel is not None:
        names, shape, lat_all, c_all = kernel
        if names:
            flat = np.ravel_multi_index([index[f"var:{k}"] for k in names], shape)
            pick_var = lambda v: v[flat] if np.ndim(v) else v
        else:
            pick_var = lambda v: v
        lat = pick_var(lat_all)
        c = {k: pick_var(v) for k, v in c_all.items()}
    spec, block, warps, gsize, valid, reasons = _launch_points(args, gpu, grid, n_points)
    kin = {}
    if kernel is not None:
        kin = dict(latency_bound=lat, **worksheet_counts(c))
    views_at = None
    if per_launch is not None:
        kin, lat, views_at = _per_launch_columns(per_launch, spec, grid, block, warps, gsize,
                                                 valid, n_points)
    for name in ("latency_bound", "issued_instructions", "cuda_core_instructions", "gmem_bytes"):
        if name in grid:
            kin[name] = grid[name]
            if name == "cuda_core_instructions":  # the given total replaces the pipe mix
                kin["pipe_instructions"] = None
            if name == "issued_instructions":
                kin["dual_issues"] = 0.0
    for name, dest in (("sfu_instructions", "sfu_instructions"), ("fp64_instructions", "fp64_instructions"),
                       ("smem_bank_cycles", "smem_bank_cycles")):
        if getattr(args, dest) is not None:
            kin[name] = getattr(args, dest)
    if "latency_bound" not in kin or "issued_instructions" not in kin:
        raise CLIError("give --graph KERNEL.json or --latency-bound and --issued-instructions")
    tlist = []
    link = None
    if transfers[0] or transfers[1]:
        ns = type(args)(**vars(args))
        ns.htod = [1.0] * len(transfers[0])
        ns.dtoh = [1.0] * len(transfers[1])
        link = common.resolve_link(ns)
        for direction, items in (("htod", transfers[0]), ("dtoh", transfers[1])):
            for kind, v in items:
                if kind == "expr":
                    if "data_size" not in grid:
                        raise CLIError("transfer expressions of N need --data-size")
                    v = v.evaluate({"N": grid["data_size"]})
                tlist.append((direction, v))
    lam = grid.get("lambda", 1.0)
    sub = valid
    kernel_time = np.full(n_points, np.nan)
    total = np.full(n_points, np.nan)
    mode = np.full(n_points, "", dtype=object)
    limit = np.full(n_points, "", dtype=object)
    wt = np.full(n_points, np.nan)
    knee = np.full(n_points, np.nan)
    terms = np.full(n_points, "", dtype=object)
    if sub.any():
        pick = lambda v: np.broadcast_to(np.asarray(v), (n_points,))[sub] if np.ndim(v) else v
        spec_sub = spec.with_overrides(**{k: pick(getattr(spec, k)) for k in (
            "sms", "cuda_cores_per_sm", "schedulers_per_sm", "gmem_bytes_per_cycle_per_sm", "sm_clock_hz")
            if np.ndim(getattr(spec, k))})
        try:
            with np.errstate(over="ignore", divide="ignore"):  # refused per row below
                res = predict(spec_sub, KernelInputs(**{
                    k: ({p: pick(n) for p, n in v.items()} if isinstance(v, dict) else pick(v))
                    for k, v in kin.items()}),
                              grid_size=pick(gsize), block_size=pick(block), occupancy=pick(warps),
                              lam=pick(lam), link=link, transfers=[(d, pick(v)) for d, v in tlist],
                              terms=model_flags.terms_of(args), working_set_bytes=args.working_set)
        except ModelError as exc:
            # Keep the field the error names, so the message points at its flag.
            error = CLIError(str(exc))
            error.item = getattr(exc, "item", None)
            raise error from None
        kernel_time[sub] = res.kernel.time_s
        total[sub] = res.total_time_s
        mode[sub] = res.kernel.mode
        limit[sub] = res.kernel.limiting_resource
        wt[sub] = res.kernel.warp_throughput
        knee[sub] = res.kernel.knee_occupancy
        terms[sub] = np.broadcast_to(res.terms.applied_text(), (int(sub.sum()),))
        # a time that is not finite is never a result (docs/models.md): the row says why
        infinite = sub & ~(np.isfinite(kernel_time) & np.isfinite(total))
        if infinite.any():
            kernel_time[infinite] = total[infinite] = wt[infinite] = np.nan
            mode[infinite] = limit[infinite] = terms[infinite] = ""
            reasons = np.where(infinite, "the kernel time is not finite (λ too small?); no result",
                               reasons).astype(object)
    col("device", np.full(n_points, spec.name, dtype=object))
    for name, values in grid.items():
        col(name.removeprefix("var:"), values)
    if "occupancy" not in grid:
        col("occupancy", warps)
    if (kernel is not None or per_launch is not None) and "latency_bound" not in grid:
        col("latency_bound", np.broadcast_to(lat, (n_points,)))
    col("kernel_time_s", kernel_time)
    col("total_time_s", total)
    col("mode", mode)
    col("limiting_resource", limit)
    col("warp_throughput", wt)
    col("knee_occupancy", knee)
    col("terms", terms)
    if models is not None and models.names:
        for name, values in models.columns(spec, grid, n_points, sub & np.isfinite(kernel_time), kin,
                                           gsize, block, warps, lam, kernel_time,
                                           views_at=views_at).items():
            col(name, values)
    col("error", reasons)
    return columns
