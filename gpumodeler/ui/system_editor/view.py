"""SystemView: the canvas widget. Accepts catalog drops, zooms, fits the system."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsView

from .items import MAX_OVERVIEW_ZOOM, OVERVIEW_LOD
from .palette import read_catalog_mime

MAX_FIT_SCALE = 1.5


class SystemView(QGraphicsView):
    """Drops of :data:`~.palette.CATALOG_MIME` become :attr:`sig_catalog_dropped`; a link
    is only accepted over a device (it needs one end)."""

    #: (kind, name, scene position QPointF) of a catalog entry dropped on the canvas
    sig_catalog_dropped = Signal(str, str, object)

    def __init__(self, scene, parent=None):
        super().__init__(scene, parent)
        self.setAcceptDrops(True)
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
        self.setMinimumSize(320, 240)
        # The view fits the system again whenever it is resized (a window maximised, a dock
        # closed, a project opened before the window had its size), until the user zooms by
        # hand; Fit turns it back on.
        self.auto_fit = True

    # ---- drag and drop from the palette
    def _entry(self, event):
        entry = read_catalog_mime(event.mimeData())
        if entry is None:
            return None
        kind, _ = entry
        if kind == "link" and self.scene().device_at(self._scene_pos(event)) is None:
            return None
        return entry

    def _scene_pos(self, event) -> QPointF:
        return self.mapToScene(event.position().toPoint())

    def dragEnterEvent(self, event):
        if read_catalog_mime(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event):
        if self._entry(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragLeaveEvent(self, event):
        event.accept()

    def dropEvent(self, event):
        entry = self._entry(event)
        if entry is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.sig_catalog_dropped.emit(entry[0], entry[1], self._scene_pos(event))

    # ---- zoom and fit
    def wheelEvent(self, event):
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            factor = 1.15 if event.angleDelta().y() > 0 else 1 / 1.15
            self.scale(factor, factor)
            self.auto_fit = False
            self.update_overview()
            event.accept()
        else:
            super().wheelEvent(event)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if self.auto_fit and self.scene() is not None:
            self.fit()

    def setScene(self, scene):
        super().setScene(scene)
        self.auto_fit = True
        if scene is not None:
            self.fit()

    def fit(self) -> None:
        """Show the whole system, no larger than a comfortable reading size (and keep it
        fitted on resizes from now on)."""
        self.auto_fit = True
        if self.scene() is None:
            return
        # twice when the labels change size with the scale (zoomed out: larger names)
        for _attempt in range(2):
            rect = self.scene().items_rect()
            if rect is None:
                self.resetTransform()
                self.centerOn(0, 0)
                return
            rect = QRectF(rect).adjusted(-40, -40, 40, 40)
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
            scale = self.transform().m11()
            if scale > MAX_FIT_SCALE:
                self.resetTransform()
                self.scale(MAX_FIT_SCALE, MAX_FIT_SCALE)
                self.centerOn(rect.center())
            if not self.update_overview():
                return

    def update_overview(self) -> bool:
        """Tell the scene how far the view is zoomed out, so link labels stay legible
        (:data:`~.items.OVERVIEW_LOD`); True when their size changed."""
        scene, scale = self.scene(), self.transform().m11()
        if scene is None or not hasattr(scene, "set_overview_zoom") or scale <= 0:
            return False
        zoom = min(OVERVIEW_LOD / scale, MAX_OVERVIEW_ZOOM) if scale < OVERVIEW_LOD else 1.0
        return scene.set_overview_zoom(zoom)

    def visible_centre(self) -> QPointF:
        return self.mapToScene(self.viewport().rect().center())
