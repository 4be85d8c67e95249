"""Conventions: the sweep plot and the kernel properties are docks of the main window (movable,
floatable, closable, re-openable from the View menu, the layout remembered, Reset Layout),
each shown with its tab; every control stays reachable at 1280×720 and 1024×700."""
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSpinBox,
                               QApplication, QComboBox, QDockWidget, QGraphicsView, QHeaderView, QLineEdit,
                               QScrollArea, QTabBar, QWidget)

from gpumodeler.ui import settings
from gpumodeler.ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
Area = Qt.DockWidgetArea
F = QDockWidget.DockWidgetFeature

pytestmark = pytest.mark.usefixtures("private_settings")


def _window(qtbot, catalog, monkeypatch, size=(1280, 720)):
    win = MainWindow(catalog)
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    assert win.open_path(str(EXAMPLE))
    win.build_all_tabs()
    return win


@pytest.fixture
def window(qtbot, catalog, monkeypatch):
    win = _window(qtbot, catalog, monkeypatch)
    yield win
    win.launch_panel.sweep.cancel()
    QApplication.clipboard().clear()


def _shown(window):
    return {name for name, dock in window.docks.docks.items() if dock.isVisible()}


def test_sweep_and_kernel_properties_are_docks_with_their_tabs(window, qtbot):
    sweep, props = window.docks["sweep"], window.docks["kernel_properties"]
    assert sweep.widget() is window.launch_panel.sweep
    assert props.widget() is window.kernel_editor.properties
    assert not window.launch_panel.isAncestorOf(window.launch_panel.sweep)
    assert not window.kernel_editor.isAncestorOf(window.kernel_editor.properties)
    for dock in window.docks.docks.values():
        assert dock.features() & F.DockWidgetMovable and dock.features() & F.DockWidgetFloatable
        assert dock.features() & F.DockWidgetClosable and dock.objectName()
    assert window.dockWidgetArea(sweep) == Area.BottomDockWidgetArea
    assert window.dockWidgetArea(props) == Area.RightDockWidgetArea
    for index, expected in ((0, {"inspector"}), (1, {"kernel_properties"}), (2, {"sweep"}),
                            (3, set())):
        window.tabs.setCurrentIndex(index)
        assert _shown(window) == expected, window.tabs.tabText(index)
    # the sweep panel still works from its dock: a selection in the kernel's dock too
    window.tabs.setCurrentIndex(1)
    editor = window.kernel_editor
    node = next(iter(editor.graph.instructions))
    window.document.select("instruction", node)
    assert editor.properties.isVisible() and props.isVisible()


def test_view_menu_closes_and_reopens_a_dock_on_its_tab(window):
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    texts = [a.text() for a in view.actions()]
    assert {"Inspector", "Kernel Properties", "Sweep Plot", "&Reset Layout"} <= set(texts)
    sweep = window.docks["sweep"]
    window.tabs.setCurrentIndex(2)
    sweep.close()  # its × button
    assert sweep.isHidden()
    window.tabs.setCurrentIndex(0)
    window.tabs.setCurrentIndex(2)
    assert sweep.isHidden()  # stays closed: the user closed it
    window.tabs.setCurrentIndex(1)
    sweep.toggleViewAction().trigger()  # View › Sweep Plot from another tab
    assert window.tabs.currentIndex() == 2 and sweep.isVisible()
    assert not window.docks["kernel_properties"].isVisible()
    sweep.toggleViewAction().trigger()
    assert sweep.isHidden() and not window.docks.wanted["sweep"]


def test_layout_is_remembered_and_reset(window, qtbot, catalog, monkeypatch):
    sweep, props = window.docks["sweep"], window.docks["kernel_properties"]
    window.tabs.setCurrentIndex(2)
    window.addDockWidget(Area.RightDockWidgetArea, sweep)  # the user drags it to the right
    window.tabs.setCurrentIndex(1)
    props.close()
    window.tabs.setCurrentIndex(2)
    assert window.close()
    assert settings.app_settings().value("main_window/state") is not None
    again = MainWindow(catalog)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    again.build_all_tabs()
    assert again.dockWidgetArea(again.docks["sweep"]) == Area.RightDockWidgetArea
    again.tabs.setCurrentIndex(1)
    assert again.docks["kernel_properties"].isHidden()  # closed stays closed
    again.tabs.setCurrentIndex(2)
    assert again.docks["sweep"].isVisible()
    again.docks["sweep"].setFloating(True)
    again.reset_layout_action.trigger()
    assert again.dockWidgetArea(again.docks["sweep"]) == Area.BottomDockWidgetArea
    assert not again.docks["sweep"].isFloating() and again.docks["sweep"].isVisible()
    again.tabs.setCurrentIndex(1)
    assert again.docks["kernel_properties"].isVisible()
    again.launch_panel.sweep.cancel()


CONTROLS = (QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox)
VIEWS = (QAbstractItemView, QGraphicsView)


def _reveal(widget) -> None:
    """Scroll every scroll area ``widget`` is in (innermost first) until the whole widget
    is in its viewport, as a user would (ensureWidgetVisible shows a line edit's cursor only)."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea) and parent.widget() is not None:
            at = widget.mapTo(parent.widget(), QPoint(0, 0))
            half_w, half_h = widget.width() // 2, widget.height() // 2
            parent.ensureVisible(at.x() + half_w, at.y() + half_h, half_w + 1, half_h + 1)
        parent = parent.parentWidget()


def unreachable(window) -> list[str]:
    """Controls of the window that cannot be seen whole, even after scrolling every
    scroll area they are in; views (tables, canvases, plots) shown smaller than 60×40."""
    bad = []
    for w in window.findChildren(QWidget):
        if not w.isVisible() or w.window() is not window or w.objectName().startswith("qt_"):
            continue
        if isinstance(w.parentWidget(), QTabBar) or not isinstance(w, CONTROLS + VIEWS) \
                or isinstance(w, QHeaderView):
            continue
        if isinstance(w.parentWidget(), (QComboBox, QAbstractSpinBox)):
            continue  # a combo's or spin box's own line edit
        _reveal(w)
        QApplication.processEvents()
        seen = (w.viewport() if isinstance(w, VIEWS) else w).visibleRegion().boundingRect()
        name = f"{type(w).__name__} {getattr(w, 'text', lambda: '')() or w.toolTip()[:40]!r}"
        if isinstance(w, VIEWS):
            if seen.width() < min(60, w.width()) or seen.height() < min(40, w.height()):
                bad.append(f"{name}: {seen.width()}×{seen.height()} shown")
        elif seen.width() < w.width() - 1 or seen.height() < w.height() - 1:
            bad.append(f"{name}: {seen.width()}×{seen.height()} of {w.width()}×{w.height()}")
    return bad


@pytest.mark.parametrize("size", [(1280, 720), (1024, 700)])
def test_every_control_is_reachable(qtbot, catalog, monkeypatch, size):
    win = _window(qtbot, catalog, monkeypatch, size)
    try:
        assert (win.width(), win.height()) == size
        for index in range(win.tabs.count()):
            win.tabs.setCurrentIndex(index)
            qtbot.wait(50)
            problems = unreachable(win)
            assert not problems, f"{win.tabs.tabText(index)} tab at {size}: {problems}"
        # the docks' widgets are among what was checked
        win.tabs.setCurrentIndex(2)
        assert win.launch_panel.sweep.run_button.visibleRegion().boundingRect().width() \
            == win.launch_panel.sweep.run_button.width()
        plot = win.launch_panel.sweep.plot
        assert plot.height() >= 120 and plot.width() >= 500
    finally:
        win.launch_panel.sweep.cancel()
