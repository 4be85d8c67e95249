"""The opcode table for Volta to Blackwell: unit, latency class and issue pipe."""
import pytest

from gpumodeler.core.kernel.opcodes import PIPES, UNITS, classify, pipe_of
from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES


@pytest.mark.parametrize("opcode, unit, cls, pipe", [
    ("FADD", "cuda_core", "fp32_add", "fp32"), ("FFMA.FTZ", "cuda_core", "fp32_mad", "fp32"),
    ("FMUL.RZ", "cuda_core", "fp32_mul", "fp32"), ("FSETP.GEU.AND", "cuda_core", "setp", "fp32"),
    ("IADD3.X", "cuda_core", "int_add", "int32"), ("IMAD.WIDE.U32", "cuda_core", "int_mad", "int32"),
    ("LOP3.LUT", "cuda_core", "logic", "int32"), ("SHF.R.S32.HI", "cuda_core", "shift", "int32"),
    ("ISETP.GE.AND", "cuda_core", "setp", "int32"), ("VIADD", "cuda_core", "int_add", "int32"),
    ("UIADD3", "cuda_core", "int_add", "int32"), ("UMOV", "cuda_core", "mov", "int32"),
    ("S2UR", "cuda_core", "mov", "int32"), ("CS2R", "cuda_core", "mov", "int32"),
    ("HADD2", "cuda_core", "fp16", "fp16"), ("HFMA2.MMA", "cuda_core", "mov", "tensor"),
    ("HMUL2", "cuda_core", "fp16", "fp16"),
    ("HMMA.16816.F32", "tensor", "tensor", "tensor"), ("IMMA.8816.S32.S8", "tensor", "tensor", "tensor"),
    ("HGMMA.64x128x16.F32", "tensor", "tensor", "tensor"), ("DMMA.884", "tensor", "tensor", "tensor"),
    ("F2F.F64.F32", "cuda_core", "conversion", "sfu"), ("I2F.U32", "cuda_core", "conversion", "sfu"),
    ("F2FP.PACK_AB", "cuda_core", "conversion", "fp16"),
    ("SHFL.BFLY", "cuda_core", "shuffle", "int32"),
    ("MUFU.EX2", "sfu", "sfu", "sfu"), ("DFMA", "fp64", "fp64", "fp64"),
    ("BAR.SYNC.DEFER_BLOCKING", "barrier", None, "barrier"), ("DEPBAR.LE", "barrier", None, "barrier"),
    ("BSSY", "branch", None, "branch"), ("EXIT", "exit", None, "exit"),
])
def test_modern_opcodes(opcode, unit, cls, pipe):
    info = classify(opcode)
    assert (info.unit, info.latency_class, pipe_of(info)) == (unit, cls, pipe)
    assert info.unit in UNITS and pipe_of(info) in PIPES
    assert cls is None or cls in INSTRUCTION_CLASSES


@pytest.mark.parametrize("opcode, space, is_load", [
    ("LDG.E.128", "global", True), ("STG.E", "global", False), ("LDS.U16", "shared", True),
    ("STS.128", "shared", False), ("LDL", "local", True), ("STL.64", "local", False),
    ("LDC.64", "constant", True), ("ULDC", "constant", True), ("LDCU.64", "constant", True),
    ("ATOMG.E.ADD", "global", False), ("RED.E.ADD", "global", False), ("ATOMS.ADD", "shared", False),
    ("LDGSTS.E.BYPASS.128", "global", True), ("LDSM.16.M88.4", "shared", True),
])
def test_memory_opcodes(opcode, space, is_load):
    info = classify(opcode)
    assert (info.unit, info.space, info.is_load) == ("ldst", space, is_load)


def test_classes_of_the_maxwell_graph_did_not_change():
    """The opcodes of Gajger's saxpy2 keep their earlier classification."""
    expected = {"MOV": "mov", "S2R": "mov", "XMAD": "int_add", "ISETP": "setp", "SHL": "shift",
                "SHR": "shift", "IADD": "int_add", "IADD32I": "int_add", "FADD": "fp32_add"}
    for op, cls in expected.items():
        assert (classify(op).unit, classify(op).latency_class) == ("cuda_core", cls)
    assert classify("LDG").is_load and not classify("STG").is_load
    assert classify("FROBNICATE") is None
