"""The GUI entry point: ``gpumodeler-gui [PROJECT] [--screenshot FILE.png]``.

:func:`main` is the ``gpumodeler-gui`` script (pyproject ``gui-scripts``); ``gpumodeler gui``
(cli/cmd_gui.py) calls :func:`run`. With ``--screenshot`` the window is rendered offscreen
(no display needed) into one PNG showing every tab, and the program exits.
"""
from __future__ import annotations

import argparse
import os
import sys

APP_ID = "org.gpumodeler.gpumodeler"
EXIT_USAGE = 2


def _headless() -> bool:
    return sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                     or os.environ.get("WAYLAND_DISPLAY"))


def create_application(argv: list[str] | None = None):
    """The QApplication (the existing one if there is one), named for QSettings."""
    from PySide6.QtWidgets import QApplication

    from gpumodeler.ui import settings
    from gpumodeler.ui.icons import icon

    app = QApplication.instance() or QApplication(list(argv or ["gpumodeler"]))
    app.setOrganizationName(settings.ORGANIZATION)
    app.setApplicationName(settings.APPLICATION)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(icon("app"))
    app.aboutToQuit.connect(release_clipboard)
    return app


def release_clipboard() -> None:
    """Leave only plain text on the clipboard when quitting. Mime data made in Python (our
    copied devices) would be destroyed by Qt's exit handlers after Python has finalized,
    which crashes the process at exit (seen with PySide6 6.12 on the offscreen platform)."""
    from PySide6.QtGui import QGuiApplication
    clipboard = QGuiApplication.clipboard()
    data = clipboard.mimeData()
    if data is not None and any(f.startswith("application/x-gpumodeler") for f in data.formats()):
        clipboard.setText(data.text())


def open_catalog():
    """(catalog, None) or (None, message) when the device database cannot be opened."""
    from gpumodeler.core.errors import ModelError
    from gpumodeler.db.catalog import Catalog
    try:
        return Catalog(), None
    except (ModelError, OSError) as exc:
        return None, f"The device database could not be opened, so the palette is empty.\n\n{exc}"


def run(project: str | None = None, screenshot: str | None = None,
        size: tuple[int, int] = (1600, 1000), argv: list[str] | None = None) -> int:
    """Show the main window (with ``project`` open) until it is closed; or, with
    ``screenshot``, render it to that PNG and return. Returns the exit status."""
    if screenshot:
        if _headless() and not os.environ.get("QT_QPA_PLATFORM"):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif _headless() and not os.environ.get("QT_QPA_PLATFORM"):
        # Qt would abort without a word a user can act on; say what to do instead.
        print("gpumodeler gui: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); run it "
              "in a desktop session, or use --screenshot FILE.png to render offscreen",
              file=sys.stderr)
        return EXIT_USAGE
    app = create_application(argv)
    if screenshot:
        _quiet_offscreen_noise()
    else:  # a session, not a screenshot: its log file (ui/logs.py)
        from gpumodeler.ui import logs
        logs.install()
    from gpumodeler.core.errors import ModelError
    from gpumodeler.db.project_file import load_project
    from gpumodeler.ui.document import Document
    from gpumodeler.ui.main_window import MainWindow

    catalog, catalog_error = open_catalog()
    document, open_error = None, None
    if project:
        try:
            document = Document(load_project(project), catalog, path=os.path.abspath(project))
        except (ModelError, OSError) as exc:
            open_error = f"{project} could not be opened.\n\n{exc}"
    if screenshot and (open_error or catalog_error):
        print(f"gpumodeler gui: {(open_error or catalog_error).replace(chr(10) * 2, ' ')}",
              file=sys.stderr)
        return EXIT_USAGE
    # A screenshot neither reads nor changes the user's window layout or recent files.
    window = MainWindow(catalog, document, remember=not screenshot)
    if screenshot:
        from gpumodeler.ui.screenshot import save_composite
        inputs = [(project, "the project file")]
        if catalog is not None:
            inputs += [(catalog.user_path, "your device database"),
                       (catalog.shipped_path, "the device database")]
        try:
            save_composite(window, screenshot, size, inputs)
        except ModelError as exc:  # the file cannot be written (db.atomic_files.OutputError)
            print(f"gpumodeler gui: {' '.join(str(exc).split())}", file=sys.stderr)
            return EXIT_USAGE
        finally:
            window.close()
        return 0
    window.show()
    _report_unexpected_errors(window)
    if project and document is not None:
        from gpumodeler.ui import settings
        settings.add_recent_file(os.path.abspath(project))
    for error in (catalog_error, open_error):
        if error:
            window.show_error("gpumodeler", error)
    return app.exec()


def _quiet_offscreen_noise() -> None:
    """Drop the offscreen platform's "does not support propagateSizeHints()" warnings (one
    per window shown: noise in a screenshot run); every other Qt message still prints."""
    from PySide6.QtCore import qInstallMessageHandler
    previous = None

    def handler(kind, context, message):
        if "propagateSizeHints" in message:
            return
        if previous is not None:
            previous(kind, context, message)
        else:
            print(message, file=sys.stderr)
    previous = qInstallMessageHandler(handler)


def _report_unexpected_errors(window) -> None:
    """A bug in a slot becomes a message box (details on stderr and in the log file), not a
    silent traceback; the session goes on and the work stays (undo still works)."""
    import traceback

    from gpumodeler.ui.logs import log_path, uncaught

    def hook(kind, value, tb):
        traceback.print_exception(kind, value, tb)
        uncaught(kind, value, tb)
        if issubclass(kind, KeyboardInterrupt):
            window.close()
            return
        window.show_error("Internal error",
                          f"gpumodeler hit a bug ({kind.__name__}: {value}). Your project is "
                          f"unchanged by it; save your work and please report it with the log "
                          f"file {log_path()} (Help › Open Log Folder).")
    sys.excepthook = hook


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpumodeler-gui",
                                     description="The gpumodeler desktop application.")
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by ``gpumodeler-gui`` and ``gpumodeler gui``."""
    parser.add_argument("project", nargs="?", help="a project file (.gpm) to open")
    parser.add_argument("--screenshot", metavar="FILE.png",
                        help="render every tab of the window into one PNG and exit "
                             "(works without a display)")
    parser.add_argument("--size", default="1600x1000", metavar="WxH",
                        help="window size for --screenshot (default 1600x1000)")


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
        if w < 400 or h < 300:
            raise ValueError
        return w, h
    except ValueError:
        raise ValueError(f"--size needs WIDTHxHEIGHT of at least 400x300, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    """The ``gpumodeler-gui`` script."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        print(f"gpumodeler-gui: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return run(args.project, args.screenshot, size, argv=[sys.argv[0]])


if __name__ == "__main__":
    raise SystemExit(main())
