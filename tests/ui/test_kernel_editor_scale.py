"""The kernel editor with big kernels (speed targets): each edit touches only what it changes.

A kernel imported from SASS has 10^4 instructions and more. Moving an instruction must not
analyse the graph again or restyle every edge; labels are set once each when a kernel is
shown, and again only when their value changes; the critical path and error marks change only
on the items that gain or lose them. The labels are light items edited in place."""
import json
import sys

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QApplication

from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.ui.document import Document
from gpumodeler.ui.kernel_editor import editor_analysis
from gpumodeler.ui.kernel_editor import scene as scene_module
from gpumodeler.ui.kernel_editor.editor import KernelEditor

from test_kernel_editor import SAXPY2, small_graph


@pytest.fixture(autouse=True)
def env(gpumodeler_env):
    """No test reads or writes the user's own databases or settings."""


@pytest.fixture
def editor(qtbot):
    ed = KernelEditor(Document())
    qtbot.addWidget(ed)
    ed.resize(1100, 700)
    return ed


@pytest.fixture
def analyses(monkeypatch):
    """How many times the editor analyses a graph."""
    calls = []
    real = editor_analysis.analyze

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(editor_analysis, "analyze", counting)
    return calls


@pytest.fixture
def labelled(monkeypatch):
    """The ids of the edges whose label and tooltip the scene sets."""
    ids = []
    real = scene_module.KernelScene._set_edge_content

    def counting(self, item, e):
        ids.append(e.id)
        return real(self, item, e)

    monkeypatch.setattr(scene_module.KernelScene, "_set_edge_content", counting)
    return ids


def key(item, code):
    item.keyPressEvent(QKeyEvent(QEvent.KeyPress, code, Qt.NoModifier))


def test_an_import_analyses_once_and_labels_each_edge_once(editor, analyses, labelled):
    kid = editor.import_kernel(str(SAXPY2))
    assert kid and editor.latency_bound_formula() == "942 + 24·a"
    assert len(analyses) == 1
    assert sorted(labelled) == sorted(editor.graph.edges)
    dep = next(e for e in editor.graph.edges.values() if e.kind == "memory")
    assert editor.scene.edge_items[dep.id].label.toPlainText() == "350"  # with its value


def test_moving_instructions_is_not_analysed_again(editor, analyses, labelled, qtbot):
    editor.import_kernel(str(SAXPY2))
    bound = editor.bound_label.text()
    del analyses[:], labelled[:]
    nid = list(editor.graph.instructions)[5]
    assert editor.move_instructions({nid: (400.0, 30.0)})
    editor.document.undo_stack.undo()
    editor.document.undo_stack.redo()
    qtbot.wait(10)  # the deferred analysis, had one been asked for
    assert analyses == [] and labelled == [] and editor.bound_label.text() == bound
    # its edges followed it
    item = editor.scene.node_items[nid]
    assert (item.pos().x(), item.pos().y()) == (400.0, 30.0)
    for eid in editor.scene._edges_index()[0][nid]:
        route = editor.scene.edge_items[eid].path
        ends = (route.elementAt(0), route.elementAt(route.elementCount() - 1))
        box = item.sceneBoundingRect().adjusted(-30, -30, 30, 30)
        assert any(box.contains(QPointF(p.x, p.y)) for p in ends), eid
    # a label is no analysis either; an edge is
    assert editor.graph.instructions[nid].label != "renamed"
    editor.scene.select_ids([nid])
    editor.properties.edit_requested.emit("instruction", nid, {"label": "renamed"})
    qtbot.wait(10)
    assert editor.graph.instructions[nid].label == "renamed" and analyses == []
    assert editor.properties.forms["instruction"].widgets["label"].text() == "renamed"
    editor.document.undo_stack.undo()  # the panel follows an undone label too
    assert editor.properties.forms["instruction"].widgets["label"].text() != "renamed"
    ids = list(editor.graph.instructions)
    editor.scene.edge_requested.emit(ids[0], ids[-1])
    qtbot.wait(10)
    # the new edge's label: made, then given its value by the analysis; no other label
    assert len(analyses) == 1 and labelled == [next(reversed(editor.graph.edges))] * 2


def test_a_drag_routes_the_edges_as_the_node_moves(editor, qtbot):
    ids = small_graph(editor)
    editor.show()
    qtbot.waitExposed(editor)
    editor.view.resetTransform()
    item = editor.scene.node_items[ids[1]]
    edge = next(e for e in editor.graph.edges.values() if e.dst == ids[1])
    before = editor.scene.edge_items[edge.id].path.elementAt(1)
    start = editor.view.mapFromScene(item.sceneBoundingRect().center())
    vp = editor.view.viewport()

    def send(kind, pos, buttons):
        QApplication.sendEvent(vp, QMouseEvent(kind, QPointF(pos), QPointF(vp.mapToGlobal(pos)),
                                               Qt.LeftButton, buttons, Qt.NoModifier))

    send(QEvent.MouseButtonPress, start, Qt.LeftButton)
    send(QEvent.MouseMove, start + QPoint(200, 40), Qt.LeftButton)
    during = editor.scene.edge_items[edge.id].path.elementAt(1)  # before the release
    assert (during.x, during.y) != (before.x, before.y)
    send(QEvent.MouseButtonRelease, start + QPoint(200, 40), Qt.NoButton)
    assert editor.document.undo_stack.undoText() == "move instructions"


def test_a_label_is_edited_in_place(editor):
    ids = small_graph(editor)
    dep = next(e for e in editor.graph.edges.values() if e.kind == "dependency")
    label = editor.scene.edge_items[dep.id].label
    assert label.toPlainText() == "6" and not label.editing()
    editor.scene.begin_latency_edit(dep.id)
    assert label.editing()
    field = label._editor
    field.setPlainText("20")
    assert label.toPlainText() == "20"  # what is typed
    key(field, Qt.Key_Return)
    assert not label.editing() and editor.graph.edges[dep.id].latency == 20
    assert label.toPlainText() == "20" and label.font().bold()  # explicit: bold
    editor.scene.begin_latency_edit(dep.id)
    assert field.toPlainText() == "20"  # starts from the explicit value
    field.setPlainText("99")
    key(field, Qt.Key_Escape)  # cancelled
    assert editor.graph.edges[dep.id].latency == 20 and label.toPlainText() == "20"
    editor.scene.begin_latency_edit(dep.id)
    field.setPlainText("")
    key(field, Qt.Key_Enter)  # empty: the table's value again
    assert editor.graph.edges[dep.id].latency is None and label.toPlainText() == "6"
    assert label.font().italic()  # the table's value (bold: on the critical path)
    assert label.font().bold() == editor.scene.edge_items[dep.id].critical
    assert ids


def test_marks_follow_items_made_again(editor, qtbot):
    """An edge removed and put back by undo is a new item with the same id: it gets the
    critical mark although the path did not change; an error's tooltip goes with it."""
    ids = small_graph(editor)
    dep = next(e for e in editor.graph.edges.values() if e.kind == "dependency")
    assert editor.scene.edge_items[dep.id].critical
    assert editor.delete_selection() is False  # nothing selected
    editor.scene.select_ids([dep.id])
    assert editor.delete_selection()
    editor.document.undo_stack.undo()
    item = editor.scene.edge_items[dep.id]
    qtbot.waitUntil(lambda: item.critical)  # the analysis follows an undo after the event
    assert editor.scene.node_items[ids[0]].critical
    # an error on an edge shows in its tooltip, and its own tooltip comes back after
    editor.scene.set_errors({dep.id: "edge trouble"})
    assert item.error == "edge trouble" and item.toolTip() == "edge trouble"
    editor.scene.set_errors({})
    assert not item.error and item.toolTip().startswith(f"{dep.id}: register dependency")


def test_a_file_without_positions_is_laid_out(editor, tmp_path):
    data = json.loads(SAXPY2.read_text())
    for ins in data["instructions"]:
        ins.pop("x", None)
        ins.pop("y", None)
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(data))
    assert editor.import_kernel(str(path))
    spots = {(i.x, i.y) for i in editor.graph.instructions.values()}
    assert len(spots) == len(editor.graph.instructions)  # each its own place
    assert editor.document.undo_stack.count() == 1  # one step: the import
    # a file with positions keeps them
    assert editor.import_kernel(str(SAXPY2))
    assert {(i.x, i.y) for i in editor.graph.instructions.values()} == {
        (i.x, i.y) for i in from_dict(json.loads(SAXPY2.read_text())).instructions.values()}


@pytest.fixture
def background(monkeypatch):
    """Every kernel counts as big: its edits are analysed in the background."""
    monkeypatch.setattr(editor_analysis.EditorAnalysis, "BACKGROUND_FROM", 1)


def test_a_big_kernel_is_analysed_in_the_background(editor, background, qtbot):
    ids = small_graph(editor)  # each edit analysed in a worker, shown when it is done
    qtbot.waitUntil(lambda: not editor.analysis_busy(), timeout=10_000)
    assert editor.latency_bound_formula() == "9"
    dep = next(e for e in editor.graph.edges.values() if e.kind == "dependency")
    editor.scene.latency_edited.emit(dep.id, "20")
    assert editor.analysis_busy() and "analysing" in editor.bound_label.text()
    qtbot.waitUntil(lambda: not editor.analysis_busy(), timeout=10_000)
    assert editor.latency_bound_formula() == "23" and "analysing" not in editor.bound_label.text()
    assert editor.scene.edge_items[dep.id].label.toPlainText() == "20"
    assert editor.scene.edge_items[dep.id].critical and editor.scene.node_items[ids[0]].critical
    # edits in quick succession: only the last one's analysis is shown
    editor.scene.latency_edited.emit(dep.id, "30")
    editor.scene.latency_edited.emit(dep.id, "40")
    shown = []
    real = editor._show_analysis
    editor._show_analysis = lambda g, a: (shown.append(a), real(g, a))
    qtbot.waitUntil(lambda: not editor._jobs, timeout=10_000)
    assert len(shown) == 1 and editor.latency_bound_formula() == "43"
    # an undo comes back the same way
    editor.document.undo_stack.undo()  # analysed after the event, in the background too
    qtbot.waitUntil(lambda: editor.latency_bound_formula() == "33", timeout=10_000)
    assert len(shown) == 2 and not editor.analysis_busy()


@pytest.fixture
def started(monkeypatch):
    """The analysis jobs handed to the thread pool, in order (they still run there)."""
    jobs = []
    real = editor_analysis.in_background

    def recording(job):
        jobs.append(job)
        real(job)

    monkeypatch.setattr(editor_analysis, "in_background", recording)
    return jobs


def test_a_background_analysis_starts_once_the_edit_is_painted(editor, background, started,
                                                                qtbot):
    """The worker would hold the GIL through the edit's own paint: it starts after it."""
    editor.START_AFTER_MS = 60_000  # no start by the timer in this test: only by the paint
    editor.show()
    qtbot.waitExposed(editor)
    small_graph(editor)
    qtbot.waitUntil(lambda: not editor._jobs, timeout=10_000)
    before = len(started)
    dep = next(e for e in editor.graph.edges.values() if e.kind == "dependency")
    editor.scene.latency_edited.emit(dep.id, "20")
    assert len(started) == before and editor.analysis_busy()  # made, waiting for the paint
    editor.view.viewport().repaint()  # the edit painted
    assert len(started) == before + 1 and started[-1].generation == editor._generation
    qtbot.waitUntil(lambda: not editor.analysis_busy(), timeout=10_000)
    assert editor.latency_bound_formula() == "23"
    editor.view.viewport().repaint()  # a paint with nothing waiting starts nothing
    assert len(started) == before + 1


def test_edits_before_the_analysis_starts_are_analysed_once(editor, background, started,
                                                            qtbot):
    """A hidden view paints nothing: the timer starts the analysis, of the last edit only."""
    small_graph(editor)
    qtbot.waitUntil(lambda: not editor._jobs, timeout=10_000)
    before = len(started)
    dep = next(e for e in editor.graph.edges.values() if e.kind == "dependency")
    editor.scene.latency_edited.emit(dep.id, "20")
    editor.scene.latency_edited.emit(dep.id, "30")
    assert len(started) == before and list(editor._jobs) == [editor._generation]
    qtbot.waitUntil(lambda: not editor._jobs, timeout=10_000)
    assert len(started) == before + 1 and editor.latency_bound_formula() == "33"
    assert editor.scene.edge_items[dep.id].label.toPlainText() == "30"
    # the same result as the analysis done at once on the GUI thread
    at_once = editor_analysis.analyse_kernel(editor.graph, editor._table(editor.graph))
    assert at_once.latencies == editor.scene._latency
    assert at_once.bound.formula() == editor.latency_bound_formula()


def test_a_background_job_puts_the_gui_thread_first_in_line_for_the_gil(editor, background,
                                                                        qtbot):
    """While a worker computes, the GUI thread gets the GIL back within 1 ms, not Python's
    default 5 ms (ui/workers.in_background); a lower interval is never raised."""
    from gpumodeler.ui import workers
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        small_graph(editor)  # analysed in a worker
        qtbot.waitUntil(lambda: not editor.analysis_busy(), timeout=10_000)
        assert sys.getswitchinterval() == pytest.approx(workers.GUI_SWITCH_INTERVAL_S)
        sys.setswitchinterval(0.0002)
        dep = next(e for e in editor.graph.edges.values() if e.kind == "dependency")
        editor.scene.latency_edited.emit(dep.id, "20")
        qtbot.waitUntil(lambda: not editor.analysis_busy(), timeout=10_000)
        assert sys.getswitchinterval() == pytest.approx(0.0002)
    finally:
        sys.setswitchinterval(before)


def test_a_failing_background_analysis_is_a_message(editor, background, monkeypatch, qtbot):
    small_graph(editor)
    qtbot.waitUntil(lambda: not editor.analysis_busy(), timeout=10_000)

    def broken(*args, **kwargs):
        raise RuntimeError("out of cheese")

    monkeypatch.setattr(editor_analysis, "analyze", broken)
    dep = next(e for e in editor.graph.edges.values() if e.kind == "dependency")
    editor.scene.latency_edited.emit(dep.id, "20")
    qtbot.waitUntil(lambda: not editor.analysis_busy(), timeout=10_000)
    assert "failed unexpectedly" in editor.message_strip.text() and "cheese" in editor.message_strip.text()
    assert editor.latency_bound_formula() == ""


@pytest.fixture
def in_turns(monkeypatch):
    """Every graph counts as big: its edges are drawn a few at a time."""
    from gpumodeler.ui.kernel_editor.scene import KernelScene
    monkeypatch.setattr(KernelScene, "EDGES_PER_TURN", 5)


def _drawn(editor):
    """What the scene shows of each edge: label, critical mark, route end."""
    out = {}
    for eid, item in editor.scene.edge_items.items():
        end = item.path.elementAt(item.path.elementCount() - 1)
        out[eid] = (item.label.toPlainText(), item.critical, round(end.x, 6), round(end.y, 6))
    return out


def test_a_big_graph_is_drawn_in_turns(editor, qtbot, monkeypatch):
    assert editor.import_kernel(str(SAXPY2))
    whole = _drawn(editor)  # drawn at once: 62 edges
    from gpumodeler.ui.kernel_editor.scene import KernelScene
    monkeypatch.setattr(KernelScene, "EDGES_PER_TURN", 5)
    progress = []
    editor.scene.drawing_progress.connect(lambda done, total: progress.append((done, total)))
    editor.show()
    assert editor.import_kernel(str(SAXPY2))
    assert editor.scene.drawing() and len(editor.scene.edge_items) == 5  # the first turn
    assert not editor.drawing_row.isHidden() and "5 of 62" in editor.drawing_label.text()
    qtbot.waitUntil(lambda: not editor.scene.drawing(), timeout=10_000)
    assert progress[0] == (5, 62) and progress[-1] == (62, 62) and editor.drawing_row.isHidden()
    drawn = _drawn(editor)
    assert sorted(drawn.values()) == sorted(whole.values())  # the same edges, marked alike


def test_edits_while_a_graph_is_drawn(editor, in_turns, qtbot):
    assert editor.import_kernel(str(SAXPY2))
    assert editor.scene.drawing()
    ids = list(editor.graph.instructions)
    editor.scene.edge_requested.emit(ids[0], ids[-1])  # added before its turn comes
    new = next(reversed(editor.graph.edges))
    assert new in editor.scene.edge_items
    late = list(editor.graph.edges)[-5]  # not drawn yet: removed before its turn
    editor.scene.select_ids([])
    from gpumodeler.core.commands import RemoveEdge
    assert editor.push(RemoveEdge(editor.kernel_id, late))
    qtbot.waitUntil(lambda: not editor.scene.drawing(), timeout=10_000)
    assert set(editor.scene.edge_items) == set(editor.graph.edges)
    marked = {eid for eid, item in editor.scene.edge_items.items() if item.critical}
    assert marked == set(editor.bound.critical_path(dict(editor.graph.variables)).edge_ids)


def test_drawing_is_cancelled_with_the_kernel(editor, in_turns, qtbot):
    kid = editor.import_kernel(str(SAXPY2))
    assert editor.scene.drawing()
    editor.drawing_cancel.click()
    assert not editor.scene.drawing() and editor.drawing_row.isHidden()
    assert kid not in editor.document.project.kernels and "Undo brings it back" in editor.message_strip.text()
    editor.document.undo_stack.undo()  # back, and drawn again
    qtbot.waitUntil(lambda: editor.graph is not None and not editor.scene.drawing(), timeout=10_000)
    assert set(editor.scene.edge_items) == set(editor.graph.edges)


def _edges_end_at_their_nodes(editor):
    """Every edge's route starts and ends at (the boxes of) its two instructions, and every
    loop's region holds its instructions."""
    scene = editor.scene
    for eid, item in scene.edge_items.items():
        e = editor.graph.edges[eid]
        route = item.path
        first, last = route.elementAt(0), route.elementAt(route.elementCount() - 1)
        for point, node in ((first, e.src), (last, e.dst)):
            box = scene.node_items[node].sceneBoundingRect().adjusted(-25, -25, 25, 25)
            assert box.contains(QPointF(point.x, point.y)), (eid, node)
    for lid, loop in scene.loop_items.items():
        region = loop.sceneBoundingRect()
        for nid in editor.graph.loops[lid].members:
            assert region.contains(scene.node_items[nid].sceneBoundingRect()), (lid, nid)


def test_edges_and_loops_follow_a_layout_of_every_instruction(editor, qtbot):
    """An auto-layout moves every instruction in one command: edges and loop regions follow
    once it is done (each loop fitted once, not once per member), and again after its undo."""
    assert editor.import_kernel(str(SAXPY2))
    editor.show()
    editor.view.resize(300, 900)  # a tall view: a layout unlike the file's
    before = {n: (i.x, i.y) for n, i in editor.graph.instructions.items()}
    assert editor.auto_layout()
    assert {n: (i.x, i.y) for n, i in editor.graph.instructions.items()} != before
    _edges_end_at_their_nodes(editor)  # no event loop turn needed: the command is done
    editor.document.undo_stack.undo()
    assert {n: (i.x, i.y) for n, i in editor.graph.instructions.items()} == before
    _edges_end_at_their_nodes(editor)


def test_deleting_instructions_of_nested_loops(editor, tmp_path, qtbot):
    """A selection inside two nested loops is deleted in one step (each instruction leaves the
    inner loop first), the loops fit what is left, and undo brings everything back."""
    names = [f"n{i}" for i in range(60)]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({  # a loop, and in it the same loop less its first instruction
        "format": "gpumodeler-kernel", "version": 1, "latency_table": "maxwell-volkov",
        "variables": {"a": 10, "b": 3},
        "instructions": [{"id": n, "opcode": "FADD"} for n in names],
        "edges": [{"from": a, "to": b, "kind": "ilp"} for a, b in zip(names, names[1:])]
                 + [{"from": names[-1], "to": names[0], "kind": "branch", "latency": 12},
                    {"from": names[-1], "to": names[1], "kind": "branch", "latency": 12}],
        "loops": [{"id": "L0", "iterations": "b", "members": names},
                  {"id": "L1", "iterations": "a", "members": names[1:]}]}))
    assert editor.import_kernel(str(path))
    before = {k: sorted(lp.members) for k, lp in editor.graph.loops.items()}
    gone = list(editor.graph.instructions)[10:20]
    editor.scene.select_ids(gone)
    assert editor.scene.selected_ids()[0] == gone  # in program order
    assert editor.delete_selection()
    assert not set(gone) & set(editor.graph.instructions)
    assert all(not set(gone) & lp.members for lp in editor.graph.loops.values())
    _edges_end_at_their_nodes(editor)
    editor.document.undo_stack.undo()
    assert {k: sorted(lp.members) for k, lp in editor.graph.loops.items()} == before
    assert set(gone) <= set(editor.graph.instructions)
    _edges_end_at_their_nodes(editor)
