"""Decoding the sm_70+ control information (Jia et al. 2018 §2.1 layout) on real listings."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.opcodes import classify
from gpumodeler.core.kernel.sass.control import (Control, decode_control, encode_control,
                                                 instruction_control)
from gpumodeler.core.kernel.sass.listing import parse_listing
from gpumodeler.core.kernel.sass.operands import n_destinations, reg_access

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
FIXTURES = sorted(p for p in SASS.glob("*.sm_*.sass") if "nvdisasm" not in p.name)


def instructions(name):
    return {i.address: i for f in parse_listing((SASS / name).read_text()).functions
            for i in f.instructions}


def ctrl(name, addr):
    return decode_control(instructions(name)[addr].control_word)


@pytest.mark.parametrize("name, addr, text, stall, yield_bit, wr, rd, waits, reuse", [
    # saxpy2 on sm_90 (second words 0x000e220000002500, 0x001fe2000f8e0200, ...)
    ("saxpy2.sm_90.sass", 0x010, "S2R R5, SR_CTAID.X", 1, 1, 0, None, (), 0),
    ("saxpy2.sm_90.sass", 0x030, "S2R R0, SR_TID.X", 2, 1, 0, None, (), 0),
    ("saxpy2.sm_90.sass", 0x040, "IMAD R5, R5, UR4, R0", 1, 1, None, None, (0,), 0),
    ("saxpy2.sm_90.sass", 0x060, "ISETP.GE.AND P0, PT, R5, UR4, PT", 13, 0, None, None, (), 0),
    ("saxpy2.sm_90.sass", 0x0F0, "LDG.E R3, desc[UR6][R2.64]", 1, 1, 5, 0, (), 0),
    ("saxpy2.sm_90.sass", 0x130, "FADD R0, R3, R0", 5, 0, None, None, (5,), 0),
    ("saxpy2.sm_90.sass", 0x1A0, "LDG.E R5, desc[UR6][R2.64]", 2, 1, 2, None, (), 0),
    ("saxpy2.sm_90.sass", 0x1B0, "FADD R5, R5, R0", 5, 0, None, None, (2,), 0),
])
def test_chosen_instructions_field_by_field(name, addr, text, stall, yield_bit, wr, rd, waits, reuse):
    ins = instructions(name)[addr]
    assert ins.text == text
    c = decode_control(ins.control_word)
    assert (c.stall, c.yield_bit, c.write_barrier, c.read_barrier, c.waits, c.reuse) == \
        (stall, yield_bit, wr, rd, waits, reuse)


def test_raw_bits_of_one_word():
    # 0x020fca0000000000: bits 41-44 = 0b0101 (stall 5), 45 = 0, 46-48 = 7, 49-51 = 7,
    # 52-57 = 0b100000 (wait on scoreboard 5), 58-61 = 0
    c = decode_control(0x020FCA0000000000)
    assert c == Control(stall=5, yield_bit=0, write_barrier=None, read_barrier=None,
                        wait_mask=0b100000, reuse=0)
    assert c.text() == "B-----5:R-:W-:-:S05"


def test_encode_is_the_inverse():
    for args in [(5, 0, None, None, 0x20, 0), (1, 1, 3, 0, 0b101, 0b1001), (15, 1, 5, 4, 0x3F, 0xF)]:
        c = decode_control(encode_control(*args))
        assert (c.stall, c.yield_bit, c.write_barrier, c.read_barrier, c.wait_mask, c.reuse) == args


def test_other_architectures():
    # sm_75 (Turing): S2R sets a write barrier that the IMAD using it waits on
    ins = instructions("saxpy2.sm_75.sass")
    assert [ins[a].text for a in (0x10, 0x20, 0x30)] == [
        "S2R R2, SR_CTAID.X", "S2R R3, SR_TID.X", "IMAD R2, R2, c[0x0][0x0], R3"]
    assert [decode_control(ins[a].control_word).text() for a in (0x10, 0x20, 0x30, 0x40)] == [
        "B------:R-:W0:Y:S04", "B------:R-:W0:Y:S02", "B0-----:R-:W-:-:S05",
        "B------:R-:W-:-:S12"]
    # sm_120 (Blackwell): the MUFUs of sfu_heavy
    ins = instructions("sfu_heavy.sm_120.sass")
    mufu = [(i.text, decode_control(i.control_word).text()) for i in ins.values()
            if i.mnemonic == "MUFU"]
    assert mufu == [("MUFU.SIN R0, R14", "B------:R-:W-:Y:S01"),
                    ("MUFU.COS R5, R14", "B0-----:R-:W-:Y:S03"),
                    ("MUFU.EX2 R7, R6", "B------:R-:W0:Y:S01"),
                    ("MUFU.LG2 R11, R8", "B------:R-:W1:Y:S01"),
                    ("MUFU.RSQ R13, R10", "B------:R-:W2:Y:S01"),
                    ("MUFU.RCP R15, R12", "B------:R-:W0:Y:S01")]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_reuse_flags_match_the_reuse_annotations(path):
    """Bits 58-61 are the operand reuse flags: bit k is set exactly when the k-th source
    operand is printed with '.reuse' (all fixtures, every instruction; the single source
    of an ``UNPACK_B`` conversion, a ``MOV`` or an ``IABS`` is the second slot)."""
    for f in parse_listing(path.read_text()).functions:
        for ins in f.instructions:
            info = classify(ins.opcode)
            nd = n_destinations(ins.mnemonic, info.unit if info else None, ins.operands)
            # F2FP.*.UNPACK_B (FP8 -> FP16, sm_89+), MOV and IABS read their one source
            # from the B slot
            first = 1 if "UNPACK_B" in ins.modifiers or (
                ins.mnemonic in ("MOV", "IABS") and len(ins.operands) - nd == 1) else 0
            bits = sum(1 << k for k, o in enumerate(ins.operands[nd:], first) if ".reuse" in o)
            assert instruction_control(ins).reuse == bits, ins.text


def _depbar_on(ins, barrier) -> bool:
    """``DEPBAR.LE SBn, k`` (sm_5x/6x): a wait until at most k of scoreboard n's producers are
    pending, which ptxas puts in a run of loads to one scoreboard (the doubly unrolled loop of
    unroll_nested.sm_52/60/61)."""
    return ins.mnemonic == "DEPBAR" and bool(ins.operands) and ins.operands[0] == f"SB{barrier}"


def _exclusive(a: str | None, b: str | None) -> bool:
    """Whether guards ``a`` and ``b`` are one predicate and its negation (``@P1``,
    ``@!P1``): of two such instructions only one runs."""
    return bool(a and b) and {a.lstrip("@!"), b.lstrip("@!")} == {a.lstrip("@!")} and \
        a.startswith("@!") != b.startswith("@!")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_consumers_wait_on_the_producers_write_barrier(path):
    """Bits 46-48 (write barrier) and 52-57 (wait mask): in straight-line code, the first
    reader of a register written by a variable-latency instruction is reached only after
    some instruction has waited on that instruction's write barrier, through its wait mask
    or (sm_5x/6x) a ``DEPBAR.LE`` on that scoreboard (tensor-core accumulator chains
    HMMA -> HMMA excepted: the pipe forwards them)."""
    checked = 0
    for f in parse_listing(path.read_text()).functions:
        ins = f.instructions
        for d, producer in enumerate(ins):
            wb = instruction_control(producer).write_barrier
            info = classify(producer.opcode)
            pending = set(reg_access(producer, info.unit if info else None)[0])
            if wb is None or not pending:
                continue
            for u in range(d + 1, len(ins)):
                consumer = ins[u]
                if consumer.mnemonic in ("BRA", "EXIT", "BSSY", "BSYNC", "RET", "CALL"):
                    break
                cinfo = classify(consumer.opcode)
                reads, writes = reg_access(consumer, cinfo.unit if cinfo else None)
                if _exclusive(producer.guard, consumer.guard):
                    continue  # @P1 LDG R14 … @!P1 MOV R14, RZ: never both run
                if pending & set(reads):
                    if not (producer.mnemonic == consumer.mnemonic == "HMMA"):
                        checked += 1
                        assert any(wb in instruction_control(ins[k]).waits
                                   or _depbar_on(ins[k], wb)
                                   for k in range(d + 1, u + 1)), (producer.text, consumer.text)
                    break
                pending -= set(writes)
                if not pending:
                    break
    assert checked > 0
