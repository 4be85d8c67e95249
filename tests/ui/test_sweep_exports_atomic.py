"""Sweep plot and figure exports are written in one step (db.atomic_files.output_file):
never over the open project or a device database, no temporary file left, the reason
shown when the file cannot be written, and the file before a failed export kept whole."""
import os
from pathlib import Path

import pytest

from gpumodeler.ui.plots.figure import figure_size


@pytest.fixture
def swept(window, qtbot):
    sweep = window.launch_panel.sweep
    window.tabs.setCurrentIndex(2)
    sweep.run()
    qtbot.waitUntil(lambda: sweep.result is not None, timeout=10000)
    return sweep


@pytest.fixture
def window(example_window):
    return example_window


def _litter(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".")]


@pytest.mark.parametrize("name", ["f.png", "f.svg", "f.csv"])
def test_an_export_is_written_whole_and_leaves_nothing_else(swept, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"the file before")
    assert swept.export(str(path)), swept.message.text()
    assert path.read_bytes() != b"the file before" and path.stat().st_size > 100
    assert _litter(tmp_path) == []


@pytest.mark.parametrize("kind", ["png", "svg", "csv"])
def test_an_export_over_the_open_project_is_refused_with_the_reason(window, swept, kind,
                                                                    tmp_path):
    project = tmp_path / f"project.{kind}"     # the project saved under an export's name
    project.write_bytes(b"my project")
    window.document.set_path(str(project))
    assert not window.export_figure(str(project))
    assert project.read_bytes() == b"my project"
    assert "project file" in swept.message.text() and "refusing" in swept.message.text()
    assert "refusing" in window.refusal_text()
    assert _litter(tmp_path) == []


def test_an_export_over_a_device_database_is_refused(window, swept):
    user = Path(window.document.catalog.shipped_path)
    before = user.read_bytes()
    link = user.parent / "devices-link.svg"
    os.symlink(user, link)       # the database under a figure's name
    try:
        assert not swept.export(str(link))
        assert "device database" in swept.message.text()
    finally:
        link.unlink()
    assert user.read_bytes() == before


def test_a_figure_that_cannot_be_written_leaves_the_old_file_and_says_why(swept, tmp_path,
                                                                          monkeypatch):
    from PySide6.QtGui import QImage
    path = tmp_path / "f.png"
    path.write_bytes(b"the file before")
    monkeypatch.setattr(QImage, "save", lambda self, *a: False)
    assert not swept.export(str(path))
    assert "f.png" in swept.message.text()
    assert path.read_bytes() == b"the file before" and _litter(tmp_path) == []


def test_the_plot_exports_take_their_inputs(swept, tmp_path):
    """SweepPlot's own PNG and SVG exports (screen size) refuse an input the same way."""
    from gpumodeler.db.atomic_files import OutputError
    mine = tmp_path / "mine.png"
    mine.write_bytes(b"input")
    for export in (swept.plot.export_png, swept.plot.export_svg):
        with pytest.raises(OutputError):
            export(str(mine), inputs=[mine])
        export(str(tmp_path / "fresh.x"))
        assert (tmp_path / "fresh.x").stat().st_size > 100
    with pytest.raises(OutputError):
        swept.plot.export_figure(str(mine), figure_size(), inputs=[mine])
    assert mine.read_bytes() == b"input" and _litter(tmp_path) == []
