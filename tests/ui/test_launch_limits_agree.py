"""The launch panel's check (ui/launch_panel/checks.py) and the CLI's (core.launch_limits)
give one verdict on CUDA's launch limits, for every compute capability's limits."""
from dataclasses import replace

import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.launch_limits import launch_problem
from gpumodeler.ui.launch_panel.checks import (
    MAX_GRID_BLOCKS,
    data_size_limit,
    launch_limit_problem,
    occupancy_problem,
)

GRIDS = (1, 65535, 65536, 2**31 - 1, 2**31, 3_000_000_000)
BLOCKS = (1, 64, 512, 513, 1024, 1025, 2048)
CCS = ("1.3", "2.0", "3.5", "5.2", "8.6", "9.0")


@pytest.mark.parametrize("cc", CCS)
def test_the_panel_and_core_agree_on_grid_and_block(example_project, cc):
    project = example_project()
    launch = next(iter(project.launches.values()))
    gpu_spec = lambda name: GPUSpec(name=name, compute_capability=cc)
    for grid in GRIDS:
        for block in BLOCKS:
            core = launch_problem(grid, block, cc)
            candidate = replace(launch, grid_size=grid, data_size=None, block_size=block,
                                registers=8, shared_mem=0, occupancy_override=None)
            panel = occupancy_problem(project, gpu_spec, candidate)
            assert bool(panel) == bool(core), (cc, grid, block, panel, core)
            if core:
                assert panel == core
            assert launch_limit_problem(candidate, cc) == core


@pytest.mark.parametrize("cc", CCS)
def test_the_panel_and_core_agree_on_data_sizes(example_project, cc):
    project = example_project()
    launch = next(iter(project.launches.values()))
    gpu_spec = lambda name: GPUSpec(name=name, compute_capability=cc)
    for block in (32, 256):
        most = data_size_limit(block, cc)
        for n in (1, most, most + 1):
            grid = -(-n // block)
            core = launch_problem(grid, block, cc)
            candidate = replace(launch, grid_size=None, data_size=n, block_size=block,
                                registers=8, shared_mem=0, occupancy_override=None)
            panel = occupancy_problem(project, gpu_spec, candidate)
            assert bool(panel) == bool(core) == (n > most), (cc, n, block, panel, core)
            if core:
                assert "CUDA's grid limit" in panel


def test_the_panel_field_limit_is_cores():
    assert MAX_GRID_BLOCKS == 2**31 - 1
    assert data_size_limit(256) == (2**31 - 1) * 256
    assert data_size_limit(256, "2.0") == 65535 * 256
