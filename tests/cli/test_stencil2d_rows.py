"""2-D stencils (resources/kernels/src/stencil2d.cu): the loads of the rows above and below,
``in[i ± nx]``, read what the threads a row away read as their own point; the import groups
them with that point's load (docs/sass-import.md, "Rows"), and a launch splits their repeats
between the block's own rows (L1 from Volta on) and the neighbouring block's (L2), so the
DRAM row is about a copy's on every architecture, not 1.6-2x it."""
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from in_process import cli_json

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
GRIDS = {"32x8": "128x512", "256x1": "16x4096", "16x16": "256x256"}


def imported(tmp_path, capsys, listing, function):
    path = tmp_path / f"{listing}.{function}.json"
    assert main(["kernel", "import", str(SASS / listing), "--function", function,
                 "-o", str(path)]) == 0
    capsys.readouterr()
    return path


def predict(capsys, graph, device, block, *extra):
    return cli_json(capsys, "predict", "--graph", graph, "--device", device,
                    "--grid-size", GRIDS[block], "--block-size", block, "--occupancy", 32,
                    *extra)


@pytest.mark.parametrize("arch", ["sm_52", "sm_61", "sm_75", "sm_80", "sm_86", "sm_90"])
@pytest.mark.parametrize("function, rows", [("jacobi5", {-1, 1}), ("box9", {1})])
def test_the_rows_above_and_below_are_grouped_with_the_point(tmp_path, capsys, arch, function,
                                                               rows):
    graph = imported(tmp_path, capsys, f"stencil2d.{arch}.sass", function)
    out = cli_json(capsys, "graph", graph, "--json")
    loads = [a for a in out["memory_accesses"] if a["space"] == "global"
             and a["opcode"].startswith("LDG")]
    row_loads = [a for a in loads if " tid.y row" in a["address"]]
    assert row_loads and len(loads) == {"jacobi5": 5, "box9": 9}[function]
    assert {int(a["address"].split(" at ")[1].split()[0]) for a in row_loads} == rows
    # each charged nothing of DRAM at import: its columns were read by the point's loads
    assert all(a["bytes_per_warp"] == 0 for a in row_loads)


@pytest.mark.parametrize("device, listing", [("A100 SXM4 40 GB", "sm_80"),
                                             ("H100 SXM5 80 GB", "sm_90"),
                                             ("GeForce RTX 3080", "sm_86"),
                                             ("GeForce RTX 2060", "sm_75"),
                                             ("GeForce GTX 980", "sm_52")])
@pytest.mark.parametrize("function", ["jacobi5", "box9"])
def test_a_2d_stencil_moves_about_a_copys_dram_bytes(tmp_path, capsys, device, listing,
                                                     function):
    stencil = imported(tmp_path, capsys, f"stencil2d.{listing}.sass", function)
    got = predict(capsys, stencil, device, "32x8")["cycles_per_warp"]["memory"]
    # a copy's DRAM bytes: a warp's load and store of 128 bytes each
    want = predict(capsys, stencil, device, "32x8", "--gmem-bytes", 256)["cycles_per_warp"]["memory"]
    # the point's loads misaligned by a column: one sector more than the copy's four
    assert want <= got <= 1.15 * want


def test_the_rows_inside_the_block_come_from_l1_the_others_from_l2(tmp_path, capsys):
    graph = imported(tmp_path, capsys, "stencil2d.sm_80.sass", "jacobi5")
    notes = {block: predict(capsys, graph, "A100 SXM4 40 GB", block) for block in GRIDS}
    tall = notes["32x8"]["memory_notes"]
    # 7 of a 32x8 block's 8 rows above (and below) are its own: 87.5 % from L1
    assert sum("12.5% from L2, 87.5% from L1" in n for n in tall) == 2
    square = notes["16x16"]["memory_notes"]
    assert sum("6.2% from L2, 93.8% from L1" in n for n in square) == 2
    # one row a block: every row above and below is the neighbouring block's, from L2
    flat = notes["256x1"]
    assert flat["cycles_per_warp"]["l2"] > notes["32x8"]["cycles_per_warp"]["l2"]
    assert flat["cycles_per_warp"]["memory"] <= notes["32x8"]["cycles_per_warp"]["memory"]
