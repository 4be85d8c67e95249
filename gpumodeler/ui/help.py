"""Help › Manual (F1) and Help › Keyboard Shortcuts.

The manual is the user part of the README (from "## The desktop application" to the
developers' "## Layout"), rendered as Markdown in a QTextBrowser, so the help and the README
never disagree. Installed without the source tree, the README comes from the package's
metadata (pyproject's ``readme``). The shortcut list is made from the window's actions, so
it lists what the keys really do.
"""
from __future__ import annotations

from importlib import metadata
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QTableWidget,
                               QTableWidgetItem, QTextBrowser, QVBoxLayout)

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


README = Path(__file__).resolve().parents[2] / "README.md"
USER_START = "## The desktop application"
USER_END = "## Layout"


def readme_text() -> str:
    """The README: the source tree's, else the installed package's long description."""
    if README.exists():
        return README.read_text(encoding="utf-8")
    try:
        meta = metadata.metadata("gpumodeler")
    except metadata.PackageNotFoundError:
        return ""
    return meta.get_payload() or meta.get("Description", "") or ""


def manual_markdown(text: str | None = None) -> str:
    """The user part of the README as Markdown (the whole README when its headings moved)."""
    text = readme_text() if text is None else text
    if not text:
        return "# gpumodeler\n\nThe manual (README.md) is not installed with this copy."
    start = text.find(USER_START)
    end = text.find(USER_END, start + 1) if start >= 0 else -1
    if start < 0:
        return text
    return "# gpumodeler manual\n\n" + text[start:end if end > 0 else len(text)].strip() + "\n"


class ManualDialog(QDialog):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("gpumodeler manual")
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setMarkdown(manual_markdown())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser, 1)
        lay.addWidget(buttons)
        self.resize(760, 620)


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
