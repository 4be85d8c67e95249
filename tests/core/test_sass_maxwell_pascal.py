"""Maxwell and Pascal (sm_5x, sm_6x) listings: branches into a bundle, nvdisasm's dual-issue
braces, the bundles' control words, and loops equal to the sm_75 listings' (committed
fixtures, resources/kernels/sass/*.sm_52|sm_60|sm_61.sass; no CUDA tools needed)."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.build import build_graph
from gpumodeler.core.kernel.sass.control import instruction_control
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.sass.listing import ListingError, parse_listing

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
LEGACY = ("sm_52", "sm_60", "sm_61")
#: every source built for Maxwell and Pascal (the tensor-core ones need sm_70+; a source
#: naming its own architectures in a "// fixture archs:" line is built for those only)
KERNELS = sorted(p.stem for p in (SASS.parent / "src").glob("*.cu")
                 if not any(t in p.stem for t in ("mma", "tcgen05"))
                 and "// fixture archs:" not in p.read_text())
#: nvdisasm listings kept besides cuobjdump's (tools/make_sass_fixtures_legacy.py NVDISASM)
NVDISASM = [("saxpy2", "sm_52"), ("matmul_tiled", "sm_52"), ("reduce", "sm_60")]


def functions(name):
    return parse_listing((SASS / name).read_text(), name).functions


def loop_shape(name, function):
    """(number of loops, each loop's parent index or None): the loops' count and nesting."""
    func = next(f for f in functions(name) if f.name == function)
    graph, report = build_graph(func)
    members = [graph.loops[lid].members for lid, *_ in report.loops]
    parents = []
    for k, m in enumerate(members):
        outer = [j for j, o in enumerate(members) if j != k and m < o]
        parents.append(min(outer, key=lambda j: len(members[j])) if outer else None)
    return len(members), tuple(parents)


def test_every_non_tensor_kernel_has_maxwell_and_pascal_listings():
    assert KERNELS == ["block_trips", "datadep_loop", "fp64_axpy", "grid_stride", "halo_tiles",
                       "matmul_tiled",
                       "nested_loops", "param_loops", "plane_stencils", "reduce", "saxpy2",
                       "sfu_heavy",
                       "thread_guards", "tile_fields", "vecadd", "vector_ops", "window_loops"]
    for kernel in KERNELS:
        for arch in LEGACY:
            assert parse_listing((SASS / f"{kernel}.{arch}.sass").read_text()).archs() == [arch]
            for f in functions(f"{kernel}.{arch}.sass"):
                assert all(len(i.words) == 1 and i.bundle_control is not None
                           for i in f.instructions)
                assert all(i.address % 32 in (8, 16, 24) for i in f.instructions)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("arch", LEGACY)
def test_loops_equal_to_the_sm75_listings(kernel, arch):
    """The audit's lost loops: the same count and nesting as the Turing listing."""
    names = [f.name for f in functions(f"{kernel}.sm_75.sass")]
    assert names == [f.name for f in functions(f"{kernel}.{arch}.sass")]
    shapes = {fn: loop_shape(f"{kernel}.sm_75.sass", fn) for fn in names}
    assert shapes == {fn: loop_shape(f"{kernel}.{arch}.sass", fn) for fn in names}
    if kernel not in ("vecadd", "vector_ops", "thread_guards", "halo_tiles"):  # straight code
        assert any(n for n, _ in shapes.values()), kernel  # the test compares loops


def test_nested_loops_nest_on_maxwell():
    assert loop_shape("nested_loops.sm_52.sass", "_Z10window_sumPKfPfiii") == (2, (None, 0))


def test_branch_to_a_bundles_control_word_goes_to_its_first_instruction():
    """cuobjdump prints the back edge of saxpy2's loop as '@!P0 BRA 0x100'; 0x100 is the
    bundle's control word, the loop's first instruction is at 0x108."""
    (f,) = functions("saxpy2.sm_52.sass")
    by_addr = {i.address: i for i in f.instructions}
    back = by_addr[0x128]
    assert back.text == "@!P0 BRA 0x100" and back.target == 0x108
    assert 0x100 not in by_addr and by_addr[0x108].text == "IADD32I R6, R6, 0x1"
    forward = by_addr[0xD0]  # to an instruction's own address: unchanged
    assert forward.text == "@!P0 BRA 0x130" and forward.target == 0x130
    g, r = import_kernel_with_report(SASS / "saxpy2.sm_52.sass")
    assert [(lid, h, l) for lid, h, l, _ in r.loops] == [("loop1", 0x108, 0x128)]
    taken = [(e.src, e.dst) for e in g.edges.values() if e.kind == "branch" and e.taken]
    assert ("i0128", "i0108") in taken


BROKEN = """\tcode for sm_52
\t\tFunction : k
                                                                  /* 0x001fc400fe2007f6 */
        /*0008*/                   MOV R1, c[0x0][0x20] ;         /* 0x4c98078000870001 */
        /*0010*/                   ISETP.GE.AND P0, PT, R1, 0x1, PT ; /* 0x366d038000170107 */
        /*0018*/               @P0 BRA {target} ;                 /* 0xe2400ffffd08000f */
                                                                  /* 0x001fc400fe2007f6 */
        /*0028*/                   MOV R2, RZ ;                   /* 0x5c9807800ff70002 */
        /*0030*/                   EXIT ;                         /* 0xe30000000007000f */
        /*0038*/                   BRA 0x38 ;                     /* 0xe2400fffff87000f */
\t\t..........
"""


@pytest.mark.parametrize("target, resolved", [("0x8", 0x8), ("0x0", 0x8), ("0x20", 0x28),
                                              ("0x28", 0x28)])
def test_bundle_targets_resolve(target, resolved):
    (f,) = parse_listing(BROKEN.format(target=target)).functions
    assert f.instructions[2].target == resolved


@pytest.mark.parametrize("target", ["0xc", "0x24", "0x2c"])
def test_branch_to_no_instruction_is_an_error_naming_it(target):
    with pytest.raises(ListingError, match=rf"branch '@P0 BRA {target}' at 0x0018 goes to "
                                           rf"0x{int(target, 16):04x}, which is not the address "
                                           rf"of an instruction of k"):
        parse_listing(BROKEN.format(target=target), "b.sass")


def test_branch_to_no_instruction_on_sm90_is_an_error_too():
    text = (SASS / "saxpy2.sm_90.sass").read_text().replace("@!P0 BRA 0x120", "@!P0 BRA 0x128")
    with pytest.raises(ListingError, match="goes to 0x0128, which is not the address"):
        parse_listing(text, "s.sass")


@pytest.mark.parametrize("kernel, arch", NVDISASM)
def test_nvdisasm_with_braces_matches_cuobjdump(kernel, arch):
    """nvdisasm marks dual-issued pairs '{ A ; B }' (B without ';', its word on the next
    line with -hex); both forms read as cuobjdump's listing does, the architecture from
    the ELF header flags."""
    cuobj = functions(f"{kernel}.{arch}.sass")
    for suffix in ("nvdisasm", "nvdisasm-nohex"):
        lst = parse_listing((SASS / f"{kernel}.{arch}.{suffix}.sass").read_text())
        assert lst.tool == "nvdisasm" and lst.archs() == [arch]
        assert [f.name for f in lst.functions] == [f.name for f in cuobj]
        for a, b in zip(lst.functions, cuobj):
            assert [i.address for i in a.instructions] == [i.address for i in b.instructions]
            assert [i.opcode for i in a.instructions] == [i.opcode for i in b.instructions]
            assert [i.target for i in a.instructions] == [i.target for i in b.instructions]
            if suffix == "nvdisasm":
                assert [i.words for i in a.instructions] == [i.words for i in b.instructions]
                assert [i.bundle_control for i in a.instructions] == \
                    [i.bundle_control for i in b.instructions]
            else:
                assert all(i.words == () and i.bundle_control is None for i in a.instructions)
            pairs = [i.address for i in a.instructions if i.dual_issued]
            assert pairs, "the fixture has dual-issued pairs"


@pytest.mark.parametrize("kernel, arch", NVDISASM)
def test_a_stall_count_of_zero_is_nvdisasms_dual_issue(kernel, arch):
    """The control field's stall count is 0 exactly before the second instruction of each
    pair nvdisasm braces (outside the unreachable padding after the trap branch)."""
    (c,) = functions(f"{kernel}.{arch}.sass")
    (n,) = functions(f"{kernel}.{arch}.nvdisasm.sass")
    trap = next(k for k, i in enumerate(c.instructions) if i.mnemonic == "BRA"
                and i.target == i.address)
    braced = {i.address for i in n.instructions[:trap] if i.dual_issued}
    stall0 = {c.instructions[k + 1].address for k in range(trap - 1)
              if instruction_control(c.instructions[k]).stall == 0}
    assert braced == stall0 and braced


def test_saxpy2_sm52_graph_checked_by_hand():
    """Issue order from the control words: the stall count (dual issue: a 'dual' edge of
    0 cycles), the scoreboards as on sm_70+, branch latencies from the table."""
    g, r = import_kernel_with_report(SASS / "saxpy2.sm_52.sass")
    assert r.has_control and r.instructions == 32
    kinds = {(e.src, e.dst): e for e in g.edges.values()}
    # {IADD.X R5 ; @!P0 BRA} and {MOV R0, RZ ; LDG.E R5, [R4]} (control 0x003fc000ffa007f0:
    # IADD.X stall 0)
    assert kinds[("i00c8", "i00d0")].kind == "dual"
    assert kinds[("i00d8", "i00e8")].kind == "dual"
    # MOV R1 (stall 6 in 0x001cfc00e22007f6) -> S2R
    assert kinds[("i0008", "i0010")].kind == "ilp" and kinds[("i0008", "i0010")].latency == 6
    # branch edges carry no latency: the table's (published for Maxwell)
    assert all(e.latency is None for e in g.edges.values() if e.kind == "branch")
    # LDG.E R5 (write barrier) -> FADD R0, R5, R0 in the loop: a memory edge
    assert kinds[("i00e8", "i0110")].kind == "memory"
    # the nvdisasm -hex listing gives the same graph; without -hex the dual edges stay,
    # the other issue-order edges take the table's ILP latency
    g2, _ = import_kernel_with_report(SASS / "saxpy2.sm_52.nvdisasm.sass")
    assert sorted((e.src, e.dst, e.kind, e.latency) for e in g2.edges.values()) == \
        sorted((e.src, e.dst, e.kind, e.latency) for e in g.edges.values())
    g3, r3 = import_kernel_with_report(SASS / "saxpy2.sm_52.nvdisasm-nohex.sass")
    assert not r3.has_control
    assert {(e.src, e.dst) for e in g3.edges.values() if e.kind == "dual"} == \
        {("i00c8", "i00d0"), ("i00d8", "i00e8")}
    assert all(e.latency is None for e in g3.edges.values() if e.kind == "ilp")


@pytest.mark.parametrize("opcode, unit, cls", [
    ("ICMP.NE", "cuda_core", "int_add"), ("VMNMX.U32.U32.U32.MX", "cuda_core", "int_add"),
    ("VSETP.GE.AND", "cuda_core", "setp"), ("FCMP.GT", "cuda_core", "fp32_add"),
    ("DEPBAR.LE", "barrier", None), ("TEXDEPBAR", "barrier", None)])
def test_maxwell_pascal_opcodes_are_known(opcode, unit, cls):
    from gpumodeler.core.kernel.opcodes import classify
    info = classify(opcode)
    assert info is not None and (info.unit, info.latency_class) == (unit, cls)


def test_depbar_is_a_scoreboard_wait_not_a_barrier_for_the_models():
    """matmul_tiled on sm_52: one DEPBAR.LE SB5 (a wait on the warp's own loads), and two
    BAR.SYNC in the loop each after a MEMBAR.CTA (a fence); H&K's #Synch_insts counts the
    two barriers only."""
    from gpumodeler.core.kernel.opcodes import is_block_barrier, is_scoreboard_wait
    from gpumodeler.core.models.graph_inputs import graph_counts
    g, _ = import_kernel_with_report(SASS / "matmul_tiled.sm_52.sass")
    ops = sorted(i.opcode for i in g.instructions.values() if i.unit == "barrier")
    assert ops == ["BAR.SYNC", "BAR.SYNC", "DEPBAR.LE", "MEMBAR.CTA", "MEMBAR.CTA"]
    assert [is_scoreboard_wait(o) for o in ops] == [False, False, True, False, False]
    assert [is_block_barrier("barrier", o) for o in ops] == [True, True, False, False, False]
    assert graph_counts(g, {"loop1": 5})["synch_instructions"] == 2 * 5
    # it is no barrier edge either: BAR.SYNC gives one, DEPBAR an issue-order edge
    barrier_sources = {g.instructions[e.src].opcode for e in g.edges.values() if e.kind == "barrier"}
    assert barrier_sources == {"BAR.SYNC"}


UNKNOWN = """\tcode for sm_52
\t\tFunction : k
        /*0008*/                   MOV R1, c[0x0][0x20] ;
        /*0010*/                   FROBNICATE R2, R1 ;
        /*0018*/                   FADD R3, R2, R1 ;
        /*0028*/                   EXIT ;
\t\t..........
"""


def test_an_unknown_opcode_without_control_words_has_no_silent_placeholder():
    """Without control words there is no stall count to stand in: the edge keeps no
    latency (the analysis names it) and the summary warns and lists it."""
    from gpumodeler.core.errors import GraphError
    from gpumodeler.core.kernel.latency_bound import analyze
    from gpumodeler.core.kernel.latency_tables import get_table
    (f,) = parse_listing(UNKNOWN).functions
    g, r = build_graph(f)
    (edge,) = [e for e in g.edges.values() if e.src == "i0010" and e.kind == "dependency"]
    assert edge.latency is None
    assert r.placeholder_edges == [(edge.id, "FROBNICATE", None)]
    assert "warning: unknown opcodes kept and flagged: FROBNICATE" in r.summary()
    assert f"{edge.id} FROBNICATE no latency" in r.summary()
    with pytest.raises(GraphError, match=rf"{edge.id}.*FROBNICATE.*no latency class"):
        analyze(g, get_table("maxwell-gajger"))


def test_an_unknown_opcode_with_control_words_carries_its_stall_count_listed():
    text = (SASS / "saxpy2.sm_52.sass").read_text().replace("FADD R0, R5, R0", "FROB R0, R5, R0")
    (f,) = parse_listing(text).functions
    g, r = build_graph(f)
    assert r.unknown_opcodes == ["FROB"]
    listed = {eid: lat for eid, m, lat in r.placeholder_edges if m == "FROB"}
    assert listed and all(lat == g.edges[eid].latency and lat >= 1 for eid, lat in listed.items())
    assert all(f"{eid} FROB {lat:g}" in r.summary() for eid, lat in listed.items())


def test_a_call_outside_the_function_falls_through():
    """A call whose target is not in the function (another function, an unresolved
    relocation) keeps no target, as before; only branches must land on an instruction."""
    text = BROKEN.format(target="0x8").replace("@P0 BRA 0x8", "CAL 0x2000")
    (f,) = parse_listing(text).functions
    assert f.instructions[2].mnemonic == "CAL" and f.instructions[2].target is None
    text = BROKEN.format(target="0x8").replace("@P0 BRA 0x8", "CAL 0x20")
    assert parse_listing(text).functions[0].instructions[2].target == 0x28  # into a bundle


KEPLER = """\tcode for sm_35
\t\tFunction : k
                                                                  /* 0x08a0b0a0a0a0bc80 */
        /*0008*/                   MOV R1, c[0x0][0x44] ;         /* 0x64c03c00089c0006 */
        /*0010*/                   S2R R0, SR_CTAID.X ;           /* 0x86400000129c0002 */
        /*0018*/                   S2R R3, SR_TID.X ;             /* 0x86400000109c000e */
        /*0020*/                   IMAD R0, R0, c[0x0][0x28], R3 ;  /* 0x51080c00051c0002 */
        /*0028*/                   ISETP.GE.AND P0, PT, R0, c[0x0][0x158], PT ; /* 0x5b681c002b1c001e */
        /*0030*/                   NOP ;                          /* 0x85800000001c3c02 */
        /*0038*/                   EXIT ;                         /* 0x18000000001c003c */
\t\t..........
"""


def test_kepler_bundles_are_not_read_as_maxwell_control_words():
    """Kepler's control word leads seven instructions in another format: not decoded."""
    (f,) = parse_listing(KEPLER).functions
    assert [i.bundle_control for i in f.instructions] == [None] * 7
    g, r = build_graph(f)
    assert not r.has_control
    assert all(e.latency is None for e in g.edges.values() if e.kind == "ilp")
    # without an architecture line the same: an instruction at 0x20 is no Maxwell bundle
    (f,) = parse_listing(KEPLER.replace("\tcode for sm_35\n", "")).functions
    assert f.arch is None and all(i.bundle_control is None for i in f.instructions)
    (f,) = parse_listing((SASS / "saxpy2.sm_52.sass").read_text().replace("code for sm_52", "")).functions
    assert f.arch is None and all(i.bundle_control is not None for i in f.instructions)
