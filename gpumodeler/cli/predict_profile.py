"""`gpumodeler predict --profile FILE --kernel NAME --device OTHER_GPU`: a kernel profiled on
one GPU (nvprof, Nsight Compute or Nsight Systems) predicted on another (docs/measurements.md).

:func:`prepare_profiled` turns the profile into the kernel inputs and launch of ``predict``
(it fills ``--block-size``, ``--grid-size``, ``--registers`` and ``--shared-mem`` from the
profile where they are not given), and ``predict`` then runs exactly as for any kernel:
``--model`` (all included), ``--tail``, ``--launch-overhead``, the under-filled default and
``--lambda`` apply unchanged. The latency bound is derived on the profiled GPU with the same
kernel terms, so the prediction there reproduces the measured time.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import common, model_flags
from .main import CLIError

OVERRIDES = ("issued_instructions", "cuda_core_instructions", "gmem_bytes", "sfu_instructions",
             "fp64_instructions", "smem_bank_cycles")


def add_profile_flags(p) -> None:
    """--profile/--kernel/--profiled-device; --block-size becomes optional (from the profile)."""
    g = p.add_argument_group("profiled kernel (per-warp values from profiler metrics)")
    g.add_argument("--profile", action="append", default=[], metavar="FILE",
                   help="nvprof or Nsight Compute CSV, or an Nsight Systems SQLite export "
                        "(repeat: a GPU trace and a metrics file)")
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


@dataclass
class Profiled:
    """A kernel from a profile, ready for ``predict``: its inputs, the extra counts the
    other models read, and what the output adds (the profile, baselines, notes)."""

    inputs: object  # KernelInputs
    counts: dict  # per-warp counts for the registry's other models (memory_instructions...)
    table: dict  # latency_table / latency_table_origin
    extra: dict  # JSON keys added to the prediction
    header: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    baseline_lines: list = field(default_factory=list)

    def summary(self) -> dict:
        return dict(self.extra)

    def header_lines(self) -> list:
        return list(self.header)

    def trailer_lines(self) -> list:
        return list(self.baseline_lines) + [f"note     {n}" for n in self.notes]


def _same_gpu(a, b) -> bool:
    return a.name == b.name


def prepare_profiled(args) -> Profiled:
    """The profiled kernel's inputs for ``predict`` on ``--device``, with the launch flags
    filled from the profile (see the module docstring)."""
    from gpumodeler.core.measurements.profiled import architecture_notes, derive
    if not args.kernel:
        raise CLIError("--profile needs --kernel NAME (the kernel to predict)")
    if args.graph:
        raise CLIError("give --profile or --graph, not both")
    from .cmd_measure import read_file
    records = [r for path in args.profile for r in read_file(path).records]
    catalog = common.open_catalog()
    pk, profiled_gpu = _profiled(args, records, catalog)
    target = common.resolve_gpu(args)
    terms = model_flags.terms_of(args)
    # the profiled GPU with the flags' GPU values when it is the target itself
    on_profiled = (model_flags.gpu_with_term_values(args, profiled_gpu)
                   if _same_gpu(profiled_gpu, target) else profiled_gpu)
    derived = derive(
        pk, on_profiled, latency_bound=args.latency_bound, terms=terms,
        overrides={k: getattr(args, k, None) for k in OVERRIDES})
    inputs, estimate = derived.inputs, derived.estimate
    # the launch: the profile's unless given
    if args.block_size is None:
        args.block_size = pk.block[0] if len(pk.block) == 1 else pk.block
    if args.grid_size is None and args.data_size is None:
        args.grid_size = pk.grid[0] if len(pk.grid) == 1 else pk.grid
    if args.registers is None and args.occupancy is None:
        args.registers = pk.registers_per_thread
        if args.shared_mem is None:
            args.shared_mem = pk.shared_mem_bytes
        if args.registers is None:  # no registers in the profile: the achieved occupancy
            args.occupancy = derived.occupancy_profiled
    profiled_cc = profiled_gpu.compute_capability or pk.compute_capability
    arch = architecture_notes(profiled_cc, target.compute_capability or "")
    cross = bool(arch) and "unknown" not in arch[0]
    notes = arch + list(derived.notes)
    lam_profiled = estimate.lambda_on_profiled if estimate else None
    if args.lam is None and lam_profiled is not None and abs(lam_profiled - 1.0) > 1e-12:
        if cross:
            notes.append(f"λ on {profiled_gpu.name} is {lam_profiled:.4g} (faster than the "
                         f"throughput bound); not carried to another architecture (Gajger §4.4: "
                         f"recalibrate λ there)")
        else:
            args.lam = lam_profiled
            notes.append(f"λ = {lam_profiled:.4g} from the profiled GPU (the measured time is "
                         f"below the throughput bound; one λ per kernel holds within an "
                         f"architecture, Gajger §4.4)")
    profile = {
        "kernel": pk.name, "profiled_device": profiled_gpu.name,
        "profiled_compute_capability": profiled_cc,
        "target_compute_capability": target.compute_capability,
        "grid": list(pk.grid), "block": list(pk.block), "warps_launched": pk.warps_launched,
        "measured_time_s": pk.time_s, "timed_launches": pk.launches,
        "occupancy_warps_per_sm": derived.occupancy_profiled,
        "achieved_occupancy_warps_per_sm": derived.achieved_occupancy,
        "per_warp": dict(pk.counts), "sources": dict(pk.sources),
        "model_inputs": {k: v for k, v in inputs.__dict__.items()},
        "latency_rule": estimate.rule if estimate else "given with --latency-bound",
        "lambda_on_profiled": lam_profiled,
        "model_time_on_profiled_s": estimate.model_time_s if estimate else None,
    }
    extra = {"device": target.name, "latency_bound_cycles": float(inputs.latency_bound),
             "cross_architecture": cross, "notes": notes, "profile": profile}
    achieved = derived.achieved_occupancy
    header = [
        f"profile  {pk.name} on {profiled_gpu.name}: {pk.warps_launched} warps, measured "
        f"{common.fmt_time(pk.time_s) if pk.time_s else 'no time'} (median of {pk.launches}), "
        f"occupancy {derived.occupancy_profiled:.4g} warps/SM"
        + (f" (achieved {achieved:.4g})" if achieved is not None else ""),
        "         per warp: " + ", ".join(f"{k} {v:.4g}" for k, v in inputs.__dict__.items()
                                          if isinstance(v, (int, float))),
        f"         {profile['latency_rule']}",
    ]
    return Profiled(inputs=inputs, counts={}, table={"latency_table": None,
                                                      "latency_table_origin": None},
                    extra=extra, header=header, notes=notes)
