"""Kernel graphs built from the committed SASS listings: classes, loops, edges checked by
hand on short listings (no CUDA tools needed)."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES, MEMORY_LEVELS, LatencyTable
from gpumodeler.core.kernel.sass.build import DEFAULT_ITERATIONS, build_graph
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.sass.listing import parse_listing
from gpumodeler.core.kernel.warp_counts import count

from sass_listings import listing_of

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
#: A complete table for evaluating imported graphs in tests (not a published one).
TABLE = LatencyTable(
    key="test-complete", name="test", architecture="test", source="tests",
    instruction_cycles={c: 4.0 for c in INSTRUCTION_CLASSES} | {"sfu": 20.0, "fp64": 8.0, "tensor": 32.0},
    memory_cycles={m: 30.0 for m in MEMORY_LEVELS} | {"dram": 400.0},
    ilp_cycles=1, branch_taken_cycles=12, branch_not_taken_cycles=6, barrier_cycles=20,
    block_replacement_cycles=200)


def imported(name, **kw):
    return import_kernel_with_report(SASS / name, **kw)


def edges(graph, kind=None):
    return {(e.src, e.dst): e for e in graph.edges.values() if kind is None or e.kind == kind}


def test_saxpy2_sm90_instruction_count_per_class():
    g, r = imported("saxpy2.sm_90.sass")
    assert r.instructions == 30 and r.dropped_padding == 10  # trap BRA + 9 NOPs
    assert len(g.instructions) == 30
    assert r.class_counts == {
        "constant_load": 7, "mov": 3, "int_mad": 4, "setp": 3, "exit": 2, "branch": 2,
        "global_load": 2, "int_add": 3, "fp32_add": 2, "shift": 1, "global_store": 1}
    assert g.name == "saxpy2"
    assert r.unknown_opcodes == [] and r.has_control


def test_saxpy2_sm90_loop_and_variable():
    g, r = imported("saxpy2.sm_90.sass")
    assert list(g.loops) == ["loop1"]
    assert g.loops["loop1"].members == {"i0120", "i0130", "i0140", "i0150"}
    assert g.loops["loop1"].iterations.text == "loop1"
    # guard1: the n > 0 branch around the loop (core.kernel.sass.guards); the loop runs to
    # the kernel parameter a (core.kernel.sass.parameter_trips), not given by default
    assert g.variables == {"loop1": DEFAULT_ITERATIONS, "guard1": 1, "param_0x214": 0}
    assert g.block_trips == {"loop1": "param_0x214"}


def test_saxpy2_sm90_edges_checked_by_hand():
    g, _ = imported("saxpy2.sm_90.sass")
    ilp, dep, mem, br = (edges(g, k) for k in ("ilp", "dependency", "memory", "branch"))
    # stall counts as issue spacing: ISETP (S13) -> @P0 EXIT, IMAD.WIDE (S06) -> LDG
    assert ilp[("i0060", "i0070")].latency == 13
    assert ilp[("i00e0", "i00f0")].latency == 6
    # predicate P0: ISETP -> @P0 EXIT; carry predicate: LEA R2, P0 -> LEA.HI.X ..., P0
    assert ("i0060", "i0070") in dep and ("i0180", "i0190") in dep
    # uniform register UR4 of the loop counter: UMOV -> UIADD3 -> ISETP
    assert ("i0110", "i0120") in dep and ("i0120", "i0140") in dep
    # 64-bit operands: LDC.64 R2 -> IMAD.WIDE (addend R2.64) -> LDG [R2.64];
    # LEA R2 and LEA.HI.X R3 -> LDG [R2.64]
    assert ("i00d0", "i00e0") in mem and ("i00e0", "i00f0") in dep
    assert ("i0180", "i01a0") in dep and ("i0190", "i01a0") in dep
    # loads: LDG R3 -> FADD (also scoreboard 5), constant ULDC.64 UR6 -> LDG desc[UR6]
    assert ("i00f0", "i0130") in mem and ("i0090", "i00f0") in mem
    assert mem[("i00f0", "i0130")].latency is None  # from the table (memory level dram)
    # reaching definitions over the branch: R0 of the FADD after the loop comes from the
    # loop's FADD or, when the loop is skipped, from IMAD.MOV before it
    assert ("i0130", "i01b0") in dep and ("i00a0", "i01b0") in dep
    # branches: forward skip of the loop, and the loop's back edge
    assert br[("i00c0", "i0160")].taken is True and br[("i00c0", "i00d0")].taken is False
    assert br[("i0150", "i0120")].taken is True and br[("i0150", "i0160")].taken is False
    # a store produces no register; EXIT has no successor
    assert [(d, e.kind) for (src, d), e in edges(g).items() if src == "i01c0"] == [("i01d0", "ilp")]
    assert not any(src == "i01d0" for src, _ in edges(g))


def test_128bit_operands_span_four_registers():
    g, _ = imported("vector_ops.sm_90.sass", function="vecadd4")
    mem, dep = edges(g, "memory"), edges(g, "dependency")
    assert g.instructions["i00a0"].opcode == "LDG.E.128" and g.instructions["i00a0"].width_bytes == 16
    # FADD R15, R15, R19 ... FADD R12, R12, R16 each read both 128-bit loads
    for fadd in ("i00e0", "i00f0", "i0100", "i0110"):
        assert (("i00a0", fadd) in mem) and (("i00c0", fadd) in mem)
    # STG.E.128 [..], R12 reads R12..R15, written by the four FADDs
    assert all((f, "i0120") in dep for f in ("i00e0", "i00f0", "i0100", "i0110"))


def test_fp64_pairs():
    g, _ = imported("fp64_axpy.sm_90.sass")
    assert g.instructions["i0170"].opcode == "DFMA" and g.instructions["i0170"].unit == "fp64"
    mem, dep = edges(g, "memory"), edges(g, "dependency")
    assert ("i0140", "i0170") in mem  # LDG.E.64 R6 -> DFMA R4, R6, UR8, R4
    assert ("i00d0", "i0170") in mem  # LDG.E.64 R4 -> DFMA (addend R4:R5)
    assert ("i0170", "i01a0") in dep  # DFMA R4 -> STG.E.64 [..], R4


@pytest.mark.parametrize("arch", ARCHS)
def test_nested_loops(arch):
    g, r = imported(f"nested_loops.{arch}.sass")
    assert len(g.loops) == 2
    outer, inner = sorted(g.loops.values(), key=lambda lp: -len(lp.members))
    assert inner.members < outer.members
    # the inner loop carries its address (or index) increment to the next iteration's
    # address computation: a backward dependency edge inside the inner loop
    order = g.order()
    carried = [e for e in g.edges.values() if e.kind == "dependency" and e.src in inner.members
               and e.dst in inner.members and order[e.src] > order[e.dst]]
    assert carried, "the increment must feed the next iteration"
    bound = analyze(g, TABLE)
    text = bound.formula()
    assert outer.id in text and inner.id in text


def test_nested_loops_sm90_members():
    g, _ = imported("nested_loops.sm_90.sass")
    assert g.loops["loop1"].members == {f"i{a:04x}" for a in range(0xE0, 0x1F0, 0x10)}
    assert g.loops["loop2"].members == {f"i{a:04x}" for a in range(0x170, 0x1E0, 0x10)}
    dep = edges(g, "dependency")
    # IADD3 R2, P1, R2, 0x4 -> IADD3.X R3, ..., P1 (carry) -> LDG [R2.64] next iteration
    assert ("i01a0", "i01b0") in dep
    assert ("i01a0", "i0170") in dep and ("i01b0", "i0170") in dep


@pytest.mark.parametrize("arch", ARCHS)
def test_unrolled_loop_and_remainder_share_one_variable(arch):
    g, r = imported(f"wmma_gemm.{arch}.sass")
    its = sorted((lp.iterations.text for lp in g.loops.values()))
    assert len(its) == 2
    main = next(t for t in its if t.startswith("floor"))
    k = int(main.split("/")[1].rstrip(")"))
    assert k >= 2 and main == f"floor(loop1 / {k})"
    assert f"loop1 - {k} * floor(loop1 / {k})" in its
    assert {k: v for k, v in g.variables.items() if k.startswith("loop")} == {"loop1": DEFAULT_ITERATIONS}
    # the unrolled body does k times the tensor work of the remainder
    hmma = {lp.id: sum(g.instructions[n].unit == "tensor" for n in lp.members)
            for lp in g.loops.values()}
    main_id = next(lp.id for lp in g.loops.values() if lp.iterations.text == main)
    rest_id = next(lp.id for lp in g.loops.values() if lp.id != main_id)
    assert hmma[main_id] == k * hmma[rest_id] > 0


@pytest.mark.parametrize("arch", ARCHS)
def test_reduce_classes(arch):
    g, r = imported(f"reduce.{arch}.sass")
    c = r.class_counts
    assert c["barrier"] == 2  # two __syncthreads
    assert c["shuffle"] == 5  # offsets 16, 8, 4, 2, 1 unrolled
    assert c["shared_store"] == 2 and c["shared_load"] == 3
    assert c["global_store"] == 1  # atomicAdd without a result: RED
    assert len(g.loops) == 2  # grid-stride loop and the shared-memory tree
    bar = [n for n, i in g.instructions.items() if i.opcode.startswith("BAR")]
    assert all(any(e.kind == "barrier" and e.src == b for e in g.edges.values()) for b in bar)


@pytest.mark.parametrize("arch", ARCHS)
def test_sfu_heavy_classes(arch):
    g, r = imported(f"sfu_heavy.{arch}.sass")
    assert r.class_counts["sfu"] == 6
    (loop,) = g.loops.values()
    assert sum(g.instructions[n].unit == "sfu" for n in loop.members) == 6


@pytest.mark.parametrize("arch", ARCHS)
def test_data_dependent_loop(arch):
    g, r = imported(f"datadep_loop.{arch}.sass")
    loops = {k: v for k, v in g.variables.items() if k.startswith("loop")}
    assert len(g.loops) == 1 and loops == {"loop1": DEFAULT_ITERATIONS}


@pytest.mark.parametrize("name", sorted(p.name for p in SASS.glob("*.sass")))
def test_every_fixture_evaluates_and_round_trips(name):
    several = {"vector_ops": "vecadd4", "access_patterns": "strided_loop",
               "block2d": "copy2d_cols", "stencil2d": "box9", "tile_fields": "warp_per_row",
               "thread_guards": "warp_sums", "block_trips": "tile_column_sum",
               "grid_stride": "stride_size", "param_loops": "z_march_stencil",
               "halo_tiles": "tiled_convolution", "window_loops": "centred_window",
               "plane_stencils": "march_registers"}
    kw = {"function": several[name.split(".")[0]]} if name.split(".")[0] in several else {}
    g, r = imported(name, **kw)
    assert r.skipped_edges == 0
    assert from_dict(to_dict(g)) == g
    values = {v: 8 for v in g.variables}
    assert float(analyze(g, TABLE).evaluate(values)) > 0
    assert count(g, 32).evaluate(values)["issued_instructions"] > 0


def test_listing_without_control_words_uses_the_table_ilp():
    g, r = imported("saxpy2.sm_90.nvdisasm-nohex.sass")
    assert not r.has_control
    assert all(e.latency is None for e in g.edges.values() if e.kind == "ilp")
    g2, _ = imported("saxpy2.sm_90.nvdisasm.sass")
    g3, _ = imported("saxpy2.sm_90.sass")
    assert to_dict(g2)["edges"] == to_dict(g3)["edges"]


SYNTHETIC = """\tcode for sm_90
\t\tFunction : k
        /*0000*/                   MOV R1, 0x1 ;                 /* 0x0000000000017802 */
                                                                 /* 0x000fe20000000f00 */
        /*0010*/                   @P0 MOV R1, 0x2 ;             /* 0x0000000000017802 */
                                                                 /* 0x000fe40000000f00 */
        /*0020*/                   FROBNICATE R2, R1 ;           /* 0x0000000000027902 */
                                                                 /* 0x000fc60000000f00 */
        /*0030*/                   FADD R3, R2, R1 ;             /* 0x0000000000037221 */
                                                                 /* 0x000fe20000000000 */
        /*0040*/                   EXIT ;                        /* 0x000000000000794d */
                                                                 /* 0x000fea0003800000 */
"""


def test_unknown_opcode_kept_flagged_and_guarded_writes():
    (func,) = parse_listing(SYNTHETIC).functions
    g, r = build_graph(func)
    assert r.unknown_opcodes == ["FROBNICATE"]
    ins = g.instructions["i0020"]
    assert ins.unit == "cuda_core" and ins.latency_class is None and ins.label.startswith("?")
    dep = edges(g, "dependency")
    # its result edge carries the listing's stall count (S03) as a placeholder latency
    assert dep[("i0020", "i0030")].latency == 3
    # a guarded write does not hide the unguarded one before it: both reach FROBNICATE
    assert ("i0000", "i0020") in dep and ("i0010", "i0020") in dep
    assert ("i0010", "i0010") not in dep
    assert "FROBNICATE" in g.description


@pytest.mark.parametrize("k", [3, 6])
def test_guarded_writes_that_read_their_register_form_a_chain(k):
    """``@P0 IMAD R5, R5, ...`` waits for every earlier R5 whether or not it runs: a later
    reader depends on them through it, so each reaches only the next (k edges, not k²/2);
    a guarded write that does not read its register still leaves the earlier one reaching."""
    lines = ["MOV R5, 0x1", "MOV R6, 0x2", "ISETP.GT.AND P0, PT, R6, 0x1, PT"]
    lines += ["@P0 IMAD R5, R5, 0x21, R6"] * k + ["IADD3 R7, R5, R6, RZ", "EXIT"]
    (func,) = parse_listing(listing_of(lines)).functions
    g, _ = build_graph(func)
    ids = list(g.instructions)
    r5 = {(e.src, e.dst) for e in g.edges.values() if e.kind == "dependency"
          and g.instructions[e.src].opcode.startswith(("MOV", "IMAD")) and e.src != ids[1]}
    chain = [ids[0]] + ids[3:3 + k] + [ids[3 + k]]
    assert r5 == set(zip(chain, chain[1:]))


def test_end_node_option():
    g, _ = imported("vecadd.sm_90.sass", end_node=True)
    assert g.instructions["end"].unit == "virtual"
    repl = [e.src for e in g.edges.values() if e.kind == "replacement"]
    assert repl and all(g.instructions[s].opcode == "EXIT" for s in repl)
    assert all(e.dst == "end" for e in g.edges.values() if e.kind == "replacement")


def test_imported_graph_in_a_project_file(tmp_path):
    """Project files keep an imported graph unchanged (new classes, pipes' units, loops)."""
    from gpumodeler.core.commands import AddKernel, UndoStack
    from gpumodeler.core.project import Project
    from gpumodeler.db.project_file import load_project, save_project
    g, _ = imported("wmma_gemm.sm_90.sass")
    p = Project("imported")
    UndoStack(p).push(AddKernel("wmma", g))
    path = save_project(p, tmp_path / "p.gpm")
    assert load_project(path).kernels["wmma"] == g


def test_benchmark_listing_imports_with_the_count_it_claims(tmp_path):
    """The generated listing of benchmarks/bench_sass_import.py (not timed here)."""
    import importlib.util
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_sass_import.py"
    spec = importlib.util.spec_from_file_location("bench_sass_import", bench)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path = tmp_path / "u.sass"
    path.write_text(mod.unrolled_listing(2000))
    g, r = import_kernel_with_report(path)
    assert r.instructions == 2000 and len(g.loops) == 1 and r.has_control
    body = 2000 - 7  # prologue 3, loop control 2, store and exit 2
    assert r.class_counts["global_load"] == (body + 3) // 4
    assert r.class_counts["fp32_mad"] == (body + 2) // 4
    assert from_dict(to_dict(g)) == g


def test_architecture_families():
    from gpumodeler.core.kernel.sass.importer import architecture_family
    assert [architecture_family(a) for a in ("sm_75", "sm_86", "sm_89", "sm_90a", "sm_100", "sm_120",
                                             "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62",
                                             "sm_35", None)] == \
        ["Turing", "Ampere", "Ada", "Hopper", "Blackwell", "Blackwell", "Maxwell", "Maxwell",
         "Maxwell", "Pascal", "Pascal", "Pascal", None, None]


def test_basic_blocks_of_saxpy2_sm90():
    g, r = imported("saxpy2.sm_90.sass")
    # leaders: entry, after @P0 EXIT, after the forward branch, the loop header, after the
    # back branch (= the forward branch's target)
    assert r.blocks == [("i0000", "i0070"), ("i0080", "i00c0"), ("i00d0", "i0110"),
                        ("i0120", "i0150"), ("i0160", "i01d0")]
    ys = [g.instructions[i].y for i in ("i0070", "i0080")]
    assert ys[1] - ys[0] > 56  # a gap between blocks in the editor's layout


def test_listing_without_architecture_line(tmp_path):
    """A function pasted without its 'code for sm_XX' line: 16-byte steps mean sm_70+
    encodings, so the control words are still decoded; --arch names the architecture."""
    text = "\n".join(ln for ln in (SASS / "saxpy2.sm_90.sass").read_text().splitlines()
                     if "sm_90" not in ln)
    path = tmp_path / "pasted.sass"
    path.write_text(text)
    g, r = import_kernel_with_report(path)
    assert r.arch is None and r.has_control
    assert edges(g, "ilp")[("i0060", "i0070")].latency == 13
    g, r = import_kernel_with_report(path, arch="sm_90")
    assert r.arch == "sm_90"
