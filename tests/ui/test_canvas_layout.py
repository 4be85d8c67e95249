"""The system canvas reads at a glance: the four-H100 ring's closing NVLink goes around
GPUs 2 and 3, link labels cover no card and no other label, a card's texts never overlap
(busy fraction and specs), pasted devices land beside the originals with their links apart,
and the view fits the system on open and on every resize until the user zooms."""
from pathlib import Path

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication

from gpumodeler.db.project_file import load_project
from gpumodeler.ui.document import Document
from gpumodeler.ui.system_editor import SystemEditor
from gpumodeler.ui.system_editor.items import DeviceItem

ROOT = Path(__file__).resolve().parents[2]
FOUR = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def editor(qtbot, catalog):
    widget = SystemEditor(Document(load_project(FOUR), catalog))
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    QApplication.clipboard().clear()


def _path_hits(item, rect: QRectF) -> bool:
    points = item.points()
    for a, b in zip(points, points[1:]):
        steps = 200
        for k in range(steps + 1):
            p = a + (b - a) * (k / steps)
            if rect.contains(p):
                return True
    return False


def card(editor, device_id) -> QRectF:
    item = editor.scene.device_items[device_id]
    return item.mapRectToScene(item.rect())


def test_the_closing_nvlink_goes_around_gpus_2_and_3(editor):
    ring = next(c for c in editor.project.connections.values() if {c.a, c.b} == {"gpu4", "gpu1"})
    item = editor.scene.connection_items[ring.id]
    for middle in ("gpu2", "gpu3"):
        assert not _path_hits(item, card(editor, middle))
        assert not item.label_rect().intersects(card(editor, middle))
    assert len(item.points()) > 2


def _labels_clear(editor):
    labels = [i.label_rect() for i in editor.scene.connection_items.values()]
    cards = [card(editor, d) for d in editor.scene.device_items]
    for label in labels:
        assert not any(label.intersects(c) for c in cards), label
    for i, a in enumerate(labels):
        assert not any(a.intersects(b) for b in labels[i + 1:])


def test_link_labels_cover_no_card_and_no_other_label(editor):
    _labels_clear(editor)


def test_after_a_move_the_labels_make_room_again(editor):
    # GPU 2 dragged right next to GPU 1: the NVLink 1 label has no room between them
    assert editor.move_devices({"gpu2": (editor.project.devices["gpu1"].x + DeviceItem.WIDTH + 30, 0)},
                               merge_key=None)
    _labels_clear(editor)


def test_card_texts_never_overlap(editor):
    item = editor.scene.device_items["gpu1"]
    for busy in (None, 0.25, 1.0):
        for count in (1, 4):
            for overview in (False, True):    # zoomed out: the title alone, enlarged
                item.set_busy(busy)
                item.set_count(count)
                rects = item.text_rects(overview)
                names = list(rects)
                assert ("subtitle" in names) != overview
                for i, a in enumerate(names):
                    assert item.rect().contains(rects[a]), a
                    for b in names[i + 1:]:
                        assert not rects[a].intersects(rects[b]), (a, b, busy, count, overview)
    assert "busy" in item.text_rects() and item.busy_text() == "busy 100%"
    assert item.text_rects(True)["title"].height() > 2 * item.text_rects()["title"].height() - 10


def test_paste_lands_beside_and_its_links_apart(editor):
    editor.scene.select(["gpu1", "gpu2"])
    assert editor.copy_selection()
    before = set(editor.project.devices)
    assert editor.paste() and editor.paste()
    new = set(editor.project.devices) - before
    assert len(new) == 4
    cards = {d: card(editor, d) for d in editor.project.devices}
    for n in new:
        assert not any(cards[n].intersects(cards[o]) for o in cards if o != n), n
    original = editor.scene.connection_items["nvlink1"].points()
    for c in editor.project.connections.values():
        if {c.a, c.b} <= new:
            assert editor.scene.connection_items[c.id].points() != original
    _labels_clear(editor)


def test_the_view_fits_on_open_and_on_resize_until_the_user_zooms(editor, qtbot):
    view = editor.view
    visible = lambda: view.mapToScene(view.viewport().rect()).boundingRect()  # noqa: E731
    everything = editor.scene.items_rect()
    assert visible().contains(everything)
    small = view.transform().m11()
    editor.resize(1600, 900)
    qtbot.wait(20)
    assert view.transform().m11() > small and visible().contains(everything)
    view.scale(1.5, 1.5)
    view.auto_fit = False          # what a Ctrl+wheel zoom does
    zoomed = view.transform().m11()
    editor.resize(1200, 700)
    qtbot.wait(20)
    assert view.transform().m11() == zoomed
    editor.fit()
    assert view.auto_fit and visible().contains(everything)


def test_zoomed_out_the_link_names_grow_and_still_overlap_nothing(editor, qtbot):
    from gpumodeler.ui.system_editor.items import OVERVIEW_LOD
    editor.resize(1600, 900)
    qtbot.wait(20)
    assert editor.view.transform().m11() >= OVERVIEW_LOD and editor.scene.overview_zoom == 1.0
    normal = editor.scene.connection_items["nvlink1"].label_size()
    editor.resize(700, 500)
    qtbot.wait(20)
    scale = editor.view.transform().m11()
    assert scale < OVERVIEW_LOD and editor.scene.overview_zoom > 1.0
    grown = editor.scene.connection_items["nvlink1"].label_size()
    assert grown[1] > normal[1] - 1 and grown[0] * scale > 0.9 * normal[0] * OVERVIEW_LOD
    _labels_clear(editor)
    visible = editor.view.mapToScene(editor.view.viewport().rect()).boundingRect()
    assert visible.contains(editor.scene.items_rect())      # fitted with the grown labels
    editor.resize(1600, 900)
    qtbot.wait(20)
    assert editor.scene.overview_zoom == 1.0
