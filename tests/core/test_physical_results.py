"""The one rule for results that cannot be results (core/physical.py), CUDA's launch limits
(core/launch_limits.py) and the types of a project's values (core/override_types.py):
each refuses with the specific core exception and a message naming what is wrong."""
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from gpumodeler.core import physical
from gpumodeler.core.application.energy import DevicePower, energy
from gpumodeler.core.errors import (
    FormatError,
    GraphError,
    InvalidParameter,
    LaunchError,
    UnphysicalResult,
)
from gpumodeler.core.launch_limits import (
    MAX_GRID_X,
    check_launch,
    data_size_limit,
    launch_problem,
    launch_problems,
    limits,
)
from gpumodeler.core.measurements.importer import import_text
from gpumodeler.core.models.result import ImplausiblePrediction
from gpumodeler.core.models.sanity import check_finite
from gpumodeler.core.pipeline import evaluate_launch, resolve_link
from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice, check_project
from gpumodeler.core.transfers.calibration import fit_link
from gpumodeler.core.transfers.fit import fit_transfer_model

INF, NAN = float("inf"), float("nan")


# -- the rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, positive, ok", [
    (1.5, False, True), (0.0, False, True), (0.0, True, False), (-1e-300, False, False),
    (INF, False, False), (-INF, False, False), (NAN, False, False), (1e308, True, True),
    (np.float64(2.0), True, True), (np.float32("inf"), False, False),
])
def test_require_physical_takes_finite_non_negative_numbers(value, positive, ok):
    if ok:
        assert physical.require_physical(value, "the energy", "J", positive=positive) == float(value)
    else:
        with pytest.raises(UnphysicalResult, match="the energy would be"):
            physical.require_physical(value, "the energy", "J", positive=positive)


def test_require_physical_names_the_quantity_the_value_and_the_input():
    with pytest.raises(UnphysicalResult) as e:
        physical.require_physical(-300.0, "the board power of gpu1", "W", kind="power",
                                  cause="give board_power_w >= 0")
    assert str(e.value) == ("the board power of gpu1 would be -300.0 W, which is not a finite "
                            "non-negative power; give board_power_w >= 0")
    with pytest.raises(UnphysicalResult, match="beyond any finite number"):
        physical.require_physical(INF, "t", "s")
    with pytest.raises(UnphysicalResult, match="not a number"):
        physical.require_physical("fast", "t", "s")


def test_require_finite_finds_the_first_non_finite_number_anywhere():
    doc = {"a": 1, "b": [1.0, {"c": np.array([1.0, INF])}], "d": (NAN,)}
    assert physical.first_non_finite(doc)[0] == "b[1].c"
    assert physical.first_non_finite({"ids": ["x", "y"], "n": 3, "ok": 2.5}) is None
    assert physical.first_non_finite([1 + 1j, complex(INF, 0)])[0] == "[1]"
    with pytest.raises(UnphysicalResult, match=r"the result b\[1\]\.c is not a finite number "
                                               r"\(it overflowed\)"):
        physical.require_finite(doc)
    with pytest.raises(UnphysicalResult, match=r"x\.t is not a finite number \(undefined\)"):
        physical.require_finite({"t": NAN}, "x")


def test_lambda_fits_of_tiny_and_far_apart_times():
    from gpumodeler.core.transfers.calibration import fit_kernel_lambda
    for weighting in ("relative", "absolute"):
        fit = fit_kernel_lambda([1e-300, 2e-300], [2e-300, 4e-300], weighting)
        assert fit.lam == pytest.approx(0.5, rel=1e-12)
        with pytest.raises(UnphysicalResult, match="λ would be (undefined|beyond any finite)"):
            fit_kernel_lambda([1e300, 2e300], [2e-300, 4e-300], weighting)


def test_the_models_check_is_the_same_rule():
    assert issubclass(ImplausiblePrediction, UnphysicalResult)
    assert check_finite("gajger", 2.0) == 2.0
    for bad in (INF, NAN, 0.0, -1.0):
        with pytest.raises(ImplausiblePrediction, match="gajger: the kernel time would be"):
            check_finite("gajger", bad)


# -- inputs whose results would be impossible ---------------------------------------------

class _Act:
    def __init__(self, id_, start, end):
        self.id, self.start_s, self.end_s = id_, start, end


class _Timeline:
    makespan_s = 2.0
    activities = (_Act("k", 0.0, 1.0),)

    def by_id(self):
        return {a.id: a for a in self.activities}


def test_a_negative_power_is_refused_naming_the_device_and_the_field():
    ok = energy(_Timeline(), {"k": "gpu1"}, {"gpu1": DevicePower(100.0, 10.0)})
    assert ok.energy_j == pytest.approx(100.0 + 10.0)
    for power, field in ((DevicePower(-300.0, 10.0), "board_power_w"),
                         (DevicePower(100.0, NAN), "idle_power_w")):
        with pytest.raises(UnphysicalResult, match=f"of gpu1 would be .*give {field}") as e:
            energy(_Timeline(), {"k": "gpu1"}, {"gpu1": power})
        assert e.value.item == field
    with pytest.raises(UnphysicalResult, match="the host's power would be -5.0 W"):
        energy(_Timeline(), {"k": "gpu1"}, {"gpu1": DevicePower(1.0, 1.0)}, host_power_w=-5.0)


def test_link_fits_of_tiny_times_equal_times_and_huge_sizes():
    # the documented fit is unchanged by fitting in scaled units
    fit = fit_link([4, 1024, 1e6, 1.6e9], [3.97e-6, 4.06e-6, 96e-6, 0.147])
    assert fit.startup_s == pytest.approx(3.96785e-6, rel=1e-5)
    assert fit.effective_bandwidth_bytes_per_s == pytest.approx(1.08757e10, rel=1e-5)
    # sizes of 1e300 B at a real bandwidth: scaled, no overflow
    big = fit_link([1e299, 1e300], [1e289, 1e290])
    assert math.isfinite(big.effective_bandwidth_bytes_per_s)
    with pytest.raises(InvalidParameter, match="below 1 ns"):
        fit_link([1, 2], [1e-300, 2e-300])
    with pytest.raises(InvalidParameter, match="do not grow with size .*bandwidth would be infinite"):
        fit_link([1, 2], [1e-3, 1e-3])
    with pytest.raises(InvalidParameter, match="below 1 ns"):
        fit_transfer_model([4, 1024, 1e6, 1e7], [1e-300, 2e-300, 3e-300, 4e-300])
    # a bandwidth beyond a float (1e308 B in 1e-11 s): refused, never an infinite regime
    with pytest.raises(InvalidParameter, match="regime bandwidth must be > 0 B/s, got inf|"
                                               "every copy is as fast as the startup time"):
        fit_transfer_model([4, 1024, 4096, 1e308], [5e-6, 5e-6, 5e-6, 5.00001e-6])


def test_a_measurement_beyond_a_float_is_refused_naming_the_row():
    head = "kind,name,direction,size,size_unit,grid,block,time,unit,gpu,energy [J]\n"
    with pytest.raises(FormatError, match="f.csv row 2, column time: a duration of 1e400"):
        import_text(head + "kernel,k,,,,4096,256,1e400,us,G,\n", "f.csv", "timings")
    with pytest.raises(FormatError, match="f.csv row 2, column size: a copy size of 1e308"):
        import_text(head + "transfer,x,htod,1e308,GiB,,,1,ms,G,\n", "f.csv", "timings")
    with pytest.raises(FormatError, match="f.csv row 2: metrics.energy.value is not a finite"):
        import_text(head + "kernel,k,,,,4096,256,1,us,G,1e400\n", "f.csv", "timings")
    ok = import_text(head + "kernel,k,,,,4096,256,1,us,G,0.5\n", "f.csv", "timings")
    assert ok.records[0].time_s == pytest.approx(1e-6)


def test_an_edge_latency_beyond_any_instruction_is_refused():
    from gpumodeler.core.kernel.graph import from_dict
    doc = {"format": "gpumodeler-kernel", "version": 1, "name": "k",
           "instructions": [{"id": "i1", "opcode": "FADD"}, {"id": "i2", "opcode": "FADD"}],
           "edges": [{"from": "i1", "to": "i2", "kind": "dependency", "latency": 1e9}]}
    assert from_dict(doc).edges  # the limit itself is allowed
    for latency in (1e9 + 1, 1e308):
        doc["edges"][0]["latency"] = latency
        with pytest.raises(GraphError, match="is beyond any instruction's; give at most 1e\\+09"):
            from_dict(doc)


# -- CUDA's launch limits ---------------------------------------------------------------

def test_the_limits_per_compute_capability():
    assert limits(None).grid == (2**31 - 1, 65535, 65535)
    assert limits("8.6").block == (1024, 1024, 64) and limits("8.6").threads_per_block == 1024
    assert limits("2.0").grid == (65535, 65535, 65535)
    assert limits("1.3").grid == (65535, 65535, 1) and limits("1.3").threads_per_block == 512
    assert limits("42.0") == limits(None)   # unknown: the limits of 3.0 and later
    assert data_size_limit(256) == MAX_GRID_X * 256


@pytest.mark.parametrize("grid, block, cc, expect", [
    (2**31 - 1, 1024, "8.0", ""),
    (2**31, 256, None, "grid size x = 2147483648 blocks exceeds CUDA's limit of 2147483647 (2^31 - 1)"),
    ((100, 65536), (16, 16), "9.0", "grid size y = 65536 blocks exceeds CUDA's limit of 65535"),
    ((1, 1, 65536), 32, "7.0", "grid size z = 65536"),
    ((1, 1, 2), 32, "1.3", "grid size z = 2 blocks exceeds CUDA's limit of 1 for compute capability 1.3"),
    (65536, 32, "2.0", "grid size x = 65536 blocks exceeds CUDA's limit of 65535 for compute capability 2.0"),
    (65536, 32, "3.0", ""),
    (1, (1, 1, 65), "8.6", "block size z = 65 threads exceeds CUDA's limit of 64"),
    (1, (16, 16, 4), "8.6", ""),
    (1, (32, 32, 2), "8.6", "block size 32x32x2 = 2048 threads exceeds the 1024-thread limit by 1024"),
    (1, 1100, "8.0", "block size 1100 exceeds the 1024-thread limit by 76"),
    (1, 513, "1.3", "block size 513 exceeds the 512-thread limit by 1"),
    (0, 32, None, "grid size x must be a whole number >= 1"),
])
def test_check_launch(grid, block, cc, expect):
    assert launch_problem(grid, block, cc).startswith(expect) and bool(expect) == bool(
        launch_problem(grid, block, cc))
    if expect:
        with pytest.raises(LaunchError) as e:
            check_launch(grid, block, cc)
        assert e.value.item == ("grid_size" if expect.startswith("grid") else "block_size")


def test_the_vectorised_check_gives_each_row_the_one_verdict():
    grids = np.array([1, 2**31 - 1, 2**31, 70000, 5, 2**31])
    blocks = np.array([1024, 1, 256, 256, 2048, 2048])
    for cc in (None, "2.0", "1.1", "8.6"):
        rows = launch_problems(grids, blocks, cc)
        assert list(rows) == [launch_problem(int(g), int(b), cc) for g, b in zip(grids, blocks)]


# -- a project's values -----------------------------------------------------------------

@pytest.mark.parametrize("overrides, expect", [
    ({"sms": "132"}, "device G: override sms is text ('132'); expected a whole number"),
    ({"copy_engines": "two"}, "override copy_engines is text ('two'); expected a whole number"),
    ({"sm_clock_hz": NAN}, "override sm_clock_hz is a number that is not finite (nan)"),
    ({"board_power_w": -300.0}, "override board_power_w is -300.0; expected a number >= 0"),
    ({"compute_capability": 5.2}, "override compute_capability is a number (5.2); expected a text"),
    ({"smss": 13}, "unknown override 'smss'; valid: "),
    ({"sms": True}, "override sms is true/false"),
])
def test_device_overrides_are_type_checked(overrides, expect):
    # a whole number written as 13.0 (as JSON may write it) is a whole number
    ok = PlacedDevice("g1", "gpu", "GPU", label="G",
                      overrides={"sms": 13.0, "sm_clock_hz": 1.2e9, "compute_capability": "5.2"})
    assert ok.checked() is ok
    with pytest.raises(InvalidParameter) as e:
        replace(ok, overrides=overrides).checked()
    assert expect in str(e.value) and e.value.item == "g1"


def test_link_overrides_are_type_checked_and_unknown_keys_named():
    ok = Connection("c1", "PCIe", "h", "g", overrides={"bandwidth_bytes_per_s": 1.5e10,
                                                        "lambda_htod": 0.7,
                                                        "transfer_calibration": "pinned"})
    assert ok.checked() is ok
    for overrides, expect in (({"bandwith": 1e9}, "unknown override 'bandwith'; valid: bandwidth_bytes_per_s"),
                              ({"lambda_dtoh": 0}, "override lambda_dtoh is 0; expected a number > 0"),
                              ({"startup_htod_s": "4us"}, "override startup_htod_s is text")):
        with pytest.raises(InvalidParameter, match=re.escape(expect)):
            replace(ok, overrides=overrides).checked()


def test_launch_values_are_type_checked():
    base = LaunchConfig("l1", name="L", gpu="g1", kernel="k", grid_size=10)
    assert base.checked_types() is base
    for change, expect in (({"occupancy_override": "32"}, "occupancy_override is text ('32'); expected a number"),
                           ({"occupancy_override": INF}, "occupancy_override is a number that is not finite"),
                           ({"lam": None}, "λ (lam) is null (None); expected a number"),
                           ({"variables": {"a": "128"}}, "variables a is text"),
                           ({"variables": {"a": NAN}}, "variables a is a number that is not finite"),
                           ({"kernel_overrides": {"latency_bound": 400}}, "kernel_overrides latency_bound is a whole number"),
                           ({"block_size": "256"}, "block_size is text"),
                           ({"grid_size": 3_000_000_000}, "grid size x = 3000000000 blocks exceeds")):
        with pytest.raises(InvalidParameter, match=re.escape(expect)):
            replace(base, **change).checked()


def test_check_project_refuses_at_load_and_evaluation_names_a_missing_launch(example_project):
    project = example_project()
    assert check_project(project) is project
    gpu = next(iter(project.gpus()))
    project.devices[gpu.id] = replace(gpu, overrides={"copy_engines": "two"})
    with pytest.raises(InvalidParameter, match="override copy_engines is text"):
        check_project(project)
    project.devices[gpu.id] = gpu
    conn = next(iter(project.connections.values()))
    project.connections[conn.id] = replace(conn, overrides={"bandwith": 1})
    with pytest.raises(InvalidParameter, match="unknown override 'bandwith'"):
        check_project(project)
    with pytest.raises(InvalidParameter, match="unknown override 'bandwith'"):
        resolve_link(project, conn.id, lambda name: None)
    with pytest.raises(InvalidParameter, match="the project has no launch 'gone'"):
        evaluate_launch(project, "gone", None, None)


def test_numpy_numbers_are_numbers_and_flags_are_not():
    from gpumodeler.core.override_types import check_overrides
    check_overrides({"sms": np.int64(13), "sm_clock_hz": np.float32(1e9), "copy_engines": 2.0},
                    "gpu", "d")
    for bad, expect in (({"sms": np.bool_(True)}, "override sms is true/false"),
                        ({"sms": np.float64(1.5)}, "override sms is a number"),
                        ({"sm_clock_hz": np.float64("nan")}, "is a number that is not finite")):
        with pytest.raises(InvalidParameter, match=expect):
            check_overrides(bad, "gpu", "d")
