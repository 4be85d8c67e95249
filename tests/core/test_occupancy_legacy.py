"""Occupancy on compute capabilities 1.0-3.0 (G80, GT200, Fermi, GK10x).

NVIDIA's CUDA 13 ``cuda_occupancy.h`` (the oracle of test_occupancy_oracle.py) does not know
these, so the checks are: the documents' figures (Volkov 2016 Table 2.9 and §5.7), cases
worked by hand from the rules in gpumodeler/core/occupancy/compute_capability.py (each
case's arithmetic in its comment), 3.0 against the oracle-checked 3.5, and the vectorised
path against the scalar one on random launches.

Once, outside the suite (CUDA 7.0's header, the last to cover 1.x and 2.x, is not installed
here), the vectorised path was compared with that header's rules on every block size
1-1024, register count 0-63 and a grid of shared-memory sizes for 2.0, 2.1 and 3.0 in each
cache preference (about 50 million launches), and on the 1.x register limit: no difference.
"""
import re

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

from gpumodeler.core.errors import LaunchError
from gpumodeler.core.occupancy.calculator import occupancy, occupancy_array
from gpumodeler.core.occupancy.compute_capability import ARCHITECTURES, LEGACY_ARCHITECTURES
from repetitions import repetitions

LEGACY = ("1.0", "1.1", "1.2", "1.3", "2.0", "2.1", "3.0")


def test_the_legacy_capabilities_are_supported():
    assert set(LEGACY) == set(LEGACY_ARCHITECTURES) <= set(ARCHITECTURES)


# -- The documents ----------------------------------------------------------------------------

@pytest.mark.parametrize("cc, full, launch", [
    # Volkov 2016, Table 2.9: 100 % occupancy is 24 (G80), 32 (GT200), 48 (Fermi), 64 (Kepler)
    # warps per SM; each launch below reaches it.
    ("1.0", 24, (256, 10)),   # 8-warp blocks: 3 by warps; 8*32*10 = 2560 regs, 8192/2560 = 3
    ("1.3", 32, (128, 16)),   # 4-warp blocks: 8 by warps; 4*32*16 = 2048, 16384/2048 = 8
    ("2.0", 48, (256, 20)),   # 8 warps; 640 regs/warp, 16384/640 = 25 per half, 50/8 = 6
    ("3.0", 64, (256, 32)),   # 8 warps; 1024 regs/warp, 16384/1024 = 16 per quarter, 64/8 = 8
])
def test_volkov_table_2_9_full_occupancy(cc, full, launch):
    r = occupancy(cc, *launch)
    assert r.max_warps_per_sm == full
    assert r.active_warps_per_sm == full and r.occupancy == 1.0
    # ... and the table's 50 %, 25 % and 12.5 % rows are whole numbers of warps.
    assert [full * f for f in (0.5, 0.25, 0.125)] == [full // 2, full // 4, full // 8]


def test_volkov_5_7_g80_gt200_cannot_be_constrained_to_7_blocks():
    """Volkov §5.7: shared memory is allocated in 512-byte units on G80 and GT200, so
    allocations cannot constrain occupancy to 7 blocks per SM (16384/7 = 2340.6 B lies
    between 2048 B, 8 blocks, and 2560 B, 6 blocks)."""
    sizes = np.arange(0, 16369)
    for cc in ("1.0", "1.3"):
        a = occupancy_array(cc, 32, 8, sizes)
        assert a.valid.all()
        assert 7 not in set(a.block_limits["shared_memory"].tolist())
        assert {8, 6} <= set(a.active_blocks_per_sm.tolist())
        assert (a.allocated_shared_mem_per_block_bytes % 512 == 0).all()


def test_volkov_5_7_fixed_16_byte_overhead_on_g80_and_gt200():
    """Volkov §5.7: a fixed 16 bytes per block (and 4 per kernel argument, which the static
    size carries): 2032 B + 16 = 2048 B fits 8 blocks; 2033 B spills into a third 512-byte
    unit past 2048 and leaves 6."""
    assert occupancy("1.3", 32, 8, 2032).block_limits["shared_memory"] == 8
    r = occupancy("1.3", 32, 8, 2033)
    assert r.allocated_shared_mem_per_block_bytes == 2560
    assert r.reserved_shared_mem_per_block_bytes == 16
    assert r.block_limits["shared_memory"] == 6
    # With no shared memory a block still holds one 512-byte unit.
    assert occupancy("1.0", 32, 8).allocated_shared_mem_per_block_bytes == 512


def test_volkov_5_7_kepler_256_byte_rounding():
    """Volkov §5.7 on the GTX 680 (cc 3.0): 3072 B per block allows 16 blocks per SM, 3073 B
    only 14, because the allocation is rounded up to 3328 B (49152 / 3328 = 14.8)."""
    assert occupancy("3.0", 64, 16, 3072).active_blocks_per_sm == 16
    r = occupancy("3.0", 64, 16, 3073)
    assert r.allocated_shared_mem_per_block_bytes == 3328
    assert r.active_blocks_per_sm == 14


def test_volkov_5_8_g80_ten_warp_blocks_give_twenty_warps():
    """Volkov §5.8, Fig. 5.4: on the G80, 10-warp blocks give at most 20 warps per SM."""
    r = occupancy("1.0", 320, 8)
    assert r.active_blocks_per_sm == 2 and r.active_warps_per_sm == 20
    assert r.limited_by == ("warps",)


# -- Hand-worked cases --------------------------------------------------------------------------

def test_1x_registers_are_allocated_per_block_with_warps_in_pairs():
    # 1.0, 96 threads = 3 warps, rounded to 4; 4*32*11 = 1408 -> 1536 (units of 256);
    # 8192 // 1536 = 5 blocks = 15 warps (without the pairing it would be 1280 and 6).
    r = occupancy("1.0", 96, 11)
    assert r.allocated_registers_per_block == 1536
    assert r.block_limits == {"warps": 8, "registers": 5, "shared_memory": 32, "blocks": 8}
    assert r.active_warps_per_sm == 15 and r.occupancy == pytest.approx(15 / 24)
    assert r.limited_by == ("registers",)


def test_1x_allocation_units_256_and_512():
    # One warp, paired to 2: 2*32*9 = 576 registers -> 768 on 1.0/1.1 (units of 256),
    # 1024 on 1.2/1.3 (units of 512); 8192 // 768 = 10, 16384 // 1024 = 16.
    for cc, allocated, blocks in (("1.0", 768, 10), ("1.1", 768, 10),
                                  ("1.2", 1024, 16), ("1.3", 1024, 16)):
        r = occupancy(cc, 32, 9)
        assert r.allocated_registers_per_block == allocated
        assert r.block_limits["registers"] == blocks
        assert r.active_blocks_per_sm == 8 and r.limited_by == ("blocks",)


def test_1x_launch_limits():
    # 512 threads x 16 registers = 8192 = the whole 1.0 register file: one block of 16 warps.
    r = occupancy("1.0", 512, 16)
    assert (r.active_blocks_per_sm, r.occupancy) == (1, pytest.approx(16 / 24))
    with pytest.raises(LaunchError, match=r"16 warps .* x 17 registers.* = 8704 exceed the "
                                          r"8192-register per-block limit of cc 1\.0 by 512"):
        occupancy("1.0", 512, 17)
    with pytest.raises(LaunchError, match="block size 513 exceeds the 512-thread limit"):
        occupancy("1.3", 513, 8)
    with pytest.raises(LaunchError, match="129 registers per thread exceed the 128-register"):
        occupancy("1.3", 32, 129)
    # The per-block limit is 16 KB less the 16 bytes every block holds.
    assert occupancy("1.3", 32, 8, 16368).active_blocks_per_sm == 1
    with pytest.raises(LaunchError, match=r"16384 B .* exceeds the default 16368 B per-block "
                                          r"limit by 16 B \(16 KB less the 16 B"):
        occupancy("1.3", 32, 8, 16384)
    with pytest.raises(LaunchError, match="cc 1.0 allows no larger block"):
        occupancy("1.0", 32, 8, static_shared_mem_bytes=16369)


def test_fermi_registers_per_warp_in_two_halves():
    # 2.0, 288 threads = 9 warps, 20 registers: 640 per warp; 16384 // 640 = 25 warps per
    # half, 50 per SM, 50 // 9 = 5 blocks (warps allow 48 // 9 = 5).
    r = occupancy("2.0", 288, 20)
    assert r.allocated_registers_per_block == 640 * 9
    assert r.block_limits["registers"] == 5 and r.active_blocks_per_sm == 5


def test_fermi_double_register_units():
    # 21 registers: 672 per warp, in 128-register units for this count -> 768 (not 704);
    # 16384 // 768 = 21 per half, 42 per SM, 42 // 9 = 4 blocks (704 would give 46 // 9 = 5).
    r = occupancy("2.1", 288, 21)
    assert r.allocated_registers_per_block == 768 * 9
    assert r.block_limits["registers"] == 4 and r.active_warps_per_sm == 36
    # 23 registers is not one of the counts: 736 per warp stays in units of 64.
    assert occupancy("2.0", 32, 23).allocated_registers_per_block == 768
    assert occupancy("2.0", 32, 24).allocated_registers_per_block == 768
    assert occupancy("2.0", 32, 20).allocated_registers_per_block == 640


def test_fermi_per_block_register_check_counts_warps_in_pairs():
    # 928 threads = 29 warps, 34 registers = 1088 per warp: 30 counted warps (pairs) need
    # 32640 <= 32768, so the block runs (in groups of 4 it would be 34816 and fail).
    r = occupancy("2.0", 928, 34)
    assert r.active_blocks_per_sm == 1
    assert r.block_limits["registers"] == 16384 // 1088 * 2 // 29
    # 1024 threads x 33 registers: 1088 per warp x 32 warps = 34816 > 32768.
    with pytest.raises(LaunchError, match=r"32 warps x 1088 registers per warp \(33 per thread, "
                                          r"allocated in units of 64\) = 34816 exceed"):
        occupancy("2.0", 1024, 33)
    with pytest.raises(LaunchError, match="64 registers per thread exceed the 63-register"):
        occupancy("2.0", 32, 64)


def test_fermi_shared_memory_16_or_48_kb():
    # 128-byte units: 3200 B stays 3200; in the 16 KB configuration 16384 // 3200 = 5 blocks
    # (in 256-byte units it would be 3328 and 4).
    r = occupancy("2.0", 64, 8, 3200, shared_mem_config_bytes=16384)
    assert r.allocated_shared_mem_per_block_bytes == 3200
    assert r.block_limits["shared_memory"] == 5
    # Default: the 48 KB configuration (cudaFuncCachePreferNone / PreferShared).
    assert occupancy("2.0", 64, 8, 3200).block_limits["shared_memory"] == 15
    # A block that does not fit 16 KB makes the driver use 48 KB: 49152 // 20096 = 2.
    big = occupancy("2.0", 64, 8, 20000, shared_mem_config_bytes=16384)
    assert (big.shared_mem_config_bytes, big.block_limits["shared_memory"]) == (49152, 2)
    with pytest.raises(Exception, match="carveout_percent applies to cc 7.0 and later"):
        occupancy("2.0", 64, 8, carveout_percent=50)


def test_3_0_is_3_5_with_63_registers():
    blocks = np.array([1, 32, 33, 96, 256, 257, 512, 768, 1000, 1024])[:, None, None]
    regs = np.arange(0, 64)[None, :, None]
    shared = np.array([0, 1, 255, 256, 3072, 3073, 12288, 16384, 24577, 49152])
    for config in (None, 16384, 32768, 49152):
        a = occupancy_array("3.0", blocks, regs, shared, shared_mem_config_bytes=config)
        b = occupancy_array("3.5", blocks, regs, shared, shared_mem_config_bytes=config)
        assert (a.valid == b.valid).all()
        assert (a.active_blocks_per_sm == b.active_blocks_per_sm).all()
        for name in a.block_limits:
            assert (a.block_limits[name] == b.block_limits[name]).all()
        assert (a.allocated_registers_per_block == b.allocated_registers_per_block).all()
    with pytest.raises(LaunchError, match="64 registers per thread exceed the 63-register"):
        occupancy("3.0", 32, 64)


# -- Scalar and vectorised paths agree -------------------------------------------------------

def _agree(cc, arrays, i, options):
    args = (int(arrays.block_size[i]), int(arrays.registers_per_thread[i]),
            int(arrays.shared_mem_bytes[i]))
    static = int(arrays.static_shared_mem_bytes[i])
    try:
        expected = occupancy(cc, *args, static_shared_mem_bytes=static, **options)
    except LaunchError as e:
        assert not arrays.valid[i]
        assert arrays.reasons[i] == str(e)
        with pytest.raises(LaunchError, match="^" + re.escape(str(e)) + "$"):
            arrays.at(i)
        return False
    assert arrays.valid[i]
    assert arrays.at(i) == expected
    return True


@st.composite
def legacy_sweeps(draw):
    cc = draw(st.sampled_from(LEGACY))
    arch = ARCHITECTURES[cc]
    options = {}
    if draw(st.booleans()):
        options["shared_mem_config_bytes"] = draw(st.sampled_from(arch.shared_mem_configs_bytes))
    n = draw(st.integers(1, 40))
    ints = lambda lo, hi: st.lists(st.integers(lo, hi), min_size=n, max_size=n)  # noqa: E731
    return (cc, options, draw(ints(0, 1100)), draw(ints(0, 140)),
            draw(ints(0, arch.shared_mem_per_block_bytes + 1024)),
            draw(ints(0, arch.shared_mem_per_block_bytes // 2)))


@settings(max_examples=repetitions(50, 150), deadline=None)
@given(legacy_sweeps())
def test_arrays_agree_with_scalar_on_random_legacy_launches(sweep):
    cc, options, block, regs, dynamic, static = sweep
    arrays = occupancy_array(cc, np.array(block), np.array(regs), np.array(dynamic),
                             static_shared_mem_bytes=np.array(static), **options)
    for i in range(len(block)):
        _agree(cc, arrays, i, options)


@pytest.mark.parametrize("cc", LEGACY)
def test_dense_grid_agrees_with_scalar(cc):
    blocks = np.array([1, 31, 32, 33, 64, 95, 96, 97, 160, 288, 511, 512, 513, 928, 1024, 1025])
    regs = np.array([0, 1, 8, 9, 16, 17, 21, 22, 23, 29, 32, 33, 46, 63, 64, 124, 128, 129])
    shared = np.array([0, 1, 496, 497, 2033, 3200, 8192, 16368, 16369, 49152, 49153])
    arrays = occupancy_array(cc, blocks[:, None, None], regs[None, :, None], shared)
    valid = 0
    for index in np.ndindex(arrays.shape):
        valid += _agree(cc, arrays, index, {})
    assert 0 < valid < arrays.valid.size
