"""The engine's command line: predict, occupancy, graph, sweep, calibrate."""
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = str(ROOT / "resources/kernels/saxpy2-maxwell.json")
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]
PCIE = ["--link-bandwidth", "15.8e9", "--startup-htod", "3.96868e-6", "--startup-dtoh",
        "5.15692e-6", "--lambda-htod", "0.689", "--lambda-dtoh", "0.653"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_fig_5_24_expert_mode(capsys):
    code, out, _ = run(capsys, "predict", *GTX970, "--grid-size", "1562500", "--block-size", "256",
                       "--occupancy", "64", "--latency-bound", "4014", "--cuda-core-instructions", "535",
                       "--issued-instructions", "538", "--gmem-bytes", "384", "--lambda", "0.703787",
                       "--htod", "1.6e9", "--htod", "1.6GB", "--dtoh", "1.6e9", *PCIE, "--json")
    assert code == 0
    r = json.loads(out)
    assert r["kernel_time_s"] == pytest.approx(0.1466549, rel=1e-6)
    assert r["total_time_s"] == pytest.approx(0.5956960, rel=1e-6)
    assert len(r["transfer_times_s"]) == 3
    assert r["mode"] == "throughput" and r["limiting_resource"] == "issue"
    assert r["warp_throughput"] == pytest.approx(1 / 134.5)


def test_predict_from_graph_and_occupancy_calculator(capsys):
    code, out, _ = run(capsys, "predict", *GTX970, "--cc", "5.2", "--graph", SAXPY2, "--set", "a=128",
                       "--data-size", "4e8", "--block-size", "256", "--registers", "8", "--json")
    r = json.loads(out)
    assert code == 0 and r["occupancy_warps_per_sm"] == 64 and r["latency_bound_cycles"] == 4014
    assert r["limiting_resource"] == "cuda_cores"


def test_predict_text_output(capsys):
    code, out, _ = run(capsys, "predict", *GTX970, "--grid-size", "100", "--block-size", "256",
                       "--occupancy", "8", "--latency-bound", "4014", "--issued-instructions", "538")
    assert code == 0 and "latency-bound" in out and "total" in out


@pytest.mark.parametrize("argv, message", [
    (["predict", "--block-size", "256", "--grid-size", "1", "--occupancy", "1", "--latency-bound", "9",
      "--issued-instructions", "9"], "is unknown; give it explicitly (it is never filled in from another device) (flag --"),
    (["predict", *GTX970, "--block-size", "256", "--occupancy", "1", "--latency-bound", "9",
      "--issued-instructions", "9"], "--grid-size"),
    (["predict", *GTX970, "--block-size", "256", "--grid-size", "1", "--occupancy", "0",
      "--latency-bound", "9", "--issued-instructions", "9"], "occupancy"),
    (["predict", *GTX970, "--block-size", "256", "--grid-size", "1", "--occupancy", "1",
      "--latency-bound", "9", "--issued-instructions", "9", "--htod", "1e6"], "--link-bandwidth"),
    (["predict", *GTX970, "--block-size", "256", "--grid-size", "1", "--occupancy", "1",
      "--graph", "/nonexistent.json"], "cannot read kernel file"),
    (["occupancy", "--cc", "8.0", "--block-size", "1100", "--registers", "32"], "exceeds the 1024-thread limit by 76"),
    (["occupancy", "--cc", "4.1", "--block-size", "128", "--registers", "32"], "4.1"),
    (["graph", SAXPY2, "--table", "nope"], "unknown latency table"),
    (["calibrate", "lambda", "--estimated", "1,2", "--measured", "1"], "as many"),
])
def test_bad_input_exit_2_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_argparse_errors_are_exit_2_one_line():
    r = subprocess.run([sys.executable, "-m", "gpumodeler", "predict", "--sms", "x", "--block-size", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a whole number" in r.stderr


def test_occupancy_single_json(capsys):
    code, out, _ = run(capsys, "occupancy", "--cc", "5.2", "--block-size", "256", "--registers", "16",
                       "--shared-mem", "0", "--json")
    r = json.loads(out)
    assert (r["active_blocks_per_sm"], r["active_warps_per_sm"], r["max_warps_per_sm"]) == (8, 64, 64)
    assert r["occupancy"] == 1.0 and r["limited_by"] == ["warps"]


def test_occupancy_batch_keeps_order_and_continues_after_errors(tmp_path):
    lines = [{"cc": "5.2", "block_size": 256, "registers": 16, "shared_mem": 0},
             {"cc": "8.0", "block_size": 2048, "registers": 16, "shared_mem": 0},
             "garbage",
             {"cc": "8.6", "block_size": 128, "registers": 255, "shared_mem": 0}]
    text = "\n".join(l if isinstance(l, str) else json.dumps(l) for l in lines) + "\n"
    r = subprocess.run([sys.executable, "-m", "gpumodeler", "occupancy", "--batch", "-"], input=text,
                       capture_output=True, text=True)
    assert r.returncode == 0
    out = [json.loads(l) for l in r.stdout.splitlines()]
    assert len(out) == 4
    assert out[0]["active_warps_per_sm"] == 64 and "error" in out[1] and "error" in out[2]
    for key in ("active_blocks_per_sm", "active_warps_per_sm", "max_warps_per_sm", "occupancy", "limited_by"):
        assert key in out[3]


def test_graph_json(capsys):
    code, out, _ = run(capsys, "graph", SAXPY2, "--set", "a=128", *GTX970, "--json")
    r = json.loads(out)
    assert r["latency_bound_formula"] == "942 + 24·a" and r["latency_bound_cycles"] == 4014
    assert r["per_warp"]["cuda_core_instructions"] == 535
    assert r["binding_resource"] == "cuda_cores"
    assert "[compute loop × a:" in r["critical_path"]["text"]


def test_sweep_csv_cartesian(capsys, tmp_path):
    target = tmp_path / "sweep.csv"
    code, _, _ = run(capsys, "sweep", *GTX970, "--graph", SAXPY2, "--set", "a=1,32,128",
                     "--block-size", "128,256", "--data-size", "1e6:3e6:1e6", "--occupancy", "64",
                     "--htod", "4*N", "--dtoh", "4*N", *PCIE, "-o", str(target))
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert len(rows) == 3 * 2 * 3
    assert {r["a"] for r in rows} == {"1.0", "32.0", "128.0"}
    assert all(float(r["total_time_s"]) > float(r["kernel_time_s"]) for r in rows)


def test_sweep_registers_marks_invalid_points(capsys):
    code, out, _ = run(capsys, "sweep", *GTX970, "--cc", "5.2", "--block-size", "256,1024",
                       "--registers", "32,128", "--grid-size", "100", "--latency-bound", "500",
                       "--issued-instructions", "100", "--format", "json")
    rows = json.loads(out)
    bad = [r for r in rows if r["error"]]
    assert code == 0 and len(rows) == 4 and len(bad) == 1
    assert bad[0]["block_size"] == 1024 and bad[0]["kernel_time_s"] is None


def test_calibrate_lambda_and_link(capsys):
    code, out, _ = run(capsys, "calibrate", "lambda", "--estimated", "0.1", "--measured", "0.2", "--json")
    assert code == 0 and json.loads(out)["lambda"] == 0.5
    code, out, _ = run(capsys, "calibrate", "link", "--sizes", "4,1e9", "--times", "4us,0.1", "--json")
    r = json.loads(out)
    assert r["startup_s"] == pytest.approx(4e-6, rel=1e-3) and r["effective_bandwidth_bytes_per_s"] == pytest.approx(1e10, rel=1e-3)
