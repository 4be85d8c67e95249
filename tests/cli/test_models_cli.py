"""`gpumodeler predict --model NAME|all`, the kernel-term flags and the sanity refusals."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = str(ROOT / "resources/kernels/saxpy2-maxwell.json")
K40_SAXPY2 = ["predict", "--device", "Tesla K40", "--graph", SAXPY2, "--set", "a=128", "--data-size", "4e8",
              "--block-size", "256", "--registers", "8"]
SM15 = ["--sms", "15", "--sm-clock-mhz", "1000", "--cuda-cores", "192", "--schedulers", "4",
        "--gmem-bytes-per-cycle", "20", "--block-size", "256", "--occupancy", "64",
        "--latency-bound", "1000", "--issued-instructions", "100"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_model_all_lists_five_models_and_the_spread(capsys):
    code, out, err = run(capsys, *K40_SAXPY2, "--model", "all", "--json")
    assert code == 0 and "Infinity" not in out and "NaN" not in out
    r = json.loads(out)
    assert [m["model"] for m in r["models"]] == ["gajger", "volkov-contention", "mwp-cwp", "bsp", "roofline"]
    times = {m["model"]: m["kernel_time_s"] for m in r["models"] if "kernel_time_s" in m}
    assert set(times) == {"gajger", "mwp-cwp", "bsp", "roofline"}
    # no contention fit for the K40 in any document: the entry says which flag gives it
    volkov = r["models"][1]
    assert volkov["needs"] == "--contention-b" and "Table 6.5" in volkov["error"]
    s = r["spread"]
    assert s["min_s"] == min(times.values()) and s["max_s"] == max(times.values())
    assert s["max_over_min"] == pytest.approx(s["max_s"] / s["min_s"]) and s["models"] == 4
    # the default model keeps today's number
    code, out, _ = run(capsys, *K40_SAXPY2, "--json")
    assert json.loads(out)["kernel_time_s"] == times["gajger"]
    # Sánchez Gil's measured 183.5 GB/s in mwp-cwp; Mem_LD the K40's constant DRAM latency
    # (Gajger Table 4.2, Kepler), as Hong & Kim's Mem_LD is: the launch is compute-bound
    mwp = r["models"][2]
    assert mwp["quantities"]["mem_bandwidth_bytes_per_s"] == 183.5e9
    assert mwp["quantities"]["Mem_LD"] == 300 and mwp["bound"] == "compute"
    # Sánchez Gil's eq. 7.1 (one address under contention) by name: latency-bound
    code, out, _ = run(capsys, *K40_SAXPY2, "--model", "mwp-cwp", "--json",
                       "--dram-latency-model", "sanchez-gil-7.1")
    named = json.loads(out)["models"][0]
    assert named["quantities"]["Mem_LD"] == pytest.approx(0.466 * 30720 - 1911.2)
    assert named["bound"] == "latency" and named["kernel_time_s"] > 4 * mwp["kernel_time_s"]


def test_contention_flags_complete_the_five(capsys):
    code, out, _ = run(capsys, *K40_SAXPY2, "--model", "all", "--json", "--contention-b", "32",
                       "--contention-c", "250GB/s")
    r = json.loads(out)
    assert code == 0 and r["spread"]["models"] == 5
    volkov = r["models"][1]
    # the graph gives the DRAM accesses on the critical path: saxpy2 loads x and y each iteration
    assert volkov["quantities"]["critical_dram_accesses"] > 0
    assert volkov["kernel_time_s"] >= r["models"][0]["kernel_time_s"] * 0  # computed
    text_code, text, _ = run(capsys, *K40_SAXPY2, "--model", "all", "--contention-b", "32",
                             "--contention-c", "250GB/s")
    assert text_code == 0 and "spread" in text and "max/min" in text
    for name in ("gajger", "volkov-contention", "mwp-cwp", "bsp", "roofline"):
        assert name in text


def test_one_model_that_lacks_an_input_is_one_line_exit_2(capsys):
    code, out, err = run(capsys, *K40_SAXPY2, "--model", "volkov-contention")
    assert code == 2 and "--contention-b" in err and err.count("\n") == 1


def test_under_filled_gpu_in_the_default_output(capsys):
    """36 blocks of 8 warps on 15 SMs: one wave of 3 blocks per SM, max(1000, 24·25) cycles."""
    code, out, _ = run(capsys, "predict", *SM15, "--grid-size", "36", "--json")
    r = json.loads(out)
    assert code == 0 and r["kernel_time_s"] == pytest.approx(1000 / 1e9)
    assert r["mode"] == "latency" and r["occupancy_limited_by_grid"] == 24
    assert any(t.startswith("under-filled GPU: +") for t in r["terms"])
    code, out, _ = run(capsys, "predict", *SM15, "--grid-size", "36")
    assert "under-filled GPU: +108 %" in out  # 1000 cycles against eq. 4.1's 480
    code, out, _ = run(capsys, "predict", *SM15, "--grid-size", "36", "--no-underfill", "--json")
    assert json.loads(out)["kernel_time_s"] == pytest.approx(480 / 1e9)


def test_tail_and_launch_overhead_flags(capsys):
    code, out, _ = run(capsys, "predict", *SM15, "--grid-size", "252", "--model", "gajger", "--tail",
                       "--launch-overhead", "5us", "--json")
    g = json.loads(out)["models"][0]
    assert g["kernel_time_s"] == pytest.approx(4200 / 1e9 + 5e-6)
    applied = {t["name"]: t for t in g["terms"] if t["applied"]}
    assert applied["tail effect"]["fraction"] == pytest.approx(4200 / 3360 - 1)
    assert applied["launch overhead"]["delta_s"] == pytest.approx(5e-6)
    code, out, _ = run(capsys, "predict", *SM15, "--grid-size", "252", "--model", "gajger", "--tail")
    assert "tail effect: +25 %" in out


@pytest.mark.parametrize("extra", [[], ["--json"], ["--model", "gajger", "--json"]])
def test_infinite_time_is_refused(capsys, extra):
    code, out, err = run(capsys, "predict", *SM15, "--grid-size", "100", "--lambda", "1e-320", *extra)
    assert code == 2 and out == "" and "not a finite positive time" in err and err.count("\n") == 1


def test_infinite_time_of_one_model_is_its_error_among_all(capsys):
    """Gajger's λ only scales the gajger model: the others still give their times."""
    code, out, err = run(capsys, "predict", *SM15, "--grid-size", "100", "--lambda", "1e-320",
                         "--model", "all", "--json")
    r = json.loads(out)
    assert code == 0 and "Infinity" not in out
    assert "not a finite positive time" in r["models"][0]["error"]
    assert r["spread"]["fastest"] != "gajger"


def test_time_below_the_peak_rate_floor_is_flagged(capsys):
    code, out, err = run(capsys, "predict", *SM15, "--grid-size", "1000", "--cuda-core-instructions", "100",
                         "--lambda", "50", "--json")
    assert code == 0 and "below" in err
    assert json.loads(out)["warnings"]


@pytest.mark.parametrize("argv, message", [
    ([*K40_SAXPY2[:-2], "--occupancy", "65"], "exceeds the maximum of compute capability 3.5 (64 warps per SM)"),
    (["predict", *SM15, "--grid-size", "10", "--model", "bsp", "--gmem-bytes", "128"], "--memory-instructions"),
])
def test_bad_model_input_exit_2_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_unknown_model_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([*K40_SAXPY2, "--model", "nope"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "unknown model 'nope'" in err and "roofline" in err


def test_sweep_row_with_an_infinite_time_says_why(capsys):
    flags = [f for f in SM15 if f not in ("--occupancy", "64")]
    code, out, err = run(capsys, "sweep", *flags, "--occupancy", "64", "--grid-size", "100",
                         "--lambda", "1e-320,1", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and "inf" not in out.lower().replace("info", "")
    assert rows[0]["kernel_time_s"] is None and "not finite" in rows[0]["error"]
    assert rows[1]["kernel_time_s"] > 0 and rows[1]["error"] == ""
