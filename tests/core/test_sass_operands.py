"""Registers written and read per instruction (docs/sass-import.md §Registers)."""
import pytest

from gpumodeler.core.kernel.opcodes import classify
from gpumodeler.core.kernel.sass.listing import _parse_instruction
from gpumodeler.core.kernel.sass.operands import reg_access


def access(text):
    ins = _parse_instruction(0, text + " ;", [], 1)
    info = classify(ins.opcode)
    w, r = reg_access(ins, info.unit if info else None)
    return sorted(set(w)), sorted(set(r))


@pytest.mark.parametrize("text, written, read", [
    ("ISETP.GE.AND P0, PT, R5, UR4, PT", ["P0"], ["R5", "UR4"]),
    ("@P0 EXIT", [], ["P0"]),
    ("IADD3 R2, P0, P1, R4, R5, RZ", ["P0", "P1", "R2"], ["R4", "R5"]),
    ("LEA.HI.X R3, R5, UR5, R4, 0x2, P0", ["R3"], ["P0", "R4", "R5", "UR5"]),
    ("LDG.E.128 R4, desc[UR6][R2.64]", ["R4", "R5", "R6", "R7"], ["R2", "R3", "UR6"]),
    ("STG.E.128 desc[UR6][R2.64], R8", [], ["R10", "R11", "R2", "R3", "R8", "R9", "UR6"]),
    ("LDG.E.SYS R2, [R2]", ["R2"], ["R2", "R3"]),  # Turing: .E is a 64-bit address
    ("LDS.64 R4, [R2+0x10]", ["R4", "R5"], ["R2"]),
    ("IMAD.WIDE R2, R5, 0x4, R2", ["R2", "R3"], ["R2", "R3", "R5"]),
    ("DFMA R4, R6, UR8, R4", ["R4", "R5"], ["R4", "R5", "R6", "R7", "UR8", "UR9"]),
    ("DSETP.GT.AND P0, PT, R4, R6, PT", ["P0"], ["R4", "R5", "R6", "R7"]),
    ("F2F.F64.F32 R4, R3", ["R4", "R5"], ["R3"]),
    ("F2F.F32.F64 R3, R4", ["R3"], ["R4", "R5"]),
    ("HMMA.16816.F32 R4, R12, R20, R4", ["R4", "R5", "R6", "R7"],
     ["R12", "R13", "R14", "R15", "R20", "R21", "R4", "R5", "R6", "R7"]),
    ("SHFL.DOWN PT, R5, R4, 0x10, 0x1f", ["R5"], ["R4"]),
    ("VOTE.ANY R0, PT, P0", ["R0"], ["P0"]),
    ("PLOP3.LUT P0, PT, PT, PT, PT, 0x80, 0x0", ["P0"], []),
    ("P2R R0, PR, RZ, 0x7f", ["R0"], [f"P{i}" for i in range(7)]),
    ("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R5, desc[UR4][R2.64], R6", ["R5"], ["R2", "R3", "R6", "UR4"]),
    ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R5", [], ["R2", "R3", "R5", "UR4"]),
    ("CS2R R4, SRZ", ["R4", "R5"], []),
    ("BSSY B0, 0x1b0", [], []),
    ("ULDC.64 UR4, c[0x0][0x208]", ["UR4", "UR5"], []),
    ("FFMA R9, R12.reuse, R13, R9", ["R9"], ["R12", "R13", "R9"]),
    ("BRA.U !UP0, 0x1f0", [], ["UP0"]),
])
def test_registers(text, written, read):
    assert access(text) == (sorted(written), sorted(read))
