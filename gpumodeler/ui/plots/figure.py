"""Figures for reports: a plot rendered at a printed size (inches) and resolution (dpi).

The on-screen plot is a strip as wide as the window; a paper wants 3.5 in (one column) or
about 7.2 in (two columns) at 300 dpi, with text that stays readable at that size. The plot
item is laid out at the figure's size in *points* (1/72 in, scaled to the screen's logical
dpi so Qt's point-sized fonts come out at their point size on paper), its fonts set for
print, rendered into an image of width × dpi pixels (or an SVG whose text stays text), and
then put back as it was. The legend is placed for that size where it covers no data
(:mod:`.legend_place`: fewer columns if it is too wide, a free corner, else headroom).

Curves and markers are sized in points for the preset too (:func:`sized_marks`): a line
``line_pt`` wide, a marker ``marker_pt`` across, on paper, in a PNG at any dpi and in an SVG
alike. On screen, pyqtgraph draws both in device pixels (cosmetic pens, markers from a
pixmap atlas), so a 300-dpi PNG would get 6-pixel markers — a third of what the screen
shows, relative to the figure — and an SVG embedded pixmaps; while a figure is rendered, the
pens are given the preset's width in the output's pixels and the markers are drawn one by
one as vector paths at the preset's size.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QRectF, QSize, QSizeF
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen
from PySide6.QtSvg import QSvgGenerator

from .legend_place import legend_state, place_legend, restore_legend


@dataclass(frozen=True)
class FigureSize:
    """A printed figure: width and height in inches, raster resolution, font size, curve
    width and marker diameter in pt."""

    name: str
    width_in: float
    height_in: float
    dpi: int = 300
    font_pt: float = 8.0
    line_pt: float = 1.2
    marker_pt: float = 4.0


PRESETS = {
    "one-column": FigureSize("one column (3.5 in)", 3.5, 2.6, 300, 7.0, 1.0, 3.5),
    "two-column": FigureSize("two columns (7.2 in)", 7.2, 3.6, 300, 8.0, 1.2, 4.0),
    "slide": FigureSize("slide (10 in, 150 dpi)", 10.0, 5.6, 150, 12.0, 2.0, 6.0),
}
DEFAULT_PRESET = "two-column"


def figure_size(preset: str | None = None, dpi: int | None = None) -> FigureSize:
    """The preset (by key) with its dpi replaced by ``dpi`` when given."""
    size = PRESETS[preset or DEFAULT_PRESET]
    if dpi is not None:
        if not 50 <= dpi <= 1200:
            raise ValueError(f"dpi must be 50..1200, got {dpi}")
        size = replace(size, dpi=int(dpi))
    return size


def _scaled_pen(pen, width_px: float):
    """A copy of ``pen`` (QPen or pyqtgraph pen spec) ``width_px`` device pixels wide."""
    import pyqtgraph as pg
    new = QPen(pg.mkPen(pen))
    new.setWidthF(width_px)
    new.setCosmetic(True)
    return new


@contextmanager
def sized_marks(plot_item, size: FigureSize, logical_dpi: float, device_scale: float):
    """The curves and markers of ``plot_item`` sized for figure ``size`` while rendered with
    ``device_scale`` output pixels per scene pixel (a PNG: dpi / logical dpi; an SVG: 1).
    A curve's pen becomes ``line_pt`` wide (a dashed or dotted reference line keeps its
    width relative to a curve's: 2/3 of it; cosmetic, so in output pixels), a marker
    ``marker_pt`` across (in scene pixels, drawn at ``device_scale`` as a path). Put back
    afterwards."""
    import pyqtgraph as pg
    px_per_pt = logical_dpi / 72.0
    line_px = size.line_pt * px_per_pt * device_scale
    marker_px = size.marker_pt * px_per_pt
    export_opts = {"antialias": True, "resolutionScale": device_scale}
    undo = []
    try:
        items = list(plot_item.items)
        if plot_item.legend is not None:  # a legend sample's own item (the launch's line)
            items += [sample.item for sample, _ in plot_item.legend.items
                      if getattr(sample, "item", None) is not None and sample.item not in items]
        for item in items:
            if isinstance(item, pg.PlotDataItem):
                pen, symbol_size = item.opts.get("pen"), item.opts.get("symbolSize")
                undo.append(lambda i=item, p=pen, s=symbol_size: (i.setPen(p), i.setSymbolSize(s)))
                if pen is not None:
                    item.setPen(_scaled_pen(pen, line_px))
                if item.opts.get("symbol") is not None:
                    item.setSymbolSize(marker_px)
                for part in (item.scatter, item.curve):
                    part.setExportMode(True, export_opts)
                    undo.append(lambda p=part: p.setExportMode(False))
            elif isinstance(item, pg.ScatterPlotItem):
                sizes = item.data["size"].copy()
                pen = QPen(item.opts["pen"])
                undo.append(lambda i=item, s=sizes, p=pen: (i.setSize(s), i.setPen(p),
                                                           i.setExportMode(False)))
                item.setSize(marker_px * 1.25)  # measured points: a little larger than the curves'
                item.setPen(_scaled_pen(pen, 0.6 * line_px))
                item.setExportMode(True, export_opts)
            elif isinstance(item, pg.InfiniteLine):
                pen = QPen(item.pen)
                undo.append(lambda i=item, p=pen: i.setPen(p))
                item.setPen(_scaled_pen(pen, 2 / 3 * line_px))
        yield
    finally:
        for step in reversed(undo):
            step()


@contextmanager
def laid_out(plot_item, size: FigureSize, logical_dpi: float):
    """``plot_item`` laid out at the figure's size with print fonts and its legend placed
    clear of the data; yields the scene rectangle to render, then restores everything."""
    width, height = size.width_in * logical_dpi, size.height_in * logical_dpi
    old_geometry = plot_item.geometry()
    axes = [plot_item.getAxis(n) for n in ("left", "bottom")]
    old_fonts = [a.style.get("tickFont") for a in axes]
    old_labels = [a.labelStyle.copy() for a in axes]
    legend = plot_item.legend
    labels = [label for _, label in legend.items] if legend is not None else []
    old_opts = [dict(label.opts) for label in labels]
    tick = QFont()
    tick.setPointSizeF(size.font_pt)
    texts = [line.label for line in getattr(plot_item, "figure_texts", lambda: [])()]
    old_text_fonts = [t.textItem.font() for t in texts]
    vb = plot_item.getViewBox()
    vb.prepareForPaint()  # a pending auto range applied first: that is the range to restore
    old_range, old_auto = vb.viewRange(), list(vb.state["autoRange"])
    old_legend = legend_state(plot_item) if legend is not None else None
    try:
        for t in texts:
            t.setFont(tick)
        for a in axes:
            a.setStyle(tickFont=tick)
            a.setLabel(a.labelText, a.labelUnits, **dict(a.labelStyle, **{"font-size": f"{size.font_pt + 1:g}pt"}))
        if plot_item.titleLabel.text:
            plot_item.setTitle(plot_item.titleLabel.text, size=f"{size.font_pt + 1:g}pt", color="#222")
        for label in labels:
            label.setText(label.text, size=f"{size.font_pt:g}pt")
        if legend is not None:
            legend.updateSize()
            # the legend ignores transformations (constant size on screen), so it would not
            # scale with the rest when rendered at the figure's dpi
            legend.setFlag(legend.GraphicsItemFlag.ItemIgnoresTransformations, False)
        plot_item.setGeometry(QRectF(0, 0, width, height))
        plot_item.layout.activate()
        plot_item.legend_corner = place_legend(plot_item)
        yield QRectF(plot_item.sceneBoundingRect())
    finally:
        if legend is not None:
            restore_legend(plot_item, old_legend)
        vb.setRange(xRange=old_range[0], yRange=old_range[1], padding=0)
        for axis, auto in zip((vb.XAxis, vb.YAxis), old_auto):
            vb.enableAutoRange(axis, auto)
        for a, font, style in zip(axes, old_fonts, old_labels):
            a.setStyle(tickFont=font)
            a.setLabel(a.labelText, a.labelUnits, **style)
        for t, font in zip(texts, old_text_fonts):
            t.setFont(font)
        for label, opts in zip(labels, old_opts):
            label.opts = opts
            label.setText(label.text)
        if legend is not None:
            legend.updateSize()
            legend.setFlag(legend.GraphicsItemFlag.ItemIgnoresTransformations, True)
        if plot_item.titleLabel.text:
            plot_item.setTitle(plot_item.titleLabel.text, size="10pt", color="#222")
        plot_item.setGeometry(old_geometry)
        plot_item.layout.activate()


def export_figure(plot_item, path: str, size: FigureSize, title: str = "", logical_dpi: float = 96.0,
                  inputs=()) -> QSize:
    """Write ``plot_item`` to ``path`` (.png raster at ``size.dpi``; .svg vector with text as
    text) at the printed size; returns the pixel size written (SVG: in points).

    Written in one step (db.atomic_files.output_file): a temporary file renamed over
    ``path`` when complete, never one of ``inputs`` (the open project, the device
    databases); a failure is an OutputError (or OSError) naming the file and the reason,
    and leaves ``path`` as it was."""
    from gpumodeler.db.atomic_files import output_file
    kind = Path(path).suffix.lower()
    if kind not in (".png", ".svg"):
        raise ValueError(f"a figure is .png or .svg, got {Path(path).name!r}")
    device_scale = size.dpi / logical_dpi if kind == ".png" else 1.0
    with output_file(path, inputs=inputs, mode="path") as tmp, \
            laid_out(plot_item, size, logical_dpi) as source, \
            sized_marks(plot_item, size, logical_dpi, device_scale):
        scene = plot_item.scene()
        if kind == ".png":
            pixels = QSize(round(size.width_in * size.dpi), round(size.height_in * size.dpi))
            image = QImage(pixels, QImage.Format.Format_ARGB32)
            image.fill(QColor("white"))
            painter = QPainter(image)
            try:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
                scene.render(painter, QRectF(0, 0, pixels.width(), pixels.height()), source)
            finally:
                painter.end()
            # the resolution is set after painting: point-sized fonts were laid out at the
            # scene's logical dpi and scaled with everything else by the painter
            dots_per_m = round(size.dpi / 0.0254)
            image.setDotsPerMeterX(dots_per_m)
            image.setDotsPerMeterY(dots_per_m)
            if not image.save(str(tmp), "PNG"):   # (the temporary name has no .png)
                raise OSError(f"could not write {path}")
            return pixels
        generator = QSvgGenerator()
        generator.setFileName(str(tmp))
        points = QSizeF(size.width_in * 72, size.height_in * 72)
        generator.setSize(QSize(round(source.width()), round(source.height())))
        generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
        generator.setResolution(round(logical_dpi))
        generator.setTitle(title or "gpumodeler sweep")
        painter = QPainter(generator)
        try:
            painter.fillRect(QRectF(0, 0, source.width(), source.height()), QColor("white"))
            scene.render(painter, QRectF(0, 0, source.width(), source.height()), source)
        finally:
            painter.end()
        if Path(tmp).stat().st_size == 0:
            raise OSError(f"could not write {path}")
    return QSize(round(points.width()), round(points.height()))
