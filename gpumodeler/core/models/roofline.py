"""The roofline model (Williams, Waterman & Patterson, CACM 2009), per memory level.

    attainable ops/s = min(peak ops/s, intensity_level × bandwidth_level)   for every level
    time = work / attainable = max(work / peak, bytes_level / bandwidth_level)

Work is counted as thread-level operations of the arithmetic pipes (one per thread per
CUDA-core, SFU or FP64 warp instruction) and the compute ceiling is each pipe's peak (units
per SM × SMs × clock), so an FMA counts once on both sides and the ratio is that of FLOP/s
(twice the work against twice the peak). A kernel using several pipes is bound by the
busiest: peak = work / max_pipe(ops_pipe / peak_pipe). Memory levels and their traffic:

* ``dram``: the kernel's global-memory bytes from DRAM (GMem bytes per warp × warps: the
  compulsory bytes, after the reuse the L2 serves) at the sustained (measured) bandwidth
  where the database has one, else the theoretical one (noted);
* ``l2``: every global request reaches the L2: those bytes plus the L2 hits (``l2_bytes``
  per warp × warps, core.kernel.sass.reuse) at the L2 bandwidth, when it is known;
* ``shared``: shared-memory traffic, 128 B per conflict-weighted warp access, at the shared
  memory's warp accesses per cycle per SM (Volkov Table 6.1).

The roofline has no latency, no occupancy and no issue limit (it is the throughput-only
end of Volkov's model, §3.5). Its ceilings are the whole GPU's, which a grid smaller than
one wave does not reach; the under-filled and tail terms apply as for every model, with no
latency (:mod:`whole_blocks`): the per-SM ceilings (the pipes and shared memory) carry the
busiest SM's whole blocks, their time × ceil(blocks/SMs)·SMs/blocks, while DRAM and L2 are
shared by the SMs and keep their total time (no per-SM bandwidth cap). Where no term
applies the roofline is Williams et al.'s unchanged.
"""
from __future__ import annotations

import math

from gpumodeler.core.models import kernel_terms as kt
from gpumodeler.core.models.whole_blocks import busiest_sm
from gpumodeler.core.models.result import MissingModelInput, ModelInputs, ModelResult
from gpumodeler.core.models.sanity import finish

EQUATIONS = "Williams et al. 2009 (roofline): attainable = min(peak, intensity × bandwidth), per level"
SHARED_BYTES_PER_ACCESS = 128.0


def evaluate(inputs: ModelInputs) -> ModelResult:
    """Time and attainable throughput of one launch under the roofline."""
    gpu, kernel = inputs.gpu, inputs.kernel
    sms, clock = gpu.require("sms"), gpu.require("sm_clock_hz")
    ws = gpu.require("warp_size")
    warps = kt.blocks_of(inputs.grid_size) * kt.warps_per_block(inputs.block_size, ws)
    notes = []
    pipes = {"cuda_cores": (float(kernel.cuda_core_instructions), "cuda_cores_per_sm"),
             "sfu": (float(kernel.sfu_instructions), "sfu_per_sm"),
             "fp64": (float(kernel.fp64_instructions), "fp64_units_per_sm")}
    work = 0.0
    compute_s = 0.0
    compute_pipe = "cuda_cores"
    for pipe, (count, field) in pipes.items():
        if count <= 0:
            continue
        ops = count * ws * warps
        work += ops
        t = ops / (gpu.require(field) * sms * clock)
        if t > compute_s:
            compute_s, compute_pipe = t, pipe
    peak = work / compute_s if compute_s > 0 else None
    gmem_total = float(kernel.gmem_bytes) * warps
    l2_total = float(getattr(kernel, "l2_bytes", 0.0) or 0.0) * warps  # L2 hits (reuse)
    levels = {}
    if gmem_total + l2_total > 0:
        if gmem_total > 0:
            if gpu.memory_bandwidth_measured_bytes_per_s is not None:
                bw = float(gpu.memory_bandwidth_measured_bytes_per_s)
                notes.append(f"DRAM ceiling: measured {bw / 1e9:.4g} GB/s")
            else:
                bw = gpu.gmem_bandwidth_bytes_per_cycle_per_sm() * sms * clock
                notes.append(f"DRAM ceiling: theoretical {bw / 1e9:.4g} GB/s (no measured value)")
            levels["dram"] = (gmem_total, bw)
        if gpu.l2_bandwidth_bytes_per_s is not None:  # every global request reaches the L2
            levels["l2"] = (gmem_total + l2_total, float(gpu.l2_bandwidth_bytes_per_s))
    smem = float(kernel.smem_bank_cycles) * warps
    if smem > 0:
        rate = gpu.require("smem_accesses_per_cycle_per_sm")
        levels["shared"] = (smem * SHARED_BYTES_PER_ACCESS, rate * SHARED_BYTES_PER_ACCESS * sms * clock)
    if work <= 0 and not levels:
        raise MissingModelInput("roofline needs work: arithmetic instructions or memory bytes per warp",
                                item="cuda_core_instructions")
    per_level = {}
    whole = busiest_sm(inputs)
    spread_s = compute_s
    time_s, binding = compute_s * whole.factor, compute_pipe
    for level, (nbytes, bw) in levels.items():
        t = nbytes / bw
        per_level[level] = {
            "bytes": nbytes, "bandwidth_bytes_per_s": bw,
            "intensity_ops_per_byte": work / nbytes if nbytes else math.inf,
            "attainable_ops_per_s": (min(peak, work / nbytes * bw) if peak else None),
            "time_s": t}
        spread_s = max(spread_s, t)
        t_busiest = t * whole.factor if level == "shared" else t   # per-SM vs shared levels
        if t_busiest > time_s:
            time_s, binding = t_busiest, level
    q = {"work_ops": work, "peak_ops_per_s": peak, "compute_time_s": compute_s,
         "compute_pipe": compute_pipe, "levels": per_level,
         "attainable_ops_per_s": work / time_s if work else 0.0,
         "ridge_intensity_dram": (peak / levels["dram"][1]) if peak and "dram" in levels else None,
         "roofline_time_s": spread_s, "blocks_on_busiest_sm": whole.per_sm}
    return finish("roofline", inputs, kernel_cycles=time_s * clock,
                  bound="compute" if binding in pipes else "memory", binding=binding,
                  quantities=q, terms=[kt.l2_effect(inputs)] + whole.effects(spread_s, time_s),
                  notes=notes, equations=EQUATIONS)
