"""The Application tab simulates a large application in a worker: "simulating…" meanwhile,
the same result as in the GUI thread, a result the project changed after dropped, and the
catalog asked only in the GUI thread."""
import pytest

from gpumodeler.service.application import run_application
from gpumodeler.ui.application import panel as panel_module
from gpumodeler.ui.application.panel import ApplicationPanel
from gpumodeler.ui.document import Document

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def panel(qtbot, catalog, example_project, monkeypatch):
    monkeypatch.setattr(panel_module, "BACKGROUND_FROM", 1)   # every application
    p = ApplicationPanel(Document(example_project(), catalog))
    qtbot.addWidget(p)
    return p


def here(panel) -> dict:
    return run_application(panel.project, panel.app_id, panel.document.lookups())


def finished(qtbot, panel) -> None:
    qtbot.waitUntil(lambda: not panel._jobs, timeout=20_000)


def test_simulated_in_a_worker_with_the_same_result(qtbot, panel):
    shown = []
    panel.simulated.connect(lambda result, error: shown.append((result, error)))
    panel.simulate()
    assert panel.simulating and panel.result is None
    assert panel.summary.text() == "simulating… (4 steps)"
    finished(qtbot, panel)
    assert not panel.simulating
    assert len(shown) == 1 and shown[0][1] == ""
    assert panel.result == here(panel) and shown[0][0] is panel.result
    assert panel.summary.text().startswith("makespan")
    assert panel.chart.rows[:2] == ["gpu1/copy", "link1:host1>gpu1"]


def test_a_result_the_project_changed_after_is_dropped(qtbot, panel):
    shown = []
    panel.simulated.connect(lambda result, error: shown.append(result))
    panel.simulate()                 # of 4 steps
    first = panel._generation
    assert panel.add_step("copy")    # the worker still simulates the 4 steps it was given
    panel.simulate()
    assert panel._generation == first + 1 and len(panel._jobs) == 2
    finished(qtbot, panel)
    assert len(shown) == 1 and len(shown[0]["steps"]) == 5
    assert panel.result == here(panel)


def test_the_worker_reads_a_snapshot(qtbot, panel):
    """The project edited while the worker runs: the worker's copy is not."""
    app = panel.application
    snap = panel_module._snapshot(panel.project, app)
    assert panel.add_step("sync")
    assert len(snap.applications[app.id].steps) == 4
    assert len(panel.application.steps) == 5
    for name in ("devices", "connections", "launches", "applications"):
        assert getattr(snap, name) is not getattr(panel.project, name)
    for kernel_id, graph in snap.kernels.items():
        assert graph is not panel.project.kernels[kernel_id]


def test_the_catalog_is_asked_beforehand_and_in_the_gui_thread(qtbot, panel, monkeypatch):
    import threading
    asked = []
    real = panel.document.lookups

    def watched():
        def wrap(kind, fn):
            def lookup(*key):
                asked.append((kind, threading.current_thread() is threading.main_thread()))
                return fn(*key)
            return lookup
        return {kind: wrap(kind, fn) for kind, fn in real().items()}
    monkeypatch.setattr(panel.document, "lookups", watched)
    panel.simulate()
    finished(qtbot, panel)
    assert {k for k, _ in asked} >= {"gpu_lookup", "link_lookup"}
    assert all(in_gui for _, in_gui in asked)
    assert panel.result is not None and panel.error == ""


def test_a_question_not_asked_beforehand_runs_the_simulation_here(qtbot, panel, monkeypatch):
    monkeypatch.setattr(panel_module._Answers, "_ask", lambda self, kind, *key: None)
    panel.simulate()
    assert panel.simulating
    finished(qtbot, panel)
    assert panel.result == here(panel) and panel.error == ""


def test_a_refusal_of_the_model_is_shown(qtbot, panel):
    from dataclasses import replace
    app = panel.application
    broken = tuple(replace(s, src="nowhere") if s.kind == "copy" else s for s in app.steps)
    panel.project.applications[app.id] = replace(app, steps=broken)
    panel.simulate()
    finished(qtbot, panel)
    assert panel.result is None and panel.error
    assert panel.summary.text().startswith("cannot simulate")


def test_the_step_list_names_each_step_and_holds_its_id(panel):
    from dataclasses import replace
    app = panel.application
    panel.project.applications[app.id] = replace(app, steps=app.steps + (
        replace(app.steps[0], id="lost", src="nowhere"),))
    panel._fill()
    steps = panel.application.steps
    assert panel.steps.count() == len(steps) == 5
    for row, s in enumerate(steps):
        item = panel.steps.item(row)
        assert item.data(256) == s.id and item.text() == panel._step_text(s)
    assert panel.steps.item(4).text().endswith("⚠ missing device")
    assert not panel.steps.item(0).text().endswith("⚠ missing device")
    assert panel.steps.item(0).text().startswith(f"[{steps[0].stream}] {steps[0].label}: ")
