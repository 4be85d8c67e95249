"""How often guarded code runs (core.kernel.sass.guards): derived fractions for guards on the
thread index, variables guard1, guard2, ... for the others, applied to the per-warp counts."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.sass.guards import DEFAULT_FRACTION, DEFAULT_WARPS_PER_BLOCK
from gpumodeler.core.kernel.sass.importer import import_from_listing, import_kernel_with_report
from gpumodeler.core.kernel.sass.listing import parse_listing
from gpumodeler.core.kernel.warp_counts import count

from sass_listings import listing_of

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def _graph(lines):
    return import_from_listing(parse_listing(listing_of(lines)))[0]


def _one_request_bytes():
    """The bytes one unguarded 4-byte store of a warp to a parameter's address moves (the
    address analysis prices it: no thread-index term, so one sector)."""
    g = _graph(["LDC.64 R2, c[0x0][0x210]", "LDC R5, c[0x0][0x218]",
                "STG.E desc[UR4][R2.64], R5", "EXIT"])
    return count(g).evaluate(g.variables)["gmem_bytes"]


def _store_under(test):
    """A kernel that stores a value, ``test`` deciding (P0) whether the store runs."""
    return _graph(["S2R R0, SR_TID.X", "LDC.64 R2, c[0x0][0x210]", "LDC R5, c[0x0][0x218]",
                   test, "@P0 EXIT", "STG.E desc[UR4][R2.64], R5", "EXIT"])


@pytest.mark.parametrize("warps", [1, 4, 32])
def test_a_store_under_thread_index_zero_counts_once_per_block(warps):
    """if (threadIdx.x == 0) out[0] = v: in a 1-D block the store runs in one warp of the
    block, the launch's block setting the guard's variable from the thread test."""
    from gpumodeler.core.kernel.graph_items import launch_guard_values
    g = _store_under("ISETP.NE.AND P0, PT, R0, RZ, PT")
    (guard,) = g.guards.values()
    assert guard.kind == "region" and guard.fraction.text == "guard1"
    assert guard.test == "tid.x == 0"
    assert g.variables["guard1"] == pytest.approx(1 / DEFAULT_WARPS_PER_BLOCK)
    vals = launch_guard_values(g, {}, (32 * warps,), 32)
    assert vals == {"guard1": pytest.approx(1 / warps)}
    c = count(g).evaluate(dict(g.variables, **vals))
    one = _one_request_bytes()
    assert one > 0 and c["gmem_bytes"] == pytest.approx(one / warps)  # one store of a warp
    assert c["instructions"] == pytest.approx(5 + 2 / warps)  # the STG and the last EXIT


@pytest.mark.parametrize("block,share", [((16, 16, 1), 1.0), ((32, 8, 1), 1.0),
                                         ((64, 4, 1), 0.5), ((256, 1, 1), 0.125),
                                         ((8, 8, 4), 1.0)])
def test_thread_index_zero_runs_in_every_warp_that_holds_a_row_start(block, share):
    """In a 16x16 block every warp holds two threads with threadIdx.x == 0 (rows of 16):
    the store runs in all eight warps, not one; in 64x4 blocks in every other warp."""
    from gpumodeler.core.kernel.graph_items import launch_guard_values
    g = _store_under("ISETP.NE.AND P0, PT, R0, RZ, PT")
    assert launch_guard_values(g, {}, block, 32) == {"guard1": pytest.approx(share)}
    assert launch_guard_values(g, {"guard1": 0.3}, block, 32) == {}  # the user's value stands


def test_the_other_side_of_the_thread_index_test_runs_in_every_warp():
    """Where tid.x == 0 exits, the rest runs in every warp of a block that has other
    threads along x, and in none of a (1, 32) block, whose threads all have tid.x == 0."""
    from gpumodeler.core.kernel.graph_items import launch_guard_values
    g = _store_under("ISETP.EQ.AND P0, PT, R0, RZ, PT")  # exits where tid == 0
    (guard,) = g.guards.values()
    assert guard.test == "tid.x != 0" and g.variables["guard1"] == 1
    assert count(g).evaluate(g.variables)["gmem_bytes"] == _one_request_bytes()
    assert launch_guard_values(g, {}, (16, 16), 32) == {"guard1": 1.0}
    assert launch_guard_values(g, {}, (1, 32), 32) == {"guard1": 0.0}


def test_a_bounds_check_runs_for_every_thread_of_a_full_block():
    g = _graph(["S2R R0, SR_TID.X", "S2R R3, SR_CTAID.X", "IMAD R0, R3, c[0x0][0x0], R0",
                "ISETP.GE.AND P0, PT, R0, c[0x0][0x218], PT", "@P0 EXIT",
                "LDC.64 R2, c[0x0][0x210]", "STG.E desc[UR4][R2.64], R0", "EXIT"])
    assert g.guards == {} and "guard1" not in g.variables


def test_a_load_predicated_on_a_parameter_is_counted_with_guard1():
    """@P0 LDG with P0 from a kernel parameter: counted times guard1 (default 1); with
    guard1 = 0 its bytes drop out (the warp still issues it: a predicate guard)."""
    g = _graph(["LDC R4, c[0x0][0x21c]", "LDC.64 R2, c[0x0][0x210]",
                "ISETP.NE.AND P0, PT, R4, RZ, PT", "@P0 LDG.E R5, desc[UR4][R2.64]",
                "STG.E desc[UR4][R2.64+0x80], R5", "EXIT"])
    (guard,) = g.guards.values()
    assert guard.kind == "predicate" and guard.fraction.text == "guard1"
    assert g.variables["guard1"] == DEFAULT_FRACTION == 1
    counts = count(g)
    assert "guard1" in counts.formula("gmem_bytes")
    full = counts.evaluate(g.variables)
    off = counts.evaluate(dict(g.variables, guard1=0))
    one = _one_request_bytes()
    assert full["gmem_bytes"] == 2 * one and off["gmem_bytes"] == one
    assert off["instructions"] == full["instructions"] == 6


def test_code_after_an_exit_on_a_parameter_and_a_skipping_branch():
    g = _graph(["LDC R4, c[0x0][0x21c]", "ISETP.NE.AND P0, PT, R4, RZ, PT", "@P0 BRA 0x40",
                "FADD R6, R4, R4", "@P0 EXIT", "FADD R7, R4, R4", "EXIT"])
    kinds = sorted((x.kind, x.fraction.text, len(x.members)) for x in g.guards.values())
    # the FADD the branch skips runs when !P0, the code after @P0 EXIT too: alike, one variable
    assert kinds == [("region", "guard1", 1), ("region", "guard1", 2)]
    c = count(g)
    assert c.evaluate(dict(g.variables, guard1=0))["instructions"] == 4  # LDC ISETP BRA EXIT
    assert c.evaluate(dict(g.variables, guard1=0.5))["instructions"] == pytest.approx(5.5)


def test_reduce_atomic_counts_once_per_block_and_round_trips():
    from gpumodeler.core.kernel.graph_items import launch_guard_values
    g, _ = import_kernel_with_report(SASS / "reduce.sm_90.sass")
    tests = sorted((x.test, x.fraction.text) for x in g.guards.values() if x.test)
    assert tests == [("ntid.x >= 64", "guard1"), ("tid.x < 32", "guard3"),
                     ("tid.x == 0", "guard4")]   # the tree's entry check: blockDim.x >= 64
    assert set(g.trip_tests) == {"guard2"}  # the tree's tid < s (test_sass_trip_counts.py)
    (once,) = [x for x in g.guards.values() if x.test == "tid.x == 0"]
    red = [m for m in once.members if g.instructions[m].opcode.startswith("RED")]
    assert red
    back = from_dict(to_dict(g))
    assert back == g and back.guards == g.guards and back.guards[once.id].test == "tid.x == 0"
    c8 = count(g).evaluate(dict(g.variables, **launch_guard_values(g, {}, 256, 32)))["gmem_bytes"]
    c1 = count(g).evaluate(dict(g.variables, **launch_guard_values(g, {}, 32, 32)))["gmem_bytes"]
    assert c1 > c8


def test_a_launchs_block_sets_warps_per_block_unless_given():
    """One rule for predict and project launches: ceil(threads / warp size), only where the
    graph has the variable and the user did not set it. (A zero test of a value of the
    thread index the address analysis does not follow, a population count, keeps the
    once-per-block rule.)"""
    from gpumodeler.core.kernel.graph import KernelGraph
    from gpumodeler.core.kernel.graph_items import launch_guard_values
    g = _store_under_value("POPC R0, R0", "ISETP.NE.AND P0, PT, R0, RZ, PT")
    (guard,) = g.guards.values()
    assert guard.fraction.text.replace(" ", "") == "1/warps_per_block" and not guard.test
    assert launch_guard_values(g, {}, 256, 32) == {"warps_per_block": 8}
    assert launch_guard_values(g, {}, 100, 32) == {"warps_per_block": 4}
    assert launch_guard_values(g, {"warps_per_block": 2}, 256, 32) == {}
    assert launch_guard_values(KernelGraph(name="k"), {}, 256, 32) == {}


def _store_under_value(compute, test):
    """A store ``test`` decides (P0), on a value ``compute`` makes of the thread index R0."""
    return _graph(["S2R R0, SR_TID.X", compute, "LDC.64 R2, c[0x0][0x210]",
                   "LDC R5, c[0x0][0x218]", test, "@P0 EXIT", "STG.E desc[UR4][R2.64], R5",
                   "EXIT"])


@pytest.mark.parametrize("test,runs", [
    ("ISETP.LT.U32.AND P0, PT, R0, 0x4dc, PT", "never"),  # exits where tid.x < 1244: all
    ("ISETP.GE.U32.AND P0, PT, R0, 0x4dc, PT", "always"),  # exits where tid.x >= 1244: none
    ("ISETP.GT.AND P0, PT, R0, 0x3ff, PT", "always"),  # exits where tid.x > 1023: none
    ("ISETP.GE.AND P0, PT, R0, 0x20, PT", "variable"),  # stores where tid.x < 32: shape decides
])
def test_the_thread_index_against_a_number(test, runs):
    """``if (threadIdx.x > 1243)`` never runs in a block of at most 1024 threads: its code
    has fraction 0 and puts no latency on the critical path; a side every index takes needs
    no guard; ``threadIdx.x < 32`` is a variable."""
    from gpumodeler.core.kernel.latency_bound import analyze, never_run
    from test_sass_build import TABLE
    g = _store_under(test)
    c = count(g).evaluate(g.variables)
    if runs == "never":
        (guard,) = g.guards.values()
        assert guard.fraction.text == "0" and "never runs" in guard.name
        assert c["gmem_bytes"] == 0 and never_run(g) == guard.members
        bound = float(analyze(g, TABLE).evaluate({}))
        unguarded = g.copy()
        unguarded.guards.clear()
        assert bound < float(analyze(unguarded, TABLE).evaluate({}))
    elif runs == "always":
        assert g.guards == {} and c["gmem_bytes"] == _one_request_bytes()
    else:  # the block's shape decides: a thread test, 1/8 of a 256-thread block's warps
        (guard,) = g.guards.values()
        assert guard.fraction.text == "guard1" and guard.test == "tid.x < 32"
        assert g.variables["guard1"] == pytest.approx(1 / 8)
    assert from_dict(to_dict(g)) == g
