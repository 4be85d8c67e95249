"""Physical sanity of a prediction (docs/models.md).

* A time that is not a finite positive number is an error
  (:class:`~gpumodeler.core.models.result.ImplausiblePrediction`), never a result: e.g.
  λ = 1e-320 in eq. 4.1 divides the kernel time by almost zero.
* A time below what the GPU's peak rates allow for the work is flagged: the *peak-rate
  floor* is the throughput worksheet (Volkov §3.6) of every warp of the launch at the
  GPU's peak rates — CUDA cores, SFUs, FP64 units, shared-memory banks, and global
  memory at the fastest rate the data can come (the pin bandwidth, or the L2 bandwidth
  when the working set is in L2) — spread over all SMs:
  ``floor = warps · max_r T_r / (SMs · clock)``. A calibrated λ > 1 or a BSP λ can put a
  model below it; the result then carries a warning instead of passing silently.
* An occupancy above the compute capability's maximum warps per SM is refused.
"""
from __future__ import annotations

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import LaunchError, ModelError, UnphysicalResult
from gpumodeler.core.physical import require_physical
from gpumodeler.core.models.result import ImplausiblePrediction, ModelInputs, ModelResult


def check_finite(model: str, time_s, what: str = "kernel time") -> float:
    """``time_s`` as a float, or ImplausiblePrediction saying why it cannot be a result
    (the rule of :func:`gpumodeler.core.physical.require_physical`)."""
    try:
        return require_physical(time_s, f"{model}: the {what}", "s", positive=True, kind="time",
                                cause="check λ and the per-warp inputs (e.g. λ must be large "
                                      "enough that time = work / λ stays finite)")
    except UnphysicalResult as exc:
        raise ImplausiblePrediction(str(exc)) from None


def check_occupancy(gpu: GPUSpec, occupancy) -> None:
    """Refuse an occupancy above the maximum warps per SM of the GPU's compute capability
    (when the capability is known to the occupancy rules; otherwise nothing to check)."""
    if not gpu.compute_capability:
        return
    from gpumodeler.core.occupancy.compute_capability import architecture
    try:
        limit = architecture(gpu.compute_capability).max_warps_per_sm
    except ModelError:
        return
    occ = float(occupancy)
    if occ > limit:
        raise LaunchError(
            f"occupancy {occ:g} warps per SM exceeds the maximum of compute capability "
            f"{gpu.compute_capability} ({limit} warps per SM); give at most {limit}", item="occupancy")


#: the last floor computed: (inputs, L2 bandwidth, floor). Every model of one launch asks for
#: the floor of the same ModelInputs (the registry's evaluate_all, a sweep's model overlay),
#: so it is computed once per launch instead of once per model. Keyed by identity, holding
#: the inputs (a frozen value) so the key cannot be reused; one tuple, read and written whole.
_LAST_FLOOR: tuple[ModelInputs | None, float | None] = (None, None)


def peak_rate_floor_s(inputs: ModelInputs):
    """The fastest time the GPU's peak rates allow for the launch's work (None when a rate
    the work needs is unknown)."""
    global _LAST_FLOOR
    last = _LAST_FLOOR
    if last[0] is inputs:
        return last[1]
    floor = _peak_rate_floor_s(inputs)
    _LAST_FLOOR = (inputs, floor)
    return floor


def _peak_rate_floor_s(inputs: ModelInputs):
    from gpumodeler.core.models.kernel_terms import blocks_of, throughput_of, warps_per_block
    gpu = inputs.gpu
    try:
        sms, clock = gpu.require("sms"), gpu.require("sm_clock_hz")
        pin = gpu.gmem_bandwidth_bytes_per_cycle_per_sm() * sms * clock
        fastest = max(pin, gpu.memory_bandwidth_measured_bytes_per_s or 0.0)
        tb = throughput_of(gpu, inputs.kernel, memory_bytes_per_s=fastest)
    except ModelError:
        return None
    warps = blocks_of(inputs.grid_size) * warps_per_block(inputs.block_size, gpu.require("warp_size"))
    # the issue limit is left out: it bounds instructions, not work, and a model that
    # ignores it (the roofline) is not implausible for that; so is the L2 row (the L2 hits
    # at an L2 bandwidth that is an assumption for most GPUs, and that models without
    # caches, mwp-cwp and bsp, do not see), and the L1 and load/store-unit rows for the same
    # reason
    worst = max(float(v) for r, v in tb.cycles_per_warp.items()
                if r not in ("issue", "l2", "l1", "lsu"))
    return warps * worst / (sms * clock) if worst > 0 else None


def floor_warning(model: str, time_s: float, floor_s: float | None) -> str | None:
    """A warning when ``time_s`` is below the peak-rate floor (with a 1e-9 tolerance)."""
    if floor_s is None or floor_s <= 0 or time_s >= floor_s * (1 - 1e-9):
        return None
    return (f"{model}: predicted {time_s:.4g} s is below the {floor_s:.4g} s the GPU's peak rates "
            f"allow for this work ({floor_s / time_s:.3g}× too fast); a λ or an input is implausible")


def finish(model: str, inputs: ModelInputs, *, kernel_cycles: float, bound: str, binding: str,
           quantities: dict, terms: list, notes: list, equations: str):
    """The ModelResult of ``kernel_cycles`` (SM cycles, before the launch overhead): the
    overhead term added, the time checked finite and against the peak-rate floor."""
    from gpumodeler.core.models.kernel_terms import launch_overhead
    clock = inputs.gpu.require("sm_clock_hz")
    kernel_s = check_finite(model, kernel_cycles / clock)
    overhead, effect = launch_overhead(inputs, kernel_s)
    time_s = check_finite(model, kernel_s + overhead)
    floor = peak_rate_floor_s(inputs)
    warnings = [w for w in (floor_warning(model, kernel_s, floor),) if w]
    return ModelResult(model=model, time_s=time_s, time_cycles=float(kernel_cycles), bound=bound,
                       binding_resource=binding, quantities=quantities,
                       terms=tuple(terms) + (effect,), notes=tuple(notes),
                       warnings=tuple(warnings), equations=equations, floor_s=floor)
