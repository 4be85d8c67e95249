"""The launch panel's learned row: a stored learned model chosen in the models box predicts
the launch as `predict --learned` does, with its training data in the row and its tooltip,
flagged outside the trained ranges; none chosen, no row; a damaged one is a row that says
so, never a crash."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main as cli_main
from gpumodeler.core.learn.launch import learned_entry, project_launch_row
from gpumodeler.core.learn.model import fit
from gpumodeler.core.learn.model_file import model_to_text
from gpumodeler.core.models.registry import MODELS
from gpumodeler.db.learned_models import save_model, stored_from_text
from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.models_view import COLUMNS, NO_LEARNED
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from learn_rows import gpus, rows

SAXPY2 = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "saxpy2-maxwell.json"


@pytest.fixture(scope="module")
def hybrid_text():
    data = rows(gpus(3), analytical=lambda r: 1e-9 * r.threads, time=lambda r: 2e-9 * r.threads)
    return model_to_text(fit(data, "hybrid"))


@pytest.fixture
def panel(qtbot, catalog, example_project, hybrid_text):
    save_model(catalog, stored_from_text("doubled", hybrid_text))
    doc = Document(example_project(), catalog)
    w = LaunchPanel(doc)
    qtbot.addWidget(w)
    yield w
    w.sweep.cancel()


def cells(table, row):
    return [table.item(row, c).text() for c in range(len(COLUMNS))]


def test_no_learned_model_no_row_and_the_stored_ones_are_offered(panel):
    table = panel.models.table
    assert table.rowCount() == len(MODELS)
    combo = panel.models.learned_combo
    assert [combo.itemText(i) for i in range(combo.count())] == [NO_LEARNED, "doubled"]


def test_the_learned_row_is_the_cli_prediction_with_its_training_data(panel, hybrid_text, tmp_path, capsys):
    panel.models.learned_combo.setCurrentText("doubled")
    table = panel.models.table
    assert table.rowCount() == len(MODELS) + 1
    row = cells(table, len(MODELS))
    assert row[0] == "learned: doubled"
    # the same prediction and the same range check as predict --learned on this launch
    entry = learned_entry(panel.models._learned[1],
                          project_launch_row(panel.project, panel.launch_id, panel.result,
                                             panel.model_results))
    from gpumodeler.ui.plots.units import fmt_time
    assert row[COLUMNS.index("Kernel time")] == fmt_time(entry["time_s"])
    model_file = tmp_path / "doubled.json"
    model_file.write_text(hybrid_text)
    assert cli_main(["predict", "--device", "GeForce GTX 970", "--graph", str(SAXPY2), "--set", "a=128",
                     "--data-size", "4e8", "--block-size", "256", "--registers", "8",
                     "--lambda", "0.703787", "--learned", str(model_file), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["learned"]
    assert entry["time_s"] == pytest.approx(cli["time_s"], rel=1e-9)
    assert entry["outside_trained_ranges"] == cli["outside_trained_ranges"]
    # its training data in the row and its tooltip, and the flag as the CLI's
    assert "72 row(s), 3 kernel(s), GPUs GPU 0, GPU 1, GPU 2" in row[COLUMNS.index("Terms")]
    tip = table.item(len(MODELS), 0).toolTip()
    assert "kernels: a, b, c" in tip and "hybrid on analytical features" in tip
    status = row[COLUMNS.index("Status")]
    if cli["outside_trained_ranges"]:
        assert "outside the trained ranges" in status
        assert all(name in tip for name in cli["outside_trained_ranges"])
    else:
        assert "within the trained ranges" in status
    # back to none: the row goes
    panel.models.learned_combo.setCurrentText(NO_LEARNED)
    assert table.rowCount() == len(MODELS)


def test_a_launch_inside_and_outside_the_trained_ranges_is_flagged_accordingly(panel):
    view = panel.models
    view.learned_combo.setCurrentText("doubled")
    stored, model = view._learned
    launch_row = project_launch_row(panel.project, panel.launch_id, panel.result, panel.model_results)
    # the trained ranges widened around this launch: inside; narrowed away from it: outside
    names = model.feature_names
    wide = {n: [-1e9, 1e9] for n in names}
    model.training["ranges"] = wide
    view.show_results(panel.model_results, launch_row=lambda: launch_row)
    assert "within" in cells(view.table, len(MODELS))[1] and view.learned_status[0] == "ok"
    model.training["ranges"] = dict(wide, warps=[-2.0, -1.0])
    view.show_results(panel.model_results, launch_row=lambda: launch_row)
    assert "outside" in cells(view.table, len(MODELS))[1] and view.learned_status[0] == "warning"
    assert "warps" in view.table.item(len(MODELS), 0).toolTip()


def test_a_damaged_stored_model_is_a_row_that_says_so(panel, catalog):
    catalog.user_db.execute("UPDATE learned_models SET model_sha256 = ? WHERE name = ?",
                            ["0" * 64, "doubled"])
    panel.models.learned_combo.setCurrentText("doubled")
    row = cells(panel.models.table, len(MODELS))
    assert row[1] == "✗ cannot be loaded" and "damaged" in row[5]
    assert panel.models.table.item(0, 0).text() in MODELS  # the models' rows are unchanged
