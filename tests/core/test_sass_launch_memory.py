"""One launch's view of an imported graph (core.kernel.sass.launch_memory): the guards'
warps per block, the block shape and the reuse across blocks, in that order."""
from pathlib import Path

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
from gpumodeler.core.kernel.sass.launch_shape import shaped_graph
from gpumodeler.core.kernel.sass.reuse import reuse_graph

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
GPU = GPUSpec("a100-like", "8.0", sms=108, sm_clock_hz=1.41e9, l2_bytes=40 * 2 ** 20)


def test_shape_then_reuse_as_the_two_steps_give_them():
    g = import_kernel(SASS / "matmul_tiled.sm_80.sass")
    values = {"loop1": 64}
    got = graph_for_launch(g, values, block_size=(16, 16), gpu=GPU, grid_size=(64, 64),
                           occupancy=64.0)
    shaped, shape_notes = shaped_graph(g, (16, 16), 32)
    want, report = reuse_graph(shaped, grid_size=(64, 64), warps_per_block=8, blocks_per_sm=8,
                               sms=108, l2_bytes=GPU.l2_bytes, values=values,
                               l2_bounded=False)
    assert got.graph is not g
    for nid, ins in want.instructions.items():
        assert got.graph.instructions[nid] == ins
    assert list(got.notes) == shape_notes + report.notes() + [
        "L2 bandwidth unknown for this GPU: the L2 hits are not bounded (l2 row 0) and the "
        "reuse within a block that no L1 keeps is charged to DRAM (give --l2-bandwidth B/S)"]
    assert any("read by 64 blocks" in n for n in got.notes)
    assert values == {"loop1": 64}   # the caller's values are not changed


def test_without_a_gpu_only_the_block_shape_applies():
    g = import_kernel(SASS / "matmul_tiled.sm_80.sass")
    got = graph_for_launch(g, {"loop1": 64}, block_size=(16, 16))
    shaped, notes = shaped_graph(g, (16, 16), 32)
    assert list(got.notes) == notes
    assert {n: i.hit_ratio for n, i in got.graph.instructions.items()} == \
        {n: i.hit_ratio for n, i in shaped.instructions.items()}


def test_a_1d_launch_of_a_warp_multiple_without_reuse_keeps_the_graph():
    g = import_kernel(SASS / "access_patterns.sm_80.sass", "copy_rows")
    got = graph_for_launch(g, {}, block_size=256)
    assert got.graph is g and got.notes == ()


def test_the_guards_warps_per_block_come_from_the_launch():
    g = import_kernel(SASS / "matmul_tiled.sm_80.sass")
    g.variables["warps_per_block"] = 1.0
    assert graph_for_launch(g, {}, block_size=(16, 16)).values["warps_per_block"] == 8
    given = graph_for_launch(g, {"warps_per_block": 3}, block_size=(16, 16))
    assert given.values["warps_per_block"] == 3
