"""occupancy_array: the vectorized sweep agrees with the scalar calculator element by element."""
import re
import time

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

from gpumodeler.core.occupancy.compute_capability import ARCHITECTURES, SUPPORTED_COMPUTE_CAPABILITIES
from gpumodeler.core.errors import InvalidParameter, LaunchError
from gpumodeler.core.occupancy.calculator import occupancy, occupancy_array


def _assert_agrees(arrays, index, cc, options):
    args = (int(arrays.block_size[index]), int(arrays.registers_per_thread[index]),
            int(arrays.shared_mem_bytes[index]))
    static = int(arrays.static_shared_mem_bytes[index])
    try:
        expected = occupancy(cc, *args, static_shared_mem_bytes=static, **options)
    except LaunchError as e:
        assert not arrays.valid[index]
        assert arrays.reasons[index] == str(e)
        with pytest.raises(LaunchError, match="^" + re.escape(str(e)) + "$"):
            arrays.at(index)
        return
    assert arrays.valid[index] and arrays.reasons[index] == ""
    assert arrays.at(index) == expected


@st.composite
def sweeps(draw):
    cc = draw(st.sampled_from(SUPPORTED_COMPUTE_CAPABILITIES))
    arch = ARCHITECTURES[cc]
    options = {"opt_in": draw(st.booleans())}
    choice = draw(st.sampled_from(["default", "carveout", "config"]))
    if choice == "carveout" and arch.has_carveout:
        options["carveout_percent"] = draw(st.integers(0, 100))
    elif choice == "config":
        options["shared_mem_config_bytes"] = draw(st.sampled_from(arch.shared_mem_configs_bytes))
    if arch.supports_partitioned_global_caching:
        options["partitioned_global_caching"] = draw(st.booleans())
    n = draw(st.integers(1, 40))
    ints = lambda lo, hi: st.lists(st.integers(lo, hi), min_size=n, max_size=n)  # noqa: E731
    block = draw(ints(0, 1100))
    regs = draw(ints(0, 260))
    dynamic = draw(ints(0, arch.shared_mem_per_block_optin_bytes + 2048))
    static = draw(ints(0, 50000))
    return cc, options, block, regs, dynamic, static


@settings(max_examples=50, deadline=None)
@given(sweeps())
def test_array_agrees_with_scalar(sweep):
    cc, options, block, regs, dynamic, static = sweep
    arrays = occupancy_array(cc, np.array(block), np.array(regs), np.array(dynamic),
                             static_shared_mem_bytes=np.array(static), **options)
    for i in range(len(block)):
        _assert_agrees(arrays, i, cc, options)


@pytest.mark.parametrize("cc", ["3.7", "6.0", "7.5", "8.6"])
def test_dense_grid_agrees_with_scalar(cc):
    """Every block size that is a warp multiple +-1 and register count on a coarse grid."""
    blocks = np.array([1, 31, 32, 33, 95, 96, 97, 255, 256, 257, 511, 512, 513, 767, 768, 769,
                       1023, 1024, 1025])
    regs = np.array([0, 8, 24, 32, 40, 64, 65, 96, 128, 168, 200, 255, 256])
    dynamic = np.array([0, 1, 4096, 12288, 30000, 49152, 49153, 70000])
    arrays = occupancy_array(cc, blocks[:, None, None], regs[None, :, None], dynamic, opt_in=True)
    assert arrays.shape == (19, 13, 8)
    for index in np.ndindex(arrays.shape):
        _assert_agrees(arrays, index, cc, {"opt_in": True})


def test_broadcasting_shapes():
    a = occupancy_array("8.6", np.arange(32, 1025, 32)[:, None], np.array([16, 32, 64]), 0)
    assert a.shape == (32, 3)
    assert a.active_warps_per_sm.shape == (32, 3)
    assert a.block_limits["registers"].shape == (32, 3)
    assert a.limited_by["warps"].shape == (32, 3)
    assert a.valid.all()
    scalar = occupancy_array("8.6", 256, 32, 0)
    assert scalar.shape == ()
    assert scalar.at(()) == occupancy("8.6", 256, 32, 0)


def test_invalid_points_are_zero_with_a_reason():
    a = occupancy_array("8.6", np.array([256, 1100]), 32)
    assert a.valid.tolist() == [True, False]
    assert a.reasons[1] == "block size 1100 exceeds the 1024-thread limit by 76"
    assert a.active_blocks_per_sm[1] == 0 and a.occupancy[1] == 0.0
    assert not any(a.limited_by[name][1] for name in a.limited_by)


def test_float_arrays_are_refused():
    with pytest.raises(InvalidParameter, match="block_size must hold integers, got dtype float64"):
        occupancy_array("8.6", np.array([256.0]), 32)
    with pytest.raises(InvalidParameter, match="registers_per_thread must hold integers"):
        occupancy_array("8.6", 256, np.array([True]))


def test_negative_values_are_refused():
    with pytest.raises(InvalidParameter, match=r"shared_mem_bytes must be >= 0; 2 value\(s\) "
                                               r"are negative, first -1 at index \(1,\)"):
        occupancy_array("8.6", 256, 32, np.array([0, -1, -2]))


@pytest.mark.slow
def test_million_points_is_fast():
    """The performance goal is well under a second; the bound here only catches a
    pathological slowdown on a loaded CI machine."""
    rng = np.random.default_rng(0)
    n = 1_000_000
    block = rng.integers(1, 1025, n)
    regs = rng.integers(0, 256, n)
    dynamic = rng.integers(0, 60_000, n)
    start = time.perf_counter()
    a = occupancy_array("8.6", block, regs, dynamic)
    elapsed = time.perf_counter() - start
    assert a.shape == (n,)
    assert 0 < a.valid.sum() < n
    assert elapsed < 3.0, elapsed


def test_a_size_above_2_53_is_refused_not_left_to_overflow_int64():
    """At 2^58 registers per thread the int64 products overflowed and the extremes-based
    shortcuts then declared another launch of the same call ('no block fits'); such a size
    is refused by name, and 2^53 (the CLI's largest whole number) still evaluates with the
    other launch untouched."""
    with pytest.raises(InvalidParameter, match=r"registers_per_thread holds 288230376151711744"):
        occupancy_array("2.1", np.array([256, 256]), np.array([2 ** 58, 0]))
    arrays = occupancy_array("2.1", np.array([256, 256]), np.array([2 ** 53, 0]))
    assert not arrays.valid[0] and arrays.valid[1]
    assert int(arrays.active_warps_per_sm[1]) == occupancy("2.1", 256, 0).active_warps_per_sm
