"""`predict` shows the DRAM bandwidth the memory row used (sustained, the pin bandwidth as
its ceiling) and, in --json, the launch's memory parallelism (Little's law)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from in_process import cli

SAXPY = Path(__file__).resolve().parents[2] / "resources" / "validation" / "kernels" / "saxpy.json"
LAUNCH = ("--graph", SAXPY, "--data-size", "209715200", "--block-size", "256")


def predict_json(capsys, device, occupancy):
    code, out, err = cli(capsys, "predict", "--device", device, *LAUNCH, "--occupancy",
                         occupancy, "--json")
    assert code == 0, err
    return json.loads(out)


def test_text_names_the_sustained_bandwidth_and_its_ceiling(gpumodeler_env, capsys):
    code, out, err = cli(capsys, "predict", "--device", "A100 SXM4 40 GB", *LAUNCH, "--occupancy", 64)
    assert code == 0, err
    assert "global memory at 1311 GB/s (sustained; peak 1555 GB/s, the ceiling)" in out


def test_high_occupancy_runs_at_the_sustained_bandwidth(gpumodeler_env, capsys):
    s = predict_json(capsys, "A100 SXM4 40 GB", 64)
    assert s["memory_bandwidth_kind"] == "sustained"
    assert s["memory_bandwidth_bytes_per_s"] == pytest.approx(1310.72e9)
    assert s["memory_bandwidth_peak_bytes_per_s"] == pytest.approx(1555e9, rel=1e-3)  # eq. 4.7
    moved = s["warps_launched"] * 3 * 128  # two loads and a store of 4 bytes per thread
    assert s["kernel_time_s"] == pytest.approx(moved / 1310.72e9, rel=1e-6)
    assert s["memory_parallelism"]["limited_by"] == "bandwidth"


def test_low_occupancy_is_slower_by_the_littles_law_factor(gpumodeler_env, capsys):
    high = predict_json(capsys, "A100 SXM4 40 GB", 64)
    low = predict_json(capsys, "A100 SXM4 40 GB", 4)
    mp = low["memory_parallelism"]
    assert mp["limited_by"] == "bytes in flight"
    factor = mp["needed_occupancy_warps_per_sm"] / 4
    assert factor > 1 and mp["slowdown_vs_bandwidth"] == pytest.approx(factor)
    assert low["kernel_time_s"] == pytest.approx(high["kernel_time_s"] * factor, rel=1e-6)
    assert mp["bytes_in_flight_per_sm"] == 4 * 3 * 128
