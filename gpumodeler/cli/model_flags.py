"""`predict --model NAME|all`: the models side by side, their inputs and the kernel terms.

The flags here give the registry's :class:`~gpumodeler.core.models.result.ModelInputs`
what the launch, the graph and the device do not: the kernel-time switches (``--tail``,
``--no-underfill``, ``--launch-overhead``, ``--working-set``, ``--l2-bandwidth``,
``--l2-size``, ``--l1-size``) and each
model's own inputs. A model that still lacks an input is listed with the flag that gives it.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the models load when a prediction runs, not to parse flags
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.models.result import KernelTerms, ModelInputs

#: The registry's model names (core.models.registry.MODELS; a test keeps them equal), here so
#: that parsing flags does not load the models.
MODELS = ("gajger", "volkov-contention", "mwp-cwp", "bsp", "roofline")

from . import common
from gpumodeler.core.kernel.mma import TENSOR_CLASSES

from .main import FLAG_FOR_FIELD, CLIError

#: model parameter / core field -> the flag that sets it
FLAG_FOR_PARAMETER = {
    **FLAG_FOR_FIELD,
    **{f"tensor_{c}_macs_per_cycle_per_sm": f"--tensor-rate {c}=N" for c in TENSOR_CLASSES},
    "critical_dram_accesses": "--critical-dram-accesses",
    "contention_a_cycles": "--contention-a",
    "contention_b_cycles": "--contention-b", "contention_c_bytes_per_s": "--contention-c",
    "dram_latency_cycles": "--dram-latency", "dram_latency_model": "--dram-latency-model",
    "departure_delay_coal_cycles": "--departure-delay-coal",
    "departure_delay_uncoal_cycles": "--departure-delay-uncoal",
    "uncoalesced_share": "--uncoalesced-share",
    "departure_delay_cycles": "--departure-delay",
    "issue_cycles": "--issue-cycles", "memory_instructions": "--memory-instructions",
    "shared_instructions": "--shared-instructions", "synch_instructions": "--synch-instructions",
    "bsp_comp_cycles": "--bsp-comp", "bsp_lambda": "--bsp-lambda", "bsp_l1_hits": "--bsp-l1-hits",
    "bsp_l2_hits": "--bsp-l2-hits", "working_set_bytes": "--working-set",
    "l2_bandwidth_bytes_per_s": "--l2-bandwidth", "launch_overhead_s": "--launch-overhead",
    "l1_bytes_per_sm": "--l1-size", "l2_bytes": "--l2-size",
    "occupancy": "--occupancy", "issued_instructions": "--issued-instructions",
    "cuda_core_instructions": "--cuda-core-instructions", "lam": "--lambda",
}


def model_arg(text: str) -> str:
    name = str(text).strip().lower()
    if name != "all" and name not in MODELS:
        raise argparse.ArgumentTypeError(f"unknown model {text!r}; valid: {', '.join(MODELS)}, all")
    return name


def models_arg(text: str) -> tuple:
    """``NAME[,NAME]`` or ``all``: the models a sweep overlays."""
    names = [n.strip().lower() for n in str(text).split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"give model names ({', '.join(MODELS)}) or all")
    if "all" in names:
        return MODELS
    bad = [n for n in names if n not in MODELS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown model {', '.join(repr(n) for n in bad)}; valid: {', '.join(MODELS)}, "
                                         f"all (comma-separated)")
    return tuple(dict.fromkeys(names))


def add_term_flags(g) -> None:
    """The kernel-time switches (``predict``'s, also on ``sweep`` and ``project``)."""
    g.add_argument("--tail", action="store_true", help="quantise the last wave (Volkov §5.6-5.9)")
    g.add_argument("--no-underfill", action="store_true",
                   help="do not limit the occupancy by a grid smaller than one wave")
    g.add_argument("--launch-overhead", type=common.seconds_arg, metavar="S",
                   help="fixed time per kernel launch, e.g. 5us (a GPU parameter)")
    g.add_argument("--no-launch-overhead", action="store_true", help="leave the launch overhead out")


def _nonneg(text: str) -> float:
    value = common.float_arg(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return value


def add_model_flags(p: argparse.ArgumentParser, *, overlay: bool = False) -> None:
    """The model flags; ``overlay=True`` (``sweep``): ``--model NAME[,NAME]|all`` adds a time
    column per model instead of choosing one."""
    g = p.add_argument_group("models (--model; docs/models.md)")
    if overlay:
        g.add_argument("--model", type=models_arg, default=(), metavar="NAME[,NAME]|all",
                       help=f"add a column time_s_<model> per model ({', '.join(MODELS)}, or all)")
    else:
        g.add_argument("--model", type=model_arg, default=None, metavar="NAME",
                       help=f"{', '.join(MODELS)}, or all (default gajger)")
    add_term_flags(g)
    g.add_argument("--working-set", type=common.bytes_arg, metavar="BYTES",
                   help="bytes the L2 must hold between a read and its re-read, in place of the "
                        "working sets predict --graph works out for its reuse check "
                        "(docs/models.md)")
    g.add_argument("--l2-bandwidth", type=common.bandwidth_arg, metavar="B/S",
                   help="L2 bandwidth (the worksheet's l2 row, the roofline's L2 level)")
    g.add_argument("--l2-size", type=common.bytes_arg, metavar="BYTES",
                   help="the GPU's L2 cache, which holds the reuse across blocks and within a "
                        "block (docs/models.md); without it, for a GPU whose L2 size the "
                        "device database lacks, no reuse is credited")
    g.add_argument("--l1-size", type=common.bytes_arg, metavar="BYTES",
                   help="the SM's combined L1 data cache and shared memory, which holds the "
                        "reuse within a block where the L1 caches the loads (docs/models.md)")
    g.add_argument("--critical-dram-accesses", type=_nonneg, metavar="N",
                   help="DRAM accesses on the critical path (volkov-contention; from --graph)")
    g.add_argument("--contention-a", type=_nonneg, metavar="CYCLES",
                   help="Volkov §6.4 fit a, the unloaded latency (volkov-contention; with "
                        "--contention-b/-c; it replaces the table's DRAM latency, §6.5)")
    g.add_argument("--contention-b", type=_nonneg, metavar="CYCLES",
                   help="Volkov §6.4 fit b (volkov-contention; Table 6.5 GPUs have it)")
    g.add_argument("--contention-c", type=common.bandwidth_arg, metavar="B/S", help="Volkov §6.4 fit c")
    g.add_argument("--dram-latency", type=_nonneg, metavar="CYCLES", help="Mem_LD (mwp-cwp)")
    g.add_argument("--dram-latency-model", choices=("sanchez-gil-7.1",), default=None,
                   help="Mem_LD from Sánchez Gil's K40 regression (eq. 7.1: every thread loads "
                        "one address, so it measures contention) instead of the latency table")
    g.add_argument("--departure-delay", type=_nonneg, metavar="CYCLES",
                   help="Δ of both access kinds (mwp-cwp)")
    g.add_argument("--departure-delay-coal", type=_nonneg, metavar="CYCLES",
                   help="Δ between a coalesced access's transactions (mwp-cwp; GTX 280: 4)")
    g.add_argument("--departure-delay-uncoal", type=_nonneg, metavar="CYCLES",
                   help="Δ between an uncoalesced access's transactions (mwp-cwp; GTX 280: 40)")
    g.add_argument("--uncoalesced-share", type=_nonneg, metavar="W",
                   help="share of memory instructions that are uncoalesced, 0 to 1 (mwp-cwp; "
                        "default 0)")
    g.add_argument("--issue-cycles", type=_nonneg, metavar="CYCLES", help="Issue_cycles (mwp-cwp)")
    g.add_argument("--memory-instructions", type=_nonneg, metavar="N",
                   help="global/local memory instructions per warp (mwp-cwp, bsp; from --graph)")
    g.add_argument("--shared-instructions", type=_nonneg, metavar="N",
                   help="shared-memory instructions per warp (bsp; from --graph)")
    g.add_argument("--synch-instructions", type=_nonneg, metavar="N",
                   help="barriers per warp (mwp-cwp; from --graph)")
    g.add_argument("--bsp-comp", type=_nonneg, metavar="CYCLES", help="comp cycles per thread (bsp)")
    g.add_argument("--bsp-lambda", type=common.float_arg, metavar="λ", help="the BSP model's λ (default 1)")
    g.add_argument("--bsp-l1-hits", type=_nonneg, metavar="N", help="L1 hits per thread (bsp)")
    g.add_argument("--bsp-l2-hits", type=_nonneg, metavar="N", help="L2 hits per thread (bsp)")


def terms_of(args) -> KernelTerms:
    from gpumodeler.core.models.result import KernelTerms
    return KernelTerms(underfill=not args.no_underfill, tail=args.tail,
                       launch_overhead=not args.no_launch_overhead)


def gpu_with_term_values(args, gpu):
    """The GPU with --launch-overhead, --l2-bandwidth, --l2-size and --l1-size applied."""
    return gpu.with_overrides(launch_overhead_s=args.launch_overhead,
                              l2_bandwidth_bytes_per_s=args.l2_bandwidth,
                              l2_bytes=getattr(args, "l2_size", None),
                              l1_bytes_per_sm=getattr(args, "l1_size", None))


def graph_counts(args, values=None, gpu=None) -> dict:
    """Per-warp counts the models read beyond KernelInputs, from --graph (its latencies from
    --table, else ``gpu``'s table, else the graph's own)."""
    if not args.graph:
        return {}
    from gpumodeler.core.models.graph_inputs import graph_counts as counts_of
    graph = common.load_graph(args.graph)
    key, _ = common.choose_table(getattr(args, "table", None), gpu, graph)
    return counts_of(graph, dict(dict(args.set), **(values or {})), common.latency_table_for(key))


def model_inputs(args, gpu, kernel, grid, occupancy, *, with_counts: bool = True) -> ModelInputs:
    """The registry's inputs from the flags (``with_counts=False``: skip the graph counts,
    which only the other models read)."""
    from gpumodeler.core.models.result import ModelInputs
    return ModelInputs(gpu=gpu_with_term_values(args, gpu), kernel=kernel, grid_size=grid,
                       block_size=args.block_size, occupancy=float(occupancy),
                       lam=1.0 if args.lam is None else args.lam,
                       counts=graph_counts(args, gpu=gpu) if with_counts else {},
                       parameters=parameters_of(args), terms=terms_of(args))


def parameters_of(args) -> dict:
    """The models' own inputs given by flags (:data:`~gpumodeler.core.models.result.PARAMETERS`)."""
    params = {
        "critical_dram_accesses": args.critical_dram_accesses,
        "contention_a_cycles": getattr(args, "contention_a", None),
        "contention_b_cycles": args.contention_b, "contention_c_bytes_per_s": args.contention_c,
        "dram_latency_cycles": args.dram_latency, "departure_delay_cycles": args.departure_delay,
        "dram_latency_model": getattr(args, "dram_latency_model", None),
        "departure_delay_coal_cycles": getattr(args, "departure_delay_coal", None),
        "departure_delay_uncoal_cycles": getattr(args, "departure_delay_uncoal", None),
        "uncoalesced_share": getattr(args, "uncoalesced_share", None),
        "issue_cycles": args.issue_cycles, "memory_instructions": args.memory_instructions,
        "shared_instructions": args.shared_instructions, "synch_instructions": args.synch_instructions,
        "bsp_comp_cycles": args.bsp_comp, "bsp_lambda": args.bsp_lambda,
        "bsp_l1_hits": args.bsp_l1_hits, "bsp_l2_hits": args.bsp_l2_hits,
        "working_set_bytes": args.working_set,
    }
    return {k: v for k, v in params.items() if v is not None}


def error_text(exc: ModelError) -> str:
    flag = FLAG_FOR_PARAMETER.get(getattr(exc, "item", None) or "")
    return f"{exc} (flag {flag})" if flag and flag not in str(exc) else str(exc)


def entry(name: str, outcome, transfer_s: float) -> dict:
    from gpumodeler.core.models.result import ModelResult
    if isinstance(outcome, ModelResult):
        d = outcome.summary()
        d["kernel_time_s"] = d.pop("time_s")
        d["total_time_s"] = d["kernel_time_s"] + transfer_s
        return d
    return {"model": name, "error": error_text(outcome), "needs": FLAG_FOR_PARAMETER.get(
        getattr(outcome, "item", None) or "")}


def run_models(args, gpu, kernel, grid, occupancy, transfers, table=None, profiled=None) -> int:
    """`predict --model NAME|all`: one entry per model and the spread; ``table``: the
    latency table the graph was evaluated with (``latency_table``, ``latency_table_origin``);
    ``profiled``: a kernel from a profile (cli.predict_profile.Profiled), whose counts the
    models read and whose profile, baselines and notes the output adds."""
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.models.result import ModelResult
    from gpumodeler.core.models.registry import evaluate_all
    from gpumodeler.core.models.registry import spread
    inputs = model_inputs(args, gpu, kernel, grid, occupancy)
    if profiled is not None and profiled.counts:
        inputs = replace(inputs, counts={**profiled.counts, **inputs.counts})
    table = table or {"latency_table": None, "latency_table_origin": None}
    names = list(MODELS) if args.model == "all" else [args.model]
    try:
        results = evaluate_all(inputs, names)
    except ModelError as exc:
        raise CLIError(error_text(exc)) from None
    if len(names) == 1 and not isinstance(results[names[0]], ModelResult):
        raise CLIError(error_text(results[names[0]]))
    transfer_s = float(sum(t for t, _ in transfers))
    sp = spread(results)
    out = {"device": gpu.name, "occupancy_warps_per_sm": float(occupancy), **table,
           "transfer_times_s": [t for t, _ in transfers],
           "transfers": [{"direction": d, "bytes": n} for _, (d, n) in transfers],
           "models": [entry(n, results[n], transfer_s) for n in names],
           "spread": sp.summary() if sp else None}
    if profiled is not None:
        out.update(profiled.summary())
    for r in results.values():
        for w in getattr(r, "warnings", ()):
            print(f"warning: {w}", file=sys.stderr)
    if args.json:
        common.print_json(json_safe(out))
        return 0
    if profiled is not None:
        print("\n".join(profiled.header_lines()))
    print(f"device   {gpu.name}: {gpu.require('sms')} SMs at {gpu.require('sm_clock_hz') / 1e6:g} MHz; "
          f"occupancy {float(occupancy):g} warps/SM")
    if table["latency_table"] is not None:
        print(f"latency table {table['latency_table']} ({table['latency_table_origin']})")
    width = max(len(n) for n in names)
    for n in names:
        r = results[n]
        if isinstance(r, ModelResult):
            flag = "  (!) below the peak-rate floor" if r.warnings else ""
            print(f"{n:<{width}}  {common.fmt_time(r.time_s):>12}  {r.bound}-bound, limited by "
                  f"{r.binding_resource}{flag}")
            applied = [t.describe() for t in r.terms if t.applied]
            if applied:
                print(f"{'':<{width}}  terms: {'; '.join(applied)}")
        else:
            print(f"{n:<{width}}  {'—':>12}  not computed: {error_text(r)}")
    if sp and sp.models > 1:
        print(f"spread   {common.fmt_time(sp.min_s)} ({sp.fastest}) to {common.fmt_time(sp.max_s)} "
              f"({sp.slowest}): max/min {sp.ratio:.3g}")
    for t, (d, n) in transfers:
        arrow = "host->device" if d == "htod" else "device->host"
        print(f"transfer {arrow} {n:g} B: {common.fmt_time(t)}")
    if profiled is not None:
        print("\n".join(profiled.trailer_lines()))
    return 0


def json_safe(obj):
    """A copy with every non-finite float as None: JSON has no infinity or NaN, and a
    quantity that is infinite (e.g. the occupancy no finite number of warps reaches) is
    "none" rather than a number. Times never get here non-finite (core refuses them)."""
    import numpy as np
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and not np.isfinite(obj):
        return None
    return obj
