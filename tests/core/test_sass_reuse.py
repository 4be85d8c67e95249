"""Reuse across the blocks of a launch and the L2 fit (core.kernel.sass.reuse), on real
listings: the tiled matrix multiply (resources/kernels/src/matmul_tiled.cu, 16×16 tiles) and
the stencils and copy of access_patterns.cu."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.reuse import reuse_graph
from gpumodeler.core.kernel.warp_counts import count

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
L2 = 40 * 2 ** 20  # an A100's L2
SMS = 108
TILE = 16


def matmul_dram(arch, n, l2=L2, blocks_per_sm=8):
    """(DRAM bytes of the loads over the whole grid, their unique bytes 2·n²·4, the loads'
    bytes without any reuse, the report) for an n×n multiply in 16×16 blocks."""
    g = import_kernel(SASS / f"matmul_tiled.{arch}.sass")
    values = dict(g.variables, loop1=n // TILE)
    grid = (n // TILE, n // TILE)
    shaped, report = reuse_graph(g, grid_size=grid, warps_per_block=8, block=(TILE, TILE),
                                 blocks_per_sm=blocks_per_sm, sms=SMS, l2_bytes=l2, values=values)
    warps = grid[0] * grid[1] * 8
    store = n * n * 4  # C, written once
    dram = count(shaped).evaluate(values)["gmem_bytes"] * warps - store
    plain = count(g).evaluate(values)["gmem_bytes"] * warps - store
    return dram, 2 * n * n * 4, plain, report


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
@pytest.mark.parametrize("n", [512, 1024, 2048])
def test_a_tiled_matmul_that_fits_in_l2_reads_its_unique_bytes_from_dram(arch, n):
    dram, unique, plain, report = matmul_dram(arch, n)
    assert report.wave_working_set <= L2 and report.trip_fit == report.wave_fit == 1
    assert plain == pytest.approx(unique * n / TILE)  # each tile read by n/16 blocks
    assert dram == pytest.approx(unique, rel=0.01)
    sharing = sorted(ld.sharing for ld in report.loads)
    assert sharing == [n / TILE, n / TILE]  # A by a grid row, B by a grid column


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_a_tiled_matmul_reads_more_from_dram_once_a_wave_outgrows_the_l2(arch):
    small, unique_small, _, _ = matmul_dram(arch, 2048)
    big, unique_big, plain_big, report = matmul_dram(arch, 8192)
    assert report.wave_working_set > L2 and report.wave_fit < 1
    assert small / unique_small < 1.01 < big / unique_big
    assert big < plain_big  # what a wave shares still comes from L2
    # the same multiply on a GPU with a larger L2 reads less
    bigger_l2, _, _, _ = matmul_dram(arch, 8192, l2=4 * report.wave_working_set)
    assert bigger_l2 == pytest.approx(unique_big, rel=0.01)
    assert any("falls back to DRAM" in n for n in report.notes())


@pytest.mark.parametrize("points", [3, 5])
def test_a_stencil_whose_footprint_fits_moves_about_a_copys_dram_bytes(points):
    stencil = import_kernel(SASS / "access_patterns.sm_80.sass", f"stencil{points}")
    copy = import_kernel(SASS / "access_patterns.sm_80.sass", "copy_rows")
    launch = dict(grid_size=1 << 16, warps_per_block=8, blocks_per_sm=8, sms=SMS)
    s, report = reuse_graph(stencil, l2_bytes=L2, **launch)
    c, _ = reuse_graph(copy, l2_bytes=L2, **launch)
    s_bytes, c_bytes = (count(x).evaluate(dict(x.variables))["gmem_bytes"] for x in (s, c))
    assert report.trip_fit == 1 and c_bytes <= s_bytes <= 1.15 * c_bytes
    # an L2 far smaller than a wave's footprint keeps little of the neighbours' reuse
    tiny, tiny_report = reuse_graph(stencil, l2_bytes=report.trip_working_set / 10, **launch)
    t_bytes = count(tiny).evaluate(dict(tiny.variables))["gmem_bytes"]
    assert tiny_report.trip_fit == pytest.approx(0.1)
    assert t_bytes > 1.15 * c_bytes


def test_without_the_l2_size_the_imported_hit_ratios_stand():
    g = import_kernel(SASS / "matmul_tiled.sm_80.sass")
    out, report = reuse_graph(g, grid_size=(64, 64), warps_per_block=8, blocks_per_sm=8,
                              sms=SMS, l2_bytes=None)
    assert out is g and "L2 size unknown" in report.notes()[0]


def test_loads_of_a_copy_are_read_by_one_block_each():
    g = import_kernel(SASS / "access_patterns.sm_80.sass", "copy_rows")
    out, report = reuse_graph(g, grid_size=4096, warps_per_block=8, blocks_per_sm=8, sms=SMS,
                              l2_bytes=L2)
    assert out is g and [ld.sharing for ld in report.loads] == [1.0]


def test_a_load_in_a_loop_that_runs_no_trip_adds_nothing_to_the_working_sets():
    """MMGC for sm_52 (resources/validation/kernels/amaris): nvcc unrolls its k-loop by 4,
    ptxas that loop by 4 again; loop3 is the n % 4 tail (loop1 = n, the source loop's trip
    count, sets all three loops), one A and one B load per trip. With
    n a multiple of 16 the tail and loop2 (the 4-step remainder) run no trip: their loads
    read nothing, so the working sets are those of the other loads alone."""
    g = import_kernel(Path(__file__).resolve().parents[2] / "resources" / "validation"
                      / "kernels" / "amaris" / "mmgc.sm_52.sass")
    launch = dict(grid_size=(128, 128), warps_per_block=8, blocks_per_sm=8, sms=16,
                  l2_bytes=2 * 2 ** 20)
    reports = {}
    for tail in (0, 1, 2):
        values = dict(g.variables, loop1=2048 + tail)  # the source trip count n
        reports[tail] = reuse_graph(g, values=values, **launch)[1]
    tail_loads = [nid for nid in g.instructions if g.instructions[nid].space == "global"
                  and g.instructions[nid].is_load
                  and any(lp.id == "loop3" for lp in g.loops_containing(nid))]
    assert len(tail_loads) == 2
    assert reports[0].trip_working_set < reports[1].trip_working_set
    # one trip or two: the tail's per-trip footprint is the same but for what its second
    # trip re-reads of the first's sectors (the reuse across trips), its whole-wave one doubles
    assert reports[1].trip_working_set == pytest.approx(reports[2].trip_working_set, rel=1e-4)
    per_tail_trip = reports[1].wave_working_set - reports[0].wave_working_set
    assert (reports[2].wave_working_set - reports[0].wave_working_set
            == pytest.approx(2 * per_tail_trip, rel=1e-3))
    assert reports[1].trip_working_set - reports[0].trip_working_set == pytest.approx(per_tail_trip)
