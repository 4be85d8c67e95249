"""Occupancy calculator: worked examples, hand-computed cases and launch errors.

Every expected number below is worked out by hand from the rules in the module docstring of
gpumodeler.core.occupancy.calculator; the comment next to each case shows the arithmetic.
"""
import pytest

from gpumodeler.core.occupancy.compute_capability import (
    ARCHITECTURES, SUPPORTED_COMPUTE_CAPABILITIES, architecture, normalize_compute_capability)
from gpumodeler.core.errors import InvalidParameter, LaunchError, UnsupportedArchitecture
from gpumodeler.core.occupancy.calculator import UNLIMITED, occupancy


@pytest.mark.parametrize("caching", [True, False])
def test_gajger_fig_4_2_gtx970(caching):
    """Gajger 2017, Fig. 4.2: the CUDA Occupancy Calculator for cc 5.2 (GTX 970).

    The thesis' text extraction of the screenshot is shifted by one row: each input value
    sits on the line below its label. Read back in place: "1.) Select Compute Capability"
    = 5.2 (printed "5,2", a decimal comma, on the 1.b line); "1.b) Shared Memory Size Config"
    = 98304 (on the 1.c line); "1.c) Global Load Caching Mode" = "L1+L2 (ca)"; "Threads Per
    Block" = 256; "Registers Per Thread" = 16; and "Shared Memory Per Block" = 0, the value
    that fell off the end (the saxpy kernel uses no shared memory, §5.2.1). The outputs are
    not shifted: 2048 active threads, 64 active warps, 8 active blocks, 100 %.

    By hand: 256 threads = 8 warps; warps allow 64 / 8 = 8 blocks; 16 registers x 32 = 512
    per warp, floor(65536 / 4 / 512) x 4 = 128 warps' worth, 16 blocks; no shared memory.
    With "L1+L2 (ca)" caching a block lives in half the SM: 2 x floor(32 / 8) = 8 blocks
    by warps and 2 x floor(64 / 8) = 16 by registers, the same answer.
    """
    r = occupancy("5.2", 256, 16, 0, shared_mem_config_bytes=98304,
                  partitioned_global_caching=caching)
    assert r.active_threads_per_sm == 2048
    assert r.active_warps_per_sm == 64
    assert r.active_blocks_per_sm == 8
    assert r.occupancy == 1.0
    assert r.shared_mem_config_bytes == 98304
    assert r.partitioned_global_caching is caching
    assert r.block_limits == {"warps": 8, "registers": 16, "shared_memory": UNLIMITED,
                              "blocks": 32}
    assert r.limited_by == ("warps",)


def test_cli_issue_example():
    """The README's example: cc 5.2, block 256, 16 registers, no shared memory."""
    r = occupancy("5.2", 256, 16, 0)
    assert (r.active_blocks_per_sm, r.active_warps_per_sm, r.active_threads_per_sm) == (8, 64, 2048)
    assert r.occupancy == 1.0
    assert r.warps_per_block == 8
    assert r.max_warps_per_sm == 64
    assert r.allocated_registers_per_block == 4096           # 8 warps x 512
    assert r.allocated_shared_mem_per_block_bytes == 0
    assert r.shared_mem_config_bytes == 98304                 # 5.2: fixed 96 KB
    assert r.limited_by == ("warps",)


def test_kepler_register_granularity_gtx_titan():
    """cc 3.5, 128 threads, 50 registers: 50 x 32 = 1600 -> 7 x 256 = 1792 per warp,
    x 4 warps = 7168 per block; floor(65536 / 4 / 1792) x 4 = 36 warps -> 9 blocks."""
    r = occupancy("3.5", 128, 50)
    assert r.allocated_registers_per_block == 7168
    assert r.block_limits["registers"] == 9
    assert r.block_limits["warps"] == 16
    assert r.active_blocks_per_sm == 9
    assert r.active_warps_per_sm == 36
    assert r.occupancy == pytest.approx(36 / 64)
    assert r.limited_by == ("registers",)


def test_kepler_37_doubles_the_register_file():
    """cc 3.7 has 128 K registers per SM: the same launch gets floor(131072/4/1792) x 4 = 72
    warps' worth = 18 blocks, so warps (16) limit instead, and 16 blocks hit the 16 cap too."""
    r = occupancy("3.7", 128, 50)
    assert r.block_limits["registers"] == 18
    assert r.active_blocks_per_sm == 16
    assert r.limited_by == ("warps", "blocks")


def test_gp100_warp_granularity_is_two():
    """cc 6.0 has 2 sub-partitions: 192 registers = 6144 per warp; floor(65536/2/6144) x 2
    = 10 warps fit, where 6.1's 4 sub-partitions hold floor(65536/4/6144) x 4 = 8."""
    assert occupancy("6.0", 32, 192).active_blocks_per_sm == 10
    assert occupancy("6.1", 32, 192).active_blocks_per_sm == 8


def test_gp100_checks_block_registers_like_other_pascals():
    """10 warps x 6144 = 61440 registers fit GP100's 65536 per block, but the driver counts
    warps in fours (12 x 6144 = 73728), so the launch is refused on every Pascal."""
    for cc in ("6.0", "6.1"):
        with pytest.raises(LaunchError, match=r"12 warps .* = 73728 exceed the 65536-register "
                                              r"per-block limit of cc 6\.\d by 8192"):
            occupancy(cc, 320, 192)


def test_ampere_reserved_shared_memory():
    """cc 8.6, 256 threads, 32 registers, 16 KB dynamic: 16384 + 1024 reserved = 17408 B
    (a multiple of 128); floor(102400 / 17408) = 5 blocks < 6 by warps, 8 by registers."""
    r = occupancy("8.6", 256, 32, 16 * 1024)
    assert r.allocated_shared_mem_per_block_bytes == 17408
    assert r.reserved_shared_mem_per_block_bytes == 1024
    assert r.block_limits == {"warps": 6, "registers": 8, "shared_memory": 5, "blocks": 16}
    assert r.active_warps_per_sm == 40
    assert r.occupancy == pytest.approx(40 / 48)
    assert r.limited_by == ("shared_memory",)
    assert r.shared_mem_config_bytes == 102400
    assert r.min_shared_mem_config_bytes == 102400          # 5 x 17408 = 87040 > 64 KB


def test_shared_memory_rounds_to_allocation_unit():
    """cc 7.0 rounds to 256 B, 8.0 to 128 B (after adding the 1 KB reserve)."""
    assert occupancy("7.0", 64, 0, 1).allocated_shared_mem_per_block_bytes == 256
    assert occupancy("8.0", 64, 0, 1).allocated_shared_mem_per_block_bytes == 1152


def test_carveout_percent_rounds_up_to_a_configuration():
    """cc 8.0, 20 KB dynamic -> 21504 B per block. Default: the largest configuration, 164 KB:
    floor(167936 / 21504) = 7 blocks. 50 %: 83968 B rounds up to 100 KB: 4 blocks."""
    default = occupancy("8.0", 128, 32, 20 * 1024)
    assert default.shared_mem_config_bytes == 167936
    assert default.active_blocks_per_sm == 7
    half = occupancy("8.0", 128, 32, 20 * 1024, carveout_percent=50)
    assert half.shared_mem_config_bytes == 102400
    assert half.active_blocks_per_sm == 4
    named = occupancy("8.0", 128, 32, 20 * 1024, shared_mem_config_bytes=102400)
    assert named == half


def test_too_small_carveout_is_overridden():
    """A preference that cannot hold one block: Volta+ takes the smallest configuration that
    can (41984 B -> 64 KB, 1 block); Kepler falls back to its largest (48 KB, 2 blocks)."""
    volta = occupancy("8.0", 128, 32, 40 * 1024, carveout_percent=0)
    assert volta.shared_mem_config_bytes == 65536
    assert volta.active_blocks_per_sm == 1
    kepler = occupancy("3.5", 128, 32, 20 * 1024, shared_mem_config_bytes=16384)
    assert kepler.shared_mem_config_bytes == 49152
    assert kepler.active_blocks_per_sm == 2


def test_kepler_cache_configurations():
    """cc 3.5 with 8 KB per block: 16 KB -> 2 blocks, 32 KB -> 4, 48 KB -> 6."""
    blocks = [occupancy("3.5", 64, 16, 8192, shared_mem_config_bytes=c).active_blocks_per_sm
              for c in (16384, 32768, 49152)]
    assert blocks == [2, 4, 6]


def test_min_shared_mem_config_keeps_occupancy():
    """cc 8.6, no shared memory: 1 KB reserve per block, 6 blocks -> 8 KB is enough."""
    r = occupancy("8.6", 256, 32)
    assert r.active_blocks_per_sm == 6
    assert r.min_shared_mem_config_bytes == 8192


def test_turing_has_no_zero_configuration():
    """cc 7.5 offers 32 or 64 KB: a 0 % carveout rounds up to 32 KB."""
    r = occupancy("7.5", 1024, 64, carveout_percent=0)
    assert r.shared_mem_config_bytes == 32768
    assert r.active_blocks_per_sm == 1      # 32 warps fill the 7.5 SM
    assert occupancy("8.6", 1024, 32, carveout_percent=0).shared_mem_config_bytes == 8192


def test_ties_list_every_limiting_resource():
    """cc 5.2, 256 threads, 32 registers: 8 blocks by warps and by registers
    (1024 per warp, floor(65536/4/1024) x 4 = 64 warps)."""
    assert occupancy("5.2", 256, 32).limited_by == ("warps", "registers")


def test_partitioned_caching_halves_the_sm():
    """cc 5.2, 672 threads = 21 warps: with caching 2 x floor(32 / 21) = 2 blocks, else
    floor(64 / 21) = 3."""
    assert occupancy("5.2", 672, 16, partitioned_global_caching=True).active_blocks_per_sm == 2
    assert occupancy("5.2", 672, 16).active_blocks_per_sm == 3


def test_partitioned_caching_turns_off_when_registers_do_not_fit_half():
    """1024 threads x 64 registers: half an SM holds floor(16384/2048) x 2 = 16 warps < 32,
    so the driver turns caching off and the whole SM holds one block."""
    r = occupancy("5.2", 1024, 64, partitioned_global_caching=True)
    assert r.partitioned_global_caching is False
    assert r.active_blocks_per_sm == 1


def test_no_registers_means_no_register_limit():
    r = occupancy("9.0", 64, 0)
    assert r.block_limits["registers"] == UNLIMITED
    assert r.allocated_registers_per_block == 0


def test_result_is_frozen_and_hashable():
    r = occupancy("8.9", 128, 40, 4096)
    with pytest.raises(AttributeError):
        r.active_blocks_per_sm = 3
    with pytest.raises(TypeError):
        r.block_limits["warps"] = 1
    assert hash(r) == hash(occupancy("8.9", 128, 40, 4096))


# Launches that cannot run.

def test_block_size_over_limit():
    with pytest.raises(LaunchError) as e:
        occupancy("8.6", 1100, 32)
    assert str(e.value) == "block size 1100 exceeds the 1024-thread limit by 76"
    assert e.value.item == "block_size"


def test_block_size_zero():
    with pytest.raises(LaunchError, match="block size 0 is below the minimum of 1 thread"):
        occupancy("8.6", 0, 32)


def test_registers_per_thread_over_limit():
    with pytest.raises(LaunchError, match="256 registers per thread exceed the 255-register "
                                          "limit by 1"):
        occupancy("8.0", 128, 256)


def test_registers_per_block_over_limit():
    """cc 8.6, 1024 threads x 255 registers: 8192 per warp x 32 warps = 262144."""
    with pytest.raises(LaunchError) as e:
        occupancy("8.6", 1024, 255)
    assert str(e.value) == (
        "registers per block: 32 warps x 8192 registers per warp (255 per thread, allocated "
        "in units of 256) = 262144 exceed the 65536-register per-block limit of cc 8.6 by "
        "196608")


def test_registers_per_block_32k_parts():
    """cc 5.3 and 6.2 allow 32 K registers per block: 512 threads x 64 registers = 32768
    fits, 65 registers (2304 per warp x 16 = 36864) does not."""
    assert occupancy("5.3", 512, 64).active_blocks_per_sm == 2
    with pytest.raises(LaunchError, match="36864 exceed the 32768-register"):
        occupancy("6.2", 512, 65)


def test_shared_memory_over_default_limit_names_the_opt_in():
    with pytest.raises(LaunchError) as e:
        occupancy("8.6", 256, 32, 52000)
    assert str(e.value) == (
        "shared memory per block 52000 B (static 0 B + dynamic 52000 B) exceeds the default "
        "48 KB (49152 B) per-block limit by 2848 B; cc 8.6 allows up to 99 KB (101376 B) "
        "with the opt-in (opt_in=True)")
    assert occupancy("8.6", 256, 32, 52000, opt_in=True).active_blocks_per_sm == 1


def test_shared_memory_over_opt_in_limit():
    with pytest.raises(LaunchError) as e:
        occupancy("8.6", 256, 32, 100000, static_shared_mem_bytes=10000, opt_in=True)
    assert str(e.value) == (
        "shared memory per block 110000 B (static 10000 B + dynamic 100000 B) exceeds the "
        "99 KB (101376 B) opt-in per-block limit of cc 8.6 by 8624 B")


def test_shared_memory_over_both_limits_without_opt_in():
    with pytest.raises(LaunchError, match="also over the 99 KB .* by 8624 B"):
        occupancy("8.6", 256, 32, 110000)


def test_shared_memory_before_volta_has_no_opt_in():
    with pytest.raises(LaunchError, match=r"by 848 B; cc 5\.2 has no opt-in above it"):
        occupancy("5.2", 256, 16, 50000, opt_in=True)


def test_static_shared_memory_over_48k():
    with pytest.raises(LaunchError, match="static shared memory 50000 B exceeds the 48 KB "
                                          r"\(49152 B\) limit for static allocations by 848 B"):
        occupancy("9.0", 256, 32, 0, static_shared_mem_bytes=50000, opt_in=True)


def test_largest_opt_in_block_fits_exactly():
    """cc 9.0: 227 KB + 1 KB reserve = the 228 KB configuration, one block."""
    r = occupancy("9.0", 128, 32, 227 * 1024, opt_in=True)
    assert r.allocated_shared_mem_per_block_bytes == 228 * 1024
    assert r.shared_mem_config_bytes == 228 * 1024
    assert r.active_blocks_per_sm == 1
    assert r.shared_mem_per_block_limit_bytes == 227 * 1024


# Malformed input.

@pytest.mark.parametrize("bad", [256.0, True, "256", None])
def test_non_integer_block_size(bad):
    with pytest.raises(InvalidParameter, match="block_size must be an integer"):
        occupancy("8.6", bad, 32)


@pytest.mark.parametrize("kwargs, text", [
    ({"registers_per_thread": -1}, "registers_per_thread must be >= 0, got -1"),
    ({"shared_mem_bytes": -5}, "shared_mem_bytes must be >= 0, got -5"),
    ({"block_size": -1}, "block_size must be >= 0, got -1"),
])
def test_negative_inputs(kwargs, text):
    args = {"block_size": 128, "registers_per_thread": 32, "shared_mem_bytes": 0, **kwargs}
    with pytest.raises(InvalidParameter, match=text):
        occupancy("8.6", **args)


def test_negative_static_shared_memory():
    with pytest.raises(InvalidParameter, match="static_shared_mem_bytes must be >= 0"):
        occupancy("8.6", 128, 32, static_shared_mem_bytes=-1)


def test_carveout_validation():
    with pytest.raises(InvalidParameter, match="0..100"):
        occupancy("8.6", 128, 32, carveout_percent=101)
    with pytest.raises(InvalidParameter, match="cc 7.0 and later"):
        occupancy("5.2", 128, 32, carveout_percent=50)
    with pytest.raises(InvalidParameter, match="valid: 0, 8192, 16384, 32768, 65536, 102400"):
        occupancy("8.6", 128, 32, shared_mem_config_bytes=50000)
    with pytest.raises(InvalidParameter, match="not both"):
        occupancy("8.6", 128, 32, carveout_percent=50, shared_mem_config_bytes=65536)


def test_caching_only_where_it_exists():
    with pytest.raises(InvalidParameter, match="5.2, 5.3, 6.1 and 6.2 only"):
        occupancy("8.6", 128, 32, partitioned_global_caching=True)


def test_opt_in_must_be_bool():
    with pytest.raises(InvalidParameter, match="opt_in must be True or False"):
        occupancy("8.6", 128, 32, opt_in=1)


# Architectures.

def test_unknown_compute_capability_lists_supported():
    with pytest.raises(UnsupportedArchitecture) as e:
        occupancy("4.0", 128, 32)
    assert "4.0 is not supported" in str(e.value)
    assert "1.0, 1.1" in str(e.value) and "3.0, 3.5, 3.7, 5.0" in str(e.value)
    assert "12.0" in str(e.value)


def test_renamed_compute_capability_hint():
    with pytest.raises(UnsupportedArchitecture, match=r"10\.1 is called 11\.0 since CUDA 13"):
        architecture("10.1")


@pytest.mark.parametrize("text", ["eight", "8", "8.6.1", ""])
def test_malformed_compute_capability(text):
    with pytest.raises(UnsupportedArchitecture, match="not of the form"):
        architecture(text)


@pytest.mark.parametrize("spelling", ["8.6", "sm_86", "SM86", (8, 6), 8.6])
def test_compute_capability_spellings(spelling):
    assert normalize_compute_capability(spelling) == "8.6"
    assert occupancy(spelling, 128, 32).compute_capability == "8.6"


def test_required_architectures_are_covered():
    required = ["3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5",
                "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0"]
    assert set(required) <= set(SUPPORTED_COMPUTE_CAPABILITIES)


@pytest.mark.parametrize("cc", SUPPORTED_COMPUTE_CAPABILITIES)
def test_table_is_self_consistent(cc):
    a = ARCHITECTURES[cc]
    assert list(a.shared_mem_configs_bytes) == sorted(a.shared_mem_configs_bytes)
    assert a.shared_mem_per_sm_bytes == a.shared_mem_configs_bytes[-1]
    # The biggest block that may be launched fits the biggest configuration (on 1.x with the
    # 16 bytes every block holds: 16368 + 16 = 16 KB).
    assert (a.shared_mem_per_block_optin_bytes + a.reserved_shared_mem_per_block_bytes
            <= a.shared_mem_per_sm_bytes)
    assert a.shared_mem_per_block_optin_bytes >= a.shared_mem_per_block_bytes
    # A 1024-thread block fits the warp slots.
    assert a.max_threads_per_sm >= a.max_threads_per_block
    assert a.registers_per_sm % a.warp_allocation_granularity == 0
