"""Help › Manual (F1) and Help › Keyboard Shortcuts.

The manual is ``docs/manual/manual.md``: the desktop application's tasks (build a system,
import a kernel, calibrate, sweep, export a figure, build an application, share devices),
with screenshots in ``docs/manual/img/`` that the test suite renders from the bundled
examples, so they show the application as it is. It is shipped with the package as
``gpumodeler/data/manual`` and rendered as Markdown in a QTextBrowser. The shortcut list is
made from the window's actions, so it lists what the keys really do.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QTableWidget,
                               QTableWidgetItem, QTextBrowser, QVBoxLayout)

#: the manual's folder: the markdown and its ``img/`` screenshots
MANUAL_DIR = Path(__file__).resolve().parents[1] / "data" / "manual"
MANUAL = MANUAL_DIR / "manual.md"


def open_log_folder() -> Path:
    """Help › Open Log Folder: the folder of the log file (:mod:`.logs`) in the desktop's
    file manager (made first if the log was never written). Returns the folder."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    from gpumodeler.ui.logs import log_folder
    folder = log_folder()
    folder.mkdir(parents=True, exist_ok=True)
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
    return folder


def manual_markdown() -> str:
    """The user manual as Markdown (a short note when this copy was installed without it)."""
    if MANUAL.is_file():
        return MANUAL.read_text(encoding="utf-8")
    return "# gpumodeler\n\nThe user manual is not installed with this copy of gpumodeler."


class ManualDialog(QDialog):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("gpumodeler manual")
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)   # the contents' #anchors are followed by go_to
        self.browser.anchorClicked.connect(self.follow)
        self.browser.setSearchPaths([str(MANUAL_DIR)])   # img/… of the screenshots
        self.browser.setMarkdown(manual_markdown())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser, 1)
        lay.addWidget(buttons)
        # wide enough for the screenshots, never taller or wider than the screen
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else None
        width, height = 960, 720
        if room is not None:
            width, height = min(width, room.width() - 40), min(height, room.height() - 60)
        self.resize(max(width, 480), max(height, 360))


    def follow(self, url) -> None:
        """A link of the manual: ``#a-heading`` scrolls to that section, others open in the
        desktop's browser."""
        if url.scheme() or url.path():
            from PySide6.QtGui import QDesktopServices
            QDesktopServices.openUrl(url)
        else:
            self.go_to(url.fragment())

    def go_to(self, anchor: str) -> bool:
        """Scroll to the heading whose GitHub-style anchor is ``anchor`` (Qt's Markdown
        reader gives headings none); False when there is no such heading."""
        block = self.browser.document().begin()
        while block.isValid():
            if block.blockFormat().headingLevel() and heading_anchor(block.text()) == anchor:
                top = self.browser.document().documentLayout().blockBoundingRect(block).top()
                self.browser.verticalScrollBar().setValue(int(top))
                return True
            block = block.next()
        return False


def heading_anchor(text: str) -> str:
    """A heading's anchor as GitHub writes it: ``Build a system`` -> ``build-a-system``."""
    import re
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def shortcut_rows(actions) -> list[tuple[str, str, str]]:
    """(action, keys, what it does) for every action with a shortcut, sorted by action."""
    rows = {}
    for action in actions:
        keys = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts()]
        keys = [k for k in keys if k]
        if not keys:
            continue
        name = action.text().replace("&", "").rstrip("…").strip()
        if name:
            rows[name] = (name, ", ".join(keys), action.statusTip() or action.toolTip().replace("&", ""))
    return sorted(rows.values(), key=lambda r: r[0].lower())


class ShortcutsDialog(QDialog):
    def __init__(self, actions, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(actions)
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(("Action", "Keys", "What it does"))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                self.table.setItem(r, c, item)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.resizeColumnsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table, 1)
        lay.addWidget(buttons)
        self.resize(620, 520)
