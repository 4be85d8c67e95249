"""Fixtures for the GUI tests."""
import pytest


@pytest.fixture
def private_settings(gpumodeler_env, tmp_path):
    """Never read or write the user's settings (gpumodeler_env points ours elsewhere). Test
    modules that open windows make it autouse with ``pytestmark``."""
    from PySide6.QtCore import QSettings
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                      str(tmp_path / "settings-user"))


@pytest.fixture
def example_window(qtbot, catalog, monkeypatch, private_settings):
    """A main window on the bundled example project that never blocks a test: unsaved work
    is discarded, error boxes are kept in ``errors`` and information boxes in ``told``."""
    from pathlib import Path

    from PySide6.QtWidgets import QApplication, QMessageBox

    from gpumodeler.ui.main_window import MainWindow
    example = Path(__file__).resolve().parents[2] / "resources" / "examples" / "saxpy2-gtx970.gpm"
    win = MainWindow(catalog)
    qtbot.addWidget(win)
    win.errors, win.told = [], []
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    monkeypatch.setattr(win, "show_error", lambda title, text: win.errors.append((title, text)))
    monkeypatch.setattr(QMessageBox, "information",
                        staticmethod(lambda parent, title, text, *a: win.told.append(text)))
    assert win.open_path(str(example), ask=False)
    yield win
    QApplication.clipboard().clear()
