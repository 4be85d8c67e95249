"""Issue pipes per architecture in the throughput worksheet (docs/pipes.md).

Per warp and SM, W = 32: Turing has 64 FP32 and 64 separate INT32 lanes; GA10x 128 FP32
lanes of which the 64 INT32 lanes are half (64 FP32 + 64 FP32/INT32); Maxwell one pool of 128
CUDA cores (Gajger eq. 4.5). The pipe widths are the vendor figures in resources/devices."""
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.kernel import warp_counts
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph
from gpumodeler.core.kernel.opcodes import OpcodeInfo, classify
from gpumodeler.core.models.gajger import KernelInputs, kernel_inputs_from_graph, predict
from gpumodeler.core.models.throughput import RESOURCES, throughput_bound

# Turing whitepaper Table 1 (RTX 2080 Ti): 64 CUDA cores/SM, 4 schedulers; INT32 separate.
TURING = GPUSpec("RTX 2080 Ti", compute_capability="7.5", sms=68, sm_clock_hz=1545e6,
                 cuda_cores_per_sm=64, int32_units_per_sm=64, int32_fp32_shared_lanes_per_sm=0,
                 fp16_results_per_cycle_per_sm=128, schedulers_per_sm=4,
                 dispatch_per_scheduler=1, memory_bandwidth_bytes_per_s=616e9)
# GA102 whitepaper (RTX 3090): 128 FP32 lanes/SM, 64 of them also INT32.
GA10X = GPUSpec("RTX 3090", compute_capability="8.6", sms=82, sm_clock_hz=1695e6,
                cuda_cores_per_sm=128, int32_units_per_sm=64, int32_fp32_shared_lanes_per_sm=64,
                fp16_results_per_cycle_per_sm=128, schedulers_per_sm=4,
                dispatch_per_scheduler=1, memory_bandwidth_bytes_per_s=936e9)
# Gajger Table 6.1: GTX 970, 128 CUDA cores, 4 schedulers, dual issue.
MAXWELL = GPUSpec("GTX 970", compute_capability="5.2", sms=13, sm_clock_hz=1253e6,
                  cuda_cores_per_sm=128, schedulers_per_sm=4, dispatch_per_scheduler=2,
                  gmem_bytes_per_cycle_per_sm=13.78)

INT_HEAVY = {"fp32": 8, "int32": 24}
FP32_HEAVY = {"fp32": 24, "int32": 8}


def bound(gpu, mix, **kw):
    total = sum(mix.values())
    return throughput_bound(gpu, cuda_core_instructions=total, issued_instructions=total,
                            pipe_instructions=mix, **kw)


def test_int_heavy_mix_per_pipe():
    t = bound(TURING, INT_HEAVY)
    assert t.pipes and t.binding == "int32"
    c = t.cycles_per_warp
    assert (c["fp32"], c["int32"], c["fp32_int32"], c["issue"]) == (32 * 8 / 64, 32 * 24 / 64, 0, 8)
    assert c["cuda_cores"] == 0                     # split into pipes, not one pool

    g = bound(GA10X, INT_HEAVY)
    c = g.cycles_per_warp
    assert c["fp32"] == 32 * 8 / 128
    assert c["int32"] == 32 * 24 / 64 == 12         # INT32 only on half the lanes
    assert c["fp32_int32"] == 32 * 32 / 128         # both share the 128 lanes
    assert g.binding == "int32"

    m = bound(MAXWELL, INT_HEAVY)                   # one pool: Gajger eq. 4.5 unchanged
    assert not m.pipes
    assert m.cycles_per_warp["cuda_cores"] == 32 * 32 / 128
    assert m.cycles_per_warp["int32"] == m.cycles_per_warp["fp32"] == 0


def test_fp32_heavy_mix_per_pipe():
    t = bound(TURING, FP32_HEAVY)
    assert (t.cycles_per_warp["fp32"], t.cycles_per_warp["int32"]) == (12, 4)
    assert t.binding == "fp32"                      # Turing: 16 FP32 lanes per scheduler

    g = bound(GA10X, FP32_HEAVY)
    c = g.cycles_per_warp
    assert (c["fp32"], c["int32"], c["fp32_int32"], c["issue"]) == (6, 4, 8, 8)
    assert g.binding == "issue"                     # 128 lanes = 4 schedulers x 32 threads

    m = bound(MAXWELL, FP32_HEAVY)
    assert m.cycles_per_warp["cuda_cores"] == 8 and m.binding == "cuda_cores"


def test_fp16_pipe_counts_packed_instructions():
    t = bound(TURING, {"fp16": 32})
    # 128 FP16 results per clock per SM = 64 HFMA2 lanes
    assert t.cycles_per_warp["fp16"] == 32 * 32 / 64 and t.binding == "fp16"


def test_the_worksheet_names_each_pipe():
    for gpu in (TURING, GA10X, MAXWELL):
        names = set(bound(gpu, INT_HEAVY).cycles_per_warp)
        assert names == set(RESOURCES)
    assert {"fp32", "int32", "fp32_int32", "fp16"} <= set(RESOURCES)


def test_without_the_mix_a_modern_gpu_keeps_one_pool():
    """Explicit counts (CLI flags, overrides) know no mix: eq. 4.5 on the FP32 lanes."""
    t = throughput_bound(TURING, cuda_core_instructions=32, issued_instructions=32)
    assert not t.pipes and t.cycles_per_warp["cuda_cores"] == 16


def test_unknown_pipe_widths_are_named():
    gpu = GPUSpec("half known", compute_capability="8.6", cuda_cores_per_sm=128,
                  int32_units_per_sm=64, schedulers_per_sm=4)
    with pytest.raises(InvalidParameter, match="int32_fp32_shared_lanes_per_sm is unknown"):
        bound(gpu, INT_HEAVY)
    assert bound(gpu, {"fp32": 32}).cycles_per_warp["fp32"] == 8    # not needed for FP32
    with pytest.raises(InvalidParameter, match="fp16_results_per_cycle_per_sm is unknown"):
        bound(gpu, {"fp16": 1})
    with pytest.raises(InvalidParameter, match="unknown pipe"):
        bound(TURING, {"fp8": 1})


def test_no_dual_issue_on_volta_and_later():
    """A dual-issued pair costs one issue slot on Maxwell and two on Turing."""
    kw = dict(cuda_core_instructions=10, issued_instructions=8, dual_issues=2)
    assert throughput_bound(MAXWELL, **kw).cycles_per_warp["issue"] == 8 / 4
    assert throughput_bound(TURING, **kw).cycles_per_warp["issue"] == 10 / 4


def _graph(opcodes):
    g = KernelGraph(name="mix")
    for i, op in enumerate(opcodes):
        g.add_instruction(Instruction.make(f"n{i}", op))
    return g


def test_warp_counts_follow_pipe_of_classify(monkeypatch):
    """Counts per pipe use opcodes.pipe_of(classify(opcode)); an integer opcode classified
    to the int32 pipe is counted there (the SASS opcode table decides the pipe)."""
    real = warp_counts.classify

    def classify_ints(opcode):
        info = real(opcode)
        if info is not None and opcode.startswith(("IADD3", "LOP3")):
            return OpcodeInfo(info.unit, info.latency_class, pipe="int32")
        return info
    monkeypatch.setattr(warp_counts, "classify", classify_ints)
    g = _graph(["IADD3", "IADD3", "LOP3.LUT", "FFMA", "MUFU.EX2", "DFMA", "LDG.E", "BRA", "EXIT"])
    c = warp_counts.count(g).evaluate()
    assert (c["int32_instructions"], c["fp32_instructions"]) == (3, 1)
    assert (c["sfu_instructions"], c["fp64_instructions"]) == (1, 1)
    assert c["fp16_instructions"] == c["tensor_instructions"] == 0
    # branch and exit are in no pipe (issue slots only); Maxwell's pool still counts them
    assert c["cuda_core_instructions"] == 6 and c["issued_instructions"] == 9


def test_an_instruction_whose_unit_was_set_by_hand_goes_by_its_unit():
    g = KernelGraph(name="hand")
    g.add_instruction(Instruction.make("a", "MYOP", unit="cuda_core"))
    g.add_instruction(Instruction.make("b", "FFMA", unit="sfu", latency_class="sfu"))
    c = warp_counts.count(g).evaluate()
    assert c["fp32_instructions"] == 1 and c["sfu_instructions"] == 1
    assert classify("MYOP") is None


def test_graph_to_prediction_uses_the_pipes():
    """A graph's mix reaches the worksheet through kernel_inputs_from_graph and predict."""
    g = _graph(["FFMA"] * 8)
    for i in range(7):
        g.add_edge(Edge(f"e{i}", f"n{i}", f"n{i + 1}", "dependency", latency=4))
    inputs = kernel_inputs_from_graph(g)
    assert inputs.pipe_instructions == {"fp32": 8, "int32": 0, "fp16": 0, "tensor": 0}
    turing = predict(TURING, inputs, grid_size=1000, block_size=256, occupancy=32)
    assert turing.throughput.pipes and turing.throughput.binding == "fp32"
    assert turing.throughput.cycles_per_warp["fp32"] == 32 * 8 / 64
    maxwell = predict(MAXWELL, inputs, grid_size=1000, block_size=256, occupancy=32)
    assert maxwell.throughput.cycles_per_warp["cuda_cores"] == 32 * 8 / 128
    # an overridden CUDA-core count replaces the mix it was split from
    over = inputs.overridden(cuda_core_instructions=16)
    assert over.pipe_instructions is None
    assert predict(TURING, over, grid_size=1000, block_size=256,
                   occupancy=32).throughput.cycles_per_warp["cuda_cores"] == 32 * 16 / 64


def test_kernel_inputs_default_to_no_mix():
    assert KernelInputs(latency_bound=1, issued_instructions=1).pipe_instructions is None


def test_fp16_shares_the_fp32_lanes_on_ga10x_not_on_turing():
    """NVIDIA (Developer Forums, "Separate CUDA core pipeline for FP16 and FP32?"): on GA10x
    FP16x2 is dual-issued to both FMA pipes, the FP32 lanes; on Volta, Turing and GA100 the
    FP16 pipe is separate. A 50/50 FP16/FP32 mix on GA10x takes the lanes' summed time,
    twice what separate pipes would bound it at."""
    mix = {"fp32": 16, "fp16": 16}
    ga = bound(GA10X, mix)
    fp32_alone = 32 * 16 / 128
    fp16_alone = 32 * 16 / (128 / 2)
    assert ga.cycles_per_warp["fp16"] == pytest.approx(fp16_alone + fp32_alone)
    assert ga.binding == "fp16"
    separate = bound(GPUSpec(**{**GA10X.__dict__, "compute_capability": "8.0"}), mix)
    assert separate.cycles_per_warp["fp16"] == fp16_alone
    assert ga.cycles_per_warp["fp16"] / separate.cycles_per_warp["fp16"] == pytest.approx(1.5)
    # an even split of the lanes' time (8 cycles each): shared binds at 16, separate at 8
    even = {"fp32": 32, "fp16": 16}
    sep = bound(GPUSpec(**{**GA10X.__dict__, "compute_capability": "8.0"}), even)
    lanes = lambda b: max(b.cycles_per_warp[r] for r in ("fp32", "fp16", "fp32_int32"))
    assert lanes(sep) == 8 and lanes(bound(GA10X, even)) == 16
    t = bound(TURING, mix)
    assert t.cycles_per_warp["fp16"] == 32 * 16 / 64   # Turing: its own pipe


def test_hfma2_mma_is_a_move_not_fp16_work():
    """ptxas's ``HFMA2.MMA Rd, -RZ, RZ, c, c`` writes a constant: a move on the MMA pipe."""
    info = classify("HFMA2.MMA")
    assert info.latency_class == "mov" and info.pipe == "tensor"
    assert classify("@P0 HFMA2.MMA").latency_class == "mov"
    assert classify("HFMA2").latency_class == "fp16" and classify("HFMA2.FTZ").pipe == "fp16"
