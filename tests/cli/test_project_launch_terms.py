"""A launch's saved kernel terms (LaunchConfig.terms) drive `project predict`, `project
sweep` and `timeline`; a kernel-term flag given on the command line takes the place of the
launch's, one not given keeps it."""
import dataclasses
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.project import LaunchTerms
from gpumodeler.db.project_file import load_project, save_project

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"

pytestmark = pytest.mark.usefixtures("gpumodeler_env")

OVERHEAD = 7e-6   # the GTX 970 has no launch overhead in the device database


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _with_terms(tmp_path, **terms) -> Path:
    project = load_project(EXAMPLE)
    for lid, launch in list(project.launches.items()):
        project.launches[lid] = dataclasses.replace(launch, terms=LaunchTerms(**terms))
    return save_project(project, tmp_path / "terms.gpm")


def _kernel(capsys, path, *flags):
    (launch,) = run(capsys, "project", "predict", path, "--json", *flags)["launches"]
    return launch


def test_project_predict_uses_the_saved_terms_and_flags_replace_them(capsys, tmp_path):
    base = _kernel(capsys, EXAMPLE)
    path = _with_terms(tmp_path, launch_overhead_s=OVERHEAD)
    saved = _kernel(capsys, path)
    assert saved["kernel_time_s"] == pytest.approx(base["kernel_time_s"] + OVERHEAD, rel=1e-12)
    # the same as giving the value on the command line to the unchanged file
    assert saved["kernel_time_s"] == _kernel(capsys, EXAMPLE, "--launch-overhead", "7us")["kernel_time_s"]
    # a flag given wins; a flag not given keeps the launch's
    off = _kernel(capsys, path, "--no-launch-overhead")
    assert off["kernel_time_s"] == pytest.approx(base["kernel_time_s"], rel=1e-12)
    other = _kernel(capsys, path, "--launch-overhead", "1us")
    assert other["kernel_time_s"] == pytest.approx(base["kernel_time_s"] + 1e-6, rel=1e-12)
    tail = _kernel(capsys, path, "--tail")
    assert tail["kernel_time_s"] >= saved["kernel_time_s"] - 1e-15   # the overhead kept


def test_the_saved_switches_are_the_flags(capsys, tmp_path):
    path = _with_terms(tmp_path, tail=True, launch_overhead=False)
    saved = _kernel(capsys, path)
    flags = _kernel(capsys, EXAMPLE, "--tail", "--no-launch-overhead")
    for key in ("kernel_time_s", "total_time_s", "mode", "limiting_resource"):
        assert saved[key] == flags[key], key


def test_the_timeline_and_the_sweep_use_the_saved_terms(capsys, tmp_path):
    base = run(capsys, "timeline", EXAMPLE, "--json")
    path = _with_terms(tmp_path, launch_overhead_s=OVERHEAD)
    doc = run(capsys, "timeline", path, "--json")
    assert doc["makespan_s"] == pytest.approx(base["makespan_s"] + OVERHEAD, abs=1e-11)
    kernel = next(s for s in doc["steps"] if s["name"] == "saxpy2")
    launch = _kernel(capsys, path)
    assert kernel["end_s"] - kernel["start_s"] == pytest.approx(launch["kernel_time_s"], rel=1e-12)
    (sweep_id,) = load_project(path).sweeps
    plain = run(capsys, "project", "sweep", EXAMPLE, "--saved", sweep_id, "--format", "json")
    swept = run(capsys, "project", "sweep", path, "--saved", sweep_id, "--format", "json")
    assert len(plain) == len(swept) > 1
    assert [r["kernel_time_s"] for r in swept] == pytest.approx(
        [r["kernel_time_s"] + OVERHEAD for r in plain], rel=1e-9)
