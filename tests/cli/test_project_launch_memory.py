"""A project's launch of a graph imported from SASS is predicted as `predict --graph` predicts
it: the reuse across blocks and the L2 fit (core.kernel.sass.launch_memory) apply to
`project predict` and the launch panel's point (core.pipeline.evaluate_launch) too."""
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.db.project_file import load_project, save_project
from in_process import cli, cli_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
SASS = ROOT / "resources" / "kernels" / "sass"

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


@pytest.mark.parametrize("data_size, loops", [(1 << 20, 64), (1 << 24, 256)])
def test_project_predict_of_an_imported_matmul_is_predicts(capsys, tmp_path, data_size, loops):
    """The tiled multiply on the example's GTX 970, in 1-D blocks of 256: every block of the
    grid reads the same A and B tiles, which come from L2 (not n/16 times from DRAM)."""
    graph_path = tmp_path / "mm.json"
    assert cli(capsys, "kernel", "import", SASS / "matmul_tiled.sm_52.sass", "-o", graph_path)[0] == 0
    project = load_project(str(EXAMPLE))
    project.kernels["saxpy2"] = import_kernel(SASS / "matmul_tiled.sm_52.sass")
    project.kernels["saxpy2"].latency_table = json.loads(graph_path.read_text())["latency_table"]
    launch = project.launches["launch1"]
    project.launches["launch1"] = replace(launch, data_size=data_size, variables={"loop1": loops},
                                          transfers=())
    path = tmp_path / "mm.gpm"
    save_project(project, path)
    (mine,) = cli_json(capsys, "project", "predict", path)["launches"]
    theirs = cli_json(capsys, "predict", "--device", "GeForce GTX 970", "--graph", graph_path,
                      "--set", f"loop1={loops}", "--data-size", data_size, "--block-size", 256,
                      "--registers", launch.registers, "--lambda", launch.lam)
    assert any("read by" in n for n in theirs["memory_notes"])
    for key in ("kernel_time_s", "kernel_time_cycles", "latency_bound_cycles", "throughput_bound",
                "warp_throughput"):
        assert mine[key] == pytest.approx(theirs[key], rel=1e-12), key
    assert mine["cycles_per_warp"] == pytest.approx(theirs["cycles_per_warp"], rel=1e-12)
