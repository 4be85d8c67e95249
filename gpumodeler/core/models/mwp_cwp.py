"""Hong & Kim's MWP-CWP model (ISCA 2009), as restated by Sánchez Gil 2017 and by Volkov §7.1.

Equations (H1–H21 as numbered in ``docs/sources.md``; Sánchez Gil 2017 §1.6 describes
MWP and CWP in words, Volkov 2016 §7.1 restates the model on the GTX 280):

    Mem_L_Coal      = Mem_LD + (τ − 1) · Δ_coal           (H2; τ = 1 for a 128-byte warp access)
    Mem_L_Uncoal    = Mem_LD + (τ_u − 1) · Δ_uncoal       (H1; τ_u transactions per memory warp)
    Mem_L           = Mem_L_Uncoal · w_u + Mem_L_Coal · (1 − w_u)                  (H3–H5)
    Departure_delay = Δ_uncoal · τ_u · w_u + Δ_coal · τ · (1 − w_u)               (H6)
    MWP_Without_BW  = Mem_L / Departure_delay        (H7, H8)
    BW_per_warp     = Freq · Load_bytes_per_warp / Mem_L                      (H9)
    MWP_peak_BW     = Mem_Bandwidth / (BW_per_warp · #Active_SMs)            (H10)
    MWP             = min(MWP_Without_BW, MWP_peak_BW, N)                    (H11)
    Mem_cycles      = Mem_L · #Mem_insts;  Comp_cycles = Issue_cycles · #Total_insts   (H12, H13)
    CWP             = min((Mem_cycles + Comp_cycles) / Comp_cycles, N)      (H14, H15)
    #Rep            = #Blocks / (#Active_blocks_per_SM · #Active_SMs)         (H16)
    not enough warps (MWP = N = CWP):
        Exec = (Mem_cycles + Comp_cycles + Comp_cycles/#Mem_insts · (MWP − 1)) · #Rep     (H17a)
    memory-bound (CWP ≥ MWP or Comp_cycles > Mem_cycles):
        Exec = (Mem_cycles · N/MWP + Comp_cycles/#Mem_insts · (MWP − 1)) · #Rep           (H17b)
    compute-bound (MWP > CWP):
        Exec = (Mem_L + Comp_cycles · N) · #Rep                                           (H17c)
    Synch_cost = Departure_delay · (MWP − 1) · #Synch_insts · #Active_blocks_per_SM · #Rep (H18)
    T = (Exec + Synch_cost) / Freq                                                (H19, H21)

Inputs and the choices made where the documents leave them open:

* ``N`` = active warps per SM = active blocks per SM × warps per block, the active blocks
  being the whole blocks the occupancy allows, limited by the grid (``ceil(blocks / SMs)``);
  ``#Active_SMs`` = min(SMs, blocks). ``#Rep`` is the fraction as printed (H16); with the
  tail term on it is rounded up to whole waves ("some codes take ceil"). A grid smaller
  than one wave is one wave (#Rep = 1) with the under-filled term on (the default): H16's
  fraction would otherwise make 16 blocks on 15 SMs faster than 1 block.
* ``Mem_LD``: an explicit ``dram_latency_cycles``; else the DRAM latency of the GPU's
  latency table (Hong & Kim's Mem_LD is a machine constant, one figure per GPU, the latency
  of a DRAM access, their §3 and Table 6). Sánchez Gil's K40 regression ``Y = 0.466·X −
  1911.2`` cycles (eq. 7.1, X = threads, 9984–30720 threads, §6.3 and Fig. 41) is *not* the
  default: his benchmark (§5.4.2) has every thread of every block load the same 4-byte
  global variable, so it measures contention on one address, which grows with the thread
  count; an ordinary access pattern does not see it. It stays
  available by name (``dram_latency_model = "sanchez-gil-7.1"``, with X = resident
  threads, only on the Tesla K40 and inside the measured range).
* ``Mem_Bandwidth``: the measured (sustained) bandwidth where the database has it
  (Sánchez Gil: 183.5 GB/s on the K40, §5.2), else the theoretical one (noted).
* Two departure delays, as Hong & Kim have (4 and 40 cycles on the GTX 280):
  ``departure_delay_coal_cycles`` between the transactions of a coalesced access and
  ``departure_delay_uncoal_cycles`` of an uncoalesced one (``departure_delay_cycles`` sets
  both where they are not given). ``w_u`` (``uncoalesced_share``, 0 to 1, default 0) is the
  share of the memory instructions that are uncoalesced, H3's weight: the graph does not
  analyse addresses, so it is an input. An uncoalesced access is taken at τ_u = warp size
  transactions (one per thread, H&K's bound "up to 32"), a coalesced one at τ = its bytes
  per memory instruction / 128 B (at least 1). Sánchez Gil extracted neither delay: without
  them MWP_Without_BW is left out, as Volkov's §7.1 restatement does (MWP = min(n,
  MWP_peak_BW)); a coalesced access of τ > 1, an uncoalesced share or barriers need the
  delay concerned and ask for it.
* ``Issue_cycles`` (4 on G80/GT200 = 32 threads / 8 cores): the SM's cycles per warp
  instruction, max(warp size / CUDA cores per SM, 1 / (schedulers · issue rate)), unless given.
* ``#Mem_insts`` = global/local memory warp instructions per warp; ``#Total_insts`` = warp
  instructions per warp (from the graph; the issued instructions without one); τ = GMem bytes per memory instruction / 128 B. A kernel without
  memory instructions is compute-bound: Exec = Comp_cycles · N · #Rep (H17c with Mem_L = 0).
"""
from __future__ import annotations

import math

from gpumodeler.core.models import kernel_terms as kt
from gpumodeler.core.models.result import (InvalidParameter, MissingModelInput, ModelInputs,
                                           ModelResult, TermEffect)
from gpumodeler.core.models.sanity import finish

TRANSACTION_BYTES = 128.0
#: Sánchez Gil 2017 eq. (7.1): DRAM latency = 0.466 · threads − 1911.2 cycles (R² = 0.88),
#: measured on the Tesla K40 from 9984 (DRAM onset, §6.3.1) to 30720 threads, every thread
#: loading the same word (§5.4): contention on one address, used only when named.
K40_DRAM_REGRESSION = (0.466, -1911.2, 9984, 30720)
K40_NAMES = ("Tesla K40",)
EQUATIONS = "Hong & Kim 2009 eq. (H1–H21 of docs/sources.md); Volkov 2016 §7.1; Sánchez Gil 2017 Table 10, eq. 7.1"


def issue_cycles(inputs: ModelInputs) -> float:
    """H&K Issue_cycles: given, or the SM's cycles per warp instruction (module docstring)."""
    given = inputs.param("issue_cycles")
    if given is not None:
        if given <= 0:
            raise MissingModelInput("issue_cycles must be > 0", item="issue_cycles")
        return given
    gpu = inputs.gpu
    cores = gpu.require("warp_size") / gpu.require("cuda_cores_per_sm")
    issue = 1.0 / (gpu.require("schedulers_per_sm") * gpu.require("issue_per_scheduler_per_cycle"))
    return max(cores, issue)


#: The published DRAM-latency models a user may name instead of the table's constant.
DRAM_LATENCY_MODELS = ("sanchez-gil-7.1",)


def dram_latency(inputs: ModelInputs, resident_threads: float):
    """(Mem_LD cycles, source note): given, else the named model, else the GPU's table."""
    given = inputs.param("dram_latency_cycles")
    if given is not None:
        return given, "given"
    gpu = inputs.gpu
    model = inputs.parameters.get("dram_latency_model")
    if model is not None:
        if model not in DRAM_LATENCY_MODELS:
            raise InvalidParameter(f"unknown DRAM-latency model {model!r}; valid: "
                                   f"{', '.join(DRAM_LATENCY_MODELS)}", item="dram_latency_model")
        slope, icpt, lo, hi = K40_DRAM_REGRESSION
        if gpu.name not in K40_NAMES:
            raise InvalidParameter(f"Sánchez Gil's eq. 7.1 was measured on the Tesla K40 only, "
                                   f"not on '{gpu.name}'", item="dram_latency_model")
        if not lo <= resident_threads <= hi:
            raise InvalidParameter(f"Sánchez Gil's eq. 7.1 holds for {lo}–{hi} threads; this "
                                   f"launch has {resident_threads:g} resident threads",
                                   item="dram_latency_model")
        return slope * resident_threads + icpt, (
            f"Sánchez Gil eq. 7.1 at {resident_threads:g} resident threads: one address under "
            f"contention, not an ordinary access")
    if gpu.latency_table:
        from gpumodeler.core.kernel.latency_tables import TABLES
        table = TABLES.get(gpu.latency_table)
        if table is not None and table.memory_cycles.get("dram") is not None:
            return float(table.memory_cycles["dram"]), f"DRAM latency of table {table.key}"
    raise MissingModelInput(f"mwp-cwp needs the DRAM latency Mem_LD of '{gpu.name}'",
                            item="dram_latency_cycles")


def evaluate(inputs: ModelInputs) -> ModelResult:
    """Hong & Kim's execution time for one launch (see the module docstring)."""
    gpu, kernel = inputs.gpu, inputs.kernel
    sms, clock = gpu.require("sms"), gpu.require("sm_clock_hz")
    wpb = kt.warps_per_block(inputs.block_size, gpu.require("warp_size"))
    blocks = kt.blocks_of(inputs.grid_size)
    active_sms = int(kt.active_sms(sms, blocks))
    cap = max(1, math.floor(float(inputs.occupancy) / wpb + 1e-9))
    active_blocks = min(cap, -(-blocks // active_sms))
    N = float(active_blocks * wpb)
    rep_exact = blocks / (active_blocks * active_sms)
    rep_h16 = rep_exact   # H16's fraction as printed
    underfilled = blocks < sms * cap
    if underfilled and inputs.terms.underfill:
        rep_exact = 1.0  # one (partial) wave: the busiest SM runs all its blocks once
    tail_on = inputs.terms.tail and not underfilled   # a grid under one wave has no tail
    rep = math.ceil(rep_exact - 1e-12) if tail_on else rep_exact
    notes = []
    total_insts = inputs.count("instructions")
    if total_insts is None:
        total_insts = float(kernel.issued_instructions)
        notes.append("#Total_insts = issued instructions (no graph: dual issues and reissues not separated)")
    mem_insts = inputs.count("memory_instructions")
    gmem = float(kernel.gmem_bytes)
    if mem_insts is None:
        if gmem > 0:
            raise MissingModelInput("mwp-cwp needs the global-memory warp instructions per warp "
                                    "(give --graph, or the count)", item="memory_instructions")
        mem_insts = 0.0
    synch = inputs.count("synch_instructions", 0.0)
    issue = issue_cycles(inputs)
    comp_cycles = issue * total_insts
    if comp_cycles <= 0:
        raise MissingModelInput("mwp-cwp needs instructions per warp > 0", item="issued_instructions")
    legacy = inputs.param("departure_delay_cycles")
    delta_c = inputs.param("departure_delay_coal_cycles", legacy)
    delta_u = inputs.param("departure_delay_uncoal_cycles", legacy)
    w_u = inputs.param("uncoalesced_share", 0.0)
    if w_u > 1:
        raise InvalidParameter(f"uncoalesced_share is a share of the memory instructions, 0 to 1; "
                               f"got {w_u}", item="uncoalesced_share")
    q = {"N_active_warps_per_sm": N, "active_sms": active_sms, "active_blocks_per_sm": active_blocks,
         "rep": rep, "issue_cycles": issue, "comp_cycles": comp_cycles,
         "total_instructions": total_insts, "memory_instructions": mem_insts,
         "synch_instructions": synch}
    if mem_insts <= 0 or gmem <= 0:
        exec_cycles = comp_cycles * N * rep
        q.update(MWP=None, CWP=None, case="compute-bound (no memory instructions)")
        bound, binding = "compute", "issue"
        departure = delta_c or 0.0
        mwp = 1.0
    else:
        resident = min(blocks * wpb, active_sms * N) * gpu.require("warp_size")
        mem_ld, source = dram_latency(inputs, resident)
        notes.append(f"Mem_LD = {mem_ld:.6g} cycles ({source})")
        load_bytes = gmem / mem_insts
        tau = max(1.0, load_bytes / TRANSACTION_BYTES)
        tau_u = float(gpu.require("warp_size"))
        w_c = 1.0 - w_u
        if w_c > 0 and tau > 1 + 1e-12 and delta_c is None:
            raise MissingModelInput(
                f"mwp-cwp: accesses of {tau:g} transactions per memory instruction need the "
                f"coalesced departure delay Δ_coal (Sánchez Gil did not extract it)",
                item="departure_delay_coal_cycles")
        if w_u > 0 and delta_u is None:
            raise MissingModelInput(
                f"mwp-cwp: an uncoalesced share of {w_u:g} needs the uncoalesced departure delay "
                f"Δ_uncoal (Hong & Kim: 40 cycles on the GTX 280; Sánchez Gil did not extract it)",
                item="departure_delay_uncoal_cycles")
        mem_l_coal = mem_ld + (tau - 1.0) * (delta_c or 0.0)                       # H2
        mem_l_uncoal = mem_ld + (tau_u - 1.0) * (delta_u or 0.0)                   # H1
        mem_l = mem_l_uncoal * w_u + mem_l_coal * w_c                              # H3-H5
        known = (w_c == 0 or delta_c is not None) and (w_u == 0 or delta_u is not None)
        departure = ((delta_u or 0.0) * tau_u * w_u + (delta_c or 0.0) * tau * w_c   # H6
                     if known else None)
        q.update(Mem_L_Coal=mem_l_coal, Mem_L_Uncoal=mem_l_uncoal, uncoalesced_share=w_u,
                 departure_delay_coal=delta_c, departure_delay_uncoal=delta_u)
        if gpu.memory_bandwidth_measured_bytes_per_s is not None:
            bandwidth = float(gpu.memory_bandwidth_measured_bytes_per_s)
            notes.append(f"Mem_Bandwidth = measured {bandwidth / 1e9:.4g} GB/s")
        else:
            bandwidth = gpu.gmem_bandwidth_bytes_per_cycle_per_sm() * sms * clock
            notes.append(f"Mem_Bandwidth = theoretical {bandwidth / 1e9:.4g} GB/s (no measured value)")
        bw_per_warp = clock * load_bytes / mem_l
        mwp_peak = kt.memory_bandwidth_per_active_sm(bandwidth, sms, blocks) / bw_per_warp
        mwp_no_bw = mem_l / departure if departure else math.inf
        if departure is None:
            notes.append("departure delay unknown: MWP_Without_BW left out (as Volkov §7.1)")
        mwp = min(mwp_no_bw, mwp_peak, N)
        mem_cycles = mem_l * mem_insts
        cwp = min((mem_cycles + comp_cycles) / comp_cycles, N)
        comp_p = comp_cycles / mem_insts
        if mwp == N and cwp == N:
            case, bound, binding = "not enough warps", "latency", "latency"
            exec_cycles = (mem_cycles + comp_cycles + comp_p * (mwp - 1)) * rep
        elif cwp >= mwp or comp_cycles > mem_cycles:
            case, bound, binding = "memory-bound", "memory", "memory"
            exec_cycles = (mem_cycles * N / mwp + comp_p * (mwp - 1)) * rep
        else:
            case, bound, binding = "compute-bound", "compute", "issue"
            exec_cycles = (mem_l + comp_cycles * N) * rep
        q.update(Mem_LD=mem_ld, Mem_L=mem_l, transactions_per_memory_instruction=tau,
                 departure_delay=departure, BW_per_warp_bytes_per_s=bw_per_warp,
                 MWP_peak_BW=mwp_peak, MWP_Without_BW=None if departure is None else mwp_no_bw,
                 MWP=mwp, CWP_full=(mem_cycles + comp_cycles) / comp_cycles, CWP=cwp,
                 mem_cycles=mem_cycles, case=case, mem_bandwidth_bytes_per_s=bandwidth)
    synch_cost = 0.0
    if synch > 0:
        if departure is None:
            raise MissingModelInput("mwp-cwp: the synchronisation cost (H18) needs the departure delay Δ",
                                    item="departure_delay_cycles")
        synch_cost = departure * (mwp - 1) * synch * active_blocks * rep
    q.update(exec_cycles=exec_cycles, synch_cost_cycles=synch_cost)
    tail = (TermEffect("tail effect", True, (rep - rep_exact) / rep_exact * exec_cycles / clock,
                       rep / rep_exact - 1.0, f"#Rep {rep_exact:.4g} rounded up to {rep}")
            if tail_on else TermEffect("tail effect", False, note=(
                "the grid is less than one wave" if underfilled
                else "#Rep as printed (H16); --tail rounds it up")))
    if underfilled:
        notes.append("under-filled GPU: N and #Active_SMs are limited by the grid (built into H&K)"
                     + ("; #Rep = 1, one partial wave" if inputs.terms.underfill else ""))
    # the under-filled term: #Rep = 1 instead of H16's fraction (Exec and Synch_cost are
    # both proportional to #Rep, so its effect is the ratio of the two)
    if not underfilled:
        under = TermEffect("under-filled GPU", False, note="the grid fills at least one wave")
    elif not inputs.terms.underfill:
        under = TermEffect("under-filled GPU", False,
                           note="switched off: #Rep as printed (H16); N and #Active_SMs stay "
                                "limited by the grid (H&K)")
    else:
        after_s = (exec_cycles + synch_cost) / clock
        before_s = after_s * rep_h16 / rep
        under = TermEffect("under-filled GPU", True, after_s - before_s, rep / rep_h16 - 1.0,
                           f"{blocks} blocks on {sms} SMs: #Rep = 1 (one wave) instead of H16's "
                           f"{rep_h16:.4g}")
    terms = [under, tail]
    return finish("mwp-cwp", inputs, kernel_cycles=exec_cycles + synch_cost, bound=bound,
                  binding=binding, quantities=q, terms=terms, notes=notes, equations=EQUATIONS)
