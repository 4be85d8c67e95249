"""`gpumodeler calibrate link --measurements`, `calibrate kernel`, `calibrate list` and the
calibrated link in `predict`: calibration of docs/calibration.md from the command line."""
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = str(ROOT / "resources/kernels/saxpy2-maxwell.json")
LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"
GPU = "GeForce GTX 970"
MiB = 2**20


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def copies(direction, knots, ts, seed, memory_kind="pageable"):
    """Copies of 4 B..1 GiB whose bandwidth follows ``knots`` (log-log), 2 % noise."""
    rng = np.random.default_rng(seed)
    n = np.unique(np.concatenate([4 * 2.0 ** np.arange(8),
                                  np.round(1024 * 2 ** (np.arange(41) / 2))]))
    bw = np.exp(np.interp(np.log(n), np.log([k[0] for k in knots]), np.log([k[1] for k in knots])))
    t = (ts + n / bw) * (1 + 0.02 * rng.standard_normal(n.size))
    return [{"kind": "transfer", "direction": direction, "size_bytes": float(a), "time_s": float(b),
             "memory_kind": memory_kind, "gpu": "GeForce GTX 970", "source": "copies.csv",
             "row": i + 2} for i, (a, b) in enumerate(zip(n, t))]


HTOD = ([(1 * MiB, 10.3e9), (4 * MiB, 6.0e9)], 4e-6)
DTOH = ([(2 * MiB, 6.0e9), (4 * MiB, 2.5e9), (32 * MiB, 2.5e9), (128 * MiB, 3.0e9)], 5e-6)


@pytest.fixture
def copies_file(tmp_path):
    recs = (copies("htod", *HTOD, 1) + copies("dtoh", *DTOH, 2)
            + copies("htod", [(MiB, 12e9)], 7e-6, 3, memory_kind="pinned"))
    path = tmp_path / "copies.json"
    path.write_text(json.dumps(recs))
    return path


def test_link_from_measurements(capsys, copies_file, gpumodeler_env):
    code, out, err = run(capsys, "calibrate", "link", "--measurements", copies_file,
                         "--direction", "dtoh", "--predict", "1MiB,16MiB,1GiB", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["direction"] == "dtoh" and r["memory_kind"] == "pageable"
    assert r["loo_mape"] <= 3.0 and r["loo_median_ape"] <= 3.0 and r["startup_s"] >= 0
    assert r["parameters"]["model"] == "regimes" and r["regimes"] >= 2
    assert len(r["residuals"]) == r["copies"] == 49
    assert {"size_bytes", "measured_s", "predicted_s", "relative_residual",
            "loo_relative_error"} <= set(r["residuals"][0])
    assert [p["size_bytes"] for p in r["predictions"]] == [MiB, 16 * MiB, 1024 * MiB]
    assert r["predictions"][1]["time_s"] == pytest.approx(5e-6 + 16 * MiB / 2.5e9, rel=0.04)
    # pinned copies of the same file are a calibration of their own
    code, out, _ = run(capsys, "calibrate", "link", "--measurements", copies_file,
                       "--direction", "htod", "--memory-kind", "pinned", "--json")
    pinned = json.loads(out)
    assert code == 0 and pinned["copies"] == 49 and pinned["memory_kind"] == "pinned"
    assert pinned["parameters"]["regimes"][-1]["bandwidth_bytes_per_s"] == pytest.approx(12e9, rel=0.03)
    code, out, _ = run(capsys, "calibrate", "link", "--measurements", copies_file,
                       "--direction", "htod", "--memory-kind", "pageable")
    assert code == 0 and "leave-one-out error" in out and "regime" in out
    code, out, _ = run(capsys, "calibrate", "link", "--measurements", copies_file, "--direction",
                       "htod", "--memory-kind", "pageable", "--nominal-bandwidth", "15.8GB/s",
                       "--regimes", "2", "--json")   # (these copies follow a log-log
    # interpolation, which the fit rightly chooses; λ per regime needs regimes)
    lams = json.loads(out)["lambda_by_regime"]
    assert code == 0 and lams[0] == pytest.approx(10.3 / 15.8, rel=0.03)


def test_old_sizes_and_times_still_fit_one_line(capsys):
    code, out, _ = run(capsys, "calibrate", "link", "--sizes", "4,1e9", "--times", "4us,0.1", "--json")
    r = json.loads(out)
    assert code == 0 and r["effective_bandwidth_bytes_per_s"] == pytest.approx(1e10, rel=1e-3)
    assert "loo_mape" not in r


def _hash(path: Path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _bad(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("make, extra, message", [
    (lambda d, c: d / "nope.json", [], "no such file"),
    (lambda d, c: _bad(d, "cut.json", c.read_text()[:500]), [], "not valid JSON"),
    (lambda d, c: _bad(d, "k.json", json.dumps([{"kind": "kernel", "name": "k", "time_s": 1e-3}])),
     [], "no transfer records"),
    (lambda d, c: _bad(d, "neg.json", json.dumps(
        [{"kind": "transfer", "direction": "htod", "size_bytes": 1e6, "time_s": -1e-4,
          "source": "copies.csv", "row": 12}])), [], "copies.csv row 12: time_s"),
    (lambda d, c: _bad(d, "nokind.json", json.dumps([{"time_s": 1}])), [], "record 1: 'kind'"),
    (lambda d, c: c, [], "--direction"),
    (lambda d, c: c, ["--direction", "htod"], "--memory-kind"),
    (lambda d, c: c, ["--direction", "dtoh", "--sizes", "1,2"], "not both"),
    (lambda d, c: c, ["--direction", "dtoh", "--save"], "--save needs --link"),
    (lambda d, c: c, ["--direction", "dtoh", "--label", "x"], "--label only applies with --save"),
    (lambda d, c: c, ["--direction", "dtoh", "--save", "--link", "GeForce GTX 970"],
     "belongs to a link"),
    (lambda d, c: c, ["--direction", "dtoh", "--save", "--link", "no such link"], "no such link"),
    (lambda d, c: _bad(d, "other.csv", "Date,Open,High\n2024-01-01,1,2\n"), [], "other.csv"),
    (lambda d, c: c, ["--direction", "dtoh", "--weighting", "absolute"], "--weighting applies"),
])
def test_bad_input_one_line_exit_2_store_untouched(capsys, tmp_path, copies_file, gpumodeler_env,
                                                   make, extra, message):
    path = make(tmp_path, copies_file)
    before = _hash(gpumodeler_env)
    code, out, err = run(capsys, "calibrate", "link", "--measurements", path, *extra, "--json")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert _hash(gpumodeler_env) == before


def test_predict_needs_measurements_for_the_new_flags(capsys):
    code, _, err = run(capsys, "calibrate", "link", "--sizes", "4,1e9", "--times", "4us,0.1",
                       "--predict", "1MiB")
    assert code == 2 and "--predict needs --measurements" in err and err.count("\n") == 1


def test_save_list_and_predict_with_the_calibrated_link(capsys, copies_file, gpumodeler_env):
    for direction in ("htod", "dtoh"):
        code, out, err = run(capsys, "calibrate", "link", "--measurements", copies_file,
                             "--direction", direction, "--memory-kind", "pageable",
                             "--save", "--link", LINK, "--json")
        assert code == 0, err
        saved = json.loads(out)["saved"]
        assert saved == {"device": LINK, "kind": "link", "subject": direction,
                         "label": "pageable", "database": str(gpumodeler_env)}
    code, out, _ = run(capsys, "calibrate", "list", "--json")
    cals = json.loads(out)
    assert code == 0 and [(c["subject"], c["label"]) for c in cals] == [("htod", "pageable"),
                                                                       ("dtoh", "pageable")]
    assert cals[0]["measurements_name"] == "copies.json"
    assert cals[0]["measurements_sha256"] == hashlib.sha256(copies_file.read_bytes()).hexdigest()
    assert cals[0]["loo_mape"] <= 3.0 and len(cals[0]["residuals"]) == 49
    code, out, _ = run(capsys, "calibrate", "list")
    assert code == 0 and "pageable" in out and "copies.json" in out

    code, out, _ = run(capsys, "calibrate", "link", "--measurements", copies_file, "--direction",
                       "dtoh", "--memory-kind", "pageable", "--predict", "16MiB", "--json")
    expected = json.loads(out)["predictions"][0]["time_s"]
    code, out, err = run(capsys, "predict", "--device", GPU, "--grid-size", "100", "--block-size",
                         "256", "--occupancy", "8", "--latency-bound", "4014",
                         "--issued-instructions", "538", "--dtoh", "16MiB", "--link", LINK,
                         "--link-calibration", "pageable", "--json")
    assert code == 0, err
    assert json.loads(out)["transfer_times_s"] == [pytest.approx(expected, rel=1e-12)]
    code, _, err = run(capsys, "predict", "--device", GPU, "--grid-size", "100", "--block-size",
                       "256", "--occupancy", "8", "--latency-bound", "4014",
                       "--issued-instructions", "538", "--dtoh", "16MiB", "--link", LINK,
                       "--link-calibration", "pinned")
    assert code == 2 and "no calibration labelled 'pinned'" in err


def launches(path, lam, seed=3):
    """saxpy2 launches on the GTX 970, timed as the model's λ = 1 prediction / lam, 2 % noise."""
    from gpumodeler.core.kernel.graph import from_dict
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph, predict
    from gpumodeler.core.occupancy.calculator import occupancy
    from gpumodeler.db.catalog import Catalog
    with Catalog() as cat:
        gpu = cat.get(GPU).to_gpu_spec()
    inputs = kernel_inputs_from_graph(from_dict(json.loads(Path(SAXPY2).read_text())), {"a": 128})
    occ = occupancy(gpu.compute_capability, 256, 8, 0).active_warps_per_sm
    rng = np.random.default_rng(seed)
    recs = []
    for n in [2**k for k in range(16, 27)]:
        grid = -(-n // 256)
        t = predict(gpu, inputs, grid_size=(grid, 1, 1), block_size=(256, 1, 1),
                    occupancy=occ).kernel.time_s
        recs.append({"kind": "kernel", "name": "saxpy2(float*, float*, float)", "gpu": GPU,
                     "grid": [grid, 1, 1], "block": [256, 1, 1], "registers_per_thread": 8,
                     "shared_mem_bytes": 0,
                     "time_s": float(t / lam * (1 + 0.02 * rng.standard_normal()))})
    path.write_text(json.dumps(recs))
    return path


KERNEL = ["--kernel", "saxpy2", "--device", GPU, "--graph", SAXPY2, "--set", "a=128"]


def test_kernel_lambda_with_leave_one_out_and_store(capsys, tmp_path, gpumodeler_env):
    path = launches(tmp_path / "runs.json", 0.7)
    code, out, err = run(capsys, "calibrate", "kernel", "--measurements", path, *KERNEL,
                         "--save", "--label", "bench", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["lambda"] == pytest.approx(0.7, rel=0.02) and r["warning"] is None
    assert r["loo_mape"] < 3.0 and r["launches"] == 11
    assert r["saved"]["label"] == "bench" and r["saved"]["device"] == GPU
    code, out, _ = run(capsys, "calibrate", "list", "--kind", "kernel", "--json")
    [cal] = json.loads(out)
    assert cal["subject"] == "saxpy2" and cal["parameters"]["lambda"] == pytest.approx(r["lambda"])


def test_kernel_lambda_outside_the_band_warns(capsys, tmp_path, gpumodeler_env):
    path = launches(tmp_path / "slow.json", 0.2)
    code, out, _ = run(capsys, "calibrate", "kernel", "--measurements", path, *KERNEL)
    assert code == 0 and "warning: λ = 0.2" in out and "launch overhead" in out
    path = launches(tmp_path / "fast.json", 1.9)
    code, out, _ = run(capsys, "calibrate", "kernel", "--measurements", path, *KERNEL, "--json")
    assert "caches" in json.loads(out)["warning"]


@pytest.mark.parametrize("extra, message", [
    (["--kernel", "nope", "--device", GPU, "--graph", SAXPY2], "no launches of kernel 'nope'"),
    (["--kernel", "saxpy2", "--device", GPU], "--latency-bound"),
    (["--kernel", "saxpy2", "--device", GPU, "--graph", SAXPY2, "--save", "--device", ""],
     "--save needs --device"),
])
def test_kernel_bad_input(capsys, tmp_path, gpumodeler_env, extra, message):
    path = launches(tmp_path / "runs.json", 0.7)
    before = _hash(gpumodeler_env)
    code, out, err = run(capsys, "calibrate", "kernel", "--measurements", path, *extra)
    assert code == 2 and message in err and err.count("\n") == 1
    assert _hash(gpumodeler_env) == before


EXAMPLE = ROOT / "resources/examples/saxpy2-gtx970.gpm"


def test_kernel_lambda_from_a_project_launch(capsys, tmp_path, gpumodeler_env):
    """The example project's launch (saxpy2, a = 128 on the GTX 970) gives the same λ = 1
    predictions as the explicit flags, so the same λ; --save stores it for its GPU."""
    path = launches(tmp_path / "runs.json", 0.7)
    code, out, _ = run(capsys, "calibrate", "kernel", "--measurements", path, *KERNEL, "--json")
    flags = json.loads(out)
    code, out, err = run(capsys, "calibrate", "kernel", "--measurements", path, "--kernel",
                         "saxpy2", "--project", EXAMPLE, "--launch", "Fig. 5.24", "--save",
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["gpu"] == GPU and r["lambda"] == pytest.approx(flags["lambda"], rel=1e-9)
    assert [x["estimated_lambda_1_s"] for x in r["residuals"]] == pytest.approx(
        [x["estimated_lambda_1_s"] for x in flags["residuals"]], rel=1e-12)
    assert r["saved"]["device"] == GPU
    code, _, err = run(capsys, "calibrate", "kernel", "--measurements", path, "--kernel",
                       "saxpy2", "--project", EXAMPLE, "--launch", "Fig. 5.24", "--graph", SAXPY2)
    assert code == 2 and "drop --graph" in err
    code, _, err = run(capsys, "calibrate", "kernel", "--measurements", path, "--kernel",
                       "saxpy2", "--project", EXAMPLE, "--launch", "nope")
    assert code == 2 and "no launch 'nope'" in err


def test_link_from_a_timings_csv_through_the_importer(capsys, tmp_path, gpumodeler_env):
    """The measurement importer's plain timings CSV (docs/measurements.md) feeds the fit
    directly; copies of the other GPU and kernels in the same file are left out."""
    lines = ["kind,name,direction,size,size_unit,grid,block,time,unit,gpu,memory_kind"]
    for r in copies("dtoh", *DTOH, 9):
        lines.append(f"transfer,copy,dtoh,{r['size_bytes']:.0f},B,,,{r['time_s'] * 1e6!r},us,"
                     f"GeForce GTX 970,pageable")
    lines.append("transfer,copy,dtoh,1048576,B,,,1e3,us,GeForce GTX TITAN X,pageable")
    lines.append("kernel,saxpy2,,,,4096,256,71.2884,us,GeForce GTX 970,")
    path = tmp_path / "timings.csv"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "calibrate", "link", "--measurements", path,
                         "--gpu", "GeForce GTX 970", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["copies"] == 49 and r["direction"] == "dtoh" and r["loo_mape"] <= 3.0
    code, _, err = run(capsys, "calibrate", "link", "--measurements", path)
    assert code == 2 and "--gpu" in err


def test_the_readme_sample_recovers_its_regimes(capsys):
    """The README's example: synthetic pageable copies (2 % noise) fit back to the 8 µs
    startup and the 6 / 2.5 GB/s device->host regimes they were made with."""
    import json as _json
    from pathlib import Path as _Path
    from gpumodeler.cli.main import main as _main
    sample = _Path(__file__).resolve().parents[2] / "resources/measurements/synthetic-pageable-copies.csv"
    assert _main(["calibrate", "link", "--measurements", str(sample), "--direction", "dtoh",
                  "--predict", "1MiB,256MiB", "--json"]) == 0
    doc = _json.loads(capsys.readouterr().out)
    p = doc["parameters"]
    assert abs(p["startup_s"] - 8e-6) < 0.1e-6
    bws = [r["bandwidth_bytes_per_s"] for r in p["regimes"]]
    assert len(bws) == 2 and abs(bws[0] / 6e9 - 1) < 0.02 and abs(bws[1] / 2.5e9 - 1) < 0.02
    assert [x["size_bytes"] for x in doc["predictions"]] == [2 ** 20, 2 ** 28]
    assert doc["loo_median_ape"] < 3
