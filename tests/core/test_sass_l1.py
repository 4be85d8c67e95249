"""Reuse within a block and the SM's L1 (core.kernel.sass.reuse, at launch time): which global
loads the L1 caches, the naive matrix multiply's re-read rows, the L1 fit and its fall-back to
L2, and the worksheet's l1 row."""
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import FormatError
from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
from gpumodeler.core.kernel.sass.launch_shape import block_reuse
from gpumodeler.core.kernel.sass.reuse import l1_caches
from gpumodeler.core.kernel.warp_counts import count
from gpumodeler.core.models.throughput import throughput_bound
from gpumodeler.db.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
N = 1024


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db",
                 shipped_db=ROOT / "devices.db") as c:
        yield c


@pytest.fixture(scope="module")
def naive():
    return import_kernel(SASS / "matmul_naive.sm_80.sass")


def traffic(graph, gpu, block=(16, 16), n=N, occupancy=64.0, **kw):
    """({count: bytes over the grid} for gmem/l2/l1, the launch view) of an n×n multiply.
    nvcc and ptxas unroll the k loop 16 times (loop1), with a 4-times unrolled remainder
    (loop2) and the n mod 4 last iterations (loop3), all three counted by loop1 = n, the
    source loop's trip count."""
    grid = (n // block[0], n // block[1])
    seen = graph_for_launch(graph, dict(graph.variables, loop1=n),
                            block_size=block,
                            gpu=gpu, grid_size=grid, occupancy=occupancy, **kw)
    c = count(seen.graph).evaluate(dict(seen.graph.variables, **seen.values))
    warps = grid[0] * grid[1] * (block[0] * block[1] // 32)
    return {k: c[k] * warps for k in ("gmem_bytes", "l2_bytes", "l1_bytes")}, seen


@pytest.mark.parametrize("opcode, cc, cached", [
    ("LDG.E", "7.0", True), ("LDG.E.SYS", "7.5", True), ("LDG.E.64", "9.0", True),
    ("LDG.E.CONSTANT", "8.0", True), ("LDG.E.EF", "8.6", True), ("LDG.E.LU", "9.0", True),
    ("LDG.E.STRONG.GPU", "8.0", False), ("LDG.E.STRONG.SYS", "7.0", False),
    ("LDG.E.CG", "8.0", False), ("LDG.E.STRONG.SM", "8.0", True),
    ("LDG.E", "6.0", True),                    # GP100 caches global loads by default
    ("LDG.E", "5.2", False), ("LDG.E", "6.1", False),
    ("LDG.E.CI", "5.2", True), ("LDG.E.CA", "6.1", True), ("TEX.B", "5.0", True),
    ("LDG.E", "3.5", None), ("LDG.E", None, None), ("LDG.E", "x.y", None),
])
def test_which_global_loads_the_l1_caches(opcode, cc, cached):
    assert l1_caches(opcode, cc) is cached


def test_block_reuse_is_the_share_of_sectors_another_warp_of_the_block_touches(naive):
    a = next(i for i in naive.instructions.values() if i.address.startswith("c[0x0][0x160]"))
    b = next(i for i in naive.instructions.values() if i.address.startswith("c[0x0][0x168]"))
    # B[k·n + col] has no tid.y: the 8 warps of a 16×16 block read the same 2 sectors
    assert block_reuse(b, (16, 16, 1)) == pytest.approx(7 / 8)
    # A[row·n + k]: each warp its own 2 rows; along x, every warp reads the one row
    assert block_reuse(a, (16, 16, 1)) == 0
    assert block_reuse(a, (256, 1, 1)) == pytest.approx(7 / 8)
    assert block_reuse(b, (256, 1, 1)) == 0


@pytest.mark.parametrize("volta_plus", ["Tesla V100 SXM2 16 GB", "A100 SXM4 40 GB",
                                        "H100 SXM5 80 GB"])
def test_a_naive_multiply_moves_less_l2_traffic_on_volta_and_later(catalog, naive, volta_plus):
    """The rows a block's warps re-read are L1 hits on Volta and later; a Maxwell GPU
    caches plain LDG.E loads in L2 only, so they are L2 traffic there."""
    new = catalog.get(volta_plus).to_gpu_spec()
    maxwell = catalog.get("GeForce GTX 980").to_gpu_spec()
    # the same L2 and SMs on both, so that only the L1 differs
    maxwell = replace(maxwell, sms=new.sms, l2_bytes=new.l2_bytes,
                      l2_bandwidth_bytes_per_s=new.l2_bandwidth_bytes_per_s)
    on_new, seen = traffic(naive, new)
    on_maxwell, _ = traffic(naive, maxwell)
    assert on_maxwell["l1_bytes"] == 0 < on_new["l1_bytes"]
    assert on_new["l2_bytes"] < on_maxwell["l2_bytes"]
    assert on_new["gmem_bytes"] == pytest.approx(on_maxwell["gmem_bytes"])
    assert sum(on_new.values()) == pytest.approx(sum(on_maxwell.values()))
    assert any(n.startswith("L1 ") for n in seen.notes)
    assert any("from L1" in n for n in seen.notes)


def test_on_maxwell_loads_marked_for_the_l1_use_it(catalog, naive):
    gm204 = catalog.get("GeForce GTX 980").to_gpu_spec()
    assert gm204.l1_bytes_per_sm == 24 * 1024  # the L1/texture cache, beside the shared memory
    plain, seen = traffic(naive, gm204)
    assert plain["l1_bytes"] == 0
    assert any("does not cache these loads on compute capability 5.2" in n for n in seen.notes)
    ci = naive.copy()
    for nid, ins in naive.instructions.items():
        if ins.opcode == "LDG.E":
            ci.instructions[nid] = replace(ins, opcode="LDG.E.CI")
    marked, marked_seen = traffic(ci, gm204)
    assert marked["l1_bytes"] > 0 and marked["l2_bytes"] < plain["l2_bytes"]
    # before Volta the shared memory is an array of its own: it leaves the L1 whole
    shared, _ = traffic(ci, gm204, shared_bytes_per_block=12 * 1024)
    assert shared == marked
    assert any("after 0 B of shared memory" in n for n in marked_seen.notes)


def test_a_footprint_larger_than_the_l1_falls_back_to_l2(naive):
    def gpu(l1):
        return GPUSpec("v100-like", "7.0", sms=80, l2_bytes=6 * 2 ** 20, l1_bytes_per_sm=l1)
    fits, big_seen = traffic(naive, gpu(16 * 2 ** 20))
    small, seen = traffic(naive, gpu(8 * 1024))
    none, _ = traffic(naive, gpu(None))
    assert not any("exceeds the L1" in n for n in big_seen.notes)
    assert any("exceeds the L1" in n and "falls back to L2" in n for n in seen.notes)
    assert 0 < small["l1_bytes"] < fits["l1_bytes"]
    assert fits["l2_bytes"] < small["l2_bytes"] < none["l2_bytes"]
    assert none["l1_bytes"] == 0
    # the proportional fit (the resident blocks read about 24.6 KB per trip): half the L1
    # keeps half the reuse within a block
    assert any("2.458e+04 B per loop trip" in n for n in seen.notes)
    half, _ = traffic(naive, gpu(16 * 1024))
    assert small["l1_bytes"] == pytest.approx(half["l1_bytes"] / 2, rel=1e-9)
    assert any("L1 size unknown" in n for n in traffic(naive, gpu(None))[1].notes)


def test_the_shared_memory_carve_out_leaves_less_l1(naive):
    gpu = GPUSpec("v100-like", "7.0", sms=80, l2_bytes=6 * 2 ** 20,
                  l1_bytes_per_sm=128 * 1024)
    free, _ = traffic(naive, gpu, shared_bytes_per_block=0)
    carved, seen = traffic(naive, gpu, shared_bytes_per_block=14 * 1024)  # 16 KB left
    full, _ = traffic(naive, gpu, shared_bytes_per_block=16 * 1024)  # 8 blocks: all of it
    assert free["l1_bytes"] > carved["l1_bytes"] > full["l1_bytes"] == 0
    assert any("after 1.147e+05 B of shared memory" in n for n in seen.notes)


@pytest.mark.parametrize("function", ["copy_rows", "copy_cols"])
def test_a_kernel_without_reuse_is_unchanged(catalog, function):
    g = import_kernel(SASS / "access_patterns.sm_80.sass", function)
    gpu = catalog.get("A100 SXM4 40 GB").to_gpu_spec()
    seen = graph_for_launch(g, dict(g.variables), block_size=256, gpu=gpu, grid_size=4096,
                            occupancy=64.0)
    assert seen.graph is g
    assert all(i.l1_hit_ratio == 0 for i in seen.graph.instructions.values())


def test_the_l1_row_is_the_l1_bytes_at_the_l1s_bytes_per_clock(catalog):
    a100 = catalog.get("A100 SXM4 40 GB").to_gpu_spec()
    assert a100.l1_bytes_per_cycle_per_sm == 128 and a100.l1_bytes_per_sm == 192 * 1024
    tb = throughput_bound(a100, issued_instructions=1.0, l1_bytes=4096.0)
    assert tb.cycles_per_warp["l1"] == pytest.approx(4096 / 128)
    assert tb.binding == "l1"
    unknown = throughput_bound(replace(a100, l1_bytes_per_cycle_per_sm=None),
                               issued_instructions=1.0, l1_bytes=4096.0)
    assert unknown.cycles_per_warp["l1"] == 0


def test_the_l1_share_is_launch_time_only(naive):
    gpu = GPUSpec("a100-like", "8.0", sms=108, l2_bytes=40 * 2 ** 20,
                  l1_bytes_per_sm=192 * 1024)
    _, seen = traffic(naive, gpu)
    assert any(i.l1_hit_ratio > 0 for i in seen.graph.instructions.values())
    written = to_dict(seen.graph)
    assert not any("l1_hit_ratio" in d for d in written["instructions"])
    again = from_dict(written)
    assert all(i.l1_hit_ratio == 0 for i in again.instructions.values())
    written["instructions"][0]["l1_hit_ratio"] = 0.5
    with pytest.raises(FormatError, match="l1_hit_ratio"):
        from_dict(written)


def test_a_hit_ratio_set_by_hand_on_a_load_without_address_stays_l2():
    from gpumodeler.core.kernel.graph import KernelGraph
    from gpumodeler.core.kernel.graph_items import Instruction
    from gpumodeler.core.kernel.sass.reuse import reuse_graph
    g = KernelGraph(name="hand")
    g.add_instruction(Instruction.make("ld", "LDG.E", hit_ratio=0.5))
    out, report = reuse_graph(g, grid_size=1024, warps_per_block=8, blocks_per_sm=8, sms=80,
                              l2_bytes=6 * 2 ** 20, compute_capability="7.0",
                              l1_bytes_per_sm=128 * 1024)
    assert out.instructions["ld"].l1_hit_ratio == 0
    assert out.instructions["ld"].hit_ratio == 0.5
    assert not any("L1" in n for n in report.notes())


def test_without_an_l2_ceiling_the_reuse_within_a_block_stays_dram_traffic(catalog, naive):
    """A GPU whose L2 bandwidth is unknown (the GTX 980) does not credit the re-reads of a
    block's warps that no L1 keeps: they stay DRAM bytes, since as L2 hits nothing would
    bound them. Given an L2 bandwidth (--l2-bandwidth), they are L2 hits."""
    maxwell = catalog.get("GeForce GTX 980").to_gpu_spec()
    assert maxwell.l2_bandwidth_bytes_per_s is None
    unbounded, _ = traffic(naive, maxwell)
    bounded, _ = traffic(naive, replace(maxwell, l2_bandwidth_bytes_per_s=1e12))
    assert unbounded["l1_bytes"] == bounded["l1_bytes"] == 0
    assert bounded["gmem_bytes"] < unbounded["gmem_bytes"] / 2
    assert bounded["l2_bytes"] > unbounded["l2_bytes"]
