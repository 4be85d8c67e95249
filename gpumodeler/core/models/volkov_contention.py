"""Volkov's refined model with memory contention (Volkov 2016, §6.3–6.5).

Volkov's basic model (§3.4–3.6, the model Gajger's eq. 4.1–4.7 adapt) holds the memory
latency constant. Measured mean memory latency rises with memory throughput (§6.4,
Table 6.6); Volkov fits

    memory latency = a + b · λ / (c − λ)                                   (§6.4, Table 6.5)

with λ the memory throughput in GB/s, a ≈ the unloaded latency, b the initial slope and
c > the measured peak, and solves the refined model for the self-consistent throughput:

    Latency = a + b · λ/(c − λ) + α · alu_lat
    Memory throughput = min(n / Latency, mem_thru, alu_thru/α, issue_thru/(α+1))      (§6.5)
    λ = memory throughput · 128 B · SMs · clock

by bisection ("The equation can be solved analytically, but we solve it numerically using
bisection", §6.5). For a kernel graph the same reads, in warps:

    w = min(n / L(w), TB),   L(w) = L₀ + k · Σᵢ bᵢ · β(w) / (cᵢ − β(w)),
    β(w) = w · GMem_bytes per warp · active SMs · clock          [B/s]

``L₀`` is the graph's latency bound with the fit's intercept ``a`` as its DRAM latency, as
§6.5 writes ``a`` where the basic model (§4.1) had ``mem_lat``: L₀ = L_table + k·(a − the
table's DRAM latency), exact because the bound is piecewise linear in that latency with slope
k at the point evaluated; ``k`` the DRAM
accesses on its critical path (``dL₀/d(DRAM latency)``, from the graph), ``TB`` the
throughput bound of the per-resource worksheet (Volkov §3.6) with global memory at the
**sustained** bandwidth where the database has a measured value (§6.3: sustained peaks
are 80–97 % of pin bandwidth; Table 6.4), else at the pin bandwidth (noted); for a grid short
of one wave (the under-filled term of :mod:`kernel_terms`) ``n``, the SMs of β and ``TB`` are
those of the wave: the occupancy the grid leaves, the active SMs, and their bound with global
memory shared by them only, the bound the wave then runs at. (Solved against a full launch's
per-SM share instead, the fixed point of a launch on few SMs was held below its
self-consistent value, and with it the loaded latency, so that more bandwidth predicted a
slower kernel: §6.5's min(n/Latency, mem_thru, …) takes the bound the warps actually see.)
g(w) = n/L(w) − w
is strictly decreasing on [0, min(TB, pole)), so the root is unique; the pole (β = c) is
never crossed, which guards the G80 two-term fit whose pole (71 GB/s) is below its peak.
The kernel time is then the waves of :mod:`kernel_terms` with the loaded latency L(w*):
total warps / (w* · SMs) when the grid fills the GPU (Volkov §3.4). Volkov's model has no
λ-calibration factor; Gajger's λ is not applied.

Fits (Table 6.5; G80 also the two-term fit of §6.4) are known for Volkov's five GPUs;
for any other GPU ``contention_b_cycles`` and ``contention_c_bytes_per_s`` must be given, or
fitted to the user's throughput-versus-occupancy measurements (:func:`fit_contention`,
``gpumodeler calibrate contention``) and stored as the GPU's calibrated values, ``a``
included. ``a`` comes from the same place as ``b`` and ``c`` (a given ``contention_a_cycles``,
the GPU's calibrated fit, Table 6.5). Where the latency bound's own DRAM latency is not known
(a bound given as a number, not worked out from a graph) or no ``a`` is (``b`` and ``c`` given
without it), L₀ is the bound as given and the result says so: Table 6.2's latencies, which
such a bound uses, differ from Table 6.5's ``a`` by at most 2.3 % (Fermi, 513 against 501).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.models import kernel_terms as kt
from gpumodeler.core.models.result import MissingModelInput, ModelInputs, ModelResult
from gpumodeler.core.models.sanity import finish

#: Volkov Table 6.5 (a, [(b, c)]) with a, b in cycles and c in B/s, keyed by the device
#: database's names of his GPUs; the G80 entry is the better two-term fit of §6.4.
CONTENTION_FITS = {
    "GeForce 8800 GTX": (441.0, ((4.0, 71e9), (156.0, 121e9))),
    "GeForce GTX 280": (438.0, ((17.0, 140e9),)),
    "GeForce GTX 480": (501.0, ((41.0, 170e9),)),
    "GeForce GTX 680": (300.0, ((32.0, 170e9),)),
    "GeForce GTX 980": (372.0, ((22.0, 221e9),)),
}
#: Table 6.5's one-term G80 fit, for comparison with the two-term fit above.
G80_ONE_TERM = (453.0, ((61.0, 81e9),))

EQUATIONS = "Volkov 2016 §6.4 (memory latency = a + b·λ/(c−λ), Table 6.5), §6.5 (bisection), §6.3 (sustained bandwidth)"


def contention_fit(inputs: ModelInputs):
    """((b, c), ...) for the GPU: given parameters first, then Volkov's Table 6.5."""
    return contention_fit_with_intercept(inputs)[1:]


def contention_fit_with_intercept(inputs: ModelInputs):
    """(a or None, ((b, c), ...), source) for the GPU: given parameters first, then the GPU's
    calibrated fit, then Volkov's Table 6.5 (§6.4); ``a`` in cycles, None when not known."""
    b = inputs.param("contention_b_cycles")
    c = inputs.param("contention_c_bytes_per_s")
    if b is not None or c is not None:
        if b is None or c is None or c <= 0:
            raise MissingModelInput("the contention fit needs both b (cycles) and c (> 0 B/s)",
                                    item="contention_b_cycles" if b is None else "contention_c_bytes_per_s")
        return inputs.param("contention_a_cycles"), ((b, c),), "given"
    gpu = inputs.gpu
    if gpu.contention_b_cycles is not None and gpu.contention_c_bytes_per_s is not None:
        a = gpu.contention_a_cycles
        return (None if a is None else float(a),
                ((float(gpu.contention_b_cycles), float(gpu.contention_c_bytes_per_s)),),
                "calibrated (calibrate contention)")
    fit = CONTENTION_FITS.get(inputs.gpu.name)
    if fit is None:
        raise MissingModelInput(
            f"volkov-contention: no memory-contention fit is known for '{inputs.gpu.name}' "
            f"(Volkov Table 6.5 has 8800 GTX, GTX 280, GTX 480, GTX 680, GTX 980); give its "
            f"b (cycles) and c (B/s), or fit them to your measurements (calibrate contention)",
            item="contention_b_cycles")
    return fit[0], fit[1], "Volkov Table 6.5"


@dataclass(frozen=True)
class ContentionFit:
    """Volkov's §6.4 fit, memory latency = a + b·λ/(c − λ), to measurements."""

    a_cycles: float
    b_cycles: float
    c_bytes_per_s: float
    latencies_cycles: tuple      # from the measurements (Little's law)
    predicted_cycles: tuple      # a + b·λ/(c − λ) at each measured throughput
    mape_percent: float


def latency_from_throughput(occupancy, throughput_bytes_per_s, bytes_per_warp: float,
                            sms: float, clock_hz: float):
    """Mean memory latency in cycles from a measured throughput (Little's law, Volkov §6.4:
    the warps in flight per SM, each with ``bytes_per_warp`` outstanding, over the
    throughput): n · bytes · SMs · clock / λ."""
    return [float(n) * bytes_per_warp * sms * clock_hz / float(t)
            for n, t in zip(occupancy, throughput_bytes_per_s)]


def fit_contention(occupancy, throughput_bytes_per_s, *, bytes_per_warp: float = 128.0,
                   sms: float, clock_hz: float) -> ContentionFit:
    """Volkov's a, b, c (§6.4) from throughput-versus-occupancy measurements of a
    memory-bound kernel: the latencies by Little's law, then least squares of
    a + b·λ/(c − λ) — linear in a and b for a given c, c searched above the largest
    measured throughput (the pole lies beyond every measurement, as Table 6.5's c do).
    Needs 3 or more measurements at different throughputs; b >= 0."""
    import numpy as np
    n = np.asarray(occupancy, dtype=float)
    lam = np.asarray(throughput_bytes_per_s, dtype=float)
    if n.shape != lam.shape or n.ndim != 1:
        raise InvalidParameter("give one throughput per occupancy")
    if not (np.all(np.isfinite(n)) and np.all(n > 0) and np.all(np.isfinite(lam)) and np.all(lam > 0)):
        raise InvalidParameter("occupancies and throughputs must be finite numbers > 0")
    if len(np.unique(lam)) < 3:
        raise InvalidParameter(f"the fit has three parameters: give 3 or more measurements at "
                               f"different throughputs (got {len(np.unique(lam))})")
    L = np.asarray(latency_from_throughput(n, lam, bytes_per_warp, sms, clock_hz))
    top = float(lam.max())

    def solve(c):
        x = lam / (c - lam)
        A = np.column_stack([np.ones_like(x), x])
        (a, b), *_ = np.linalg.lstsq(A, L, rcond=None)
        if b < 0:                      # latency does not rise: b = 0, a the mean
            a, b = float(L.mean()), 0.0
        r = a + b * x - L
        return float(r @ r), float(a), float(b)

    grid = top * (1.0 + np.geomspace(1e-4, 10.0, 400))
    sse = [solve(c)[0] for c in grid]
    i = int(np.argmin(sse))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    for _ in range(100):               # golden-section refinement between the neighbours
        m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        if solve(m1)[0] <= solve(m2)[0]:
            hi = m2
        else:
            lo = m1
    c = 0.5 * (lo + hi)
    _, a, b = solve(c)
    pred = a + b * lam / (c - lam)
    mape = float(np.mean(np.abs(pred - L) / L) * 100)
    return ContentionFit(a, b, float(c), tuple(float(v) for v in L),
                         tuple(float(v) for v in pred), mape)


def with_intercept(L_table: float, k: float, a, table_dram_cycles) -> tuple[float, str]:
    """(L₀, note): the latency bound with Volkov's intercept ``a`` as the unloaded DRAM
    latency of its ``k`` critical DRAM accesses (§6.5: ``Latency = a + b·λ/(c − λ) + α·alu_lat``,
    where the basic model had ``mem_lat``): L_table + k·(a − table_dram_cycles). Unchanged,
    and said why, when ``a`` or the table's DRAM latency is unknown."""
    if a is None:
        return L_table, ("the fit gives no intercept a: the latency bound keeps its table's DRAM "
                         "latency as the unloaded latency")
    if table_dram_cycles is None:
        return L_table, (f"intercept a = {a:g} cycles not applied: the DRAM latency the latency "
                         f"bound was worked out with is unknown (a bound given as a number)")
    L0 = L_table + k * (a - float(table_dram_cycles))
    return L0, (f"unloaded DRAM latency: the fit's intercept a = {a:g} cycles in place of the "
                f"table's {float(table_dram_cycles):g} for the {k:g} DRAM access(es) on the "
                f"critical path (Volkov §6.5)")


def loaded_latency(L0: float, k: float, fit, throughput_bytes_per_s: float) -> float:
    """L(β) = L₀ + k · Σ b·β/(c − β) (infinite at or past a pole)."""
    extra = 0.0
    for b, c in fit:
        if throughput_bytes_per_s >= c:
            return math.inf
        extra += b * throughput_bytes_per_s / (c - throughput_bytes_per_s)
    return L0 + k * extra


def solve_warp_throughput(occupancy: float, L0: float, k: float, fit, tb: float,
                          bytes_per_warp_cycle: float, *, iterations: int = 200) -> float:
    """The self-consistent w = min(n / L(w), TB) by bisection (Volkov §6.5).

    ``bytes_per_warp_cycle`` converts w (warps/cycle/SM) to B/s: GMem bytes · SMs · clock."""
    if k <= 0 or bytes_per_warp_cycle <= 0:
        return min(occupancy / L0, tb)

    def g(w):
        return occupancy / loaded_latency(L0, k, fit, w * bytes_per_warp_cycle) - w
    pole = min(c for _, c in fit) / bytes_per_warp_cycle
    if tb < pole and g(tb) >= 0:
        return tb
    lo, hi = 0.0, min(tb, pole)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return lo


def needed_occupancy(fraction: float, L0: float, k: float, fit, tb: float,
                     bytes_per_warp_cycle: float) -> float:
    """Warps per SM that reach ``fraction`` of the throughput bound: n = x*·L(x*) with
    x* = fraction · TB (the refined model inverted; Volkov Table 6.4 measures 90 %/95 %)."""
    x = fraction * tb
    return x * loaded_latency(L0, k, fit, x * bytes_per_warp_cycle)


def evaluate(inputs: ModelInputs) -> ModelResult:
    """Volkov's refined model for one launch (see the module docstring)."""
    gpu, kernel = inputs.gpu, inputs.kernel
    sms, clock = gpu.require("sms"), gpu.require("sm_clock_hz")
    L0 = L_table = float(kernel.latency_bound)
    gmem = float(kernel.gmem_bytes)
    notes, terms = [], []
    if gpu.memory_bandwidth_measured_bytes_per_s is not None:
        memory_bw = float(gpu.memory_bandwidth_measured_bytes_per_s)
        notes.append(f"global memory at the sustained (measured) {memory_bw / 1e9:.4g} GB/s (§6.3)")
    else:
        memory_bw = gpu.gmem_bandwidth_bytes_per_cycle_per_sm() * sms * clock
        notes.append("no measured bandwidth for this GPU: global memory at the pin bandwidth, "
                     "which §6.3 finds 3–20 % optimistic")
    terms.append(kt.l2_effect(inputs))
    tb = kt.throughput_of(gpu, kernel, memory_bytes_per_s=memory_bw)
    k = 0.0
    fit: tuple[tuple[float, float], ...] = ()
    fit_source = "none (the kernel moves no DRAM bytes)"
    if gmem > 0:
        k = inputs.count("critical_dram_accesses")
        if k is None:
            raise MissingModelInput(
                "volkov-contention needs the DRAM accesses on the critical path (give --graph, "
                "or the count)", item="critical_dram_accesses")
        a, fit, fit_source = contention_fit_with_intercept(inputs)
        L0, intercept_note = with_intercept(L_table, k, a, inputs.count("bound_dram_latency_cycles"))
        notes.append(intercept_note)
    # occupancy, active SMs and throughput bound the memory system sees: the grid limits
    # all three when it does not fill one wave (the under-filled term); the fixed point is
    # solved against the bound kt.waves runs that wave at (module docstring)
    wpb = kt.warps_per_block(inputs.block_size, gpu.require("warp_size"))
    blocks = kt.blocks_of(inputs.grid_size)
    cap = math.floor(float(inputs.occupancy) / wpb + 1e-9)
    n, active, launch_tb = float(inputs.occupancy), sms, tb
    if inputs.terms.underfill and cap >= 1 and blocks < sms * cap:
        n, active = float(-(-blocks // sms) * wpb), int(kt.active_sms(sms, blocks))
        launch_tb = kt.worksheet_on_active_sms(tb, sms, blocks)
    bound = float(launch_tb.warps_per_cycle)
    per_w = gmem * active * clock
    w = solve_warp_throughput(n, L0, k, fit, bound, per_w)
    L = loaded_latency(L0, k, fit, w * per_w) if k else L0
    cycles, base, wave_terms, info = kt.waves(inputs, L, tb.warps_per_cycle, worksheet=tb)
    basic = min(n / L0, bound)
    terms += wave_terms
    latency_mode = w < bound * (1 - 1e-12)
    quantities = {
        "latency_bound_unloaded_cycles": L0, "latency_bound_of_table_cycles": L_table,
        "latency_loaded_cycles": L,
        "critical_dram_accesses": k, "contention_fit": [list(t) for t in fit],
        "contention_fit_source": fit_source, "memory_bandwidth_bytes_per_s": memory_bw,
        "memory_throughput_bytes_per_s": w * per_w,
        "throughput_bound_warps_per_cycle": tb.warps_per_cycle,
        "cycles_per_warp": dict(tb.cycles_per_warp),
        "warp_throughput": w, "warp_throughput_without_contention": basic,
        "contention_slowdown": basic / w if w > 0 else math.inf,
        "occupancy_warps_per_sm": n,
        "occupancy_for_90pct": needed_occupancy(0.9, L0, k, fit, bound, per_w),
        "occupancy_for_95pct": needed_occupancy(0.95, L0, k, fit, bound, per_w),
        **info,
    }
    return finish("volkov-contention", inputs, kernel_cycles=cycles,
                  bound="latency" if latency_mode else "throughput",
                  binding="latency" if latency_mode else str(launch_tb.binding),
                  quantities=quantities, terms=terms, notes=notes, equations=EQUATIONS)
