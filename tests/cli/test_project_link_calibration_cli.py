"""`project predict`, `project sweep` and `report` on a project whose link names a stored
calibration (the connection's ``transfer_calibration``): the transfers take the fitted model."""
import json

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.commands import SetOverride, UndoStack
from gpumodeler.core.project import TRANSFER_CALIBRATION
from gpumodeler.db.project_file import load_project, save_project

from test_calibrate_cli import LINK, copies_file, run  # noqa: F401  (fixture)

N_BYTES = 4 * 400_000_000          # the example launch's transfers: 4*N, N = 4e8


def _project(tmp_path, label):
    project = load_project("resources/examples/saxpy2-gtx970.gpm")
    UndoStack(project).push(SetOverride("connections", "link1", TRANSFER_CALIBRATION, label))
    return save_project(project, tmp_path / f"calibrated-{label}.gpm")


def _save(capsys, copies_file, direction):  # noqa: F811
    code, _, err = run(capsys, "calibrate", "link", "--measurements", copies_file, "--direction",
                       direction, "--memory-kind", "pageable", "--save", "--link", LINK, "--json")
    assert code == 0, err
    code, out, err = run(capsys, "calibrate", "link", "--measurements", copies_file, "--direction",
                         direction, "--memory-kind", "pageable", "--predict", str(N_BYTES),
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    return r["predictions"][0]["time_s"], r["loo_mape"]


def test_project_predict_uses_the_named_calibration(capsys, tmp_path, copies_file,  # noqa: F811
                                                    gpumodeler_env, monkeypatch):
    monkeypatch.chdir(__import__("pathlib").Path(__file__).resolve().parents[2])
    htod, htod_loo = _save(capsys, copies_file, "htod")
    dtoh, dtoh_loo = _save(capsys, copies_file, "dtoh")
    plain = tmp_path / "plain.gpm"
    save_project(load_project("resources/examples/saxpy2-gtx970.gpm"), plain)
    code, out, err = run(capsys, "project", "predict", plain, "--json")
    assert code == 0, err
    nominal = json.loads(out)["launches"][0]
    assert nominal["transfer_calibration"] is None

    path = _project(tmp_path, "pageable")
    code, out, err = run(capsys, "project", "predict", path, "--json")
    assert code == 0, err
    r = json.loads(out)["launches"][0]
    assert r["transfer_times_s"] == [pytest.approx(htod, rel=1e-12), pytest.approx(htod, rel=1e-12),
                                     pytest.approx(dtoh, rel=1e-12)]
    assert r["transfer_times_s"] != nominal["transfer_times_s"]
    assert r["kernel_time_s"] == nominal["kernel_time_s"]
    assert r["transfer_calibration"]["label"] == "pageable"
    assert r["transfer_calibration"]["directions"]["htod"]["loo_mape"] == pytest.approx(htod_loo)
    code, out, err = run(capsys, "project", "predict", path)
    assert code == 0 and "transfers: calibrated model 'pageable' (LOO error dtoh" in out

    code, out, err = run(capsys, "project", "sweep", path, "--variable", "a",
                         "--values", "128", "--format", "json")
    assert code == 0, err
    swept = json.loads(out)
    total = swept["total_time_s"][0] if isinstance(swept, dict) else swept[0]["total_time_s"]
    assert total == pytest.approx(r["total_time_s"], rel=1e-12)

    report = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(report)]) == 0, capsys.readouterr().err
    html = report.read_text()
    assert "transfers: calibrated model &#x27;pageable&#x27; (LOO error dtoh" in html


def test_an_unknown_label_is_one_line_exit_2(capsys, tmp_path, copies_file,  # noqa: F811
                                            gpumodeler_env, monkeypatch):
    monkeypatch.chdir(__import__("pathlib").Path(__file__).resolve().parents[2])
    _save(capsys, copies_file, "htod")
    path = _project(tmp_path, "pinned")
    code, out, err = run(capsys, "project", "predict", path, "--launch", "Fig. 5.24")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"no calibration labelled 'pinned' for link '{LINK}' (stored: pageable)" in err
