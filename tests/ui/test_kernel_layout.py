"""Conventions: a kernel graph is laid out to use the view's width — program order in columns
that wrap to a landscape shape, basic blocks kept together, loops as regions that enclose
their own instructions only, edge labels legible at 100 %. Checked on the bundled kernel
fixtures and imported SASS listings: deterministic, no two instructions overlap."""
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication

from gpumodeler.core.commands import AddKernel
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.project import Project
from gpumodeler.ui.document import Document
from gpumodeler.ui.kernel_editor.editor import KernelEditor
from gpumodeler.ui.kernel_editor.items import LABEL_PT, NODE_H, NODE_W
from gpumodeler.core.kernel.layout import (DEFAULT_ASPECT, layout_extent, loop_heights,
                                                loop_margin, wrapped_layout)

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
JSON_KERNELS = sorted((ROOT / "resources" / "kernels").glob("*.json"))
LISTINGS = [("matmul_tiled.sm_86.sass", None), ("wmma_gemm.sm_90.sass", None),
            ("reduce.sm_80.sass", None), ("nested_loops.sm_75.sass", None),
            ("sfu_heavy.sm_120.sass", None), ("saxpy2.sm_90.sass", None),
            ("vector_ops.sm_86.sass", "vecadd4")]


def _graphs():
    graphs = [(p.name, lambda p=p: from_dict(json.loads(p.read_text()))) for p in JSON_KERNELS]
    graphs += [(name, lambda name=name, f=f: import_kernel(SASS / name, f)) for name, f in LISTINGS]
    return graphs


GRAPHS = _graphs()


def _rect(x, y):
    return QRectF(x, y, NODE_W, NODE_H)


def _regions(graph, positions):
    """Each loop's rectangle as the scene draws it (the members' union plus its margins)."""
    heights = loop_heights(graph)
    regions = {}
    for lid, lp in graph.loops.items():
        rect = QRectF()
        for nid in lp.members:
            r = _rect(*positions[nid]).adjusted(2, 2, -2, -2)
            rect = r if rect.isNull() else rect.united(r)
        m = loop_margin(heights[lid])
        regions[lid] = rect.adjusted(-m, -m - 16, m + 36, m)
    return regions


@pytest.mark.parametrize("name, make", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_wrapped_layout_on_the_fixtures(name, make):
    graph = make()
    positions = wrapped_layout(graph)
    assert set(positions) == set(graph.instructions)
    assert positions == wrapped_layout(make())  # deterministic
    # no two instructions overlap
    rects = [(_rect(x, y), nid) for nid, (x, y) in positions.items()]
    for i, (a, na) in enumerate(rects):
        for b, nb in rects[i + 1:]:
            assert not a.intersects(b), f"{na} and {nb} overlap"
    # landscape, at most the view's shape, for graphs big enough to wrap
    width, height = layout_extent(positions)
    if len(graph.instructions) >= 20:
        assert 1.0 <= width / height <= DEFAULT_ASPECT * 1.02, (width, height)
    # program order reads down each column, then on to the next column to the right
    order = list(graph.instructions)
    column_of = sorted({round(x - 36 * len(graph.loops_containing(n))) for n, (x, _) in positions.items()})
    key = {n: (column_of.index(round(x - 36 * len(graph.loops_containing(n)))), y)
           for n, (x, y) in positions.items()}
    assert sorted(order, key=lambda n: key[n]) == order
    # every loop is a region around its own instructions only
    for lid, region in _regions(graph, positions).items():
        members = graph.loops[lid].members
        for nid, (x, y) in positions.items():
            if nid not in members:
                assert not region.intersects(_rect(x, y)), f"loop {lid} covers {nid}"


def test_the_layout_follows_the_views_shape():
    graph = import_kernel(SASS / "wmma_gemm.sm_90.sass")
    wide = layout_extent(wrapped_layout(graph, 2.5))
    tall = layout_extent(wrapped_layout(graph, 1.0))
    assert wide[0] / wide[1] > 1.8 and 0.85 <= tall[0] / tall[1] <= 1.02


@pytest.fixture
def editor(qtbot):
    doc = Document(Project("t"))
    ed = KernelEditor(doc)
    qtbot.addWidget(ed)
    ed.resize(1280, 640)
    ed.show()
    qtbot.waitExposed(ed)
    yield ed
    QApplication.processEvents()


def test_auto_layout_of_an_imported_kernel_in_the_editor(editor, qtbot):
    graph = import_kernel(SASS / "matmul_tiled.sm_86.sass")
    doc = editor.document
    assert doc.push(AddKernel("k1", graph))
    editor.set_kernel("k1")
    tall = layout_extent({n: (i.x, i.y) for n, i in editor.graph.instructions.items()})
    assert tall[0] / tall[1] < 0.5  # the importer's one column
    count = doc.undo_stack.count()
    editor.layout_action.trigger()
    assert doc.undo_stack.count() == count + 1 and doc.undo_stack.undoText() == "auto-layout"
    wide = editor.scene.itemsBoundingRect()
    viewport = editor.view.viewport()
    assert 1.0 <= wide.width() / wide.height() <= viewport.width() / viewport.height() * 1.15
    # the scene's loop regions hold their own instructions only
    for lid, item in editor.scene.loop_items.items():
        members = editor.graph.loops[lid].members
        region = item.sceneBoundingRect()
        for nid, node in editor.scene.node_items.items():
            if nid not in members:
                assert not region.intersects(node.sceneBoundingRect()), (lid, nid)
    # edge labels legible at 100 %: at least 10 pt, on a light backing
    labels = [e.label for e in editor.scene.edge_items.values()]
    assert labels and all(label.font().pointSizeF() >= LABEL_PT for label in labels)
    doc.undo_stack.undo()
    assert layout_extent({n: (i.x, i.y) for n, i in editor.graph.instructions.items()}) == tall


@pytest.mark.usefixtures("private_settings")
def test_an_imported_kernel_comes_in_wrapped(qtbot, catalog, monkeypatch):
    from gpumodeler.ui.main_window import MainWindow
    win = MainWindow(catalog, remember=False)
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    win.tabs.setCurrentIndex(1)
    dialog = win.import_kernel_dialog()
    dialog.load(str(SASS / "matmul_tiled.sm_86.sass"), None)
    qtbot.waitUntil(lambda: not dialog.is_busy(), timeout=60_000)
    kid = dialog.import_selected()
    graph = win.document.project.kernels[kid]
    width, height = layout_extent({n: (i.x, i.y) for n, i in graph.instructions.items()})
    assert 1.0 <= width / height <= 3.0
    assert win.document.undo_stack.count() == 1  # still one undoable step
    QApplication.clipboard().clear()
