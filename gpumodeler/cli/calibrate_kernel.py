"""`gpumodeler calibrate kernel`: λ of one kernel on one GPU from imported launches.

Each measured launch of the kernel is predicted at λ = 1 with its own grid, block and
occupancy (from its registers and shared memory, or --occupancy), with per-warp inputs from
--graph (and --set) or the explicit per-warp flags; λ is fitted by eq. 4.4 (least squares)
with leave-one-out over launch sizes (core/transfers/lambda_fit.py).

With --project FILE --launch NAME the GPU, kernel graph, variables and expert-mode inputs
come from that launch of a project, evaluated like the launch panel (core/pipeline.py,
evaluate_launch) with each measured launch's grid, block, registers and shared memory; the
data size N of a measured launch is its thread count (grid × block).
"""
from __future__ import annotations

import math



from . import common
from .calibrate_link import load_records
from .main import CLIError


def add_flags(k) -> None:
    k.add_argument("--measurements", metavar="FILE", required=True,
                   help="measured launches: JSON records (measure import --json) or a profiler CSV")
    k.add_argument("--kernel", metavar="NAME", required=True,
                   help="the kernel's name in the file (a demangled name's prefix is enough)")
    k.add_argument("--gpu", metavar="NAME", help="the launches of this GPU, when the file has several")
    p = k.add_argument_group("from a project launch (instead of --device/--graph)")
    p.add_argument("--project", metavar="FILE.gpm", help="a gpumodeler project")
    p.add_argument("--launch", metavar="NAME", help="the launch (id or name) to calibrate")
    common.add_device_flags(k)
    g = k.add_argument_group("kernel (per warp; explicit flags override --graph)")
    g.add_argument("--graph", metavar="KERNEL.json", help="per-warp values from a kernel graph")
    g.add_argument("--set", type=common.set_arg, action="append", default=[], metavar="NAME=VALUE")
    for flag in ("latency-bound", "issued-instructions", "cuda-core-instructions", "gmem-bytes",
                 "sfu-instructions", "fp64-instructions", "smem-bank-cycles"):
        g.add_argument(f"--{flag}", type=common.float_arg, metavar="N")
    k.add_argument("--occupancy", type=common.float_arg, metavar="WARPS",
                   help="active warps per SM for every launch (default: from each launch's "
                        "registers and shared memory)")
    k.add_argument("--weighting", choices=("relative", "absolute"), default="relative")


def _matches(name: str, wanted: str) -> bool:
    return name == wanted or (name.startswith(wanted) and name[len(wanted)] in "(< ")


def kernel_launches(records, kernel: str, gpu: str | None):
    # records without a duration carry metrics only (nvprof --metrics, ncu): not launches timed
    launches = [r for r in records if r.kind == "kernel" and r.time_s is not None]
    if not launches:
        raise CLIError(f"no timed kernel launches among the {len(records)} measurement(s)")
    chosen = [r for r in launches if _matches(r.name, kernel)]
    if not chosen:
        names = sorted({r.name for r in launches})
        raise CLIError(f"no launches of kernel {kernel!r}; the file has "
                       f"{', '.join(names[:5])}{' ...' if len(names) > 5 else ''}")
    gpus = sorted({r.gpu for r in chosen if r.gpu})
    if gpu is None and len(gpus) > 1:
        raise CLIError(f"kernel {kernel!r} was measured on several GPUs ({', '.join(gpus)}); "
                       "choose one with --gpu")
    if gpu is not None:
        chosen = [r for r in chosen if r.gpu in (gpu, "")]
        if not chosen:
            raise CLIError(f"no launches of {kernel!r} on GPU {gpu!r} (found {', '.join(gpus)})")
    return chosen


_PER_WARP = ("graph", "latency_bound", "issued_instructions", "cuda_core_instructions",
             "gmem_bytes", "sfu_instructions", "fp64_instructions", "smem_bank_cycles")


def _project_estimator(args, notes: list):
    """(GPU name, estimate(record) -> λ = 1 time) from --project/--launch."""
    from .cmd_project import pick_launches
    if args.launch is None:
        raise CLIError("--project needs --launch NAME (the launch to calibrate)")
    given = [f"--{a.replace('_', '-')}" for a in _PER_WARP + ("device", "sms", "sm_clock_mhz",
                                                             "cuda_cores", "cc")
             if getattr(args, a, None) is not None]
    if given or args.set:
        raise CLIError(f"with --project the launch gives the GPU and the kernel; drop "
                       f"{', '.join(given + (['--set'] if args.set else []))}")
    project, _ = common.read_project(args.project)
    [launch_id] = pick_launches(project, args.launch)
    base = project.launches[launch_id]
    gpu_name = project.devices[base.gpu].device_name if base.gpu in project.devices else None
    if gpu_name is None:
        raise CLIError(f"launch {base.name!r} has no GPU; choose one in the launch panel")
    from gpumodeler.core.measurements.launch_lambda import launch_estimator
    catalog = common.open_catalog()
    estimate, missing_registers = launch_estimator(project, launch_id, occupancy=args.occupancy,
                                                   **common.catalog_lookups(catalog))

    def finish():
        catalog.close()
        if missing_registers:
            notes.append(f"{len(missing_registers)} launch(es) without registers per thread "
                         f"(first: {missing_registers[0]}) used the launch's {base.registers}")
    return gpu_name, estimate, finish


def _flag_estimator(args):
    from gpumodeler.core.models.gajger import predict
    from gpumodeler.core.transfers.selection import where
    from .cmd_predict import kernel_inputs
    gpu = common.resolve_gpu(args)
    inputs = kernel_inputs(args)

    def estimate(r) -> float:
        threads = math.prod(r.block)
        if args.occupancy is not None:
            occ = args.occupancy
        else:
            if r.registers_per_thread is None:
                raise CLIError(f"{where(r)}: registers per thread are unknown; give --occupancy WARPS")
            if not gpu.compute_capability:
                raise CLIError("computing occupancy needs the compute capability: give --cc or --device")
            from gpumodeler.core.occupancy.calculator import occupancy
            occ = occupancy(gpu.compute_capability, threads, r.registers_per_thread,
                            int(r.shared_mem_bytes or 0)).active_warps_per_sm
        p = predict(gpu, inputs, grid_size=tuple(r.grid), block_size=tuple(r.block),
                    occupancy=occ, lam=1.0)
        return float(p.kernel.time_s)
    return gpu.name, estimate, lambda: None


def kernel_result(args):
    """(report dict, KernelLambdaFit, GPU name)."""
    from gpumodeler.core.measurements.launch_lambda import fit_launches, kernel_report
    records = load_records(args.measurements)
    launches = kernel_launches(records, args.kernel, args.gpu)
    notes: list[str] = []
    if args.project is not None:
        gpu_name, estimate, finish = _project_estimator(args, notes)
    elif args.launch is not None:
        raise CLIError("--launch needs --project FILE.gpm")
    else:
        gpu_name, estimate, finish = _flag_estimator(args)
    try:
        fitted = fit_launches(launches, estimate, weighting=args.weighting)
    finally:
        finish()
    return kernel_report(args.kernel, gpu_name, args.weighting, fitted, notes), fitted[0], gpu_name


def print_kernel(out: dict) -> None:
    print(f"{'kernel':24} {out['kernel']} on {out['gpu']} ({out['launches']} launches)")
    print(f"{'lambda':24} {out['lambda']:.6g}")
    print(f"{'in-sample error':24} {out['mape_percent']:.3g} %")
    if out["loo_mape"] is not None:
        print(f"{'leave-one-out error':24} mean {out['loo_mape']:.3g} %, median "
              f"{out['loo_median_ape']:.3g} %")
    for note in out["notes"]:
        print(f"{'note':24} {note}")
    if out["warning"]:
        print(f"warning: {out['warning']}")
    print("threads         measured          predicted         residual")
    for r in out["residuals"]:
        print(f"{r['threads']:<15.6g} {common.fmt_time(r['measured_s']):17} "
              f"{common.fmt_time(r['predicted_s']):17} {r['relative_residual'] * 100:+.3g} %")
