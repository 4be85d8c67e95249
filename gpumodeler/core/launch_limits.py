"""CUDA's limits on a launch's grid and block, checked in one place for the CLI and the GUI.

From NVIDIA's CUDA C++ Programming Guide, "Technical Specifications per Compute
Capability" (the table of the appendix "Compute Capabilities"):

=========================  ==========  ==========  ==========
limit                      1.x         2.x         3.0 on
=========================  ==========  ==========  ==========
grid x (blocks)            65 535      65 535      2^31 − 1
grid y (blocks)            65 535      65 535      65 535
grid z (blocks)            1           65 535      65 535
block x, y (threads)       512         1024        1024
block z (threads)          64          64          64
threads per block          512         1024        1024
=========================  ==========  ==========  ==========

The threads per block come from the occupancy rules' table
(:func:`gpumodeler.core.occupancy.compute_capability.architecture`), the same table the
occupancy calculator uses. A launch whose compute capability is unknown (explicit device
flags without ``--cc``) is held to the limits of 3.0 and later: every GPU a current CUDA
runs on.

A size is a whole number (x only) or a tuple of 1–3 dimensions (x, y, z); numpy arrays of
sizes (a sweep's values) are checked by their largest value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from gpumodeler.core.errors import LaunchError, ModelError

MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535
MAX_BLOCK_XY = 1024
MAX_BLOCK_Z = 64
MAX_THREADS_PER_BLOCK = 1024


@dataclass(frozen=True)
class LaunchLimits:
    """The largest grid and block of one compute capability (or of 3.0 on: ``cc`` None)."""

    compute_capability: str | None
    grid: tuple  # (x, y, z) in blocks
    block: tuple  # (x, y, z) in threads
    threads_per_block: int

    def where(self) -> str:
        return (f"compute capability {self.compute_capability}" if self.compute_capability
                else "compute capability 3.0 and later")


def limits(compute_capability=None) -> LaunchLimits:
    """The launch limits of ``compute_capability`` (a text like "8.6", or None: 3.0 on).
    A capability the occupancy rules do not know is held to the limits of 3.0 on."""
    if not compute_capability:
        return LaunchLimits(None, (MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ),
                            (MAX_BLOCK_XY, MAX_BLOCK_XY, MAX_BLOCK_Z), MAX_THREADS_PER_BLOCK)
    from gpumodeler.core.occupancy.compute_capability import architecture
    try:
        arch = architecture(compute_capability)
    except ModelError:
        return limits(None)
    major = arch.major
    grid_x = MAX_GRID_X if major >= 3 else MAX_GRID_YZ
    grid_z = 1 if major < 2 else MAX_GRID_YZ
    block_xy = min(MAX_BLOCK_XY, arch.max_threads_per_block)
    return LaunchLimits(arch.compute_capability, (grid_x, MAX_GRID_YZ, grid_z),
                        (block_xy, block_xy, MAX_BLOCK_Z), arch.max_threads_per_block)


def _dims(size) -> tuple:
    """(x, y, z) of a size: a number, a tuple of 1-3, or an array (its largest value)."""
    if isinstance(size, (tuple, list)):
        dims = tuple(size)
    else:
        dims = (size,)
    out = []
    for d in dims:
        if hasattr(d, "size") and hasattr(d, "max"):  # a numpy array of values
            d = d.max() if d.size else 1
        out.append(d)
    return tuple(out) + (1,) * (3 - len(out))


def _whole(value, what: str, item: str) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise LaunchError(f"{what} must be a whole number >= 1, got {value!r}", item=item) from None
    if not math.isfinite(number) or not number.is_integer() or number < 1:
        raise LaunchError(f"{what} must be a whole number >= 1, got {value!r}", item=item)
    return int(number)


def launch_problem(grid_size=None, block_size=None, compute_capability=None) -> str:
    """Why CUDA cannot launch a grid of ``grid_size`` blocks of ``block_size`` threads on a
    GPU of ``compute_capability``, or '' (either size may be None: not checked)."""
    try:
        check_launch(grid_size, block_size, compute_capability)
    except LaunchError as exc:
        return str(exc)
    return ""


def check_launch(grid_size=None, block_size=None, compute_capability=None) -> None:
    """Raise LaunchError (``item`` grid_size or block_size) naming the dimension, its value
    and CUDA's limit when the launch is beyond the limits of the module docstring."""
    lim = limits(compute_capability)
    if block_size is not None:
        dims = [_whole(d, f"block size {'xyz'[i]}", "block_size")
                for i, d in enumerate(_dims(block_size))]
        threads = math.prod(dims)
        if threads > lim.threads_per_block:  # the occupancy calculator's words
            size = str(threads) if dims[1:] == [1, 1] else (
                "x".join(map(str, dims)) + f" = {threads} threads")
            raise LaunchError(f"block size {size} exceeds the {lim.threads_per_block}-thread "
                              f"limit by {threads - lim.threads_per_block}", item="block_size")
        for axis, d, most in zip("xyz", dims, lim.block):
            if d > most:
                raise LaunchError(
                    f"block size {axis} = {d} threads exceeds CUDA's limit of {most} for "
                    f"{lim.where()}; give at most {most}", item="block_size")
    if grid_size is not None:
        dims = [_whole(d, f"grid size {'xyz'[i]}", "grid_size")
                for i, d in enumerate(_dims(grid_size))]
        for axis, d, most in zip("xyz", dims, lim.grid):
            if d > most:
                raise LaunchError(
                    f"grid size {axis} = {d} blocks exceeds CUDA's limit of {most}"
                    f"{' (2^31 - 1)' if most == MAX_GRID_X else ''} for {lim.where()}; give at "
                    f"most {most} (a larger launch is several kernel launches)", item="grid_size")


def launch_problems(grid_sizes, block_sizes, compute_capability=None):
    """:func:`launch_problem` over arrays of one-dimensional launches (a sweep's rows): an
    object array of reasons, '' where the launch is within CUDA's limits."""
    import numpy as np
    grid, block = np.broadcast_arrays(np.asarray(grid_sizes), np.asarray(block_sizes))
    out = np.full(grid.shape, "", dtype=object)
    lim = limits(compute_capability)
    most_block = min(lim.block[0], lim.threads_per_block)
    bad = (grid > lim.grid[0]) | (grid < 1) | (block > most_block) | (block < 1)
    if bad.any():
        pairs = np.stack([grid[bad], block[bad]])
        unique, inverse = np.unique(pairs, axis=1, return_inverse=True)
        reasons = np.array([launch_problem(g.item(), b.item(), compute_capability)
                            for g, b in unique.T], dtype=object)
        out[bad] = reasons[np.ravel(inverse)]
    return out


def data_size_limit(block_threads, compute_capability=None) -> int:
    """The largest data size N (one thread each) a one-dimensional grid of blocks of
    ``block_threads`` threads can cover."""
    return limits(compute_capability).grid[0] * max(int(block_threads), 1)


__all__ = [
    "MAX_BLOCK_XY",
    "MAX_BLOCK_Z",
    "MAX_GRID_X",
    "MAX_GRID_YZ",
    "MAX_THREADS_PER_BLOCK",
    "LaunchLimits",
    "check_launch",
    "data_size_limit",
    "launch_problem",
    "launch_problems",
    "limits",
]
