"""Figures: in an exported figure (one- and two-column presets) the legend covers no data.
Geometry, not pixels: the legend's scene rectangle against every curve point (and the
segments between them), mapped to the scene the way Qt maps them, and the knee labels."""
import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF

from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.ui.plots.figure import figure_size, laid_out
from gpumodeler.ui.plots.legend_place import segments_hit

GPUS = ("GeForce GTX 970", "GeForce GTX 980")


@pytest.fixture
def panel(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    w = LaunchPanel(doc)
    w.resize(1200, 800)
    qtbot.addWidget(w)
    yield w
    w.sweep.cancel()


def _run(panel, qtbot, variable, gpus=()):
    sweep = panel.sweep
    sweep.set_variable(variable)
    if gpus:
        sweep.set_gpus(gpus)
    sweep.result = None
    assert sweep.run()
    qtbot.waitUntil(lambda: sweep.result is not None and not sweep.is_busy(), timeout=20000)
    return sweep.plot.plot


def _scene_points(plot_item):
    """Every drawn data point in scene coordinates (each curve item's own mapToScene)."""
    curves = []
    for item in plot_item.items:
        if isinstance(item, (pg.PlotDataItem, pg.ScatterPlotItem)) and item.isVisible():
            x, y = item.getData()
            if x is None:
                continue
            points = [item.mapToScene(QPointF(a, b)) for a, b in zip(x, y)
                      if np.isfinite(a) and np.isfinite(b)]
            if points:
                curves.append(np.array([(p.x(), p.y()) for p in points]))
    return curves


def _check(plot_item, size):
    legend = plot_item.legend
    with laid_out(plot_item, size, 96.0) as figure:
        rect = legend.sceneBoundingRect()
        area = plot_item.getViewBox().sceneBoundingRect()
        assert figure.contains(rect), "the legend is cut off by the figure's edge"
        curves = _scene_points(plot_item)
        assert curves
        for points in curves:
            inside = [(x, y) for x, y in points if rect.contains(QPointF(x, y))]
            assert not inside, f"{plot_item.legend_corner}: points under the legend {inside[:3]}"
            segments = np.column_stack([points[:-1], points[1:]])
            assert not segments_hit(rect, segments).any()
            # the data is still inside the plot area (headroom did not push it out)
            grown = area.adjusted(-2, -2, 2, 2)
            assert all(grown.contains(QPointF(x, y)) for x, y in points)
        for line in plot_item.items:
            label = getattr(line, "label", None) if isinstance(line, pg.InfiniteLine) else None
            if line.isVisible() and label is not None and label.format:
                assert not label.sceneBoundingRect().intersects(rect), label.format
        return plot_item.legend_corner


@pytest.mark.parametrize("preset", ["one-column", "two-column"])
@pytest.mark.parametrize("variable, gpus", [("data_size", ()), ("occupancy", GPUS),
                                            ("block_size", GPUS)])
def test_legend_covers_no_data(panel, qtbot, preset, variable, gpus):
    plot_item = _run(panel, qtbot, variable, gpus)
    legend = plot_item.legend
    plot_item.getViewBox().prepareForPaint()  # the range as the screen shows it
    before = (legend.offset, legend.columnCount, plot_item.getViewBox().viewRange(),
              legend.parentItem())
    corner = _check(plot_item, figure_size(preset))
    assert corner
    # the on-screen plot is put back as it was
    after = (legend.offset, legend.columnCount, plot_item.getViewBox().viewRange(),
             legend.parentItem())
    assert after[0] == before[0] and after[1] == before[1] and after[3] is before[3]
    assert np.allclose(after[2], before[2])


def test_a_one_column_legend_wraps_to_fit(panel, qtbot):
    plot_item = _run(panel, qtbot, "occupancy", GPUS)
    assert plot_item.legend.columnCount == 2  # on screen: one GPU per row
    with laid_out(plot_item, figure_size("one-column"), 96.0):
        assert plot_item.legend.columnCount == 1
        area = plot_item.getViewBox().sceneBoundingRect()
        assert plot_item.legend.sceneBoundingRect().width() <= area.width()
