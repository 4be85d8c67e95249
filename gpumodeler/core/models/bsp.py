"""Amarís' simple BSP-based GPU model (Amarís 2018 thesis §3.2; Amarís et al. HiPC 2015 §IV).

    T_k     = t · (comp + comm_GM + comm_SM) / (R · P · λ)                  (T eq. 3.3 = H eq. 3)
    comm_SM = (ld_0 + st_0) · g_SM                                          (T eq. 3.4 = H eq. 4)
    comm_GM = (ld_1 + st_1 − L1 − L2) · g_GM + L1 · g_L1 + L2 · g_L2        (T eq. 3.5 = H eq. 5)

``t`` threads launched (grid × block), ``comp`` computation cycles per thread, ``ld/st_1``
global and ``ld/st_0`` shared-memory accesses per thread, ``L1``/``L2`` the global accesses
per thread served by each cache, ``R`` the clock (Hz), ``P`` all cores of the GPU (SMs ×
cores per SM), λ the model's adjustment calibrated from one measurement
(λ = T_k(λ=1) / T_m, T §3.2). Per-level costs are the documents' "typical values": g_GM =
500, g_L2 = 250, g_SM = g_L1 = 5 cycles (T §3.2, H §IV and §VI). Every experiment of the
thesis uses L1 = L2 = 0 (T §3.3), which is the default here. Loads and stores cost the
same; synchronisation is not counted (T §3.2).

Choices where our inputs differ from the documents' hand counts:

* ``comp``: given (``bsp_comp_cycles``), else the kernel's arithmetic warp instructions per
  warp (CUDA-core + SFU + FP64) at 1 cycle each — the HiPC paper's parameterisation ("an FMA
  needs a single rounding step or cycle", H §V.A; the thesis' own scripts also use 1).
* ``ld_1 + st_1`` = global/local memory warp instructions per warp (each thread makes one
  access per warp instruction); ``ld_0 + st_0`` = shared-memory warp instructions per warp.
* λ is the model's own (``bsp_lambda``, default 1: uncalibrated, noted); Gajger's λ is not used.

The model has no occupancy, no waves and no bandwidth ceiling: it is a per-thread cost
spread over all cores. Its P counts every core, which a grid smaller than one wave does not
reach (16 blocks of 256 threads cannot run faster than one thread's cost on 15 SMs of 192
cores). The under-filled and tail terms are therefore applied as for every model
(:mod:`whole_blocks`): the cost of the busiest SM's whole blocks over that SM's cores, i.e.
eq. 3.3 × ceil(blocks/SMs)·SMs/blocks, with the same switches (under-filled on, tail off);
where no term applies (a grid whose blocks spread evenly) eq. 3.3 is unchanged.
"""
from __future__ import annotations

from gpumodeler.core.models import kernel_terms as kt
from gpumodeler.core.models.whole_blocks import busiest_sm
from gpumodeler.core.models.result import MissingModelInput, ModelInputs, ModelResult
from gpumodeler.core.models.sanity import finish

G_GM, G_L2, G_L1, G_SM = 500.0, 250.0, 5.0, 5.0
EQUATIONS = "Amarís 2018 eq. 3.3–3.5 (HiPC 2015 eq. 3–5)"


def bsp_cycles_per_thread(comp, global_accesses, shared_accesses, l1_hits=0.0, l2_hits=0.0,
                          *, g_gm=G_GM, g_l2=G_L2, g_l1=G_L1, g_sm=G_SM) -> dict:
    """comp, comm_GM (eq. 3.5), comm_SM (eq. 3.4) and their sum, cycles per thread."""
    if l1_hits + l2_hits > global_accesses + 1e-12:
        raise MissingModelInput(f"L1 + L2 hits ({l1_hits + l2_hits:g}) exceed the global accesses "
                                f"per thread ({global_accesses:g})", item="bsp_l1_hits")
    comm_gm = (global_accesses - l1_hits - l2_hits) * g_gm + l1_hits * g_l1 + l2_hits * g_l2
    comm_sm = shared_accesses * g_sm
    return {"comp": comp, "comm_GM": comm_gm, "comm_SM": comm_sm, "total": comp + comm_gm + comm_sm}


def evaluate(inputs: ModelInputs) -> ModelResult:
    """T_k of eq. 3.3 for one launch."""
    gpu, kernel = inputs.gpu, inputs.kernel
    sms, clock = gpu.require("sms"), gpu.require("sm_clock_hz")
    cores = sms * gpu.require("cuda_cores_per_sm")
    threads = kt.blocks_of(inputs.grid_size) * (
        kt.blocks_of(inputs.block_size))
    notes = []
    comp = inputs.param("bsp_comp_cycles")
    if comp is None:
        comp = float(kernel.cuda_core_instructions) + float(kernel.sfu_instructions) + float(kernel.fp64_instructions)
        notes.append("comp = arithmetic instructions per thread at 1 cycle each (HiPC 2015)")
    global_acc = inputs.count("memory_instructions")
    if global_acc is None:
        if float(kernel.gmem_bytes) > 0:
            raise MissingModelInput("bsp needs the global-memory accesses per thread (give --graph, "
                                    "or the count)", item="memory_instructions")
        global_acc = 0.0
    shared_acc = inputs.count("shared_instructions", 0.0)
    lam = inputs.param("bsp_lambda")
    if lam is None:
        lam = 1.0
        notes.append("λ = 1: uncalibrated (Amarís calibrates λ per kernel and board from one measurement)")
    if lam <= 0:
        raise MissingModelInput("bsp λ must be > 0", item="bsp_lambda")
    costs = bsp_cycles_per_thread(comp, global_acc, shared_acc, inputs.param("bsp_l1_hits", 0.0),
                                  inputs.param("bsp_l2_hits", 0.0))
    spread_s = threads * costs["total"] / (clock * cores * lam)          # eq. 3.3
    whole = busiest_sm(inputs)
    seconds = spread_s * whole.factor
    parts = {"comp": costs["comp"], "global memory": costs["comm_GM"], "shared memory": costs["comm_SM"]}
    binding = max(parts, key=lambda p: parts[p])
    q = {"threads": threads, "cores": cores, "lambda": lam, "comp_cycles": costs["comp"],
         "comm_GM_cycles": costs["comm_GM"], "comm_SM_cycles": costs["comm_SM"],
         "cycles_per_thread": costs["total"], "global_accesses_per_thread": global_acc,
         "shared_accesses_per_thread": shared_acc,
         "g": {"GM": G_GM, "L2": G_L2, "L1": G_L1, "SM": G_SM},
         "eq_3_3_time_s": spread_s, "blocks_on_busiest_sm": whole.per_sm}
    return finish("bsp", inputs, kernel_cycles=seconds * clock,
                  bound="compute" if binding == "comp" else "memory", binding=binding,
                  quantities=q, terms=whole.effects(spread_s, seconds), notes=notes,
                  equations=EQUATIONS)
