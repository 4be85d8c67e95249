"""`validate` predicts each row exactly as `predict --graph … --json` does for the same
inputs: the launch's guards, block shape, reuse across blocks and L2 fit come from one
function (core.kernel.sass.launch_memory), and the latency table from one rule."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpumodeler.core.validation import parse_csv
from in_process import cli, cli_json, main_json_once

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "resources" / "validation" / "volkov2016.csv"
SRC = ROOT / "resources" / "kernels" / "src"
HAVE_NVCC = bool(shutil.which("nvcc"))


def _size(v) -> str:
    return "x".join(str(d) for d in v) if isinstance(v, tuple) else str(v)


def predict_argv(run, graph) -> list:
    """`predict` flags of a validation row, ``graph`` the row's kernel graph."""
    argv = ["predict", "--graph", graph, "--device", run.device, "--block-size", _size(run.block)]
    argv += (["--grid-size", _size(run.grid)] if run.grid is not None
             else ["--data-size", run.data_size])
    if run.occupancy is not None:
        argv += ["--occupancy", run.occupancy]
    else:
        argv += ["--registers", run.registers, "--shared-mem", run.shared_bytes]
    if run.sm_clock_mhz is not None:
        argv += ["--sm-clock-mhz", run.sm_clock_mhz]
    for name, value in run.values.items():
        argv += ["--set", f"{name}={value:g}"]
    return argv


def test_every_row_of_the_shipped_set_is_what_predict_gives(gpumodeler_env, capsys):
    rows = main_json_once("validate", SET)["rows"]   # test_validate_peak_roofline reads it too
    runs = parse_csv(SET.read_text(encoding="utf-8"), str(SET))
    assert len(rows) == len(runs) >= 40
    for run, row in zip(runs, rows):
        assert row["line"] == run.line
        out = cli_json(capsys, *predict_argv(run, SET.parent / run.kernel))
        assert row["models"]["gajger"]["time_s"] == pytest.approx(out["kernel_time_s"], rel=1e-12), \
            f"line {run.line}"


@pytest.mark.skipif(not HAVE_NVCC, reason="nvcc is not installed")
@pytest.mark.usefixtures("compiled_once")   # validate and kernel import compile the same .cu
@pytest.mark.parametrize("source, function, grid, block, values", [
    # 2-D blocks of a tiled multiply: the block shape and the tiles other blocks read (L2)
    ("matmul_tiled.cu", "", "64x64", "16x16", "loop1=64"),
    # a 1-D launch of a stencil: its neighbours' re-reads
    ("access_patterns.cu", "stencil3", "4096", "256", ""),
])
def test_an_imported_cu_row_is_what_predict_gives(gpumodeler_env, capsys, tmp_path, source,
                                                  function, grid, block, values):
    shutil.copy(SRC / source, tmp_path / source)
    f = tmp_path / "v.csv"
    f.write_text("kernel,function,arch,device,grid,block,registers,set,measured,unit,family,source\n"
                 f"{source},{function},sm_80,A100 SXM4 40 GB,{grid},{block},32,{values},1,ms,"
                 f"matrix,test\n", encoding="utf-8")
    code, out, err = cli(capsys, "validate", f, "--json")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    graph = tmp_path / "g.json"
    extra = ["--function", function] if function else []
    assert cli(capsys, "kernel", "import", tmp_path / source, "--arch", "sm_80", *extra,
               "-o", graph)[0] == 0
    (run,) = parse_csv(f.read_text(encoding="utf-8"), str(f))
    predicted = cli_json(capsys, *predict_argv(run, graph))
    assert row["models"]["gajger"]["time_s"] == pytest.approx(predicted["kernel_time_s"], rel=1e-12)
    if block == "16x16":   # the launch's reuse applied: far below the graph's import-time bytes
        assert any("read by 64 blocks" in n for n in predicted["memory_notes"])
    # every other model reads its counts from the same launch graph as predict --model does
    others = cli_json(capsys, *predict_argv(run, graph), "--model", "all")["models"]
    for entry in others:
        mine = row["models"][entry["model"]]
        if "error" in entry:
            assert "error" in mine, entry["model"]
        else:
            assert mine["time_s"] == pytest.approx(entry["kernel_time_s"], rel=1e-12), entry["model"]
