"""The tensor row through the CLI: `predict --graph` of an imported WMMA kernel, the
device rates from devices.db, the missing-rate message and --tensor-rate."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def wmma_graph(tmp_path, capsys):
    out = tmp_path / "wmma.json"
    code, _, err = run(capsys, "kernel", "import", SASS / "wmma_gemm.sm_80.sass", "-o", out)
    assert code == 0, err
    return out


def predict(capsys, graph, device, *extra):
    return run(capsys, "predict", "--device", device, "--graph", graph, "--set", "loop1=64",
               "--grid-size", 1000, "--block-size", 32, "--registers", 64, "--json", *extra)


def test_a100_tensor_row_from_the_device_rate(capsys, wmma_graph):
    # the sm_80 body is unrolled 4x: 8 HMMA.16816.F32 (2048 multiply-adds each) per 4
    # iterations, so 64 iterations = 16 x 8 x 2048 = 262144 per warp; A100: 1024 per clock
    code, out, err = predict(capsys, wmma_graph, "A100 SXM4 40 GB")
    assert code == 0, err
    d = json.loads(out)
    assert d["cycles_per_warp"]["tensor"] == 262144 / 1024


def test_h100_rate_is_twice_a100(capsys, wmma_graph):
    # the H100's own table (hopper-published) has no IMAD latency: the sm_80 listing is
    # evaluated with its own table, pinned, and the refusal without it says so
    code, out, err = predict(capsys, wmma_graph, "H100 SXM5 80 GB")
    assert code == 2 and "--table ampere-published" in err
    code, out, err = predict(capsys, wmma_graph, "H100 SXM5 80 GB", "--table", "ampere-published")
    assert code == 0, err
    # 2048 per tensor clock; the tensor clock is 1830 MHz against the 1980 MHz SM clock
    # (whitepaper Table 3's tensor peaks imply it), so 1980/1830 SM cycles per tensor cycle
    assert json.loads(out)["cycles_per_warp"]["tensor"] == pytest.approx(262144 / 2048 * 1980 / 1830)


def test_missing_rate_names_value_and_flag(capsys, wmma_graph):
    # the A10's own table (GA10x) has no HMMA latency: the A100's 8 cycles do not hold on a
    # chip with a quarter of its tensor rate; the sm_80 listing's own table is pinned here
    code, out, err = predict(capsys, wmma_graph, "NVIDIA A10")
    assert code == 2 and "ampere-ga10x-published" in err and "--table ampere-published" in err
    code, out, err = predict(capsys, wmma_graph, "NVIDIA A10", "--table", "ampere-published")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "tensor_fp16_fp32acc_macs_per_cycle_per_sm is unknown" in err
    assert "--tensor-rate fp16_fp32acc=N" in err
    code, out, err = predict(capsys, wmma_graph, "NVIDIA A10", "--table", "ampere-published",
                             "--tensor-rate", "fp16_fp32acc=256")
    assert code == 0, err
    assert json.loads(out)["cycles_per_warp"]["tensor"] == 262144 / 256


@pytest.mark.parametrize("bad", ["fp17=3", "fp16", "int8=0", "int8=-4", "int8=x"])
def test_bad_tensor_rate(capsys, wmma_graph, bad):
    with pytest.raises(SystemExit) as e:
        predict(capsys, wmma_graph, "NVIDIA A10", "--tensor-rate", bad)
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--tensor-rate" in err and "Traceback" not in err
