"""LaunchError messages a column at a time (core/occupancy/array_messages.py) are the scalar
calculator's, byte for byte, for every compute capability, every check and every branch of
its wording (opt-in or not, Tesla notes, rounded and grouped warps, Fermi's doubled unit)."""
import numpy as np
import pytest

from gpumodeler.core.errors import LaunchError
from gpumodeler.core.occupancy.array_messages import launch_error_messages, reason_parts
from gpumodeler.core.occupancy.checks import CHECK_NO_BLOCK_FITS, CHECK_OK
from gpumodeler.core.occupancy.calculator import occupancy, occupancy_array
from gpumodeler.core.occupancy.compute_capability import (
    ARCHITECTURES, SUPPORTED_COMPUTE_CAPABILITIES)
from gpumodeler.core.occupancy.messages import msg_no_block_fits


def _launches(cc: str, n: int, seed: int):
    """Launches around every limit of ``cc``: most cannot run, for all sorts of reasons."""
    arch = ARCHITECTURES[cc]
    rng = np.random.default_rng(seed)
    block = np.concatenate([rng.integers(0, arch.max_threads_per_block + 70, n - 8),
                            [0, 1, 31, 33, arch.max_threads_per_block,
                             arch.max_threads_per_block + 1, 10**9, 2**40]])
    regs = rng.integers(0, arch.max_registers_per_thread + 20, n)
    regs[::7] = rng.choice(sorted(arch.double_unit_register_counts) or [21, 22], n)[::7]
    top = arch.shared_mem_per_block_optin_bytes + 5000
    static = np.where(rng.random(n) < 0.7, 0, rng.integers(0, arch.shared_mem_per_block_bytes
                                                           + 3000, n))
    dynamic = rng.integers(0, top, n)
    dynamic[::5] = rng.integers(0, 64, n)[::5] * 1024
    return block, regs, static, dynamic


@pytest.mark.parametrize("cc", SUPPORTED_COMPUTE_CAPABILITIES)
@pytest.mark.parametrize("opt_in", [False, True])
def test_every_message_is_the_scalar_one(cc, opt_in):
    block, regs, static, dynamic = _launches(cc, 1500, seed=len(cc) + 17 * opt_in)
    arrays = occupancy_array(cc, block, regs, dynamic, static_shared_mem_bytes=static,
                             opt_in=opt_in)
    reasons = arrays.reasons
    codes = set()
    for i in range(block.size):
        args = (int(block[i]), int(regs[i]), int(dynamic[i]))
        try:
            occupancy(cc, *args, static_shared_mem_bytes=int(static[i]), opt_in=opt_in)
        except LaunchError as e:
            assert reasons[i] == str(e), (i, args)
            codes.add(int(arrays.failure[i]))
        else:
            assert reasons[i] == ""
    assert len(codes) >= 4  # block size, registers, shared memory, registers per block


@pytest.mark.parametrize("cc", ["1.0", "2.0", "5.2", "8.6"])
def test_called_directly_on_columns(cc):
    """Each check's formatter over columns, against the scalar message of each row."""
    arch = ARCHITECTURES[cc]
    block, regs, static, dynamic = _launches(cc, 400, seed=3)
    arrays = occupancy_array(cc, block, regs, dynamic, static_shared_mem_bytes=static)
    for code in set(arrays.failure.tolist()) - {CHECK_OK}:
        rows = np.flatnonzero(arrays.failure == code)
        zero = {k: v[rows] == 0 for k, v in arrays.block_limits.items()}
        texts = launch_error_messages(arch, code, block[rows], regs[rows], static[rows],
                                      dynamic[rows], False, zero)
        assert texts == [arrays.reason_at(i) for i in rows.tolist()]


def test_no_block_fits_names_every_zero_limit():
    arch = ARCHITECTURES["8.0"]
    names = ("warps", "registers", "shared_memory", "blocks")
    zero = {k: np.array([(c >> j) & 1 == 1 for c in range(1, 16)]) for j, k in enumerate(names)}
    empty = np.zeros(15, dtype=np.int64)
    texts = launch_error_messages(arch, CHECK_NO_BLOCK_FITS, empty, empty, empty, empty, False, zero)
    assert texts == [msg_no_block_fits({k: 0 if zero[k][i] else 1 for k in names})
                     for i in range(15)]
    assert texts[-1].endswith("the warps, registers, shared_memory, blocks limit allows 0 blocks")


def test_an_unknown_code_is_refused():
    empty = np.zeros(0, dtype=np.int64)
    with pytest.raises(ValueError, match="no launch check has code 9"):
        launch_error_messages(ARCHITECTURES["8.0"], 9, empty, empty, empty, empty, False)


@pytest.mark.parametrize("cc", ["1.3", "2.1", "7.5", "9.0"])
def test_reason_parts_are_the_reasons(cc):
    """The parts a caller formats around each message give the messages of ``reasons``."""
    block, regs, static, dynamic = _launches(cc, 800, seed=8)
    arrays = occupancy_array(cc, block, regs, dynamic, static_shared_mem_bytes=static,
                             opt_in=True)
    bad = np.flatnonzero(~arrays.valid)
    texts = np.empty(bad.size, dtype=object)
    for rows, template, columns in reason_parts(arrays, bad):
        texts[rows] = [template % row for row in zip(*columns)]
    assert texts.tolist() == arrays.reasons[bad].tolist()
    with pytest.raises(ValueError, match="cannot run"):
        reason_parts(arrays, np.flatnonzero(arrays.valid)[:1])
