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


#: NVIDIA's "Maxwell and Pascal Instruction Set" table (CUDA Binary Utilities, §4
#: "Instruction Set Reference"), by the table's groups: every mnemonic, with the unit this
#: model gives it.
MAXWELL_PASCAL_TABLE = {
    "Floating Point": ("FADD FCHK FCMP FFMA FMNMX FMUL FSET FSETP FSWZADD MUFU RRO DADD DFMA "
                       "DMNMX DMUL DSET DSETP HADD2 HFMA2 HMUL2 HSET2 HSETP2"),
    "Integer": ("BFE BFI FLO IADD IADD3 ICMP IMAD IMADSP IMNMX IMUL ISCADD ISET ISETP LEA LOP "
                "LOP3 POPC SHF SHL SHR XMAD"),
    "Conversion": "F2F F2I I2F I2I",
    "Movement": "MOV PRMT SEL SHFL",
    "Predicate/CC": "CSET CSETP PSET PSETP P2R R2P",
    "Texture": "TEX TLD TLD4 TXQ TEXS TLD4S TLDS",
    "Compute Load/Store": "LD LDC LDG LDL LDS ST STG STL STS ATOM ATOMS RED CCTL CCTLL MEMBAR CCTLT",
    "Surface Memory": "SUATOM SULD SURED SUST",
    "Control": "BRA BRX JMP JMX SSY SYNC CAL JCAL PRET RET BRK PBK CONT PCNT EXIT PEXIT BPT",
    "Miscellaneous": "NOP CS2R S2R B2R BAR R2B VOTE",
}
_GROUP_UNITS = {
    "Floating Point": {"cuda_core", "sfu", "fp64"}, "Integer": {"cuda_core"},
    "Conversion": {"cuda_core"}, "Movement": {"cuda_core"}, "Predicate/CC": {"cuda_core"},
    "Texture": {"ldst"}, "Compute Load/Store": {"ldst", "barrier"}, "Surface Memory": {"ldst"},
    "Control": {"branch", "exit"}, "Miscellaneous": {"cuda_core", "barrier"},
}


@pytest.mark.parametrize("group", sorted(MAXWELL_PASCAL_TABLE))
def test_every_opcode_of_nvidias_maxwell_pascal_table_is_known(group):
    ops = MAXWELL_PASCAL_TABLE[group].split()
    unknown = [o for o in ops if classify(o) is None]
    assert unknown == []
    assert {o: classify(o).unit for o in ops if classify(o).unit not in _GROUP_UNITS[group]} == {}


def test_the_table_has_its_108_mnemonics():
    ops = " ".join(MAXWELL_PASCAL_TABLE.values()).split()
    assert len(ops) == len(set(ops)) == 108


@pytest.mark.parametrize("opcode, space, is_load", [
    ("LD.E", "global", True), ("ST.E", "global", False), ("ATOM.E.ADD", "global", False),
    ("RED.E.ADD", "global", False), ("TEXS", "global", True), ("TLDS", "global", True),
    ("TLD4S", "global", True), ("SUST.D.BA.1D", "global", False), ("SULD.P.1D", "global", True),
])
def test_maxwell_pascal_memory_spaces(opcode, space, is_load):
    info = classify(opcode)
    assert (info.unit, info.space, info.is_load) == ("ldst", space, is_load)


def test_cache_control_is_no_block_barrier():
    """CCTL/CCTLL/CCTLT act on the warp's own cache lines: no rendezvous with other warps, so
    mwp-cwp's #Synch_insts does not count them (BAR does)."""
    from gpumodeler.core.kernel.opcodes import is_block_barrier
    for op in ("CCTL.E.IVALL", "CCTLL.IVALL", "CCTLT.IVALL"):
        assert classify(op).unit == "barrier"
        assert not is_block_barrier("barrier", op)
    assert is_block_barrier("barrier", "BAR.SYNC")
