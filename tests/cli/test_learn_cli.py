"""`gpumodeler learn fit|evaluate` (docs/learning.md): the JSON shape of an evaluation, a
model file written and read back, and bad input ending in exit 2 with one line."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gpumodeler.cli import cmd_learn
from in_process import cli, shared_env

GPUS = {"GeForce GTX 970": (13, 1.253e9, 224e9), "GeForce GTX 980": (16, 1.216e9, 224e9),
        "GeForce GTX TITAN X (Maxwell)": (24, 1.0e9, 336.5e9)}
HEADER = ("kind,name,grid,block,time,unit,gpu,registers,inst_issued,inst_executed,inst_fp_32,"
          "dram_read_bytes,dram_write_bytes,gld_transactions,gst_transactions,achieved_occupancy")
#: Data sizes 2**e of each kernel: four, spread over 64K..4M elements (each row costs a latency
#: estimate when read, so the set stays small; four sizes still give every fit a trend).
EXPONENTS = (16, 18, 20, 22)
#: Kernel name: (instructions, bytes) per warp.
KERNELS = {"vadd": (20, 384), "saxpy": (24, 384), "heavy": (400, 128)}
#: The rows of the default timings set.
ROWS = len(GPUS) * len(KERNELS) * len(EXPONENTS)


def timings(path, gpus=GPUS, seed=1):
    """A timings CSV with metric columns: three kernels at the EXPONENTS sizes on each GPU; the time
    is a made-up memory + issue time (not a measurement: this checks the command's
    mechanics)."""
    rng = np.random.default_rng(seed)
    lines = [HEADER]
    for g, (sms, clk, bw) in gpus.items():
        for k, (ipw, bpw) in KERNELS.items():
            for e in EXPONENTS:
                grid, block = 2 ** e // 256, 256
                warps = grid * 8
                t = (warps * bpw / bw * 1.2 + warps * ipw / (sms * 4 * clk) + 3e-6) \
                    * math.exp(rng.normal(0, 0.02))
                lines.append(f"kernel,{k},{grid},{block},{t * 1e6:.4f},us,{g},16,{warps * ipw},"
                             f"{warps * ipw},{warps * 8 * ipw},{warps * bpw * 2 // 3},"
                             f"{warps * bpw // 3},{warps * 8},{warps * 4},0.8")
    path.write_text("\n".join(lines) + "\n")
    return path


#: cmd_learn.load_rows' answers by the measurement files' bytes: the rows of a timings file
#: (a latency estimate per row, ~0.7 CPU-s for the default set) are read once a session.
_ROWS: dict[tuple[bytes, ...], tuple] = {}


def _rows_read_once(mp):
    """Through the MonkeyPatch ``mp``, cmd_learn.load_rows reads each content of measurement
    files once, for the tests here that are not about reading them (the device database is
    the built one and the user database holds no device in all of them, so the same bytes give
    the same rows). The first reading of each content is the real one, and what the tests
    check of the fits and evaluations checks it; the tests of bad files read them whole."""
    from pathlib import Path
    real = cmd_learn.load_rows

    def load_rows(paths):
        key = tuple(Path(p).read_bytes() for p in paths)
        if key not in _ROWS:
            _ROWS[key] = real(paths)
        rows, notes = _ROWS[key]
        return list(rows), list(notes)
    mp.setattr(cmd_learn, "load_rows", load_rows)


@pytest.fixture
def measured(tmp_path, gpumodeler_env, monkeypatch):
    _rows_read_once(monkeypatch)
    return timings(tmp_path / "runs.csv")


def test_evaluate_json_has_the_documented_shape(measured, capsys):
    code, out, err = cli(capsys, "learn", "evaluate", "--measurements", measured,
                         "--method", "hybrid", "--leave-out", "gpu", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"summary", "groups"}
    from gpumodeler.core.models.registry import MODELS
    methods = ["hybrid", *MODELS]
    assert "roofline" in methods
    assert [s["method"] for s in doc["summary"]] == methods
    for s in doc["summary"]:
        assert set(s) == {"method", "mape_percent", "median_ape_percent", "n"}
    assert len(doc["groups"]) == len(GPUS) * len(methods)
    for g in doc["groups"]:
        assert set(g) == {"held_out", "method", "mape_percent", "median_ape_percent", "n"}
        assert g["held_out"] in GPUS
    by = {s["method"]: s for s in doc["summary"]}
    assert by["hybrid"]["n"] == by["gajger"]["n"] == ROWS
    assert by["hybrid"]["mape_percent"] > 0 and by["roofline"]["mape_percent"] > 0


def test_evaluate_text_and_other_protocols(measured, capsys):
    code, out, err = cli(capsys, "learn", "evaluate", "--measurements", measured,
                         "--method", "lr,rf", "--leave-out", "kernel")
    assert code == 0, err
    assert "leave one kernel out" in out and "heavy" in out
    from gpumodeler.core.models.registry import MODELS
    assert sum(line.startswith("all ") for line in out.splitlines()) == 2 + len(MODELS)


def test_fit_writes_a_model_that_reads_back(measured, tmp_path, capsys):
    target = tmp_path / "m.json"
    code, out, err = cli(capsys, "learn", "fit", "--measurements", measured, "--method", "svr",
                         "-o", target, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["training"]["rows"] == ROWS and sorted(summary["training"]["gpus"]) == sorted(GPUS)
    from gpumodeler.core.learn.model_file import model_from_text
    model = model_from_text(target.read_text())
    assert model.method == "svr" and model.training["digest"] == summary["training"]["digest"]


@pytest.mark.parametrize("argv, words", [
    (["--method", "lr,foo", "--leave-out", "gpu"], "unknown method foo"),
    (["--method", "lr", "--leave-out", "moon"], "invalid choice"),
])
def test_bad_flags_exit_2(measured, capsys, argv, words):
    code, out, err = cli(capsys, "learn", "evaluate", "--measurements", measured, *argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_an_unknown_gpu_exits_2(tmp_path, gpumodeler_env, capsys):
    path = timings(tmp_path / "x.csv", gpus={"Imaginary GPU 9000": (10, 1e9, 1e11),
                                             "GeForce GTX 970": (13, 1.253e9, 224e9)})
    code, out, err = cli(capsys, "learn", "evaluate", "--measurements", path, "--method", "lr",
                         "--leave-out", "gpu")
    assert code == 2 and "Imaginary GPU 9000" in err and len(err.strip().splitlines()) == 1


def test_one_gpu_cannot_be_left_out(tmp_path, gpumodeler_env, capsys):
    path = timings(tmp_path / "one.csv", gpus={"GeForce GTX 970": (13, 1.253e9, 224e9)})
    code, out, err = cli(capsys, "learn", "evaluate", "--measurements", path, "--method", "lr",
                         "--leave-out", "gpu")
    assert code == 2 and "at least 2 gpus" in err


def test_the_cli_names_equal_the_cores():
    from gpumodeler.core.learn.evaluate import LEAVE_OUT
    from gpumodeler.core.learn.features import FEATURE_SETS
    from gpumodeler.core.learn.model import METHODS
    assert cmd_learn.METHODS == METHODS
    assert cmd_learn.FEATURE_SETS == FEATURE_SETS
    assert cmd_learn.LEAVE_OUT == LEAVE_OUT


SAXPY = ["predict", "--device", "GTX 970", "--graph", "resources/kernels/saxpy2-maxwell.json",
         "--block-size", "256", "--data-size", "1M", "--registers", "16"]


@pytest.fixture(scope="module")
def hybrid_fit(tmp_path_factory, devices_db):
    """A hybrid model fitted once for the module's predict tests (only read by them), in an
    environment like gpumodeler_env's."""
    from gpumodeler.cli.main import main
    folder = tmp_path_factory.mktemp("hybrid")
    with pytest.MonkeyPatch.context() as mp:
        shared_env(mp, devices_db, folder)
        _rows_read_once(mp)
        target = folder / "h.json"
        assert main(["learn", "fit", "--measurements", str(timings(folder / "runs.csv")),
                     "--method", "hybrid", "-o", str(target)]) == 0
    return target


@pytest.fixture
def hybrid_file(hybrid_fit, gpumodeler_env):
    return hybrid_fit


def test_predict_learned_with_model_all_marks_the_training_data(hybrid_file, capsys, monkeypatch):
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code, out, err = cli(capsys, *SAXPY, "--learned", hybrid_file, "--model", "all", "--json")
    assert code == 0, err
    doc = json.loads(out)
    from gpumodeler.core.models.registry import MODELS
    assert [m["model"] for m in doc["models"]] == [*MODELS, "learned"]
    learned = doc["learned"]
    assert learned == doc["models"][-1]
    assert learned["method"] == "hybrid" and learned["training"]["rows"] == ROWS
    assert sorted(learned["training"]["gpus"]) == sorted(GPUS)
    assert len(learned["training"]["digest"]) == 64
    gajger = next(m["time_s"] for m in doc["models"] if m["model"] == "gajger")
    assert learned["time_s"] > 0 and learned["time_s"] != gajger
    # a launch unlike the training's is flagged, not silently extrapolated
    assert isinstance(learned["outside_trained_ranges"], list)
    code, out, err = cli(capsys, *SAXPY[:-6], "--block-size", "1024", "--data-size", "1G",
                         "--registers", "16", "--learned", hybrid_file, "--json")
    assert code == 0, err
    assert json.loads(out)["learned"]["outside_trained_ranges"]


def test_predict_learned_text(hybrid_file, capsys, monkeypatch):
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code, out, err = cli(capsys, *SAXPY, "--learned", hybrid_file)
    assert code == 0, err
    assert "learned" in out and f"trained on {ROWS} row(s)" in out and "digest" in out


@pytest.mark.parametrize("text, words", [
    ('{"format": "gpumodeler-learned-model", "version": 1, "method": "rf", "features": "amaris", '
     '"feature_names": ["a"], "mean": [0], "scale": [1], "params": {"trees": [{"feature": [0], '
     '"threshold": [0], "left": [0], "right": [0], "value": [1]}]}}', "later node"),
    ("{\"format\": NaN}", "not a number JSON allows"),
    ("\x80\x04\x95", "not a text file"),
    ("not json", "not valid JSON"),
])
def test_predict_refuses_a_hostile_model_file(tmp_path, gpumodeler_env, capsys, monkeypatch, text, words):
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    bad = tmp_path / "bad.json"
    bad.write_bytes(text.encode("latin-1"))
    code, out, err = cli(capsys, *SAXPY, "--learned", bad)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_predict_without_learned_does_not_load_the_learn_package():
    import subprocess
    import sys
    code = ("import sys\nfrom gpumodeler.cli.main import main\n"
            "main(['predict', '--sms', '13', '--sm-clock-mhz', '1253', '--cuda-cores', '128', "
            "'--schedulers', '4', '--gmem-bytes-per-cycle', '13.78', '--cc', '5.2', "
            "'--latency-bound', '500', '--issued-instructions', '20', '--block-size', '256', "
            "'--grid-size', '64', '--occupancy', '32'])\n"
            "print([m for m in sys.modules if m.startswith('gpumodeler.core.learn')])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_fit_save_list_export_import(measured, tmp_path, capsys, gpumodeler_env, monkeypatch):
    assert cli(capsys, "learn", "fit", "--measurements", measured, "--method", "lr",
               "-o", tmp_path / "a.json", "--save", "mine")[0] == 0
    code, out, err = cli(capsys, "learn", "fit", "--measurements", measured, "--method", "rf",
                         "-o", tmp_path / "b.json", "--save", "mine")
    assert code == 2 and "stored already" in err and not (tmp_path / "b.json").exists()
    code, out, err = cli(capsys, "learn", "list", "--json")
    assert code == 0, err
    [entry] = json.loads(out)
    assert entry["name"] == "mine" and entry["measurements"][0]["name"] == "runs.csv"
    assert len(entry["measurements"][0]["sha256"]) == 64
    assert cli(capsys, "learn", "export", "-o", tmp_path / "shared.json")[0] == 0
    code, out, err = cli(capsys, "learn", "import", tmp_path / "shared.json")
    assert code == 0 and "mine: same" in out
    # mine changed: a conflict kept as mine, then remembered as declined
    code, out, err = cli(capsys, "learn", "fit", "--measurements", measured, "--method", "svr",
                         "-o", tmp_path / "c.json", "--save", "mine", "--replace")
    assert code == 0, err
    code, out, err = cli(capsys, "learn", "import", tmp_path / "shared.json")
    assert code == 0 and "mine: kept-mine" in out
    code, out, err = cli(capsys, "learn", "import", tmp_path / "shared.json")
    assert code == 0 and "mine: declined (kept mine: this version was declined before)" in out
    assert cli(capsys, "learn", "import", tmp_path / "shared.json", "--resolve", "theirs")[0] == 0
    # the stored model predicts by name
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code, out, err = cli(capsys, *SAXPY, "--learned", "mine", "--json")
    assert code == 0, err
    assert json.loads(out)["learned"]["method"] == "lr"


def test_import_refuses_a_hostile_file(tmp_path, gpumodeler_env, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "gpumodeler-learned-models", "version": 1, "models": '
                   '[{"name": "x", "model": {"format": "gpumodeler-learned-model", "version": 1, '
                   '"method": "lr", "features": "amaris", "feature_names": ["a"], "mean": [NaN], '
                   '"scale": [1]}}]}')
    code, out, err = cli(capsys, "learn", "import", bad)
    assert code == 2 and "not a number JSON allows" in err and len(err.strip().splitlines()) == 1


def test_fit_never_writes_over_its_measurements(measured, capsys):
    before = measured.read_bytes()
    code, out, err = cli(capsys, "learn", "fit", "--measurements", measured, "--method", "lr",
                         "-o", measured)
    assert code == 2 and "refusing to write" in err and measured.read_bytes() == before


def test_fit_refuses_its_output_before_reading_the_rows(measured, capsys, monkeypatch, tmp_path):
    """Reading the rows costs a latency estimate per row: an output that cannot be written
    is said first."""
    def never(paths):
        raise AssertionError("the rows were read before the output was checked")
    monkeypatch.setattr(cmd_learn, "load_rows", never)
    for target in (measured, tmp_path / "missing" / "m.json"):
        code, out, err = cli(capsys, "learn", "fit", "--measurements", measured, "--method",
                             "lr", "-o", target)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert ("refusing to write" in err) == (target == measured), err


def test_export_never_writes_over_the_device_database(gpumodeler_env, capsys, measured, tmp_path):
    assert cli(capsys, "learn", "fit", "--measurements", measured, "--method", "lr",
               "-o", tmp_path / "m.json", "--save", "m")[0] == 0
    before = gpumodeler_env.read_bytes()
    code, out, err = cli(capsys, "learn", "export", "-o", gpumodeler_env)
    assert code == 2 and "refusing to write" in err and gpumodeler_env.read_bytes() == before


def test_predict_profile_with_learned(hybrid_file, capsys, monkeypatch):
    """--profile with --learned: the profiled run's metrics, the target's parameters, the
    default model on the target as the hybrid's base."""
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    profile = ["--profile", "resources/measurements/nvprof-gpu-trace-multirun.csv",
               "--profile", "resources/measurements/nvprof-metrics-saxpy2.csv",
               "--kernel", "saxpy2", "--profiled-device", "GTX 970"]
    code, out, err = cli(capsys, "predict", *profile, "--device", "GTX 980",
                         "--learned", hybrid_file, "--model", "all", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["device"] == "GeForce GTX 980"
    gajger = next(m["time_s"] for m in doc["models"] if m["model"] == "gajger")
    learned = doc["learned"]
    assert learned["time_s"] > 0 and learned["training"]["rows"] == ROWS
    # the hybrid moves the default model's time by its learned correction, not elsewhere
    assert 0.2 < learned["time_s"] / gajger < 5
    code, out, err = cli(capsys, "predict", *profile, "--learned", hybrid_file)
    assert code == 0, err
    assert "learned" in out and f"trained on {ROWS} row(s)" in out
