"""A stencil's neighbour loads over the whole block (core.kernel.sass.reuse with
launch_shape.group_block_reuse): what the group moves from DRAM is the block's union of its
footprints, counted here lane by lane from the kernel's source; and a guarded load reads
what an unguarded load of the same array brings in the same warp (neighbours.reuse_hits)."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.reuse import reuse_graph
from gpumodeler.core.kernel.warp_counts import count

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
L2 = 40 * 2 ** 20
SMS = 108


def block_union_sectors(threads: int, points: int) -> int:
    """The 32-byte sectors block 0 of ``stencil<points>`` reads (access_patterns.cu: thread t
    reads in[t + d] for d = 0 … points − 1, relative to its first neighbour; the array
    128-byte aligned), element by element."""
    return len({(4 * (t + d)) // 32 for t in range(threads) for d in range(points)})


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
@pytest.mark.parametrize("points", [3, 5])
@pytest.mark.parametrize("threads", [64, 96, 256, 1024])
def test_a_stencil_moves_its_blocks_union_once(arch, points, threads):
    """Each warp touches one sector more than a copy's four (the neighbours spill into the
    next warp's first sector), which the next warp reads too: the block's loads move the
    union, ceil((4·(B + points − 1))/32) sectors, no more (the five sectors a warp charged
    in full) and no less (the shared one taken off the four of an aligned copy: below a
    copy, as before)."""
    g = import_kernel(SASS / f"access_patterns.{arch}.sass", f"stencil{points}")
    warps = -(-threads // 32)
    out, report = reuse_graph(g, grid_size=1 << 14, warps_per_block=warps, blocks_per_sm=2,
                              sms=SMS, l2_bytes=L2, compute_capability="8.0",
                              l1_bytes_per_sm=192 * 1024)
    assert report.trip_fit == 1
    loads = [nid for nid, ins in out.instructions.items()
             if ins.unit == "ldst" and ins.space == "global" and ins.is_load]
    assert len(loads) == points
    per_warp = count(out).evaluate(dict(out.variables))["gmem_bytes"]
    store = 128.0   # out[i]: one aligned request a warp
    assert per_warp - store == pytest.approx(32 * block_union_sectors(threads, points) / warps,
                                             rel=1e-9)
    assert 128.0 <= per_warp - store <= 1.15 * 128.0   # about a copy's read, never below


@pytest.mark.parametrize("arch", ["sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86",
                                  "sm_89", "sm_90", "sm_100", "sm_120"])
def test_a_halo_load_reads_what_the_main_load_brought(arch):
    """halo_stencil (thread_guards.cu): the left halo, ``in[g − 3]`` under
    ``threadIdx.x < 3``, reads sectors the block's main load ``in[g]`` touches in the same
    warp: served by the cache, wherever its guard's share; the main load, which runs in every
    warp, takes nothing from the halo (it runs in one warp in eight)."""
    path = SASS / f"thread_guards.{arch}.sass"
    if not path.exists():
        pytest.skip(f"no {arch} listing")
    g = import_kernel(path, "halo_stencil")
    loads = {nid: ins for nid, ins in g.instructions.items()
             if ins.unit == "ldst" and ins.space == "global" and ins.is_load}
    guarded = {m for guard in g.guards.values() for m in guard.members}
    main = [nid for nid in loads if nid not in guarded]
    halos = [nid for nid in loads if nid in guarded]
    assert len(main) == 1 and len(halos) == 2
    (m,) = main
    assert loads[m].hit_ratio == 0
    left = [h for h in halos if f"overlaps {m}" in loads[h].address]
    assert len(left) == 1 and loads[left[0]].hit_ratio == 1.0
