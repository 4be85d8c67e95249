"""One PNG of the whole application: every tab of the main window, side by side.

Only one tab is visible at a time, so each is made current, laid out and grabbed
(``QWidget.grab``) in turn; the grabs go into a grid with a caption above each, at full
size so text stays legible. A last cell shows the System tab again with the first link
selected, so the inspector shows the link's parameters. Background work (the launch's saved
sweep) is waited for first, at most :data:`IDLE_TIMEOUT_MS`, so its curve is in the picture.
"""
from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QEventLoop, QRect, Qt, QThread
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QApplication, QGraphicsView

CAPTION_H = 44
GAP = 16
SETTLE_MS = 250
IDLE_TIMEOUT_MS = 10_000  # a screenshot waits this long at most for sweeps to finish


#: settle() sleeps this long between rounds of events: a round returns as soon as no event
#: is pending, and calling it again at once spun a core for the whole wait
NAP_MS = 5


def settle(ms: int = SETTLE_MS) -> None:
    """Run the event loop for ``ms`` so layouts and deferred (0 ms) timers finish: the
    pending events, then a nap of :data:`NAP_MS`, until ``ms`` have passed."""
    timer = QElapsedTimer()
    timer.start()
    while timer.elapsed() < ms:
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        left = ms - timer.elapsed()
        if left > 0:
            QThread.msleep(min(NAP_MS, left))


def wait_until_idle(window, timeout_ms: int = IDLE_TIMEOUT_MS) -> bool:
    """Run the event loop until no editor of ``window`` has background work (a sweep)
    running, for at most ``timeout_ms``; True if it is idle."""
    timer = QElapsedTimer()
    timer.start()
    while window.is_busy() and timer.elapsed() < timeout_ms:
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        QThread.msleep(5)  # the sweep runs on another thread: do not spin
    return not window.is_busy()


def grab_tabs(window) -> list[tuple[str, QImage]]:
    """(caption, image) of the window with each tab current, then the link inspector."""
    shots = []
    project = window.document.project
    gpus = [d.id for d in project.devices.values() if d.kind == "gpu"]
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        if index == 0 and gpus:
            window.system_editor.scene.select([gpus[0]])
        settle()
        editor = window.editor(index)
        if hasattr(editor, "fit"):
            editor.fit()
        _legible(getattr(editor, "view", None))
        settle(60)
        shots.append((f"{window.tabs.tabText(index)} tab", window.grab().toImage()))
    window.tabs.setCurrentIndex(0)
    if project.connections:
        link = next(iter(project.connections))
        window.system_editor.scene.select(connection_ids=[link])
        settle(60)
        window.system_editor.fit()
        settle(60)
        name = project.connections[link].link_name
        shots.append((f"System tab, link selected: {name}", window.grab().toImage()))
        if gpus:
            window.system_editor.scene.select([gpus[0]])
    return shots


def _legible(view, min_scale: float = 0.6, scale: float = 0.9) -> None:
    """A canvas fitted so small its text cannot be read (a long kernel) is shown at a
    readable scale around its middle instead: part of it, legible, beats all of it, blurred."""
    if not isinstance(view, QGraphicsView) or view.transform().m11() >= min_scale:
        return
    rect = view.scene().itemsBoundingRect()
    view.resetTransform()
    view.scale(scale, scale)
    view.centerOn(rect.center())


def compose(shots: list[tuple[str, QImage]], columns: int = 2) -> QImage:
    """The shots in a grid, each under its caption."""
    cell_w = max(img.width() for _, img in shots)
    cell_h = max(img.height() for _, img in shots) + CAPTION_H
    rows = (len(shots) + columns - 1) // columns
    out = QImage(columns * cell_w + (columns + 1) * GAP, rows * cell_h + (rows + 1) * GAP,
                 QImage.Format.Format_RGB32)
    out.fill(QColor("#d9dcd6"))
    painter = QPainter(out)
    font = QFont()
    font.setPointSize(17)
    font.setBold(True)
    painter.setFont(font)
    for i, (caption, image) in enumerate(shots):
        x = GAP + (i % columns) * (cell_w + GAP)
        y = GAP + (i // columns) * (cell_h + GAP)
        painter.setPen(QColor("#1d4a3f"))
        painter.drawText(QRect(x + 4, y, cell_w, CAPTION_H - 6),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, caption)
        painter.drawImage(x, y + CAPTION_H, image)
    painter.end()
    return out


def save_composite(window, path: str, size: tuple[int, int] = (1600, 1000),
                   inputs=()) -> QImage:
    """Show ``window`` at ``size``, grab every tab and save the grid to ``path`` (PNG,
    :func:`save_png`)."""
    window.resize(*size)
    window.show()
    settle()
    window.build_all_tabs()
    wait_until_idle(window)  # the saved sweeps' curves, not an empty plot
    image = compose(grab_tabs(window))
    save_png(image, path, inputs)
    return image


def save_png(image: QImage, path: str, inputs=()) -> None:
    """Write ``image`` as a PNG file, atomically and never over one of ``inputs``
    (db.atomic_files.output_file: an OutputError names the file and the reason when it
    cannot be written)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    from gpumodeler.db.atomic_files import write_output
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ValueError(f"cannot encode {path} as PNG")
    buffer.close()
    write_output(path, bytes(data), inputs=inputs)
