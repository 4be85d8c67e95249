"""Drawable items of the system canvas. They know nothing of the project: the scene sets
their text, count, position and state (docs/architecture.md: items are dumb and settable)."""
from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (QBrush, QColor, QFont, QFontMetricsF, QIcon, QLinearGradient,
                           QPainter, QPainterPath, QPainterPathStroker, QPen)
from PySide6.QtWidgets import QGraphicsItem, QStyle

KIND_COLOURS = {"gpu": ("#e9f4ef", "#2f6f5e"), "host": ("#e8eff7", "#35608f")}
LINK_COLOURS = {"pcie": "#b8641e", "nvlink": "#3d8b37", "network": "#7a4fa3", "other": "#666666"}
OK_COLOUR, REFUSED_COLOUR, SELECTED_COLOUR = "#2e9d4f", "#c62828", "#1f6fd1"
#: below this on-screen scale the canvas is an overview: a card shows its title only and a
#: link label its name only, both enlarged (at most MAX_OVERVIEW_ZOOM times) to stay legible
OVERVIEW_LOD = 0.6
MAX_OVERVIEW_ZOOM = 2.2


def _font(point_size: float, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(point_size)
    font.setBold(bold)
    return font


class DeviceItem(QGraphicsItem):
    """A placed GPU or host: rounded box with a kind icon, a title, a line of key specs and
    a ×N badge for multi-GPU nodes. ``pos()`` is the top-left corner (the model's x, y)."""

    WIDTH, HEIGHT = 236.0, 74.0

    def __init__(self, device_id: str):
        super().__init__()
        self.device_id = device_id
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setAcceptHoverEvents(True)
        self.setZValue(1)
        self._kind, self._title, self._subtitle, self._count = "gpu", "", "", 1
        self._icon: QIcon | None = None
        self._problem = ""
        self._highlight: str | None = None  # None | "ok" | "refused"
        self._busy: float | None = None  # compute busy fraction of the last application run

    # ---- settable state
    def set_kind(self, kind: str) -> None:
        self._kind = kind
        self.update()

    def set_icon(self, icon: QIcon) -> None:
        self._icon = icon
        self.update()

    def set_title(self, text: str) -> None:
        self._title = text
        self.update()

    def set_subtitle(self, text: str) -> None:
        self._subtitle = text
        self.update()

    def set_count(self, count: int) -> None:
        self._count = count
        self.update()

    def set_problem(self, text: str) -> None:
        """A problem to flag on the item (device missing from the database...)."""
        self._problem = text
        self.setToolTip(text)
        self.update()

    def set_busy(self, fraction: float | None) -> None:
        """The busy fraction of the last application run (None: no run / not used)."""
        self._busy = fraction
        self.update()

    def busy_text(self) -> str:
        return "" if self._busy is None else f"busy {self._busy:.0%}"

    def set_highlight(self, state: str | None) -> None:
        """Feedback while a link is being drawn: "ok", "refused" or None."""
        self._highlight = state
        self.update()

    def title(self) -> str:
        return self._title

    def subtitle(self) -> str:
        return self._subtitle

    def count_text(self) -> str:
        return f"×{self._count}" if self._count > 1 else ""

    # ---- geometry
    def rect(self) -> QRectF:
        return QRectF(0, 0, self.WIDTH, self.HEIGHT)

    def boundingRect(self) -> QRectF:
        return self.rect().adjusted(-6, -6, 6, 6)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRoundedRect(self.rect(), 10, 10)
        return path

    def centre(self) -> QPointF:
        return self.mapToScene(self.rect().center())

    def edge_point(self, toward: QPointF) -> QPointF:
        """Where the line from the centre to ``toward`` (scene) leaves the box."""
        rect = self.sceneBoundingRect().adjusted(6, 6, -6, -6)
        centre = rect.center()
        dx, dy = toward.x() - centre.x(), toward.y() - centre.y()
        if dx == 0 and dy == 0:
            return centre
        sx = (rect.width() / 2) / abs(dx) if dx else float("inf")
        sy = (rect.height() / 2) / abs(dy) if dy else float("inf")
        s = min(sx, sy)
        return QPointF(centre.x() + dx * s, centre.y() + dy * s)

    def text_rects(self, overview: bool = False) -> dict[str, QRectF]:
        """Where the card's texts go (item coordinates), in rows that never overlap: the
        title (beside the ×N badge), the specs line, and, after an application run, the
        busy fraction with its gauge on a row of their own. In the ``overview`` (the canvas
        zoomed out below :data:`OVERVIEW_LOD`) the title takes the specs' room too."""
        left, width, height = 48.0, self.WIDTH, self.HEIGHT
        right_reserve = 48.0 if self._count > 1 else 8.0
        out = {"title": QRectF(left, 8, width - left - right_reserve, 22)}
        if self._count > 1:
            out["badge"] = QRectF(width - 44, 10, 36, 22)
        if overview:
            bottom = height - (18 if self._busy is not None else 8)
            out["title"] = QRectF(left, 8, width - left - right_reserve, bottom - 8)
            if self._busy is not None:
                out["gauge"] = QRectF(left, height - 14, width - left - 8, 5)
            return out
        if self._busy is None:
            out["subtitle"] = QRectF(left, 34, width - left - 8, 26)
            return out
        out["subtitle"] = QRectF(left, 33, width - left - 8, 19)
        busy_w = QFontMetricsF(_font(8)).horizontalAdvance("busy 100%") + 4
        out["busy"] = QRectF(left, height - 22, busy_w, 16)
        out["gauge"] = QRectF(left + busy_w + 6, height - 16, width - left - busy_w - 14, 4)
        return out

    # ---- drawing
    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        fill, accent = KIND_COLOURS.get(self._kind, ("#f2f2f2", "#555555"))
        rect = self.rect()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        gradient = QLinearGradient(rect.topLeft(), rect.bottomLeft())
        gradient.setColorAt(0, QColor("#ffffff"))
        gradient.setColorAt(1, QColor(fill))
        border = QColor(accent)
        width = 1.5
        if self._highlight == "ok":
            border, width = QColor(OK_COLOUR), 3.0
        elif self._highlight == "refused" or self._problem:
            border, width = QColor(REFUSED_COLOUR), 3.0 if self._highlight else 2.0
        elif selected:
            border, width = QColor(SELECTED_COLOUR), 3.0
        if self._count > 1:  # a stack of boards: offset shadows behind the box
            painter.setPen(QPen(QColor(accent), 1))
            painter.setBrush(QColor(fill).darker(104))
            painter.drawRoundedRect(rect.translated(5, -5), 10, 10)
        painter.setPen(QPen(border, width))
        painter.setBrush(QBrush(gradient))
        painter.drawRoundedRect(rect, 10, 10)
        painter.fillRect(QRectF(0, 10, 5, rect.height() - 20), QColor(accent))
        if self._icon is not None:
            self._icon.paint(painter, QRectF(12, 12, 28, 28).toRect())
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        overview = lod < OVERVIEW_LOD
        boxes = self.text_rects(overview)
        # zoomed out, the title alone, enlarged so that it stays about as large on screen
        title_font = _font(10.5 * (min(OVERVIEW_LOD / lod, MAX_OVERVIEW_ZOOM) if overview else 1.0), bold=True)
        while overview and QFontMetricsF(title_font).height() > boxes["title"].height() \
                and title_font.pointSizeF() > 10.5:
            title_font.setPointSizeF(title_font.pointSizeF() * 0.9)
        painter.setFont(title_font)
        painter.setPen(QColor("#1b1b1b"))
        title = QFontMetricsF(title_font).elidedText(self._title, Qt.TextElideMode.ElideRight,
                                                     boxes["title"].width())
        painter.drawText(boxes["title"], Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, title)
        if overview:
            self._paint_gauge(painter, boxes, accent)
            self._paint_badge(painter, boxes, accent)
            return
        sub_font = _font(9)
        painter.setFont(sub_font)
        painter.setPen(QColor(REFUSED_COLOUR) if self._problem else QColor("#3c3c3c"))
        sub = self._problem or self._subtitle
        sub = QFontMetricsF(sub_font).elidedText(sub, Qt.TextElideMode.ElideRight, boxes["subtitle"].width())
        painter.drawText(boxes["subtitle"], Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, sub)
        if self._busy is not None:  # "busy 25%" and a gauge, on a row of their own
            self._paint_gauge(painter, boxes, accent)
            painter.setPen(QColor("#3c3c3c"))
            painter.setFont(_font(8))
            painter.drawText(boxes["busy"], Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             self.busy_text())
        self._paint_badge(painter, boxes, accent)

    def _paint_gauge(self, painter: QPainter, boxes: dict, accent: str) -> None:
        if self._busy is None:
            return
        gauge = boxes["gauge"]
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#dddddd"))
        painter.drawRect(gauge)
        painter.setBrush(QColor(accent))
        painter.drawRect(QRectF(gauge.left(), gauge.top(), gauge.width() * max(0.0, min(1.0, self._busy)),
                                gauge.height()))

    def _paint_badge(self, painter: QPainter, boxes: dict, accent: str) -> None:
        if self._count > 1:
            badge = boxes["badge"]
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(accent))
            painter.drawRoundedRect(badge, 11, 11)
            painter.setPen(QColor("white"))
            painter.setFont(_font(9.5, bold=True))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, self.count_text())


class ConnectionItem(QGraphicsItem):
    """A link between two devices: a line (or a detour around other devices) coloured by
    link type, with a label (name and bandwidth). The scene sets the route and the label's
    place (:mod:`gpumodeler.core.system_routes`)."""

    def __init__(self, connection_id: str):
        super().__init__()
        self.connection_id = connection_id
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(2)  # the label stays readable when devices sit close together
        self._points: list[QPointF] = [QPointF(), QPointF()]
        self._label_centre = QPointF()
        self._overview_zoom = 1.0
        self._title, self._detail, self._link_type = "", "", "other"

    def set_route(self, points, label_centre: QPointF) -> None:
        """Draw the link along ``points`` (scene, at least two) with its label centred on
        ``label_centre``."""
        self.prepareGeometryChange()
        self._points = [QPointF(p) for p in points]
        self._label_centre = QPointF(label_centre)
        self.update()

    def set_line(self, p1: QPointF, p2: QPointF, label_at: float = 0.5) -> None:
        """A straight link with its label ``label_at`` of the way along it."""
        self.set_route([p1, p2], QLineF(p1, p2).pointAt(label_at))

    def line(self) -> QLineF:
        """The route's middle segment (the whole line of a straight link)."""
        k = (len(self._points) - 2) // 2
        return QLineF(self._points[k], self._points[k + 1])

    def points(self) -> list[QPointF]:
        return [QPointF(p) for p in self._points]

    def set_text(self, title: str, detail: str) -> None:
        self.prepareGeometryChange()
        self._title, self._detail = title, detail
        self.update()

    def set_link_type(self, link_type: str) -> None:
        self._link_type = link_type
        self.update()

    def title(self) -> str:
        return self._title

    def detail(self) -> str:
        return self._detail

    def set_overview_zoom(self, zoom: float) -> None:
        """Zoomed out (the view below :data:`OVERVIEW_LOD`), the label holds the link's name
        alone, ``zoom`` times larger so that it stays legible; 1: the usual two lines."""
        self.prepareGeometryChange()
        self._overview_zoom = zoom
        self.update()

    def label_size(self) -> tuple[float, float]:
        """The label's width and height: what the scene places."""
        if self._overview_zoom > 1:
            fm = QFontMetricsF(_font(9 * self._overview_zoom, True))
            return min(fm.horizontalAdvance(self._title) + 14, 240 * self._overview_zoom), fm.height() + 8
        fm_title, fm_detail = QFontMetricsF(_font(9, True)), QFontMetricsF(_font(8.5))
        width = min(max(fm_title.horizontalAdvance(self._title),
                        fm_detail.horizontalAdvance(self._detail)) + 14, 240)
        return width, fm_title.height() + fm_detail.height() + 8

    def label_rect(self) -> QRectF:
        """The label's box, in scene coordinates (the item sits at the origin)."""
        width, height = self.label_size()
        c = self._label_centre
        return QRectF(c.x() - width / 2, c.y() - height / 2, width, height)

    _label_rect = label_rect

    def _path(self) -> QPainterPath:
        path = QPainterPath(self._points[0])
        for p in self._points[1:]:
            path.lineTo(p)
        return path

    def boundingRect(self) -> QRectF:
        return self._path().boundingRect().adjusted(-6, -6, 6, 6).united(self.label_rect().adjusted(-2, -2, 2, 2))

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        shape = stroker.createStroke(self._path())
        shape.addRect(self.label_rect())
        return shape

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        colour = QColor(LINK_COLOURS.get(self._link_type, LINK_COLOURS["other"]))
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        pen = QPen(QColor(SELECTED_COLOUR) if selected else colour, 5 if selected else 3.5)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path())
        for end in (self._points[0], self._points[-1]):
            painter.setBrush(colour)
            painter.drawEllipse(end, 4, 4)
        label = self.label_rect()
        painter.setPen(QPen(QColor(SELECTED_COLOUR) if selected else colour, 1.2))
        painter.setBrush(QColor(255, 255, 255, 235))
        painter.drawRoundedRect(label, 6, 6)
        inner = label.adjusted(7, 4, -7, -4)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < OVERVIEW_LOD:   # zoomed out: the name alone, as large as the label holds
            font = _font(9, True)
            width = QFontMetricsF(font).horizontalAdvance(self._title) or 1.0
            grow = min(OVERVIEW_LOD / lod, MAX_OVERVIEW_ZOOM, inner.width() / width,
                       inner.height() / QFontMetricsF(font).height())
            font.setPointSizeF(9 * max(grow, 1.0))
            painter.setFont(font)
            painter.setPen(QColor("#1b1b1b"))
            painter.drawText(inner, Qt.AlignmentFlag.AlignCenter,
                             QFontMetricsF(font).elidedText(self._title, Qt.TextElideMode.ElideMiddle,
                                                            inner.width()))
            return
        title_font, detail_font = _font(9, True), _font(8.5)
        fm = QFontMetricsF(title_font)
        painter.setFont(title_font)
        painter.setPen(QColor("#1b1b1b"))
        title = fm.elidedText(self._title, Qt.TextElideMode.ElideMiddle, inner.width())
        painter.drawText(QRectF(inner.left(), inner.top(), inner.width(), fm.height()),
                         Qt.AlignmentFlag.AlignCenter, title)
        painter.setFont(detail_font)
        painter.setPen(QColor("#444444"))
        painter.drawText(QRectF(inner.left(), inner.top() + fm.height(), inner.width(),
                                QFontMetricsF(detail_font).height()),
                         Qt.AlignmentFlag.AlignCenter, self._detail)


class RubberLinkItem(QGraphicsItem):
    """The dashed line that follows the mouse while a link waits for its second device."""

    def __init__(self, link_type: str):
        super().__init__()
        self._line = QLineF()
        self._colour = QColor(LINK_COLOURS.get(link_type, LINK_COLOURS["other"]))
        self.setZValue(3)

    def set_line(self, p1: QPointF, p2: QPointF) -> None:
        self.prepareGeometryChange()
        self._line = QLineF(p1, p2)

    def boundingRect(self) -> QRectF:
        return QRectF(self._line.p1(), self._line.p2()).normalized().adjusted(-4, -4, 4, 4)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(self._colour, 2.5, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawLine(self._line)


class MessageBubble(QGraphicsItem):
    """A short message next to an item (a refused link says why, right where it happened)."""

    MAX_WIDTH = 300.0

    def __init__(self, text: str, error: bool = True):
        super().__init__()
        self._text, self._error = text, error
        self.setZValue(10)
        self.setToolTip(text)

    def text(self) -> str:
        return self._text

    def _text_rect(self) -> QRectF:
        fm = QFontMetricsF(_font(9))
        return fm.boundingRect(QRectF(0, 0, self.MAX_WIDTH, 1000),
                               int(Qt.TextFlag.TextWordWrap), self._text)

    def boundingRect(self) -> QRectF:
        return self._text_rect().adjusted(-8, -6, 8, 6)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        colour = QColor(REFUSED_COLOUR if self._error else "#555555")
        painter.setPen(QPen(colour, 1.2))
        painter.setBrush(QColor("#fff4f2") if self._error else QColor("#fffbe6"))
        painter.drawRoundedRect(self.boundingRect().adjusted(1, 1, -1, -1), 6, 6)
        painter.setFont(_font(9))
        painter.setPen(colour.darker(120))
        painter.drawText(self._text_rect(), int(Qt.TextFlag.TextWordWrap), self._text)
