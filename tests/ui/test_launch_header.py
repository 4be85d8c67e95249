"""The Launch tab leads with the answer: a header with the total, kernel time, bound and the
models' spread that stays on screen at 1280×720; the models table marks uncalibrated models
and missing inputs in its cells; every kernel term is a control of the panel, and no text of
the panel sends the user to a command-line option."""
import re

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QLabel, QLineEdit

from gpumodeler.ui.launch_panel.models_view import COLUMNS
from gpumodeler.ui.launch_panel.terms_box import panel_words
from gpumodeler.ui.plots.units import fmt_time
from gpumodeler.ui.screenshot import settle

pytestmark = pytest.mark.usefixtures("private_settings")

FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _visible_in_window(widget, window) -> bool:
    """The widget is shown, and its whole rectangle is inside the window's."""
    if not widget.isVisible() or widget.visibleRegion().isEmpty():
        return False
    top_left = widget.mapTo(window, QPoint(0, 0))
    return window.rect().contains(QRect(top_left, widget.size()))


@pytest.mark.parametrize("example", ["saxpy2-gtx970.gpm", "four-h100-nvlink.gpm"])
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_header_total_is_in_the_visible_window(example_window, size, example):
    from pathlib import Path
    win = example_window
    path = Path(__file__).resolve().parents[2] / "resources" / "examples" / example
    assert win.open_path(str(path), ask=False)
    win.resize(*size)
    win.show()
    panel = win.launch_panel
    win.tabs.setCurrentIndex(win.tabs.indexOf(panel))
    settle(150)
    assert win.tabs.currentWidget() is panel
    assert (win.width(), win.height()) == size  # the tab fits the screen: no taller window
    header = panel.header
    total = panel.result.prediction.total_time_s
    assert f"Total {fmt_time(total)}" in header.total.text()
    assert _visible_in_window(header.total, win)
    assert _visible_in_window(header.summary, win)
    kernel = panel.result.prediction.kernel
    assert fmt_time(kernel.time_s) in header.summary.text() and f"{kernel.mode}-bound" in header.summary.text()
    from gpumodeler.ui.launch_panel.results import RESOURCE_NAMES
    assert f"limited by {RESOURCE_NAMES[kernel.limiting_resource]}" in header.summary.text()
    # the spread names the slowest model and says it is uncalibrated (bsp at its λ = 1)
    assert "bsp, uncalibrated" in header.spread.text() and "max/min" in header.spread.text()
    # the header is outside every scroll area: it cannot be scrolled away
    from PySide6.QtWidgets import QScrollArea
    parent = header.parentWidget()
    while parent is not None and parent is not panel:
        assert not isinstance(parent, QScrollArea)
        parent = parent.parentWidget()
    # the models table's five rows are on screen too at this size
    table = panel.models.table
    last = table.visualItemRect(table.item(table.rowCount() - 1, 0))
    assert table.viewport().rect().contains(last)


def test_models_table_marks_status_in_its_cells(example_window):
    panel = example_window.launch_panel
    table = panel.models.table
    status = COLUMNS.index("Status")
    rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    assert "uncalibrated" in table.item(rows["bsp"], status).text()
    assert "needs" in table.item(rows["volkov-contention"], status).text()
    assert table.item(rows["roofline"], status).text() == "✓"
    # the launch's λ is calibrated (0.703787): gajger is plain; at λ = 1 it is not
    assert table.item(rows["gajger"], status).text() == "✓"
    assert "uncalibrated" not in panel.header.summary.text()
    panel.form.widgets["lam"].setText("1")
    panel.form.widgets["lam"].editingFinished.emit()
    assert panel.launch.lam == 1.0
    assert "uncalibrated" in table.item(rows["gajger"], status).text()
    assert "uncalibrated" in panel.header.summary.text()  # the header's kernel time is gajger's
    # the coloured rows differ from the plain ones
    assert table.item(rows["bsp"], 0).foreground().color() != table.item(rows["roofline"], 0).foreground().color()


def test_no_panel_text_names_a_command_line_option(example_window):
    panel = example_window.launch_panel
    texts = [w.text() for w in panel.findChildren(QLabel)]
    texts += [w.toolTip() for w in panel.findChildren(QLabel)]
    table = panel.models.table
    texts += [table.item(r, c).text() for r in range(table.rowCount()) for c in range(table.columnCount())]
    texts += [table.item(r, c).toolTip() for r in range(table.rowCount()) for c in range(table.columnCount())]
    # the core notes do name options: the panel shows its own controls instead
    assert any("under Kernel terms" in t for t in texts)
    offending = [t for t in texts if FLAG.search(t)]
    assert offending == []


def test_panel_words_replace_every_option_of_the_term_notes():
    from gpumodeler.core.models.kernel_terms_vec import l2_term, overhead_decision
    from gpumodeler.core.models.result import KernelTerms
    notes = ["unknown for this GPU (--launch-overhead SECONDS)",
             "fits in L2 but the L2 bandwidth is unknown (--l2-bandwidth)", "off by default; --tail"]
    for note in notes:
        assert FLAG.search(note) and not FLAG.search(panel_words(note))
    # a variable an expression needs (core's ExpressionError) is a Loop variables field
    from gpumodeler.core.errors import ExpressionError
    from gpumodeler.core.kernel.expressions import parse
    with pytest.raises(ExpressionError) as caught:
        parse("4*M").evaluate({"N": 1})
    assert FLAG.search(str(caught.value))
    words = panel_words(str(caught.value))
    assert not FLAG.search(words) and "type M under Loop variables" in words
    # the notes core gives today are among them
    class Spec:
        launch_overhead_s = None
    assert overhead_decision(Spec, KernelTerms())[1] in notes
    assert not FLAG.search(l2_term(None).note)  # names no option


def _type(edit: QLineEdit, text: str) -> None:
    edit.setText(text)
    edit.editingFinished.emit()


def test_kernel_terms_are_controls_that_change_the_prediction(example_window, qtbot):
    panel = example_window.launch_panel
    box = panel.terms_box
    base = panel.result.prediction.kernel.time_s
    # launch overhead: unknown for the GTX 970, given here
    _type(box.edits["launch_overhead_s"], "5 us")
    settle(50)
    assert panel.result.prediction.kernel.time_s == pytest.approx(base + 5e-6, rel=1e-12)
    gajger = panel.model_results["gajger"].time_s
    assert gajger == pytest.approx(base + 5e-6, rel=1e-12)  # the models table agrees
    box.overhead.setChecked(False)
    settle(50)
    assert panel.result.prediction.kernel.time_s == pytest.approx(base, rel=1e-12)
    box.overhead.setChecked(True)
    settle(50)
    # a bad value is refused at its field: red, the reason shown, the prediction unchanged
    before = panel.result.prediction.kernel.time_s
    _type(box.edits["launch_overhead_s"], "fast")
    settle(50)
    assert box.edits["launch_overhead_s"].property("error_message")
    assert "Overhead per launch" in box.message.text() and not box.message.isHidden()
    assert panel.result.prediction.kernel.time_s == before
    _type(box.edits["launch_overhead_s"], "-1 us")
    assert "must be >= 0" in box.message.text()
    _type(box.edits["launch_overhead_s"], "")
    settle(50)
    assert panel.result.prediction.kernel.time_s == pytest.approx(base, rel=1e-12)
    assert box.message.isHidden()


def test_tail_switches_its_term_and_the_working_set_term_is_gone(example_window):
    panel = example_window.launch_panel
    box = panel.terms_box

    def effect(name):
        return next(t for t in panel.result.prediction.terms.effects() if t.name == name)
    assert not effect("tail effect").applied
    box.tail.setChecked(True)
    settle(50)
    assert "off by default" not in effect("tail effect").note
    # the old working-set term is replaced by the reuse model: listed, off, no control
    ws = effect("working set in L2")
    assert not ws.applied and "reuse model" in ws.note
    assert "working_set_bytes" not in box.edits and panel.model_parameters() == {}
