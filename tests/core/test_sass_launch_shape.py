"""A launch's block shape and the imported memory accesses (core.kernel.sass.launch_shape):
a block narrower than a warp puts several rows of threadIdx.y in one warp
(resources/kernels/src/block2d.cu, matmul_tiled.cu, access_patterns.cu)."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.addresses import Poly
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_shape import (
    UNKNOWN_COEFFICIENT, lane_offsets, needs_shape, parse_address, shaped_graph)
from gpumodeler.core.kernel.warp_counts import access_cost

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def sectors_by_hand(row_bytes_apart, dx, lanes_per_row_stride, width=4):
    """32-byte sectors of one warp whose lane (x, y) reads at y·row + x·stride (rows far
    apart), counted directly: the reference the module must agree with."""
    rows = 32 // dx if dx < 32 else 1
    seen = set()
    for y in range(rows):
        for x in range(min(dx, 32)):
            start = y * row_bytes_apart + x * lanes_per_row_stride
            seen.update(range(start // 32, (start + width - 1) // 32 + 1))
    return len(seen)


def global_costs(graph):
    return {nid: access_cost(ins)["sectors_per_request"] for nid, ins in graph.instructions.items()
            if ins.space == "global"}


@pytest.mark.parametrize("text", [
    "c[0x0][0x168] + 4·tid.x + 4·c[0x0][0x170]·tid.y + 4·ctaid.x·ntid.x",
    "0x400 + 4·tid.x - 64·tid.y", "12 - 4·tid.x", "16 + 64·tid.y"])
def test_address_text_reads_back_to_the_polynomial_it_was_written_from(text):
    poly = parse_address(text + "; assumed something")
    assert poly is not None and poly.text() == text


@pytest.mark.parametrize("text", ["", "not affine (data-dependent (indirect)): data@0090",
                                  "not followed: arithmetic not followed"])
def test_addresses_the_import_did_not_follow_are_left_alone(text):
    assert parse_address(text) is None


def test_lanes_are_numbered_x_fastest_and_a_parameter_is_a_far_row():
    poly = Poly({("tid.x",): 4, ("c[0x0][0x170]", "tid.y"): 4})
    lanes = lane_offsets(poly, (16, 16, 1), 0)
    assert lanes[:16] == [4 * x for x in range(16)]
    assert lanes[16:] == [4 * UNKNOWN_COEFFICIENT + 4 * x for x in range(16)]
    assert lane_offsets(poly, (16, 16, 1), 1)[0] == 2 * 4 * UNKNOWN_COEFFICIENT


def test_a_block_x_a_multiple_of_the_warp_changes_nothing():
    g = import_kernel(SASS / "block2d.sm_80.sass", "copy2d_cols")
    for block in (256, (32, 8), (64, 4, 2)):
        assert not needs_shape(block)
        shaped, notes = shaped_graph(g, block)
        assert shaped is g and notes == []


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
@pytest.mark.parametrize("dx", [16, 8, 4])
def test_column_reads_of_a_narrow_block_touch_a_sector_per_row_not_per_lane(arch, dx):
    """in[x·n + y]: 1-D, a sector per lane (32); with a block dx wide a warp holds 32/dx
    rows y, y+1... of dx columns: lanes (x, y) and (x, y+1) share a sector."""
    g = import_kernel(SASS / f"block2d.{arch}.sass", "copy2d_cols")
    load = next(nid for nid, ins in g.instructions.items() if ins.space == "global" and ins.is_load)
    before = global_costs(g)[load]
    shaped, notes = shaped_graph(g, (dx, 256 // dx))
    after = global_costs(shaped)[load]
    # rows y are 4 bytes apart, columns x a row of n floats (far) apart
    expected = sectors_by_hand(4, dx, 4 * UNKNOWN_COEFFICIENT)
    assert before == 32 and after == expected and after < before
    assert any(load in n and "sectors per request" in n for n in notes)
    assert g.instructions[load].stride == 32.0   # the imported graph is not changed


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
def test_row_reads_of_a_block_narrower_than_a_sector_touch_more_sectors(arch):
    """in[y·n + x] with 4-wide rows: 8 rows of 16 bytes, each in its own sector."""
    g = import_kernel(SASS / f"block2d.{arch}.sass", "copy2d_rows")
    shaped, _ = shaped_graph(g, (4, 64))
    for nid, sectors in global_costs(shaped).items():
        assert global_costs(g)[nid] == 4
        assert sectors == sectors_by_hand(4 * UNKNOWN_COEFFICIENT, 4, 4) == 8


def test_a_stride_set_by_hand_is_kept():
    g = import_kernel(SASS / "block2d.sm_80.sass", "copy2d_cols")
    load = next(nid for nid, ins in g.instructions.items() if ins.space == "global" and ins.is_load)
    g.update_instruction(load, stride=2.0)
    shaped, notes = shaped_graph(g, (16, 16))
    assert shaped.instructions[load].stride == 2.0 and not any(load in n for n in notes)


def test_shared_tile_rows_of_a_narrow_block_fall_in_one_bank():
    """tile[ty][tx] of a 32-float-wide tile: with 16×16 blocks lanes (x, 0) and (x, 1) are
    a 128-byte row apart, the same bank: 2-way; tile[tx][ty] 32-way becomes 16-way."""
    g = import_kernel(SASS / "access_patterns.sm_80.sass", "transpose_shared")
    shaped, _ = shaped_graph(g, (16, 16))
    degrees = {ins.bank_conflict_degree for ins in shaped.instructions.values()
               if ins.space == "shared"}
    before = {ins.bank_conflict_degree for ins in g.instructions.values() if ins.space == "shared"}
    assert before == {1, 32} and degrees == {2, 16}
