"""`sweep` and `project sweep`/`predict` with the kernel terms and `--model` overlays: each
row agrees with `predict --model NAME --json` for the same launch; a model that lacks a value
leaves empty cells and one stderr line naming the flag."""
import csv
import io
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = str(ROOT / "resources/kernels/saxpy2-maxwell.json")
PROJECT = str(ROOT / "resources/examples/saxpy2-gtx970.gpm")
K40 = ["--device", "Tesla K40", "--graph", SAXPY2, "--set", "a=128", "--block-size", "256",
       "--occupancy", "64"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def predict(capsys, grid, *extra):
    code, out, _ = run(capsys, "predict", *K40, "--grid-size", str(grid), "--model", "all", "--json", *extra)
    assert code == 0
    return {m["model"]: m for m in json.loads(out)["models"]}


@pytest.mark.parametrize("extra", [(), ("--tail",), ("--no-underfill",)])
def test_sweep_rows_equal_predict_per_model(capsys, extra):
    grids = [1, 36, 120, 2000]
    code, out, err = run(capsys, "sweep", *K40, "--grid-size", ",".join(map(str, grids)),
                         "--model", "all", "--format", "json", *extra)
    assert code == 0
    rows = json.loads(out)
    assert [r["grid_size"] for r in rows] == grids
    # one line for the model that lacks a value, naming its flag
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "volkov-contention" in lines[0] and "--contention-b" in lines[0]
    assert "4 point(s)" in lines[0]
    for row in rows:
        ref = predict(capsys, row["grid_size"], *extra)
        assert row["time_s_volkov-contention"] is None
        for m in ("gajger", "mwp-cwp", "bsp", "roofline"):
            assert row[f"time_s_{m}"] == pytest.approx(ref[m]["kernel_time_s"], rel=1e-12)
        assert row["kernel_time_s"] == pytest.approx(ref["gajger"]["kernel_time_s"], rel=1e-12)
        applied = [t for t in ref["gajger"]["terms"] if t["applied"]]
        assert bool(row["terms"]) == bool(applied)
        if applied:
            assert row["terms"].startswith(applied[0]["name"])
    if not extra:
        assert rows[1]["terms"].startswith("under-filled GPU: +")  # 36 blocks on 15 SMs
        assert rows[3]["terms"] == ""
    if extra == ("--tail",):
        assert rows[3]["terms"].startswith("tail effect: +")


def test_sweep_model_columns_in_csv_and_the_contention_flags(capsys):
    code, out, err = run(capsys, "sweep", *K40, "--grid-size", "36,2000", "--model", "volkov-contention,roofline",
                         "--contention-b", "300", "--contention-c", "250e9")
    assert code == 0 and err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]).count("time_s_volkov-contention") == 1 and "time_s_gajger" not in rows[0]
    ref = predict(capsys, 2000, "--contention-b", "300", "--contention-c", "250e9")
    assert float(rows[1]["time_s_volkov-contention"]) == pytest.approx(
        ref["volkov-contention"]["kernel_time_s"], rel=1e-12)


def test_sweep_model_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", *K40, "--grid-size", "10", "--model", "nonsense"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "unknown model 'nonsense'" in err and len(err.strip().splitlines()) == 1


def test_sweep_without_models_has_the_terms_column_and_eq_4_1_from_one_wave(capsys):
    code, out, _ = run(capsys, "sweep", *K40, "--grid-size", "120,240", "--format", "json")
    rows = json.loads(out)
    assert all(r["terms"] == "" for r in rows)  # 120 blocks = one wave of 8 per SM
    assert rows[1]["kernel_time_s"] == pytest.approx(2 * rows[0]["kernel_time_s"], rel=1e-12)


def test_project_sweep_overlays_models_and_terms(capsys):
    code, out, err = run(capsys, "project", "sweep", PROJECT, "--variable", "data_size",
                         "--values", "1000,400000000", "--model", "all", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert rows[0]["terms"].startswith("under-filled GPU: +")  # 4 blocks on 13 SMs
    assert rows[1]["terms"] == ""
    for r in rows:
        assert r["time_s_gajger"] == r["kernel_time_s"]
        assert r["time_s_volkov-contention"] is None
        assert r["time_s_mwp-cwp"] > 0 and r["time_s_bsp"] > 0 and r["time_s_roofline"] > 0
    assert len(err.strip().splitlines()) == 1 and "--contention-b" in err
    code, out, _ = run(capsys, "project", "sweep", PROJECT, "--variable", "data_size",
                       "--values", "1000", "--no-underfill", "--format", "json")
    assert json.loads(out)[0]["terms"] == ""
    assert json.loads(out)[0]["kernel_time_s"] < rows[0]["kernel_time_s"]


def test_project_predict_shows_the_terms(capsys):
    code, out, _ = run(capsys, "project", "predict", PROJECT, "--json")
    launch = json.loads(out)["launches"][0]
    assert code == 0 and launch["kernel_time_s"] == launch["eq_4_1_time_s"]  # a full grid: eq. 4.1
    assert any(t.startswith("under-filled GPU: off") for t in launch["terms"])
    code, out, _ = run(capsys, "project", "predict", PROJECT, "--tail", "--launch-overhead", "5us")
    assert "terms: tail effect: +" in out and "launch overhead: +" in out
