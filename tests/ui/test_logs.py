"""The GUI's log file: in the user's data folder (or GPUMODELER_LOG_DIR), rotated; session
starts, error messages shown to the user (with the project and tab), uncaught exceptions and
bugs turned into messages are written to it; Help › Open Log Folder shows its folder."""
import logging
import sys
from logging.handlers import RotatingFileHandler

import pytest
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QMessageBox

from gpumodeler.ui import app as ui_app
from gpumodeler.ui import logs
from gpumodeler.ui.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def log_dir(gpumodeler_env, tmp_path):
    """The log folder of this test (gpumodeler_env points GPUMODELER_LOG_DIR at it); the
    handler removed afterwards."""
    yield tmp_path / "logs"
    logs.uninstall()


@pytest.fixture
def window(qtbot, catalog, monkeypatch):
    win = MainWindow(catalog)
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    yield win
    QApplication.clipboard().clear()


def _text(folder) -> str:
    for handler in logging.getLogger("gpumodeler").handlers:
        handler.flush()
    return (folder / logs.LOG_FILE).read_text(encoding="utf-8")


def test_the_log_is_a_rotating_file_in_the_given_folder(log_dir):
    handler = logs.install()
    assert isinstance(handler, RotatingFileHandler)
    assert (handler.maxBytes, handler.backupCount) == (1_000_000, 3)
    assert logs.log_path() == log_dir / "gpumodeler.log"
    text = _text(log_dir)
    assert "gpumodeler" in text and "started" in text and "Python" in text
    # installed again (a second window's run): one handler, each line written once
    logs.install()
    logs.error_shown("Cannot save project", "disk\nfull", "project a.gpm, Launch tab")
    assert _text(log_dir).count("Cannot save project") == 1
    assert "shown to the user [project a.gpm, Launch tab]: Cannot save project: disk full" in _text(log_dir)


def test_the_default_folder_is_the_user_data_folder_of_the_device_database(monkeypatch, tmp_path):
    import platformdirs

    from gpumodeler.db.catalog import default_user_db_path
    asked = []

    def user_data_path(appname, appauthor=None):
        asked.append((appname, appauthor))
        return tmp_path / "data" / appname
    monkeypatch.setattr(platformdirs, "user_data_path", user_data_path)
    monkeypatch.delenv("GPUMODELER_LOG_DIR", raising=False)
    monkeypatch.delenv("GPUMODELER_USER_DB", raising=False)
    assert logs.log_folder() == default_user_db_path().parent / "logs"
    assert logs.log_folder() == tmp_path / "data" / "gpumodeler" / "logs"
    assert set(asked) == {("gpumodeler", False)}


def test_a_folder_that_cannot_be_made_leaves_no_log(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert logs.install(blocker / "logs") is None
    assert "no log file" in capsys.readouterr().err
    assert not any(isinstance(h, RotatingFileHandler) for h in logging.getLogger("gpumodeler").handlers)


def test_an_error_shown_by_the_window_is_logged_with_the_project_and_tab(log_dir, window, monkeypatch):
    logs.install()
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda *args: shown.append(args[1:]))
    window.tabs.setCurrentIndex(2)
    window.show_error("Cannot open project", "x.gpm could not be opened.\n\nnot JSON")
    assert shown == [("Cannot open project", "x.gpm could not be opened.\n\nnot JSON")]
    line = next(l for l in _text(log_dir).splitlines() if "Cannot open project" in l)
    assert " ERROR " in line and "project untitled, Launch tab" in line
    assert "x.gpm could not be opened. not JSON" in line


def test_a_refused_edit_is_logged_with_its_reason(log_dir, window):
    logs.install()
    window.show_refusal("a GPU cannot be linked to itself", "link1")
    assert "WARNING" in _text(log_dir)
    assert "refused (link1): a GPU cannot be linked to itself" in _text(log_dir)


def test_an_uncaught_exception_is_logged_with_its_traceback(log_dir, window, monkeypatch, capsys):
    logs.install()
    shown = []
    monkeypatch.setattr(window, "show_error", lambda title, text: shown.append((title, text)))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    ui_app._report_unexpected_errors(window)

    def a_buggy_slot():
        raise ZeroDivisionError("a bug in a slot")
    try:
        a_buggy_slot()
    except ZeroDivisionError:
        sys.excepthook(*sys.exc_info())
    text = _text(log_dir)
    assert "CRITICAL" in text and "Traceback" in text and "a_buggy_slot" in text
    assert "ZeroDivisionError: a bug in a slot" in text
    assert shown and str(log_dir / "gpumodeler.log") in shown[0][1]
    assert "Traceback" in capsys.readouterr().err  # still on the terminal too


def test_a_bug_turned_into_a_message_keeps_its_traceback_in_the_log(log_dir):
    logs.install()
    try:
        {}["missing"]
    except KeyError:
        logs.bug("the sweep")
    text = _text(log_dir)
    assert "the sweep failed unexpectedly" in text and "KeyError: 'missing'" in text


def test_nothing_is_logged_to_a_file_without_install(log_dir):
    logs.error_shown("Title", "text")
    assert not log_dir.exists()


def test_help_menu_opens_the_log_folder(log_dir, window, monkeypatch):
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()))
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    assert window.log_folder_action in help_menu.actions()
    assert window.log_folder_action.text() == "Open &Log Folder"
    window.log_folder_action.trigger()
    assert opened == [str(log_dir)]
    assert log_dir.is_dir()  # made, so the file manager has something to open


def test_a_session_writes_the_log_and_a_screenshot_does_not(log_dir, monkeypatch, tmp_path, qtbot):
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # the session sets its own
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)  # no event loop: return at once
    before = set(QApplication.topLevelWidgets())
    try:
        assert ui_app.run(screenshot=str(tmp_path / "shot.png"), size=(800, 600)) == 0
        assert not log_dir.exists()
        assert ui_app.run() == 0
        assert "started" in _text(log_dir)
    finally:
        for widget in set(QApplication.topLevelWidgets()) - before:
            widget.close()
        QApplication.clipboard().clear()
