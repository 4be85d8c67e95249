"""The HTML report (:mod:`gpumodeler.report.html`) drawn offscreen to an image, for the
manual's pictures of it.

Qt's rich text (``QTextDocument``) lays out the report's HTML but cannot draw inline SVG, and
QtWebEngine is not available: each ``<svg>…</svg>`` figure is drawn with QtSvg's
``QSvgRenderer`` to an image of the figure's own size, and the document is given those images
as resources in place of the figures. The report's HTML itself is not changed — only the copy
given to the document.
"""
from __future__ import annotations

import re

from PySide6.QtCore import QByteArray, QRectF, QSize, QUrl
from PySide6.QtGui import QColor, QImage, QPainter, QTextDocument
from PySide6.QtSvg import QSvgRenderer

_SVG = re.compile(r"<svg\b.*?</svg>", re.S)

#: the white page behind the report (its CSS sets none, a browser shows white)
PAGE = QColor("white")


def figure_image(svg: str) -> QImage:
    """The inline SVG figure ``svg`` drawn to an image of its own size (its width and height
    attributes, else its view box); a 1×1 white image when QtSvg cannot read it."""
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    size = renderer.defaultSize() if renderer.isValid() else QSize(1, 1)
    if size.isEmpty():
        size = QSize(1, 1)
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(PAGE)
    if renderer.isValid():
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size.width(), size.height()))
        painter.end()
    return image


def with_figures_as_images(html: str) -> tuple[str, dict[str, QImage]]:
    """``html`` with each inline ``<svg>`` figure replaced by an ``<img>`` of a resource name,
    and the images by name."""
    images: dict[str, QImage] = {}

    def swap(match: re.Match) -> str:
        name = f"report-figure-{len(images) + 1}.png"
        images[name] = figure_image(match.group(0))
        size = images[name].size()
        return f'<img src="{name}" width="{size.width()}" height="{size.height()}">'

    return _SVG.sub(swap, html), images


def report_document(html: str, width: int) -> QTextDocument:
    """The report laid out ``width`` pixels wide, its figures drawn as images."""
    text, images = with_figures_as_images(html)
    doc = QTextDocument()
    for name, image in images.items():
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), image)
    doc.setHtml(text)
    doc.setTextWidth(width)
    return doc


def anchor_top(doc: QTextDocument, anchor: str) -> float | None:
    """The height in ``doc`` where the element named ``anchor`` (an ``id``) begins, or None."""
    layout = doc.documentLayout()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if anchor in it.fragment().charFormat().anchorNames():
                return layout.blockBoundingRect(block).top()
            it += 1
        block = block.next()
    return None


def render(doc: QTextDocument, top: float = 0.0, height: float | None = None) -> QImage:
    """The band of ``doc`` from ``top`` on, ``height`` pixels high (to its end when None),
    on a white page as wide as the document's text width."""
    width = round(doc.textWidth())
    bottom = doc.size().height() if height is None else top + height
    image = QImage(max(width, 1), max(round(bottom - top), 1), QImage.Format.Format_RGB32)
    image.fill(PAGE)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.translate(0, -top)
    doc.drawContents(painter, QRectF(0, top, width, bottom - top))
    painter.end()
    return image


def first_screen(html: str, size: tuple[int, int] = (1280, 720)) -> QImage:
    """What a window of ``size`` shows of the report when it opens."""
    return render(report_document(html, size[0]), 0.0, size[1])


def section(html: str, anchor: str, next_anchor: str, width: int = 1280) -> QImage:
    """The report's part from the heading ``anchor`` to the heading ``next_anchor`` (both
    ``id``s of :data:`gpumodeler.report.html.OUTLINE`); ValueError when one is missing."""
    doc = report_document(html, width)
    top, bottom = anchor_top(doc, anchor), anchor_top(doc, next_anchor)
    if top is None or bottom is None or bottom <= top:
        raise ValueError(f"the report has no part from #{anchor} to #{next_anchor}")
    return render(doc, top, bottom - top)


__all__ = ["figure_image", "with_figures_as_images", "report_document", "anchor_top", "render",
           "first_screen", "section"]
