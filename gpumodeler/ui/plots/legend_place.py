"""Where a figure's legend goes: a corner of the plot area that no data crosses.

An exported figure (:mod:`.figure`) is laid out at its printed size, where the legend takes
a larger share of the plot than on screen. Before it is rendered, :func:`place_legend`

1. lowers the legend's column count until it fits the plot area's width (a one-column
   figure cannot hold three entries side by side);
2. tries the corners in turn — top left, top right, bottom right, bottom left — and keeps
   the first whose rectangle (plus a margin) no curve segment, measured point, bar or line
   label crosses;
3. when every corner is covered, keeps the top left and raises the top of the y range just
   enough that all data lies below the legend (in display coordinates, so a log axis too),
   provided no line label (an occupancy knee) is then under it;
4. otherwise puts the legend outside the plot area, above it (the hidden top axis's row of
   the plot's layout is opened to the legend's height).

Geometry is in scene coordinates: each data item's points go through its own scene
transform, curves count as segments (a line between two points that passes under the
legend covers it as much as a point would). Pure geometry apart from reading the items;
:func:`legend_state` / :func:`restore_legend` put the on-screen plot back afterwards.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

#: Space between the legend and the plot area's edge, in scene pixels.
EDGE = 6.0
#: Space kept between the legend and any data.
CLEARANCE = 3.0
#: (name, offset sign x, offset sign y): LegendItem anchors to the corner its offset points
#: from (positive: from the left/top, negative: from the right/bottom).
CORNERS = (("top left", 1, 1), ("top right", -1, 1), ("bottom right", -1, -1),
           ("bottom left", 1, -1))


def _map(item, x, y) -> tuple[np.ndarray, np.ndarray]:
    """Item-local points (x, y arrays) in scene coordinates."""
    t = item.sceneTransform()
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return (t.m11() * x + t.m21() * y + t.dx(), t.m12() * x + t.m22() * y + t.dy())


def obstacles(plot_item) -> tuple[np.ndarray, list[QRectF]]:
    """What the legend must not cover: curve segments and points as an (n, 4) array of
    scene segments (x0, y0, x1, y1; a point is a segment of length 0), and scene rectangles
    (bars, the labels of vertical lines)."""
    segments, rects = [], []
    for item in plot_item.items:
        if not item.isVisible():
            continue
        if isinstance(item, pg.PlotDataItem):
            x, y = item.getData()
            if x is None or len(x) == 0:
                continue
            sx, sy = _map(item, x, y)
            ok = np.isfinite(sx) & np.isfinite(sy)
            if item.opts.get("pen") is not None and len(sx) > 1:
                both = ok[:-1] & ok[1:]
                segments.append(np.column_stack([sx[:-1], sy[:-1], sx[1:], sy[1:]])[both])
            segments.append(np.column_stack([sx, sy, sx, sy])[ok])
        elif isinstance(item, pg.ScatterPlotItem):
            x, y = item.getData()
            if len(x):
                sx, sy = _map(item, x, y)
                ok = np.isfinite(sx) & np.isfinite(sy)
                segments.append(np.column_stack([sx, sy, sx, sy])[ok])
        elif isinstance(item, pg.BarGraphItem):
            opts = item.opts
            xs = np.atleast_1d(np.asarray(opts.get("x") if opts.get("x") is not None else [], float))
            hs = np.atleast_1d(np.asarray(opts.get("height") if opts.get("height") is not None else [], float))
            width = float(opts.get("width") or 0.0)
            y0 = float(opts.get("y0") or 0.0)
            t = item.sceneTransform()
            for x, h in zip(xs, hs):
                if np.isfinite(x) and np.isfinite(h):
                    rects.append(t.mapRect(QRectF(x - width / 2, min(y0, y0 + h), width, abs(h))))
        elif isinstance(item, pg.InfiniteLine):
            label = getattr(item, "label", None)
            if label is not None and label.isVisible() and label.format:
                rects.append(label.sceneBoundingRect())
    array = np.concatenate(segments) if segments else np.zeros((0, 4))
    return array, rects


def segments_hit(rect: QRectF, segments: np.ndarray) -> np.ndarray:
    """Which segments cross or touch ``rect`` (Liang–Barsky clipping, vectorized)."""
    if len(segments) == 0:
        return np.zeros(0, dtype=bool)
    x0, y0, x1, y1 = segments.T
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = np.zeros(len(segments)), np.ones(len(segments))
    hit = np.ones(len(segments), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 - rect.left()), (dx, rect.right() - x0),
                     (-dy, y0 - rect.top()), (dy, rect.bottom() - y0)):
            parallel = p == 0
            hit &= ~(parallel & (q < 0))
            r = q / p
            t0 = np.where(~parallel & (p < 0), np.maximum(t0, r), t0)
            t1 = np.where(~parallel & (p > 0), np.minimum(t1, r), t1)
    return hit & (t0 <= t1)


def covers_data(rect: QRectF, segments: np.ndarray, rects: list[QRectF]) -> bool:
    """True when ``rect`` (grown by the clearance) covers any of the obstacles."""
    grown = rect.adjusted(-CLEARANCE, -CLEARANCE, CLEARANCE, CLEARANCE)
    return bool(segments_hit(grown, segments).any()) or any(grown.intersects(r) for r in rects)


#: The row of a PlotItem's grid layout that holds the (hidden) top axis: above the plot area.
_TOP_ROW = 1


def legend_state(plot_item) -> tuple:
    """What :func:`place_legend` may change, for :func:`restore_legend`."""
    legend, layout = plot_item.legend, plot_item.layout
    labels = [(label, label.orthoPos) for label in _line_labels(plot_item)]
    return (legend.offset, legend.columnCount, legend.parentItem(),
            layout.rowMinimumHeight(_TOP_ROW), layout.rowMaximumHeight(_TOP_ROW), labels)


def restore_legend(plot_item, state) -> None:
    legend = plot_item.legend
    offset, columns, parent, low, high, labels = state
    for label, position in labels:
        label.setPosition(position)
    plot_item.layout.setRowMinimumHeight(_TOP_ROW, low)
    plot_item.layout.setRowMaximumHeight(_TOP_ROW, high)
    if legend.columnCount != columns:
        legend.setColumnCount(columns)
    if legend.parentItem() is not parent:
        legend.setParentItem(parent)  # anchors it again at its offset
    legend.setOffset(offset)


def _fit_columns(legend, width: float) -> None:
    """Fewer columns until the legend is no wider than ``width`` (or has one column)."""
    columns = legend.columnCount
    legend.updateSize()
    while columns > 1 and legend.sceneBoundingRect().width() > width:
        columns -= 1
        legend.setColumnCount(columns)
        legend.updateSize()


def place_legend(plot_item) -> str:
    """Put ``plot_item``'s legend where it covers no data (module docstring); returns the
    corner chosen, "top left (headroom)" when the y range had to make room. Call with the
    plot laid out at its final size."""
    legend = plot_item.legend
    if legend is None or not legend.items:
        return ""
    vb = plot_item.getViewBox()
    vb.prepareForPaint()  # the auto range and the view's transform follow lazily (next paint)
    area = vb.sceneBoundingRect()
    _fit_columns(legend, area.width() - 2 * EDGE)
    segments, rects = obstacles(plot_item)
    for name, sx, sy in CORNERS:
        legend.setOffset((sx * EDGE, sy * EDGE))
        if not covers_data(legend.sceneBoundingRect(), segments, rects):
            return name
    legend.setOffset((EDGE, EDGE))
    y_range = vb.viewRange()[1]
    _make_headroom(plot_item, legend.sceneBoundingRect().bottom() + 2 * CLEARANCE)
    segments, _ = obstacles(plot_item)
    if not covers_data(legend.sceneBoundingRect(), segments, []) \
            and _clear_line_labels(plot_item, legend.sceneBoundingRect()):
        return "top left (headroom)"
    vb.setYRange(*y_range, padding=0)
    vb.updateMatrix()
    _put_above(plot_item)
    return "above the plot"


def _line_labels(plot_item) -> list:
    labels = []
    for item in plot_item.items:
        label = getattr(item, "label", None) if isinstance(item, pg.InfiniteLine) else None
        if item.isVisible() and label is not None and label.isVisible() and label.format:
            labels.append(label)
    return labels


def _clear_line_labels(plot_item, keep_out: QRectF) -> bool:
    """Move the labels of vertical lines (occupancy knees) down along their line, in steps,
    until none is under ``keep_out`` or over another; False when one cannot be placed."""
    placed: list[QRectF] = []
    grown = keep_out.adjusted(-CLEARANCE, -CLEARANCE, CLEARANCE, CLEARANCE)
    for label in _line_labels(plot_item):
        position = label.orthoPos
        while True:
            rect = label.sceneBoundingRect()
            if not rect.intersects(grown) and not any(rect.intersects(r) for r in placed):
                placed.append(rect)
                break
            position -= 0.02
            if position < 0.02:
                return False
            label.setPosition(position)
            label.updatePosition()
    return True


def _put_above(plot_item) -> None:
    """The legend outside the plot area: centred in a row opened above it."""
    legend, vb, layout = plot_item.legend, plot_item.getViewBox(), plot_item.layout
    height = legend.boundingRect().height() + 2 * EDGE
    layout.setRowMinimumHeight(_TOP_ROW, height)
    layout.setRowMaximumHeight(_TOP_ROW, height)
    layout.activate()
    vb.updateMatrix()
    area = vb.geometry()  # in the plot item's coordinates
    legend.setParentItem(plot_item)
    # the legend's bottom centre EDGE above the plot area's top centre
    legend.anchor(itemPos=(0.5, 1), parentPos=(0.5, 0),
                  offset=(area.center().x() - plot_item.geometry().width() / 2, area.top() - EDGE))


def _make_headroom(plot_item, below: float) -> None:
    """Raise the top of the y range so that the highest data point maps below the scene y
    ``below`` (the bottom edge of a legend at the top)."""
    vb = plot_item.getViewBox()
    area = vb.sceneBoundingRect()
    (_, _), (y_low, y_high) = vb.viewRange()
    tops = []
    for item in plot_item.items:
        if isinstance(item, (pg.PlotDataItem, pg.ScatterPlotItem)) and item.isVisible():
            y = item.getData()[1]
            if y is not None and len(y):
                y = np.asarray(y, dtype=float)
                y = y[np.isfinite(y)]
                if y.size:
                    tops.append(float(y.max()))
        elif isinstance(item, pg.BarGraphItem) and item.isVisible() and item.opts.get("height") is not None:
            h = np.asarray(item.opts["height"], dtype=float)
            h = h[np.isfinite(h)]
            if h.size:
                tops.append(float(h.max()) + float(item.opts.get("y0") or 0.0))
    if not tops or area.height() <= 0:
        return
    top = max(tops)
    share = min(max((below - area.top()) / area.height(), 0.0), 0.85)  # of the height, from the top
    # the data top sits at ``share`` of the height from the top: (hi - top) = share (hi - low)
    needed = (top - share * y_low) / (1.0 - share)
    if needed > y_high:
        vb.setYRange(y_low, needed, padding=0)
        vb.updateMatrix()
