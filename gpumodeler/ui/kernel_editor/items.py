"""Drawable items of the kernel graph editor: instructions, latency edges, loop regions.

Items are dumb: they know their id and what to draw (text, colours, flags the scene sets),
never the model. Geometry of edges and loops is given to them by the scene.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath,
                           QPainterPathStroker, QPen, QPolygonF)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QGraphicsTextItem

from gpumodeler.core.kernel.layout import NODE_H, NODE_W
#: Edge labels (latencies): point size and the backing that keeps them legible over lines.
LABEL_PT = 10.0
LABEL_BACKING = QColor(255, 255, 255, 215)
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
        self.error = message
        if message:
            self.setToolTip(message)
        self.marks_changed()

    def marks_changed(self) -> None:
        self.update()


class InstructionItem(Marks, QGraphicsObject):
    """One instruction: a rounded box with a unit colour strip, the opcode and its label."""

    moved = Signal(str)  # id, while dragging (the scene follows with edges and loops)

    def __init__(self, node_id: str):
        super().__init__()
        self.node_id = node_id
        self.opcode = ""
        self.text = ""
        self.unit = "cuda_core"
        self.setFlags(QGraphicsItem.ItemIsSelectable | QGraphicsItem.ItemIsMovable)
        self.setZValue(10)
        # position signals rather than an itemChange override (which costs a Python call
        # for every item change and has tripped PySide's reference counting)
        self.xChanged.connect(self._moved)
        self.yChanged.connect(self._moved)
        self.setAcceptHoverEvents(True)

    def _moved(self) -> None:
        self.moved.emit(self.node_id)

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
        painter.setRenderHint(QPainter.Antialiasing)
        rect = QRectF(0, 0, NODE_W, NODE_H)
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



class EdgeLabel(QGraphicsTextItem):
    """The latency of an edge; double-click edits it in place (Enter commits, Esc cancels,
    an empty text returns to the latency table's value)."""

    committed = Signal(str, str)  # edge id, text

    def __init__(self, edge_id: str, parent):
        super().__init__(parent)
        self.edge_id = edge_id
        self._editing = False
        self._before = ""
        f = QFont(self.font())
        f.setPointSizeF(max(f.pointSizeF(), LABEL_PT))  # readable at 100 % and at 75 %
        self.setFont(f)
        self.document().setDocumentMargin(1.0)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        # a light backing, so that a label stays legible where edges cross under it
        if not self._editing:
            painter.setPen(Qt.NoPen)
            painter.setBrush(LABEL_BACKING)
            painter.drawRoundedRect(self.boundingRect(), 3, 3)
        super().paint(painter, option, widget)

    def begin_edit(self, explicit_text: str) -> None:
        self._editing = True
        self._before = self.toPlainText()
        self.setPlainText(explicit_text)
        self.setTextInteractionFlags(Qt.TextEditorInteraction)
        self.setFocus(Qt.MouseFocusReason)
        cursor = self.textCursor()
        cursor.select(cursor.SelectionType.Document)
        self.setTextCursor(cursor)

    def editing(self) -> bool:
        return self._editing

    def _finish(self, commit: bool) -> None:
        if not self._editing:
            return
        self._editing = False
        text = self.toPlainText().strip()
        self.setTextInteractionFlags(Qt.NoTextInteraction)
        self.setPlainText(self._before)
        self.clearFocus()
        if commit:
            self.committed.emit(self.edge_id, text)

    def keyPressEvent(self, event):
        if event.key() in (Qt.Key_Return, Qt.Key_Enter):
            self._finish(True)
            return
        if event.key() == Qt.Key_Escape:
            self._finish(False)
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event):
        self._finish(True)
        super().focusOutEvent(event)


class EdgeItem(Marks, QGraphicsItem):
    """A latency edge: a straight segment between neighbours, else an arc on the right
    (forward in program order) or on the left (backward: loop-carried)."""

    def __init__(self, edge_id: str):
        super().__init__()
        self.edge_id = edge_id
        self.kind = "ilp"
        self.path = QPainterPath()
        self.arrow = QPolygonF()
        self.label = EdgeLabel(edge_id, self)
        self.label.setZValue(1)
        self.setFlags(QGraphicsItem.ItemIsSelectable)
        self.setZValue(5)
        self._label_text = ""
        self._explicit = False

    # -- content ---------------------------------------------------------------------------
    def set_content(self, kind: str, latency_text: str, explicit: bool, tooltip: str) -> None:
        self.kind, self._label_text, self._explicit = kind, latency_text, explicit
        if not self.label.editing():
            self.label.setPlainText(latency_text)
        self._style_label()
        self.setToolTip(tooltip)
        self.label.setToolTip(tooltip + "\nDouble-click to edit the latency")
        self.update()

    def _style_label(self):
        colour = ERROR if self.error else (CRITICAL if self.critical else EDGE_STYLES[self.kind][0])
        self.label.setDefaultTextColor(colour.darker(130))
        f = self.label.font()
        f.setBold(self._explicit or self.critical)
        f.setItalic(not self._explicit)
        self.label.setFont(f)

    def marks_changed(self) -> None:
        self.setZValue(6 if self.critical else 5)  # the critical path over the others
        self._style_label()
        self.update()

    # -- geometry --------------------------------------------------------------------------
    def set_geometry(self, src: QRectF, dst: QRectF, backward: bool, lane: int = 0,
                     lanes: int = 1) -> None:
        """Route the edge between two node rectangles (scene coordinates); ``lane`` of
        ``lanes`` separates parallel edges between the same two instructions."""
        spread = lane - (lanes - 1) / 2.0
        self.prepareGeometryChange()
        path = QPainterPath()
        dy = dst.center().y() - src.center().y()
        dx = dst.center().x() - src.center().x()
        gap = dst.top() - src.bottom()
        if not backward and abs(dx) < NODE_W / 3 and 0 <= gap <= NODE_H * 1.6:
            x = src.center().x() + 18 * spread
            a, b = QPointF(x, src.bottom()), QPointF(x + dx, dst.top())
            path.moveTo(a)
            path.lineTo(b)
            label_at = QPointF((a.x() + b.x()) / 2 + 5, (a.y() + b.y()) / 2 - 9)
        elif abs(dx) > NODE_W * 0.9:
            # side by side: straight between the facing sides
            a = QPointF(src.right() if dx > 0 else src.left(), src.center().y())
            b = QPointF(dst.left() if dx > 0 else dst.right(), dst.center().y() + 8 * spread)
            path.moveTo(a)
            path.lineTo(b)
            label_at = QPointF((a.x() + b.x()) / 2, (a.y() + b.y()) / 2 - 18)
        else:
            side = -1 if backward else 1
            ax = src.left() if backward else src.right()
            bx = dst.left() if backward else dst.right()
            a = QPointF(ax, src.center().y() - 4 * side)
            b = QPointF(bx, dst.center().y() + 4 * side)
            bulge = min(18 + 0.28 * abs(dy) + 14 * lane, ARC_MAX)
            c1 = QPointF(max(ax, bx) + bulge if side > 0 else min(ax, bx) - bulge, a.y())
            c2 = QPointF(c1.x(), b.y())
            path.moveTo(a)
            path.cubicTo(c1, c2, b)
            mid = path.pointAtPercent(0.5)
            label_at = QPointF(mid.x() + (4 if side > 0 else -4), mid.y() - 9)
        self.path = path
        end = path.pointAtPercent(1.0)
        angle = math.radians(path.angleAtPercent(0.98))
        size = 8.0
        back = QPointF(-math.cos(angle), math.sin(angle))
        normal = QPointF(-back.y(), back.x())
        p1 = end + back * size + normal * (size * 0.45)
        p2 = end + back * size - normal * (size * 0.45)
        self.arrow = QPolygonF([end, p1, p2])
        br = self.label.boundingRect()
        if label_at.x() < path.pointAtPercent(0.5).x() - 1 or (backward and abs(dx) <= NODE_W * 0.9):
            label_at = QPointF(label_at.x() - br.width(), label_at.y())
        self.label.setPos(label_at)
        self.update()

    def boundingRect(self) -> QRectF:
        return self.path.boundingRect().united(self.arrow.boundingRect()).adjusted(-6, -6, 6, 6)

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        return stroker.createStroke(self.path)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
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
        painter.setRenderHint(QPainter.Antialiasing)
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
        f = QFont(painter.font())
        f.setBold(True)
        painter.setFont(f)
        painter.setPen(border.darker(140))
        painter.drawText(self.rect.adjusted(10, 3, -10, 0), Qt.AlignTop | Qt.AlignRight, self.title)


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
