"""Which profiler metrics give which per-warp count (nvprof and Nsight Compute names).

Each quantity lists alternatives, tried in order; the first whose metrics are all present
in the profile is used, and its description is reported (``sources``). Scales:

* ``warp``: a warp-level count (one per warp instruction, transaction or request): divided
  by the warps launched.
* ``thread``: a thread-level count (``inst_fp_32``, ``smsp__sass_thread_inst_executed_*``,
  ``flop_count_*``: one per active, non-predicated thread): divided by the warp size and
  by the fraction of active threads per warp instruction when the profile gives it
  (``warp_nonpred_execution_efficiency`` or
  ``smsp__thread_inst_executed_per_inst_executed.ratio``), else full warps are assumed.
* ``bytes``: bytes; ``sectors``: 32-byte sectors/transactions (DRAM and L2 transactions
  of Maxwell and later are 32 B) converted to bytes.

``flop_count_sp_fma`` counts FMA *instructions* (the FLOP total counts them twice), so the
sum add + mul + fma is an instruction count.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Alternative:
    names: tuple
    scale: str  # 'warp', 'thread', 'bytes', 'sectors'

    def describe(self) -> str:
        how = {"warp": "per warp", "thread": "thread-level, / warp size",
               "bytes": "bytes", "sectors": "× 32 B"}[self.scale]
        return f"{' + '.join(self.names)} ({how})"


def _a(names, scale):
    return Alternative(tuple(names) if isinstance(names, (list, tuple)) else (names,), scale)


_SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
_WAVES = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum"
_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{}.sum"

QUANTITIES = {
    "issued_instructions": [
        _a("inst_issued", "warp"), _a("smsp__inst_issued.sum", "warp"),
        _a("sm__inst_issued.sum", "warp"), _a("Issued Instructions", "warp")],
    "executed_instructions": [
        _a("inst_executed", "warp"), _a("smsp__inst_executed.sum", "warp"),
        _a("sm__inst_executed.sum", "warp"), _a("Executed Instructions", "warp")],
    "fp32_instructions": [
        _a("inst_fp_32", "thread"), _a(_SASS.format("fp32"), "thread"),
        _a([_SASS.format(op) for op in ("fadd", "fmul", "ffma")], "thread"),
        _a(["flop_count_sp_add", "flop_count_sp_mul", "flop_count_sp_fma"], "thread")],
    "fp16_instructions": [
        _a("inst_fp_16", "thread"), _a(_SASS.format("fp16"), "thread"),
        _a([_SASS.format(op) for op in ("hadd", "hmul", "hfma")], "thread")],
    "integer_instructions": [
        _a("inst_integer", "thread"), _a(_SASS.format("integer"), "thread")],
    "control_instructions": [
        _a("cf_executed", "warp"), _a("inst_control", "thread"), _a(_SASS.format("control"), "thread")],
    "conversion_instructions": [
        _a("inst_bit_convert", "thread"), _a(_SASS.format("conversion"), "thread")],
    "fp64_instructions": [
        _a("inst_fp_64", "thread"), _a(_SASS.format("fp64"), "thread"),
        _a("smsp__inst_executed_pipe_fp64.sum", "warp"),
        _a([_SASS.format(op) for op in ("dadd", "dmul", "dfma")], "thread"),
        _a(["flop_count_dp_add", "flop_count_dp_mul", "flop_count_dp_fma"], "thread")],
    "sfu_instructions": [
        _a("smsp__inst_executed_pipe_xu.sum", "warp"), _a("flop_count_sp_special", "thread")],
    "tensor_instructions": [
        _a("smsp__inst_executed_pipe_tensor.sum", "warp"),
        _a("sm__inst_executed_pipe_tensor.sum", "warp")],
    "dram_bytes": [
        _a(["dram_read_bytes", "dram_write_bytes"], "bytes"),
        _a(["dram__bytes_read.sum", "dram__bytes_write.sum"], "bytes"),
        _a("dram__bytes.sum", "bytes"),
        _a(["dram_read_transactions", "dram_write_transactions"], "sectors"),
        _a(["dram__sectors_read.sum", "dram__sectors_write.sum"], "sectors")],
    "l2_bytes": [
        _a(["l2_read_transactions", "l2_write_transactions"], "sectors"),
        _a("lts__t_bytes.sum", "bytes"), _a("lts__t_sectors.sum", "sectors")],
    "global_transactions": [
        _a(["gld_transactions", "gst_transactions"], "warp"),
        _a(["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"], "warp")],
    "global_requests": [
        _a(["inst_executed_global_loads", "inst_executed_global_stores"], "warp"),
        _a(["gld_request", "gst_request"], "warp"),
        _a(["smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_global_st.sum"],
           "warp")],
    "shared_transactions": [
        _a(["shared_load_transactions", "shared_store_transactions"], "warp"),
        _a([_WAVES.format("ld"), _WAVES.format("st")], "warp"),
        _a("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "warp")],
    "shared_requests": [
        _a(["shared_load", "shared_store"], "warp"),
        _a(["smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"], "warp")],
    "shared_bank_conflicts": [
        _a(["shared_ld_bank_conflict", "shared_st_bank_conflict"], "warp"),
        _a([_CONFLICTS.format("ld"), _CONFLICTS.format("st")], "warp"),
        _a("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "warp")],
}

#: Achieved occupancy: (metric, how to read it) — fraction of the SM's warp slots, percent,
#: or warps per SM directly.
OCCUPANCY = (("achieved_occupancy", "fraction"),
             ("sm__warps_active.avg.pct_of_peak_sustained_active", "percent"),
             ("Achieved Occupancy", "percent"),
             ("sm__warps_active.avg.per_cycle_active", "warps"),
             ("Achieved Active Warps Per SM", "warps"))

#: Active threads per warp instruction: (metric, how to read it).
THREAD_ACTIVITY = (("warp_nonpred_execution_efficiency", "percent"),
                   ("smsp__thread_inst_executed_per_inst_executed.ratio", "threads"))

#: How each per-warp count carries to another architecture (docs/measurements.md).
PORTABILITY = {
    "issued_instructions": "changes: replays (Kepler, Maxwell) and dual issue are "
                           "architecture-specific, and the SASS is recompiled",
    "fp32_instructions": "carries when the same SASS runs (same compute capability); "
                         "otherwise close (compiler choices)",
    "integer_instructions": "carries within an architecture; address arithmetic differs "
                            "across them",
    "dram_bytes": "changes with the L2 size and caching policy of the target",
    "shared_transactions": "changes with the bank width and count (Kepler's 8-byte mode)",
    "latency_bound": "changes: instruction and memory latencies differ per architecture "
                     "(Gajger Table 4.1-4.2)",
    "achieved_occupancy": "never carries: recomputed for the target",
}
