"""`predict --graph` of an imported tiled matrix multiply: the tiles other blocks read come
from L2, and the output says what the L2 holds (core.kernel.sass.reuse)."""
from pathlib import Path

from gpumodeler.cli.main import main
from in_process import cli_json

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def test_predict_reads_the_shared_tiles_from_l2_and_says_so(tmp_path, capsys):
    path = tmp_path / "mm.json"
    assert main(["kernel", "import", str(SASS / "matmul_tiled.sm_80.sass"), "-o", str(path)]) == 0
    capsys.readouterr()
    n = 1024
    plain = cli_json(capsys, "graph", path, "--set", f"loop1={n // 16}", "--device", "A100")
    out = cli_json(capsys, "predict", "--graph", path, "--device", "A100",
                   "--grid-size", f"{n // 16}x{n // 16}", "--block-size", "16x16",
                   "--registers", 32, "--set", f"loop1={n // 16}")
    notes = out["memory_notes"]
    assert any("read by 64 blocks" in x for x in notes) and any("L2" in x for x in notes)
    # the loads' bytes fall from n/16 reads of each tile to about one
    assert out["cycles_per_warp"]["memory"] < plain["cycles_per_warp"]["memory"] / 10


def matmul_launch(tmp_path, capsys):
    """`predict` of the imported 1024×1024 tiled multiply on an A100, flags to add."""
    path = tmp_path / "mm.json"
    assert main(["kernel", "import", str(SASS / "matmul_tiled.sm_80.sass"), "-o", str(path)]) == 0
    capsys.readouterr()
    return ["predict", "--graph", path, "--device", "A100", "--grid-size", "64x64",
            "--block-size", "16x16", "--registers", 32, "--set", "loop1=64"]


def test_the_l2_hits_are_a_worksheet_row_at_the_l2_bandwidth(tmp_path, capsys):
    launch = matmul_launch(tmp_path, capsys)
    slow = cli_json(capsys, *launch, "--l2-bandwidth", "1T")
    fast = cli_json(capsys, *launch, "--l2-bandwidth", "4T")
    assert slow["cycles_per_warp"]["l2"] == 4 * fast["cycles_per_warp"]["l2"] > 0
    assert slow["cycles_per_warp"]["memory"] == fast["cycles_per_warp"]["memory"]
    term = next(t for t in slow["terms"] if t.startswith("working set in L2"))
    assert "replaced by the reuse model" in term


def test_working_set_sets_the_l2_fit_check(tmp_path, capsys):
    launch = matmul_launch(tmp_path, capsys)
    fits = cli_json(capsys, *launch)
    spills = cli_json(capsys, *launch, "--working-set", "1G")
    assert spills["cycles_per_warp"]["memory"] > 10 * fits["cycles_per_warp"]["memory"]
    assert any("falls back to DRAM" in n for n in spills["memory_notes"])
    assert any("--working-set" in n for n in spills["memory_notes"])


def test_a_stencil_predicts_about_a_copys_dram_time(tmp_path, capsys):
    """The 3-point stencil's block footprint fits an A100's L2: its DRAM row is within 15 %
    of a copy's, not 3/2 of it (its neighbours' re-reads, a few instructions apart in one
    warp, are served by an A100's L1, which caches global loads and holds them; its l1 row is
    the requests' lines, a cycle each: the copy's load and store one line each, the
    stencil's more)."""
    rows = {}
    for function in ("copy_rows", "stencil3"):
        path = tmp_path / f"{function}.json"
        assert main(["kernel", "import", str(SASS / "access_patterns.sm_80.sass"), "--function",
                     function, "-o", str(path)]) == 0
        capsys.readouterr()
        rows[function] = cli_json(capsys, "predict", "--graph", path, "--device", "A100",
                                  "--grid-size", 65536, "--block-size", 256, "--registers", 16)
    copy, stencil = (rows[f]["cycles_per_warp"] for f in ("copy_rows", "stencil3"))
    assert copy["memory"] <= stencil["memory"] <= 1.15 * copy["memory"]
    assert copy["l2"] == stencil["l2"] == 0
    assert copy["l1"] == 2 < stencil["l1"]
