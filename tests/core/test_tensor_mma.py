"""Tensor-core work from SASS (core/kernel/mma.py) and the tensor row of the worksheet.

The listings are nvcc 13.0's for resources/kernels/src/mma_shapes.cu (one mma.sync of each
shape and type the target runs), wgmma_shapes.cu (sm_90a) and tcgen05_mma.cu (sm_100a)."""
import re
from collections import Counter
from pathlib import Path

import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.kernel.graph import Instruction, KernelGraph, Loop
from gpumodeler.core.kernel.mma import TENSOR_CLASSES, decode_mma
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.warp_counts import count
from gpumodeler.core.models.gajger import kernel_inputs_from_graph, predict
from gpumodeler.core.models.throughput import throughput_bound

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
_OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.x]*)")


def mma_opcodes(name):
    """Counter of the tensor-core opcodes (with modifiers) in a fixture listing."""
    ops = Counter()
    for line in (SASS / name).read_text().splitlines():
        m = _OPCODE.search(line)
        if m and decode_mma(m.group(1)) is not None:
            ops[m.group(1)] += 1
    return ops


def fields(opcode):
    w = decode_mma(opcode)
    return (w.mnemonic, w.m, w.n, w.k, w.tensor_class, w.macs_per_warp, w.warpgroup)


# -- decoding, field by field, on the real listings ------------------------------------------

def test_sm80_listing_shapes_and_types():
    ops = mma_opcodes("mma_shapes.sm_80.sass")
    assert set(ops) == {
        "HMMA.1688.F32", "HMMA.1688.F16", "IMMA.8816.S8.S8", "IMMA.8832.S4.S4",
        "BMMA.88128.XOR.POPC", "HMMA.16816.F32", "HMMA.16816.F32.BF16", "HMMA.1688.F32.TF32",
        "IMMA.16832.S8.S8", "IMMA.16816.U8.S8", "IMMA.16864.S4.S4", "BMMA.168256.AND.POPC",
        "DMMA.884"}
    assert fields("HMMA.1688.F32") == ("HMMA", 16, 8, 8, "fp16_fp32acc", 1024.0, False)
    assert fields("HMMA.1688.F16") == ("HMMA", 16, 8, 8, "fp16", 1024.0, False)
    assert fields("HMMA.16816.F32") == ("HMMA", 16, 8, 16, "fp16_fp32acc", 2048.0, False)
    assert fields("HMMA.16816.F32.BF16") == ("HMMA", 16, 8, 16, "bf16", 2048.0, False)
    assert fields("HMMA.1688.F32.TF32") == ("HMMA", 16, 8, 8, "tf32", 1024.0, False)
    assert fields("IMMA.8816.S8.S8") == ("IMMA", 8, 8, 16, "int8", 1024.0, False)
    assert fields("IMMA.16832.S8.S8") == ("IMMA", 16, 8, 32, "int8", 4096.0, False)
    assert fields("IMMA.16816.U8.S8") == ("IMMA", 16, 8, 16, "int8", 2048.0, False)
    assert fields("IMMA.8832.S4.S4") == ("IMMA", 8, 8, 32, "int4", 2048.0, False)
    assert fields("IMMA.16864.S4.S4") == ("IMMA", 16, 8, 64, "int4", 8192.0, False)
    assert fields("BMMA.88128.XOR.POPC") == ("BMMA", 8, 8, 128, "int1", 8192.0, False)
    assert fields("BMMA.168256.AND.POPC") == ("BMMA", 16, 8, 256, "int1", 32768.0, False)
    assert fields("DMMA.884") == ("DMMA", 8, 8, 4, "fp64", 256.0, False)


def test_sm75_m8n8k4_is_split_into_steps():
    """PTX mma.m8n8k4 (8x8x4 on each of 4 quad-pairs, 1024 per warp): ptxas writes four
    STEP instructions with an F32 accumulator and two with an F16 one."""
    ops = mma_opcodes("mma_shapes.sm_75.sass")
    f32 = [o for o in ops if o.startswith("HMMA.884.F32.F32.STEP")]
    f16 = [o for o in ops if o.startswith("HMMA.884.F16.F16.STEP")]
    assert sorted(f32) == [f"HMMA.884.F32.F32.STEP{i}" for i in range(4)]
    assert sorted(f16) == [f"HMMA.884.F16.F16.STEP{i}" for i in range(2)]
    assert sum(decode_mma(o).macs_per_warp for o in f32) == 1024
    assert sum(decode_mma(o).macs_per_warp for o in f16) == 1024
    assert {decode_mma(o).tensor_class for o in f32} == {"fp16_fp32acc"}
    assert {decode_mma(o).tensor_class for o in f16} == {"fp16"}
    assert decode_mma("HMMA.884.F32.F32").macs_per_warp is None  # steps unknown: not guessed


def test_sm89_fp8_and_sm90_dmma_spelling():
    ops89 = mma_opcodes("mma_shapes.sm_89.sass")
    assert fields("QMMA.16832.F32.E4M3.E4M3") == ("QMMA", 16, 8, 32, "fp8_fp32acc", 4096.0, False)
    assert fields("QMMA.16832.F16.E5M2.E5M2") == ("QMMA", 16, 8, 32, "fp8", 4096.0, False)
    assert {"QMMA.16832.F32.E4M3.E4M3", "QMMA.16832.F16.E5M2.E5M2"} <= set(ops89)
    ops90 = mma_opcodes("mma_shapes.sm_90.sass")
    assert "DMMA.8x8x4" in ops90 and "DMMA.884" not in ops90
    assert fields("DMMA.8x8x4") == ("DMMA", 8, 8, 4, "fp64", 256.0, False)
    # sm_90 has no QMMA for mma.sync: the FP8 shapes become FP16 HMMAs
    assert not any(o.startswith("QMMA") for o in ops90)


def test_wgmma_is_a_quarter_per_warp():
    ops = mma_opcodes("wgmma_shapes.sm_90a.sass")
    assert set(ops) == {"HGMMA.64x64x16.F32", "HGMMA.64x64x16.F32.BF16", "HGMMA.64x64x8.F32.TF32",
                        "QGMMA.64x64x32.F32.E4M3.E4M3", "IGMMA.64x64x32.S8.S8"}
    assert fields("HGMMA.64x64x16.F32") == ("HGMMA", 64, 64, 16, "fp16_fp32acc", 16384.0, True)
    assert fields("HGMMA.64x64x16.F32.BF16") == ("HGMMA", 64, 64, 16, "bf16", 16384.0, True)
    assert fields("HGMMA.64x64x8.F32.TF32") == ("HGMMA", 64, 64, 8, "tf32", 8192.0, True)
    assert fields("QGMMA.64x64x32.F32.E4M3.E4M3") == ("QGMMA", 64, 64, 32, "fp8_fp32acc", 32768.0, True)
    assert fields("IGMMA.64x64x32.S8.S8") == ("IGMMA", 64, 64, 32, "int8", 32768.0, True)


def test_tcgen05_shape_is_not_in_the_sass():
    g, r = import_kernel_with_report(SASS / "tcgen05_mma.sm_100a.sass")
    assert sorted(set(r.tensor_shape_unknown)) == ["UTCHMMA", "UTCIMMA", "UTCQMMA"]
    assert "shape SASS does not show" in r.summary()
    assert decode_mma("UTCHMMA").macs_per_warp is None
    c = count(g).evaluate({v: 1 for v in g.variables})
    assert c["tensor_instructions"] == 4  # counted as instructions, no multiply-adds
    assert all(c[f"tensor_macs_{k}"] == 0 for k in TENSOR_CLASSES)


def test_not_an_mma():
    assert decode_mma("HFMA2.MMA") is None  # an HFMA2 issued to the MMA pipe's lanes
    assert decode_mma("FFMA") is None
    assert decode_mma("@!P1 IMMA.16832.S8.S8").k == 32


def test_imported_counts_match_the_listing():
    """Per-warp multiply-adds of the sm_80 import, class by class, against the listing."""
    g, r = import_kernel_with_report(SASS / "mma_shapes.sm_80.sass")
    assert r.tensor_shape_unknown == []
    c = count(g).evaluate(g.variables)  # its guards at their default, 1 (always)
    expected = Counter()
    for op, n in mma_opcodes("mma_shapes.sm_80.sass").items():
        expected[decode_mma(op).tensor_class] += n * decode_mma(op).macs_per_warp
    # hand sums: fp16_fp32acc 1024 (1688) + 2048 (16816); int8 1024 + 4096 + 2048;
    # int4 2048 + 8192; int1 8192 + 32768
    assert expected == {"fp16_fp32acc": 3072, "fp16": 1024, "bf16": 2048, "tf32": 1024,
                        "int8": 7168, "int4": 10240, "int1": 40960, "fp64": 256}
    for cls in TENSOR_CLASSES:
        assert c[f"tensor_macs_{cls}"] == expected.get(cls, 0), cls


# -- the tensor row of the worksheet ------------------------------------------------------------

A100 = GPUSpec("A100-like", compute_capability="8.0", sms=108, sm_clock_hz=1410e6,
               cuda_cores_per_sm=64, int32_units_per_sm=64, int32_fp32_shared_lanes_per_sm=0,
               schedulers_per_sm=4, memory_bandwidth_bytes_per_s=1555e9,
               tensor_fp16_fp32acc_macs_per_cycle_per_sm=1024,
               tensor_tf32_macs_per_cycle_per_sm=512)


def test_tensor_cycles_hand_computed():
    # 64 HMMA.16816.F32 (2048 each) + 16 HMMA.1688.F32.TF32 (1024 each) per warp:
    # 131072 / 1024 + 16384 / 512 = 128 + 32 = 160 cycles per warp
    tb = throughput_bound(A100, issued_instructions=80, tensor_macs={
        "fp16_fp32acc": 64 * 2048, "tf32": 16 * 1024})
    assert tb.cycles_per_warp["tensor"] == 160.0
    assert tb.binding == "tensor"
    assert tb.warps_per_cycle == 1 / 160.0


def test_tensor_class_without_work_needs_no_rate():
    tb = throughput_bound(A100, issued_instructions=10, tensor_macs={"int8": 0, "fp16_fp32acc": 1024})
    assert tb.cycles_per_warp["tensor"] == 1.0


def test_unknown_rate_names_the_field():
    with pytest.raises(InvalidParameter, match="tensor_int8_macs_per_cycle_per_sm is unknown") as e:
        throughput_bound(A100, issued_instructions=10, tensor_macs={"int8": 4096})
    assert e.value.item == "tensor_int8_macs_per_cycle_per_sm"
    with pytest.raises(InvalidParameter, match="unknown tensor data-type class 'fp17'"):
        throughput_bound(A100, issued_instructions=10, tensor_macs={"fp17": 1})


def test_graph_loop_scales_the_tensor_row():
    """A loop of 2 HMMA.16816.F32 (4096 per iteration) run ``a`` times: 4·a cycles on 1024."""
    g = KernelGraph(name="k")
    for i, op in enumerate(["HMMA.16816.F32", "HMMA.16816.F32", "IADD3", "BRA"]):
        g.add_instruction(Instruction.make(f"i{i}", op))
    g.add_loop(Loop.make("loop1", ["i0", "i1", "i2", "i3"], "a", name="body"))
    c = count(g)
    assert c.formula("tensor_macs_fp16_fp32acc") == "4096·a"
    inputs = kernel_inputs_from_graph(g, {"a": 32}, table=None, bound=_FakeBound())
    assert inputs.tensor_macs["fp16_fp32acc"] == 4096 * 32
    p = predict(A100, inputs, grid_size=1, block_size=32, occupancy=1)
    assert p.throughput.cycles_per_warp["tensor"] == 128.0


class _FakeBound:
    def evaluate(self, values):
        return 100.0
