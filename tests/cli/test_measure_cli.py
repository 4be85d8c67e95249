"""`gpumodeler measure import` and `gpumodeler predict --profile`: the sample files, bad
input as one exit-2 line naming the row and column, and a profiled kernel predicted on
another GPU."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "measurements"
TRACE = str(SAMPLES / "nvprof-gpu-trace-multirun.csv")
METRICS = str(SAMPLES / "nvprof-metrics-saxpy2.csv")
NCU_RAW = str(SAMPLES / "ncu-raw.csv")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name, fmt, counts", [
    ("nvprof-gpu-trace-multirun.csv", "nvprof", {"kernel": 4, "transfer": 12}),
    ("nvprof-metrics-saxpy2.csv", "nvprof", {"kernel": 1}),
    ("ncu-raw.csv", "ncu", {"kernel": 3}),
    ("ncu-details.csv", "ncu", {"kernel": 2}),
    ("timings.csv", "timings", {"kernel": 2, "transfer": 5}),
])
def test_import_every_sample_as_json(capsys, name, fmt, counts):
    code, out, err = run(capsys, "measure", "import", SAMPLES / name, "--json")
    assert code == 0, err
    records = json.loads(out)
    assert isinstance(records, list)
    got = {}
    for r in records:
        got[r["kind"]] = got.get(r["kind"], 0) + 1
        assert {"kind", "direction", "name", "gpu", "grid", "block", "size_bytes", "time_s",
                "metrics"} <= set(r)
        for m in r["metrics"].values():
            assert set(m) == {"value", "unit"}
    assert got == counts
    assert f"({fmt})" in err and "noise line(s) skipped" in err


def test_import_text_table_with_counts(capsys):
    code, out, _ = run(capsys, "measure", "import", TRACE)
    assert code == 0
    assert "[CUDA memcpy PtoP]" in out and "GeForce GTX TITAN X (1)" in out
    assert out.strip().splitlines()[-1] == (
        "nvprof-gpu-trace-multirun.csv (nvprof): 4 kernels, 12 transfers; 16 noise line(s) "
        "skipped; 1 row(s) of other kinds skipped; 0 unit disagreement(s)")


def test_json_values_are_si(capsys):
    _, out, _ = run(capsys, "measure", "import", TRACE, "--json")
    first = json.loads(out)[0]
    assert first == {**first, "kind": "transfer", "direction": "htod", "size_bytes": 4 * 2 ** 20,
                     "memory_kind": "pageable", "gpu": "GeForce GTX 970 (0)", "row": 6}
    assert first["time_s"] == pytest.approx(687.590820e-6)
    assert first["metrics"]["throughput"]["unit"] == "B/s"


def test_disagreements_are_listed(capsys, tmp_path):
    lines = Path(TRACE).read_text().splitlines()
    lines[5] = lines[5].replace(",5.681068,", ",6.100000,")  # the decimal GB/s value
    bad = tmp_path / "t.csv"
    bad.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "measure", "import", bad)
    assert code == 0
    assert "1 unit disagreement(s)" in out
    assert "row 6, column Throughput: Size/Duration = 5.68107 GB/s but Throughput says 6.1 GB/s" in out


def _write(tmp_path, text, name="bad.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("case, make, expected", [
    ("another tool", lambda t: "timestamp,cpu_percent\n1,20\n",
     "bad.csv row 1: cannot tell the format"),
    ("truncated", lambda t: "\n".join(t.splitlines()[:9]) + "\n" + t.splitlines()[9][:30],
     "bad.csv row 10: 5 fields for the 20 columns of the header at row 4"),
    ("no known rows", lambda t: "\n".join(t.splitlines()[:5] + [t.splitlines()[7]]) + "\n",
     "bad.csv: no rows of a known kind"),
    ("mixed units", lambda t: t.replace("71.288354,4096", "71.288354ms,4096", 1),
     "bad.csv row 9, column Duration: '71.288354ms' carries its own unit"),
    ("negative duration", lambda t: t.replace("71.288354,4096", "-71.288354,4096", 1),
     "bad.csv row 9, column Duration: a duration must be > 0, got -71.288354 us"),
    ("zero duration", lambda t: t.replace("687.590820", "0.000000", 1),
     "bad.csv row 6, column Duration: a duration must be > 0, got 0.000000 us"),
])
def test_bad_input_is_one_exit_2_line(capsys, tmp_path, case, make, expected):
    bad = _write(tmp_path, make(Path(TRACE).read_text()))
    code, out, err = run(capsys, "measure", "import", bad)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("gpumodeler measure: ") and expected in err


def test_unreadable_and_forced_wrong_format(capsys, tmp_path):
    code, _, err = run(capsys, "measure", "import", tmp_path / "missing.csv")
    assert code == 2 and "cannot read" in err
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"\x00\x01\xff\xfe")
    code, _, err = run(capsys, "measure", "import", binary)
    assert code == 2 and "not a text file" in err
    code, _, err = run(capsys, "measure", "import", NCU_RAW, "--format", "timings")
    assert code == 2 and "ncu-raw.csv row 1: the timings header has no kind and no time column" in err


PROFILE = ["--profile", TRACE, "--profile", METRICS, "--kernel", "saxpy2",
           "--profiled-device", "GTX 970"]


def _explicit(capsys, device, occupancy, latency="1134"):
    """The model's own prediction for the per-warp inputs the sample files encode."""
    code, out, err = run(capsys, "predict", "--device", device, "--grid-size", "4096",
                         "--block-size", "256", "--occupancy", occupancy, "--latency-bound", latency,
                         "--issued-instructions", "58", "--cuda-core-instructions", "55",
                         "--gmem-bytes", "384", "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("device, cross", [("GeForce GTX TITAN X", False), ("Tesla K40", True),
                                           ("GeForce GTX 970", False)])
def test_predict_profile_reproduces_the_model_on_another_gpu(capsys, gpumodeler_env, device, cross):
    code, out, err = run(capsys, "predict", *PROFILE, "--device", device, "--json")
    assert code == 0, err
    r = json.loads(out)
    # across architectures the latency bound is re-derived through the target's table
    ratio = r["profile"]["latency_retarget_ratio"] if cross else 1.0
    assert (ratio is not None and ratio != 1.0) is cross
    assert r["profile"]["latency_bound_on_profiled_cycles"] == pytest.approx(1134, rel=1e-5)
    want = _explicit(capsys, device, str(r["occupancy_warps_per_sm"]), repr(1134 * ratio))
    assert r["kernel_time_s"] == pytest.approx(want["kernel_time_s"], rel=1e-5)
    assert r["latency_bound_cycles"] == pytest.approx(1134 * ratio, rel=1e-5)
    assert r["profile"]["model_inputs"]["cuda_core_instructions"] == pytest.approx(55)
    assert r["profile"]["warps_launched"] == 32768 and r["profile"]["timed_launches"] == 3
    assert r["cross_architecture"] is cross
    assert any("crosses architectures" in n for n in r["notes"]) is cross


def test_predict_profile_text_says_when_it_crosses_architectures(capsys, gpumodeler_env):
    code, out, _ = run(capsys, "predict", *PROFILE, "--device", "Tesla K40")
    assert code == 0
    assert "latency-bound on GeForce GTX 970" in out
    assert "note     crosses architectures (profiled on compute capability 5.2, predicted for 3.5)" in out


def test_predict_profile_from_nsight_compute(capsys, gpumodeler_env):
    code, out, err = run(capsys, "predict", "--profile", NCU_RAW, "--kernel", "saxpy2",
                         "--device", "GeForce GTX 980", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["profile"]["profiled_device"] == "GeForce RTX 2080 Ti"
    assert r["profile"]["achieved_occupancy_warps_per_sm"] == pytest.approx(24)
    assert r["cross_architecture"] is True


@pytest.mark.parametrize("argv, expected", [
    (["--profile", TRACE, "--kernel", "saxpy2", "--device", "GTX 980"],
     "profiled on 2 GPUs (GeForce GTX 970, GeForce GTX TITAN X); give --profiled-device"),
    (["--profile", TRACE, "--kernel", "gemm", "--device", "GTX 980"], "no kernel named 'gemm'"),
    (["--profile", TRACE, "--device", "GTX 980"], "--profile needs --kernel NAME"),
    (["--profile", METRICS, "--kernel", "saxpy2", "--device", "GTX 980"],
     "no launch configuration"),
    (["--device", "GTX 980", "--occupancy", "8", "--latency-bound", "9", "--issued-instructions", "1",
      "--grid-size", "8"], "give --block-size THREADS"),
])
def test_predict_profile_errors(capsys, gpumodeler_env, argv, expected):
    code, out, err = run(capsys, "predict", *argv)
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1


def test_sample_files_are_what_the_generator_writes(gpumodeler_env):
    """The committed samples match tools/make_measurement_samples.py, so their kernel times
    stay consistent with the model (rerun the tool after changing either)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "make_measurement_samples", ROOT / "tools" / "make_measurement_samples.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    expected = {"nvprof-gpu-trace-multirun.csv": tool.nvprof_trace(),
                "nvprof-metrics-saxpy2.csv": tool.nvprof_metrics(),
                "ncu-raw.csv": tool.ncu_raw(), "ncu-details.csv": tool.ncu_details(),
                "timings.csv": tool.timings(),
                "synthetic-pageable-copies.csv": tool.synthetic_pageable_copies()}
    assert sorted(expected) == sorted(p.name for p in SAMPLES.glob("*.csv"))
    for name, text in expected.items():
        assert (SAMPLES / name).read_text(encoding="utf-8") == text, name
