"""A profiled kernel as a kernel source: the model's per-warp inputs from profiler metrics.

A kernel profiled on one GPU (durations from a GPU trace or Nsight Compute, counts from
metrics) gives the per-warp parameters of Gajger's application model (§4.6):

* counts (:mod:`metric_map`): issued instructions, FP32/FP16/INT/control/conversion
  (together Gajger's INS_CUDA, the CUDA-core instructions), FP64, SFU and tensor
  instructions, DRAM and L2 bytes, global transactions, shared-memory transactions
  (wavefronts, which include bank-conflict replays: Volkov §3.6's conflict-weighted
  accesses) and conflicts — each total divided by the warps launched (eq. 4.2);
* the **latency bound**, which no profiler reports, estimated from the measured time by
  inverting eq. 4.1 and 4.3 on the profiled GPU (:func:`estimate_latency_bound`).

The rule (documented in docs/measurements.md): with λ = 1, eq. 4.1 gives the measured warp
throughput ``wt = warps launched / (T × SMs × SM clock)`` (warps per cycle per SM). The
throughput bound ``TB`` of the profiled GPU follows from the counts (eq. 4.5-4.6). If
``wt < TB`` (by more than 1 %, the rounding of printed durations) the kernel ran below every throughput limit, so by eq. 4.3 it was latency-bound
and ``latency bound = occupancy / wt`` with the achieved occupancy in warps per SM — this
reproduces the measured time exactly on the profiled GPU. If ``wt ≥ TB`` the time says the
kernel was throughput-bound and fixes no latency; any latency up to ``occupancy / TB``
is consistent with it, and we take that largest one (the knee at the profiled occupancy),
which keeps the kernel throughput-bound there and is conservative elsewhere; λ on the
profiled GPU is then reported (t_model / t_measured, eq. 4.4).
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.measurements.metric_map import OCCUPANCY, QUANTITIES, THREAD_ACTIVITY
from gpumodeler.core.models.gajger import KernelInputs
from gpumodeler.core.models.throughput import throughput_bound

#: Measured rates within this fraction of the throughput bound count as reaching it: printed
#: durations are rounded (ncu's 20.43 µs is ±0.025 %), and the two estimates differ by at
#: most this much there.
ROUNDING = 0.01
CUDA_CORE_PARTS = ("fp32_instructions", "fp16_instructions", "integer_instructions",
                   "control_instructions", "conversion_instructions")


@dataclass(frozen=True)
class ProfiledKernel:
    """One kernel's profile on one GPU, reduced to per-warp counts."""

    name: str
    gpu: str
    compute_capability: str
    grid: tuple
    block: tuple
    registers_per_thread: int | None
    shared_mem_bytes: int | None
    warps_launched: int
    time_s: float | None  # median over the timed launches
    launches: int  # timed launches the median is over
    counts: dict  # quantity -> per-warp value
    sources: dict  # quantity -> the metrics it came from
    achieved_occupancy: float | None  # fraction of the SM's warp slots
    achieved_warps_per_sm: float | None
    notes: tuple = field(default_factory=tuple)


def clean_gpu_name(name: str) -> str:
    """``GeForce GTX 970 (0)`` -> ``GeForce GTX 970`` (nvprof appends the device index)."""
    return re.sub(r"\s*\(\d+\)\s*$", "", name or "").strip()


def _short(name: str) -> str:
    n = re.sub(r"^(void|__global__)\s+", "", name.strip())
    return n.split("(")[0].split("<")[0].strip()


def select(records, kernel: str, gpu: str | None = None) -> list:
    """The kernel records of ``kernel`` (full name, name without arguments, or a unique part
    of it) on one GPU (``gpu`` picks one when the file holds several)."""
    kernels = [r for r in records if r.kind == "kernel"]
    if not kernels:
        raise InvalidParameter("the profile holds no kernel records (only copies?)")
    names = list(dict.fromkeys(r.name for r in kernels))
    exact = [n for n in names if n == kernel or _short(n) == kernel]
    matched = exact or [n for n in names if kernel.lower() in n.lower()]
    if not matched:
        shown = ", ".join(_short(n) for n in names[:8]) + (" ..." if len(names) > 8 else "")
        raise InvalidParameter(f"no kernel named {kernel!r} in the profile; kernels: {shown}")
    if len(matched) > 1:
        raise InvalidParameter(f"{kernel!r} matches several kernels ({'; '.join(matched[:5])}); "
                               f"give the full name")
    chosen = [r for r in kernels if r.name in matched]
    gpus = list(dict.fromkeys(clean_gpu_name(r.gpu) for r in chosen))
    if gpu:
        chosen = [r for r in chosen if gpu.lower() in clean_gpu_name(r.gpu).lower()]
        if not chosen:
            raise InvalidParameter(f"kernel {kernel!r} was not profiled on {gpu!r}; it was on "
                                   f"{', '.join(g or '(unnamed GPU)' for g in gpus)}")
    elif len(gpus) > 1:
        raise InvalidParameter(f"kernel {kernel!r} was profiled on {len(gpus)} GPUs "
                               f"({', '.join(gpus)}); give --profiled-device to pick one")
    return chosen


def _mean_metrics(records) -> dict:
    sums: dict = {}
    for r in records:
        for name, (value, unit) in r.metrics.items():
            sums.setdefault(name, ([], unit))[0].append(float(value))
    return {n: (sum(v) / len(v), u) for n, (v, u) in sums.items()}


def profile_kernel(records, kernel: str, gpu: str | None = None,
                   warp_size: int = 32) -> ProfiledKernel:
    """Per-warp counts of ``kernel`` from the records of one or several files."""
    chosen = select(records, kernel, gpu)
    configs = list(dict.fromkeys((tuple(r.grid), tuple(r.block)) for r in chosen
                                 if r.grid and r.block))
    if not configs:
        raise InvalidParameter(
            f"kernel {kernel!r}: the profile has no launch configuration (grid and block); add "
            f"a GPU trace (nvprof --print-gpu-trace) or an Nsight Compute file of the same run")
    if len(configs) > 1:
        shown = "; ".join(f"grid {'x'.join(map(str, g))} block {'x'.join(map(str, b))}"
                          for g, b in configs[:4])
        raise InvalidParameter(f"kernel {kernel!r} ran with {len(configs)} launch configurations "
                               f"({shown}); per-warp counts need one: profile one configuration")
    grid, block = configs[0]
    threads = math.prod(block)
    warps = math.prod(grid) * -(-threads // warp_size)
    times = [r.time_s for r in chosen if r.time_s is not None]
    metrics = _mean_metrics(chosen)
    notes = []
    activity = _thread_activity(metrics, warp_size)
    if activity is None:
        activity = 1.0
        if any(a.scale == "thread" for alts in QUANTITIES.values() for a in alts
               if all(n in metrics for n in a.names)):
            notes.append("thread-level counts divided by the warp size assume full warps "
                         "(the profile has no warp_nonpred_execution_efficiency)")
    counts, sources = {}, {}
    for quantity, alternatives in QUANTITIES.items():
        for alt in alternatives:
            if all(n in metrics for n in alt.names):
                total = sum(metrics[n][0] for n in alt.names)
                if alt.scale == "thread":
                    total /= warp_size * activity
                elif alt.scale == "sectors":
                    total *= 32
                counts[quantity] = total / warps
                sources[quantity] = alt.describe()
                break
    occ_fraction, occ_warps = None, None
    for name, how in OCCUPANCY:
        if name in metrics:
            v = metrics[name][0]
            if how == "warps":
                occ_warps = v
            else:
                occ_fraction = v / 100.0 if how == "percent" else v
            sources["achieved_occupancy"] = name
            break
    first = chosen[0]
    regs = next((r.registers_per_thread for r in chosen if r.registers_per_thread is not None), None)
    smem = next((r.shared_mem_bytes for r in chosen if r.shared_mem_bytes is not None), None)
    cc = next((r.compute_capability for r in chosen if r.compute_capability), "")
    return ProfiledKernel(
        name=first.name, gpu=clean_gpu_name(first.gpu), compute_capability=cc, grid=grid,
        block=block, registers_per_thread=regs, shared_mem_bytes=smem, warps_launched=warps,
        time_s=statistics.median(times) if times else None, launches=len(times),
        counts=counts, sources=sources, achieved_occupancy=occ_fraction,
        achieved_warps_per_sm=occ_warps, notes=tuple(notes))


def _thread_activity(metrics, warp_size):
    for name, how in THREAD_ACTIVITY:
        if name in metrics:
            v = metrics[name][0]
            frac = v / 100.0 if how == "percent" else v / warp_size
            if 0 < frac <= 1:
                return frac
    return None


def model_counts(pk: ProfiledKernel) -> tuple[dict, list]:
    """The per-warp inputs of :class:`KernelInputs` (without the latency bound) and notes
    on what had to stand in for a missing metric."""
    c, notes = pk.counts, []
    if "issued_instructions" in c:
        issued = c["issued_instructions"]
    elif "executed_instructions" in c:
        issued = c["executed_instructions"]
    else:
        raise InvalidParameter(
            f"kernel {pk.name!r}: the profile has no instruction count (inst_issued or "
            f"inst_executed; ncu smsp__inst_issued.sum or smsp__inst_executed.sum)")
    present = [p for p in CUDA_CORE_PARTS if p in c]
    if not present:
        notes.append("no FP32/INT instruction counts (inst_fp_32, inst_integer): the CUDA-core "
                     "load is not modelled")
    if "dram_bytes" in c:
        gmem = c["dram_bytes"]
    elif "l2_bytes" in c:
        gmem = c["l2_bytes"]
        notes.append("no DRAM metric: global-memory bytes are L2 traffic (an upper bound)")
    elif "global_transactions" in c:
        gmem = 32 * c["global_transactions"]
        notes.append("no DRAM or L2 metric: global-memory bytes are 32 B per global "
                     "transaction (an upper bound: no cache hits)")
    else:
        gmem = 0.0
        notes.append("no memory metric: global-memory traffic is not modelled")
    if "shared_transactions" in c:
        smem = c["shared_transactions"]
    else:
        smem = c.get("shared_requests", 0.0) + c.get("shared_bank_conflicts", 0.0)
    if c.get("tensor_instructions"):
        notes.append(f"{c['tensor_instructions']:.4g} tensor instructions per warp are counted "
                     f"but a profile gives no MMA shapes, so the tensor-core row of the worksheet "
                     f"(docs/pipes.md) is left out")
    return {"issued_instructions": issued,
            "cuda_core_instructions": sum(c[p] for p in present),
            "gmem_bytes": gmem, "sfu_instructions": c.get("sfu_instructions", 0.0),
            "fp64_instructions": c.get("fp64_instructions", 0.0),
            "smem_bank_cycles": smem, "pipe_instructions": pipe_mix(c)}, notes


@dataclass(frozen=True)
class LatencyEstimate:
    latency_bound_cycles: float
    mode: str  # 'latency' (inverted) or 'throughput' (upper bound used)
    measured_warp_throughput: float  # warps / cycle / SM at λ = 1
    throughput_bound: float  # warps / cycle / SM
    occupancy_warps_per_sm: float
    lambda_on_profiled: float  # t_model / t_measured with this latency bound (eq. 4.4)
    rule: str
    model_time_s: float = 0.0  # the model's time on the profiled GPU with this bound, λ = 1


def model_time_s(gpu: GPUSpec, counts: dict, latency_bound: float, grid, block,
                 occupancy: float, terms=None, lam: float = 1.0) -> float:
    """The registry's gajger time (eq. 4.1-4.7 with the kernel terms of ``terms``, the
    default ones when None) of one launch: what ``predict`` prints for these inputs."""
    from gpumodeler.core.models.registry import evaluate
    from gpumodeler.core.models.result import KernelTerms, ModelInputs
    inputs = ModelInputs(gpu=gpu, kernel=kernel_inputs(counts, latency_bound), grid_size=grid,
                         block_size=block, occupancy=float(occupancy), lam=lam,
                         terms=terms if terms is not None else KernelTerms())
    return evaluate("gajger", inputs).time_s


def _largest_latency_within(time_of, target_s: float, start: float) -> float:
    """The largest latency bound L whose model time ``time_of(L)`` is at most ``target_s``
    (the time is non-decreasing in L: every term is a max of L and a throughput time).
    Bisection in log space to a relative 1e-13."""
    lo = start
    while time_of(lo) > target_s:   # never: start is below the knee; kept for safety
        lo /= 2.0
        if lo < 1e-300:
            raise InvalidParameter("no latency bound reproduces the measured time")
    hi = max(lo * 2.0, 1.0)
    while time_of(hi) <= target_s:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            raise InvalidParameter("the measured time is longer than any latency bound gives")
    while hi - lo > 1e-13 * hi:
        mid = math.sqrt(lo * hi) if lo > 0 else hi / 2.0
        if not lo < mid < hi:
            break
        if time_of(mid) <= target_s:
            lo = mid
        else:
            hi = mid
    return lo


def estimate_latency_bound(gpu: GPUSpec, pk: ProfiledKernel, counts: dict,
                           occupancy_warps_per_sm: float, *, terms=None) -> LatencyEstimate:
    """Latency bound (cycles per warp) from the measured time on the profiled ``gpu``: the
    model that predicts (the registry's gajger, eq. 4.1-4.7 with the kernel ``terms``, at
    ``occupancy_warps_per_sm``, the profiled launch's grid and block) inverted, so the
    prediction on the profiled GPU reproduces the measured time (module docstring)."""
    if pk.time_s is None:
        raise InvalidParameter(
            f"kernel {pk.name!r}: the profile has no duration (nvprof metric tables have none); "
            f"add the GPU trace of the run, or give --latency-bound")
    if not occupancy_warps_per_sm > 0:
        raise InvalidParameter(f"occupancy on the profiled GPU must be > 0 warps/SM, got "
                               f"{occupancy_warps_per_sm}")
    from gpumodeler.core.models.kernel_terms_vec import overhead_decision
    from gpumodeler.core.models.result import KernelTerms
    terms = terms if terms is not None else KernelTerms()
    tb = throughput_bound(gpu, **counts).warps_per_cycle
    wt = pk.warps_launched / (pk.time_s * gpu.require("sms") * gpu.require("sm_clock_hz"))

    def time_of(latency):
        return model_time_s(gpu, counts, latency, pk.grid, pk.block, occupancy_warps_per_sm, terms)

    # below the knee every wave is throughput-bound: the model's shortest time
    start = 1e-6 * occupancy_warps_per_sm / tb
    floor_s = time_of(start)
    overhead, _ = overhead_decision(gpu, terms)
    if pk.time_s <= overhead:
        raise InvalidParameter(f"kernel {pk.name!r}: the measured {pk.time_s:.4g} s is not longer "
                               f"than the launch overhead {overhead:.4g} s of {gpu.name}")
    if pk.time_s > (1 + ROUNDING) * floor_s:
        latency = _largest_latency_within(time_of, pk.time_s, start)
        mode, lam = "latency", 1.0
        rule = (f"latency-bound on {gpu.name}: measured {pk.time_s:.6g} s > the throughput-bound "
                f"{floor_s:.6g} s (throughput bound {tb:.4g} warps/cycle/SM), so the latency bound "
                f"is the one whose prediction there is the measured time, at occupancy "
                f"{occupancy_warps_per_sm:.4g} warps/SM (eq. 4.1, 4.3 inverted)")
    else:
        # the knee, kept just on the throughput side
        latency = _largest_latency_within(time_of, floor_s, start) * (1 - 1e-9)
        mode = "throughput"
        lam = (floor_s - overhead) / (pk.time_s - overhead)
        if abs(lam - 1.0) <= ROUNDING:   # the rounding of printed durations, not a λ
            lam = 1.0
        rule = (f"throughput-bound on {gpu.name}: measured {pk.time_s:.6g} s <= the "
                f"throughput-bound {floor_s:.6g} s (throughput bound {tb:.4g} warps/cycle/SM, "
                f"measured {wt:.4g}), so the time fixes no latency; used the largest consistent "
                f"one, the knee at occupancy {occupancy_warps_per_sm:.4g} (λ there = {lam:.4g}, "
                f"eq. 4.4)")
    return LatencyEstimate(latency, mode, wt, tb, occupancy_warps_per_sm, lam, rule,
                           model_time_s=time_of(latency))


def kernel_inputs(counts: dict, latency_bound_cycles: float) -> KernelInputs:
    """:class:`KernelInputs` from :func:`model_counts`'s counts and a latency bound."""
    return KernelInputs(latency_bound=latency_bound_cycles, **counts)


def achieved_warps_per_sm(pk: ProfiledKernel, gpu: GPUSpec) -> float | None:
    """The achieved occupancy in warps per SM (the metric in warps, or the fraction × the
    architecture's maximum warps per SM); None when the profile has none."""
    from gpumodeler.core.occupancy.compute_capability import architecture
    if pk.achieved_warps_per_sm is not None:
        return pk.achieved_warps_per_sm
    cc = gpu.compute_capability or pk.compute_capability
    if pk.achieved_occupancy is None or not cc:
        return None
    return pk.achieved_occupancy * architecture(cc).max_warps_per_sm


def profiled_occupancy(pk: ProfiledKernel, gpu: GPUSpec) -> tuple[float, str | None]:
    """Warps per SM of the profiled launch as the model counts them: the calculator's
    (theoretical) occupancy on the profiled GPU, the one the prediction uses (Gajger
    §4.4.1), so the latency bound inverted there reproduces the measured time; the achieved
    occupancy (with a note) only when the profile has no registers per thread."""
    from gpumodeler.core.occupancy.calculator import occupancy
    cc = gpu.compute_capability or pk.compute_capability
    if pk.registers_per_thread is not None and cc:
        occ = occupancy(cc, math.prod(pk.block), pk.registers_per_thread,
                        int(pk.shared_mem_bytes or 0))
        return float(occ.active_warps_per_sm), None
    achieved = achieved_warps_per_sm(pk, gpu)
    if achieved is None:
        if not cc:
            raise InvalidParameter(f"GPU '{gpu.name}': the compute capability is unknown, so "
                                   f"the occupancy on the profiled GPU cannot be computed")
        raise InvalidParameter(
            f"kernel {pk.name!r}: the profile has no registers per thread to compute the "
            f"occupancy and no achieved occupancy (achieved_occupancy, "
            f"sm__warps_active.avg.pct_of_peak_sustained_active)")
    return achieved, ("no registers per thread in the profile: the latency bound is derived at "
                      "the achieved occupancy, give --registers for the target's calculator")


@dataclass(frozen=True)
class ProfiledInputs:
    """Everything a prediction from a profile needs: the model inputs and how they came."""

    kernel: ProfiledKernel
    inputs: KernelInputs
    occupancy_profiled: float  # warps per SM on the profiled GPU (the model's)
    estimate: LatencyEstimate | None  # None when the latency bound was given
    notes: tuple
    achieved_occupancy: float | None = None  # warps per SM, as measured


def calibrated_graph_counts(graph_counts: dict, pk: ProfiledKernel) -> tuple[dict, list]:
    """A kernel graph's per-warp counts (:class:`KernelInputs` fields without the latency
    bound) with its memory behaviour taken from the profile's counters, which measured what
    the graph can only assume: DRAM bytes per warp (the caches' hits and the transactions
    per request included) for global memory, and shared-memory wavefronts (bank conflicts
    included) for the shared-memory bank cycles. Returns (counts, notes)."""
    counts, notes = dict(graph_counts), []
    c = pk.counts
    if "dram_bytes" in c:
        notes.append(f"global-memory bytes per warp from the profile's DRAM traffic: "
                     f"{c['dram_bytes']:.4g} (the graph: {counts.get('gmem_bytes', 0.0):.4g})")
        counts["gmem_bytes"] = c["dram_bytes"]
    if "shared_transactions" in c:
        counts["smem_bank_cycles"] = c["shared_transactions"]
    return counts, notes


def derive(pk: ProfiledKernel, gpu: GPUSpec, *, latency_bound: float | None = None,
           overrides: dict | None = None, terms=None, counts: dict | None = None) -> ProfiledInputs:
    """Model inputs of a profiled kernel on its profiled ``gpu``: per-warp counts (the
    profile's, or ``counts`` given, e.g. a kernel graph's calibrated by the profile;
    ``overrides`` replace some), the occupancy there (:func:`profiled_occupancy`) and the
    latency bound (given, or estimated by :func:`estimate_latency_bound` with the kernel
    ``terms`` the prediction uses)."""
    if counts is None:
        counts, notes = model_counts(pk)
    else:
        counts, notes = dict(counts), []
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if "cuda_core_instructions" in given:   # a given total replaces the pipe mix
        counts["pipe_instructions"] = None
    counts.update(given)
    occ, note = profiled_occupancy(pk, gpu)
    notes = list(pk.notes) + notes + ([note] if note else [])
    estimate = None
    if latency_bound is None:
        estimate = estimate_latency_bound(gpu, pk, counts, occ, terms=terms)
        latency_bound = estimate.latency_bound_cycles
        if estimate.mode == "latency" and \
                estimate.throughput_bound < 1.1 * estimate.measured_warp_throughput:
            notes.append("the measured rate is within 10 % of the throughput bound: the kernel "
                         "may be throughput-bound and the latency bound an overestimate")
    return ProfiledInputs(pk, kernel_inputs(counts, latency_bound), occ, estimate, tuple(notes),
                          achieved_occupancy=achieved_warps_per_sm(pk, gpu))


def architecture_notes(profiled_cc: str, target_cc: str) -> list[str]:
    """What does not carry when the target's compute capability differs (docs)."""
    if not profiled_cc or not target_cc:
        return [f"compute capability of the {'profiled' if not profiled_cc else 'target'} GPU "
                f"is unknown: cannot tell whether the prediction crosses architectures"]
    if _cc(profiled_cc) == _cc(target_cc):
        return []
    return [f"crosses architectures (profiled on compute capability {profiled_cc}, predicted "
            f"for {target_cc}): the latency bound (instruction and memory latencies), issued "
            f"instructions (replays, dual issue, recompiled SASS), DRAM bytes (L2 size and "
            f"caching) and shared-memory conflicts (bank layout) were measured on the other "
            f"architecture; expect larger errors and recalibrate λ there (Gajger §4.4)"]


def _cc(text: str) -> tuple:
    try:
        return tuple(int(p) for p in str(text).strip().split("."))
    except ValueError:
        return (str(text).strip(),)


#: instruction classes of the profile's mix -> (latency-table class, counts that feed it)
MIX_CLASSES = (
    ("fp32_mad", ("fp32_instructions", "control_instructions")),
    ("int_add", ("integer_instructions",)),
    ("conversion", ("conversion_instructions",)),
    ("fp16", ("fp16_instructions",)),
    ("sfu", ("sfu_instructions",)),
    ("fp64", ("fp64_instructions",)),
)
#: bytes a warp moves per coalesced global access (32 threads × 4 B): accesses per warp
#: from bytes when the profile has no request count
WARP_ACCESS_BYTES = 128.0


def _latency_of(table, kind: str, name: str):
    from gpumodeler.core.errors import GraphError
    try:
        return table.memory(name) if kind == "memory" else table.instruction(name)
    except (GraphError, KeyError, AttributeError):
        return None


def mix_terms(counts: dict) -> dict:
    """The profile's per-warp instruction and access mix by latency class: ``{(kind, class):
    count}`` (kind ``instruction`` or ``memory``). Global accesses split into DRAM and L2
    hits by the profile's DRAM / L2 traffic (the L2 hit rate); a global access is
    :data:`WARP_ACCESS_BYTES`."""
    out = {}
    for cls, parts in MIX_CLASSES:
        value = sum(counts.get(p, 0.0) for p in parts)
        if value > 0:
            out[("instruction", cls)] = value
    dram, l2 = counts.get("dram_bytes"), counts.get("l2_bytes")
    traffic = l2 if l2 else dram if dram else (
        32.0 * counts["global_transactions"] if "global_transactions" in counts else 0.0)
    if traffic > 0:
        accesses = traffic / WARP_ACCESS_BYTES
        hit = 0.0 if not (dram and l2) else min(max(1.0 - dram / l2, 0.0), 1.0)
        if accesses * (1 - hit) > 0:
            out[("memory", "dram")] = accesses * (1 - hit)
        if accesses * hit > 0:
            out[("memory", "l2")] = accesses * hit
    shared = counts.get("shared_transactions") or (
        counts.get("shared_requests", 0.0) + counts.get("shared_bank_conflicts", 0.0))
    if shared > 0:
        out[("memory", "shared")] = shared
    return out


@dataclass(frozen=True)
class Retargeted:
    latency_bound_cycles: float
    ratio: float  # target mix latency / profiled mix latency
    profiled_mix_cycles: float
    target_mix_cycles: float
    classes: tuple  # the latency classes both tables have
    note: str


def retarget_latency(latency_bound: float, counts: dict, profiled_table, target_table) -> Retargeted:
    """The latency bound on another architecture: the profiled GPU's (cycles, inverted from
    the measured time) scaled by how much longer the profile's own mix takes through the
    target's latency table than through the profiled GPU's,

        L_target = L_profiled × Σ_c n_c · lat_target(c) / Σ_c n_c · lat_profiled(c)

    over the classes ``c`` of :func:`mix_terms` both tables have (arithmetic, SFU, FP64,
    conversion; DRAM, L2, shared memory: Gajger Tables 4.1–4.2 per generation). Choice, and
    why: no profiler gives the critical path, and the latency bound in cycles is what does
    not carry across architectures (docs/measurements.md); the mix is the profile's weight of
    each latency on the path. The kernel's own dependency structure and the λ-like rest of
    the measured latency carry unchanged. With no common class the bound is kept (a note)."""
    mix = mix_terms(counts)
    total_p = total_t = 0.0
    used = []
    for (kind, cls), n in mix.items():
        lp, lt = _latency_of(profiled_table, kind, cls), _latency_of(target_table, kind, cls)
        if lp is None or lt is None or lp <= 0 or lt <= 0:
            continue
        total_p += n * lp
        total_t += n * lt
        used.append(cls)
    if not used or total_p <= 0:
        return Retargeted(latency_bound, 1.0, 0.0, 0.0, (), (
            "no latency class of the profile's mix is in both latency tables: the latency "
            "bound in cycles is carried as measured"))
    ratio = total_t / total_p
    note = (f"latency bound re-derived for the target: {latency_bound:.4g} cycles on the "
            f"profiled GPU × {ratio:.4g} (the profile's mix through "
            f"{getattr(target_table, 'key', 'the target table')} vs "
            f"{getattr(profiled_table, 'key', 'the profiled table')}: {total_t:.4g} / "
            f"{total_p:.4g} cycles over {', '.join(used)})")
    return Retargeted(latency_bound * ratio, ratio, total_p, total_t, tuple(used), note)


def pipe_mix(counts: dict) -> dict | None:
    """Per-pipe instructions per warp (``throughput.PIPE_COUNTS``) for GPUs that issue FP32,
    INT32 and FP16 separately (Volta and later): FP32 on fp32, integer, control and
    conversion on int32, FP16 on fp16; None without FP32 and integer counts."""
    if "fp32_instructions" not in counts or "integer_instructions" not in counts:
        return None
    return {"fp32": counts["fp32_instructions"],
            "int32": counts["integer_instructions"] + counts.get("control_instructions", 0.0)
            + counts.get("conversion_instructions", 0.0),
            "fp16": counts.get("fp16_instructions", 0.0)}


def _peak_bandwidth(gpu: GPUSpec) -> float:
    return gpu.gmem_bandwidth_bytes_per_cycle_per_sm() * gpu.require("sms") * gpu.require(
        "sm_clock_hz")


def _peak_fp32(gpu: GPUSpec) -> float:
    return gpu.require("cuda_cores_per_sm") * gpu.require("sms") * gpu.require("sm_clock_hz")


def baselines(pk: ProfiledKernel, profiled: GPUSpec, target: GPUSpec) -> dict:
    """The one-line predictions a model must beat: the measured time scaled by the ratio of
    the two GPUs' memory bandwidths, by the ratio of their FP32 peaks, and by whichever of
    the two bounds the kernel on the profiled GPU (its DRAM bytes at the peak bandwidth
    against its FP32 work at the FP32 peak)."""
    if pk.time_s is None:
        return {}
    bw = pk.time_s * _peak_bandwidth(profiled) / _peak_bandwidth(target)
    flop = pk.time_s * _peak_fp32(profiled) / _peak_fp32(target)
    c = pk.counts
    mem_s = c.get("dram_bytes", c.get("l2_bytes", 0.0)) * pk.warps_launched / _peak_bandwidth(profiled)
    work = sum(c.get(p, 0.0) for p in CUDA_CORE_PARTS) * 32 * pk.warps_launched
    fp_s = work / _peak_fp32(profiled)
    bound = "memory" if mem_s >= fp_s else "compute"
    return {"bandwidth_ratio_s": bw, "flop_ratio_s": flop,
            "bound_ratio_s": bw if bound == "memory" else flop, "bound": bound,
            "memory_time_at_peak_s": mem_s, "fp32_time_at_peak_s": fp_s}
