"""Bit fields of the thread index in addresses (core.kernel.sass.bitfields): ``tid.x & 31``,
``tid.x >> 5``, the bitwise merges nvcc writes for additions, Maxwell's BFI; each rule
checked against the bit operation itself over every thread index, and on real listings."""
from __future__ import annotations

from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass import bitfields
from gpumodeler.core.kernel.sass.addresses import Poly, analyse_address, instruction_attributes
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.sass.launch_shape import has_narrow_field, shaped_graph
from gpumodeler.core.kernel.warp_counts import access_cost

ROOT = Path(__file__).resolve().parents[2]
A6000 = ROOT / "resources" / "validation" / "kernels" / "a6000" / "sgemm_steps.sm_86.sass"
TID = Poly.symbol("tid.x")
CTA = Poly.symbol("ctaid.y")


def value(poly: Poly, x: int, ctaid: int = 0) -> int:
    """``poly`` at tid.x = x, ctaid.y = ``ctaid``."""
    total = 0
    for mono, c in poly.terms.items():
        v = c
        for s in mono:
            v *= ctaid if s == "ctaid.y" else bitfields.thread_value(s, x, 0, 0, x % 32)
        total += v
    return total


def every_thread(poly: Poly, expected, ctaids=(0, 1, 7)) -> None:
    for c in ctaids:
        for x in range(1024):
            assert value(poly, x, c) == expected(x, c) & 0xFFFFFFFF, (poly.text(), x, c)


def k(n: int) -> Poly:
    return Poly.const(n)


def test_shifts_right_give_the_quotient_field():
    p = bitfields.shift_right(TID, 5, Poly)
    assert p.text() == "tid.x/32"
    every_thread(p, lambda x, c: x >> 5)
    # a right shift of a scaled index: 4·tid.x >> 3 = tid.x/2
    p = bitfields.shift_right(TID.scaled(4), 3, Poly)
    assert p.text() == "tid.x/2"
    every_thread(p, lambda x, c: (4 * x) >> 3)
    # a quotient shifted again, and a sum whose low part drops out
    p = bitfields.shift_right(bitfields.shift_right(TID, 2, Poly), 3, Poly)
    assert p.text() == "tid.x/32"
    p = bitfields.shift_right(CTA.scaled(32) + bitfields.bitwise([TID, k(31), k(0)], 0xC0, Poly),
                              5, Poly)
    assert p.text() == "ctaid.y"
    every_thread(p, lambda x, c: (32 * c + (x & 31)) >> 5)


def test_masks_give_the_remainder_and_the_rounded_down_index():
    low = bitfields.bitwise([TID, k(0x1F), k(0)], 0xC0, Poly)  # LOP3.LUT d, tid, 0x1f, RZ, 0xc0
    assert low.text() == "tid.x%32"
    every_thread(low, lambda x, c: x & 31)
    high = bitfields.bitwise([TID, k(0x3FFFFFE0), k(0)], 0xC0, Poly)
    assert high.text() == "32·tid.x/32"
    every_thread(high, lambda x, c: x & 0x3FFFFFE0)
    # (tid.x + 256) & ~7: a constant clear of the bits cut stays whole
    p = bitfields.bitwise([TID + k(256), k(0x3FFFFFF8), k(0)], 0xC0, Poly)
    every_thread(p, lambda x, c: (x + 256) & 0x3FFFFFF8)
    # (tid.x >> 1) & ~7 = 8·(tid.x/16)
    p = bitfields.bitwise([bitfields.shift_right(TID, 1, Poly), k(0x7FFFFFF8), k(0)], 0xC0, Poly)
    assert p.text() == "8·tid.x/16"
    every_thread(p, lambda x, c: (x >> 1) & 0x7FFFFFF8)


def test_merges_of_disjoint_bits_are_sums():
    low = bitfields.bitwise([TID, k(0x1F), k(0)], 0xC0, Poly)
    # LOP3.LUT d, 32·ctaid.y, 0xffffffe0, tid%32, 0xe2: b ? a : c
    p = bitfields.bitwise([CTA.scaled(32), k(0xFFFFFFE0), low], 0xE2, Poly)
    assert p.text() == "32·ctaid.y + tid.x%32"
    every_thread(p, lambda x, c: ((32 * c) & 0xFFFFFFE0) | ((x & 31) & ~0xFFFFFFE0))
    # LOP3.LUT d, (tid+256) & ~7, 0x7, tid, 0xf8: a | (b & c) puts tid.x back together
    hi = bitfields.bitwise([TID + k(256), k(0x3FFFFFF8), k(0)], 0xC0, Poly)
    p = bitfields.bitwise([hi, k(7), TID], 0xF8, Poly)
    assert p.text() == "0x100 + tid.x"
    every_thread(p, lambda x, c: ((x + 256) & 0x3FFFFFF8) | (7 & x))


@pytest.mark.parametrize("operands,lut", [
    ([TID, k(0x1F), k(0)], 0x0C),  # ~a & b: an inverted copy
    ([TID, Poly.symbol("tid.y"), k(0)], 0xFC),  # a | b: a bit two operands decide
    ([TID, k(0x1C), k(0)], 0xC0),  # bits 2-4 only: neither the low bits nor the rest
])
def test_what_is_not_a_field_is_not_followed(operands, lut):
    assert bitfields.bitwise(operands, lut, Poly) is None


def test_a_remainder_of_a_remainder_is_not_followed():
    assert bitfields.shift_right(Poly.symbol("tid.x%32"), 2, Poly) is None


def test_bfi_inserts_the_block_offset_above_the_lane():
    low = bitfields.bitwise([TID, k(0x1F), k(0)], 0xC0, Poly)
    p = bitfields.insert(CTA, 0x1B05, low, Poly)  # BFI R19, R23, 0x1b05, R18 (sm_52)
    assert p.text() == "32·ctaid.y + tid.x%32"
    every_thread(p, lambda x, c: (32 * c) | (x & 31))
    assert bitfields.insert(CTA, 0x0805, low, Poly) is None  # ctaid may not fit 8 bits
    assert bitfields.insert(CTA, 0x1B04, low, Poly) is None  # overlaps the lane's bits


def test_a_field_narrower_than_a_warp_is_costed_lane_by_lane():
    """``A[(tid.x/8)·n + tid.x%8]``: a warp reads 4 rows of 8 floats, 4 sectors; the same
    rows read 16 floats apart by a 16-lane field, 8 sectors."""
    n = Poly.symbol("c[0x0][0x168]")
    rows8 = (n * Poly.symbol("tid.x/8")).scaled(4) + Poly.symbol("tid.x%8").scaled(4)
    a = analyse_address(rows8, "global")
    assert a.affine and a.lane_stride is None and len(a.lanes) == 32
    assert instruction_attributes(a, 4)["stride"] == 1.0  # 4 sectors, as 32 floats
    spread = (n * Poly.symbol("tid.x/8")).scaled(4) + Poly.symbol("tid.x%8").scaled(8)
    assert instruction_attributes(analyse_address(spread, "global"), 4)["stride"] == 2.0
    # a quotient of 32 or more is uniform in a warp, a remainder of 32 or more the lane
    assert analyse_address(Poly.symbol("tid.x/32").scaled(128), "global").lane_stride == 0
    assert analyse_address(Poly.symbol("tid.x%64").scaled(4), "global").lane_stride == 4
    # shared memory: two half-warps on one bank
    conflict = analyse_address(Poly.symbol("tid.x/16").scaled(256), "shared")
    assert instruction_attributes(conflict, 4)["bank_conflict_degree"] == 2


def test_the_a6000_products_have_every_address_followed():
    """The step-by-step products (1-D blocks mapped onto tiles with / and %) import with no
    address left unfollowed, on sm_86 as on the sm_52 forms (SHR, LOP32I, BFI) tested above."""
    for function in ("sgemm_cols_by_lane", "sgemm_smem_tiles", "sgemm_column_strips",
                     "sgemm_register_tiles"):
        _, report = import_kernel_with_report(A6000, function)
        assert report.not_affine == [], function


def test_the_coalesced_product_reads_a_by_broadcast_and_b_along_the_lanes():
    g, _ = import_kernel_with_report(A6000, "sgemm_cols_by_lane")
    loads = [i for i in g.instructions.values() if i.opcode.startswith("LDG")]
    a_loads = [i for i in loads if "tid.x/32" in i.address and "c[0x0][0x188]" not in i.address]
    b_loads = [i for i in loads if "c[0x0][0x178]" in i.address]
    assert a_loads and all(i.pattern == "broadcast" for i in a_loads)
    assert b_loads and all(access_cost(i)["sectors_per_request"] == 4 for i in b_loads)


def test_register_tiles_see_the_2_way_conflict_and_the_epilogue_rows():
    g, _ = import_kernel_with_report(A6000, "sgemm_register_tiles")
    lds = [i for i in g.instructions.values()
           if i.opcode == "LDS" and "256·tid.x/16" in i.address]
    assert lds and all(i.bank_conflict_degree == 2 for i in lds)
    # C's tile: lanes 0-15 of a warp on one row 32 bytes apart, 16-31 on the next: 32 sectors
    stores = [i for i in g.instructions.values() if i.opcode.startswith("STG")]
    assert stores and {access_cost(i)["sectors_per_request"] for i in stores} == {32.0}


def test_a_launch_counts_the_lines_of_a_narrow_field_at_any_block_shape():
    """A's slice in the register-tile product, ``(tid.x/8)·K + tid.x%8`` with 256 threads: 4
    sectors in 4 lines (rows), which a 1-D block's lanes along x would put in one."""
    g, _ = import_kernel_with_report(A6000, "sgemm_register_tiles")
    assert has_narrow_field(g)
    shaped, notes = shaped_graph(g, 256)
    a_loads = [i for i in shaped.instructions.values()
               if i.opcode.startswith("LDG") and "tid.x%8" in i.address]
    assert a_loads and all(i.lines_per_request == 4 for i in a_loads)
    assert all(any(i.id in n and "4 -> 4 sectors per request, 4 lines" in n for n in notes)
               for i in a_loads)
    assert all(access_cost(i)["sectors_per_request"] == 4 for i in a_loads)
    plain, _ = import_kernel_with_report(A6000, "sgemm_rows_by_lane")
    assert not has_narrow_field(plain) and shaped_graph(plain, 256)[0] is plain


def test_every_truth_table_followed_is_right():
    """Over all 256 LOP3 truth tables, masks and operand shapes, whatever :func:`bitwise`
    follows equals the bit operation on every sampled thread index and block index."""
    low = Poly.symbol("tid.x%32")
    templates = [
        lambda m: ([TID, k(m), k(0)], lambda x, c: (x, m, 0)),
        lambda m: ([TID + k(256), k(m), TID], lambda x, c: (x + 256, m, x)),
        lambda m: ([CTA.scaled(32), k(m), low], lambda x, c: (32 * c, m, x & 31)),
    ]
    threads = sorted(set(range(0, 1024, 37)) | {0, 1, 7, 8, 31, 32, 255, 1023})
    followed = 0
    for mask in (0x1F, 0x7, 0xFFFFFFE0, 0x3FFFFFF8, 0x7F, 0xF0):
        for make in templates:
            operands, inputs = make(mask)
            for lut in range(256):
                p = bitfields.bitwise(operands, lut, Poly)
                if p is None:
                    continue
                followed += 1
                for c in (0, 3):
                    for x in threads:
                        a, b, cc = inputs(x, c)
                        want = 0
                        for bit in range(32):
                            idx = 4 * ((a >> bit) & 1) + 2 * ((b >> bit) & 1) + ((cc >> bit) & 1)
                            want |= ((lut >> idx) & 1) << bit
                        assert value(p, x, c) & 0xFFFFFFFF == want, (hex(mask), hex(lut), x, c)
    assert followed > 100  # the rules follow a good share of them


def test_a_global_warp_index_is_split_at_the_block():
    """``(ctaid.x·ntid.x + tid.x) >> 5`` with the block's x dimension a multiple of 32 (as the
    lanes are taken to be): ``ctaid.x·ntid.x/32 + tid.x/32``, warp-uniform."""
    cta_x, ntid = Poly.symbol("ctaid.x"), Poly.symbol("ntid.x")
    p = bitfields.shift_right(cta_x * ntid + TID, 5, Poly)
    assert p.text() == "tid.x/32 + ctaid.x·ntid.x/32"
    assert analyse_address(p.scaled(4096), "global").lane_stride == 0
    assert bitfields.shift_right(cta_x * ntid + TID, 6, Poly) is None  # 32 | ntid.x, not 64


SASS = ROOT / "resources" / "kernels" / "sass"
TILE_ARCHS = ("sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
              "sm_120")


@pytest.mark.parametrize("arch", TILE_ARCHS)
def test_tile_fields_are_followed_on_every_architecture(arch):
    """tile_fields.cu on Maxwell (SHR, LOP32I, BFI), Volta to Hopper (SHF.R, LOP3 merges,
    LEA.HI, Hopper's VIADD) and Blackwell (block dimensions at c[0x0][0x360]): every address
    followed, and what each access costs the same on all of them."""
    listing = SASS / f"tile_fields.{arch}.sass"
    g, report = import_kernel_with_report(listing, "rows_by_warp")
    assert report.not_affine == []
    loads = [i for i in g.instructions.values() if i.opcode.startswith("LDG")]
    assert {i.pattern for i in loads if "tid.x/32" in i.address} == {"broadcast"}
    assert {access_cost(i)["sectors_per_request"] for i in loads
            if "tid.x%32" in i.address} == {4.0}
    g, report = import_kernel_with_report(listing, "slice8")
    assert report.not_affine == []
    # tile[(tid.x % 64)·8 + tid.x / 64]: lanes 32 bytes apart, 8 on each of 4 banks
    (read,) = [i for i in g.instructions.values() if i.opcode.startswith("LDS")]
    assert read.bank_conflict_degree == 8
    (a_load,) = [i for i in g.instructions.values() if i.opcode.startswith("LDG")]
    assert "tid.x%8" in a_load.address and access_cost(a_load)["sectors_per_request"] == 4
    g, report = import_kernel_with_report(listing, "warp_per_row")
    assert report.not_affine == []
    rows = [i for i in g.instructions.values()
            if i.opcode.startswith("LDG") and "tid.x/32" in i.address]
    assert rows and all("ctaid.x·ntid.x/32" in i.address for i in rows)
    assert {access_cost(i)["sectors_per_request"] for i in rows} == {4.0}
