"""The rules written once for one launch and for arrays (core.occupancy.checks,
core.models.kernel_time.eq41) give the same number on a Python int or float as on each
element of an array, and the one-launch paths still never load numpy."""
import subprocess
import sys

from hypothesis import given, settings, strategies as st
import numpy as np

from gpumodeler.core.models.kernel_time import eq41
from gpumodeler.core.occupancy import checks
from gpumodeler.core.occupancy.compute_capability import ARCHITECTURES, SUPPORTED_COMPUTE_CAPABILITIES

_CCS = sorted(ARCHITECTURES)


def _elementwise(rule, *columns):
    """``rule`` over whole arrays, and over each row's Python ints, as two lists."""
    as_arrays = [np.asarray(c, dtype=np.int64) for c in columns]
    whole = np.broadcast_to(rule(*as_arrays), as_arrays[0].shape).tolist()
    one_by_one = [rule(*(int(v) for v in row)) for row in zip(*columns)]
    return whole, one_by_one


@settings(max_examples=60, deadline=None)
@given(cc=st.sampled_from(_CCS),
       rows=st.lists(st.tuples(st.integers(1, 1024), st.integers(0, 255), st.integers(0, 99_000),
                               st.integers(0, 49_000)), min_size=1, max_size=40))
def test_occupancy_rules_agree_on_ints_and_arrays(cc, rows):
    arch = ARCHITECTURES[cc]
    block, regs, dynamic, static = (list(c) for c in zip(*rows))
    pairs = [
        _elementwise(lambda b: checks.warps_per_block(arch, b), block),
        _elementwise(lambda s, d: checks.allocated_shared_bytes(arch, s, d), static, dynamic),
        _elementwise(lambda b, r: checks.registers_per_block_tesla(
            arch, checks.warps_per_block(arch, b), r), block, regs),
        _elementwise(lambda s, d: checks.shared_config(
            arch, arch.shared_mem_configs_bytes[0], checks.allocated_shared_bytes(arch, s, d)),
            static, dynamic),
        _elementwise(lambda s, d: checks.blocks_fitting(
            arch.shared_mem_per_sm_bytes, checks.allocated_shared_bytes(arch, s, d)), static, dynamic),
    ]
    if arch.register_allocation != "block":
        pairs.append(_elementwise(lambda r: checks.registers_per_warp(arch, r), regs))
        for caching in (False, True):
            def limits(b, r, caching=caching):
                per_warp = checks.registers_per_warp(arch, r)
                found = checks.warp_register_limits(arch, per_warp, checks.warps_per_block(arch, b),
                                                    caching, True)
                return found[0] * 4 + found[1] * 2 + found[2] * 1  # one number per launch
            pairs.append(_elementwise(limits, block, regs))
    for code in range(1, 5):
        pairs.append(_elementwise(
            lambda b, r, s, d, code=code: dict(checks.input_checks(
                arch, b, r, s, d, arch.shared_mem_per_block_bytes))[code],
            block, regs, static, dynamic))
    for whole, one_by_one in pairs:
        assert whole == one_by_one


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(*(st.floats(1e-3, 1e6) for _ in range(4)), st.integers(1, 200),
                          st.floats(0.05, 5.0)), min_size=1, max_size=20))
def test_eq41_is_the_same_on_floats_and_arrays(rows):
    columns = [np.array(c, dtype=float) for c in zip(*rows)]
    cycles, by_latency, wt = eq41(*columns)
    for i, row in enumerate(rows):
        one = eq41(*(float(v) for v in row))
        assert all(type(v) is float for v in one)
        assert one == (cycles[i], by_latency[i], wt[i])  # bit for bit


def test_one_launch_loads_no_numpy():
    probe = ("import sys\n"
             "from gpumodeler.core.occupancy.calculator import occupancy\n"
             "from gpumodeler.core.errors import LaunchError\n"
             f"for cc in {SUPPORTED_COMPUTE_CAPABILITIES!r}:\n"
             "    for args in ((256, 32, 1024), (64, 0, 0), (1024, 255, 0), (2048, 8, 0)):\n"
             "        try:\n"
             "            occupancy(cc, *args)\n"
             "        except LaunchError:\n"
             "            pass\n"
             "occupancy('5.2', 256, 40, 2048, partitioned_global_caching=True)\n"
             "occupancy('8.6', 128, 64, 40000, carveout_percent=25)\n"
             "print('numpy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
