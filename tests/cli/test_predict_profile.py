"""`predict --profile`: on the profiled GPU the prediction is the measured time (every kernel of
the bundled profiles, under every kernel-term switch), and every flag and term of `predict`
applies to a profiled kernel exactly as to the same inputs given by hand."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "measurements"
TRACE = str(SAMPLES / "nvprof-gpu-trace-multirun.csv")
METRICS = str(SAMPLES / "nvprof-metrics-saxpy2.csv")
NCU_RAW = str(SAMPLES / "ncu-raw.csv")
NCU_DETAILS = str(SAMPLES / "ncu-details.csv")

#: every (files, kernel, profiled GPU) of the bundled profiles with counts and a duration
BUNDLED = [
    ((TRACE, METRICS), "saxpy2", "GeForce GTX 970"),
    ((NCU_RAW,), "saxpy2", "GeForce RTX 2080 Ti"),
    ((NCU_RAW,), "transpose_smem", "GeForce RTX 2080 Ti"),
    ((NCU_DETAILS,), "saxpy2", "GeForce RTX 2080 Ti"),
    ((NCU_DETAILS,), "transpose_smem", "GeForce RTX 2080 Ti"),
]
SWITCHES = [[], ["--tail"], ["--no-underfill"], ["--launch-overhead", "4us"],
            ["--tail", "--launch-overhead", "2us"]]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def predict_json(capsys, *argv):
    code, out, err = run(capsys, "predict", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def profile_args(files, kernel, gpu):
    return [a for f in files for a in ("--profile", f)] + ["--kernel", kernel,
                                                           "--profiled-device", gpu]


def test_the_bundled_list_is_every_profiled_kernel(capsys):
    """Every kernel record with counts in the sample files is in BUNDLED (so the test below
    covers them all)."""
    found = set()
    for name in ("nvprof-metrics-saxpy2.csv", "ncu-raw.csv", "ncu-details.csv"):
        code, out, _ = run(capsys, "measure", "import", SAMPLES / name, "--json")
        assert code == 0
        for r in json.loads(out):
            if r["kind"] == "kernel" and r["metrics"]:
                found.add((name, r["name"].split("(")[0]))
    listed = {(Path(files[-1]).name, k) for files, k, _ in BUNDLED}
    assert found == listed


@pytest.mark.parametrize("switches", SWITCHES, ids=lambda s: " ".join(s) or "defaults")
@pytest.mark.parametrize("files, kernel, gpu", BUNDLED,
                         ids=[f"{Path(f[-1]).stem}-{k}" for f, k, _ in BUNDLED])
def test_profiled_gpu_reproduces_the_measured_time(capsys, gpumodeler_env, files, kernel, gpu,
                                                   switches):
    r = predict_json(capsys, *profile_args(files, kernel, gpu), "--device", gpu, *switches)
    measured = r["profile"]["measured_time_s"]
    assert r["kernel_time_s"] == pytest.approx(measured, rel=0.02)
    # the latency is derived at the occupancy the prediction uses
    assert r["profile"]["occupancy_warps_per_sm"] == r["occupancy_warps_per_sm"]
    assert r["cross_architecture"] is False


@pytest.mark.parametrize("files, kernel, gpu", BUNDLED[:3],
                         ids=[f"{Path(f[-1]).stem}-{k}" for f, k, _ in BUNDLED[:3]])
def test_every_model_runs_on_a_profile_and_gajger_reproduces(capsys, gpumodeler_env, files, kernel,
                                                            gpu):
    r = predict_json(capsys, *profile_args(files, kernel, gpu), "--device", gpu, "--model", "all",
                     "--tail")
    models = {m["model"]: m for m in r["models"]}
    assert list(models) == ["gajger", "volkov-contention", "mwp-cwp", "bsp", "roofline"]
    assert models["gajger"]["kernel_time_s"] == pytest.approx(r["profile"]["measured_time_s"],
                                                              rel=0.02)
    tail = [t for t in models["gajger"]["terms"] if t["name"] == "tail effect"]
    assert tail and tail[0]["applied"]
    assert r["profile"]["kernel"].startswith(kernel)


def _small_grid_profile(tmp_path, blocks: int) -> str:
    """ncu-raw.csv with saxpy2 launched on ``blocks`` blocks (an under-filled GPU)."""
    text = Path(NCU_RAW).read_text()
    text = text.replace('"(4096, 1, 1)"', f'"({blocks}, 1, 1)"').replace('"4,096"', f'"{blocks}"')
    path = tmp_path / "small.csv"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("switches", [[], ["--tail"], ["--no-underfill"],
                                      ["--launch-overhead", "5us"], ["--model", "gajger"],
                                      ["--lambda", "1.3"], ["--grid-size", "20"]],
                         ids=lambda s: " ".join(s) or "defaults")
@pytest.mark.parametrize("target", ["GeForce RTX 2080 Ti", "Tesla T4"])
def test_every_predict_flag_applies_to_a_profile(capsys, gpumodeler_env, tmp_path, switches,
                                                 target):
    """A 1-wave launch: `predict --profile` gives what plain `predict` gives for the derived
    per-warp inputs with the same flags (under-fill, tail, launch overhead, model, λ)."""
    small = _small_grid_profile(tmp_path, 40)
    r = predict_json(capsys, "--profile", small, "--kernel", "saxpy2", "--device", target,
                     *switches)
    w = r["profile"]["model_inputs"]
    lam = r["models"][0]["quantities"]["lambda"] if "--model" in switches else r["lambda"]
    if "--lambda" not in switches:   # λ of the profiled GPU, if it was faster than the bound
        switches = switches + ["--lambda", repr(lam)]
    by_hand = predict_json(
        capsys, "--device", target, "--grid-size",
        "20" if "--grid-size" in switches else "40", "--block-size", "256", "--registers", "32",
        "--shared-mem", "0", "--latency-bound", repr(w["latency_bound"]),
        "--issued-instructions", repr(w["issued_instructions"]),
        "--cuda-core-instructions", repr(w["cuda_core_instructions"]),
        "--gmem-bytes", repr(w["gmem_bytes"]),
        *[s for s in switches if s not in ("--grid-size", "20")])
    key = "models" if "--model" in switches else "kernel_time_s"
    if key == "models":
        assert r["models"][0]["kernel_time_s"] == pytest.approx(
            by_hand["models"][0]["kernel_time_s"], rel=1e-9)
    else:
        assert r["kernel_time_s"] == pytest.approx(by_hand["kernel_time_s"], rel=1e-9)
        assert r["terms"] == by_hand["terms"]
    if not switches and target == "GeForce RTX 2080 Ti":
        # on the profiled GPU the under-filled term is in the derivation too
        assert r["kernel_time_s"] == pytest.approx(r["profile"]["measured_time_s"], rel=0.02)
        assert any(t.startswith("under-filled GPU: ") and "off" not in t for t in r["terms"])
