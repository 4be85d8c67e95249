"""Plots for reports: figure export at print sizes (PNG pixels = inches × dpi,
SVG with text as text), log y, kernel and total in different colours, the launch marker in
the legend and inside the sweep's x range, a knee line per GPU, an x axis with its unit, an
empty plot that says so."""
import pytest
from PySide6.QtGui import QImage

from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.ui.plots.figure import figure_size


@pytest.fixture
def panel(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    w = LaunchPanel(doc)
    w.resize(1200, 800)
    qtbot.addWidget(w)
    yield w
    w.sweep.cancel()


def run(panel, qtbot, variable, lo=None, hi=None, gpus=()):
    sweep = panel.sweep
    sweep.set_variable(variable)
    if gpus:
        sweep.set_gpus(gpus)
    if lo is not None:
        sweep.from_edit.setText(lo)
        sweep.to_edit.setText(hi)
    sweep.result = None
    assert sweep.run()
    qtbot.waitUntil(lambda: sweep.result is not None, timeout=20000)
    return sweep


def test_empty_plot_says_so(panel):
    assert panel.new_launch()  # a launch without a saved sweep
    plot = panel.sweep.plot
    assert plot.is_empty() and "Run sweep" in plot.message_text()


def test_two_column_png_and_svg(panel, qtbot, tmp_path):
    sweep = run(panel, qtbot, "data_size")
    sweep.figure_combo.setCurrentIndex(sweep.figure_combo.findData("two-column"))
    sweep.dpi_spin.setValue(300)
    assert sweep.export(str(tmp_path / "fig.png"))
    image = QImage(str(tmp_path / "fig.png"))
    assert (image.width(), image.height()) == (round(7.2 * 300), round(3.6 * 300))
    assert round(image.dotsPerMeterX() * 0.0254) == 300
    sweep.figure_combo.setCurrentIndex(sweep.figure_combo.findData("one-column"))
    assert sweep.export(str(tmp_path / "fig1.png"))
    assert QImage(str(tmp_path / "fig1.png")).width() == round(3.5 * 300)
    assert sweep.export(str(tmp_path / "fig.svg"))
    svg = (tmp_path / "fig.svg").read_text(encoding="utf-8")
    assert "<text" in svg and "Data size N" in svg
    # the on-screen plot is put back as it was
    assert sweep.plot.plot.geometry().width() < 7.2 * 96 + 400
    assert figure_size("two-column", 600).dpi == 600


def test_axes_colours_log_y_marker(panel, qtbot):
    sweep = run(panel, qtbot, "data_size")
    plot = sweep.plot
    assert "(threads)" in plot.x_title
    kernel, total = plot._curves[0]
    assert kernel.opts["pen"].color() != total.opts["pen"].color()
    labels = [label.text for _, label in plot.legend.items]
    assert any(t.startswith("this launch") for t in labels)
    sweep.log_y_check.setChecked(True)
    assert plot.plot.ctrl.logYCheck.isChecked() or plot._log_y
    # a marker outside the sweep range is not drawn and does not stretch the x range
    sweep = run(panel, qtbot, "data_size", "1000", "100000")
    assert not plot.base_line.isVisible()
    assert not any(label.text.startswith("this launch") for _, label in plot.legend.items)


def test_a_knee_per_gpu_below_the_legend(panel, qtbot):
    sweep = run(panel, qtbot, "occupancy", gpus=("GeForce GTX 970", "GeForce GTX 980"))
    plot = sweep.plot
    visible = [line for line in plot.knee_lines if line.isVisible()]
    assert len(visible) == 2
    assert all(line.label.format.endswith(tuple("0123456789")) for line in visible)
