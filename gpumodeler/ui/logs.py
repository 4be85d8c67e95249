"""The desktop application's log: what to send when something went wrong.

The GUI writes ``gpumodeler.log`` in the ``logs`` folder of the user's data folder (the one
that holds the user device database, :func:`gpumodeler.db.catalog.default_user_db_path`),
rotated at 1 MB with 3 old files kept. It records the start of each session (versions,
platform), every error message shown to the user (with the project and tab), the edits the
window refused with their reason, and every uncaught exception with its traceback. ``GPUMODELER_LOG_DIR`` points it at another folder
(tests, benchmarks). Help › Open Log Folder shows the folder.

A log that cannot be written (a read-only home) never stops the application: it then runs
without one.
"""
from __future__ import annotations

import logging
import logging.handlers
import os
import platform
import sys
from pathlib import Path

import platformdirs

ENV_LOG_DIR = "GPUMODELER_LOG_DIR"
LOG_FILE = "gpumodeler.log"
MAX_BYTES = 1_000_000
BACKUPS = 3
#: the package's logger: every module's ``logging.getLogger(__name__)`` is under it
LOGGER = "gpumodeler"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

log = logging.getLogger(__name__)


def log_folder() -> Path:
    """Where the GUI's log files go: ``$GPUMODELER_LOG_DIR``, else ``logs`` in the user's
    data folder (the same application name as the user device database's)."""
    env = os.environ.get(ENV_LOG_DIR)
    if env:
        return Path(env)
    return platformdirs.user_data_path("gpumodeler", appauthor=False) / "logs"


def log_path() -> Path:
    return log_folder() / LOG_FILE


class _FileHandler(logging.handlers.RotatingFileHandler):
    """The GUI's rotating log file (its own class, so that installing again replaces it)."""


def install(folder: Path | None = None) -> logging.Handler | None:
    """Log the ``gpumodeler`` logger's INFO and above to the rotating file in ``folder``
    (default :func:`log_folder`), replacing a file handler installed before. Returns the
    handler, or None when the folder or file cannot be written."""
    folder = Path(folder) if folder is not None else log_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler = _FileHandler(folder / LOG_FILE, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                               encoding="utf-8", delay=True)
    except OSError as exc:
        print(f"gpumodeler: no log file ({exc})", file=sys.stderr)
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(logging.INFO)
    logger = logging.getLogger(LOGGER)
    uninstall()
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    from gpumodeler import __version__
    log.info("gpumodeler %s started: Python %s, %s, Qt %s", __version__,
             platform.python_version(), platform.platform(), _qt_version())
    return handler


def uninstall() -> None:
    """Remove (and close) the log file handler :func:`install` added, if any."""
    logger = logging.getLogger(LOGGER)
    for handler in [h for h in logger.handlers if isinstance(h, _FileHandler)]:
        logger.removeHandler(handler)
        handler.close()


def _qt_version() -> str:
    try:
        import PySide6
        from PySide6.QtCore import qVersion
        return f"{qVersion()} (PySide6 {PySide6.__version__})"
    except ImportError:  # the log works without Qt (its tests)
        return "not loaded"


def error_shown(title: str, text: str, context: str = "") -> None:
    """Record an error message the user was shown (``context``: where, e.g. the project and
    tab)."""
    where = f" [{context}]" if context else ""
    log.error("shown to the user%s: %s: %s", where, title, " ".join(str(text).split()))


def refusal_shown(message: str, item: str = "") -> None:
    """Record an edit the window refused, with the reason it showed (the status bar's
    warning), at WARNING: what the user tried before a bug is part of its report."""
    log.warning("refused%s: %s", f" ({item})" if item else "", " ".join(str(message).split()))


def uncaught(kind, value, tb) -> None:
    """Record an uncaught exception with its traceback."""
    log.critical("uncaught exception", exc_info=(kind, value, tb))


def bug(what: str) -> None:
    """In an ``except`` block that turns a bug into a message: record the exception being
    handled, with its traceback (the message shows only its one line)."""
    log.error("%s failed unexpectedly", what, exc_info=True)
