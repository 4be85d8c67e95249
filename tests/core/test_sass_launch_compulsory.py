"""graph_for_launch(..., compulsory=True): the one-line roofline's bytes, each footprint of
the grid from DRAM once, whatever the L2's size or whether its bandwidth is known."""
from pathlib import Path

import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
from gpumodeler.core.kernel.warp_counts import count

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
N = 1024
GRID = (N // 16, N // 16)


def dram_bytes(graph, values, gpu, compulsory):
    """DRAM bytes over the grid of an N × N multiply with 16 × 16 blocks (8 warps each)."""
    seen = graph_for_launch(graph, dict(graph.variables, **values), block_size=(16, 16),
                            gpu=gpu, grid_size=GRID, occupancy=64.0, compulsory=compulsory)
    c = count(seen.graph).evaluate(dict(seen.graph.variables, **seen.values))
    return c["gmem_bytes"] * GRID[0] * GRID[1] * 8


@pytest.mark.parametrize("name, values", [
    ("matmul_naive.sm_80.sass", {"loop1": N}),                        # the source trip count
    ("matmul_tiled.sm_80.sass", {"loop1": N // 16}),                  # 16 × 16 tiles
])
@pytest.mark.parametrize("l2_bytes", [2 ** 20, 40 * 2 ** 20, None])
@pytest.mark.parametrize("l2_bandwidth", [None, 2e12])
def test_compulsory_bytes_are_each_matrix_once(name, values, l2_bytes, l2_bandwidth):
    """A and B read once and C written once: 3 N² floats (within 1 %: the naive kernel's
    footprint edges), where the modelled DRAM bytes grow when the L2 is small or unknown."""
    g = import_kernel(SASS / name)
    gpu = GPUSpec("a100-like", "8.0", sms=108, sm_clock_hz=1.41e9, l2_bytes=l2_bytes,
                  l2_bandwidth_bytes_per_s=l2_bandwidth)
    unique = 3 * 4 * N * N
    assert dram_bytes(g, values, gpu, compulsory=True) == pytest.approx(unique, rel=0.01)
    modelled = dram_bytes(g, values, gpu, compulsory=False)
    assert modelled >= unique * 0.999
    if l2_bytes != 40 * 2 ** 20:   # 1 MB holds no wave's working set; None: no reuse at all
        assert modelled > 1.9 * unique
