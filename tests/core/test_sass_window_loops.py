"""Loops a run-time radius or the block decides, as stencils, reductions and scans write
them (resources/kernels/src/window_loops.cu, every architecture's listing): nvcc's unrolled
window with its remainder loop first and its last copies as straight code, the remainder
loop counted down to -1, and strides doubled each trip (docs/sass-import.md)."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph_items import launch_guard_values
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.sass.parameters import parameter_base, parameter_variable
from gpumodeler.core.kernel.warp_counts import count

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
#: every architecture of the fixtures, and Volta (whose listing writes max(0, 2r) with SEL)
ARCHS = ("sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90",
         "sm_100", "sm_120")
#: where the count of the window is read off the listing (Blackwell's unrolled window counts
#: a register up to zero and is left to the user)
DERIVED = ARCHS[:9]
RADII = (1, 2, 3, 4, 5, 6, 7, 8, 13, 40)


def window(arch: str, function: str):
    graph, report = import_kernel_with_report(str(SASS / f"window_loops.{arch}.sass"),
                                              function, None)
    base = parameter_base(int(arch[3:]))
    assert base is not None
    return graph, report, parameter_variable(base + 0x14)  # r, after two pointers and n


def loads_per_thread(graph, values: dict) -> float:
    """The global accesses a warp makes with ``values`` set, less the one store."""
    return count(graph).evaluate(dict(graph.variables, **values))["gmem_accesses"] - 1


@pytest.mark.parametrize("function", ["centred_window", "window_span"])
@pytest.mark.parametrize("arch", DERIVED)
def test_a_window_of_a_run_time_radius_runs_2r_plus_1_times(arch, function):
    """for (j = -r; j <= r; j++) and for (j = 0; j < 2r + 1; j++): the group's variable is
    2r + 1, and the unrolled loops, the copies left as straight code and the remainder loop
    together load 2r + 1 words a thread."""
    graph, report, r = window(arch, function)
    assert {k: v for k, v in graph.block_trips.items() if k.startswith("loop")} == \
        {"loop1": f"2 * {r} + 1"}
    assert f"loop1 = 2 * {r} + 1, {r} the kernel parameter" in report.summary()
    for radius in RADII:
        got = launch_guard_values(graph, {r: radius}, (256, 1, 1), 32)
        assert got["loop1"] == 2 * radius + 1
        assert loads_per_thread(graph, got) == 2 * radius + 1, radius


@pytest.mark.parametrize("arch", ARCHS)
def test_the_remainder_loop_first_leaves_the_last_copies_to_straight_code(arch):
    """centred_window: the remainder loop runs n mod 4 iterations before the loop of 16;
    blocks of 8 and 4 copies after it run once or not, each under a check the import gives
    how often it runs (Blackwell's listing as well, where the count is the user's)."""
    graph, _, _ = window(arch, "centred_window")
    for n in range(0, 70):
        assert loads_per_thread(graph, {"loop1": n}) == n, n
    if arch not in ("sm_100", "sm_120"):
        first = min(graph.loops.values(), key=lambda lp: min(lp.members))
        assert first.iterations.text == "loop1 - 4 * floor(loop1 / 4)"
        straight = sorted(g.fraction.text for g in graph.guards.values()
                          if "left as straight code" in g.name)
        assert straight == ["floor(loop1 / 4) - 2 * floor(loop1 / 8)",
                            "floor(loop1 / 8) - 2 * floor(loop1 / 16)"]


@pytest.mark.parametrize("function", ["interleaved_reduce", "kogge_stone_scan"])
@pytest.mark.parametrize("arch", ARCHS)
def test_a_stride_doubled_up_to_the_block_runs_ceil_log2_trips(arch, function):
    """for (s = 1; s < blockDim.x; s *= 2): a shift left (SHF.L.U32, USHF.L.U32, Maxwell's
    IADD R, R, R) in place or through a copy; at least one trip, as every loop."""
    graph, report, _ = window(arch, function)
    assert graph.block_trips == {"loop1": "max(1, ceil(log2(block_x)))"}
    for block_x in range(1, 1025):
        trips, s = 0, 1
        while s < block_x:
            trips, s = trips + 1, s * 2
        assert launch_guard_values(graph, {}, (block_x, 1, 1), 32)["loop1"] == max(1, trips)


@pytest.mark.parametrize("arch", ARCHS)
def test_a_scans_test_of_the_doubling_stride_runs_its_share_of_the_warps(arch):
    """kogge_stone_scan's if (threadIdx.x >= stride): a trip test whose bound doubles each
    trip (shift -1); each launch sets it to the mean over the trips of the share of the
    block's warps with a thread passing it, counted here warp by warp."""
    graph, report, _ = window(arch, "kogge_stone_scan")
    ((name, spec),) = graph.trip_tests.items()
    assert spec == {"value": "tid.x", "op": ">=", "first": "1", "shift": -1, "trips": "loop1"}
    assert "tid.x >= s, s = 1 doubled each trip of loop1" in report.summary()
    for block_x in (64, 100, 256, 512, 1000, 1024):
        warps = -(-block_x // 32)
        shares, s = [], 1
        while s < block_x:
            shares.append(sum(1 for w in range(warps)
                              if min(32 * w + 31, block_x - 1) >= s) / warps)
            s *= 2
        got = launch_guard_values(graph, {}, (block_x, 1, 1), 32)
        assert got[name] == pytest.approx(sum(shares) / len(shares)), block_x
