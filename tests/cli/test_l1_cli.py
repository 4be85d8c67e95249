"""The L1 of the memory model through the CLI: `predict` and `graph --json` show the l1 row and
say what the L1 holds; `--l1-size` gives or replaces the GPU's L1 (core.kernel.sass.reuse)."""
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from in_process import cli, cli_json

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
N = 1024
LAUNCH = ["--block-size", "16x16", "--grid-size", f"{N // 16}x{N // 16}",
          "--set", f"loop1={N}"]


@pytest.fixture(scope="module")
def naive(tmp_path_factory):
    path = tmp_path_factory.mktemp("k") / "naive.json"
    assert main(["kernel", "import", str(SASS / "matmul_naive.sm_80.sass"), "-o", str(path)]) == 0
    return path


def test_predict_serves_a_naive_multiplys_re_read_rows_from_l1(naive, capsys):
    out = cli_json(capsys, "predict", "--graph", naive, "--device", "V100 SXM2 16GB",
                   "--table", "ampere-published", "--registers", 32, *LAUNCH)
    cycles = out["cycles_per_warp"]
    assert cycles["l1"] > 0 and cycles["l2"] > 0
    assert any(n.startswith("L1 1.311e+05 B per SM (after 0 B of shared memory)")
               for n in out["memory_notes"])  # a V100's 128 KB, no shared memory
    # a smaller L1 holds less of the reuse: more of it is L2 traffic, less L1
    small = cli_json(capsys, "predict", "--graph", naive, "--device", "V100 SXM2 16GB",
                     "--table", "ampere-published", "--registers", 32, "--l1-size", "16KiB",
                     *LAUNCH)
    # (the l1 row is the larger of the hits' bytes and the requests' lines, a cycle each: the
    # lines, two a request of this 16×16 block, set it at either size)
    assert small["cycles_per_warp"]["l1"] <= cycles["l1"]
    assert small["cycles_per_warp"]["l2"] > cycles["l2"]
    assert any("exceeds the L1" in n for n in small["memory_notes"])


def test_on_a_maxwell_gpu_the_re_read_rows_are_l2_traffic(naive, capsys):
    out = cli_json(capsys, "predict", "--graph", naive, "--device", "GTX 980",
                   "--table", "ampere-published", "--registers", 32, *LAUNCH)
    assert out["cycles_per_warp"]["l1"] == 0
    assert any("does not cache these loads on compute capability 5.2" in n
               for n in out["memory_notes"])


def test_graph_json_applies_the_launch_as_predict_does(naive, capsys):
    g = cli_json(capsys, "graph", naive, "--device", "A100", "--occupancy", 64, *LAUNCH)
    p = cli_json(capsys, "predict", "--graph", naive, "--device", "A100", "--occupancy", 64,
                 *LAUNCH)
    assert g["cycles_per_warp"] == p["cycles_per_warp"]
    assert g["per_warp"]["l1_bytes"] > 0
    assert any(a["l1_bytes_per_warp"] > 0 for a in g["memory_accesses"])
    assert any(n.startswith("L1 ") for n in g["memory_notes"])


@pytest.mark.parametrize("given", [
    ["--grid-size", "64x64"],                                     # no occupancy
    ["--grid-size", "64x64", "--occupancy", "64"],                # no block
    ["--occupancy", "64", "--block-size", "16x16"],               # no grid
])
def test_graph_refuses_a_launch_it_cannot_apply(naive, capsys, given):
    code, out, err = cli(capsys, "graph", naive, "--device", "A100", *given)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and "--grid-size and --occupancy" in err


def test_l2_size_gives_or_replaces_the_gpus_l2(naive, capsys):
    """`--l2-size` gives the L2 the reuse is held against: a small one makes the wave's
    footprint exceed it (more DRAM traffic); on a GPU whose L2 size the database lacks, no
    reuse is credited and the note names the flag."""
    base = cli_json(capsys, "predict", "--graph", naive, "--device", "A100", "--occupancy", 64,
                    *LAUNCH)
    small = cli_json(capsys, "predict", "--graph", naive, "--device", "A100", "--occupancy", 64,
                     "--l2-size", "64KiB", *LAUNCH)
    assert any("exceeds the L2" in n for n in small["memory_notes"])
    assert small["cycles_per_warp"]["memory"] > base["cycles_per_warp"]["memory"]
    unknown = cli_json(capsys, "predict", "--graph", naive, "--device", "GeForce GTX 1080",
                       "--table", "ampere-published", "--occupancy", 64, *LAUNCH)
    assert any("L2 size unknown" in n and "--l2-size" in n for n in unknown["memory_notes"])
    given = cli_json(capsys, "predict", "--graph", naive, "--device", "GeForce GTX 1080",
                     "--table", "ampere-published", "--occupancy", 64, "--l2-size", "50MiB",
                     *LAUNCH)
    assert not any("L2 size unknown" in n for n in given["memory_notes"])
    assert given["cycles_per_warp"]["memory"] < unknown["cycles_per_warp"]["memory"]


def test_l2_size_refuses_a_bad_value(naive, capsys):
    code, out, err = cli(capsys, "predict", "--graph", naive, "--device", "A100",
                         "--occupancy", 64, "--l2-size", "lots", *LAUNCH)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert "--l2-size" in err
