"""`gpumodeler predict --profile FILE --kernel NAME --device OTHER_GPU`: a kernel profiled on
one GPU (nvprof or Nsight Compute) predicted on another (docs/measurements.md)."""
from __future__ import annotations


from . import common
from .launch_args import grid_of, occupancy_of
from .main import CLIError

OVERRIDES = ("issued_instructions", "cuda_core_instructions", "gmem_bytes", "sfu_instructions",
             "fp64_instructions", "smem_bank_cycles")


def add_profile_flags(p) -> None:
    """--profile/--kernel/--profiled-device; --block-size becomes optional (from the profile)."""
    g = p.add_argument_group("profiled kernel (per-warp values from profiler metrics)")
    g.add_argument("--profile", action="append", default=[], metavar="FILE",
                   help="nvprof or Nsight Compute CSV (repeat: a GPU trace and a metrics file)")
    g.add_argument("--kernel", metavar="NAME", help="the profiled kernel (name without arguments "
                                                     "or a unique part of it)")
    g.add_argument("--profiled-device", metavar="NAME",
                   help="the GPU the profile was taken on (default: the file's device name)")
    for action in p._actions:  # the launch comes from the profile unless given
        if action.dest == "block_size":
            action.required = False


def _lookup(catalog, name):
    """The catalog entry of a GPU as a profiler names it (``NVIDIA GeForce ...`` too)."""
    from gpumodeler.core.errors import ModelError
    for candidate in (name, name[len("NVIDIA "):] if name.startswith("NVIDIA ") else None):
        if candidate:
            try:
                return catalog.get(candidate)
            except ModelError:
                pass
    return None


def _profiled(args, records, catalog):
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.measurements.profiled import profile_kernel
    try:
        pk = profile_kernel(records, args.kernel, gpu=args.profiled_device)
    except ModelError as exc:
        entry = _lookup(catalog, args.profiled_device) if args.profiled_device else None
        if entry is None or "was not profiled on" not in str(exc):
            raise
        pk = profile_kernel(records, args.kernel, gpu=entry.to_gpu_spec().name)
    name = args.profiled_device or pk.gpu
    entry = _lookup(catalog, name) if name else None
    if entry is None:
        raise CLIError(f"the profiled GPU {name or '(unnamed)'!r} is not in the device database; "
                       f"give --profiled-device NAME (see gpumodeler devices list)")
    return pk, entry.to_gpu_spec()


def run_profiled(args) -> int:
    from gpumodeler.core.measurements.profiled import architecture_notes
    from gpumodeler.core.measurements.profiled import derive
    from gpumodeler.core.models.gajger import predict
    if not args.kernel:
        raise CLIError("--profile needs --kernel NAME (the kernel to predict)")
    if args.graph:
        raise CLIError("give --profile or --graph, not both")
    from .cmd_measure import read_file
    records = [r for path in args.profile for r in read_file(path).records]
    catalog = common.open_catalog()
    pk, profiled_gpu = _profiled(args, records, catalog)
    derived = derive(pk, profiled_gpu, latency_bound=args.latency_bound,
                     overrides={k: getattr(args, k, None) for k in OVERRIDES})
    inputs, estimate, occ_profiled = derived.inputs, derived.estimate, derived.occupancy_profiled
    target = common.resolve_gpu(args)
    block = args.block_size if args.block_size is not None else (
        pk.block[0] if len(pk.block) == 1 else pk.block)
    if args.grid_size is None and args.data_size is None:
        grid = pk.grid[0] if len(pk.grid) == 1 else pk.grid
    else:
        grid = grid_of(args, block)
    if args.registers is None and args.occupancy is None:
        args.registers = pk.registers_per_thread
        if args.shared_mem is None:
            args.shared_mem = pk.shared_mem_bytes
    from gpumodeler.core.launch_limits import check_launch

    check_launch(grid, block, target.compute_capability)
    occ, occ_result = occupancy_of(args, target, block)
    result = predict(target, inputs, grid_size=grid, block_size=block, occupancy=occ,
                     lam=1.0 if args.lam is None else args.lam, link=common.resolve_link(args),
                     transfers=common.transfer_list(args))
    arch = architecture_notes(profiled_gpu.compute_capability or pk.compute_capability,
                              target.compute_capability or "")
    notes = arch + list(derived.notes)
    s = result.summary()
    s.update({
        "device": target.name, "occupancy_warps_per_sm": occ,
        "latency_bound_cycles": float(inputs.latency_bound),
        "cross_architecture": bool(arch) and "unknown" not in arch[0],
        "notes": notes,
        "profile": {
            "kernel": pk.name, "profiled_device": profiled_gpu.name,
            "profiled_compute_capability": profiled_gpu.compute_capability or pk.compute_capability,
            "target_compute_capability": target.compute_capability,
            "grid": list(pk.grid), "block": list(pk.block), "warps_launched": pk.warps_launched,
            "measured_time_s": pk.time_s, "timed_launches": pk.launches,
            "achieved_occupancy_warps_per_sm": occ_profiled,
            "per_warp": dict(pk.counts), "sources": dict(pk.sources),
            "model_inputs": {k: v for k, v in inputs.__dict__.items()},
            "latency_rule": estimate.rule if estimate else "given with --latency-bound",
            "lambda_on_profiled": estimate.lambda_on_profiled if estimate else None,
        },
    })
    if occ_result is not None:
        s["occupancy_limited_by"] = list(occ_result.limited_by)
    common.require_finite(s)
    if args.json:
        common.print_json(s, checked=True)
        return 0
    prof = s["profile"]
    print(f"profile  {pk.name} on {profiled_gpu.name}: {pk.warps_launched} warps, measured "
          f"{common.fmt_time(pk.time_s) if pk.time_s else 'no time'} "
          f"(median of {pk.launches}), occupancy {occ_profiled:.4g} warps/SM")
    print("         per warp: " + ", ".join(
        f"{k} {v:.4g}" for k, v in inputs.__dict__.items() if isinstance(v, (int, float))))
    print(f"         {prof['latency_rule']}")
    print(f"device   {target.name}: {target.require('sms')} SMs at "
          f"{target.require('sm_clock_hz') / 1e6:g} MHz, occupancy {occ:g} warps/SM")
    print(f"kernel   {common.fmt_time(s['kernel_time_s'])}  ({s['mode']}-bound, limited by "
          f"{s['limiting_resource']}; λ = {s['lambda']:g})")
    for t, tr in zip(s["transfer_times_s"], s["transfers"]):
        print(f"transfer {tr['direction']} {tr['bytes']:g} B: {common.fmt_time(t)}")
    print(f"total    {common.fmt_time(s['total_time_s'])}")
    for n in notes:
        print(f"note     {n}")
    return 0
