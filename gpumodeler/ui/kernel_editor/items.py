"""Drawable items of the kernel graph editor: instructions, latency edges, loop regions.

Items are dumb: they know their id and what to draw (text, colours, flags the scene sets),
never the model. Geometry of edges and loops is given to them by the scene.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath,
                           QPainterPathStroker, QPen, QPolygonF)
from PySide6.QtWidgets import QGraphicsItem

from gpumodeler.core.kernel.layout import NODE_H, NODE_W

from .detail import overview, zoomed_out
from .edge_label import LABEL_PT, EdgeLabel  # noqa: F401  (LABEL_PT re-exported)

#: How far an arc between two instructions of a column bows out: within the gutter between
#: columns of the auto-layout (:data:`gpumodeler.core.kernel.layout.GUTTER`).
ARC_MAX = 120.0

UNIT_COLOURS = {
    "cuda_core": QColor("#4c8bf5"),
    "fp64": QColor("#7b4cf5"),
    "sfu": QColor("#00a3a3"),
    "ldst": QColor("#e8910c"),
    "branch": QColor("#b04cc8"),
    "barrier": QColor("#d03b3b"),
    "exit": QColor("#6b6b6b"),
    "virtual": QColor("#9e9e9e"),
}

EDGE_STYLES = {  # kind -> (colour, pen style)
    "ilp": (QColor("#8a8a8a"), Qt.SolidLine),
    "dual": (QColor("#8a8a8a"), Qt.DotLine),
    "dependency": (QColor("#2f6fd6"), Qt.SolidLine),
    "memory": (QColor("#d07a00"), Qt.SolidLine),
    "branch": (QColor("#a03cc0"), Qt.DashLine),
    "barrier": (QColor("#c83232"), Qt.DashDotLine),
    "replacement": (QColor("#2e9a4e"), Qt.DashLine),
}

CRITICAL = QColor("#e8453c")
ERROR = QColor("#d00000")
SELECTED = QColor("#1a73e8")


class Marks:
    """The critical-path and error marks that instructions, edges and loops all carry
    (mixin: before the Qt item class). An error becomes the item's tooltip."""

    critical = False
    error = ""

    def set_critical(self, on: bool) -> None:
        if on != self.critical:
            self.critical = on
            self.marks_changed()

    def set_error(self, message: str) -> None:
        if message == self.error:
            return  # (the content, set again, puts back the tooltip an error replaced)
        self.error = message
        if message:
            self.setToolTip(message)
        self.marks_changed()

    def marks_changed(self) -> None:
        self.update()


class InstructionItem(Marks, QGraphicsItem):
    """One instruction: a rounded box with a unit colour strip, the opcode and its label.

    A plain graphics item, not a QObject with position signals (three times the cost to
    make, for a kernel of 10^4 instructions): the scene routes the edges of the nodes it
    moves, and of those a drag moves."""

    def __init__(self, node_id: str):
        super().__init__()
        self.node_id = node_id
        self.opcode = ""
        self.text = ""
        self.unit = "cuda_core"
        self.setFlags(QGraphicsItem.ItemIsSelectable | QGraphicsItem.ItemIsMovable)
        self.setZValue(10)
        self.setAcceptHoverEvents(True)

    def set_content(self, opcode: str, text: str, unit: str, tooltip: str) -> None:
        self.opcode, self.text, self.unit = opcode, text, unit
        self.setToolTip(tooltip)
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(-2, -2, NODE_W + 4, NODE_H + 4)

    def shape(self) -> QPainterPath:
        p = QPainterPath()
        p.addRoundedRect(QRectF(0, 0, NODE_W, NODE_H), 6, 6)
        return p

    def anchor(self, side: str) -> QPointF:
        """Scene point on the box: top, bottom, left, right (centres)."""
        r = self.sceneBoundingRect().adjusted(2, 2, -2, -2)
        return {"top": QPointF(r.center().x(), r.top()), "bottom": QPointF(r.center().x(), r.bottom()),
                "left": QPointF(r.left(), r.center().y()),
                "right": QPointF(r.right(), r.center().y())}[side]

    def paint(self, painter: QPainter, option, widget=None) -> None:
        rect = QRectF(0, 0, NODE_W, NODE_H)
        if zoomed_out(option, painter):  # a box in its unit's colour, marked as below
            painter.setPen(QPen(ERROR if self.error else SELECTED if self.isSelected()
                                else CRITICAL if self.critical else QColor("#9aa0a6"), 1.0))
            painter.setBrush(UNIT_COLOURS.get(self.unit, QColor("#888")).lighter(160))
            painter.drawRect(rect)
            return
        painter.setRenderHint(QPainter.Antialiasing)
        if self.error:
            pen = QPen(ERROR, 2.5)
        elif self.isSelected():
            pen = QPen(SELECTED, 2.5)
        elif self.critical:
            pen = QPen(CRITICAL, 2.0)
        else:
            pen = QPen(QColor("#9aa0a6"), 1.0)
        painter.setPen(pen)
        painter.setBrush(QBrush(QColor("#fff5f5") if self.error else QColor("white")))
        painter.drawRoundedRect(rect, 6, 6)
        strip = QPainterPath()
        strip.addRoundedRect(QRectF(0, 0, 10, NODE_H), 5, 5)
        painter.fillPath(strip, UNIT_COLOURS.get(self.unit, QColor("#888")))
        bold = QFont(painter.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(QColor("#202124"))
        fm = QFontMetricsF(bold)
        op_w = max(fm.horizontalAdvance(self.opcode), 44.0)
        painter.drawText(QRectF(16, 0, op_w + 4, NODE_H), Qt.AlignVCenter | Qt.AlignLeft, self.opcode)
        if self.text:
            normal = QFont(painter.font())
            normal.setBold(False)
            painter.setFont(normal)
            painter.setPen(QColor("#5f6368"))
            room = NODE_W - (24 + op_w) - 6
            elided = QFontMetricsF(normal).elidedText(self.text, Qt.ElideRight, room)
            painter.drawText(QRectF(24 + op_w, 0, room, NODE_H), Qt.AlignVCenter | Qt.AlignLeft, elided)



_DARKER: dict = {}  # an edge colour's rgba -> the darker colour of its label


def _darker(colour: QColor) -> QColor:
    rgba = colour.rgba()
    have = _DARKER.get(rgba)
    if have is None:
        have = _DARKER[rgba] = colour.darker(130)
    return have


class EdgeItem(Marks, QGraphicsItem):
    """A latency edge: a straight segment between neighbours, else an arc on the right
    (forward in program order) or on the left (backward: loop-carried)."""

    def __init__(self, edge_id: str):
        super().__init__()
        self.edge_id = edge_id
        self.pair = None  # the instructions it was last routed between (a frozenset)
        self.kind = "ilp"
        self.path = QPainterPath()
        self.arrow = QPolygonF()
        self._bounds = QRectF(-6, -6, 12, 12)  # of the empty path and arrow
        self.label = EdgeLabel(edge_id, self)  # its only child: drawn over it
        self.setFlags(QGraphicsItem.ItemIsSelectable)
        self.setZValue(5)
        self._label_text = ""
        self._explicit = False
        self._label_style = None  # (colour, bold, italic) last given to the label
        # where the label sits: the point it hangs from, and whether it ends there (placed
        # left of it, so a wider text moves it) rather than starting there
        self._label_anchor = (QPointF(), False)

    # -- content ---------------------------------------------------------------------------
    def set_content(self, kind: str, latency_text: str, explicit: bool, tooltip: str) -> None:
        self.kind, self._label_text, self._explicit = kind, latency_text, explicit
        self._style_label(None if self.label.editing() else latency_text)
        self.setToolTip(tooltip)
        self.label.setToolTip(tooltip + "\nDouble-click to edit the latency")
        self.update()

    def _style_label(self, text: str | None = None):
        """The label's colour and font for the edge's kind and marks, and ``text`` (None:
        the label keeps its own)."""
        colour = ERROR if self.error else (CRITICAL if self.critical else EDGE_STYLES[self.kind][0])
        style = (colour, self._explicit or self.critical, not self._explicit)
        if style == self._label_style and (text is None or text == self.label.toPlainText()):
            return
        self._label_style = style
        self.label.restyle(text, _darker(colour), style[1], style[2])
        self._place_label()  # its width may have changed

    def _place_label(self) -> None:
        at, ends_there = self._label_anchor
        if ends_there:
            at = QPointF(at.x() - self.label.boundingRect().width(), at.y())
        if at != self.label.pos():
            self.label.setPos(at)

    def marks_changed(self) -> None:
        self.setZValue(6 if self.critical else 5)  # the critical path over the others
        self._style_label()
        self.update()

    # -- geometry --------------------------------------------------------------------------
    def route(self, s_left: float, s_top: float, s_right: float, s_bottom: float,
              d_left: float, d_top: float, d_right: float, d_bottom: float, backward: bool,
              lane: int = 0, lanes: int = 1) -> None:
        """Route the edge between two node boxes, given by their sides (scene coordinates);
        ``lane`` of ``lanes`` separates parallel edges between the same two instructions.

        The arithmetic is on numbers: the label hangs from the middle of the route (for an
        arc, the middle of the curve's parameter, where a symmetric arc is halfway along),
        and the arrow points along the route's direction near its end (asking the path for
        these by length costs ~10 µs an edge, 0.4 s a kernel of 2·10^4 edges)."""
        spread = lane - (lanes - 1) / 2.0
        self.prepareGeometryChange()
        s_y, d_y = (s_top + s_bottom) / 2, (d_top + d_bottom) / 2
        dx = (d_left + d_right) / 2 - (s_left + s_right) / 2
        dy = d_y - s_y
        gap = d_top - s_bottom
        path = QPainterPath()
        if not backward and abs(dx) < NODE_W / 3 and 0 <= gap <= NODE_H * 1.6:
            ax = (s_left + s_right) / 2 + 18 * spread
            ay, bx, by = s_bottom, ax + dx, d_top
            path.moveTo(ax, ay)
            path.lineTo(bx, by)
            mid_x, mid_y = (ax + bx) / 2, (ay + by) / 2
            label_x, label_y = mid_x + 5, mid_y - 9
            tx, ty = bx - ax, by - ay
        elif abs(dx) > NODE_W * 0.9:
            # side by side: straight between the facing sides
            ax, ay = (s_right if dx > 0 else s_left), s_y
            bx, by = (d_left if dx > 0 else d_right), d_y + 8 * spread
            path.moveTo(ax, ay)
            path.lineTo(bx, by)
            mid_x, mid_y = (ax + bx) / 2, (ay + by) / 2
            label_x, label_y = mid_x, mid_y - 18
            tx, ty = bx - ax, by - ay
        else:
            side = -1 if backward else 1
            ax = s_left if backward else s_right
            bx = d_left if backward else d_right
            ay, by = s_y - 4 * side, d_y + 4 * side
            bulge = min(18 + 0.28 * abs(dy) + 14 * lane, ARC_MAX)
            cx = max(ax, bx) + bulge if side > 0 else min(ax, bx) - bulge  # both controls
            path.moveTo(ax, ay)
            path.cubicTo(cx, ay, cx, by, bx, by)
            mid_x, mid_y = (ax + 6 * cx + bx) / 8, (ay + 3 * ay + 3 * by + by) / 8
            label_x, label_y = mid_x + (4 if side > 0 else -4), mid_y - 9
            t = 0.98  # the direction of the curve at t: its derivative
            tx = 3 * (1 - t) ** 2 * (cx - ax) + 3 * t * t * (bx - cx)
            ty = 6 * (1 - t) * t * (by - ay)
        self.path = path
        length = math.hypot(tx, ty)
        ux, uy = (tx / length, ty / length) if length else (1.0, 0.0)
        size = 8.0
        end = QPointF(bx, by)
        back_x, back_y = bx - ux * size, by - uy * size
        nx, ny = -uy * size * 0.45, ux * size * 0.45
        self.arrow = QPolygonF([end, QPointF(back_x - nx, back_y - ny), QPointF(back_x + nx, back_y + ny)])
        self._bounds = path.boundingRect().united(self.arrow.boundingRect()).adjusted(-6, -6, 6, 6)
        ends_there = label_x < mid_x - 1 or (backward and abs(dx) <= NODE_W * 0.9)
        self._label_anchor = (QPointF(label_x, label_y), ends_there)
        self._place_label()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds  # asked many times per change: worked out once per route

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        return stroker.createStroke(self.path)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if not (self.critical or self.error or self.isSelected()) and overview(option, painter):
            return  # an unmarked edge in an overview: a blur of sub-pixel lines
        painter.setRenderHint(QPainter.Antialiasing, not zoomed_out(option, painter))
        colour, style = EDGE_STYLES.get(self.kind, (QColor("#888"), Qt.SolidLine))
        width = 1.3
        if self.critical:
            colour, width = CRITICAL, 2.6
        if self.error:
            colour, width = ERROR, 2.4
        if self.isSelected():
            colour, width = SELECTED, max(width, 2.6)
        painter.setPen(QPen(colour, width, style, Qt.RoundCap))
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self.path)
        painter.setPen(Qt.NoPen)
        painter.setBrush(colour)
        painter.drawPolygon(self.arrow)


class LoopItem(Marks, QGraphicsItem):
    """A loop: a translucent rounded region behind its instructions, labelled ``× a``."""

    def __init__(self, loop_id: str):
        super().__init__()
        self.loop_id = loop_id
        self.rect = QRectF()
        self.title = ""
        self.depth = 0
        self.setFlags(QGraphicsItem.ItemIsSelectable)
        self.setZValue(0)

    def set_content(self, title: str, tooltip: str, depth: int) -> None:
        self.title, self.depth = title, depth
        self.setToolTip(tooltip)
        self.setZValue(0 + depth * 0.1)
        self.update()

    def set_region(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self.rect = rect
        self.update()

    def boundingRect(self) -> QRectF:
        return self.rect.adjusted(-3, -3, 3, 3)

    def shape(self) -> QPainterPath:
        # selectable by its title bar and border, not the whole area (nodes sit on it)
        p = QPainterPath()
        outer = QPainterPath()
        outer.addRoundedRect(self.rect, 12, 12)
        inner = QPainterPath()
        inner.addRect(self.rect.adjusted(8, 22, -8, -8))
        p = outer.subtracted(inner)
        return p

    def paint(self, painter: QPainter, option, widget=None) -> None:
        detailed = not zoomed_out(option, painter)
        painter.setRenderHint(QPainter.Antialiasing, detailed)
        fill = QColor(80, 140, 230, 28 + 10 * self.depth)
        border = QColor(80, 140, 230, 150)
        if self.critical:
            border = CRITICAL
        if self.error:
            border, fill = ERROR, QColor(220, 0, 0, 25)
        pen = QPen(SELECTED if self.isSelected() else border, 2.4 if self.isSelected() or self.critical else 1.4)
        painter.setPen(pen)
        painter.setBrush(fill)
        painter.drawRoundedRect(self.rect, 12, 12)
        if not detailed:
            return  # a title too small to read
        f = QFont(painter.font())
        f.setBold(True)
        painter.setFont(f)
        painter.setPen(border.darker(140))
        box = self.rect.adjusted(10, 3, -10, 0)
        painter.drawText(box, Qt.AlignTop | Qt.AlignRight, self.shown_title(f))

    def shown_title(self, font: QFont) -> str:
        """The title as the box shows it: a long one (an imported loop's note and iteration
        expression) cut at the box's width with its start kept; the tooltip holds it whole."""
        width = self.rect.adjusted(10, 3, -10, 0).width()
        return QFontMetricsF(font).elidedText(self.title, Qt.ElideRight, width)


class RubberEdge(QGraphicsItem):
    """The line that follows the mouse while an edge is drawn."""

    def __init__(self, start: QPointF, kind: str):
        super().__init__()
        self.line = QLineF(start, start)
        self.kind = kind
        self.setZValue(20)

    def set_end(self, p: QPointF) -> None:
        self.prepareGeometryChange()
        self.line.setP2(p)

    def boundingRect(self) -> QRectF:
        return QRectF(self.line.p1(), self.line.p2()).normalized().adjusted(-4, -4, 4, 4)

    def paint(self, painter, option, widget=None):
        colour = EDGE_STYLES.get(self.kind, (QColor("#888"), Qt.SolidLine))[0]
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setPen(QPen(colour, 2, Qt.DashLine))
        painter.drawLine(self.line)
