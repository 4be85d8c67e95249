"""The main window's docks: each goes with the tab whose work it shows.

==================  ===========  ====================================================
dock (object name)  tab          shows
==================  ===========  ====================================================
``inspector``       System       the placed device's or link's values (PropertyInspector)
``kernel_properties`` Kernel     the selected instruction's, edge's or loop's fields
``sweep``           Launch       the sweep controls and plot (SweepPanel)
==================  ===========  ====================================================

Each dock is movable, floatable and closable. It shows while its tab is current and the
user wants it (its View-menu entry, its toggleViewAction, is checked); on another tab it
hides, and comes back with its tab. Checking its View entry on another tab switches to its
tab, so a dock never appears beside a tab it does not belong to. Closing a dock (its ×, or
the View entry) is remembered per dock, as is the whole arrangement (QMainWindow's
saveState in the settings); View › Reset Layout puts every dock back where it started.

The docks exist from the start (``restoreState`` finds them by object name); the sweep and
kernel-properties widgets move into them when their tab's editor is built (the editors are
built lazily: :meth:`TabDocks.adopt`).
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QLabel

Area = Qt.DockWidgetArea


@dataclass(frozen=True)
class DockSpec:
    name: str           # object name (saveState) and settings key
    title: str
    tab: int            # index of the tab it goes with
    area: Qt.DockWidgetArea
    share: float        # of the window's width (right) or height (bottom) when first shown
    most: int           # pixels at most when first shown
    tip: str


DOCKS = (
    DockSpec("inspector", "Inspector", 0, Area.RightDockWidgetArea, 0.375, 600,
             "The selected device's or link's values, their sources and your overrides"),
    DockSpec("kernel_properties", "Kernel Properties", 1, Area.RightDockWidgetArea, 0.27, 340,
             "The selected instruction's, edge's or loop's fields (the kernel's when none)"),
    DockSpec("sweep", "Sweep Plot", 2, Area.BottomDockWidgetArea, 0.46, 520,
             "Sweep a variable of the launch and plot the predicted times"),
)
SETTINGS_KEY = "main_window/dock_{}"


class TabDock(QDockWidget):
    """A dock that says when the user closes it (QDockWidget has no signal for that)."""

    closed = Signal()

    def closeEvent(self, event) -> None:
        super().closeEvent(event)
        if event.isAccepted():
            self.closed.emit()


class TabDocks(QObject):
    """The docks of ``window`` (a QMainWindow with a ``tabs`` QTabWidget)."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.specs = {spec.name: spec for spec in DOCKS}
        self.docks: dict[str, TabDock] = {}
        self.wanted = {spec.name: True for spec in DOCKS}  # the user's choice per dock
        self._sized: set[str] = set()  # docks given their first size (or a restored layout)
        features = (QDockWidget.DockWidgetFeature.DockWidgetMovable
                    | QDockWidget.DockWidgetFeature.DockWidgetClosable
                    | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        for spec in DOCKS:
            dock = TabDock(spec.title, window)
            dock.setObjectName(spec.name)
            dock.setFeatures(features)
            dock.setToolTip(spec.tip)
            waiting = QLabel(f"{spec.title}: opens with the {window.tabs.tabText(spec.tab) or 'its'} tab")
            waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
            dock.setWidget(waiting)
            window.addDockWidget(spec.area, dock)
            action = dock.toggleViewAction()
            action.setStatusTip(f"Show or hide the {spec.title} dock ({spec.tip.lower()})")
            action.triggered.connect(lambda on, n=spec.name: self._toggled(n, on))
            dock.closed.connect(lambda n=spec.name: self._closed(n))
            self.docks[spec.name] = dock

    def __getitem__(self, name: str) -> TabDock:
        return self.docks[name]

    def toggle_actions(self) -> list:
        return [self.docks[spec.name].toggleViewAction() for spec in DOCKS]

    def adopt(self, name: str, widget) -> None:
        """Put ``widget`` (an editor's panel) into dock ``name``."""
        dock = self.docks[name]
        old = dock.widget()
        dock.setWidget(widget)
        if old is not None and old is not widget:
            old.deleteLater()

    # -- visibility --------------------------------------------------------------------------
    def _toggled(self, name: str, on: bool) -> None:
        self.wanted[name] = on
        tab = self.specs[name].tab
        if on and self.window.tabs.currentIndex() != tab:
            self.window.tabs.setCurrentIndex(tab)  # shows it (tab_changed)
        self.tab_changed(self.window.tabs.currentIndex())

    def _closed(self, name: str) -> None:
        if self.window.tabs.currentIndex() == self.specs[name].tab:
            self.wanted[name] = False  # closed by the user, not hidden by a tab change

    def tab_changed(self, index: int) -> None:
        """Show the docks of tab ``index`` the user wants, hide the others."""
        for spec in DOCKS:
            dock = self.docks[spec.name]
            show = self.wanted[spec.name] and spec.tab == index
            if dock.isHidden() == show:
                dock.setVisible(show)
            # first shown: its share of the window (once the window shows, at its real size;
            # now, not later, so that a view fitted next is fitted to what is left)
            if show and spec.name not in self._sized and self.window.isVisible():
                self._sized.add(spec.name)
                self._first_size(spec)

    def _first_size(self, spec: DockSpec) -> None:
        dock = self.docks[spec.name]
        if dock.isFloating():
            return
        if spec.area == Area.BottomDockWidgetArea:
            size = min(spec.most, int(self.window.height() * spec.share))
            self.window.resizeDocks([dock], [size], Qt.Orientation.Vertical)
        else:
            size = min(spec.most, int(self.window.width() * spec.share))
            self.window.resizeDocks([dock], [size], Qt.Orientation.Horizontal)

    def show_dock(self, name: str) -> None:
        """Show dock ``name`` now, whatever the tab (a message's "set it" button)."""
        self.wanted[name] = True
        dock = self.docks[name]
        dock.show()
        dock.raise_()

    # -- layout --------------------------------------------------------------------------------
    def reset(self) -> None:
        """Every dock back in its area, docked, wanted, at its first size."""
        for spec in DOCKS:
            dock = self.docks[spec.name]
            dock.setFloating(False)
            self.window.removeDockWidget(dock)
            self.window.addDockWidget(spec.area, dock)
            self.wanted[spec.name] = True
        self._sized.clear()
        for spec in DOCKS:
            self.docks[spec.name].setVisible(False)
        self.tab_changed(self.window.tabs.currentIndex())

    def restore(self, store, sized: bool) -> None:
        """The user's choices per dock; the arrangement itself comes with restoreState
        (``sized``: there was one, so the docks keep their sizes)."""
        for spec in DOCKS:
            self.wanted[spec.name] = str(store.value(SETTINGS_KEY.format(spec.name), "true")) == "true"
            if sized:
                self._sized.add(spec.name)

    def save(self, store) -> None:
        for spec in DOCKS:
            store.setValue(SETTINGS_KEY.format(spec.name), "true" if self.wanted[spec.name] else "false")
