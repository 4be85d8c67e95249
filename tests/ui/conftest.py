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


@pytest.fixture
def example_at_size(qtbot, catalog, monkeypatch, private_settings):
    """A function ``(example path, (width, height)) -> window``: a main window of that size
    on the example, shown, every tab built and its background work (the saved sweep) done.
    Unsaved work is discarded when a test closes it."""
    from PySide6.QtWidgets import QApplication

    from gpumodeler.ui.main_window import MainWindow
    from gpumodeler.ui.screenshot import settle, wait_until_idle

    def open_at(example, size):
        win = MainWindow(catalog, remember=False)
        qtbot.addWidget(win)
        monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
        win.resize(*size)
        win.show()
        qtbot.waitExposed(win)
        assert win.open_path(str(example), ask=False)
        settle()
        win.build_all_tabs()
        wait_until_idle(win)
        return win

    yield open_at
    QApplication.clipboard().clear()
