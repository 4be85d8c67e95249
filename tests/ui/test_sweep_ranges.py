"""The sweep panel's plain helpers: ranges and measured points (no Qt)."""
import numpy as np
import pytest

from gpumodeler.core.project import LaunchConfig
from gpumodeler.ui.launch_panel.measurements import (MeasurementsRefused, column_for,
                                                     measurements_from_rows)
from gpumodeler.ui.launch_panel.ranges import SweepRange, default_range, range_of, range_values


def test_default_ranges_around_the_launch():
    launch = LaunchConfig("l1", data_size=400_000_000, variables={"a": 128})
    assert default_range("block_size", launch, None) == SweepRange(32, 1024, 32)
    assert default_range("occupancy", launch, None, 48) == SweepRange(1, 48, 48)
    assert default_range("data_size", launch, None) == SweepRange(40_000, 400_000_000, 60, log=True)
    assert default_range("a", launch, None) == SweepRange(0, 256, 257)
    assert default_range("a", None, None) == default_range("gpu", launch, None) == SweepRange(1, 100, 50)


def test_a_guards_share_is_swept_from_0_to_1():
    """A guard's variable is a share of the warps: 0..1, whatever its value; a loop
    variable's range follows its value."""
    from pathlib import Path

    from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
    listing = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass" / "saxpy2.sm_90.sass"
    graph, _ = import_kernel_with_report(listing)
    launch = LaunchConfig("l1", data_size=1000, variables={"guard1": 0.25, "loop1": 8})
    assert default_range("guard1", launch, graph) == SweepRange(0, 1, 11)
    assert default_range("loop1", launch, graph) == SweepRange(0, 16, 17)


def test_a_guards_axis_says_it_is_a_share():
    from gpumodeler.ui.plots.sweep_plot import axis_title
    assert axis_title("guard1", "guard1 (guard)") == "guard1 (share of the warps)"
    assert axis_title("warps_per_block", "warps_per_block (warps in a block)") == \
        "warps_per_block (warps in a block)"
    assert axis_title("a", "a (loop variable)") == "a (loop iterations)"


def test_a_saved_sweep_gives_back_its_range():
    powers = [2.0 ** k for k in range(13)]
    assert range_of(powers) == SweepRange(1, 4096, 13, log=True)
    assert np.allclose(range_values("a", range_of(powers)), powers)
    assert range_of([0, 8, 16, 24]) == SweepRange(0, 24, 4, log=False)
    assert list(range_values("block_size", SweepRange(32, 64, 5))) == [32, 40, 48, 56, 64]


def test_measured_columns_and_rows():
    assert column_for(["N", "measured_s"], "block_size", ["block_size", "data_size", "gpu"]) \
        == ("data_size", "N")
    rows = [{"a": "32", "measured_s": "0.05"}, {"a": "64", "measured_s": "0.09", "what": "total"}]
    found = measurements_from_rows(rows, ["a", "measured_s"], "a", "a", "l1", {"m1"}, "m.csv")
    assert [(m.id, m.what, m.parameters, m.time_s) for m in found] == [
        ("m2", "kernel", {"a": 32}, 0.05), ("m3", "total", {"a": 64}, 0.09)]
    with pytest.raises(MeasurementsRefused, match="m.csv: missing column"):
        measurements_from_rows(rows, ["a"], "a", "a", "l1", set(), "m.csv")
