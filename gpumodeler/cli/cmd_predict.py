"""`gpumodeler predict`: kernel time and transfer times for one launch (MERPSYS expert mode)."""
from __future__ import annotations

import argparse
import re

import sys
from typing import TYPE_CHECKING

from . import common, model_flags
from .launch_args import grid_of, occupancy_of
from .main import CLIError
from .predict_learned import add_learned_flag, run_learned, run_learned_profile
from .predict_profile import add_profile_flags, prepare_profiled

if TYPE_CHECKING:  # the model is loaded when a prediction runs, not to parse flags
    from gpumodeler.core.models.gajger import KernelInputs


def dims_arg(text: str):
    """A size of 1 to 3 dimensions: 256, 16x16, 64x8x2."""
    parts = re.split("[xX×]", str(text))   # not lower(): 16M is not 16m
    if not 1 <= len(parts) <= 3:
        raise argparse.ArgumentTypeError(f"a size has 1 to 3 dimensions like 256 or 16x16, got {text!r}")
    dims = tuple(common.int_arg(p) for p in parts)
    return dims[0] if len(dims) == 1 else dims


def block_list_arg(text: str):
    """A sweep's blocks: a list or range of thread counts, or one shape ``16x16`` (a tuple,
    the memory accesses of a block narrower than a warp: core.kernel.sass.launch_shape)."""
    if re.search("[xX×]", str(text)):
        if "," in str(text) or ":" in str(text):
            raise argparse.ArgumentTypeError(f"a block shape is one value like 16x16, not a list "
                                             f"(a list or range is of thread counts); got {text!r}")
        dims = dims_arg(text)
        return dims if isinstance(dims, tuple) else [dims]
    return common.list_of(common.int_arg)(text)


def add_kernel_flags(p: argparse.ArgumentParser, *, lists: bool = False) -> None:
    t = common.list_of if lists else (lambda f: f)
    g = p.add_argument_group("kernel (per warp; explicit flags override --graph)")
    g.add_argument("--graph", metavar="KERNEL.json", help="derive the per-warp values from a kernel graph")
    g.add_argument("--set", type=common.set_arg, action="append", default=[], metavar="NAME=VALUE",
                   help="a variable of the graph's loops, e.g. --set a=128 (repeatable)")
    g.add_argument("--table", "--latency-table", dest="table", metavar="KEY",
                   help="latency table of --graph (default: the GPU's own, else the graph's)")
    g.add_argument("--latency-bound", type=t(common.float_arg), metavar="CYCLES")
    g.add_argument("--cuda-core-instructions", type=t(common.float_arg), metavar="N")
    g.add_argument("--issued-instructions", type=t(common.float_arg), metavar="N")
    g.add_argument("--gmem-bytes", type=t(common.float_arg), metavar="BYTES", help="global-memory bytes per warp")
    g.add_argument("--sfu-instructions", type=common.float_arg, metavar="N")
    g.add_argument("--fp64-instructions", type=common.float_arg, metavar="N")
    g.add_argument("--smem-bank-cycles", type=common.float_arg, metavar="N",
                   help="shared-memory accesses weighted by bank-conflict degree")
    la = p.add_argument_group("launch")
    la.add_argument("--grid-size", type=dims_arg if not lists else common.list_of(common.int_arg),
                    help="blocks in the grid (256, or 100x100)")
    la.add_argument("--data-size", type=t(common.int_arg), metavar="N",
                    help="threads to cover; grid = ceil(N / block size)")
    la.add_argument("--block-size", type=dims_arg if not lists else block_list_arg,
                    required=not lists,
                    help="threads per block (256, or 16x16)" if not lists else
                    "threads per block: a list or range (128,256 or 64:1024:64), or one "
                    "block shape (16x16)")
    la.add_argument("--occupancy", type=t(common.float_arg), metavar="WARPS",
                    help="active warps per SM; or give --registers to compute it")
    la.add_argument("--registers", type=t(common.int_arg), metavar="N",
                    help="registers per thread (occupancy from the calculator)")
    la.add_argument("--shared-mem", type=t(common.bytes_arg), default=None, metavar="BYTES",
                    help="shared memory per block, static + dynamic (with --registers)")
    la.add_argument("--lambda", dest="lam", type=t(common.float_arg), default=None, metavar="λ",
                    help="kernel scaling parameter λ (eq. 4.1; default 1)")


def table_of(args, graph, gpu=None) -> tuple[str | None, str]:
    """(latency table key, origin) of --graph on ``gpu``: --table, else the GPU's own, else
    the graph's (core.kernel.latency_tables.choose_table)."""
    return common.choose_table(getattr(args, "table", None), gpu, graph)


def kernel_inputs(args, values=None, gpu=None) -> KernelInputs:
    """KernelInputs from --graph (with --set) overridden by explicit flags. The graph is
    evaluated with --table, else ``gpu``'s latency table, else the graph's own."""
    from gpumodeler.core.errors import GraphError
    from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
    from gpumodeler.core.models.gajger import KernelInputs, kernel_inputs_from_graph
    base = {}
    if args.graph:
        graph = common.load_graph(args.graph)
        common.launch_defaults_from_graph(args, graph)
        vals = dict(args.set)
        if values:
            vals.update(values)
        block = getattr(args, "block_size", None)
        if block:   # guards, block shape, and with a GPU the reuse across blocks and L2 fit
            launch = graph_for_launch(graph, vals, block_size=block,
                                      warp_size=gpu.warp_size if gpu is not None else 32,
                                      **_wave_of(args, gpu, block))
            graph, vals = launch.graph, launch.values
            args.memory_notes = list(getattr(args, "memory_notes", None) or []) + list(launch.notes)
        from gpumodeler.core.kernel.graph_items import loops_at_default
        args.loops_at_default = loops_at_default(graph, vals)
        key, origin = table_of(args, graph, gpu)
        try:
            derived = kernel_inputs_from_graph(graph, vals, table=common.latency_table_for(key))
        except GraphError as exc:
            if origin != "gpu" or not graph.latency_table:
                raise
            raise CLIError(f"{exc}, or evaluate the graph with its own table "
                           f"(--table {graph.latency_table})") from None
        base = dict(derived.__dict__)
        common.require_finite(base)   # loop counts of huge variables overflow
    flags = {
        "latency_bound": args.latency_bound, "issued_instructions": args.issued_instructions,
        "cuda_core_instructions": args.cuda_core_instructions, "gmem_bytes": args.gmem_bytes,
        "sfu_instructions": args.sfu_instructions, "fp64_instructions": args.fp64_instructions,
        "smem_bank_cycles": args.smem_bank_cycles,
    }
    given = {k: v for k, v in flags.items() if v is not None}
    if "cuda_core_instructions" in given:   # the given total replaces the graph's pipe mix
        base["pipe_instructions"] = None
    if "issued_instructions" in given:      # taken as the issue count, dual issues included
        base["dual_issues"] = 0.0
    base.update(given)
    missing = [f"--{k.replace('_', '-')}" for k in ("latency_bound", "issued_instructions")
               if base.get(k) is None]
    if missing:
        raise CLIError(f"give {' and '.join(missing)} (or --graph KERNEL.json)")
    return KernelInputs(**base)


def _wave_of(args, gpu, block) -> dict:
    """The launch values :func:`~gpumodeler.core.kernel.sass.launch_memory.graph_for_launch`
    needs for the reuse across blocks ({} without a GPU: the block shape alone applies)."""
    if gpu is None:
        return {}
    occ, _ = occupancy_of(args, gpu, block)
    return {"gpu": gpu, "grid_size": grid_of(args, block), "occupancy": float(occ),
            "working_set_bytes": getattr(args, "working_set", None),
            "shared_bytes_per_block": getattr(args, "shared_mem", None) or None}


def table_used(args, gpu) -> dict:
    """``{"latency_table": key, "latency_table_origin": text}`` of the table --graph was
    evaluated with (both None without --graph): said in every prediction, text and JSON."""
    if not args.graph:
        return {"latency_table": None, "latency_table_origin": None}
    key, origin = table_of(args, common.load_graph(args.graph), gpu)
    return {"latency_table": key, "latency_table_origin": common.TABLE_ORIGIN_TEXT[origin]}


def register(sub) -> None:
    p = sub.add_parser("predict", help="kernel and transfer times for one launch",
                       description="Predict kernel time (Gajger eq. 4.1-4.7) and transfer times "
                                   "(eq. 5.5) from device, kernel and launch parameters.")
    common.add_device_flags(p)
    add_kernel_flags(p)
    common.add_link_flags(p)
    model_flags.add_model_flags(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_profile_flags(p)
    add_learned_flag(p)
    p.set_defaults(func=run)


def apply_terms(summary: dict, gajger, clock_hz: float) -> None:
    """The kernel terms of the gajger model in the default output: its kernel time (eq. 4.1
    where no term applies, so the numbers are unchanged), the terms and any warning."""
    extra = gajger.time_s - summary["kernel_time_s"]
    if any(t.applied for t in gajger.terms):
        # one kernel time: the seconds and the cycles both with the terms (the cycles, as
        # everywhere, before the launch overhead: time = cycles / clock + overhead)
        summary["kernel_time_s"] = gajger.time_s
        summary["kernel_time_cycles"] = gajger.time_cycles
        summary["total_time_s"] = summary["total_time_s"] + extra
        summary["mode"], summary["limiting_resource"] = gajger.bound, gajger.binding_resource
        summary["warp_throughput"] = gajger.quantities["warp_throughput"]
        limited = gajger.quantities.get("occupancy_limited_by_grid")
        summary["occupancy_limited_by_grid"] = limited
        if limited is not None:
            summary["latency_throughput"] = limited / gajger.quantities["latency_bound_cycles"]
    # as project predict gives them: kernel_time_s = kernel_time_cycles / clock + overhead
    summary["eq_4_1_time_s"] = gajger.quantities["eq_4_1_cycles"] / clock_hz
    summary["launch_overhead_s"] = next(
        (t.delta_s for t in gajger.terms if t.name == "launch overhead" and t.applied), 0.0)
    summary["terms"] = [t.describe() for t in gajger.terms]
    summary["warnings"] = list(gajger.warnings)
    for key in ("memory_bandwidth_bytes_per_s", "memory_bandwidth_kind",
                "memory_bandwidth_peak_bytes_per_s", "memory_parallelism"):
        if key in gajger.quantities:  # the DRAM bandwidth used, its ceiling, Little's law
            summary[key] = gajger.quantities[key]
    for w in gajger.warnings:
        print(f"warning: {w}", file=sys.stderr)


def run(args) -> int:
    import numpy as np

    from gpumodeler.core.launch_limits import check_launch
    from gpumodeler.core.models.gajger import predict
    from gpumodeler.core.models.registry import evaluate
    from gpumodeler.core.models.sanity import check_occupancy
    if args.profile and args.learned:
        return run_learned_profile(args)
    profiled = prepare_profiled(args) if args.profile else None  # sets the launch's flags
    if args.block_size is None:
        raise CLIError("give --block-size THREADS (or --profile FILE --kernel NAME)")
    gpu = model_flags.gpu_with_term_values(args, common.resolve_gpu(args))  # --l2-bandwidth
    link = common.resolve_link(args)
    inputs = profiled.inputs if profiled is not None else kernel_inputs(args, gpu=gpu)
    grid = grid_of(args, args.block_size)
    check_launch(grid, args.block_size, gpu.compute_capability)
    occ, occ_result = occupancy_of(args, gpu, args.block_size)
    check_occupancy(gpu, occ)
    if args.learned:
        kernel = re.sub(r"\.json$", "", args.graph.replace("\\", "/").rsplit("/", 1)[-1]) if args.graph else ""
        return run_learned(args, gpu, inputs, grid, occ,
                           model_flags.model_inputs(args, gpu, inputs, grid, occ), kernel)
    if args.model is None:  # the default model: checked (and its kernel terms) first
        gajger = evaluate("gajger", model_flags.model_inputs(args, gpu, inputs, grid, occ, with_counts=False))
    with np.errstate(over="ignore", divide="ignore"):
        result = predict(gpu, inputs, grid_size=grid, block_size=args.block_size, occupancy=occ,
                         lam=1.0 if args.lam is None else args.lam, link=link,
                         transfers=common.transfer_list(args))
    table = profiled.table if profiled is not None else table_used(args, gpu)
    if args.model is not None:
        return model_flags.run_models(args, gpu, inputs, grid, occ,
                                      list(zip(result.transfer_times_s, result.transfers)),
                                      table=table, profiled=profiled)
    summary = result.summary()
    apply_terms(summary, gajger, gpu.require("sm_clock_hz"))
    summary["device"] = gpu.name
    summary["occupancy_warps_per_sm"] = occ
    summary["latency_bound_cycles"] = float(inputs.latency_bound)
    summary.update(table)
    summary["memory_notes"] = list(getattr(args, "memory_notes", None) or [])
    summary["loops_at_default"] = list(getattr(args, "loops_at_default", None) or [])
    if summary["loops_at_default"] and not args.json:  # (--json: the key says it)
        print(f"note: {common.loops_note(summary['loops_at_default'])}", file=sys.stderr)
    if occ_result is not None:
        summary["occupancy_limited_by"] = list(occ_result.limited_by)
    if profiled is not None:
        summary.update(profiled.summary())
    common.require_finite(summary)
    if args.json:
        common.print_json(summary)
        return 0
    s = summary
    if profiled is not None:
        print("\n".join(profiled.header_lines()))
    print(f"device   {gpu.name}: {gpu.require('sms')} SMs at {gpu.require('sm_clock_hz') / 1e6:g} MHz")
    print(f"kernel   {common.fmt_time(s['kernel_time_s'])}  ({s['mode']}-bound, limited by "
          f"{s['limiting_resource']}; λ = {s['lambda']:g})")
    occ_shown = s.get("occupancy_limited_by_grid") or occ
    print(f"         {s['warps_launched']:g} warps; warp throughput {s['warp_throughput']:.6g} warps/cycle/SM "
          f"= min(occupancy {occ_shown:g} / latency bound {s['latency_bound_cycles']:g}, "
          f"throughput bound {s['throughput_bound']:.6g})")
    applied = [t.describe() for t in gajger.terms if t.applied]
    if applied:
        print(f"         terms: {'; '.join(applied)} (eq. 4.1 alone: "
              f"{common.fmt_time(gajger.quantities['eq_4_1_cycles'] / gpu.require('sm_clock_hz'))})")
    cpw = ", ".join(f"{r} {v:.4g}" for r, v in s["cycles_per_warp"].items() if v)
    print(f"         cycles per warp: {cpw}")
    if s.get("memory_bandwidth_bytes_per_s"):
        peak = s.get("memory_bandwidth_peak_bytes_per_s")
        print(f"         global memory at {s['memory_bandwidth_bytes_per_s'] / 1e9:.4g} GB/s "
              f"({s['memory_bandwidth_kind']}" + (f"; peak {peak / 1e9:.4g} GB/s, the ceiling)"
                                                  if peak else ")"))
    for note in s["memory_notes"]:
        print(f"         memory: {note}")
    if table["latency_table"] is not None:
        print(f"         latency table {table['latency_table']} ({table['latency_table_origin']})")
    print(f"         the mode changes at occupancy {s['knee_occupancy']:.4g} warps/SM")
    for t, tr in zip(s["transfer_times_s"], s["transfers"]):
        arrow = "host->device" if tr["direction"] == "htod" else "device->host"
        print(f"transfer {arrow} {tr['bytes']:g} B: {common.fmt_time(t)}")
    print(f"total    {common.fmt_time(s['total_time_s'])}")
    if profiled is not None:
        print("\n".join(profiled.trailer_lines()))
    return 0
