"""`predict --block-size DxxDy` and `graph --block-size`: a block narrower than a warp changes
what an imported kernel's memory accesses cost (resources/kernels/src/block2d.cu)."""
from pathlib import Path

from gpumodeler.cli.main import main
from in_process import cli, cli_json

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def imported(tmp_path, capsys, function):
    path = tmp_path / f"{function}.json"
    assert main(["kernel", "import", str(SASS / "block2d.sm_80.sass"), "--function", function,
                 "-o", str(path)]) == 0
    capsys.readouterr()
    return path


def test_graph_shows_the_sectors_of_the_given_block(tmp_path, capsys):
    cols = imported(tmp_path, capsys, "copy2d_cols")
    flat = cli_json(capsys, "graph", cols)
    square = cli_json(capsys, "graph", cols, "--block-size", "16x16")
    load = lambda out: next(a for a in out["memory_accesses"]
                            if a["space"] == "global" and a["opcode"].startswith("LDG"))
    assert square["block_size"] == [16, 16, 1]
    assert load(flat)["sectors_per_request"] == 2 * load(square)["sectors_per_request"]
    assert square["per_warp"]["gmem_bytes"] < flat["per_warp"]["gmem_bytes"]
    assert any("sectors per request" in n for n in square["memory_notes"])


def test_predict_of_a_narrow_block_reads_columns_faster_and_says_why(tmp_path, capsys):
    cols = imported(tmp_path, capsys, "copy2d_cols")
    launch = ["--device", "A100", "--grid-size", "64x64", "--registers", 16]
    wide = cli_json(capsys, "predict", "--graph", cols, "--block-size", "256x1", *launch)
    narrow = cli_json(capsys, "predict", "--graph", cols, "--block-size", "16x16", *launch)
    shape_notes = lambda out: [n for n in out["memory_notes"] if "sectors per request" in n]
    assert shape_notes(wide) == [] and shape_notes(narrow)
    assert narrow["kernel_time_s"] < wide["kernel_time_s"]
    assert main(["predict", "--graph", str(cols), "--block-size", "16x16", *map(str, launch)]) == 0
    assert "memory: " in capsys.readouterr().out


def test_predict_of_row_reads_four_wide_moves_twice_the_sectors(tmp_path, capsys):
    rows = imported(tmp_path, capsys, "copy2d_rows")
    launch = ["--device", "A100", "--grid-size", "64x64", "--registers", 16]
    wide = cli_json(capsys, "predict", "--graph", rows, "--block-size", "32x8", *launch)
    thin = cli_json(capsys, "predict", "--graph", rows, "--block-size", "4x64", *launch)
    assert thin["cycles_per_warp"]["memory"] == 2 * wide["cycles_per_warp"]["memory"]


def test_sweep_takes_one_block_shape_as_predict_does(tmp_path, capsys):
    # rows read 4 wide: the shape doubles the sectors, and no warp of a block re-reads
    # another's (the CLI sweep applies the shape only, not the reuse predict adds)
    rows = imported(tmp_path, capsys, "copy2d_rows")
    launch = ["--device", "A100", "--grid-size", 4096, "--registers", 16]

    def sweep_time(block):
        out = tmp_path / "s.csv"
        assert main(["sweep", "--graph", str(rows), "--block-size", block, *map(str, launch),
                     "-o", str(out)]) == 0
        capsys.readouterr()
        header, row = out.read_text().splitlines()[:2]
        return float(dict(zip(header.split(","), row.split(",")))["kernel_time_s"])

    thin = cli_json(capsys, "predict", "--graph", rows, "--block-size", "4x64", *launch)
    assert sweep_time("4x64") == thin["kernel_time_s"]
    assert sweep_time("4x64") > sweep_time("256")


def test_sweep_refuses_a_list_of_block_shapes(capsys):
    code, _, err = cli(capsys, "sweep", "--latency-bound", "100", "--issued-instructions", "10",
                       "--device", "A100", "--grid-size", "100", "--occupancy", "32",
                       "--block-size", "16x16,8x8")
    assert code == 2
    err = err.strip().splitlines()
    assert len(err) == 1 and "one value like 16x16" in err[0]
