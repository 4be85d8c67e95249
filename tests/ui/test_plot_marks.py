"""The sweep plot: the on-screen legend is placed by the exported figure's rule (never over
the curves), a launch without transfers gets no "kernel + transfers" curve, and an exported
figure's markers and lines are sized for its preset, the same in a PNG and an SVG."""
import re

import numpy as np
import pytest
from PySide6.QtGui import QImage

from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.ui.plots.figure import figure_size
from gpumodeler.ui.plots.legend_place import covers_data, obstacles
from gpumodeler.ui.screenshot import settle

# the first GPU's total curve (sweep_plot.PAIRS): in the example's loop sweep it is flat over
# the first decades, clear of the plot's edges (the kernel's lies on the x axis, its markers
# half clipped by the plot area)
TOTAL_RGB = (0xFF, 0x7F, 0x0E)


@pytest.fixture
def panel(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    w = LaunchPanel(doc)
    w.resize(1200, 800)
    w.show()
    qtbot.addWidget(w)
    yield w
    w.sweep.cancel()


def run(panel, qtbot, variable, lo, hi, log=False):
    sweep = panel.sweep
    sweep.set_variable(variable)
    sweep.from_edit.setText(lo)
    sweep.to_edit.setText(hi)
    sweep.log_check.setChecked(log)
    sweep.points_spin.setValue(13)  # few enough points to be drawn with markers
    sweep.result = None
    assert sweep.run()
    qtbot.waitUntil(lambda: sweep.result is not None, timeout=20000)
    settle(50)
    return sweep


def _legend_is_clear(plot) -> bool:
    legend = plot.plot.legend
    rect = legend.sceneBoundingRect()
    if plot.legend_corner == "above the plot":
        return not rect.intersects(plot.plot.getViewBox().sceneBoundingRect())
    return not covers_data(rect, *obstacles(plot.plot))


@pytest.mark.parametrize("height", [230, 420])
def test_on_screen_legend_covers_no_data(panel, qtbot, height):
    """The example's loop sweep: its flat first points lie where a legend at the top left
    with a fixed headroom covered them on a short plot."""
    sweep = run(panel, qtbot, "a", "1", "4096", log=True)
    plot = sweep.plot
    plot.widget.setFixedSize(760, height)
    settle(100)
    assert plot.legend_corner
    assert _legend_is_clear(plot), plot.legend_corner
    # and after a resize, placed again
    plot.widget.setFixedSize(1000, height + 60)
    settle(100)
    assert plot._placed_size == plot.plot.geometry().size()
    assert _legend_is_clear(plot)


def test_no_transfers_no_total_curve(panel, qtbot):
    sweep = run(panel, qtbot, "data_size", "1e6", "1e8")
    labels = [label.text for _, label in sweep.plot.legend.items]
    assert "kernel + transfers" in labels  # the example's launch copies its data
    assert panel.update_launch("transfers", transfers=())
    sweep = run(panel, qtbot, "data_size", "1e6", "1e8")
    labels = [label.text for _, label in sweep.plot.legend.items]
    assert "kernel" in labels and "kernel + transfers" not in labels
    kernel, total = sweep.plot._curves[0]
    assert kernel.isVisible() and not total.isVisible()


def _runs(image: QImage, rgb, region) -> np.ndarray:
    """The longest vertical run of pixels near colour ``rgb`` in each column of ``region``
    (x0, x1, y0, y1 as fractions of the image)."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    w, h = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())[:, : 4 * w]
    px = raw.reshape(h, w, 4)[..., 2::-1].astype(int)  # BGRA -> RGB
    x0, x1, y0, y1 = (round(f * n) for f, n in zip(region, (w, w, h, h)))
    near = (np.abs(px[y0:y1, x0:x1] - np.array(rgb)).sum(axis=2) < 90)
    runs = []
    for column in near.T:
        best = count = 0
        for v in column:
            count = count + 1 if v else 0
            best = max(best, count)
        runs.append(best)
    return np.array(runs)


def _svg_marks(svg: str, colour: str) -> tuple[float, float, float]:
    """(marker diameter, curve stroke width, figure width) in the SVG's units."""
    width = float(re.search(r'viewBox="0 0 ([0-9.]+) ', svg).group(1))
    scales = [float(m) for m in re.findall(
        rf'<g fill="{colour}"[^>]*transform="matrix\(([0-9.]+),0,0,\1,', svg)]
    strokes = [float(m) for m in re.findall(rf'stroke="{colour}"[^>]*?stroke-width="([0-9.]+)"', svg)]
    assert scales and strokes
    return max(set(scales), key=scales.count), max(set(strokes), key=strokes.count), width


@pytest.mark.parametrize("preset", ["two-column", "one-column"])
def test_marks_sized_for_the_preset_alike_in_png_and_svg(panel, qtbot, tmp_path, preset):
    sweep = run(panel, qtbot, "a", "1", "4096", log=True)
    size = figure_size(preset)
    sweep.plot.export_figure(str(tmp_path / "f.png"), size)
    sweep.plot.export_figure(str(tmp_path / "f.svg"), size)
    # the SVG: a marker is a path scaled to its diameter, a curve a stroke of its width
    marker_svg, line_svg, width_svg = _svg_marks((tmp_path / "f.svg").read_text(encoding="utf-8"), "#ff7f0e")
    points_wide = size.width_in * 72
    assert marker_svg / width_svg == pytest.approx(size.marker_pt / points_wide, rel=0.02)
    assert line_svg / width_svg == pytest.approx(size.line_pt / points_wide, rel=0.02)
    # the PNG: where the total's curve is flat (its first points, bottom left), a column
    # through a marker holds the marker's diameter of its colour, one between them the line's
    image = QImage(str(tmp_path / "f.png"))
    runs = _runs(image, TOTAL_RGB, (0.08, 0.45, 0.45, 0.97))
    runs = runs[runs > 0]
    marker_png, line_png = np.percentile(runs, 97), np.median(runs)
    px_per_pt = size.dpi / 72
    assert marker_png == pytest.approx(size.marker_pt * px_per_pt, rel=0.2)
    assert line_png == pytest.approx(size.line_pt * px_per_pt, rel=0.3)
    # the same share of the figure's width in both files
    assert marker_png / image.width() == pytest.approx(marker_svg / width_svg, rel=0.2)
    assert line_png / image.width() == pytest.approx(line_svg / width_svg, rel=0.3)
    # the on-screen plot is put back: its curves' pens and markers as before
    kernel, _ = sweep.plot._curves[0]
    assert kernel.opts["symbolSize"] == 6 and kernel.opts["pen"].widthF() == 2


def test_large_linear_x_values_have_prefixed_ticks(panel, qtbot):
    sweep = run(panel, qtbot, "data_size", "1e6", "1e9")
    axis = sweep.plot.plot.getAxis("bottom")
    assert "x1e" not in axis.labelString() and "×" not in axis.labelString()
    assert axis.tickStrings([0.0, 2.5e8, 5e8, 1e9], 1.0, 2.5e8) == ["0", "0.25G", "0.5G", "1G"]
    assert axis.tickStrings([2e5, 4e5], 1.0, 2e5) == ["200k", "400k"]
    assert axis.tickStrings([10.0, 20.0], 1.0, 10.0) == ["10", "20"]


def test_the_launchs_mark_names_its_own_value_after_another_sweep(panel, qtbot):
    """The legend's "this launch" entry follows the swept variable: after a block-size sweep
    (the launch's 256 threads) a sweep of the loop variable names the launch's a = 128."""
    labels = lambda s: [label.text for _, label in s.plot.legend.items]
    block = panel.launch.block_size
    sweep = run(panel, qtbot, "block_size", "32", "1024")
    assert f"this launch ({block})" in labels(sweep)
    a = panel.launch.variables["a"]
    sweep = run(panel, qtbot, "a", "0", str(2 * a))
    assert f"this launch ({a:g})" in labels(sweep) and f"this launch ({block})" not in labels(sweep)
