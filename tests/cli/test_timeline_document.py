"""The ``timeline`` document, built a column at a time, and its ``--json`` text, written from
the columns: the same document and the same bytes as the per-step construction they
replaced (kept here as the reference) and the standard library's encoder, on a hand-built
application with every kind of step (kernels on four GPUs, host-GPU, peer and staged copies,
a synchronisation, an event wait, host time, measured and unmeasured steps) and on an
imported one."""
import dataclasses
import json
from pathlib import Path
import sys

import pytest

from gpumodeler.cli import common
from gpumodeler.cli.main import main
from gpumodeler.core.application.app import Step, run as core_run
from gpumodeler.core.application.trace import measured_makespan
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.project_file import load_project, save_project
from gpumodeler.service import application as service

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import streamed_trace  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MULTI = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


def reference_document(project, app_id, lookups) -> dict:
    """The document as it was built before the columns: one dict per activity, in a loop."""
    app = project.applications[app_id]
    built, timeline, energy = core_run(project, app, **lookups)
    critical = set(timeline.critical_path)
    t0 = min((s.measured_start_s for s in app.steps if s.measured_start_s is not None),
             default=0.0)
    by_id = {s.id: s for s in app.steps}
    steps = []
    for a in timeline.activities:
        id_, name, engines, links, start, end, ready, cause = a
        step, p = by_id[id_], built.predictions[id_]
        measured = step.measured_start_s is not None and step.measured_s is not None
        steps.append({
            "id": id_, "name": name, "kind": step.kind, "stream": step.stream,
            "engine": engines[0] if engines else None, "engines": list(engines),
            "links": list(links), "device": p.device,
            "start_s": start, "end_s": end, "ready_s": ready,
            "alone_s": p.alone_s, "waited_s": start - ready,
            "stretched_s": (end - start) - p.alone_s,
            "energy_j": energy.step_j.get(id_), "critical": id_ in critical,
            "cause": cause, "prediction": p.detail,
            "measured_s": step.measured_s,
            "measured_start_s": step.measured_start_s - t0 if measured else None,
            "measured_end_s": step.measured_start_s - t0 + step.measured_s if measured else None})
    return {
        "application": app.id, "name": app.name, "policy": app.policy,
        "steps": steps, "makespan_s": timeline.makespan_s,
        "measured_makespan_s": measured_makespan(app),
        "critical_path": list(timeline.critical_path),
        "busy_fraction": dict(timeline.busy_fraction), "busy_s": dict(timeline.busy_s),
        "energy_j": energy.energy_j, "energy_delay_js": energy.energy_delay_js,
        "device_energy_j": energy.device_j, "host_energy_j": energy.host_j,
        "energy_unknown": list(energy.unknown), "energy_bound": service.ENERGY_BOUND,
        "notes": list(built.notes)}


def hand_built(tmp_path: Path) -> Path:
    """The four-H100 example with a step of every other kind added: host time, an event
    wait, a copy staged through the host, a name to escape, and steps measured, half
    measured (a start without a duration) and not measured."""
    project = load_project(MULTI)
    app = project.applications["app1"]
    extra = (
        Step("host", "sync", name="host work", stream="host", host_s=2.5e-6,
             measured_s=3e-6, measured_start_s=1e-3),
        Step("wait", "sync", name="event wait", stream="dp-gpu3", after=("dp1-kernel",)),
        Step("staged", "copy", name='gpu1 → gpu3 "staged"', stream="extra", src="gpu1",
             dst="gpu3", size="N", measured_s=1e-4, measured_start_s=2e-3),
        Step("again", "kernel", name="kernel again", stream="extra", launch="launch1",
             gpu="gpu3", fraction=0.5, measured_start_s=5e-3),
        Step("back", "copy", name="back", stream="extra", src="gpu4", dst="host1", size="4*N",
             after=("wait", "host")))
    steps = list(app.steps)
    steps[2] = dataclasses.replace(steps[2], measured_s=0.0, measured_start_s=1.5e-3)
    project.put("applications", dataclasses.replace(app, steps=tuple(steps) + extra))
    return save_project(project, tmp_path / "hand.gpm")


@pytest.fixture(params=["hand-built", "imported"])
def project_path(request, tmp_path, capsys):
    if request.param == "hand-built":
        return hand_built(tmp_path)
    path = tmp_path / "imported.gpm"
    code = main(["application", "import", str(streamed_trace(tmp_path / "t.sqlite", 300, seed=2)),
                 "--project", str(path)])
    capsys.readouterr()
    assert code == 0
    return path


def document_and_reference(path):
    project = load_project(path)
    app_id = service.pick_application(project, None)
    with Catalog() as catalog:
        lookups = common.catalog_lookups(catalog)
        return (service.run_application(project, app_id, lookups),
                reference_document(project, app_id, lookups))


def stdlib(doc) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, default=common._json_default) + "\n"


def test_the_document_is_the_per_step_documents(project_path):
    doc, want = document_and_reference(project_path)
    assert doc == want
    assert [list(s) for s in doc["steps"]] == [list(s) for s in want["steps"]]
    assert list(doc["steps"][0]) == list(service.STEP_KEYS)
    kinds = {s["kind"] for s in doc["steps"]}
    assert kinds == {"kernel", "copy", "sync"}


def test_the_json_and_text_are_the_reference_documents(project_path, capsys):
    _doc, want = document_and_reference(project_path)
    assert main(["timeline", str(project_path), "--json"]) == 0
    assert capsys.readouterr().out == stdlib(want)
    for by in service.GROUPINGS:
        assert main(["timeline", str(project_path), "--json", "--by", by]) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["groups"] == json.loads(json.dumps(service.aggregate(want, by)))
    from gpumodeler.cli.cmd_timeline import _print
    _print(want, common.fmt_time)
    text = capsys.readouterr().out
    assert main(["timeline", str(project_path)]) == 0
    assert capsys.readouterr().out == text


def test_the_hand_built_application_has_what_it_is_meant_to(tmp_path):
    doc, _ = document_and_reference(hand_built(tmp_path))
    steps = {s["id"]: s for s in doc["steps"]}
    assert len({s["device"] for s in doc["steps"] if s["kind"] == "kernel"}) == 4
    assert len(steps["staged"]["links"]) == 2 and steps["peer"]["links"] == ["nvlink1:gpu2>gpu1"]
    assert steps["host"]["engine"] is None and steps["host"]["engines"] == []
    assert steps["again"]["measured_start_s"] is None and steps["again"]["measured_s"] is None
    assert steps["staged"]["measured_end_s"] == pytest.approx(2e-3 - 1e-3 + 1e-4)
    assert doc["measured_makespan_s"] == pytest.approx(2e-3 + 1e-4 - 1e-3)


def test_a_value_the_columns_writer_leaves_is_printed_the_usual_way(monkeypatch, capsys, tmp_path):
    """(a numpy number in a column: print_json's converter writes it; the same text as the
    document's)"""
    import numpy as np
    path = hand_built(tmp_path)
    real = service.application_columns
    seen = {}

    def with_numpy(*args, **kwargs):
        doc, columns = real(*args, **kwargs)
        columns[service.STEP_KEYS.index("energy_j")][1] = np.float64(0.25)
        seen["doc"] = dict(doc, steps=service.step_rows(columns))
        return doc, columns
    monkeypatch.setattr(service, "application_columns", with_numpy)
    assert main(["timeline", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert out == stdlib(seen["doc"]) and json.loads(out)["steps"][1]["energy_j"] == 0.25


@pytest.mark.parametrize("change", [
    "none", "first start", "last duration", "middle both", "every start", "every duration",
    "one step, measured", "one step, no start", "a NaN start"])
def test_measured_columns_of_steps_measured_all_or_in_part(tmp_path, capsys, change):
    """(every step measured: the measured columns and makespan a column at a time; a step
    without a start or a duration: the general rule, step by step; both the reference's)"""
    path = tmp_path / "imported.gpm"
    assert main(["application", "import", str(streamed_trace(tmp_path / "t.sqlite", 40, seed=4)),
                 "--project", str(path)]) == 0
    capsys.readouterr()
    project = load_project(path)
    app = project.applications["app1"]
    steps = list(app.steps)
    none_start = {"measured_start_s": None}
    none_duration = {"measured_s": None}
    others = [i for i, s in enumerate(steps) if s.kind != "kernel"]   # (a kernel is its time)
    edits = {"none": {}, "first start": {0: none_start}, "last duration": {others[-1]: none_duration},
             "middle both": {others[len(others) // 2]: {**none_start, **none_duration}},
             "every start": {i: none_start for i in range(len(steps))},
             "every duration": {i: none_duration for i in others},
             "a NaN start": {3: {"measured_start_s": float("nan")}}}
    if change.startswith("one step"):
        steps = [s for s in steps if s.kind == "kernel"][:1]
        edits[change] = {0: none_start} if change.endswith("no start") else {}
    for i, fields in edits[change].items():
        steps[i] = dataclasses.replace(steps[i], **fields)
    project.put("applications", dataclasses.replace(app, steps=tuple(steps)))
    with Catalog() as catalog:
        lookups = common.catalog_lookups(catalog)
        doc = service.run_application(project, "app1", lookups)
        want = reference_document(project, "app1", lookups)
    assert stdlib(doc) == stdlib(want)   # (NaN and -0.0 told apart)


def test_values_by_id_are_the_look_ups_in_any_order():
    """(a dict whose keys are the ids in order: its values at once; any other: looked up)"""
    ids = ["a", "b", "c"]
    for by_id in ({"a": 1, "b": 2, "c": 3}, {"c": 3, "a": 1, "b": 2}, {"a": 1, "c": 3},
                  {"a": 1, "b": 2, "c": 3, "d": 4}, {"a": 1, "b": 2, "x": 3}):
        assert service._values_by_id(by_id, ids, by_id.get) == list(map(by_id.get, ids))
    with pytest.raises(KeyError):
        service._values_by_id({"a": 1}, ids, {"a": 1}.__getitem__)
