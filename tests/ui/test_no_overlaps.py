"""Every tab of every bundled example, rendered offscreen at 1280×720 and 1920×1080: no two
labels of the system canvas (link labels and device cards) overlap, no two names of the
Gantt chart overlap and each lies in the chart's plot area, and the Launch tab's header with
the total is inside the visible area. Each tab's picture is kept, small, in
docs/manual/img/screens/ (the manual's screens.md page shows them)."""
import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QLabel, QWidget

from gpumodeler.ui.main_window import example_projects
from gpumodeler.ui.screenshot import settle

from manual_shots import SCREENS, keep, screen_name, small, stable_grab

pytestmark = pytest.mark.usefixtures("private_settings")

SIZES = [(1280, 720), (1920, 1080)]
SHOT_WIDTH = {1280: 896, 1920: 960}   # the pictures kept for the manual
EXAMPLES = example_projects()


def _overlapping(rects, names):
    """Pairs of ``names`` whose rectangles share more than a hairline."""
    out = []
    for i, a in enumerate(rects):
        for j in range(i + 1, len(rects)):
            common = a.intersected(rects[j])
            if common.width() > 0.5 and common.height() > 0.5:
                out.append((names[i], names[j]))
    return out


def _show_tab(win, index):
    win.tabs.setCurrentIndex(index)
    settle(150)
    return stable_grab(win)   # painted: views bring their transforms up to date when painting


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_no_labels_overlap_on_any_tab(example_at_size, example, size):
    win = example_at_size(example, size)
    win.statusBar().clearMessage()   # "Opened <path>" names a folder of this machine
    for index in range(win.tabs.count()):
        picture = _show_tab(win, index)
        keep(small(picture, SHOT_WIDTH[size[0]]),
             SCREENS / screen_name(example.stem, size, win.tabs.tabText(index)))
        scene = win.system_editor.scene
        rects, names = [], []
        for did, item in scene.device_items.items():
            rects.append(item.mapRectToScene(item.rect()))
            names.append(f"card {did}")
        for cid, item in scene.connection_items.items():
            rects.append(item.label_rect())
            names.append(f"label of {cid}")
        assert _overlapping(rects, names) == [], (win.tabs.tabText(index), size)
        chart = win.application_panel.chart
        labels = chart.label_items
        assert _overlapping([label.sceneBoundingRect() for label in labels],
                            [label.toPlainText() for label in labels]) == [], (win.tabs.tabText(index), size)
        if chart.isVisible():
            area = chart.plotItem.vb.sceneBoundingRect()
            for label in labels:
                assert area.contains(label.sceneBoundingRect().center()), label.toPlainText()
    app_tab = win.tabs.indexOf(win.tabs.widget(3))
    _show_tab(win, app_tab)
    if win.application_panel.result:
        assert win.application_panel.chart.label_items, "the Gantt chart shows some step names"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_the_launch_header_with_the_total_is_in_sight(example_at_size, example, size):
    win = example_at_size(example, size)
    _show_tab(win, 2)
    header = win.findChild(QWidget, "answer_header")
    assert header is not None, "the Launch tab's answer header (ui/launch_panel/header.py)"
    assert header.isVisible() and not header.visibleRegion().isEmpty()   # not scrolled away
    top_left = header.mapTo(win, header.rect().topLeft())
    assert win.rect().contains(QRect(top_left, header.size())), (top_left, header.size(), size)
    texts = [w.text() for w in [header, *header.findChildren(QLabel)] if isinstance(w, QLabel)]
    assert "total" in " ".join(texts).lower(), texts
