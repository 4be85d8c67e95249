"""`calibrate contention`: Volkov's §6.4 fit, memory latency = a + b·λ/(c − λ), from a GPU's
throughput-versus-occupancy measurements (latency by Little's law), stored as the GPU's
calibrated values; `predict --model volkov-contention` then runs on that GPU."""
import json

import numpy as np
import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.models.volkov_contention import fit_contention

pytestmark = pytest.mark.usefixtures("gpumodeler_env")

# Tesla K40: 15 SMs at 745 MHz; a GTX 680-like contention (Volkov Table 6.5: a 300, b 32,
# c 170 GB/s) made up for the test, 128 B per warp access
SMS, CLOCK, A, B, C = 15, 745e6, 300.0, 32.0, 170e9


def synthetic(noise=0.0, seed=1):
    """Occupancies and the throughputs the §6.4/§6.5 model gives at them: n = L(λ)·λ/(128·SMs·clock)."""
    rnd = np.random.default_rng(seed)
    lam = np.linspace(20e9, 160e9, 12)
    latency = A + B * lam / (C - lam)
    n = latency * lam / (128 * SMS * CLOCK)
    return n, lam * (1 + noise * rnd.standard_normal(lam.size))


def test_the_fit_recovers_a_b_c():
    n, lam = synthetic()
    fit = fit_contention(n, lam, sms=SMS, clock_hz=CLOCK)
    assert fit.a_cycles == pytest.approx(A, rel=1e-3)
    assert fit.b_cycles == pytest.approx(B, rel=1e-2)
    assert fit.c_bytes_per_s == pytest.approx(C, rel=1e-3)
    assert fit.mape_percent < 0.1


def test_too_few_measurements_are_refused():
    with pytest.raises(InvalidParameter, match="3 or more"):
        fit_contention([8, 16], [50e9, 90e9], sms=SMS, clock_hz=CLOCK)


def test_calibrate_save_then_predict(tmp_path, capsys):
    n, lam = synthetic(noise=0.01)
    path = tmp_path / "k40-contention.csv"
    path.write_text("occupancy,throughput_bytes_per_s\n"
                    + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(n, lam)))
    argv = ["predict", "--device", "Tesla K40", "--latency-bound", "600", "--issued-instructions",
            "20", "--gmem-bytes", "128", "--critical-dram-accesses", "1", "--block-size", "256",
            "--occupancy", "32", "--grid-size", "10000", "--model", "volkov-contention", "--json"]
    assert main(argv) == 2                       # no fit known for the K40
    capsys.readouterr()
    assert main(["calibrate", "contention", "--measurements", str(path), "--device", "Tesla K40",
                 "--save", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["b_cycles"] == pytest.approx(B, rel=0.2) and out["c_bytes_per_s"] == pytest.approx(C, rel=0.05)
    assert main(argv) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    assert model["quantities"]["contention_fit_source"].startswith("calibrated")
    assert model["quantities"]["contention_fit"][0] == [pytest.approx(out["b_cycles"]),
                                                        pytest.approx(out["c_bytes_per_s"])]
    # a bound given as a number: the stored intercept a cannot replace its DRAM latency
    assert any("not applied" in n for n in model["notes"])
    # `calibrate list` shows the stored fit with its provenance and citation
    assert main(["calibrate", "list", "--json"]) == 0
    (fit,) = [c for c in json.loads(capsys.readouterr().out) if c["kind"] == "contention"]
    assert fit["device"] == "Tesla K40" and fit["provenance"] == "calibration"
    assert fit["parameters"]["a"] == pytest.approx(out["a_cycles"])
    assert fit["parameters"]["b"] == pytest.approx(out["b_cycles"])
    assert fit["parameters"]["c"] == pytest.approx(out["c_bytes_per_s"])
    assert fit["source"].startswith("calibrated-contention-") and path.name in fit["citation"]
    assert main(["calibrate", "list", "--kind", "contention"]) == 0
    text = capsys.readouterr().out
    assert "Tesla K40" in text and "contention" in text and "calibration" in text
    assert main(["calibrate", "list", "--kind", "link", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_file_without_the_columns_is_one_line(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("x,y\n1,2\n")
    assert main(["calibrate", "contention", "--measurements", str(path), "--device", "Tesla K40"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "occupancy" in err
