"""`predict` on the public set's row-per-thread matrix-vector product (its sm_86 listing,
imported): the l1 row (a cycle per line of a request, Volta and later) binds, and the time
lands near nvbench's on every Ampere board, whose DRAM rates differ 2×
(docs/models.md, "The L1's data stage")."""
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from in_process import cli_json

MATVEC = (Path(__file__).resolve().parents[2] / "resources" / "validation" / "kernels"
          / "nvbench" / "matvec.sm_86.sass")
#: nvbench's cold GPU times of the 8192 × 8192 product, 16 blocks of 512 threads
#: (resources/validation/nvbench-pmpp.csv cites each)
MEASURED_S = {"GeForce RTX 3080": 2.2267e-3, "GeForce RTX 3060": 2.2748e-3,
              "GeForce RTX 3060 Ti": 2.2441e-3}


@pytest.fixture
def matvec(gpumodeler_env, tmp_path, capsys):
    path = tmp_path / "matvec.json"
    assert main(["kernel", "import", str(MATVEC), "-o", str(path)]) == 0
    capsys.readouterr()
    return path


@pytest.mark.parametrize("device", sorted(MEASURED_S))
def test_the_walk_is_bound_by_the_l1_lines_on_ampere(matvec, capsys, device):
    out = cli_json(capsys, "predict", "--graph", matvec, "--device", device,
                   "--grid-size", 16, "--block-size", 512, "--registers", 36,
                   "--set", "loop1=8192")
    assert out["binding_resource"] == "l1"
    lines = 8192 // 16 * 16 * 32  # a warp's trips × loads of its row × 32 lines each
    assert lines <= out["cycles_per_warp"]["l1"] < 1.05 * lines
    assert 0.9 < out["kernel_time_s"] / MEASURED_S[device] < 1.25


def test_on_maxwell_the_row_reads_zero_and_the_walk_stays_dram(matvec, capsys):
    out = cli_json(capsys, "predict", "--graph", matvec, "--device", "GTX 980",
                   "--grid-size", 16, "--block-size", 512, "--registers", 36,
                   "--set", "loop1=8192")
    assert out["cycles_per_warp"]["l1"] == 0
    assert any("not credited" in n for n in out["memory_notes"])


def test_a_warp_spanning_two_rows_touches_two_lines_though_its_stride_is_coalesced(
        gpumodeler_env, tmp_path, capsys):
    """A 16×16 block's warp copies two rows of 64 bytes: four sectors, as a coalesced
    request's, but in two 128-byte lines; a block 32 wide keeps one."""
    sass = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
    path = tmp_path / "copy.json"
    assert main(["kernel", "import", str(sass / "block2d.sm_80.sass"), "--function",
                 "copy2d_rows", "-o", str(path)]) == 0
    capsys.readouterr()
    for block, lines in (("16x16", 2), ("32x8", 1)):
        out = cli_json(capsys, "graph", path, "--block-size", block, "--json")
        got = [(a["sectors_per_request"], a["lines_per_request"])
               for a in out["memory_accesses"] if a["space"] == "global"]
        assert got == [(4.0, lines), (4.0, lines)], block
