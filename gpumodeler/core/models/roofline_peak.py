"""The one-line roofline: the baseline a user writes from a kernel's source, at the vendor's peaks.

    time = max(work ÷ peak rate of the busiest pipe, DRAM bytes ÷ peak DRAM bandwidth)

the roofline of Williams, Waterman & Patterson (CACM 2009, "attainable = min(peak,
intensity × bandwidth)") with one memory level and nothing else: no latency, no occupancy,
no L1/L2/shared-memory level, no tail of a partial wave. It is not a registered model and
changes no model's prediction; ``gpumodeler validate`` reports it next to the ``roofline``
model (which uses the sustained bandwidth and the L2, L1 and shared-memory levels) as the
weaker baseline the validation goal names ("bytes ÷ peak bandwidth, flops ÷ peak").

Choices, each the reading closest to a one-liner written from the source:

* **Work**: thread operations per pipe — one per thread per CUDA-core, SFU and FP64 warp
  instruction, as the ``roofline`` model counts them, and one per shared-memory warp access
  on the shared-memory pipe (its peak, warp accesses per cycle per SM, Volkov 2016 Table
  6.1). A shared-memory access counts once: bank conflicts are not seen from the source.
  The busiest pipe binds: ``max_pipe(ops_pipe / peak_pipe)``.
* **Bytes**: the compulsory DRAM bytes, each array element read or written once (the
  "unique" bytes of Williams et al.'s roofline): the launch graph's global-memory bytes
  per warp × warps with a cache of any size (``graph_for_launch(..., compulsory=True)``):
  a stencil's neighbour loads and a tiled or naive matrix multiply's re-reads by other
  warps and blocks come from DRAM once, whatever the L2 holds. Not the import-time bytes
  (every load charged its own sectors: a 5-point stencil 5×) nor the launch's modelled
  DRAM bytes (more than the unique ones when the wave's working set exceeds the L2): a
  one-liner written from the source counts each array once. An access still moves whole
  32-byte sectors (an uncoalesced read counts the sectors it touches, less what the other
  warps of its block and grid read of them).
* **Bandwidth**: the vendor's theoretical (pin) DRAM bandwidth, never the sustained one:
  ``memory_bandwidth_bytes_per_s`` as the database states it, else memory clock × bus width
  / 8 × data rate (Gajger 2017 eq. 4.7's numerator), else the per-SM bytes per cycle × SMs ×
  SM clock of the same equation.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models import kernel_terms as kt
from gpumodeler.core.models.result import MissingModelInput, ModelInputs

NAME = "roofline-peak"
EQUATIONS = ("Williams et al. 2009 (roofline), one level: time = max(work / peak of the busiest "
             "pipe, DRAM bytes / peak DRAM bandwidth)")


@dataclass(frozen=True)
class PeakRoofline:
    """The one-line roofline of one launch: its time and the two sides of the max."""

    time_s: float
    bound: str               # "compute" or "memory"
    binding: str             # the busiest pipe, or "dram"
    compute_time_s: float
    memory_time_s: float
    dram_bytes: float
    peak_bandwidth_bytes_per_s: float | None


def peak_dram_bandwidth(gpu: GPUSpec) -> float:
    """The vendor's theoretical DRAM bandwidth, bytes/s (Gajger 2017 eq. 4.7's numerator)."""
    if gpu.memory_bandwidth_bytes_per_s is not None:
        return float(gpu.memory_bandwidth_bytes_per_s)
    parts = ("memory_clock_hz", "memory_bus_width_bits", "memory_data_rate")
    if all(getattr(gpu, n) is not None for n in parts):
        return (float(gpu.require("memory_clock_hz")) * float(gpu.require("memory_bus_width_bits"))
                / 8.0 * float(gpu.require("memory_data_rate")))
    return (gpu.gmem_bandwidth_bytes_per_cycle_per_sm() * float(gpu.require("sms"))
            * float(gpu.require("sm_clock_hz")))


def evaluate(inputs: ModelInputs, dram_bytes_per_warp: float | None = None) -> PeakRoofline:
    """The one-line roofline time of one launch (module docstring for what it counts).

    ``dram_bytes_per_warp``: the compulsory DRAM bytes per warp (the launch graph's with
    ``compulsory=True``, core.kernel.sass.launch_memory); default the kernel's
    ``gmem_bytes`` (a graph without addresses: its bytes as written). Raises :class:`MissingModelInput` for a kernel with neither work nor DRAM bytes."""
    gpu, kernel = inputs.gpu, inputs.kernel
    sms, clock = float(gpu.require("sms")), float(gpu.require("sm_clock_hz"))
    ws = gpu.require("warp_size")
    warps = float(kt.blocks_of(inputs.grid_size) * kt.warps_per_block(inputs.block_size, ws))
    shared = float((inputs.counts or {}).get("shared_instructions") or 0.0)
    # pipe: (warp instructions per warp, thread ops per warp instruction, field of units per SM)
    pipes = {"cuda_cores": (float(kernel.cuda_core_instructions), ws, "cuda_cores_per_sm"),
             "sfu": (float(kernel.sfu_instructions), ws, "sfu_per_sm"),
             "fp64": (float(kernel.fp64_instructions), ws, "fp64_units_per_sm"),
             "shared": (shared, 1, "smem_accesses_per_cycle_per_sm")}
    compute_s, pipe = 0.0, "cuda_cores"
    for name, (count, ops_per_instruction, field) in pipes.items():
        if count <= 0:
            continue
        t = count * ops_per_instruction * warps / (float(gpu.require(field)) * sms * clock)
        if t > compute_s:
            compute_s, pipe = t, name
    per_warp = kernel.gmem_bytes if dram_bytes_per_warp is None else dram_bytes_per_warp
    dram_bytes = float(per_warp) * warps
    bandwidth = peak_dram_bandwidth(gpu) if dram_bytes > 0 else None
    memory_s = dram_bytes / bandwidth if bandwidth else 0.0
    if compute_s <= 0 and memory_s <= 0:
        raise MissingModelInput("the one-line roofline needs work: arithmetic or shared-memory "
                                "instructions or global-memory bytes per warp",
                                item="cuda_core_instructions")
    if memory_s > compute_s:
        return PeakRoofline(memory_s, "memory", "dram", compute_s, memory_s, dram_bytes, bandwidth)
    return PeakRoofline(compute_s, "compute", pipe, compute_s, memory_s, dram_bytes, bandwidth)


__all__ = ["EQUATIONS", "NAME", "PeakRoofline", "evaluate", "peak_dram_bandwidth"]
