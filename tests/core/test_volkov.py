"""Volkov 2016 oracles (worked examples): vector add on Kepler (§3.8) and the Maxwell
throughput worksheet (Tables 3.2–3.4)."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.models.gajger import kernel_inputs_from_graph, predict
from gpumodeler.core.models.throughput import throughput_bound
from gpumodeler.core.kernel.warp_counts import count

GTX680 = GPUSpec("GeForce GTX 680", compute_capability="3.0", sms=8, sm_clock_hz=1.124e9,
                 cuda_cores_per_sm=192, schedulers_per_sm=4,
                 gmem_bytes_per_cycle_per_sm=154e9 / (8 * 1.124e9))
VECTOR_ADD = ["MOV", "S2R", "S2R", "IMAD", "ISCADD", "ISCADD", "LD", "LD", "ISCADD", "FADD", "ST", "EXIT"]
READS = {3: [2, 1], 4: [3], 5: [3], 6: [4], 7: [5], 8: [3], 9: [6, 7], 10: [8, 9]}
DUAL = {(0, 1), (4, 5), (7, 8), (10, 11)}


def vector_add_graph():
    g = KernelGraph(name="vector add", latency_table="kepler-volkov")
    for i, op in enumerate(VECTOR_ADD):
        g.add_instruction(Instruction.make(f"n{i}", op))
    g.add_instruction(Instruction.make("end", "END"))
    for i in range(len(VECTOR_ADD) - 1):
        g.add_edge(Edge(f"s{i}", f"n{i}", f"n{i+1}", "dual" if (i, i + 1) in DUAL else "ilp"))
    for dst, srcs in READS.items():
        for src in srcs:
            kind = "memory" if VECTOR_ADD[src] == "LD" else "dependency"
            g.add_edge(Edge(f"d{src}_{dst}", f"n{src}", f"n{dst}", kind))
    g.add_edge(Edge("term", "n11", "end", "replacement"))
    return g


def test_vector_add_latency_bound_544():
    g = vector_add_graph()
    bound = analyze(g)
    assert bound.evaluate() == 544
    path = bound.critical_path()
    assert [n for n in path.node_ids] == ["n0", "n1", "n2", "n3", "n4", "n6", "n7", "n9", "n10",
                                          "n11", "end"]


def test_vector_add_issue_and_memory_bounds():
    g = vector_add_graph()
    counts = count(g).evaluate()
    assert counts["instructions"] == 12 and counts["dual_issues"] == 4
    assert counts["issued_instructions"] == 8
    assert counts["gmem_bytes"] == 3 * 128
    inputs = kernel_inputs_from_graph(g)
    tb = throughput_bound(GTX680, issued_instructions=inputs.issued_instructions,
                          gmem_bytes=inputs.gmem_bytes)
    assert 1 / tb.cycles_per_warp["issue"] == pytest.approx(0.5)
    assert tb.warps_per_cycle == pytest.approx(0.0445, rel=1e-2)
    assert tb.binding == "memory"


@pytest.mark.parametrize("n, gbps", [(10, 63.5), (64, 154.0)])
def test_vector_add_memory_throughput(n, gbps):
    """min(n · 6.35 GB/s, 154 GB/s): warp throughput × 384 B × 8 SMs × 1.124 GHz."""
    g = vector_add_graph()
    inputs = kernel_inputs_from_graph(g)
    p = predict(GTX680, inputs, grid_size=10_000, block_size=256, occupancy=n)
    achieved = p.kernel.warp_throughput * 384 * 8 * 1.124e9 / 1e9
    assert achieved == pytest.approx(gbps, rel=1e-2)
    assert p.kernel.knee_occupancy == pytest.approx(544 * 0.0446, rel=1e-2)  # ≈ 24.2 warps/SM


def test_maxwell_worksheet_table_3_4_from_a_graph():
    """Table 3.2's mix as a graph: 100 CUDA-core, 5 SFU (each dual-issued with a CUDA-core
    instruction), 10 + 10 shared accesses (no / 2-way conflict), 5 + 5 DRAM accesses
    (coalesced / stride 2). Table 3.4: CUDA 25, SFU 5, smem 30, memory 184.5, issue 36.25
    cycles per warp; 0.00542 warps/cycle/SM. Volkov rounds 128/10.4 to 12.3 cycles, hence
    184.5 vs 184.6 exactly."""
    g = KernelGraph(name="Table 3.2 mix")
    ops = ["FADD"] * 100 + ["MUFU"] * 5 + ["LDS"] * 20 + ["LDG"] * 10
    for i, op in enumerate(ops):
        kw = {}
        if op == "LDS" and i >= 115:
            kw["bank_conflict_degree"] = 2
        if op == "LDG" and i >= 130:
            kw["stride"] = 2.0
        g.add_instruction(Instruction.make(f"n{i}", op, **kw))
    for k in range(5):  # SFU k dual-issued after FADD k
        g.add_edge(Edge(f"dual{k}", f"n{k}", f"n{100 + k}", "dual"))
    counts = count(g).evaluate()
    assert counts["issued_instructions"] == 145
    assert counts["reissues"] == 15
    maxwell = GPUSpec("GTX 980 (Volkov Table 3.3)", cuda_cores_per_sm=128, sfu_per_sm=32,
                      schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=10.4,
                      smem_accesses_per_cycle_per_sm=1.0)
    tb = throughput_bound(maxwell, cuda_core_instructions=counts["cuda_core_instructions"],
                          issued_instructions=counts["issued_instructions"],
                          gmem_bytes=counts["gmem_bytes"], sfu_instructions=counts["sfu_instructions"],
                          smem_bank_cycles=counts["smem_bank_cycles"])
    c = tb.cycles_per_warp
    assert (c["cuda_cores"], c["sfu"], c["shared_memory"], c["issue"]) == (25, 5, 30, 36.25)
    assert c["memory"] == pytest.approx(184.5, rel=1e-3)
    assert tb.binding == "memory"
    assert tb.warps_per_cycle == pytest.approx(0.00542, rel=1e-3)


def test_barrier_example_listing_3_3_via_explicit_latencies():
    """Barrier rule (§3.7): next instruction at max(546, 32) + 34 = 580; modelled with a
    barrier edge from the latest warp's BAR (the graph is one warp, so the other warp's
    BAR at 32 is the shorter path and does not bind)."""
    g = KernelGraph(latency_table="fermi-volkov")
    for nid, op in [("bra", "BRA"), ("ld", "LD"), ("fadd", "FADD"), ("bar", "BAR"), ("next", "FADD")]:
        g.add_instruction(Instruction.make(nid, op))
    g.add_edge(Edge("e1", "bra", "ld", "branch", taken=False))
    g.add_edge(Edge("e2", "ld", "fadd", "memory", latency=512))  # issued at 28 + 512 = 540
    g.add_edge(Edge("e3", "fadd", "bar", "ilp"))
    g.add_edge(Edge("e4", "bar", "next", "barrier"))
    assert analyze(g).evaluate() == 580
