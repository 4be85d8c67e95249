"""Kernel graph editor: build a graph through the editor's own gestures and actions, see
the latency bound follow, undo and redo each step; validation, import/export, layout."""
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent

from gpumodeler.core.kernel.graph import KernelGraph, from_dict, to_dict
from gpumodeler.ui.document import Document
from gpumodeler.ui.kernel_editor.editor import KernelEditor

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = ROOT / "resources" / "kernels" / "saxpy2-maxwell.json"


@pytest.fixture(autouse=True)
def env(gpumodeler_env):
    """No test reads or writes the user's own databases or settings."""


@pytest.fixture
def editor(qtbot):
    doc = Document()
    ed = KernelEditor(doc)
    qtbot.addWidget(ed)
    ed.resize(1100, 700)
    return ed


def bound_text(ed):
    return ed.bound_label.text()


def draw_edge(ed, src, dst, kind):
    """Choose the kind in the tool bar, then the drag gesture's result."""
    ed.kind_combo.setCurrentIndex(ed.kind_combo.findData(kind))
    ed.scene.edge_requested.emit(src, dst)


def small_graph(ed):
    """FFMA -> FFMA (dependency) -> EXIT (ilp) on Maxwell (Gajger): 6 + 3 cycles."""
    ed.new_action.trigger()
    for op in ("FFMA", "FFMA", "EXIT"):
        ed.palette.activate(op)
    ids = list(ed.graph.instructions)
    draw_edge(ed, ids[0], ids[1], "dependency")
    draw_edge(ed, ids[1], ids[2], "ilp")
    return ids


def test_build_a_graph_and_see_the_bound(editor, qtbot):
    ed = editor
    assert "No kernel" in bound_text(ed)
    ids = small_graph(ed)
    g = ed.graph
    assert g.latency_table == "maxwell-gajger"
    assert [g.instructions[i].opcode for i in ids] == ["FFMA", "FFMA", "EXIT"]
    assert {e.kind for e in g.edges.values()} == {"dependency", "ilp"}
    assert ed.latency_bound_formula() == "9"
    assert "<b>9</b>" in bound_text(ed)
    # the critical path is highlighted: both edges, all three instructions
    nodes, edges, _ = ed.scene.critical()
    assert nodes == set(ids) and edges == set(g.edges)
    assert all(ed.scene.edge_items[e].critical for e in g.edges)
    # each step undoes and redoes, and the label follows
    stack = ed.document.undo_stack
    assert stack.count() == 6  # new kernel, 3 instructions, 2 edges
    stack.undo()
    qtbot.waitUntil(lambda: ed.latency_bound_formula() == "6")
    assert len(ed.graph.edges) == 1 and len(ed.scene.edge_items) == 1
    stack.redo()
    qtbot.waitUntil(lambda: ed.latency_bound_formula() == "9")
    assert len(ed.scene.edge_items) == 2


def test_edge_labels_show_table_latency_and_take_an_explicit_one(editor, qtbot):
    ed = editor
    small_graph(ed)
    dep = next(e for e in ed.graph.edges.values() if e.kind == "dependency")
    item = ed.scene.edge_items[dep.id]
    assert item.label.toPlainText() == "6"
    ed.scene.latency_edited.emit(dep.id, "20")  # inline edit committed
    assert ed.graph.edges[dep.id].latency == 20
    assert ed.latency_bound_formula() == "23" and item.label.toPlainText() == "20"
    ed.scene.latency_edited.emit(dep.id, "")  # empty: back to the table
    assert ed.graph.edges[dep.id].latency is None and ed.latency_bound_formula() == "9"
    ed.scene.latency_edited.emit(dep.id, "-3")  # refused, nothing changes
    assert ed.graph.edges[dep.id].latency is None
    assert not ed.message_strip.isHidden() and ">= 0" in ed.message_strip.text()
    # the properties panel edits it too
    ed.scene.select_ids([dep.id])
    assert ed.properties.kind == "edge"
    assert "table: 6" in ed.properties.forms["edge"].widgets["latency"].placeholderText()
    field = ed.properties.forms["edge"].widgets["latency"]
    field.setText("12")
    field.editingFinished.emit()
    assert ed.graph.edges[dep.id].latency == 12 and ed.latency_bound_formula() == "15"
    ed.document.undo_stack.undo()
    qtbot.waitUntil(lambda: ed.latency_bound_formula() == "9")


def test_make_a_loop_and_see_the_formula(editor, qtbot):
    ed = editor
    ids = small_graph(ed)
    draw_edge(ed, ids[1], ids[0], "ilp")  # loop-carried (backwards): refused by analysis for now
    back = next(e for e in ed.graph.edges.values() if e.src == ids[1] and e.dst == ids[0])
    assert back.id in ed.errors and "outside any loop" in ed.errors[back.id]
    assert ed.scene.edge_items[back.id].error and not ed.message_strip.isHidden()
    assert "—" in bound_text(ed)
    ed.scene.select_ids(ids[:2])
    ed.loop_iterations.setText("a")
    ed.loop_action.trigger()
    assert len(ed.graph.loops) == 1
    loop = next(iter(ed.graph.loops.values()))
    assert loop.members == frozenset(ids[:2]) and loop.iterations.text == "a"
    # one iteration: FFMA -> FFMA (6) -> back (3) = 9 per iteration, then EXIT after 3
    assert ed.latency_bound_formula() == "3 + 9·a"
    assert not ed.errors.get(back.id)
    assert ed.scene.loop_items[loop.id].title == "× a"
    # a has no value yet: the formula shows, the number needs it
    assert "a" in ed._variable_fields
    field = ed._variable_fields["a"]
    field.setText("10")
    field.editingFinished.emit()
    assert ed.graph.variables == {"a": 10}
    assert "<b>93</b>" in bound_text(ed)
    # edit the loop's iterations in the property panel; a bad expression is refused
    ed.scene.select_ids([loop.id])
    assert ed.properties.kind == "loop"
    it = ed.properties.forms["loop"].widgets["iterations"]
    it.setText("2*a")
    it.editingFinished.emit()
    assert ed.graph.loops[loop.id].iterations.text == "2 * a"
    assert ed.latency_bound_formula() == "3 + 9·(2 * a)"
    it.setText("a +")
    it.editingFinished.emit()
    assert ed.graph.loops[loop.id].iterations.text == "2 * a"
    assert ed.properties.forms["loop"].error_of("iterations")
    assert not ed.properties.message.isHidden()
    # undo/redo: iterations edit, variable, loop
    stack = ed.document.undo_stack
    stack.undo()
    qtbot.waitUntil(lambda: ed.latency_bound_formula() == "3 + 9·a")
    stack.undo()
    stack.undo()
    qtbot.waitUntil(lambda: not ed.graph.loops and "—" in bound_text(ed))
    assert not ed.scene.loop_items
    stack.redo()
    qtbot.waitUntil(lambda: ed.latency_bound_formula() == "3 + 9·a")
    assert loop.id in ed.scene.loop_items


def test_bad_loop_expression_from_the_toolbar_is_refused(editor):
    ed = editor
    ids = small_graph(ed)
    ed.scene.select_ids(ids[:2])
    depth = ed.document.undo_stack.count()
    ed.loop_iterations.setText("a * (")
    ed.loop_action.trigger()
    assert not ed.graph.loops and ed.document.undo_stack.count() == depth
    assert ed.loop_iterations.property("error_message")
    assert "Loop iterations" in ed.message_strip.text()


def test_delete_selection_is_one_step(editor, qtbot):
    ed = editor
    ids = small_graph(ed)
    before = to_dict(ed.graph)
    ed.scene.select_ids([ids[1]])
    ed.delete_action.trigger()
    assert ids[1] not in ed.graph.instructions and not ed.graph.edges
    assert ids[1] not in ed.scene.node_items
    ed.document.undo_stack.undo()
    qtbot.waitUntil(lambda: ed.latency_bound_formula() == "9")
    assert to_dict(ed.graph) == before


def test_a_mouse_drag_moves_instructions_in_one_undo_step(editor, qtbot):
    ed = editor
    ids = small_graph(ed)
    ed.show()
    qtbot.waitExposed(ed)
    ed.view.resetTransform()
    item = ed.scene.node_items[ids[0]]
    start = ed.view.mapFromScene(item.sceneBoundingRect().center())
    vp = ed.view.viewport()

    def send(kind, pos, buttons):
        ev = QMouseEvent(kind, QPointF(pos), QPointF(vp.mapToGlobal(pos)), Qt.LeftButton, buttons,
                         Qt.NoModifier)
        QApplication.sendEvent(vp, ev)

    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication
    send(QEvent.MouseButtonPress, start, Qt.LeftButton)
    for step in range(1, 6):
        send(QEvent.MouseMove, start + QPoint(12 * step, 4 * step), Qt.LeftButton)
    send(QEvent.MouseButtonRelease, start + QPoint(60, 20), Qt.NoButton)
    ins = ed.graph.instructions[ids[0]]
    assert (ins.x, ins.y) == pytest.approx((60, 20), abs=1.5)
    depth = ed.document.undo_stack.count()
    assert ed.document.undo_stack.text(depth - 1) == "move instructions"
    ed.document.undo_stack.undo()
    assert (ed.graph.instructions[ids[0]].x, ed.graph.instructions[ids[0]].y) == (0, 0)
    assert item.pos() == QPointF(0, 0)


def test_drop_from_palette_places_by_height_and_auto_layout_is_undoable(editor, qtbot):
    ed = editor
    ids = small_graph(ed)
    ed.scene.instruction_dropped.emit("LDG", QPointF(200, 100))  # between the 2nd and 3rd rows
    order = list(ed.graph.instructions)
    new = next(i for i in order if i not in ids)
    assert order.index(new) == 2 and ed.graph.instructions[new].unit == "ldst"
    ed.layout_action.trigger()
    ys = [ed.graph.instructions[i].y for i in ed.graph.instructions]
    assert ys == sorted(ys) and len(set(ys)) == 4
    assert ed.document.undo_stack.text(ed.document.undo_stack.count() - 1) == "auto-layout"
    ed.document.undo_stack.undo()
    assert ed.graph.instructions[new].x == pytest.approx(140)


def test_properties_panel_edits_an_instruction(editor):
    ed = editor
    ids = small_graph(ed)
    ed.scene.select_ids([ids[0]])
    form = ed.properties.forms["instruction"]
    assert ed.properties.kind == "instruction" and not ed.properties.memory_box.isEnabled()
    w = form.widgets["opcode"]
    w.setText("LDG")
    w.editingFinished.emit()
    ins = ed.graph.instructions[ids[0]]
    assert ins.opcode == "LDG" and ins.unit == "ldst" and ins.space == "global" and ins.is_load
    # the dependency from a load now takes the DRAM latency
    assert ed.latency_bound_formula() == "353"
    assert ed.properties.memory_box.isEnabled()
    m = ed.properties.forms["memory"]
    hit = m.widgets["hit_ratio"]
    hit.setText("1.5")
    hit.editingFinished.emit()
    assert ed.graph.instructions[ids[0]].hit_ratio == 0.0 and m.error_of("hit_ratio")
    hit.setText("0.5")
    hit.editingFinished.emit()
    assert ed.graph.instructions[ids[0]].hit_ratio == 0.5


def test_properties_panel_shows_the_cost_of_a_warps_request(editor):
    ed = editor
    ids = small_graph(ed)
    ed.scene.select_ids([ids[0]])
    assert ed.properties.access_summary.text() == ""

    def summary_after(form, field, text):
        w = ed.properties.forms[form].widgets[field]
        w.setText(text)
        w.editingFinished.emit()
        ed.scene.select_ids([ids[1]])
        ed.scene.select_ids([ids[0]])
        return ed.properties.access_summary.text()

    assert "4 × 32 B per request, 128 B per warp" in summary_after("instruction", "opcode", "LDG")
    assert "32 × 32 B per request, 1024 B per warp" in summary_after("memory", "stride", "32")
    # lanes sharing words (two rows of a 16×16 block, one word each): 2 sectors
    assert "2 × 32 B per request, 64 B per warp" in summary_after("memory", "stride", "0.5")


def test_import_refuses_a_bad_file_and_reads_saxpy2(editor, tmp_path, qtbot):
    ed = editor
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert ed.import_kernel(str(bad)) is None
    assert "not JSON" in ed.message_strip.text() and not ed.document.project.kernels
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"format": "something-else", "version": 1}))
    assert ed.import_kernel(str(wrong)) is None
    assert "not a gpumodeler kernel file" in ed.message_strip.text()
    kid = ed.import_kernel(str(SAXPY2))
    assert kid and ed.latency_bound_formula() == "942 + 24·a"
    assert "<b>4014</b>" in bound_text(ed)
    out = tmp_path / "out.json"
    assert ed.export_kernel(str(out))
    assert from_dict(json.loads(out.read_text())) == ed.graph
    ed.document.undo_stack.undo()
    qtbot.waitUntil(lambda: ed.graph is None)
    assert ed.kernel_combo.count() == 0


def test_import_parses_with_the_collector_paused_and_restores_it(editor, monkeypatch):
    """For speed: a big file parses into ~10^6 objects that all stay alive until read; with
    the cyclic collector running its full passes also walked every graph already open, so
    each further import was slower. The parse runs paused; the collector is on again after,
    also when the file is refused."""
    import gc
    from gpumodeler.ui.kernel_editor import editing
    seen = []

    class RecordingJson:
        JSONDecodeError = json.JSONDecodeError

        @staticmethod
        def loads(text):
            seen.append(gc.isenabled())
            return json.loads(text)

    monkeypatch.setattr(editing, "json", RecordingJson)
    # the editor shows every item: they are made with the collector paused too, at once
    # (a file's graph keeps them as columns until asked for)
    made = []
    make_items = KernelGraph.make_items

    def recording_make_items(graph):
        made.append((type(graph.instructions).__name__, gc.isenabled()))
        return make_items(graph)
    monkeypatch.setattr(KernelGraph, "make_items", recording_make_items)
    assert gc.isenabled()
    assert editor.import_kernel(str(SAXPY2))
    assert seen == [False] and gc.isenabled()
    assert made[0] == ("ItemTable", False)
    assert type(editor.graph.instructions) is dict and type(editor.graph.edges) is dict
    monkeypatch.setattr(RecordingJson, "loads", staticmethod(lambda text: json.loads("{bad")))
    assert editor.import_kernel(str(SAXPY2)) is None and "not JSON" in editor.message_strip.text()
    assert gc.isenabled()


def test_switching_latency_table_updates_labels_and_bound(editor):
    ed = editor
    small_graph(ed)
    ed.table_combo.setCurrentIndex(ed.table_combo.findData("kepler-gajger"))
    ed.table_combo.activated.emit(ed.table_combo.currentIndex())
    assert ed.graph.latency_table == "kepler-gajger"
    assert ed.latency_bound_formula() == "12"  # 9 + 3 on Kepler
    assert ed.palette._items["FFMA"].text(1) == "9 cy"


def test_project_replaced_rebuilds(editor):
    ed = editor
    small_graph(ed)
    doc = ed.document
    from gpumodeler.core.project import Project
    new = Project("other")
    doc.project = new
    new.listeners.append(doc._relay)
    doc.changed.emit("project_replaced", None)
    assert ed.graph is None and not ed.scene.node_items and "No kernel" in bound_text(ed)


def _user_table(catalog, key="pascal-mine", ffma=7):
    """A table only the (user) device database has: FFMA 7 cycles, ILP 1."""
    catalog.add_device("latency_table", key, values={
        "architecture": "Pascal", "lat_fp32_mad": ffma, "ilp_cycles": 1,
        "cuda_core_default_cycles": ffma})


def test_a_table_of_the_device_database_is_offered_and_used(catalog, qtbot):
    _user_table(catalog)
    ed = KernelEditor(Document(catalog=catalog))
    qtbot.addWidget(ed)
    index = ed.table_combo.findData("pascal-mine")
    assert index > ed.table_combo.findData("maxwell-gajger") > 0   # after the built-in ones
    assert "pascal-mine" in ed.properties.forms["kernel"].choices["latency_table"]
    small_graph(ed)
    ed.table_combo.setCurrentIndex(index)
    ed.table_combo.activated.emit(index)
    assert ed.graph.latency_table == "pascal-mine"
    assert ed.latency_bound_formula() == "8"           # FFMA 7 + ILP 1, from the user's table
    assert ed.palette._items["FFMA"].text(1) == "7 cy"
    assert not ed.message_strip.isVisible()


def test_a_graph_naming_a_table_nobody_has_says_so_and_keeps_the_key(catalog, qtbot):
    ed = KernelEditor(Document(catalog=catalog))
    qtbot.addWidget(ed)
    graph = from_dict(json.loads(SAXPY2.read_text()))
    graph.latency_table = "volta-somebody"
    from gpumodeler.core.commands import AddKernel
    assert ed.document.push(AddKernel("k1", graph))
    ed.set_kernel("k1")
    assert "unknown latency table 'volta-somebody'" in ed.message_strip.text()
    assert "maxwell-gajger" in ed.message_strip.text()
    assert ed.table_combo.currentData() == "volta-somebody"   # listed, not silently dropped
    assert "not in the device database" in ed.table_combo.currentText()


def test_a_table_the_database_cannot_give_is_explained(catalog, qtbot, gpumodeler_env):
    """A user table another tool broke (text where cycles belong) is left out of the list,
    and a graph naming it says why, instead of only 'unknown'."""
    import sqlite3
    _user_table(catalog, "pascal-broken")
    conn = sqlite3.connect(gpumodeler_env)
    conn.execute("UPDATE device_values SET value = 'fast' WHERE field = 'lat_fp32_mad'")
    conn.commit()
    conn.close()
    ed = KernelEditor(Document(catalog=catalog))
    qtbot.addWidget(ed)
    assert ed.table_combo.findData("pascal-broken") < 0
    assert "pascal-broken" in ed.document.tables_problem
    graph = from_dict(json.loads(SAXPY2.read_text()))
    graph.latency_table = "pascal-broken"
    from gpumodeler.core.commands import AddKernel
    assert ed.document.push(AddKernel("k1", graph))
    ed.set_kernel("k1")
    text = ed.message_strip.text()
    assert "unknown latency table 'pascal-broken'" in text
    assert "could not all be read" in text and "'fast' is not a number of cycles" in text


@pytest.mark.usefixtures("private_settings")
def test_toolbar_fits_1280_with_layout_fit_and_delete_on_it(example_window):
    """At 1280×720, beside the Kernel Properties dock, Auto-layout, Fit and Delete are
    buttons of the bar itself (not in its overflow), and the kernel's New/Import/Export are
    in the Kernel menu button."""
    from gpumodeler.ui.screenshot import settle
    win = example_window
    win.resize(1280, 720)
    win.show()
    editor = win.kernel_editor
    win.tabs.setCurrentIndex(win.tabs.indexOf(editor))
    settle(150)
    bar = editor.toolbar
    assert bar.isVisible()
    for action in (editor.layout_action, editor.fit_action, editor.delete_action):
        button = bar.widgetForAction(action)
        assert button is not None and button.isVisible(), action.text()
        assert bar.rect().contains(button.geometry()), action.text()
    extension = [w for w in bar.children() if type(w).__name__ == "QToolBarExtension"]
    assert all(not w.isVisible() for w in extension)
    menu = editor.kernel_button.menu()
    assert [a.text() for a in menu.actions()] == ["New Kernel", "Import Kernel Graph…", "Export Kernel Graph…"]


def test_import_of_a_version_1_file_shows_what_reading_it_changed(editor, tmp_path):
    """The notes of reading an older format version (core.kernel.format_upgrade) are shown
    with the import's message."""
    data = {"format": "gpumodeler-kernel", "version": 1, "latency_table": "maxwell-volkov",
            "instructions": [{"id": "a", "opcode": "LDS.128", "width_bytes": 16, "x": 1.0,
                              "y": 2.0}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    assert editor.import_kernel(str(path))
    text = editor.message_strip.text()
    assert text.startswith("Imported kernel from old.json\n")
    assert "a (LDS.128): bank conflict degree 1 kept" in text
