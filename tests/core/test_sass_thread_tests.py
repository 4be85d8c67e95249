"""Guards on the thread index alone, decided by each launch's block shape
(core.kernel.sass.thread_tests): the share of a block's warps that run them, against a
thread-by-thread count; the thread tests the import finds in real listings, Maxwell to
Blackwell; the kernel format and the launch's values."""
from pathlib import Path

import pytest

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.graph_items import block_set_variables, launch_guard_values
from gpumodeler.core.kernel.sass.addresses import Poly, parse_address
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.sass.thread_tests import (conjunction, parse_test, thread_test,
                                                      warp_share)
from gpumodeler.core.kernel.warp_counts import count

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
ARCHS = ("sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
         "sm_120")
_OPS = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__,
        "==": int.__eq__, "!=": int.__ne__}


def _by_thread(value: str, op: str, number: int, block: tuple, warp: int = 32) -> float:
    """The share counted thread by thread, each symbol worked out by hand (the oracle)."""
    bx, by, bz = block
    threads = bx * by * bz
    hit = set()
    for t in range(threads):
        x, y, z = t % bx, (t // bx) % by, t // (bx * by)
        known = {"tid.x": x, "tid.y": y, "tid.z": z, "laneid": t % warp, "tid.x%32": x % 32,
                 "tid.x/32": x // 32, "tid.x%8": x % 8, "tid.y/2": y // 2, "ntid.x": bx,
                 "ntid.y": by}
        if _OPS[op](_worked_out(value, known), number):
            hit.add(t // warp)
    return len(hit) / -(-threads // warp)


def _worked_out(text: str, known: dict) -> int:
    """The value of a polynomial's text with each symbol's value from ``known``."""
    v = 0
    for mono, coef in parse_address(text).terms.items():
        term = coef
        for s in mono:
            term *= known[s]
        v += term
    return v


VALUES = ["tid.x", "tid.x%32", "tid.x/32", "tid.y", "16·tid.y + tid.x", "ntid.x·tid.y + tid.x",
          "laneid", "tid.x%8 + 8·tid.y/2", "tid.z"]
BLOCKS = [(256, 1, 1), (16, 16, 1), (32, 8, 1), (8, 8, 4), (100, 1, 1), (1, 32, 1), (48, 3, 1),
          (1024, 1, 1), (2, 2, 2)]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("block", BLOCKS)
def test_the_share_of_warps_equals_a_thread_by_thread_count(value, block):
    for op in _OPS:
        for number in (0, 1, 3, 15, 16, 31, 32, 100, 255):
            text = thread_test(parse_address(value), op, number)
            assert text is not None
            assert warp_share(text, block) == pytest.approx(
                _by_thread(value, op, number, block)), (text, block)


BOUNDS = ["ntid.x - 3", "ntid.x - 1", "ntid.x", "16·ntid.x/32", "ntid.y - 1", "ntid.x + 2"]


def _by_thread_bound(value, op, bound, unsigned, block):
    """The oracle for a bound of the block's dimensions: the bound worked out for the block
    (a negative one read as unsigned: 2^32 less its size), then the number's oracle."""
    limit = _worked_out(bound, {"ntid.x": block[0], "ntid.y": block[1],
                                "ntid.x/32": block[0] // 32})
    if unsigned and limit < 0:
        limit += 2 ** 32
    return _by_thread(value, op, limit, block)


@pytest.mark.parametrize("block", BLOCKS)
def test_a_bound_of_the_block_dimensions_equals_a_thread_by_thread_count(block):
    """``threadIdx.x >= blockDim.x - 3`` (a right halo), ``== blockDim.x - 1``: the bound
    is the block's; where it may be negative the compare's reading decides (a block of 2
    threads: signed, every thread is >= -1; unsigned, none is >= 2^32 - 1)."""
    for value in ("tid.x", "tid.x%32", "16·tid.y + tid.x"):
        for bound in BOUNDS:
            for op in _OPS:
                for unsigned in (False, True):
                    text = thread_test(parse_address(value), op, parse_address(bound), unsigned)
                    assert text is not None, (value, op, bound)
                    assert warp_share(text, block) == pytest.approx(
                        _by_thread_bound(value, op, bound, unsigned and "(unsigned)" in text,
                                         block)), (text, block)
    assert warp_share("tid.x >= ntid.x - 3 (unsigned)", (2, 1, 1)) == 0
    assert warp_share("tid.x >= ntid.x - 3", (2, 1, 1)) == 1
    assert thread_test(parse_address("tid.x"), "<=", parse_address("ntid.x - 1")) == \
        "tid.x < ntid.x"
    assert thread_test(parse_address("tid.x"), "<", parse_address("ctaid.x")) is None


@pytest.mark.parametrize("block", BLOCKS)
def test_a_conjunction_passes_where_every_part_does(block):
    """``tid.x < 12 and tid.y < 12`` (a 2-D tile's inner threads): the warps holding a
    thread that passes both, against the thread-by-thread count of both at once."""
    text = conjunction("tid.y < 12", "tid.x < 12", "tid.y < 12")
    assert text == "tid.x < 12 and tid.y < 12"
    bx, by, bz = block
    hit = {t // 32 for t in range(bx * by * bz) if t % bx < 12 and (t // bx) % by < 12}
    assert warp_share(text, block) == pytest.approx(len(hit) / -(-(bx * by * bz) // 32))
    assert parse_test(text) is not None and parse_test("tid.x < 12 and ctaid.x < 3") is None


def test_only_exact_tests_are_written():
    """A negative coefficient or a number outside 0 … 2^31 − 1 would make the compare's
    signed and unsigned readings differ: no test (the guard stays a variable)."""
    tid = parse_address("tid.x")
    assert thread_test(tid, "<", 3) == "tid.x < 3" == thread_test(tid, "<=", 2)
    assert thread_test(tid, ">", 31) == "tid.x >= 32"
    # a thread value less a number: a signed compare moves the number to the bound, an
    # unsigned one below a number is a range (below the number the difference wraps)
    assert thread_test(parse_address("tid.x - 1"), "<", 3) == "tid.x < 4"
    assert thread_test(parse_address("tid.x - 2"), "<=", 27, unsigned=True) == \
        "tid.x < 30 and tid.x >= 2"
    assert thread_test(parse_address("tid.x - 2"), ">", 27, unsigned=True) is None
    assert thread_test(parse_address("tid.x - 2"), "<", 2 ** 31 - 1, unsigned=True) is None
    assert thread_test(parse_address("tid.x - 2"), "<", parse_address("ntid.x"), True) is None
    assert thread_test(tid, "<", -1) is None and thread_test(tid, "<", 2 ** 31) is None
    assert thread_test(parse_address("ctaid.x + tid.x"), "<", 3) is None  # the block index
    assert thread_test(parse_address("c[0x0][0x210]"), "==", 0) is None  # a parameter
    assert thread_test(Poly.const(4), "<", 3) is None  # no thread
    assert thread_test(tid, "=<", 3) is None
    assert parse_test("tid.x%32 == 0") is not None and parse_test("tid.x ~ 0") is None
    with pytest.raises(ValueError, match="not a thread test"):
        warp_share("blockIdx.x < 3", (256, 1, 1))
    with pytest.raises(ValueError, match="at least 1"):
        warp_share("tid.x < 3", (0, 1, 1))


def _tests(arch, function):
    g, _ = import_kernel_with_report(SASS / f"thread_guards.{arch}.sass", function=function)
    return g, {x.test: x.fraction.text for x in g.guards.values() if x.test}


def _share(g, test, block):
    (name,) = {x.fraction.text for x in g.guards.values() if x.test == test}
    return launch_guard_values(g, {}, block, 32)[name]


@pytest.mark.parametrize("arch", ARCHS)
def test_a_stencils_halo_loads_run_in_the_warps_that_hold_the_halo_threads(arch):
    """``if (threadIdx.x < RADIUS)`` with RADIUS = 3: one warp of a 256-thread block, every
    warp of a 16x16 block (each row starts at tid.x = 0), one of two of a 64-thread one."""
    g, tests = _tests(arch, "halo_stencil")
    (test,) = tests
    assert test == "tid.x < 3"  # sm_100 and sm_120 compare tid.x <= 2: written one way
    assert _share(g, test, (256, 1, 1)) == 1 / 8
    assert _share(g, test, (16, 16, 1)) == 1
    assert _share(g, test, (64, 1, 1)) == 1 / 2
    loads = [x for x in g.guards.values() if x.test and any(
        g.instructions[m].opcode.startswith("LDG") for m in x.members)]
    assert len(loads) == 2  # the two halo loads


@pytest.mark.parametrize("arch", ARCHS)
def test_a_warps_partial_sum_runs_in_every_warp_and_the_last_sum_in_one(arch):
    """``lane == 0`` (lane = threadIdx.x % 32) holds in every warp; ``warp == 0`` (warp =
    threadIdx.x / 32) in one warp of a 1-D block. (Hopper's listing folds the lane-0 store
    into a predicated STS the import keeps unguarded: the test then covers the last sum.)"""
    g, tests = _tests(arch, "warp_sums")
    warp0 = [t for t in tests if t in ("tid.x/32 == 0", "tid.x < 32")]
    assert len(warp0) == 1
    for block, share in (((256, 1, 1), 1 / 8), ((1024, 1, 1), 1 / 32), ((32, 1, 1), 1)):
        assert _share(g, warp0[0], block) == share
    if "tid.x%32 == 0" in tests:
        for block in ((256, 1, 1), (16, 16, 1), (96, 1, 1)):
            assert _share(g, "tid.x%32 == 0", block) == 1
    else:
        assert arch == "sm_90"


@pytest.mark.parametrize("arch", ARCHS)
def test_a_tiles_left_edge_runs_in_every_warp_of_a_16_by_16_block(arch):
    """``if (threadIdx.x == 0)`` in a 16x16 block: every warp holds two row starts, so the
    edge load runs in all eight warps (it ran in one before: 1/warps_per_block)."""
    g, tests = _tests(arch, "tile_left_edge")
    assert "tid.x == 0" in tests
    assert _share(g, "tid.x == 0", (16, 16, 1)) == 1
    assert _share(g, "tid.x == 0", (256, 1, 1)) == 1 / 8
    assert _share(g, "tid.x == 0", (64, 4, 1)) == 1 / 2


@pytest.mark.parametrize("arch", ARCHS)
def test_a_right_halo_loaded_by_the_blocks_last_threads(arch):
    """``if (threadIdx.x >= blockDim.x - 3)``: the last warp of a 1-D block (the compare is
    against a register holding blockDim.x - 3, unsigned); ``threadIdx.x == blockDim.x - 1``
    (here its other side, the store of every other thread)."""
    g, tests = _tests(arch, "right_halo")
    assert set(tests) == {"tid.x >= ntid.x - 3 (unsigned)", "tid.x != ntid.x - 1"}
    halo = "tid.x >= ntid.x - 3 (unsigned)"
    assert _share(g, halo, (256, 1, 1)) == 1 / 8 and _share(g, halo, (64, 1, 1)) == 1 / 2
    assert _share(g, halo, (2, 1, 1)) == 0  # blockDim.x - 3 wraps: no thread passes
    assert _share(g, "tid.x != ntid.x - 1", (256, 1, 1)) == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_halo_loads_whose_thread_test_is_combined_with_a_bounds_check(arch):
    """``if (threadIdx.x < 3 && g >= 3)``: nvcc folds the two compares into one predicate
    (``P2 = (g < 3) OR (tid.x > 2)``, the load under ``!P2``); the bounds check is taken to
    hold where the load runs, so its share is the thread test's, 1/8 of a 256-thread block."""
    g, tests = _tests(arch, "halo_checked")
    assert set(tests) == {"tid.x < 3"}
    loads = [x for x in g.guards.values() if x.test and any(
        g.instructions[m].opcode.startswith("LDG") for m in x.members)]
    assert len(loads) == 2 and _share(g, "tid.x < 3", (256, 1, 1)) == 1 / 8


@pytest.mark.parametrize("arch", ARCHS)
def test_a_tiles_inner_threads_are_a_conjunction_of_two_thread_tests(arch):
    """``if (ty < 12 && tx < 12 && row < h && col < w)`` in a 16x16 block: the compute
    region runs in the 6 warps (of 8) that hold a row with ty < 12. (Blackwell's nvcc folds
    the two tests into ``max(tx, ty) < 12``, a ``VIMNMX``: the same test.)"""
    g, tests = _tests(arch, "tile_inner")
    assert set(tests) == {"tid.x < 12 and tid.y < 12"}
    assert _share(g, "tid.x < 12 and tid.y < 12", (16, 16, 1)) == 0.75
    assert _share(g, "tid.x < 12 and tid.y < 12", (32, 8, 1)) == 1


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("function", ["halo_stencil", "halo_checked"])
def test_a_guarded_halo_load_lends_no_sectors_to_the_main_load(arch, function):
    """The halo loads (``in[g - 3]``, run by one warp of eight) overlap the main load
    ``in[g]``'s sectors, but only in the warps that run them: the main load, which every
    warp runs, is charged its own sectors (no hit from them); the guarded loads group among
    themselves."""
    g, _ = import_kernel_with_report(SASS / f"thread_guards.{arch}.sass", function=function)
    in_guard = {m for x in g.guards.values() for m in x.members}
    main = [ins for iid, ins in g.instructions.items() if iid not in in_guard
            and ins.opcode.startswith("LDG")]
    assert main and all(ins.hit_ratio == 0 for ins in main)


def _store_after(lines):
    from sass_listings import listing_of
    from gpumodeler.core.kernel.sass.importer import import_from_listing
    from gpumodeler.core.kernel.sass.listing import parse_listing
    head = ["S2R R0, SR_TID.X", "S2R R1, SR_CTAID.X", "S2R R3, SR_TID.Y",
            "IMAD R2, R1, c[0x0][0x0], R0", "LDC.64 R4, c[0x0][0x210]"]
    return import_from_listing(parse_listing(listing_of(head + lines)))[0]


@pytest.mark.parametrize("lines,test", [
    # the running side a conjunction: the thread test's side
    (["ISETP.GT.U32.AND P0, PT, R0, 0x2, PT", "ISETP.LT.OR P2, PT, R2, 0x3, P0",
      "@!P2 STG.E desc[UR4][R4.64], R0", "EXIT"], "tid.x < 3"),
    (["ISETP.LT.U32.AND P0, PT, R0, 0x3, PT", "ISETP.GE.AND P2, PT, R2, 0x3, P0",
      "@P2 STG.E desc[UR4][R4.64], R0", "EXIT"], "tid.x < 3"),
    (["ISETP.LT.U32.AND P0, PT, R0, 0x3, PT", "ISETP.GE.AND P2, PT, R2, 0x3, !P0",
      "@P2 STG.E desc[UR4][R4.64], R0", "EXIT"], "tid.x >= 3"),
    # two thread tests: their conjunction; three parts, one a bounds check: the two tests
    (["ISETP.GT.U32.AND P0, PT, R0, 0x2, PT", "ISETP.NE.OR P2, PT, R3, RZ, P0",
      "@!P2 STG.E desc[UR4][R4.64], R0", "EXIT"], "tid.x < 3 and tid.y == 0"),
    (["ISETP.GT.U32.AND P0, PT, R0, 0xb, PT", "ISETP.GT.U32.OR P0, PT, R3, 0xb, P0",
      "ISETP.GE.OR P0, PT, R2, c[0x0][0x218], P0", "@!P0 STG.E desc[UR4][R4.64], R0",
      "EXIT"], "tid.x < 12 and tid.y < 12"),
    # a maximum below a number: both below it; a minimum at least a number: both at least
    (["IMNMX.U32 R6, R0, R3, !PT", "ISETP.GT.U32.AND P0, PT, R6, 0xb, PT", "@P0 EXIT",
      "STG.E desc[UR4][R4.64], R0", "EXIT"], "tid.x < 12 and tid.y < 12"),
    (["VIMNMX.U32 R6, PT, PT, R0, R3, PT", "ISETP.LT.U32.AND P0, PT, R6, 0x4, PT",
      "@P0 EXIT", "STG.E desc[UR4][R4.64], R0", "EXIT"], "tid.x >= 4 and tid.y >= 4"),
    # a maximum at least a number (either one): no test
    (["IMNMX.U32 R6, R0, R3, !PT", "ISETP.LT.U32.AND P0, PT, R6, 0xc, PT", "@P0 EXIT",
      "STG.E desc[UR4][R4.64], R0", "EXIT"], None),
    # a disjunction on the running side, a loaded value: no test
    (["ISETP.GT.U32.AND P0, PT, R0, 0x2, PT", "ISETP.LT.OR P2, PT, R2, 0x3, P0",
      "@P2 STG.E desc[UR4][R4.64], R0", "EXIT"], None),
    (["LDG.E R6, desc[UR4][R4.64]", "ISETP.GT.U32.AND P0, PT, R0, 0x2, PT",
      "ISETP.LT.OR P2, PT, R6, 0x3, P0", "@!P2 STG.E desc[UR4][R4.64], R0", "EXIT"], None),
])
def test_a_thread_test_combined_with_another_predicate(lines, test):
    g = _store_after(lines)
    assert {x.test for x in g.guards.values() if x.test} == ({test} if test else set())


def test_a_compare_of_a_value_carried_from_trip_to_trip_is_not_a_test():
    """A reduction's ``if (tid < s)`` with ``s >>= 1`` each trip: the address analysis sees
    the first trip's ``s`` (blockDim.x / 2); a share from it would hold for that trip only,
    so the guard is no thread test (as before: a bounds check of the thread index). The
    tree's entry check, ``blockDim.x >= 64`` (``s = blockDim.x / 2 >= 32``), is a test of the
    block alone."""
    for arch in ("sm_52", "sm_75", "sm_90", "sm_100"):
        g, _ = import_kernel_with_report(SASS / f"reduce.{arch}.sass")
        tests = {x.test for x in g.guards.values() if x.test}
        assert tests == {"ntid.x >= 64", "tid.x < 32", "tid.x == 0"}, arch
    from sass_listings import listing_of
    from gpumodeler.core.kernel.sass.importer import import_from_listing
    from gpumodeler.core.kernel.sass.listing import parse_listing
    lines = ["S2R R0, SR_TID.X", "MOV R4, 0x80", "LDC.64 R2, c[0x0][0x210]",
             "ISETP.GE.U32.AND P0, PT, R0, R4, PT", "@!P0 STG.E desc[UR4][R2.64], R4",
             "SHF.R.U32.HI R4, RZ, 0x1, R4", "ISETP.NE.AND P1, PT, R4, RZ, PT",
             "@P1 BRA 0x30", "EXIT"]
    g, _ = import_from_listing(parse_listing(listing_of(lines)))
    assert g.loops and not any(x.test for x in g.guards.values())
    inside = lines[:2] + ["ISETP.GE.U32.AND P0, PT, R0, 0x3, PT"] + lines[2:3] + \
        ["@!P0 STG.E desc[UR4][R2.64], R4", "SHF.R.U32.HI R4, RZ, 0x1, R4",
         "ISETP.NE.AND P1, PT, R4, RZ, PT", "@P1 BRA 0x30", "EXIT"]
    g, _ = import_from_listing(parse_listing(listing_of(inside)))
    assert g.loops and {x.test for x in g.guards.values()} == {"tid.x < 3"}  # invariant


def test_a_test_of_the_block_alone_runs_in_every_warp_or_in_none():
    """``if (blockDim.x >= 64)``: the same in every thread, so its code runs in every warp
    of a block of 64 or more threads along x, and in no warp of a smaller one (a 16×16
    block's blockDim.x is 16). The reduction's tree, entered so, does not run at 32 threads."""
    assert warp_share("ntid.x >= 64", (32, 1, 1), 32) == 0
    assert warp_share("ntid.x >= 64", (64, 1, 1), 32) == 1
    assert warp_share("ntid.x >= 64", (16, 16, 1), 32) == 0
    assert warp_share("ntid.x == 0", (256, 1, 1), 32) == 0
    assert thread_test(parse_address("ntid.x"), ">", 63) == "ntid.x >= 64"
    g, _ = import_kernel_with_report(SASS / "reduce.sm_90.sass")
    (tree,) = [x for x in g.guards.values() if x.test == "ntid.x >= 64"]
    name = tree.fraction.text
    assert launch_guard_values(g, {}, (32, 1, 1), 32)[name] == 0
    assert launch_guard_values(g, {}, (256, 1, 1), 32)[name] == 1
    c = count(g)
    small = c.evaluate(dict(g.variables, **launch_guard_values(g, {}, (32, 1, 1), 32)))
    big = c.evaluate(dict(g.variables, **launch_guard_values(g, {}, (256, 1, 1), 32)))
    assert small["smem_accesses"] < big["smem_accesses"]   # the tree's shared loads and stores


def test_the_launch_sets_the_share_unless_the_user_does_and_the_counts_follow():
    g, tests = _tests("sm_86", "halo_stencil")
    (name,) = tests.values()
    assert block_set_variables(g) == {name}
    assert g.variables[name] == 1 / 8  # a 256-thread block's, until a launch says
    assert launch_guard_values(g, {name: 0.5}, (16, 16, 1), 32) == {}
    c = count(g)
    at = {b: c.evaluate(dict(g.variables, **launch_guard_values(g, {}, b, 32)))["gmem_bytes"]
          for b in ((256, 1, 1), (64, 1, 1), (16, 16, 1))}
    assert at[(256, 1, 1)] < at[(64, 1, 1)] < at[(16, 16, 1)]


def test_the_kernel_format_keeps_a_test_and_refuses_a_bad_one():
    g, _ = _tests("sm_86", "tile_left_edge")
    data = to_dict(g)
    (guard,) = [x for x in data["guards"] if x.get("test")]
    assert guard["test"] == "tid.x == 0"
    assert from_dict(data) == g
    guard["test"] = "blockIdx.x == 0"
    with pytest.raises(GraphError, match="test must be a thread test"):
        from_dict(data)
    guard["test"], guard["fraction"] = "tid.x == 0", "guard1 / 2"
    with pytest.raises(GraphError, match="one variable"):
        from_dict(data)
    guard.pop("test")  # without a test: a plain guard, as in older files
    assert not from_dict(data).guards[guard["id"]].test


def test_a_project_launch_and_its_learned_row_take_the_share_of_the_launchs_block(catalog):
    """A project launch of the halo stencil: the launch's prediction and the learning row
    built from it (core.learn.launch) take guard1 as the launch's block gives it (64 threads:
    1/2), as predict does; the kernel's default (1/8) is not used."""
    from gpumodeler.core.commands import AddItem, AddKernel, UndoStack
    from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
    from gpumodeler.core.learn.launch import project_launch_row
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph
    from gpumodeler.core.pipeline import evaluate_launch
    from gpumodeler.core.project import LaunchConfig, PlacedDevice, Project
    g, _ = _tests("sm_86", "halo_stencil")
    g.latency_table = "kepler-volkov"  # a built-in table: any latencies will do here
    gpu = catalog.get("GeForce RTX 3080").to_gpu_spec()
    p = Project("halo")
    s = UndoStack(p)
    s.push(AddItem("devices", PlacedDevice("gpu1", "gpu", "GPU", x=0, y=0)))
    s.push(AddKernel("k1", g))
    s.push(AddItem("launches", LaunchConfig("l1", gpu="gpu1", kernel="k1", block_size=64,
                                            grid_size=4096, registers=16)))
    result = evaluate_launch(p, "l1", {"GPU": gpu}.__getitem__, None)
    seen = graph_for_launch(g, {}, block_size=64, warp_size=32, gpu=gpu, grid_size=4096,
                            occupancy=result.occupancy_warps_per_sm)
    assert seen.values["guard1"] == 0.5
    at = {share: kernel_inputs_from_graph(seen.graph, dict(g.variables, guard1=share),
                                          table=g.latency_table).gmem_bytes
          for share in (0.125, 0.5)}
    assert at[0.5] > at[0.125]
    assert result.kernel_inputs.gmem_bytes == pytest.approx(at[0.5])
    row = project_launch_row(p, "l1", result, {})
    assert row.quantities["gmem_bytes"] == pytest.approx(at[0.5])


def _halo(arch, function):
    g, _ = import_kernel_with_report(SASS / f"halo_tiles.{arch}.sass", function=function)
    return g, {x.test: x.fraction.text for x in g.guards.values() if x.test}


@pytest.mark.parametrize("arch", ARCHS)
def test_a_tiles_inner_threads_less_its_halo_are_one_unsigned_range(arch):
    """The textbook's tiled convolution: ``tileCol = threadIdx.x - 2``, ``tileCol >= 0 &&
    tileCol < 28`` (and the same in y), which nvcc writes as ``tileCol <u 28``, with the
    bounds check of the output element: the threads 2 … 29 of each axis, the 28 warps (of
    32) of a 32×32 block that hold such a row; before, a bounds check run by every warp."""
    g, tests = _halo(arch, "tiled_convolution")
    test = "tid.x < 30 and tid.x >= 2 and tid.y < 30 and tid.y >= 2"
    assert set(tests) == {test}
    assert _share(g, test, (32, 32, 1)) == 28 / 32
    assert _share(g, test, (32, 32, 1)) == pytest.approx(
        _by_thread_conjunction(test, (32, 32, 1)))


@pytest.mark.parametrize("arch", ARCHS)
def test_a_1d_tiles_inner_threads(arch):
    """``t = threadIdx.x - 2; if (t >= 0 && t < 252 && i < n)`` in a 256-thread block: every
    warp holds such a thread; in a block of 8 threads (a launch of the same code) the
    one warp does too, and a 2-thread block has none."""
    g, tests = _halo(arch, "tiled_stencil_1d")
    test = "tid.x < 254 and tid.x >= 2"
    assert set(tests) == {test}
    assert _share(g, test, (256, 1, 1)) == 1
    assert _share(g, test, (8, 1, 1)) == 1
    assert _share(g, test, (2, 1, 1)) == 0


def _by_thread_conjunction(text: str, block: tuple) -> float:
    """The share of warps with a thread passing every part of ``text``, thread by thread."""
    bx, by, bz = block
    hit = set()
    for t in range(bx * by * bz):
        known = {"tid.x": t % bx, "tid.y": (t // bx) % by, "tid.z": t // (bx * by)}
        if all(_OPS[op](_worked_out(v, known), int(n))
               for v, op, n in (p.split(" ") for p in text.split(" and "))):
            hit.add(t // 32)
    return len(hit) / -(-(bx * by * bz) // 32)


@pytest.mark.parametrize("arch", ["sm_52", "sm_75", "sm_86", "sm_90", "sm_120"])
def test_a_test_of_tid_y_defaults_to_its_share_in_a_16x16_block(arch):
    """The tiled convolution's inner threads (tid.x and tid.y from 2 to 29): no thread of
    the 256×1×1 default block passes a test of tid.y, so the graph's default (what the
    kernel editor shows before a launch) is the share in a 16×16 block, 7 of 8 warps; a
    launch's block still sets it (28 of 32 warps at 32×32)."""
    from gpumodeler.core.kernel.graph_items import default_block
    from gpumodeler.core.kernel.sass.thread_tests import warp_share
    graph, _ = import_kernel_with_report(str(SASS / f"halo_tiles.{arch}.sass"),
                                         "tiled_convolution", None)
    (g,) = [g for g in graph.guards.values() if g.test]
    assert "tid.y" in g.test and default_block(graph) == (16, 16, 1)
    assert graph.variables[g.fraction.text] == warp_share(g.test, (16, 16, 1)) == 0.875
    assert launch_guard_values(graph, {}, (32, 32, 1), 32)[g.fraction.text] == 28 / 32


def test_tests_of_x_alone_keep_the_256_thread_default_block():
    from gpumodeler.core.kernel.graph_items import default_block
    graph, _ = import_kernel_with_report(str(SASS / "thread_guards.sm_86.sass"),
                                         "warp_sums", None)
    assert [g.test for g in graph.guards.values() if g.test]
    assert default_block(graph) == (256, 1, 1)
