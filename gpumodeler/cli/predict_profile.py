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

from dataclasses import dataclass, field, replace

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
    from gpumodeler.core.measurements.profiled import architecture_notes, baselines, derive
    if not args.kernel:
        raise CLIError("--profile needs --kernel NAME (the kernel to predict)")
    from .cmd_measure import read_file
    records = [r for path in args.profile for r in read_file(path).records]
    catalog = common.open_catalog()
    pk, profiled_gpu = _profiled(args, records, catalog)
    target = common.resolve_gpu(args)
    terms = model_flags.terms_of(args)
    # the profiled GPU with the flags' GPU values when it is the target itself
    on_profiled = (model_flags.gpu_with_term_values(args, profiled_gpu)
                   if _same_gpu(profiled_gpu, target) else profiled_gpu)
    graph_part = _graph_counts(args, pk, profiled_gpu, target) if args.graph else None
    derived = derive(
        pk, on_profiled, latency_bound=args.latency_bound, terms=terms,
        overrides={k: getattr(args, k, None) for k in OVERRIDES},
        counts=graph_part["on_profiled"] if graph_part else None)
    inputs, estimate = derived.inputs, derived.estimate
    profiled_cc = profiled_gpu.compute_capability or pk.compute_capability
    arch = architecture_notes(profiled_cc, target.compute_capability or "")
    cross = bool(arch) and "unknown" not in arch[0]
    notes = arch + list(derived.notes)
    retargeted = None
    table = {"latency_table": None, "latency_table_origin": None}
    if graph_part is not None:
        inputs, table = _graph_on_target(args, inputs, graph_part, profiled_gpu, notes)
    elif cross and estimate is not None:
        retargeted = _retarget(args, pk, inputs, profiled_gpu, target)
        if retargeted is not None:
            inputs = replace(inputs, latency_bound=retargeted.latency_bound_cycles)
            notes.append(retargeted.note)
    _launch_from_profile(args, pk, derived)
    lam_profiled = estimate.lambda_on_profiled if estimate else None
    _lambda_from_profile(args, lam_profiled, cross, profiled_gpu, notes)
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
        "latency_bound_on_profiled_cycles": derived.inputs.latency_bound,
        "latency_retarget_ratio": retargeted.ratio if retargeted else None,
    }
    base = baselines(pk, profiled_gpu, target)
    extra = {"device": target.name, "latency_bound_cycles": float(inputs.latency_bound),
             "cross_architecture": cross, "notes": notes, "profile": profile,
             "baselines": base or None}
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
    lines = []
    if base:
        lines.append(
            f"baseline measured {common.fmt_time(pk.time_s)} × bandwidth ratio: "
            f"{common.fmt_time(base['bandwidth_ratio_s'])}; × FP32-peak ratio: "
            f"{common.fmt_time(base['flop_ratio_s'])} ({base['bound']}-bound at the profiled "
            f"GPU's peak rates: {common.fmt_time(base['bound_ratio_s'])})")
    counts, count_notes = model_counts_of(pk)
    if args.model is not None:
        notes.extend(count_notes)
    return Profiled(inputs=inputs, counts=counts, table=table, extra=extra, header=header,
                    notes=notes, baseline_lines=lines)


def _graph_on_target(args, inputs, graph_part, profiled_gpu, notes):
    """(inputs, latency table) of ``--graph`` on the target: its counts there, calibrated by
    the profile, and its latency bound scaled by what the profile measured over what the
    graph gives on the profiled GPU (or --latency-bound)."""
    notes.extend(graph_part["notes"])
    scale = inputs.latency_bound / graph_part["latency_on_profiled"]
    on_target = dict(graph_part["on_target"])
    on_target.update({k: v for k, v in ((k, getattr(args, k, None)) for k in OVERRIDES)
                      if v is not None})
    if args.latency_bound is None:
        latency = graph_part["latency_on_target"] * scale
        notes.append(f"latency bound: the graph's on the target "
                     f"({graph_part['latency_on_target']:.4g} cycles, table "
                     f"{graph_part['table']}) × {scale:.4g}, the measured latency on "
                     f"{profiled_gpu.name} over the graph's there "
                     f"({graph_part['latency_on_profiled']:.4g} cycles)")
    else:
        latency = args.latency_bound
    inputs = replace(inputs, latency_bound=latency,
                     **{k: v for k, v in on_target.items() if k != "latency_bound"})
    return inputs, {"latency_table": graph_part["table"],
                    "latency_table_origin": graph_part["table_origin"]}


def _launch_from_profile(args, pk, derived) -> None:
    """The launch flags the command line leaves out, from the profile: block, grid,
    registers and shared memory (the achieved occupancy when it has no registers)."""
    if args.block_size is None:
        args.block_size = pk.block[0] if len(pk.block) == 1 else pk.block
    if args.grid_size is None and args.data_size is None:
        args.grid_size = pk.grid[0] if len(pk.grid) == 1 else pk.grid
    if args.registers is None and args.occupancy is None:
        args.registers = pk.registers_per_thread
        if args.shared_mem is None:
            args.shared_mem = pk.shared_mem_bytes
        if args.registers is None:
            args.occupancy = derived.occupancy_profiled


def _lambda_from_profile(args, lam_profiled, cross, profiled_gpu, notes) -> None:
    """λ of the profiled GPU when its time beat the throughput bound: applied on the same
    architecture unless --lambda is given (Gajger §4.4), only noted across architectures."""
    if args.lam is not None or lam_profiled is None or abs(lam_profiled - 1.0) <= 1e-12:
        return
    if cross:
        notes.append(f"λ on {profiled_gpu.name} is {lam_profiled:.4g} (faster than the "
                     f"throughput bound); not carried to another architecture (Gajger §4.4: "
                     f"recalibrate λ there)")
    else:
        args.lam = lam_profiled
        notes.append(f"λ = {lam_profiled:.4g} from the profiled GPU (the measured time is "
                     f"below the throughput bound; one λ per kernel holds within an "
                     f"architecture, Gajger §4.4)")


def _graph_counts(args, pk, profiled_gpu, target) -> dict:
    """``--graph`` next to ``--profile``: the graph's per-warp inputs with each GPU's latency
    table (the profiled GPU's own; the target's, or --table), their memory behaviour from
    the profile (core.measurements.profiled.calibrated_graph_counts)."""
    from gpumodeler.core.kernel.graph_items import launch_guard_values
    from gpumodeler.core.measurements.profiled import calibrated_graph_counts
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph
    graph = common.load_graph(args.graph)
    values = dict(args.set)
    values.update(launch_guard_values(graph, values, pk.block,
                                      target.warp_size or 32, pk.grid))
    out = {}
    for side, gpu, pinned in (("on_profiled", profiled_gpu, None),
                              ("on_target", target, getattr(args, "table", None))):
        key, origin = common.choose_table(pinned, gpu, graph)
        derived = kernel_inputs_from_graph(graph, values, table=common.latency_table_for(key))
        counts = {k: v for k, v in derived.__dict__.items() if k != "latency_bound"}
        common.require_finite({k: v for k, v in counts.items() if isinstance(v, (int, float))})
        counts, notes = calibrated_graph_counts(counts, pk)
        out[side] = counts
        out[f"latency_{side}"] = float(derived.latency_bound)
        if side == "on_target":
            out["notes"], out["table"] = notes, key
            out["table_origin"] = common.TABLE_ORIGIN_TEXT[origin]
    if not out["latency_on_profiled"] > 0:
        raise CLIError(f"the graph {args.graph} has no latency (an empty critical path)")
    return out


def _table_object(key):
    """The LatencyTable of ``key`` (core's built-in or the device database's), or None."""
    if not key:
        return None
    from gpumodeler.core.kernel.latency_tables import TABLES
    found = common.latency_table_for(key)
    return TABLES.get(found) if isinstance(found, str) else found


def _retarget(args, pk, inputs, profiled_gpu, target):
    """The latency bound re-derived for another architecture (core.measurements.profiled.
    retarget_latency), with the target's table (--table pins it); None when a GPU has no
    latency table."""
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.measurements.profiled import retarget_latency
    try:
        mine = _table_object(profiled_gpu.latency_table)
        theirs = _table_object(getattr(args, "table", None) or target.latency_table)
    except ModelError:
        return None
    if mine is None or theirs is None:
        return None
    return retarget_latency(float(inputs.latency_bound), pk.counts, mine, theirs)


def model_counts_of(pk) -> tuple[dict, list]:
    """The per-warp counts the registry's other models read (mwp-cwp, bsp,
    volkov-contention), from the profile, and notes on what was estimated: global memory
    instructions (the requests when counted, else one per 128 B of L2 traffic, a warp's
    coalesced 4-byte access), shared-memory instructions, warp instructions, and the DRAM
    accesses on the critical path (every DRAM access of the warp: an upper bound)."""
    from gpumodeler.core.measurements.profiled import WARP_ACCESS_BYTES, mix_terms
    c = pk.counts
    out, notes = {}, []
    if "global_requests" in c:
        out["memory_instructions"] = c["global_requests"]
    else:
        traffic = c.get("l2_bytes") or c.get("dram_bytes") or 32.0 * c.get("global_transactions", 0.0)
        if traffic:
            out["memory_instructions"] = traffic / WARP_ACCESS_BYTES
            notes.append(f"global memory instructions per warp estimated as one per "
                         f"{WARP_ACCESS_BYTES:g} B of memory traffic ({out['memory_instructions']:.4g}; "
                         f"the profile has no request count such as inst_executed_global_loads)")
    if "shared_requests" in c:
        out["shared_instructions"] = c["shared_requests"]
    if "issued_instructions" in c:
        out["instructions"] = c["issued_instructions"]
    dram = mix_terms(c).get(("memory", "dram"))
    if dram:
        out["critical_dram_accesses"] = dram
        notes.append(f"DRAM accesses on the critical path taken as every DRAM access of a warp "
                     f"({dram:.4g}: an upper bound; --critical-dram-accesses gives it)")
    return out, notes
