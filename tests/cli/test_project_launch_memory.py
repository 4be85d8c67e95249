"""A project's launch of a graph imported from SASS is predicted as `predict --graph` predicts
it: the reuse across blocks and the L2 fit (core.kernel.sass.launch_memory) apply to
`project predict` and the launch panel's point (core.pipeline.evaluate_launch) too."""
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.cli.common import load_graph
from gpumodeler.cli.main import main
from gpumodeler.db.project_file import load_project, save_project
from in_process import cli, cli_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
SASS = ROOT / "resources" / "kernels" / "sass"
GPU = "A100 SXM4 40 GB"
TABLE = "ampere-published"
LAMBDA = 0.703787   # the example launch's

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


def _matmul_project(tmp_path, data_size=1 << 20, loops=64, block=256, listing="matmul_tiled",
                    variables=None):
    """The example project with an imported multiply (the tiled one by default) as its
    launch's kernel, on an A100."""
    project = load_project(str(EXAMPLE))
    project.devices["gpu1"] = replace(project.devices["gpu1"], device_name=GPU, overrides={})
    graph = tmp_path / ("mm.json" if listing == "matmul_tiled" else f"{listing}.json")
    if not graph.exists():   # as `kernel import` writes it (schedule latencies filled)
        assert main(["kernel", "import", str(SASS / f"{listing}.sm_80.sass"), "-o", str(graph)]) == 0
    project.kernels["saxpy2"] = load_graph(str(graph))
    launch = project.launches["launch1"]
    project.launches["launch1"] = replace(launch, data_size=data_size, block_size=block,
                                          variables=variables or {"loop1": loops}, transfers=())
    path = tmp_path / f"mm-{data_size}-{loops}-{block}.gpm"
    save_project(project, path)
    return path


@pytest.mark.parametrize("data_size, loops", [(1 << 20, 64), (1 << 24, 256)])
def test_project_predict_of_an_imported_matmul_is_predicts(capsys, tmp_path, data_size, loops):
    """The tiled multiply in 1-D blocks of 256: every block of the grid reads the same tiles,
    which come from L2 (not n/16 times from DRAM), in the project as in `predict`."""
    path = _matmul_project(tmp_path, data_size, loops)
    capsys.readouterr()
    graph_path = tmp_path / "mm.json"
    assert json.loads(graph_path.read_text())["latency_table"] == TABLE
    (mine,) = cli_json(capsys, "project", "predict", path)["launches"]
    argv = ["predict", "--device", GPU, "--graph", graph_path, "--set", f"loop1={loops}",
            "--data-size", data_size, "--block-size", 256, "--registers", 8, "--lambda", LAMBDA]
    theirs = cli_json(capsys, *argv)
    assert any("read by" in n for n in theirs["memory_notes"])
    for key in ("kernel_time_s", "kernel_time_cycles", "latency_bound_cycles", "throughput_bound",
                "warp_throughput"):
        assert mine[key] == pytest.approx(theirs[key], rel=1e-12), key
    assert mine["cycles_per_warp"] == pytest.approx(theirs["cycles_per_warp"], rel=1e-12)
    # the reuse keeps the tiles' re-reads off DRAM: without the L2's part of it (a working set
    # far beyond the L2) the DRAM row grows by half (what a block's 256 lanes re-read of its
    # previous trip's row stays in the A100's L1); the kernel stays bound by its shared-memory
    # wavefronts, so its time does not move
    spilled = cli_json(capsys, *argv, "--working-set", "1T")
    assert spilled["cycles_per_warp"]["memory"] > 1.4 * mine["cycles_per_warp"]["memory"]
    assert spilled["binding_resource"] == mine["binding_resource"] == "shared_memory"
    assert spilled["kernel_time_s"] == pytest.approx(mine["kernel_time_s"], rel=1e-12)


@pytest.mark.parametrize("variable, values, at", [
    ("data_size", [1 << 16, 1 << 20, 1 << 24], lambda v: {"data_size": v}),
    ("block_size", [64, 128, 256, 512], lambda v: {"block": v}),
    ("loop1", [8, 64, 512], lambda v: {"loops": v}),
])
def test_each_sweep_point_is_the_launch_panel_point_at_that_value(capsys, tmp_path, variable,
                                                                  values, at):
    """The sweep evaluates each point's reuse (its grid, occupancy and loop count), so every
    point of the curve is what the launch gives with that value, not the base launch's
    reuse carried along."""
    base = _matmul_project(tmp_path)
    capsys.readouterr()
    swept = cli_json_list(capsys, "project", "sweep", base, "--variable", variable, "--values",
                          ",".join(str(v) for v in values), "--format", "json")
    assert [p["error"] for p in swept] == [""] * len(values)
    for v, p in zip(values, swept):
        other = _matmul_project(tmp_path, **at(v))
        (point,) = cli_json(capsys, "project", "predict", other)["launches"]
        assert p["kernel_time_s"] == pytest.approx(point["kernel_time_s"], rel=1e-12), (variable, v)


def cli_json_list(capsys, *argv):
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def test_a_sweep_of_an_imported_kernel_can_be_cancelled_while_its_launches_are_viewed(tmp_path):
    """The GUI's Cancel reaches the per-launch views (polled inside a chunk, not only between
    chunks): the sweep stops with SweepCancelled before any curve is made."""
    from gpumodeler.core import launch_sweep
    from gpumodeler.db.catalog import Catalog
    from gpumodeler.service.lookups import catalog_lookups
    project = load_project(str(_matmul_project(tmp_path)))
    polls = []
    with Catalog() as catalog:
        lookups = catalog_lookups(catalog)
        snap = launch_sweep.make_snapshot(project, "launch1", lookups["gpu_lookup"],
                                          lookups["link_lookup"], "data_size",
                                          [1 << 16, 1 << 17, 1 << 18],
                                          table_lookup=lookups.get("table_lookup"))
        # run_sweep polls once before the chunk; the views poll again inside it
        with pytest.raises(launch_sweep.SweepCancelled):
            launch_sweep.run_sweep(snap, cancelled=lambda: polls.append(1) or len(polls) > 1)
    assert len(polls) == 2


def test_the_sweeps_knee_is_the_launch_points(capsys, tmp_path):
    """The mode-change occupancy beside the curve is the launch's own (its reuse included),
    as `project predict` gives it."""
    from gpumodeler.core import launch_sweep
    from gpumodeler.db.catalog import Catalog
    from gpumodeler.service.lookups import catalog_lookups
    path = _matmul_project(tmp_path)
    capsys.readouterr()
    (point,) = cli_json(capsys, "project", "predict", path)["launches"]
    with Catalog() as catalog:
        lookups = catalog_lookups(catalog)
        snap = launch_sweep.make_snapshot(load_project(str(path)), "launch1", lookups["gpu_lookup"],
                                          lookups["link_lookup"], "loop1", [8, 64],
                                          table_lookup=lookups.get("table_lookup"))
        (curve,) = launch_sweep.run_sweep(snap).curves
    assert curve.knee_occupancy == pytest.approx(point["knee_occupancy"], rel=1e-12)


def test_project_predict_of_a_naive_matmul_has_predicts_l1(capsys, tmp_path):
    """The naive multiply in 1-D blocks of 256: every warp of a block re-reads A's row, which
    an A100's L1 serves, in the project as in `predict` (one launch view)."""
    n = 1024
    variables = {"loop1": n}
    path = _matmul_project(tmp_path, data_size=n * n, listing="matmul_naive", variables=variables)
    capsys.readouterr()
    (mine,) = cli_json(capsys, "project", "predict", path)["launches"]
    theirs = cli_json(capsys, "predict", "--device", GPU, "--graph", tmp_path / "matmul_naive.json",
                      "--set", f"loop1={n}", "--data-size", n * n,
                      "--block-size", 256, "--registers", 8, "--lambda", LAMBDA)
    assert theirs["cycles_per_warp"]["l1"] > 0
    assert mine["cycles_per_warp"] == pytest.approx(theirs["cycles_per_warp"], rel=1e-12)
    assert mine["kernel_time_s"] == pytest.approx(theirs["kernel_time_s"], rel=1e-12)
