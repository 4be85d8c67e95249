"""The service layer (gpumodeler/service): one evaluation of a project for the CLI, the GUI
and the report; each kernel graph analysed once per evaluation."""
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.core.project import LaunchConfig, SweepDef

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


def _many_launches(project, n: int = 4):
    """The example with ``n`` launches of its one kernel (its loop run a = 128, 256, ...
    times)."""
    base = project.launches["launch1"]
    for i in range(2, n + 1):
        lid = f"launch{i}"
        project.launches[lid] = replace(base, id=lid, name=f"a = {128 * i}",
                                        variables={"a": 128 * i})
    return project


@pytest.fixture
def counted(monkeypatch):
    """Counts the graph analyses (latency_bound.analyze) that run."""
    from gpumodeler.core.kernel import latency_bound
    calls = []
    real = latency_bound.analyze

    def analyze(graph, table=None):
        calls.append(graph)
        return real(graph, table)
    monkeypatch.setattr(latency_bound, "analyze", analyze)
    return calls


def test_an_evaluation_analyses_a_kernel_once_for_all_its_launches(catalog, example_project, counted):
    from gpumodeler.service import ProjectEvaluation, catalog_lookups
    project = _many_launches(example_project())
    evaluation = ProjectEvaluation(project, catalog_lookups(catalog))
    times = [float(evaluation.launch(lid).prediction.kernel.time_s) for lid in project.launches]
    evaluation.kernel_bound("saxpy2")
    assert len(counted) == 1 and evaluation.analyses.analysed == 1
    assert len(set(times)) == len(times)     # the launches differ: each one was predicted
    # without the service, each call analyses the graph again (what the cache saves)
    from gpumodeler.core.pipeline import evaluate_launch
    for lid in project.launches:
        evaluate_launch(project, lid, **catalog_lookups(catalog))
    assert len(counted) == 1 + len(project.launches)


def test_the_report_analyses_a_kernel_once_for_many_launches(catalog, example_project, counted):
    from gpumodeler.service import report_data
    project = _many_launches(example_project(), 6)
    project.sweeps.clear()
    project.applications.clear()
    data = report_data(project, catalog)
    assert [e["error"] for e in data["launches"]] == [None] * 6
    assert data["kernels"][0]["formula"] == "942 + 24·a"
    assert all(e["spread"] is not None for e in data["launches"])
    # the latency bound once, and the two bounds the other models' counts take (the DRAM
    # latency and one cycle more) once: as many analyses for six launches as for one
    six = len(counted)
    assert six <= 3
    project = example_project()
    project.sweeps.clear()
    project.applications.clear()
    counted.clear()
    report_data(project, catalog)
    assert len(counted) == six


def test_the_evaluation_agrees_with_evaluate_launch(catalog, example_project):
    from gpumodeler.core.pipeline import evaluate_launch
    from gpumodeler.service import ProjectEvaluation, catalog_lookups
    project = _many_launches(example_project())
    lookups = catalog_lookups(catalog)
    evaluation = ProjectEvaluation(project, lookups)
    for lid in project.launches:
        mine, alone = evaluation.launch(lid), evaluate_launch(project, lid, **lookups)
        assert mine.prediction.summary() == alone.prediction.summary()
        assert (mine.latency_bound_formula, mine.grid_size) == (alone.latency_bound_formula,
                                                                alone.grid_size)


def test_predict_launch_is_what_project_predict_prints(catalog, example_project, capsys):
    from gpumodeler.cli.main import main
    from gpumodeler.db.project_file import load_project
    from gpumodeler.service import predict_launch
    assert main(["project", "predict", str(EXAMPLE), "--json"]) == 0
    (printed,) = json.loads(capsys.readouterr().out)["launches"]
    mine = predict_launch(load_project(EXAMPLE), "launch1", catalog)
    assert json.loads(json.dumps(mine)) == printed
    assert mine["kernel_time_s"] == pytest.approx(0.145837, rel=1e-5)


def test_with_gpu_values_sets_only_the_values_given(catalog):
    from gpumodeler.service import catalog_lookups, with_gpu_values
    lookups = catalog_lookups(catalog)
    same = with_gpu_values(lookups, launch_overhead_s=None)
    changed = with_gpu_values(lookups, launch_overhead_s=7e-6)
    name = "GeForce GTX 970"
    assert same["gpu_lookup"](name) == lookups["gpu_lookup"](name)
    assert changed["gpu_lookup"](name).launch_overhead_s == 7e-6
    assert changed["gpu_lookup"](name).sms == lookups["gpu_lookup"](name).sms
    assert changed["link_lookup"] is lookups["link_lookup"]


def test_report_data_keeps_each_items_own_error(catalog, example_project):
    from gpumodeler.service import report_data
    project = example_project()
    project.launches["broken"] = LaunchConfig("broken", name="no kernel", gpu="gpu1", kernel=None,
                                              grid_size=10)
    project.sweeps["bad"] = SweepDef("bad", launch="gone", variable="block_size", values=(64.0,))
    data = report_data(project, catalog)
    by_id = {e["id"]: e for e in data["launches"]}
    assert by_id["launch1"]["error"] is None and by_id["launch1"]["prediction"]["grid_size"] == 1_562_500
    assert by_id["broken"]["prediction"] is None and "choose a kernel" in by_id["broken"]["error"]
    sweeps = {e["id"]: e for e in data["sweeps"]}
    assert "gone" in sweeps["bad"]["error"] and sweeps["bad"]["result"] is None
    assert [e["id"] for e in data["launches"]] == list(project.launches)
    good = [e for e in data["sweeps"] if e["id"] != "bad"]
    assert good and all(e["error"] is None and e["result"].curves for e in good)


def test_a_failed_analysis_is_not_kept(catalog, example_project, counted):
    from gpumodeler.core.pipeline import GraphAnalyses
    project = example_project()
    graph = project.kernels["saxpy2"]
    analyses = GraphAnalyses(lambda key: (_ for _ in ()).throw(InvalidParameter(f"no table {key}")))
    for _ in range(2):
        with pytest.raises(ModelError, match="no table mine"):
            analyses.bound(graph, "mine")
    assert analyses.analysed == 0
    copy = graph.copy()
    assert analyses.bound(graph, None).formula() == analyses.bound(copy, None).formula()
    assert analyses.analysed == 2      # an equal graph that is another object: analysed itself


def test_an_application_runs_through_the_service_as_the_timeline_command(catalog, capsys):
    from gpumodeler.cli.main import main
    from gpumodeler.db.project_file import load_project
    from gpumodeler.service import ProjectEvaluation, catalog_lookups, pick_application
    path = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"
    project = load_project(path)
    app_id = pick_application(project, None)
    mine = ProjectEvaluation(project, catalog_lookups(catalog)).application(app_id)
    assert main(["timeline", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(mine))
    assert mine["makespan_s"] > 0


def test_the_old_import_paths_still_work():
    from gpumodeler.cli import cmd_project, common
    from gpumodeler.core import project
    from gpumodeler.report import application
    from gpumodeler import service
    # the pipeline is found in core.pipeline only (core.project re-exporting it was a cycle)
    assert not hasattr(project, "evaluate_launch")
    assert common.catalog_lookups is service.catalog_lookups
    assert cmd_project.calibration_text is service.calibration_text
    assert cmd_project.transfer_calibration_of is service.transfer_calibration_of
    assert application.run_application is service.run_application
    assert application.pick_application is service.pick_application
    with pytest.raises(AttributeError):
        project.no_such_name  # noqa: B018
