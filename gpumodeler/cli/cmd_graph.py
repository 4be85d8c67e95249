"""`gpumodeler graph KERNEL.json`: latency bound, per-warp counts and per-resource bounds."""
from __future__ import annotations

from . import common
from .main import CLIError, leave_to_exit


def register(sub) -> None:
    p = sub.add_parser("graph", help="analyse a kernel execution graph",
                       description="Latency bound (critical path), per-warp counts and, with a "
                                   "device, the per-resource throughput bounds of a kernel graph.")
    p.add_argument("kernel", metavar="KERNEL.json", help="gpumodeler-kernel file ('-' for stdin)")
    p.add_argument("--set", type=common.set_arg, action="append", default=[], metavar="NAME=VALUE",
                   help="loop variable value, e.g. --set a=128 (defaults from the file)")
    p.add_argument("--table", "--latency-table", dest="table",
                   help="latency table key (default: the --device's, else the graph's own); a key that is not built in is looked up in "
                                   "the device database")
    p.add_argument("--block-size", type=_dims, metavar="DIMS",
                   help="a launch's block (256, 16x16, 8x8x4): the memory accesses of a block "
                        "narrower than a warp, whose warps span several rows (docs/sass-import.md)")
    p.add_argument("--grid-size", type=_dims, metavar="DIMS",
                   help="with --device, --block-size and --occupancy: the launch's reuse across "
                        "and within blocks, the L2 and L1 fits, as predict applies them "
                        "(docs/models.md)")
    p.add_argument("--occupancy", type=common.float_arg, metavar="WARPS",
                   help="active warps per SM of that launch (with --grid-size)")
    p.add_argument("--shared-mem", type=common.bytes_arg, metavar="BYTES",
                   help="shared memory per block of that launch (the L1's carve-out; default "
                        "the listing's static shared memory)")
    p.add_argument("--no-control-on-cuda-cores", action="store_true",
                   help="do not count branch/exit instructions as CUDA-core instructions")
    common.add_device_flags(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _dims(text):
    from .cmd_predict import dims_arg
    return dims_arg(text)


def run(args) -> int:
    from gpumodeler.core.kernel.collector import collector_paused

    # One graph is read, analysed and printed: the cyclic collector could free nothing of it
    # and would make full passes over its ~10^6 objects between the stages.
    with collector_paused():
        return _run(args)


def _run(args) -> int:
    from gpumodeler.core.kernel.latency_bound import analyze
    from gpumodeler.core.kernel.sass.launch_shape import block_dims
    from gpumodeler.core.kernel.warp_counts import COUNT_NAMES, count

    graph = common.load_graph(args.kernel)
    given = dict(args.set)
    values = dict(graph.variables, **given)
    notes: list = []
    from_block: list = []
    has_device = args.device or any(getattr(args, f) is not None for f in (
        "sms", "cuda_cores", "schedulers", "gmem_bytes_per_cycle"))
    launch = (args.grid_size, args.occupancy, args.shared_mem)
    if any(v is not None for v in launch) and (
            None in launch[:2] or args.block_size is None or not has_device):
        raise CLIError("a launch's reuse needs --grid-size and --occupancy together, with "
                       "--block-size and --device (or leave all three out: the block shape "
                       "alone applies)")
    gpu = common.resolve_gpu(args) if has_device else None
    latency_graph = graph
    if args.grid_size is not None and gpu is not None:
        from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
        seen = graph_for_launch(graph, given, block_size=args.block_size,
                                warp_size=args.warp_size or gpu.warp_size, gpu=gpu,
                                grid_size=args.grid_size, occupancy=args.occupancy,
                                shared_bytes_per_block=args.shared_mem)
        graph, latency_graph, notes = seen.graph, seen.latency_graph, list(seen.notes)
        from_block = sorted(set(seen.values) - set(given))
        values = dict(values, **seen.values)
    elif args.block_size is not None:
        from gpumodeler.core.kernel.graph_items import launch_guard_values
        from gpumodeler.core.kernel.sass.launch_shape import shaped_graph
        set_by_block = launch_guard_values(graph, given, block_dims(args.block_size),
                                           args.warp_size or 32)
        from_block = sorted(set_by_block)
        values.update(set_by_block)
        graph, notes = shaped_graph(graph, args.block_size, args.warp_size or 32)
        latency_graph = graph
    table_key, origin = common.choose_table(args.table, gpu, graph)
    bound = analyze(latency_graph, common.latency_table_for(table_key))
    counts = count(graph, args.warp_size or 32, not args.no_control_on_cuda_cores)
    numbers = counts.evaluate(values)
    lat = float(bound.evaluate(values))
    # values too large for the counts (a = 1e307) overflow: say so before any model runs
    common.require_finite({"latency_bound_cycles": lat,
                           "per_warp": {name: numbers[name] for name in COUNT_NAMES}})
    path = bound.critical_path(values)
    out = {
        "kernel": graph.name,
        "latency_table": table_key,
        "latency_table_origin": common.TABLE_ORIGIN_TEXT[origin],
        "variables": values,
        "latency_bound_cycles": lat,
        "latency_bound_formula": bound.formula(),
        "critical_path": {"text": path.describe(graph), "edges": list(path.edge_ids),
                          "instructions": list(path.node_ids),
                          "loops": {lid: list(p) for lid, p in path.loop_paths.items()}},
        "per_warp": {name: float(numbers[name]) for name in COUNT_NAMES},
        "per_warp_formula": {name: counts.formula(name) for name in COUNT_NAMES},
    }
    if args.json:  # (the text output does not show them: ~0.2 s on 10^5 instructions)
        out["memory_accesses"] = _memory_accesses(graph, args.warp_size or 32)
        # each loop's name says what its variable counts (an imported unrolled loop: the
        # source loop's trip count, or trips as compiled where the listing cannot show it)
        out["loops"] = [{"id": lp.id, "name": lp.name, "iterations": lp.iterations.text,
                         "trips": float(lp.iterations.evaluate(values))}
                        for lp in graph.loops.values()]
        if args.block_size is not None:
            out["block_size"] = list(block_dims(args.block_size))
            out["memory_notes"] = notes
            # the variables the launch's block set (guard shares, loop counts from the
            # block), and those a loop count to a kernel parameter set (with the block and
            # grid where the formula reads them), the rest being the graph's defaults or --set
            from gpumodeler.core.kernel.expressions import parse as parse_formula
            reads_parameter = {v for v in from_block if v in graph.block_trips and
                               parse_formula(graph.block_trips[v]).variables & set(
                                   graph.variables)}
            out["variables_from_block"] = [v for v in from_block if v not in reads_parameter]
            out["variables_from_parameters"] = sorted(reads_parameter)
    if has_device:  # (the models are imported only for a device: ~10 ms)
        from gpumodeler.core.models.gajger import worksheet_counts
        from gpumodeler.core.models.throughput import throughput_bound

        tb = _throughput_or_missing(out, gpu, lambda: throughput_bound(
            gpu, **worksheet_counts(numbers)))
        out["device"] = gpu.name
    if has_device and tb is not None:
        out["cycles_per_warp"] = tb.cycles_per_warp
        out["binding_resource"] = tb.binding
        out["throughput_bound_warps_per_cycle"] = tb.warps_per_cycle
        out["knee_occupancy_warps_per_sm"] = lat * tb.warps_per_cycle
    leave_to_exit(graph, latency_graph, bound, counts, path, out)  # plain data: freed at exit
    if args.json:
        # the writing is the check (print_json: the encoder refuses a number that is not
        # finite, and only then is the document walked to name it), not a walk first of
        # every memory access and critical-path item
        common.print_json(out)
        return 0
    common.require_finite(out)
    vals = ", ".join(f"{k}={v:g}" for k, v in values.items()) or "none"
    print(f"kernel        {graph.name} (latency table {out['latency_table']}, {out['latency_table_origin']}; variables {vals})")
    print(f"latency bound {out['latency_bound_formula']} = {lat:g} cycles")
    print(f"critical path {out['critical_path']['text']}")  # (described once, above)
    print("per warp:")
    for name in COUNT_NAMES:
        if counts.forms[name]:
            print(f"  {name:24} {counts.formula(name):>16} = {numbers[name]:g}")
    if has_device and "throughput_unavailable" in out:
        print(f"throughput on {out['device']}: not computed: {out['throughput_unavailable']}"
              + (f" (flag {out['throughput_needs']})" if out.get("throughput_needs") else ""))
    elif has_device:
        print(f"throughput on {out['device']} (cycles per warp per SM):")
        for r, v in out["cycles_per_warp"].items():
            mark = "  <- binds" if r == out["binding_resource"] else ""
            print(f"  {r:14} {v:10.4g}{mark}")
        print(f"throughput bound {out['throughput_bound_warps_per_cycle']:.6g} warps/cycle/SM; "
              f"latency-bound below {out['knee_occupancy_warps_per_sm']:.4g} warps/SM")
    return 0


def _throughput_or_missing(out: dict, gpu, worksheet):
    """The throughput worksheet, or None when the GPU lacks a value it needs (a field no
    source gave, e.g. the SM count of a B200): the latency bound and the counts need no
    device value, so only the throughput part is blanked, with the value and the flag that
    gives it (JSON keys ``throughput_unavailable`` and ``throughput_needs``)."""
    from gpumodeler.core.errors import InvalidParameter
    from gpumodeler.cli.main import flag_for_field
    try:
        return worksheet()
    except InvalidParameter as exc:
        flag = flag_for_field(getattr(exc, "item", None))
        if flag is None and "unknown" not in str(exc):
            raise  # a bad value, not a missing one: the command's one-line error
        out["device"] = gpu.name
        out["throughput_unavailable"] = str(exc)
        out["throughput_needs"] = flag
        return None


def _memory_accesses(graph, warp_size: int) -> list:
    """Each load/store's cost per warp-wide request (warp_counts.access_cost) and address."""
    from gpumodeler.core.kernel.warp_counts import access_costs
    return access_costs(graph, warp_size)
