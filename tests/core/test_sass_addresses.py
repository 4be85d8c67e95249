"""Address analysis of the SASS import (core/kernel/sass/addresses.py): the address of every
memory instruction in terms of the thread index, and what one warp's request costs.

The listings are nvcc's for resources/kernels/src/access_patterns.cu (sm_75, sm_80, sm_90)
and the Maxwell/Pascal fixtures of the other sources."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass import addresses, neighbours
from gpumodeler.core.kernel.sass.addresses import Poly, analyse_address, warp_access
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.warp_counts import access_cost

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
ARCHS = ("sm_75", "sm_80", "sm_90")


def memory_nodes(listing, function):
    g, _ = import_kernel_with_report(SASS / listing, function)
    return [ins for ins in g.instructions.values()
            if ins.unit == "ldst" and ins.space in ("global", "shared")]


# -- the polynomial and the warp's cost -----------------------------------------------------
def test_polynomial_arithmetic_and_text():
    tid, n = Poly.symbol("tid.x"), Poly.symbol("c[0x0][0x170]")
    p = (tid * n).scaled(4) + Poly.const(8)
    assert p.text() == "8 + 4·c[0x0][0x170]·tid.x"
    assert (p + p.scaled(-1)).terms == {}
    assert Poly.const(3).constant() == 3 and p.constant() is None


@pytest.mark.parametrize("stride,width,sectors,lines", [
    (4, 4, 4, 1), (8, 4, 8, 2), (16, 4, 16, 4), (128, 4, 32, 32), (4096, 4, 32, 32),
    (8, 8, 8, 2), (16, 16, 16, 4), (0, 4, 1, 1), (12, 4, 12, 3)])
def test_sectors_per_request_follow_the_lane_stride(stride, width, sectors, lines):
    a = warp_access(stride, width)
    assert (a.sectors, a.lines, a.bytes) == (sectors, lines, 32 * sectors)
    assert a.broadcast == (stride == 0)


def test_a_misaligned_warp_touches_one_sector_more():
    assert warp_access(4, 4, offset=4).sectors == warp_access(4, 4).sectors + 1


@pytest.mark.parametrize("words,degree", [(1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32),
                                          (33, 1), (3, 1), (0, 1), (64, 32)])
def test_bank_conflict_degree_of_a_word_stride(words, degree):
    assert warp_access(4 * words, 4).bank_conflict_degree == degree


def test_an_address_with_loaded_data_is_not_affine():
    poly = Poly.symbol("c[0x0][0x160]") + Poly.symbol("data@0090").scaled(4)
    a = analyse_address(poly, "global")
    assert not a.affine and "data-dependent" in a.reason
    attrs = addresses.instruction_attributes(a, 4)
    assert "not affine" in attrs["address"] and "stride" not in attrs


def test_a_parameter_in_the_lane_stride_is_taken_as_one_sector_per_lane():
    poly = (Poly.symbol("tid.x") * Poly.symbol("c[0x0][0x170]")).scaled(4)
    a = analyse_address(poly, "global")
    assert a.affine and a.param_stride and a.lane_stride is None
    attrs = addresses.instruction_attributes(a, 4)
    assert warp_access(attrs["stride"] * 4, 4).sectors == 32


# -- the listings -------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_row_and_column_copies_have_their_lane_strides(arch):
    rows = memory_nodes(f"access_patterns.{arch}.sass", "copy_rows")
    cols = memory_nodes(f"access_patterns.{arch}.sass", "copy_cols")
    assert [i.stride for i in rows] == [1.0, 1.0]
    assert all("4·tid.x" in i.address for i in rows)
    assert all(i.stride * i.width_bytes >= 32 for i in cols)
    assert all("c[0x0]" in i.address and "tid.x" in i.address for i in cols)


@pytest.mark.parametrize("arch", ARCHS)
def test_shared_transpose_conflicts_32_way_and_1_way_with_padding(arch):
    plain = [i for i in memory_nodes(f"access_patterns.{arch}.sass", "transpose_shared")
             if i.space == "shared"]
    padded = [i for i in memory_nodes(f"access_patterns.{arch}.sass", "transpose_padded")
              if i.space == "shared"]
    assert sorted(i.bank_conflict_degree for i in plain) == [1, 32]
    assert [i.bank_conflict_degree for i in padded] == [1, 1]
    assert any("128·tid.x" in i.address for i in plain)
    assert any("132·tid.x" in i.address for i in padded)


@pytest.mark.parametrize("arch", ARCHS)
def test_gather_through_an_index_is_flagged_not_affine(arch):
    nodes = memory_nodes(f"access_patterns.{arch}.sass", "gather")
    flagged = [i for i in nodes if "not affine" in i.address]
    assert len(flagged) == 1 and flagged[0].is_load and flagged[0].stride == 1.0


@pytest.mark.parametrize("arch", ARCHS)
def test_stencil_neighbours_differ_by_their_offset(arch):
    loads = [i for i in memory_nodes(f"access_patterns.{arch}.sass", "stencil3") if i.is_load]
    offsets = sorted(int(i.address.split(" + ")[0]) if i.address[0].isdigit() else 0
                     for i in loads)
    assert offsets == [0, 4, 8] and all(i.stride == 1.0 for i in loads)


@pytest.mark.parametrize("listing", ["vecadd.sm_52.sass", "vecadd.sm_61.sass",
                                     "vecadd.sm_80.sass", "vecadd.sm_90.sass"])
def test_maxwell_xmad_and_later_imad_give_the_same_address(listing):
    g, _ = import_kernel_with_report(SASS / listing)
    nodes = [i for i in g.instructions.values() if i.space == "global"]
    assert len(nodes) == 3
    for ins in nodes:
        assert ins.address.endswith("4·tid.x + 4·ctaid.x·ntid.x"), ins.address


def test_tiled_matmul_on_maxwell_reads_rows_of_shared_memory():
    g, _ = import_kernel_with_report(SASS / "matmul_tiled.sm_52.sass")
    shared = [i for i in g.instructions.values() if i.space == "shared"]
    # conflict-free: one wavefront per 32-bit access; the LDS.128 of a row of As (one
    # float4 for the whole warp) one per half-warp (test_wide_accesses.py)
    assert shared and all(i.bank_conflict_degree == (2 if i.width_bytes == 16 else 1)
                          for i in shared)
    assert sum(i.width_bytes == 16 for i in shared) == 4
    assert any("64·tid.y" in i.address for i in shared)


def test_every_memory_instruction_of_every_fixture_gets_an_address():
    for path in sorted(SASS.glob("*.sm_*.sass")):
        if "nvdisasm" in path.name or "tcgen05" in path.name:
            continue
        from gpumodeler.core.kernel.sass.importer import read_listing, import_from_listing
        listing = read_listing(path)
        for f in listing.functions:
            g, _ = import_from_listing(listing, f.name)
            for ins in g.instructions.values():
                if ins.unit == "ldst" and ins.space in ("global", "shared", "local"):
                    assert ins.address, (path.name, ins.id, ins.opcode)


def test_reuse_charges_the_union_of_the_neighbours_sectors_once():
    base = Poly.symbol("c[0x0][0x160]") + Poly.symbol("tid.x").scaled(4)
    addrs = {k: analyse_address(base + Poly.const(off), "global")
             for k, off in ((0, 4), (1, 0), (2, 8), (3, 4096))}
    hits = neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), dict.fromkeys(addrs, ()),
                                set(addrs))
    # the first read (offset 4) is charged 128 bytes; the union of the first three is 5
    # sectors (160 bytes): the second adds 32, the third nothing; 4096 bytes on: new sectors
    assert hits == {1: (0.75, 0), 2: (1.0, 0)}
    # in different loops, or stores: no reuse
    assert neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), {0: (), 1: (0,), 2: (1,), 3: ()},
                                set(addrs)) == {}
    assert neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), dict.fromkeys(addrs, ()),
                                {0}) == {}


def test_warp_uniform_neighbours_are_charged_their_sectors_once():
    """An unrolled ``A[row·n + k]`` … ``A[row·n + k + 15]``: every lane on one address, the
    sixteen floats in two sectors, each charged once (a broadcast moves one sector)."""
    base = Poly.symbol("c[0x0][0x160]") + Poly.symbol("tid.y").scaled(4096)
    addrs = {k: analyse_address(base + Poly.const(4 * k), "global") for k in range(16)}
    assert all(a.lane_stride == 0 for a in addrs.values())
    hits = neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), dict.fromkeys(addrs, ()),
                                set(addrs))
    assert hits == {k: (1.0, 0) for k in range(1, 16) if k != 8}


def test_a_bit_field_of_the_lane_is_followed():
    """WMMA fragments are addressed by ``lane & 3`` and ``lane >> 2`` (LOP3, SHF.R): a
    fragment's row ``laneid/4`` and its word ``laneid%4``. Each request is 8 rows of 16
    bytes (a row length the listing does not give taken as large): 8 sectors, the stride
    whose bytes they are (2 words), where the coalesced default said 4 sectors."""
    g, report = import_kernel_with_report(SASS / "wmma_gemm.sm_90.sass")
    loads = [i for i in g.instructions.values() if i.opcode.startswith("LDG")]
    assert report.not_affine == [] and not any("not affine" in i.address for i in loads)
    assert loads and all("4·laneid%4" in i.address and "4·laneid/4·" in i.address
                         for i in loads)
    assert {access_cost(i)["sectors_per_request"] for i in loads} == {8.0}


def test_the_import_report_names_the_addresses_it_could_not_follow():
    g, report = import_kernel_with_report(SASS / "access_patterns.sm_80.sass", "gather")
    (nid, opcode), = report.not_affine
    assert opcode.startswith("LDG") and "not affine" in g.instructions[nid].address
    assert f"{nid} {opcode}" in report.summary() and "set stride or pattern" in report.summary()
    _, clean = import_kernel_with_report(SASS / "access_patterns.sm_80.sass", "copy_rows")
    assert clean.not_affine == [] and "not affine" not in clean.summary()


def _row_grid(*shifts, axis="tid.y", pointer="c[0x0][0x160]", block_rows=None):
    """Loads of ``in[i + k·nx + o]`` for (k, o) in ``shifts``, ``i = y·nx + x``, nx a
    parameter, ``y = blockIdx.y·blockDim.y + threadIdx.y`` (or ``blockIdx.y·block_rows +
    threadIdx.y``, a block stepping ``block_rows`` rows whatever its size)."""
    nx = Poly.symbol("c[0x0][0x170]")
    d = axis[-1]
    step = (Poly.symbol(f"ntid.{d}") if block_rows is None else Poly.const(block_rows))
    y = Poly.symbol(axis) + Poly.symbol(f"ctaid.{d}") * step
    point = Poly.symbol(pointer) + Poly.symbol("tid.x").scaled(4) + (nx * y).scaled(4)
    return {n: analyse_address(point + nx.scaled(4 * k) + Poly.const(4 * o), "global")
            for n, (k, o) in enumerate(shifts)}


def test_the_rows_above_and_below_join_the_points_family():
    addrs = _row_grid((0, 0), (-1, 0), (1, 0))
    hits = neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), dict.fromkeys(addrs, ()),
                                set(addrs))
    assert hits == {1: (1.0, 0, "tid.y", -1), 2: (1.0, 0, "tid.y", 1)}
    assert neighbours.rows_note("tid.y", -1) == " at -1 tid.y row"
    assert neighbours.row_shift_of("x; overlaps i0150 at +2 tid.z rows: 100% served by L2") == \
        ("tid.z", 2)
    assert neighbours.row_shift_of("x; overlaps i0150: 75% served by L2") is None


def test_a_row_is_charged_the_columns_its_family_has_not_read():
    """A 9-point box: three columns in each of three rows; the rows are charged nothing, and
    their rows are counted from the nearest row read (each +1); a read 40 columns on, in the
    row below, touches none of the family's sectors: charged in full, no entry."""
    addrs = _row_grid((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 0), (0, 1), (1, -1), (1, 0),
                      (1, 1), (2, 40))
    hits = neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), dict.fromkeys(addrs, ()),
                                set(addrs))
    for n in (3, 4, 5, 6, 7, 8):
        assert hits[n][0] == 1.0 and hits[n][2:] == ("tid.y", 1), n
    assert 9 not in hits


def test_what_is_not_a_row_of_the_same_array_is_not_grouped():
    nx = Poly.symbol("c[0x0][0x170]")
    point = _row_grid((0, 0))[0].poly
    half_a_row = {0: analyse_address(point, "global"),
                  1: analyse_address(point + nx.scaled(2), "global")}
    other_array = {0: _row_grid((0, 0))[0],
                   1: _row_grid((1, 0), pointer="c[0x0][0x168]")[0]}
    # a tiled transpose: 32-row tiles read by 8-row blocks, rows 8, 16, 24 of a tile in the
    # same thread (y = blockIdx.y·32 + threadIdx.y): those rows are no thread's own
    tile_rows = _row_grid((0, 0), (8, 0), (16, 0), (24, 0), block_rows=32)
    for addrs in (half_a_row, other_array, tile_rows):
        assert neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), dict.fromkeys(addrs, ()),
                                    set(addrs)) == {}


def test_planes_group_along_tid_z():
    addrs = _row_grid((0, 0), (1, 0), axis="tid.z")
    hits = neighbours.reuse_hits(addrs, dict.fromkeys(addrs, 4), dict.fromkeys(addrs, ()),
                                set(addrs))
    assert hits == {1: (1.0, 0, "tid.z", 1)}
