"""`gpumodeler project show|predict` on the bundled example and on bad files."""
import hashlib
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.project import LaunchConfig
from gpumodeler.db.project_file import load_project, save_project

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm")
SAXPY2 = str(ROOT / "resources" / "kernels" / "saxpy2-maxwell.json")
LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"


pytestmark = pytest.mark.usefixtures("gpumodeler_env")  # the built devices.db, a private user db


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_agrees_with_the_predict_command(capsys):
    code, out, err = run(capsys, "project", "predict", EXAMPLE, "--json")
    assert code == 0, err
    doc = json.loads(out)
    (mine,) = doc["launches"]
    code, out, err = run(capsys, "predict", "--device", "GeForce GTX 970", "--link", LINK,
                         "--graph", SAXPY2, "--set", "a=128", "--data-size", "4e8",
                         "--block-size", "256", "--registers", "8", "--lambda", "0.703787",
                         "--htod", "1.6e9", "--htod", "1.6e9", "--dtoh", "1.6e9", "--json")
    assert code == 0, err
    theirs = json.loads(out)
    assert mine["kernel_time_s"] == pytest.approx(0.145837, rel=1e-5)
    for key in ("kernel_time_s", "kernel_time_cycles", "total_time_s", "warp_throughput",
                "throughput_bound", "latency_throughput", "knee_occupancy",
                "occupancy_warps_per_sm", "latency_bound_cycles", "warps_launched"):
        assert mine[key] == pytest.approx(theirs[key], rel=1e-12, abs=0), key
    assert mine["transfer_times_s"] == pytest.approx(theirs["transfer_times_s"], rel=1e-12)
    assert len(mine["transfer_times_s"]) == 3
    for key in ("mode", "limiting_resource", "transfers", "device", "occupancy_limited_by"):
        assert mine[key] == theirs[key], key
    assert (mine["launch"], mine["name"], mine["link"]) == ("launch1", "Fig. 5.24", LINK)
    assert mine["occupancy_warps_per_sm"] == 64 and mine["latency_bound_cycles"] == 4014
    assert mine["latency_bound_formula"] == "942 + 24·a" and mine["grid_size"] == 1_562_500


def test_predict_one_launch_by_name_or_id_in_text(capsys):
    for wanted in ("Fig. 5.24", "fig. 5.24", "launch1"):
        code, out, err = run(capsys, "project", "predict", EXAMPLE, "--launch", wanted)
        assert code == 0, err
        assert "145.837 ms" in out and "throughput-bound" in out and "594.878 ms" in out
        assert out.count("host->device") == 2 and out.count("device->host") == 1


def test_predict_reports_each_launch_that_cannot_run(capsys, tmp_path):
    project = load_project(EXAMPLE)
    project.put("launches", LaunchConfig("draft", name="not finished"))
    path = save_project(project, tmp_path / "two.gpm")
    code, out, err = run(capsys, "project", "predict", str(path), "--json")
    assert code == 2
    ok, bad = json.loads(out)["launches"]
    assert ok["kernel_time_s"] > 0 and bad["launch"] == "draft" and "GPU" in bad["error"]
    assert err.count("\n") == 1 and "launch draft (not finished)" in err
    code, out, err = run(capsys, "project", "predict", str(path), "--launch", "draft")
    assert code == 2 and out == "" and err.count("\n") == 1 and "choose a GPU" in err


def test_predict_unknown_launch_lists_the_launches(capsys):
    code, out, err = run(capsys, "project", "predict", EXAMPLE, "--launch", "Fig. 9")
    assert code == 2 and out == ""
    assert err == "gpumodeler project: no launch 'Fig. 9' in the project; launches: " \
                  "launch1 (Fig. 5.24)\n"


def test_show_summarises_the_project(capsys):
    code, out, err = run(capsys, "project", "show", EXAMPLE)
    assert code == 0, err
    assert "gpu1: gpu GeForce GTX 970" in out and "host1: host Gajger GTX 970 testbed host" in out
    assert f"link1: {LINK} (pcie) host1 <-> gpu1" in out
    assert "latency bound 942 + 24·a cycles" in out and "Fig. 5.24" in out
    assert "schema version 4" in out


def test_show_json(capsys):
    code, out, err = run(capsys, "project", "show", EXAMPLE, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "gpumodeler-project" and doc["schema_version"] == 4
    assert [d["device_name"] for d in doc["devices"]] == ["Gajger GTX 970 testbed host",
                                                          "GeForce GTX 970"]
    assert doc["links"][0]["link_name"] == LINK
    (kernel,) = doc["kernels"]
    assert kernel["latency_bound_formula"] == "942 + 24·a" and kernel["instructions"] == 31
    (launch,) = doc["launches"]
    assert launch["name"] == "Fig. 5.24" and launch["lambda"] == 0.703787
    assert [t["size"] for t in launch["transfers"]] == ["4*N"] * 3
    assert doc["sweeps"][0]["values"][-1] == 4096


@pytest.mark.parametrize("content, message", [
    (b"name,sms\nGTX 970,13\n", "not an SQLite database, so not a gpumodeler project"),
    (None, "is corrupted"),
])
@pytest.mark.parametrize("action", ["show", "predict"])
def test_bad_files_are_one_line_errors_and_untouched(action, content, message, tmp_path,
                                                     capsys):
    path = tmp_path / "bad.gpm"
    if content is None:  # a project cut short
        content = Path(EXAMPLE).read_bytes()[:5000]
    path.write_bytes(content)
    code, out, err = run(capsys, "project", action, str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"gpumodeler project: {path}: ") and message in err
    assert err.count("\n") == 1
    assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(content).digest()


def test_a_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "project", "show", str(tmp_path / "nope.gpm"))
    assert code == 2 and "no such file" in err


def test_project_sweep_runs_the_core_sweep(capsys):
    """`project sweep` evaluates the same vectorised sweep as the launch panel."""
    import csv
    import io
    code, out, _ = run(capsys, "project", "sweep", EXAMPLE, "--variable", "a", "--values", "1,128")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["a"] for r in rows] == ["1.0", "128.0"]
    assert float(rows[1]["kernel_time_s"]) == pytest.approx(0.145837, rel=1e-5)
    code, out, _ = run(capsys, "project", "sweep", EXAMPLE, "--saved", "sweep1", "--format", "json")
    assert code == 0 and len(json.loads(out)) == 13
    code, _, err = run(capsys, "project", "sweep", EXAMPLE, "--variable", "nope", "--values", "1")
    assert code == 2 and "cannot sweep 'nope'" in err


def test_a_launch_whose_kernel_uses_a_database_only_latency_table(capsys, tmp_path):
    """A user's own latency table (here a copy of Gajger's Maxwell table under a new key)
    reaches launches through the catalog: project predict gives the same numbers."""
    from gpumodeler.core.kernel.latency_tables import TABLES
    from gpumodeler.db.catalog import Catalog
    from gpumodeler.db.mapping import latency_table_fields
    values = {f: v for f, v in latency_table_fields(TABLES["maxwell-gajger"]).items() if v is not None}
    with Catalog() as catalog:
        catalog.add_device("latency_table", "gm107-copy", values=values)
    project = load_project(EXAMPLE)
    project.kernels["saxpy2"].latency_table = "gm107-copy"
    path = tmp_path / "copy.gpm"
    save_project(project, path)
    code, out, err = run(capsys, "project", "predict", str(path), "--json")
    assert code == 0, err
    mine = json.loads(out)["launches"][0]
    code, out, _ = run(capsys, "project", "predict", EXAMPLE, "--json")
    shipped = json.loads(out)["launches"][0]
    assert mine["latency_bound_formula"] == "942 + 24·a"
    assert mine["total_time_s"] == shipped["total_time_s"]
