"""Main window: tabs, undo texts and shortcuts, title star, the unsaved-work prompt, open and
save through project files, a bad file, recent files and remembered layout, the screenshot."""
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMessageBox

from gpumodeler.cli.main import main as cli_main
from gpumodeler.core.commands import AddConnection, SetOverride
from gpumodeler.core.project import Connection
from gpumodeler.db.project_file import load_project
from gpumodeler.ui import settings
from gpumodeler.ui.main_window import MainWindow
from gpumodeler.ui.screenshot import save_composite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
GPU = "GeForce GTX 970"


pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def window(qtbot, catalog, monkeypatch):
    win = MainWindow(catalog)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    # the unsaved-work prompt must never block a test: answer "discard" unless told otherwise
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    yield win
    # Mime data left on the clipboard crashes Python's exit after the QApplication is gone.
    QApplication.clipboard().clear()


def _add_gpu(window) -> str:
    device_id = window.system_editor.add_device("gpu", GPU, QPointF(0, 0))
    assert device_id
    return device_id


def test_three_editors_as_tabs_with_the_inspector(window):
    assert [window.tabs.tabText(i) for i in range(3)] == ["System", "Kernel", "Launch"]
    assert window.windowTitle() == "untitled[*] — gpumodeler"
    assert window.inspector_dock.widget() is window.inspector
    window.tabs.setCurrentIndex(1)
    assert not window.inspector_dock.isVisible()  # the kernel editor has its own panel
    assert not window.edit_actions["paste"].isEnabled()
    window.tabs.setCurrentIndex(0)
    assert window.inspector_dock.isVisible() and window.edit_actions["paste"].isEnabled()


def test_undo_redo_actions_carry_texts_and_the_expected_shortcuts(window):
    device_id = _add_gpu(window)
    text = lambda action: action.text().replace("&", "")  # noqa: E731  (menu mnemonics)
    assert text(window.undo_action) == f"Undo add {GPU}"
    assert window.undo_action.isEnabled() and not window.redo_action.isEnabled()
    window.undo_action.trigger()
    assert device_id not in window.document.project.devices
    assert text(window.redo_action) == f"Redo add {GPU}"
    window.redo_action.trigger()
    assert device_id in window.document.project.devices
    keys = lambda action: {s.toString() for s in action.shortcuts()}  # noqa: E731
    assert "Ctrl+Z" in keys(window.undo_action)
    assert {"Ctrl+Y", "Ctrl+Shift+Z"} <= keys(window.redo_action)
    assert "Ctrl+S" in keys(window.save_action) and "Ctrl+O" in keys(window.open_action)
    assert "Del" in keys(window.edit_actions["delete"])
    assert {"Ctrl+C", "Ctrl+V"} <= keys(window.edit_actions["copy"]) | keys(window.edit_actions["paste"])
    assert keys(window.fit_action) == {"F"}


def test_edit_menu_acts_on_the_system_editor(window):
    device_id = _add_gpu(window)
    window.system_editor.scene.select([device_id])
    window.edit_actions["copy"].trigger()
    window.edit_actions["paste"].trigger()
    assert len(window.document.project.devices) == 2
    window.edit_actions["select_all"].trigger()
    window.edit_actions["delete"].trigger()
    assert not window.document.project.devices
    assert window.undo_action.text().replace("&", "") == "Undo delete 2 items"


def test_refusals_reach_the_status_bar(window):
    host = window.system_editor.add_device("host", "Gajger GTX 970 testbed host", QPointF(0, 0))
    host2 = window.system_editor.add_device("host", "Gajger GTX TITAN X testbed host",
                                            QPointF(0, 300))
    window.system_editor.connect_devices(host, host2, "PCIe 3.0 x16")
    assert "two hosts need a network link" in window.refusal_text()


def test_title_star_and_close_prompt(window, monkeypatch, tmp_path):
    assert not window.isWindowModified()
    _add_gpu(window)
    assert window.isWindowModified() and window.is_modified()
    asked = []
    monkeypatch.setattr(window, "ask_save_changes", lambda: asked.append(1) or "cancel")
    assert not window.close()
    assert window.isVisible() and asked == [1]
    target = tmp_path / "saved.gpm"
    monkeypatch.setattr(window, "ask_save_changes", lambda: "save")
    monkeypatch.setattr(window, "ask_save_path", lambda: str(target))
    assert window.close()
    assert target.exists() and window.windowTitle() == "saved.gpm[*] — gpumodeler"
    assert len(load_project(target).devices) == 1


def test_discarding_closes_without_saving(window, monkeypatch):
    _add_gpu(window)
    monkeypatch.setattr(window, "ask_save_path", lambda: pytest.fail("must not ask"))
    assert window.close()


def test_opening_over_unsaved_work_asks_first(window, monkeypatch, tmp_path):
    _add_gpu(window)
    monkeypatch.setattr(window, "ask_save_changes", lambda: "cancel")
    assert not window.open_path(str(EXAMPLE))
    assert len(window.document.project.devices) == 1 and window.document.path is None
    monkeypatch.setattr(window, "ask_save_changes", lambda: "discard")
    monkeypatch.setattr(window, "ask_open_path", lambda: str(EXAMPLE))
    assert window.open_dialog()
    assert window.document.path == str(EXAMPLE)
    assert not window.isWindowModified()
    assert window.windowTitle() == "saxpy2-gtx970.gpm[*] — gpumodeler"


def test_save_and_reopen_gives_an_equal_project(window, tmp_path):
    path = tmp_path / "saxpy2.gpm"
    shutil.copyfile(EXAMPLE, path)
    assert window.open_path(str(path))
    doc = window.document
    assert set(window.system_editor.scene.device_items) == set(doc.project.devices)
    gpu = next(d.id for d in doc.project.devices.values() if d.kind == "gpu")
    doc.push(SetOverride("devices", gpu, "sms", 16))
    host = window.system_editor.add_device("host", "Gajger GTX TITAN X testbed host",
                                           QPointF(0, 400))
    new_gpu = window.system_editor.add_device("gpu", "GeForce GTX 980", QPointF(400, 400))
    doc.push(AddConnection(Connection("link9", "PCIe 2.0 x16", host, new_gpu, "pcie")))
    assert window.isWindowModified()
    window.save_action.trigger()
    assert not window.isWindowModified()
    edited = doc.project
    assert window.open_path(str(path))
    assert window.document.project == edited
    assert window.document.project.devices[gpu].overrides == {"sms": 16}
    assert set(window.system_editor.scene.connection_items) == set(edited.connections)
    assert settings.recent_files()[0] == str(path)


def test_a_file_that_cannot_be_opened_is_reported_and_nothing_is_lost(window, monkeypatch,
                                                                       tmp_path):
    device_id = _add_gpu(window)
    bad = tmp_path / "not-a-project.gpm"
    bad.write_text("hello, I am not a gpumodeler project")
    shown = []
    monkeypatch.setattr(QMessageBox, "critical",
                        staticmethod(lambda parent, title, text: shown.append((title, text))))
    assert not window.open_path(str(bad), ask=False)
    assert shown and str(bad) in shown[0][1] and "Cannot open project" == shown[0][0]
    assert device_id in window.document.project.devices and window.isWindowModified()
    assert not window.open_path(str(tmp_path / "missing.gpm"), ask=False)
    assert len(shown) == 2


def test_recent_files_and_window_layout_are_remembered(window, qtbot, catalog, tmp_path):
    path = tmp_path / "a.gpm"
    shutil.copyfile(EXAMPLE, path)
    window.open_path(str(path))
    window.fill_recent_menu()
    assert window.recent_menu.actions()[0].text() == "a.gpm"
    window.inspector_dock.toggleViewAction().trigger()  # the user hides the inspector
    assert window.inspector_dock.isHidden()
    assert window.close()
    assert settings.app_settings().value("main_window/geometry") is not None
    again = MainWindow(catalog)
    qtbot.addWidget(again)
    again.show()
    assert again.inspector_dock.isHidden()  # the dock layout came back
    again.tabs.setCurrentIndex(2)
    again.tabs.setCurrentIndex(0)
    assert again.inspector_dock.isHidden()


def test_screenshot_holds_every_tab(window, tmp_path):
    assert window.open_path(str(EXAMPLE))
    out = tmp_path / "shot.png"
    save_composite(window, str(out), (1200, 800))
    image = QImage(str(out))
    assert image.width() > 2 * 1200 and image.height() > 2 * 800  # a 2×2 grid of full grabs


def _sweep_curve(window):
    kernel_item, _ = window.launch_panel.sweep.plot._curves[0]
    return kernel_item.getData()


def test_opening_the_example_shows_its_saved_sweep(window, qtbot):
    """A newcomer sees a curve at once: the launch's first saved sweep runs by itself."""
    window.build_all_tabs()  # the Launch tab exists before the project is opened
    assert window.open_path(str(EXAMPLE))
    sweep = window.launch_panel.sweep
    assert sweep.saved_combo.currentData() == "sweep1" and sweep.variable == "a"
    assert (sweep.from_edit.text(), sweep.to_edit.text(), sweep.points_spin.value()) == ("1", "4096", 13)
    qtbot.waitUntil(lambda: sweep.result is not None and not window.is_busy(), timeout=10_000)
    xs, ys = _sweep_curve(window)
    assert len(xs) == 13 and np.isfinite(ys).all() and ys.max() > 0
    assert sweep.result.x[0] == pytest.approx(1) and sweep.result.x[-1] == pytest.approx(4096)


def test_screenshot_waits_for_the_sweep(window, monkeypatch, tmp_path):
    """The screenshot shows the saved sweep's curve, even when the sweep takes a while."""
    from gpumodeler.ui import screenshot, workers
    slow_sweep = workers.run_sweep

    def slow(*args, **kwargs):
        time.sleep(1.0)  # longer than the settling before the grabs
        return slow_sweep(*args, **kwargs)
    monkeypatch.setattr(workers, "run_sweep", slow)
    seen = []
    grab_tabs = screenshot.grab_tabs

    def spy(win):
        seen.append((win.is_busy(), _sweep_curve(win)))
        return grab_tabs(win)
    monkeypatch.setattr(screenshot, "grab_tabs", spy)
    assert window.open_path(str(EXAMPLE))
    save_composite(window, str(tmp_path / "shot.png"), (1200, 800))
    ((busy, (xs, ys)),) = seen
    assert not busy and len(xs) == 13 and np.isfinite(ys).all()


def test_gui_command_checks_its_arguments_without_qt(capsys, tmp_path):
    assert cli_main(["gui", str(tmp_path / "missing.gpm")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert cli_main(["gui", str(EXAMPLE), "--screenshot", str(tmp_path / "x.jpg")]) == 2
    assert ".png" in capsys.readouterr().err


def test_delete_in_the_inspector_reverts_instead_of_deleting(window, qtbot):
    device_id = _add_gpu(window)
    window.document.push(SetOverride("devices", device_id, "sms", 16))
    window.activateWindow()
    inspector = window.inspector
    inspector.tree.setFocus()
    inspector.tree.setCurrentIndex(inspector.value_index("sms"))
    qtbot.waitUntil(lambda: inspector.tree.hasFocus())
    window.edit_actions["delete"].trigger()
    assert device_id in window.document.project.devices
    assert window.document.project.devices[device_id].overrides == {}


def test_install_desktop_entry_writes_the_menu_files(tmp_path, capsys):
    share = tmp_path / "share"
    assert cli_main(["install-desktop-entry", "--prefix", str(share)]) == 0
    entry = (share / "applications" / "org.gpumodeler.gpumodeler.desktop").read_text()
    exec_line = next(line for line in entry.splitlines() if line.startswith("Exec="))
    assert exec_line.endswith(" %f") and "gpumodeler" in exec_line
    assert (share / "icons/hicolor/scalable/apps/gpumodeler.svg").read_text().startswith("<?xml")
    assert (share / "metainfo/org.gpumodeler.gpumodeler.metainfo.xml").exists()
    assert (share / "mime/packages/org.gpumodeler.gpumodeler.mime.xml").exists()
    assert cli_main(["install-desktop-entry", "--prefix", str(share), "--uninstall"]) == 0
    assert not (share / "applications" / "org.gpumodeler.gpumodeler.desktop").exists()
