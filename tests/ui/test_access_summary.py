"""The kernel editor's memory-access line (properties._access_summary): DRAM and L2 bytes per
warp of an imported stencil neighbour (resources/kernels/src/access_patterns.cu)."""
from pathlib import Path

from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.warp_counts import access_cost
from gpumodeler.ui.kernel_editor.properties import _access_summary

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def test_a_neighbour_load_shows_what_the_l2_serves():
    g = import_kernel(SASS / "access_patterns.sm_80.sass", "stencil3")
    loads = [i for i in g.instructions.values() if i.space == "global" and i.is_load]
    reused = next(i for i in loads if i.hit_ratio > 0)
    text = _access_summary(reused)
    cost = access_cost(reused)
    assert f"{cost['l2_bytes_per_warp']:g} B per warp from L2" in text
    assert cost["l2_bytes_per_warp"] + cost["bytes_per_warp"] == cost["sectors_per_request"] * 32
    first = next(i for i in loads if i.hit_ratio == 0)
    assert "from L2" not in _access_summary(first)


def test_a_wide_shared_access_shows_its_wavefronts_and_its_conflict():
    from gpumodeler.core.kernel.graph_items import Instruction
    plain = Instruction.make("a", "LDS.128", width_bytes=16, bank_conflict_degree=4)
    assert "4 wavefront(s) per request, no bank conflict" in _access_summary(plain)
    # every other double: 4 wavefronts where consecutive doubles take 2
    strided = Instruction.make("b", "LDS.64", width_bytes=8, bank_conflict_degree=4)
    assert "4 wavefront(s) per request, 2-way bank conflict" in _access_summary(strided)
    assert access_cost(strided)["bank_conflict_ways"] == 2
