"""Launch panel: the example project shows the CLI's numbers (Gajger Fig. 5.24); each field
edit is one undoable command; bad values are refused at the field, the model unchanged."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main as cli_main
from gpumodeler.core.project import Project
from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.panel import LaunchPanel

SAXPY2 = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "saxpy2-maxwell.json"
LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"


@pytest.fixture
def panel(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    w = LaunchPanel(doc)
    qtbot.addWidget(w)
    yield w
    w.sweep.cancel()


def edit(panel, name, text):
    w = panel.form.widgets[name]
    w.setText(text)
    w.editingFinished.emit()


def test_example_shows_the_cli_numbers_for_fig_5_24(panel, capsys):
    code = cli_main(["predict", "--device", "GeForce GTX 970", "--link", LINK, "--graph", str(SAXPY2),
                     "--set", "a=128", "--data-size", "4e8", "--block-size", "256", "--registers", "8",
                     "--lambda", "0.703787", "--htod", "1.6e9", "--htod", "1.6e9", "--dtoh", "1.6e9", "--json"])
    assert code == 0
    cli = json.loads(capsys.readouterr().out)
    r = panel.result
    assert r is not None, panel.error
    p = r.prediction
    assert p.kernel.time_s == pytest.approx(cli["kernel_time_s"], rel=1e-12)
    assert list(p.transfer_times_s) == pytest.approx(cli["transfer_times_s"], rel=1e-12)
    assert p.total_time_s == pytest.approx(cli["total_time_s"], rel=1e-12)
    assert r.occupancy_warps_per_sm == cli["occupancy_warps_per_sm"] == 64
    assert r.latency_bound_formula == "942 + 24·a" and r.latency_bound_cycles == cli["latency_bound_cycles"]
    # and what the user reads
    L = panel.result_labels
    assert "145.8 ms" in L["kernel_time"].text()
    assert "throughput-bound" in L["mode"].text() and "CUDA cores" in L["mode"].text()
    assert L["transfers"].text().count("147 ms") == 2 and "155.1 ms" in L["transfers"].text()
    assert "594.9 ms" in L["total"].text()
    assert "CUDA cores 133.8" in L["cycles"].text() and "issue 102" in L["cycles"].text()
    assert "30.01 warps/SM" in L["knee"].text()
    assert panel.occupancy_label.text().startswith("64 warps/SM (100 %), limited by warps")


def test_block_size_edit_is_one_undoable_step(panel, qtbot):
    doc = panel.document
    lid = panel.launch_id
    before = panel.result.prediction.kernel.time_s
    depth = doc.undo_stack.count()
    edit(panel, "block_size", "1000")  # 32 warps per block, 25 % of the last one idle
    assert doc.project.launches[lid].block_size == 1000
    assert doc.undo_stack.count() == depth + 1 and doc.undo_stack.text(depth) == "edit block size"
    after = panel.result.prediction.kernel.time_s
    assert after == pytest.approx(before * 12_800_000 / 12_500_000, rel=1e-9)
    assert "145.8 ms" not in panel.result_labels["kernel_time"].text()
    assert panel.occupancy_label.text().endswith("2 blocks/SM")
    doc.undo_stack.undo()
    qtbot.waitUntil(lambda: panel.form.widgets["block_size"].text() == "256")
    assert panel.result.prediction.kernel.time_s == before
    doc.undo_stack.redo()
    qtbot.waitUntil(lambda: panel.form.widgets["block_size"].text() == "1000")
    assert panel.result.prediction.kernel.time_s == after


@pytest.mark.parametrize("field, text, says", [
    ("block_size", "2000", "<= 1024"),
    ("block_size", "abc", "not a number"),
    ("block_size", "12.5", "whole number"),
    ("registers", "300", "<= 255"),
    ("lam", "0", "> 0"),
    ("size", "-4", ">= 1"),
])
def test_bad_values_are_refused_at_the_field(panel, field, text, says):
    doc = panel.document
    launch = doc.project.launches[panel.launch_id]
    depth = doc.undo_stack.count()
    edit(panel, field, text)
    assert doc.project.launches[panel.launch_id] == launch and doc.undo_stack.count() == depth
    assert says in panel.form.error_of(field)
    assert not panel.message.isHidden() and says in panel.message.text()
    assert panel.result is not None  # the prediction of the unchanged launch stays


def test_a_launch_that_cannot_run_is_refused_with_the_calculator_reason(panel):
    doc = panel.document
    edit(panel, "registers", "255")  # 255 registers × 256 threads fits the GTX 970 register file
    assert doc.project.launches[panel.launch_id].registers == 255
    depth = doc.undo_stack.count()
    edit(panel, "block_size", "1024")  # 255 × 1024 does not
    assert doc.project.launches[panel.launch_id].block_size == 256 and doc.undo_stack.count() == depth
    assert "register" in panel.form.error_of("block_size")


def test_occupancy_override_lambda_variables_and_transfers(panel, qtbot, example_project):
    doc = panel.document
    lid = panel.launch_id
    auto = panel.form.widgets["occupancy_auto"]
    auto.click()  # unchecked: keep the calculator's value as an explicit override
    assert doc.project.launches[lid].occupancy_override == 64.0
    edit(panel, "occupancy_override", "16")
    assert panel.result.prediction.kernel.mode == "latency"  # below the 30-warp knee
    assert "latency" in panel.result_labels["mode"].text()
    edit(panel, "lam", "1")
    assert doc.project.launches[lid].lam == 1.0
    a = panel._variable_fields["a"]
    a.setText("64")
    a.editingFinished.emit()
    assert doc.project.launches[lid].variables == {"a": 64}
    assert "942 + 24·a = 2478" in panel.result_labels["latency_bound"].text()
    size = panel.transfer_table.cellWidget(0, 1)
    size.setText("8*N")
    size.editingFinished.emit()
    t = panel.result.prediction.transfers
    assert doc.project.launches[lid].transfers[0].size == "8*N" and t[0][1] == 3.2e9
    size = panel.transfer_table.cellWidget(0, 1)
    size.setText("4*M")  # unknown variable: refused at the cell
    size.editingFinished.emit()
    assert doc.project.launches[lid].transfers[0].size == "8*N"
    assert "unknown variable" in panel.message.text()
    panel.add_transfer("dtoh", "1e6")
    assert len(doc.project.launches[lid].transfers) == 4 and panel.transfer_table.rowCount() == 4
    for _ in range(6):
        doc.undo_stack.undo()
    qtbot.waitUntil(lambda: panel.form.widgets["lam"].text() == "0.703787")
    assert doc.project.launches[lid] == example_project().launches[lid]


def test_new_launch_and_project_replaced(panel):
    doc = panel.document
    assert panel.new_launch()
    assert len(doc.project.launches) == 2 and panel.launch_id != "launch1"
    assert panel.result is not None  # the GTX 970, saxpy2 with N = 1e6
    doc.project = Project("empty")
    doc.project.listeners.append(doc._relay)
    doc.changed.emit("project_replaced", None)
    assert panel.launch_id is None and panel.result is None
    assert "New launch" in panel.result_message.text()


@pytest.mark.parametrize("regs,shared", [(40, 2048), (96, None)])
def test_new_launch_takes_the_imported_kernels_registers(panel, regs, shared):
    """A kernel whose listing gave its registers (and shared memory) gives them to a new
    launch; a kernel without them leaves the launch's defaults."""
    doc = panel.document
    kernel = next(iter(doc.project.kernels))
    graph = doc.project.kernels[kernel]
    graph.registers_per_thread, graph.static_shared_bytes = regs, shared
    assert panel.new_launch()
    launch = doc.project.launches[panel.launch_id]
    assert launch.kernel == kernel and launch.registers == regs
    assert launch.shared_mem == (shared if shared is not None else 0)
    graph.registers_per_thread = graph.static_shared_bytes = None
    assert panel.new_launch()
    assert doc.project.launches[panel.launch_id].registers == 32


def test_models_side_by_side_with_equation_tooltips(panel, qtbot, tmp_path):
    """The example launch in every registered model: gajger is the Prediction box's number;
    the GTX 970 has no Volkov contention fit, which that row says; tooltips cite equations."""
    from gpumodeler.core.models.registry import MODELS
    from gpumodeler.core.models.result import ModelResult
    results = panel.model_results
    assert list(results) == list(MODELS)
    assert results["gajger"].time_s == pytest.approx(panel.result.prediction.kernel.time_s, rel=1e-12)
    table = panel.models.table
    rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    assert set(rows) == set(MODELS)
    from gpumodeler.ui.launch_panel.models_view import COLUMNS
    time_col, terms_col = COLUMNS.index("Kernel time"), COLUMNS.index("Terms")
    assert table.item(rows["gajger"], time_col).text() == "145.8 ms"
    assert "eq. 4.1–4.7" in table.item(rows["gajger"], 0).toolTip()
    assert "§6.4" in table.item(rows["volkov-contention"], 2).toolTip()
    assert "Table 6.5" in table.item(rows["volkov-contention"], terms_col).text()
    assert "H17" in table.item(rows["mwp-cwp"], 0).toolTip() or "H1–H21" in table.item(rows["mwp-cwp"], 0).toolTip()
    assert "eq. 3.3" in table.item(rows["bsp"], 1).toolTip()
    computed = [r for r in results.values() if isinstance(r, ModelResult)]
    assert len(computed) >= 4 and "max/min" in panel.models.spread_label.text()
    panel.resize(1400, 900)
    panel.grab().save(str(tmp_path / "launch_panel_models.png"))
