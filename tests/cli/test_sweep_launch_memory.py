"""`gpumodeler sweep` of an imported kernel: each row is the launch `predict` sees (guards,
block shape, reuse across and within blocks, L1 and L2 fit), so a sweep point and a
`predict` of the same launch give one time, for the default model and every --model column."""
import csv
import io
import json
from pathlib import Path

import pytest

from gpumodeler.cli import cmd_sweep
from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
VALIDATION = ROOT / "resources" / "validation" / "kernels"
KERNELS = ROOT / "resources" / "kernels"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys, tmp_path, listing, function=None):
    out = tmp_path / f"{listing.stem}.{function or 'k'}.json"
    extra = ("--function", function) if function else ()
    code, _, err = run(capsys, "kernel", "import", listing, *extra, "-o", out)
    assert code == 0, err
    return out


def sweep_rows(capsys, *argv):
    code, text, err = run(capsys, "sweep", *argv, "--format", "csv")
    assert code == 0, err
    return list(csv.DictReader(io.StringIO(text)))


def predicted(capsys, *argv) -> dict:
    code, text, err = run(capsys, "predict", *argv, "--json")
    assert code == 0, err
    return json.loads(text)


def test_an_uncoalesced_2d_block_sweep_equals_predict(capsys, tmp_path):
    """Matrix add with lanes a row apart in 16×16 blocks: the four warps that share each
    row's sectors are served by the L1 (a launch-time reuse). Without it the sweep charged
    every warp its 16 sectors: twice predict's time."""
    graph = imported(capsys, tmp_path, VALIDATION / "amaris" / "mau.sm_86.sass")
    grids = (1024, 16384, 262144)
    rows = sweep_rows(capsys, "--device", "RTX 3080", "--graph", graph, "--block-size", "16x16",
                      "--grid-size", ",".join(map(str, grids)), "--registers", "12")
    assert [int(r["grid_size"]) for r in rows] == list(grids)
    for row, grid in zip(rows, grids):
        one = predicted(capsys, "--device", "RTX 3080", "--graph", graph, "--block-size", "16x16",
                        "--grid-size", grid, "--registers", "12")
        assert float(row["kernel_time_s"]) == pytest.approx(one["kernel_time_s"], rel=1e-12)
        assert float(row["latency_bound"]) == pytest.approx(one["latency_bound_cycles"], rel=1e-12)


def test_a_convolution_sweep_over_blocks_grids_sms_and_loop_counts_equals_predict(capsys, tmp_path):
    """A 1-D convolution whose neighbour loads share sectors across a block's edges and whose
    wave's footprint decides the L2's share: every point of a product of block sizes, grid
    sizes, SM counts and mask widths is the launch predict gives, also in the --model
    columns (each model's kernel time as predict --model all has it)."""
    graph = imported(capsys, tmp_path, VALIDATION / "nvbench" / "conv1d.sm_86.sass", "conv_basic")
    rows = sweep_rows(capsys, "--device", "RTX 3080", "--graph", graph, "--block-size", "128,512",
                      "--grid-size", "64,4096,131072", "--sms", "34,68", "--set", "loop1=3,9",
                      "--model", "gajger,roofline,bsp")
    assert len(rows) == 2 * 2 * 3 * 2
    for row in rows:
        one = predicted(capsys, "--device", "RTX 3080", "--graph", graph,
                        "--block-size", row["block_size"], "--grid-size", row["grid_size"],
                        "--sms", row["sms"], "--set", f"loop1={float(row['loop1']):g}",
                        "--model", "all")
        models = {m["model"]: m.get("kernel_time_s") for m in one["models"]}
        assert float(row["kernel_time_s"]) == pytest.approx(models["gajger"], rel=1e-12)
        for m in ("roofline", "bsp"):
            assert float(row[f"time_s_{m}"]) == pytest.approx(models[m], rel=1e-12), m


def test_the_cache_sizes_given_reach_each_launch(capsys, tmp_path):
    """--l2-size and --l1-size change what each launch's reuse finds in the caches, in a
    sweep as in predict."""
    graph = imported(capsys, tmp_path, VALIDATION / "nvbench" / "conv1d.sm_86.sass", "conv_basic")
    common = ["--device", "RTX 3080", "--graph", graph, "--block-size", "512", "--set", "loop1=9",
              "--l2-size", "64KiB", "--l1-size", "1KiB"]
    rows = sweep_rows(capsys, *common, "--grid-size", "4096,131072")
    plain = sweep_rows(capsys, *common[:-4], "--grid-size", "4096,131072")
    for row, other in zip(rows, plain):
        one = predicted(capsys, *common, "--grid-size", row["grid_size"])
        assert float(row["kernel_time_s"]) == pytest.approx(one["kernel_time_s"], rel=1e-12)
        assert float(row["kernel_time_s"]) != pytest.approx(float(other["kernel_time_s"]), rel=1e-6)


def test_a_sweep_over_many_launches_of_an_imported_kernel_is_refused_before_any_row(
        capsys, tmp_path, monkeypatch):
    """Each distinct launch is evaluated for its reuse (milliseconds each), so their number
    is bounded: beyond it, one line that says so and no output written; points that share a
    launch (registers giving one occupancy) count once; a hand-drawn graph, whose memory no
    launch changes, is evaluated at once however many launches it has."""
    graph = imported(capsys, tmp_path, VALIDATION / "amaris" / "mau.sm_86.sass")
    monkeypatch.setattr(cmd_sweep, "MAX_LAUNCHES", 3)
    out = tmp_path / "sweep.csv"
    code, text, err = run(capsys, "sweep", "--device", "RTX 3080", "--graph", graph,
                          "--block-size", "256", "--grid-size", "10,20,30,40",
                          "--registers", "12", "-o", out)
    assert code == 2 and text == "" and not out.exists()
    assert err.count("\n") == 1 and "more than 3 distinct launches" in err
    assert "Traceback" not in err
    # 4 register counts, one occupancy: 3 launches
    rows = sweep_rows(capsys, "--device", "RTX 3080", "--graph", graph, "--block-size", "256",
                      "--grid-size", "10,20,30", "--registers", "8,10,12,16")
    assert len(rows) == 12 and len({r["occupancy"] for r in rows}) == 1
    rows = sweep_rows(capsys, "--device", "GTX 980", "--graph", KERNELS / "saxpy2-maxwell.json",
                      "--block-size", "256", "--grid-size", "1:50", "--occupancy", "32")
    assert len(rows) == 50
