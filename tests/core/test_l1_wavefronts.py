"""The L1's data stage (the worksheet's l1 row on Volta and later: one cycle per 128-byte line
a global or local request touches) and the grouping of a row walk's unrolled loads, on the
public set's row-per-thread matrix-vector product (resources/validation/kernels/nvbench/
matvec.cu, its sm_86 listing): docs/models.md, "The L1's data stage"."""
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
from gpumodeler.core.kernel.sass.reuse import reuse_graph
from gpumodeler.core.kernel.warp_counts import count
from gpumodeler.core.models.throughput import l1_cycles, throughput_bound

ROOT = Path(__file__).resolve().parents[2]
MATVEC = ROOT / "resources" / "validation" / "kernels" / "nvbench" / "matvec.sm_86.sass"


@pytest.fixture(scope="module")
def matvec():
    return import_kernel(MATVEC)


def one_load(**kw):
    """A graph of one global load (and an exit), its attributes ``kw``."""
    ins = dict(dict(id="ld", opcode="LDG.E", unit="ldst", space="global", is_load=True,
                    width_bytes=4), **kw)
    return from_dict({"format": "gpumodeler-kernel", "version": 1,
                      "instructions": [ins, {"id": "x", "opcode": "EXIT"}],
                      "edges": [{"from": "ld", "to": "x", "kind": "dependency",
                                 "latency": 4}]})


@pytest.mark.parametrize("kw, lines", [
    ({}, 1),                                    # coalesced 32-bit: 128 bytes, one line
    ({"width_bytes": 8}, 2),                    # coalesced 64-bit: 256 bytes
    ({"width_bytes": 16}, 4),                   # coalesced 128-bit: 512 bytes
    ({"stride": 2.0}, 2),                       # every other word
    ({"stride": 8.0}, 8),                       # a sector per lane, four lanes a line
    ({"stride": 32.0}, 32),                     # a line per lane (a row walk's 128 bytes)
    ({"stride": 1000.0}, 32),
    ({"pattern": "broadcast"}, 1),
    ({"pattern": "random"}, 32),
])
def test_a_request_costs_the_data_stage_a_cycle_per_line(kw, lines):
    c = count(one_load(**kw)).evaluate({})
    assert c["l1_wavefronts"] == lines
    assert c["reissues"] == lines - 1   # the same lines, before Volta reissued at the scheduler


def test_the_row_is_the_larger_of_the_lines_and_the_hit_bytes(catalog):
    ampere = catalog.get("GeForce RTX 3080").to_gpu_spec()
    assert ampere.l1_bytes_per_cycle_per_sm == 128
    assert l1_cycles(ampere, 0.0, 32.0) == 32.0
    assert l1_cycles(ampere, 128.0 * 40, 32.0) == 40.0     # the hits' bytes at 128 a clock
    assert l1_cycles(ampere, 0.0, 0.0) == 0.0
    tb = throughput_bound(ampere, issued_instructions=2.0, l1_wavefronts=32.0)
    assert tb.cycles_per_warp["l1"] == 32.0 and tb.binding == "l1"
    # Turing's data array gives 64 bytes a clock: a line takes two
    turing = catalog.get("GeForce RTX 2060").to_gpu_spec()
    assert turing.l1_bytes_per_cycle_per_sm == 64
    assert l1_cycles(turing, 0.0, 32.0) == 64.0
    assert l1_cycles(turing, 64.0 * 40, 1.0) == 40.0
    # Maxwell: no L1 data rate in the database; the extra lines are the issue row's reissues
    maxwell = catalog.get("GeForce GTX 980").to_gpu_spec()
    assert maxwell.l1_bytes_per_cycle_per_sm is None
    assert throughput_bound(maxwell, issued_instructions=2.0,
                            l1_wavefronts=32.0).cycles_per_warp["l1"] == 0.0
    with pytest.raises(Exception, match="L1 wavefronts"):
        throughput_bound(ampere, issued_instructions=1.0, l1_wavefronts=-1.0)


def test_the_unrolled_row_walk_is_grouped(matvec):
    """Sixteen loads of A[r·n + k … k + 15] (lane stride the row length, a parameter): two
    sectors a lane, so 14 of the 16 are hits of the first of their sector."""
    walk = [ins for ins in matvec.instructions.values()
            if ins.space == "global" and "lane stride holds a parameter" in ins.address
            and "advances 64 B per trip" in ins.address]
    assert len(walk) == 16
    hits = sorted(ins.hit_ratio for ins in walk)
    assert hits[:2] == [0.0, 0.0] and hits[2:] == [1.0] * 14
    assert all("; overlaps " in ins.address for ins in walk if ins.hit_ratio)


def launch(graph, gpu, grid, cols, block=512):
    seen = graph_for_launch(graph, dict(graph.variables, loop1=cols), block_size=block,
                            gpu=gpu, grid_size=grid, occupancy=16.0 if grid <= 68 else 48.0)
    return seen, count(seen.graph).evaluate(dict(seen.graph.variables, **seen.values))


def test_on_ampere_the_walk_reads_its_rows_once_and_the_l1_lines_bind(catalog, matvec):
    """8192 × 8192 on 16 blocks of 512 threads (nvbench: 2.23 ms on an RTX 3080, 2.27 on a
    3060): the DRAM bytes are the matrix's (4 bytes an element, not 8× that), the L1 serves
    the re-reads, and the l1 row, 32 lines a request, sets the time."""
    gpu = catalog.get("GeForce RTX 3080").to_gpu_spec()
    seen, c = launch(matvec, gpu, 16, 8192)
    warps = 16 * 512 // 32
    matrix = 8192 * 8192 * 4
    assert matrix <= c["gmem_bytes"] * warps < 1.1 * matrix
    tb = throughput_bound(gpu, issued_instructions=c["issued_instructions"],
                          gmem_bytes=c["gmem_bytes"], l1_bytes=c["l1_bytes"],
                          l2_bytes=c["l2_bytes"], l1_wavefronts=c["l1_wavefronts"])
    assert tb.binding == "l1"
    lines_per_warp = 8192 // 16 * 16 * 32          # trips × loads of A × lines
    assert lines_per_warp <= c["l1_wavefronts"] < 1.05 * lines_per_warp


def test_on_maxwell_the_walk_stays_dram_traffic(catalog, matvec):
    """No L1 caches a plain LDG on a GTX 980 and its L2 bandwidth is unknown: the grouped
    re-reads would be free L2 hits, so they stay DRAM traffic (the charge before grouping)
    and the launch says so."""
    gpu = catalog.get("GeForce GTX 980").to_gpu_spec()
    seen, c = launch(matvec, gpu, 16, 8192)
    warps = 16 * 512 // 32
    assert c["gmem_bytes"] * warps > 7.5 * 8192 * 8192 * 4
    assert any("re-reads of each lane's own row" in n and "not credited" in n
               for n in seen.notes)
    # with a bandwidth given, the hits are L2 hits again
    bounded = replace(gpu, l2_bandwidth_bytes_per_s=500e9)
    seen, c = launch(matvec, bounded, 16, 8192)
    assert c["gmem_bytes"] * warps < 1.1 * 8192 * 8192 * 4
    assert not any("re-reads of each lane's own row" in n for n in seen.notes)


def test_reuse_graph_drops_only_uncached_unbounded_row_walk_hits(matvec):
    kw = dict(grid_size=16, warps_per_block=16, blocks_per_sm=1, sms=16, l2_bytes=2 ** 21,
              values={"loop1": 8192})
    hits = {nid: ins.hit_ratio for nid, ins in matvec.instructions.items()}
    dropped_graph, report = reuse_graph(matvec, compute_capability="5.2", l2_bounded=False, **kw)
    # the unrolled body's 14 and the same walk's copies in the unroll-4 and remainder loops
    assert len(report.unbounded) == 24
    assert all("lane stride holds a parameter" in matvec.instructions[i].address
               for i in report.unbounded)
    assert all(dropped_graph.instructions[i].hit_ratio == 0.0 for i in report.unbounded)
    for cc, bounded in (("5.2", True), ("8.6", False), ("8.6", True)):
        g, r = reuse_graph(matvec, compute_capability=cc, l2_bounded=bounded, **kw)
        assert r.unbounded == ()
        assert all(g.instructions[i].hit_ratio >= hits[i] for i in report.unbounded)
    # the L2 size unknown: the imported ratios are kept, but not these
    g, r = reuse_graph(matvec, compute_capability="5.2", l2_bounded=False,
                       **dict(kw, l2_bytes=None))
    assert len(r.unbounded) == 24 and any("not credited" in n for n in r.notes())


def test_a_coalesced_copy_is_unchanged_by_the_row(catalog):
    """One line a request: the l1 row's cycles are the requests, far below the DRAM row."""
    gpu = catalog.get("GeForce RTX 3080").to_gpu_spec()
    c = count(one_load()).evaluate({})
    tb = throughput_bound(gpu, issued_instructions=c["issued_instructions"],
                          gmem_bytes=c["gmem_bytes"], l1_wavefronts=c["l1_wavefronts"])
    assert tb.cycles_per_warp["l1"] == 1.0
    assert tb.binding == "memory"


# -- a block narrower than a warp: the lines its rows touch ---------------------------------

NAIVE = ROOT / "resources" / "kernels" / "sass" / "matmul_naive.sm_80.sass"


def test_a_16x16_warp_reads_two_rows_two_lines(catalog):
    """The naive multiply's A[row·n + k] is one word per row, the same for the 16 lanes of a
    row: a 16×16 block's warp spans two rows, so two sectors in two lines (the stride along
    x that gives its sectors, 0.5 elements, would say one); B[k·n + col] is the 16 columns of
    one row, one line. Launch-time only: no graph file carries it."""
    graph = import_kernel(NAIVE)
    seen = graph_for_launch(graph, dict(graph.variables, loop1=1024), block_size=(16, 16))
    a_loads = [ins for ins in seen.graph.instructions.values()
               if ins.space == "global" and ins.is_load and "ctaid.y" in ins.address
               and "ctaid.x" not in ins.address]
    b_loads = [ins for ins in seen.graph.instructions.values()
               if ins.space == "global" and ins.is_load and "ctaid.x" in ins.address]
    assert a_loads and b_loads
    assert {ins.lines_per_request for ins in a_loads} == {2.0}
    assert {ins.lines_per_request for ins in b_loads} <= {0.0, 1.0}
    assert all(ins.lines_per_request == 0.0 for ins in graph.instructions.values())
    from gpumodeler.core.kernel.graph import to_dict
    assert "lines_per_request" not in str(to_dict(seen.graph))
    # the unrolled body's 16 k: 16 × (2 + 1) cycles of the L1's data stage a trip
    c = count(seen.graph).evaluate(dict(seen.graph.variables, **seen.values))
    assert c["l1_wavefronts"] >= 1024 * 3


@pytest.mark.parametrize("bad", [-1.0, 33.0, float("nan")])
def test_lines_per_request_is_checked(bad):
    from gpumodeler.core.kernel.graph_items import Instruction
    from gpumodeler.core.errors import GraphError
    with pytest.raises(GraphError, match="lines per request|finite"):
        Instruction.make("ld", "LDG.E", unit="ldst", space="global", is_load=True,
                         lines_per_request=bad).validate()
