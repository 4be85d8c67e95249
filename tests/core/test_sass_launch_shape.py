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


# -- hand-worked 16×16 warps of Amarís' pairs (resources/validation/kernels/amaris) ---------

AMARIS = Path(__file__).resolve().parents[2] / "resources" / "validation" / "kernels" / "amaris"
N = 2048  # any row length of 8 floats or more gives the same sectors


def warp_sectors_by_hand(address, warp, dx=16, dy=16):
    """The 32-byte sectors warp ``warp`` of a dx×dy block touches, ``address(x, y)`` the byte
    address of lane (x, y) (threads numbered x fastest, 32 per warp), 4-byte words."""
    seen = set()
    for t in range(32 * warp, 32 * warp + 32):
        x, y = t % dx, t // dx
        assert y < dy
        start = address(x, y)
        seen.update(range(start // 32, (start + 3) // 32 + 1))
    return len(seen)


def global_accesses(graph):
    return {nid: ins for nid, ins in graph.instructions.items() if ins.space == "global"}


@pytest.mark.parametrize("kernel, address, expected", [
    # MAU: tid = i·n + j, i following x: 16 rows, each read at two adjacent floats
    # (y = 2w, 2w + 1), 8 bytes in one sector: 16 sectors, 512 bytes
    ("mau", lambda x, y: 4 * (x * N + y), 16),
    # MAC: tid = j·n + i: two half-rows of 16 floats, 64 bytes each, 2 sectors each
    ("mac", lambda x, y: 4 * (y * N + x), 4),
])
def test_a_16x16_warp_of_the_matrix_add_pair_touches_the_sectors_counted_by_hand(
        kernel, address, expected):
    g = import_kernel(AMARIS / f"{kernel}.sm_52.sass")
    shaped, _ = shaped_graph(g, (16, 16))
    accesses = global_accesses(shaped)
    assert len(accesses) == 3   # A and B loaded, S stored
    for w in range(8):
        assert warp_sectors_by_hand(address, w) == expected
    for nid, ins in accesses.items():
        cost = access_cost(ins)
        assert cost["sectors_per_request"] == expected, nid
        assert cost["bytes_per_warp"] == 32 * expected * (1 - ins.hit_ratio), nid


def test_the_uncoalesced_matrix_add_moves_four_times_the_sectors_and_is_slower():
    """Stride 1 against a stride of the row length, on a 16×16 block: MAU (lanes a row
    apart) against MAC (stride 1): exactly 4× the sectors per request (16 against 4; with
    32-wide rows 32 against 4), and 4× the DRAM bytes the model charges."""
    from gpumodeler.core.kernel.warp_counts import count
    graphs = {k: import_kernel(AMARIS / f"{k}.sm_52.sass") for k in ("mau", "mac")}
    per_block = {}
    for block in ((16, 16), (32, 8)):
        for k, g in graphs.items():
            shaped, _ = shaped_graph(g, block)
            per_block[k, block] = sorted({access_cost(ins)["sectors_per_request"]
                                          for ins in global_accesses(shaped).values()})
    assert per_block["mau", (16, 16)] == [16.0] and per_block["mac", (16, 16)] == [4.0]
    assert per_block["mau", (32, 8)] == [32.0] and per_block["mac", (32, 8)] == [4.0]
    gmem = {k: count(shaped_graph(g, (16, 16))[0]).evaluate()["gmem_bytes"]
            for k, g in graphs.items()}
    assert gmem["mau"] == 4 * gmem["mac"] == 4 * 3 * 128


@pytest.mark.parametrize("kernel, pointer, address, expected", [
    # MMGC's A[i·n + k], i following y: a warp's two rows, one word each: 2 sectors
    ("mmgc", "c[0x0][0x148]", lambda x, y: 4 * (y * N), 2),
    # MMGU's B[k·n + i]: the two words of rows y = 2w, 2w + 1 adjacent: 1 sector
    ("mmgu", "c[0x0][0x150]", lambda x, y: 4 * y, 1),
])
def test_a_warp_whose_rows_each_read_one_word_moves_its_sectors_not_one_word_per_lane(
        kernel, pointer, address, expected):
    """A 16×16 warp of two rows whose address holds no tid.x: 2 distinct words (or 1 sector)
    where one element per lane would charge 4 sectors (128 bytes): the node's stride is
    sectors × 32 / (32 × 4) = 0.5 (0.25), its bytes the sectors' bytes."""
    g = import_kernel(AMARIS / f"{kernel}.sm_52.sass")
    shaped, notes = shaped_graph(g, (16, 16))
    loads = {nid: ins for nid, ins in global_accesses(shaped).items()
             if ins.is_load and pointer in ins.address and "tid.x" not in ins.address}
    assert loads
    for w in range(8):
        assert warp_sectors_by_hand(address, w) == expected
    for nid, ins in loads.items():
        assert g.instructions[nid].pattern == "broadcast"      # 1-D: one word per warp
        cost = access_cost(ins)
        assert cost["sectors_per_request"] == expected and ins.stride == expected / 4, nid
        assert cost["bytes_per_warp"] == 32 * expected * (1 - ins.hit_ratio), nid
        assert any(nid in n and f"-> {expected:g} sectors" in n for n in notes)
