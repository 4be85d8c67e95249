"""Desktop conventions, the kernel editor: the example opens on its loop (the part that sets the
kernel's time), a loop's title is its name or iteration count (not the internal id), edge
labels are readable."""
from gpumodeler.ui.document import Document
from gpumodeler.ui.kernel_editor.editor import KernelEditor


def test_example_opens_on_the_loop_with_a_readable_title(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    ed = KernelEditor(doc)
    qtbot.addWidget(ed)
    ed.resize(1280, 640)
    ed.show()
    qtbot.waitExposed(ed)
    (loop_id, loop_item), = ed.scene.loop_items.items()
    view = ed.view

    def loop_in_view():
        visible = view.mapToScene(view.viewport().rect()).boundingRect()
        return visible.intersects(loop_item.sceneBoundingRect()) and \
            visible.center().y() > view.scene().itemsBoundingRect().top() + visible.height() / 2

    qtbot.waitUntil(loop_in_view, timeout=5000)
    ed.scene.clearSelection()
    loop_item.setSelected(True)
    title = ed.properties.title.text()
    assert loop_id not in title and title.startswith("Loop") and ("×" in title or len(title) > 5)
    edge_label = next(item for item in ed.scene.items() if type(item).__name__ == "EdgeLabel")
    assert edge_label.font().pointSizeF() >= 9
