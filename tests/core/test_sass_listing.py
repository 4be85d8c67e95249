"""Parsing cuobjdump -sass and nvdisasm listings (committed fixtures; no CUDA tools needed)."""
import re
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.listing import ListingError, parse_listing

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
SRC = SASS.parent / "src"
ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
#: sources built for their own architecture-specific target (a "// fixture archs:" line:
#: wgmma on sm_90a, tcgen05 on sm_100a), and the others, built for every ARCHS entry
SPECIFIC = {p.stem: re.search(r"^// fixture archs: (.*)$", p.read_text(), re.M)
            for p in SRC.glob("*.cu")}
SPECIFIC = {k: m.group(1).split()[0] for k, m in SPECIFIC.items() if m}
KERNELS = sorted(p.stem for p in SRC.glob("*.cu") if p.stem not in SPECIFIC)


def listing(name):
    return parse_listing((SASS / name).read_text(), name)


def test_at_least_seven_kernels_for_every_architecture():
    assert len(KERNELS) >= 7
    for k in KERNELS:
        for arch in ARCHS:
            assert (SASS / f"{k}.{arch}.sass").is_file(), f"{k}.{arch}.sass missing"


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("arch", ARCHS)
def test_every_fixture_parses_with_its_architecture(kernel, arch):
    lst = listing(f"{kernel}.{arch}.sass")
    assert lst.tool == "cuobjdump"
    assert lst.archs() == [arch]
    for f in lst.functions:
        assert f.instructions
        # sm_70+: every instruction has both 64-bit words
        assert all(len(i.words) == 2 for i in f.instructions)
        addrs = [i.address for i in f.instructions]
        assert addrs == list(range(0, 16 * len(addrs), 16))


def test_architecture_specific_fixtures_parse_with_their_architecture():
    assert SPECIFIC == {"wgmma_shapes": "sm_90a", "tcgen05_mma": "sm_100a",
                        "access_patterns": "sm_75", "block2d": "sm_75",
                        "matmul_naive": "sm_75", "unroll_nested": "sm_75",
                        "unroll_inner": "sm_75", "stencil_loop": "sm_75",
                        "stencil2d": "sm_75"}
    for kernel, arch in SPECIFIC.items():
        lst = listing(f"{kernel}.{arch}.sass")
        assert lst.archs() == [arch]
        assert len(lst.functions) == {"access_patterns": 9, "block2d": 2,
                                      "stencil2d": 2}.get(kernel, 1)
        for f in lst.functions:
            assert all(len(i.words) == 2 for i in f.instructions)


def test_saxpy2_sm90_instructions_operands_and_targets():
    (f,) = listing("saxpy2.sm_90.sass").functions
    assert f.name == "_Z6saxpy2iiPfS_" and f.arch == "sm_90"
    by_addr = {i.address: i for i in f.instructions}
    exit_ = by_addr[0x70]
    assert exit_.guard == "@P0" and exit_.mnemonic == "EXIT" and exit_.operands == ()
    ldg = by_addr[0xF0]
    assert ldg.opcode == "LDG.E" and ldg.modifiers == ("E",)
    assert ldg.operands == ("R3", "desc[UR6][R2.64]")
    assert ldg.words == (0x0000000602037981, 0x000162000C1E1900)
    back = by_addr[0x150]
    assert back.guard == "@!P0" and back.target == 0x120
    assert by_addr[0x60].operands == ("P0", "PT", "R5", "UR4", "PT")
    assert len(f.instructions) == 40  # 30 instructions, the trap BRA and 9 NOPs


def test_nvdisasm_listing_matches_cuobjdump():
    cuobj = listing("saxpy2.sm_90.sass").functions[0].instructions
    nvd = listing("saxpy2.sm_90.nvdisasm.sass")
    assert nvd.tool == "nvdisasm" and nvd.archs() == ["sm_90"]
    ins = nvd.functions[0].instructions
    assert [i.address for i in ins] == [i.address for i in cuobj]
    assert [i.opcode for i in ins] == [i.opcode for i in cuobj]
    assert [i.words for i in ins] == [i.words for i in cuobj]
    # labels (`(.L_x_0)) resolve to the same targets cuobjdump prints as addresses
    assert [i.target for i in ins] == [i.target for i in cuobj]


def test_nvdisasm_without_encodings_has_no_control_words():
    (f,) = listing("saxpy2.sm_90.nvdisasm-nohex.sass").functions
    assert all(i.words == () and i.control_word is None for i in f.instructions)
    assert [i.target for i in f.instructions if i.target is not None] == [0x160, 0x120, 0x1E0]


def test_two_functions_in_one_listing():
    names = [f.name for f in listing("vector_ops.sm_86.sass").functions]
    assert names == ["_Z5scaleIfEvPT_S0_i", "_Z7vecadd4P6float4PKS_S2_"]


# -- bad input ---------------------------------------------------------------------------

def _text(name="saxpy2.sm_90.sass"):
    return (SASS / name).read_text()


def test_truncated_in_the_middle_of_a_line():
    text = _text()
    cut = text.index("FADD R0, R3, R0") + 8
    with pytest.raises(ListingError, match="cut off before its ';'.*truncated"):
        parse_listing(text[:cut], "t.sass")


def test_truncated_between_the_two_words_of_an_instruction():
    lines = _text().splitlines()
    k = next(i for i, ln in enumerate(lines) if "FADD R0, R3, R0" in ln)
    with pytest.raises(ListingError, match="only the first of its two encoding words"):
        parse_listing("\n".join(lines[:k + 1]) + "\n", "t.sass")


def test_truncated_at_an_instruction_boundary():
    lines = _text().splitlines()
    k = next(i for i, ln in enumerate(lines) if "FADD R0, R3, R0" in ln)
    with pytest.raises(ListingError, match="goes to 0x0160, past the last instruction"):
        parse_listing("\n".join(lines[:k + 2]) + "\n", "t.sass")
    lines = _text("vecadd.sm_90.sass").splitlines()  # no branch: the missing EXIT tells
    k = next(i for i, ln in enumerate(lines) if "STG.E" in ln)
    with pytest.raises(ListingError, match="without an unconditional EXIT, RET or BRA"):
        parse_listing("\n".join(lines[:k + 2]) + "\n", "t.sass")


def test_nvdisasm_branch_to_an_undefined_label_is_truncation():
    text = _text("saxpy2.sm_90.nvdisasm.sass")
    text = text.replace(".L_x_0:", "")
    with pytest.raises(ListingError, match="label .L_x_0"):
        parse_listing(text, "t.sass")


@pytest.mark.parametrize("text, what", [
    (".version 8.0\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n", "looks like PTX"),
    ("a.out:     file format elf64-x86-64\n\nDisassembly of section .text:\n\n"
     "0000000000001040 <_start>:\n    1040: f3 0f 1e fa   endbr64\n", "objdump output"),
    ("hello world\n", "not a cuobjdump -sass or nvdisasm listing"),
])
def test_another_tools_output(text, what):
    with pytest.raises(ListingError, match=what):
        parse_listing(text, "x.txt")


def test_binary_garbage():
    with pytest.raises(ListingError, match="binary data"):
        parse_listing("\x00\x01\x02garbage", "x.bin")


def test_empty_function():
    text = "\tcode for sm_90\n\t\tFunction : empty_kernel\n\t.headerflags\t@\"EF_CUDA_SM90\"\n\t\t..........\n"
    with pytest.raises(ListingError, match="function empty_kernel .* has no instructions"):
        parse_listing(text, "e.sass")


MAXWELL = """
\tcode for sm_52
\t\tFunction : saxpy2
\t.headerflags    @"EF_CUDA_SM52 EF_CUDA_PTX_SM(EF_CUDA_SM52)"
                                                                  /* 0x001fc400fe2007f6 */
        /*0008*/                   MOV R1, c[0x0][0x20] ;         /* 0x4c98078000870001 */
        /*0010*/                   S2R R0, SR_CTAID.X ;           /* 0xf0c8000002570000 */
        /*0018*/                   S2R R2, SR_TID.X ;             /* 0xf0c8000002170002 */
                                                                  /* 0x001fd840fec20ff1 */
        /*0028*/                   XMAD R2, R0.reuse, c[0x0][0x8], R2 ;  /* 0x4e00010000270002 */
        /*0030*/                   EXIT ;                         /* 0xe30000000007000f */
        /*0038*/                   BRA 0x38 ;                     /* 0xe2400fffff87000f */
\t\t..........
"""


def test_maxwell_listing_keeps_each_bundles_control_word():
    """Before Volta one control word precedes three instructions: each of them keeps it,
    and its place in the bundle selects its 21-bit field (decoded like sm_70+'s)."""
    from gpumodeler.core.kernel.sass.build import build_graph
    from gpumodeler.core.kernel.sass.control import instruction_control
    (f,) = parse_listing(MAXWELL).functions
    assert f.arch == "sm_52"
    assert [i.address for i in f.instructions] == [0x8, 0x10, 0x18, 0x28, 0x30, 0x38]
    assert [i.bundle_control for i in f.instructions] == [0x001fc400fe2007f6] * 3 + [0x001fd840fec20ff1] * 3
    assert [i.bundle_slot for i in f.instructions] == [0, 1, 2, 0, 1, 2]
    assert [len(i.words) for i in f.instructions] == [1] * 6  # a control word is no instruction's
    # 0x7f6 (bits 0-20 of the first word): stall 6, yield, no barriers; 0xff1 >> 0 of the
    # second word's field 0: stall 1, wait on scoreboard 0
    assert instruction_control(f.instructions[0]).text() == "B------:R-:W-:Y:S06"
    assert instruction_control(f.instructions[3]).text() == "B0-----:R-:W-:Y:S01"
    g, r = build_graph(f)
    assert r.has_control and r.instructions == 5  # the trap BRA is padding
    assert g.instructions["i0028"].latency_class == "int_add"  # XMAD
    assert ("i0010", "i0028") in {(e.src, e.dst) for e in g.edges.values() if e.kind == "dependency"}
    ilp = {(e.src, e.dst): e.latency for e in g.edges.values() if e.kind == "ilp"}
    assert ilp[("i0008", "i0010")] == 6 and ilp[("i0010", "i0018")] == 1


def test_repeated_or_reordered_lines():
    lines = _text().splitlines()
    k = next(i for i, ln in enumerate(lines) if "FADD R0, R3, R0" in ln)
    with pytest.raises(ListingError, match="0x0130 of _Z6saxpy2iiPfS_ does not follow 0x0130"):
        parse_listing("\n".join(lines[:k + 2] + lines[k:]), "t.sass")


@pytest.mark.parametrize("name", ["saxpy2.sm_90.sass", "reduce.sm_86.nvdisasm.sass",
                                  "wmma_gemm.sm_80.sass", "matmul_tiled.sm_52.sass",
                                  "saxpy2.sm_52.nvdisasm.sass", "reduce.sm_60.nvdisasm-nohex.sass"])
def test_any_truncation_is_a_listing_error_or_a_valid_graph(name):
    """Cut anywhere: either a clear ListingError or a graph that reads back (never a crash)."""
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.kernel.graph import from_dict, to_dict
    from gpumodeler.core.kernel.sass.build import build_graph
    text = _text(name)
    for cut in range(0, len(text), 97):
        try:
            lst = parse_listing(text[:cut], "t.sass")
        except ListingError:
            continue
        for f in lst.functions:
            try:
                g, _ = build_graph(f)
            except ModelError:
                continue
            assert from_dict(to_dict(g)) == g
