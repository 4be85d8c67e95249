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


# -- across GPUs: the latency re-derived on the target, the baselines beside it -----------------

SAXPY2_GRAPH = str(ROOT / "resources" / "kernels" / "saxpy2-maxwell.json")
GTX970_SAXPY2 = profile_args((TRACE, METRICS), "saxpy2", "GeForce GTX 970")


def test_baselines_are_printed_beside_the_prediction(capsys, gpumodeler_env):
    from gpumodeler.db.catalog import Catalog
    r = predict_json(capsys, *GTX970_SAXPY2, "--device", "Tesla K40")
    b = r["baselines"]
    cat = Catalog()
    p, t = (cat.get(n).to_gpu_spec() for n in ("GeForce GTX 970", "Tesla K40"))

    def bw(g):
        return g.gmem_bandwidth_bytes_per_cycle_per_sm() * g.sms * g.sm_clock_hz

    def fp32(g):
        return g.cuda_cores_per_sm * g.sms * g.sm_clock_hz

    measured = r["profile"]["measured_time_s"]
    assert b["bandwidth_ratio_s"] == pytest.approx(measured * bw(p) / bw(t), rel=1e-12)
    assert b["flop_ratio_s"] == pytest.approx(measured * fp32(p) / fp32(t), rel=1e-12)
    # saxpy2 moves 384 B per 55 CUDA-core instructions: memory-bound at peak rates
    assert b["bound"] == "memory" and b["bound_ratio_s"] == b["bandwidth_ratio_s"]
    code, out, _ = run(capsys, "predict", *GTX970_SAXPY2, "--device", "Tesla K40")
    assert code == 0 and "baseline measured 71.2884 µs × bandwidth ratio: " in out


def test_cross_architecture_latency_goes_through_the_targets_table(capsys, gpumodeler_env):
    r = predict_json(capsys, *GTX970_SAXPY2, "--device", "Tesla K40")
    # per warp: 55 CUDA-core instructions (FP32 + INT + control) and 384 B of DRAM traffic
    # (3 accesses of 128 B): Kepler 9 and 300 cycles, Maxwell 6 and 350 (Gajger Table 4.1-4.2)
    c = r["profile"]["per_warp"]
    arith = c["fp32_instructions"] + c["control_instructions"] + c["integer_instructions"]
    dram = c["dram_bytes"] / 128
    ratio = (arith * 9 + dram * 300) / (arith * 6 + dram * 350)
    assert r["profile"]["latency_retarget_ratio"] == pytest.approx(ratio, rel=1e-12)
    assert r["latency_bound_cycles"] == pytest.approx(
        r["profile"]["latency_bound_on_profiled_cycles"] * ratio, rel=1e-12)
    same = predict_json(capsys, *GTX970_SAXPY2, "--device", "GeForce GTX TITAN X (Maxwell)")
    assert same["profile"]["latency_retarget_ratio"] is None
    assert same["latency_bound_cycles"] == same["profile"]["latency_bound_on_profiled_cycles"]


@pytest.mark.parametrize("device", ["GeForce GTX 970", "Tesla K40"])
def test_a_graph_next_to_the_profile_is_calibrated_by_it(capsys, gpumodeler_env, device):
    """--graph with --profile: the graph's counts with the target's latency table, its memory
    bytes from the profile, its latency bound scaled by measured / graph on the profiled GPU
    (the sample's saxpy2 was made from this graph at a = 8, so the scale is 1)."""
    r = predict_json(capsys, *GTX970_SAXPY2, "--device", device, "--graph", SAXPY2_GRAPH,
                     "--set", "a=8")
    plain = predict_json(capsys, "--graph", SAXPY2_GRAPH, "--set", "a=8", "--device", device,
                         "--grid-size", "4096", "--block-size", "256", "--registers", "64")
    assert r["latency_table"] == plain["latency_table"]
    assert r["latency_bound_cycles"] == pytest.approx(plain["latency_bound_cycles"], rel=1e-6)
    assert r["kernel_time_s"] == pytest.approx(plain["kernel_time_s"], rel=1e-6)
    if device == "GeForce GTX 970":
        assert r["kernel_time_s"] == pytest.approx(r["profile"]["measured_time_s"], rel=0.02)


def test_model_all_on_a_profile_computes_every_model(capsys, gpumodeler_env):
    r = predict_json(capsys, "--profile", NCU_RAW, "--kernel", "transpose_smem", "--device",
                     "GeForce GTX 980", "--model", "all")
    assert all("kernel_time_s" in m for m in r["models"]), [m.get("error") for m in r["models"]]
    assert r["baselines"]["bandwidth_ratio_s"] > 0 and r["cross_architecture"] is True
    assert any("estimated" in n for n in r["notes"])
