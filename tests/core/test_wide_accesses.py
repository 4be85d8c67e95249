"""64-bit and 128-bit accesses (``LDS.64``/``LDS.128``, ``STS.128``, ``LDG.64``/``LDG.128``):
the wavefronts a warp's shared-memory request takes and the sectors and lines of a global
one (core/kernel/sass/addresses.py, core/kernel/warp_counts.py).

Every expected number is worked out by hand in the test from the rules the module cites:
32 banks, successive 32-bit words in successive banks, one word per bank per clock, a word
several lanes read is read once; 64- and 128-bit requests served one half-warp (16 lanes)
at a time; global requests in 32-byte sectors and 128-byte lines."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.edge_latency import resolve_edge_latency
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.graph_items import Edge, Instruction
from gpumodeler.core.kernel.latency_tables import LatencyTable
from gpumodeler.core.kernel.sass.addresses import (ideal_wavefronts, lanes_access,
                                                   shared_wavefronts, warp_access)
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_shape import shaped_graph
from gpumodeler.core.kernel.warp_counts import (access_cost, count, instruction_counts,
                                                shared_conflict_ways)

ROOT = Path(__file__).resolve().parents[2]
AMARIS = ROOT / "resources" / "validation" / "kernels" / "amaris"


def by_hand(addresses, width, group):
    """Wavefronts counted directly: per group of lanes, the most distinct 4-byte words any
    of the 32 banks holds; summed over the groups."""
    total = 0
    for first in range(0, len(addresses), group):
        banks: dict = {}
        for a in addresses[first:first + group]:
            for word in range(a // 4, (a + width - 1) // 4 + 1):
                banks.setdefault(word % 32, set()).add(word)
        total += max(len(w) for w in banks.values())
    return total


# -- shared memory: wavefronts per request --------------------------------------------------

def test_lds128_row_broadcast_takes_one_wavefront_per_half_warp():
    # As[ty][k..k+3] of a 16x16 tile: lanes 0-15 (row ty) read one float4, lanes 16-31
    # (row ty+1, 64 bytes on) another: 4 words in 4 banks per half -> 1 + 1
    lanes = [64 * (lane // 16) for lane in range(32)]
    assert by_hand(lanes, 16, 16) == 2
    assert lanes_access(lanes, 16).bank_conflict_degree == 2
    # the whole warp on one row: still one wavefront per half-warp
    assert warp_access(0, 16).bank_conflict_degree == 2
    # two rows in the same banks (128 bytes apart) cost no more: the halves are served apart
    assert lanes_access([128 * (lane // 16) for lane in range(32)], 16).bank_conflict_degree == 2


def test_lds128_unit_stride_takes_four_wavefronts():
    # 32 float4s in a row: each half-warp reads 64 consecutive words, 2 in every bank
    assert by_hand([16 * lane for lane in range(32)], 16, 16) == 4
    assert warp_access(16, 16).bank_conflict_degree == 4
    assert ideal_wavefronts(16) == 4
    ins = Instruction.make("l", "LDS.128", width_bytes=16, bank_conflict_degree=4)
    assert shared_conflict_ways(ins) == 1
    assert instruction_counts(ins, 32, {"cuda_core"}).get("reissues", 0) == 0
    assert instruction_counts(ins, 32, {"cuda_core"})["smem_bank_cycles"] == 4


def test_lds64_stride_2_is_a_two_way_conflict():
    # every other double: lane l reads words 4l and 4l+1; in a half-warp lanes l and l+8
    # share banks 4l and 4l+1 (mod 32): 2 words per bank per half -> 2 + 2 = 4 wavefronts,
    # twice the 2 an LDS.64 of consecutive doubles takes
    lanes = [16 * lane for lane in range(32)]
    assert by_hand(lanes, 8, 16) == 4
    assert warp_access(16, 8).bank_conflict_degree == 4
    assert warp_access(8, 8).bank_conflict_degree == 2 == ideal_wavefronts(8)
    ins = Instruction.make("l", "LDS.64", width_bytes=8, bank_conflict_degree=4)
    assert shared_conflict_ways(ins) == 2
    counts = instruction_counts(ins, 32, {"cuda_core"})
    assert counts["smem_bank_cycles"] == 4 and counts["reissues"] == 1


@pytest.mark.parametrize("stride,expected", [(16, 4), (64, 16), (32, 8), (0, 2)])
def test_sts128_counts_like_a_load(stride, expected):
    # a store writes each word once (one lane's write stands); lane stride 64 bytes puts the
    # float4s of even lanes in banks 0-3 and of odd lanes in 16-19: 8 words a bank per half
    lanes = [stride * lane for lane in range(32)]
    assert by_hand(lanes, 16, 16) == expected
    assert warp_access(stride, 16).bank_conflict_degree == expected
    ins = Instruction.make("s", "STS.128", width_bytes=16, bank_conflict_degree=expected)
    assert instruction_counts(ins, 32, {"cuda_core"})["smem_bank_cycles"] == expected


def test_the_measured_lds128_pattern_of_sixteen_values_takes_eight_wavefronts():
    # lanes l and l+16 read the float4 at 32·l bytes: in each half the values 128 bytes apart
    # (l, l+4, l+8, l+12) share 4 banks -> 4 per half; a broadcast across the halves saves
    # nothing
    lanes = [32 * (lane % 16) for lane in range(32)]
    assert by_hand(lanes, 16, 16) == 8
    assert shared_wavefronts(lanes, 16) == 8


@pytest.mark.parametrize("words", [1, 2, 3, 4, 8, 32])
def test_32_bit_accesses_keep_the_n_way_degree_of_the_whole_warp(words):
    lanes = [4 * words * lane for lane in range(32)]
    assert warp_access(4 * words, 4).bank_conflict_degree == by_hand(lanes, 4, 32)
    assert ideal_wavefronts(4) == 1


def test_only_a_two_way_conflict_beyond_the_width_takes_volkovs_2_way_latency():
    table = LatencyTable(key="t", name="t", architecture="maxwell", source="test",
                         memory_cycles={"shared": 24.0, "shared_2way": 26.0})

    def latency(**kw):
        g = KernelGraph("k")
        g.add_instruction(Instruction.make("l", "LDS", **kw))
        g.add_instruction(Instruction.make("f", "FADD"))
        g.add_edge(Edge("e", "l", "f", "dependency"))
        return resolve_edge_latency(g, g.edges["e"], table)

    assert latency(width_bytes=4, bank_conflict_degree=2) == 26.0
    assert latency(width_bytes=8, bank_conflict_degree=2) == 24.0  # consecutive doubles
    assert latency(width_bytes=8, bank_conflict_degree=4) == 26.0  # every other double
    assert latency(width_bytes=16, bank_conflict_degree=4) == 24.0


# -- global memory: sectors and lines per request -------------------------------------------

@pytest.mark.parametrize("width,sectors,lines", [(4, 4, 1), (8, 8, 2), (16, 16, 4)])
def test_ldg_wide_coalesced_requests(width, sectors, lines):
    # 32 lanes x width bytes, consecutive: width x 32 / 32 sectors, / 128 lines; each line
    # beyond the first is one more 128-byte request (a reissue)
    a = warp_access(width, width)
    assert (a.sectors, a.lines) == (sectors, lines)
    ins = Instruction.make("g", f"LDG.E.{8 * width}", width_bytes=width)
    cost = access_cost(ins)
    assert cost["sectors_per_request"] == sectors and cost["lines_per_request"] == lines
    assert cost["bytes_per_warp"] == 32 * width
    counts = instruction_counts(ins, 32, {"cuda_core"})
    assert counts["gmem_accesses"] == 1 and counts.get("reissues", 0) == lines - 1


# -- the tiled multiplies of Amaris' set -----------------------------------------------------

def smem_cycles_per_tile(graph):
    """Bank cycles per warp of one trip of the tile loop (the kernel's one loop, loop1)."""
    counts = count(graph)
    one = counts.evaluate({"loop1": 1, "guard1": 1})["smem_bank_cycles"]
    return counts.evaluate({"loop1": 2, "guard1": 1})["smem_bank_cycles"] - one


def test_mmsc_row_broadcasts_take_two_wavefronts_in_a_16x16_block():
    # As[ty][k..k+3]: a warp of a 16x16 block holds rows ty and ty+1, one float4 each
    g = import_kernel(AMARIS / "mmsc.sm_52.sass")
    shared = {nid: i for nid, i in g.instructions.items() if i.space == "shared"}
    wide = [nid for nid, i in shared.items() if i.width_bytes == 16]
    assert len(wide) == 4 and len(shared) == 22
    # imported for a warp of one row (lane stride 0): one float4 per half-warp
    assert all(g.instructions[n].bank_conflict_degree == 2 for n in wide)
    shaped, _ = shaped_graph(g, (16, 16))
    assert all(shaped.instructions[n].bank_conflict_degree == 2 for n in wide)
    # per tile: 2 STS of consecutive words and 16 LDS.32 of one row of Bs (16 words, the
    # two rows of the warp read the same ones), 1 cycle each, and 4 LDS.128 of 2
    assert smem_cycles_per_tile(shaped) == 18 * 1 + 4 * 2


def test_mmsu_column_reads_of_float4s_conflict_in_each_half_warp():
    # As[tx][k..k+3]: lane tx reads the float4 at 64·tx bytes; a half-warp's 16 float4s fall
    # in banks 0-3 (even tx) and 16-19 (odd tx), 8 words each: 8 wavefronts per half, and
    # the second half (row ty+1, the same tx) repeats them: 16
    g = import_kernel(AMARIS / "mmsu.sm_52.sass")
    shaped, _ = shaped_graph(g, (16, 16))
    wide = [i for i in shaped.instructions.values() if i.space == "shared" and i.width_bytes == 16]
    lanes = [64 * (lane % 16) for lane in range(32)]
    assert by_hand(lanes, 16, 16) == 16
    assert len(wide) == 4 and all(i.bank_conflict_degree == 16 for i in wide)
    # the stores As[tx][ty] = 64·tx + 4·ty: rows ty and ty+1 in banks ty, ty+16 and ty+1,
    # ty+17, 8 words each: 8-way; the 16 LDS.32 of Bs[k][ty] read 2 words: 1
    stores = [i for i in shaped.instructions.values() if i.space == "shared" and not i.is_load]
    assert by_hand([64 * (lane % 16) + 4 * (lane // 16) for lane in range(32)], 4, 32) == 8
    assert [i.bank_conflict_degree for i in stores] == [8, 8]
    assert smem_cycles_per_tile(shaped) == 2 * 8 + 16 * 1 + 4 * 16
