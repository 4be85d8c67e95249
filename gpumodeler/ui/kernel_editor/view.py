"""The canvas widget: zoom, fit, rubber-band selection and drops from the palette."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsView

from .palette import MIME_OPCODE


class KernelView(QGraphicsView):
    painted = Signal()  # the canvas was painted (the editor then starts a waiting analysis)

    def __init__(self, scene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setDragMode(QGraphicsView.RubberBandDrag)
        self.setViewportUpdateMode(QGraphicsView.BoundingRectViewportUpdate)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setAcceptDrops(True)
        self.setAlignment(Qt.AlignHCenter | Qt.AlignTop)

    def fit(self, rect: QRectF | None = None) -> None:
        """Show the whole graph (never magnified beyond 100 %); ``rect``, when given, is
        the scene's items' bounding rectangle (a look at every item to work out)."""
        if rect is None:
            rect = self.scene().itemsBoundingRect()
        if rect.isEmpty():
            self.resetTransform()
            return
        rect = rect.adjusted(-20, -20, 20, 20)
        self.setSceneRect(rect.united(QRectF(rect.topLeft(), self.viewport().size().toSizeF())))
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.transform().m11() > 1.0:
            self.resetTransform()
        self.setSceneRect(QRectF())
        self.centerOn(rect.center())

    def show_graph(self, minimum_scale: float = 0.75) -> None:
        """The first view of a graph: all of it if that stays readable, else, at
        ``minimum_scale``, its largest loop (the part of a kernel that sets its time) or,
        without loops, its top (F shows all of it)."""
        rect = self.scene().itemsBoundingRect()
        if rect.isEmpty():
            self.resetTransform()
            return
        self.fit(rect)
        if self.transform().m11() < minimum_scale:
            self.resetTransform()
            self.scale(minimum_scale, minimum_scale)
            top = rect.adjusted(-20, -20, 20, 20)
            view_h = self.viewport().height() / minimum_scale
            loops = [item.sceneBoundingRect() for item in getattr(self.scene(), "loop_items", {}).values()]
            if loops:
                loop = max(loops, key=lambda r: r.width() * r.height()).adjusted(-20, -20, 20, 20)
                y = loop.center().y() if loop.height() <= view_h else loop.top() + view_h / 2
                self.centerOn(loop.center().x(), y)
                return
            self.centerOn(top.center().x(), top.top() + view_h / 2)

    def paintEvent(self, event):
        super().paintEvent(event)
        self.painted.emit()

    def zoom(self, factor: float) -> None:
        scale = self.transform().m11() * factor
        if 0.1 <= scale <= 4.0:
            self.scale(factor, factor)

    def wheelEvent(self, event):
        if event.modifiers() & Qt.ControlModifier:
            self.zoom(1.15 if event.angleDelta().y() > 0 else 1 / 1.15)
            event.accept()
            return
        super().wheelEvent(event)

    # -- drops from the palette ------------------------------------------------------------
    def dragEnterEvent(self, event):
        if event.mimeData().hasFormat(MIME_OPCODE):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event):
        if event.mimeData().hasFormat(MIME_OPCODE):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event):
        if event.mimeData().hasFormat(MIME_OPCODE):
            opcode = bytes(event.mimeData().data(MIME_OPCODE)).decode()
            self.scene().instruction_dropped.emit(opcode, self.mapToScene(event.position().toPoint()))
            event.acceptProposedAction()
        else:
            super().dropEvent(event)
