"""System editor: palette drops, links the model may refuse, one-step drags, delete, copy/paste.

Assertions are on the project and the undo stack, never on pixels. Drops are synthesized
drag events on the view's viewport carrying the palette's own mime data.
"""
import pytest
from PySide6.QtCore import QEvent, QMimeData, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent
from PySide6.QtWidgets import QApplication

from gpumodeler.core.commands import AddItem, UpdateItem
from gpumodeler.core.project import PlacedDevice, Project
from gpumodeler.ui.document import Document
from gpumodeler.ui.system_editor import SystemEditor
from gpumodeler.ui.system_editor.interactions import ConnectDevices
from gpumodeler.ui.system_editor.palette import KIND_ROLE, NAME_ROLE, read_catalog_mime

GPU, HOST = "GeForce GTX 970", "Gajger GTX 970 testbed host"
HOST2 = "Gajger GTX TITAN X testbed host"
PCIE = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"


@pytest.fixture
def editor(qtbot, catalog):
    document = Document(Project("test"), catalog)
    widget = SystemEditor(document)
    qtbot.addWidget(widget)
    widget.resize(1100, 700)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    # Mime data left on the clipboard crashes Python's exit after the QApplication is gone.
    QApplication.clipboard().clear()


def _drag_event(cls, pos: QPointF, mime: QMimeData):
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier)
    try:  # PySide6 6.12 takes QPointF (its QPoint form is deprecated); 6.11 only QPoint
        return cls(pos, *args)
    except TypeError:
        return cls(pos.toPoint(), *args)


def _drop(view, mime: QMimeData, scene_pos: QPointF) -> bool:
    """Enter, move and drop ``mime`` at ``scene_pos``; True if the drop was accepted."""
    pos = QPointF(view.mapFromScene(scene_pos))
    target = view.viewport()
    QApplication.sendEvent(target, _drag_event(QDragEnterEvent, pos, mime))
    move = _drag_event(QDragMoveEvent, pos, mime)
    QApplication.sendEvent(target, move)
    if not move.isAccepted():
        return False
    drop = _drag_event(QDropEvent, pos, mime)
    QApplication.sendEvent(target, drop)
    return drop.isAccepted()


def _palette_mime(editor, kind: str, name: str) -> QMimeData:
    """The mime data the palette's drag carries for entry (kind, name)."""
    editor.palette.filter_edit.setText(name)
    proxy = editor.palette.proxy

    def find(parent):
        for row in range(proxy.rowCount(parent)):
            index = proxy.index(row, 0, parent)
            if index.data(KIND_ROLE) == kind and index.data(NAME_ROLE) == name:
                return index
            found = find(index)
            if found is not None:
                return found
        return None
    index = find(proxy.index(-1, -1))
    assert index is not None, f"{name} not in the palette"
    mime = proxy.mimeData([index])
    editor.palette.filter_edit.clear()
    return mime


def _mouse(view, kind, scene_pos: QPointF, buttons=Qt.MouseButton.LeftButton):
    pos = QPointF(view.mapFromScene(scene_pos))
    button = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseMove else Qt.MouseButton.LeftButton
    event = QMouseEvent(kind, pos, QPointF(view.viewport().mapToGlobal(pos.toPoint())), button,
                        buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.viewport(), event)


def _centre(editor, device_id: str) -> QPointF:
    return editor.scene.device_items[device_id].sceneBoundingRect().center()


def _place(editor, kind, name, x, y) -> str:
    device_id = editor.add_device(kind, name, QPointF(x, y))
    assert device_id is not None
    return device_id


def test_palette_groups_catalog_by_kind_and_filters(editor):
    kinds = {k for k, _ in editor.palette.entries()}
    assert kinds == {"gpu", "host", "link"}
    editor.palette.filter_edit.setText("gtx 970")
    names = editor.palette.entries()
    assert (("gpu", GPU) in names) and (("host", HOST) in names)
    assert all("970" in n for _, n in names)


def test_drag_gpu_from_palette_onto_canvas_adds_it_where_dropped(editor):
    mime = _palette_mime(editor, "gpu", GPU)
    assert read_catalog_mime(mime) == ("gpu", GPU)
    assert _drop(editor.view, mime, QPointF(100, 50))
    (device,) = editor.document.project.devices.values()
    assert (device.kind, device.device_name) == ("gpu", GPU)
    assert editor.scene.device_items[device.id].sceneBoundingRect().contains(QPointF(100, 50))
    assert editor.document.undo_stack.count() == 1
    item = editor.scene.device_items[device.id]
    assert item.subtitle() == "13 SMs · 1253 MHz · cc 5.2"
    editor.document.undo_stack.undo()
    assert not editor.document.project.devices and not editor.scene.device_items


def test_a_link_is_refused_where_there_is_no_device(editor):
    assert not _drop(editor.view, _palette_mime(editor, "link", PCIE), QPointF(500, 500))
    assert not editor.document.project.connections


def test_drop_link_on_host_then_click_gpu_connects_them(editor):
    host = _place(editor, "host", HOST, 0, 0)
    gpu = _place(editor, "gpu", GPU, 400, 0)
    assert _drop(editor.view, _palette_mime(editor, "link", PCIE), _centre(editor, host))
    assert isinstance(editor.scene.interaction, ConnectDevices)
    _mouse(editor.view, QEvent.Type.MouseMove, _centre(editor, gpu), Qt.MouseButton.NoButton)
    assert editor.scene.device_items[gpu]._highlight == "ok"
    _mouse(editor.view, QEvent.Type.MouseButtonPress, _centre(editor, gpu))
    _mouse(editor.view, QEvent.Type.MouseButtonRelease, _centre(editor, gpu),
           Qt.MouseButton.NoButton)
    (link,) = editor.document.project.connections.values()
    assert (link.link_name, {link.a, link.b}, link.link_type) == (PCIE, {host, gpu}, "pcie")
    assert editor.scene.interaction is None
    item = editor.scene.connection_items[link.id]
    assert (item.title(), item.detail()) == ("PCIe 3.0 x16", "15.8 GB/s")
    assert PCIE in item.toolTip() and "per direction" in item.toolTip()
    editor.document.undo_stack.undo()
    assert not editor.document.project.connections and not editor.scene.connection_items


def test_impossible_link_is_refused_with_its_reason_on_canvas(editor, qtbot):
    a = _place(editor, "host", HOST, 0, 0)
    b = _place(editor, "host", HOST2, 400, 0)
    depth = editor.document.undo_stack.count()
    with qtbot.waitSignal(editor.document.refused) as refused:
        assert not editor.connect_devices(a, b, PCIE)
    assert "two hosts need a network link" in refused.args[0]
    assert "two hosts need a network link" in editor.scene.message()
    assert not editor.document.project.connections
    assert editor.document.undo_stack.count() == depth
    # the same pair through a drop and a click
    assert _drop(editor.view, _palette_mime(editor, "link", PCIE), _centre(editor, a))
    _mouse(editor.view, QEvent.Type.MouseMove, _centre(editor, b), Qt.MouseButton.NoButton)
    assert editor.scene.device_items[b]._highlight == "refused"
    _mouse(editor.view, QEvent.Type.MouseButtonPress, _centre(editor, b))
    assert not editor.document.project.connections
    # the context menu offers only links that can join two hosts
    editor.scene.select([a, b])
    menu = editor.build_context_menu()
    connect = next(act.menu() for act in menu.actions() if act.text() == "Connect with…")
    actions = {a.text(): a for sub in connect.actions() if sub.menu()
               for a in sub.menu().actions()}
    assert not actions[PCIE].isEnabled() and "network link" in actions[PCIE].toolTip()
    assert actions["100 Gigabit Ethernet"].isEnabled()
    actions["100 Gigabit Ethernet"].trigger()
    (link,) = editor.document.project.connections.values()
    assert link.link_type == "network"


def test_dragging_devices_is_one_undo_step(editor):
    host = _place(editor, "host", HOST, 0, 0)
    gpu = _place(editor, "gpu", GPU, 400, 0)
    editor.connect_devices(host, gpu, PCIE)
    project, stack = editor.document.project, editor.document.undo_stack
    before = (project.devices[gpu].x, project.devices[gpu].y)
    depth = stack.count()
    start = _centre(editor, gpu)
    _mouse(editor.view, QEvent.Type.MouseButtonPress, start)
    for step in range(1, 11):
        _mouse(editor.view, QEvent.Type.MouseMove, start + QPointF(10 * step, 5 * step))
    _mouse(editor.view, QEvent.Type.MouseButtonRelease, start + QPointF(100, 50),
           Qt.MouseButton.NoButton)
    after = (project.devices[gpu].x, project.devices[gpu].y)
    assert after[0] - before[0] == pytest.approx(100, abs=2)
    assert after[1] - before[1] == pytest.approx(50, abs=2)
    assert stack.count() == depth + 1 and stack.undoText() == "move"
    assert editor.scene.device_items[gpu].pos() == QPointF(*after)
    stack.undo()
    assert (project.devices[gpu].x, project.devices[gpu].y) == before
    assert editor.scene.device_items[gpu].pos() == QPointF(*before)
    # a second drag is a second step
    _mouse(editor.view, QEvent.Type.MouseButtonPress, start)
    _mouse(editor.view, QEvent.Type.MouseMove, start + QPointF(0, 80))
    _mouse(editor.view, QEvent.Type.MouseButtonRelease, start + QPointF(0, 80),
           Qt.MouseButton.NoButton)
    assert stack.count() == depth + 1 and stack.canUndo()


def test_delete_undo_redo_takes_links_along(editor):
    host = _place(editor, "host", HOST, 0, 0)
    gpu = _place(editor, "gpu", GPU, 400, 0)
    editor.connect_devices(host, gpu, PCIE)
    project, stack = editor.document.project, editor.document.undo_stack
    editor.scene.select([gpu])
    assert editor.delete_selection()
    assert set(project.devices) == {host} and not project.connections
    assert set(editor.scene.device_items) == {host} and not editor.scene.connection_items
    stack.undo()
    assert set(project.devices) == {host, gpu} and len(project.connections) == 1
    assert set(editor.scene.connection_items) == set(project.connections)
    stack.redo()
    assert set(project.devices) == {host} and not project.connections
    # deleting just a link keeps the devices
    stack.undo()
    editor.scene.select(connection_ids=list(project.connections))
    assert editor.delete_selection()
    assert set(project.devices) == {host, gpu} and not project.connections


def test_copy_paste_adds_new_ids_offset_in_one_step(editor):
    host = _place(editor, "host", HOST, 0, 0)
    gpu = _place(editor, "gpu", GPU, 400, 0)
    editor.connect_devices(host, gpu, PCIE)
    project, stack = editor.document.project, editor.document.undo_stack
    editor.scene.select([host, gpu])
    assert editor.copy_selection()
    depth = stack.count()
    assert editor.paste()
    assert stack.count() == depth + 1
    assert len(project.devices) == 4 and len(project.connections) == 2
    new = {d.id: d for d in project.devices.values() if d.id not in (host, gpu)}
    new_gpu = next(d for d in new.values() if d.kind == "gpu")
    new_host = next(d for d in new.values() if d.kind == "host")
    offset = (new_gpu.x - project.devices[gpu].x, new_gpu.y - project.devices[gpu].y)
    # beside the originals (to the right), their layout kept, covering none of them
    assert offset == (new_host.x - project.devices[host].x, new_host.y - project.devices[host].y)
    assert offset[0] > 0 and offset[1] == 0
    rects = {i: editor.scene.device_items[i].sceneBoundingRect() for i in project.devices}
    for n in new:
        assert not any(rects[n].intersects(rects[o]) for o in (host, gpu))
    new_link = next(c for c in project.connections.values() if new_gpu.id in (c.a, c.b))
    assert {new_link.a, new_link.b} == set(new)
    assert set(editor.scene.selected_device_ids()) == set(new)
    stack.undo()
    assert set(project.devices) == {host, gpu} and len(project.connections) == 1
    assert editor.cut_selection() is False  # nothing selected after undo
    editor.scene.select([gpu])
    assert editor.cut_selection() and set(project.devices) == {host}
    assert editor.paste() and len(project.devices) == 2


def test_scene_mirrors_model_events_and_count_badge(editor):
    doc = editor.document
    doc.push(AddItem("devices", PlacedDevice("gpu9", "gpu", GPU, x=10, y=20)))
    item = editor.scene.device_items["gpu9"]
    assert item.pos() == QPointF(10, 20) and item.count_text() == ""
    doc.push(UpdateItem("devices", "gpu9", count=4))
    assert item.count_text() == "×4"
    doc.push(UpdateItem("devices", "gpu9", label="node A"))
    assert item.title() == "node A"
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert item.count_text() == "" and item.title() == GPU
    doc.undo_stack.undo()
    assert "gpu9" not in editor.scene.device_items


def test_double_click_in_palette_adds_at_the_centre_and_selection_reaches_document(editor):
    editor.palette.sig_entry_activated.emit("gpu", GPU)
    (device,) = editor.document.project.devices.values()
    centre = editor.view.visible_centre()
    assert editor.scene.device_items[device.id].sceneBoundingRect().contains(centre)
    assert editor.document.selected == ("device", device.id)
    editor.scene.select([])
    assert editor.document.selected == ("", "")


def test_unknown_device_shows_a_problem_instead_of_failing(editor):
    editor.document.push(AddItem("devices", PlacedDevice("gpu5", "gpu", "No Such GPU 9000")))
    assert "not in the device database" in editor.scene.device_items["gpu5"]._problem
