"""The launch flags every prediction reads the same way: the block's thread count, the grid
(``--grid-size`` or ``--data-size``) and the warps per SM (``--occupancy`` or the occupancy
calculator from ``--registers`` / ``--shared-mem``); used by ``predict`` and by ``predict
--profile``."""
from __future__ import annotations

import math

from .main import CLIError


def block_threads(block_size) -> int:
    """Threads in a block given as 256 or (16, 16)."""
    return int(math.prod(block_size)) if isinstance(block_size, tuple) else block_size


def occupancy_of(args, gpu, block_size):
    """Warps per SM: --occupancy, or the calculator from --registers/--shared-mem."""
    if args.occupancy is not None:
        return args.occupancy, None
    if args.registers is None:
        raise CLIError("give --occupancy WARPS, or --registers N (and --shared-mem) with a "
                       "device whose compute capability is known")
    if not gpu.compute_capability:
        raise CLIError("computing occupancy needs the compute capability: give --cc or --device")
    from gpumodeler.core.occupancy.calculator import occupancy  # lazy: CLI start-up
    threads = block_threads(block_size)
    occ = occupancy(gpu.compute_capability, threads, args.registers, int(args.shared_mem or 0))
    return occ.active_warps_per_sm, occ


def grid_of(args, block_size):
    """Blocks in the grid: --grid-size, or enough blocks to cover --data-size threads."""
    if args.grid_size is not None and args.data_size is not None:
        raise CLIError("give --grid-size or --data-size, not both")
    if args.grid_size is not None:
        return args.grid_size
    if args.data_size is None:
        raise CLIError("give --grid-size BLOCKS or --data-size N")
    from gpumodeler.core.models.kernel_time import grid_for  # lazy: CLI start-up
    threads = block_threads(block_size)
    return grid_for(args.data_size, threads)
