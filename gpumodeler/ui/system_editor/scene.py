"""SystemScene: mirrors the project's devices and connections as items.

It keeps ``device id -> DeviceItem`` and ``connection id -> ConnectionItem`` maps and
changes items only in answer to :attr:`Document.changed` events (architecture: scenes listen to
model events). Mouse gestures are handed to the active interaction object
(:mod:`.interactions`), which asks the editor to push commands; the scene pushes none.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene

from gpumodeler.core.system_routes import route_links

from .items import ConnectionItem, DeviceItem, MessageBubble

BUBBLE_MS = 6000


class SystemScene(QGraphicsScene):
    """The system canvas of one document."""

    #: (screen position QPoint, scene position QPointF) of a context-menu request
    sig_context_menu_requested = Signal(object, object)

    def __init__(self, document, presenter, parent=None):
        super().__init__(parent)
        self.document = document
        self.presenter = presenter
        self.device_items: dict[str, DeviceItem] = {}
        self.connection_items: dict[str, ConnectionItem] = {}
        self.default_interaction = None
        self.interaction = None  # a gesture in progress (drawing a link...)
        self._bubble: MessageBubble | None = None
        self._batch = False
        self.overview_zoom = 1.0   # link labels' enlargement while the view is zoomed out
        self.setBackgroundBrush(QColor("#fbfbfa"))
        self.setSceneRect(-2000, -2000, 4000, 4000)
        document.changed.connect(self._on_changed)
        self._batch = True   # routed once at the end, not once per item added
        for device in document.project.devices.values():
            self._add_device(device)
        for connection in document.project.connections.values():
            self._add_connection(connection)
        self._batch = False
        self._route_all()

    # ---- model events -> items
    def _on_changed(self, event: str, payload) -> None:
        if event == "catalog_changed":
            self._catalog_changed()
            return
        handler = {
            "devices_added": self._add_device, "devices_changed": self._update_device,
            "devices_removed": self._remove_device,
            "connections_added": self._add_connection,
            "connections_changed": self._update_connection,
            "connections_removed": self._remove_connection,
        }.get(event)
        if handler is not None:
            handler(payload)

    def _catalog_changed(self) -> None:
        """Show every device and link with the database's current values."""
        self.presenter.forget()
        project = self.document.project
        self._batch = True
        try:
            for device_id in list(self.device_items):
                if device_id in project.devices:
                    self._update_device(project.devices[device_id])
            for connection_id in list(self.connection_items):
                if connection_id in project.connections:
                    self._update_connection(project.connections[connection_id])
        finally:
            self._batch = False
        self._route_all()

    def _add_device(self, device) -> None:
        item = DeviceItem(device.id)
        self.device_items[device.id] = item
        self.addItem(item)
        self._update_device(device)

    def _update_device(self, device) -> None:
        item = self.device_items[device.id]
        view = self.presenter.device_view(device)
        item.set_kind(device.kind)
        item.set_icon(view.icon)
        item.set_title(view.title)
        item.set_subtitle(view.subtitle)
        item.set_count(device.count)
        item.set_problem(view.problem)
        item.setToolTip(view.tooltip if not view.problem else view.problem)
        if item.pos() != QPointF(device.x, device.y):
            item.setPos(device.x, device.y)
            self._route_all()

    def _remove_device(self, device) -> None:
        item = self.device_items.pop(device.id)
        self.removeItem(item)
        self._route_all()

    def set_overview_zoom(self, zoom: float) -> bool:
        """Link labels ``zoom`` times larger (the view is zoomed out; 1: not), placed again;
        False when that is (about) the zoom they have."""
        if abs(zoom - self.overview_zoom) <= 0.05 * self.overview_zoom:
            return False
        self.overview_zoom = zoom
        for item in self.connection_items.values():
            item.set_overview_zoom(zoom)
        self._route_all()
        return True

    def _add_connection(self, connection) -> None:
        item = ConnectionItem(connection.id)
        item.set_overview_zoom(self.overview_zoom)
        self.connection_items[connection.id] = item
        self.addItem(item)
        self._update_connection(connection)
        self._route_all()  # its parallel siblings move apart, labels make room

    def _update_connection(self, connection) -> None:
        item = self.connection_items[connection.id]
        view = self.presenter.connection_view(connection)
        item.set_text(view.title, view.subtitle)
        item.set_link_type(connection.link_type)
        item.setToolTip(view.tooltip)
        self._route_all()

    def _remove_connection(self, connection) -> None:
        item = self.connection_items.pop(connection.id)
        self.removeItem(item)
        self._route_all()

    def _route_all(self) -> None:
        """Route every shown link and place every label (core.system_routes: straight,
        side by side with its pair's other links, or around the devices in the way; labels
        on no device and no other label). A link's label depends on the others', so a
        change anywhere routes them all (systems have tens of links, not thousands)."""
        if self._batch:
            return
        boxes = {did: (item.x(), item.y(), item.WIDTH, item.HEIGHT)
                 for did, item in self.device_items.items()}
        links = [(c.id, c.a, c.b) for c in self.document.project.connections.values()
                 if c.id in self.connection_items]
        sizes = {lid: self.connection_items[lid].label_size() for lid, _a, _b in links}
        for lid, route in route_links(boxes, links, sizes).items():
            x, y, w, h = route.label
            self.connection_items[lid].set_route([QPointF(*p) for p in route.points],
                                                 QPointF(x + w / 2, y + h / 2))

    # ---- queries used by the editor and the interactions
    def device_at(self, scene_pos: QPointF) -> str | None:
        for item in self.items(scene_pos):
            if isinstance(item, DeviceItem):
                return item.device_id
        return None

    def selected_device_ids(self) -> list[str]:
        return sorted(i.device_id for i in self.selectedItems() if isinstance(i, DeviceItem))

    def selected_connection_ids(self) -> list[str]:
        return sorted(i.connection_id for i in self.selectedItems()
                      if isinstance(i, ConnectionItem))

    def select(self, device_ids=(), connection_ids=()) -> None:
        """Select exactly these items (by model id)."""
        self.blockSignals(True)
        self.clearSelection()
        self.blockSignals(False)
        for did in device_ids:
            if did in self.device_items:
                self.device_items[did].setSelected(True)
        for cid in connection_ids:
            if cid in self.connection_items:
                self.connection_items[cid].setSelected(True)
        self.selectionChanged.emit()

    def items_rect(self):
        rect = None
        for item in list(self.device_items.values()) + list(self.connection_items.values()):
            r = item.sceneBoundingRect()
            rect = r if rect is None else rect.united(r)
        return rect

    # ---- messages next to items
    def show_message(self, text: str, device_id: str | None = None,
                     scene_pos: QPointF | None = None, error: bool = True) -> MessageBubble:
        """A bubble with ``text`` next to the device (or at ``scene_pos``) for a few seconds."""
        self.clear_message()
        bubble = MessageBubble(text, error)
        if device_id in self.device_items:
            rect = self.device_items[device_id].sceneBoundingRect()
            bubble.setPos(rect.left() + 8, rect.bottom() + 10)
        elif scene_pos is not None:
            bubble.setPos(scene_pos + QPointF(12, 12))
        self.addItem(bubble)
        self._bubble = bubble
        QTimer.singleShot(BUBBLE_MS, self, lambda b=bubble: self._expire(b))  # dies with the scene
        return bubble

    def message(self) -> str:
        return self._bubble.text() if self._bubble is not None else ""

    def clear_message(self) -> None:
        if self._bubble is not None:
            self.removeItem(self._bubble)
            self._bubble = None

    def _expire(self, bubble) -> None:
        if bubble is self._bubble:
            self.clear_message()

    # ---- Qt overrides: gestures go to the active interaction first
    def _active(self):
        return self.interaction or self.default_interaction

    def mousePressEvent(self, event):
        active = self._active()
        if active is None or not active.mouse_press(event):
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event):
        active = self._active()
        if active is None or not active.mouse_move(event):
            super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event):
        active = self._active()
        if active is None or not active.mouse_release(event):
            super().mouseReleaseEvent(event)

    def keyPressEvent(self, event):
        active = self._active()
        if active is None or not active.key_press(event):
            super().keyPressEvent(event)

    def contextMenuEvent(self, event):
        item = self.itemAt(event.scenePos(), self.views()[0].transform()) if self.views() else None
        while item is not None and not isinstance(item, (DeviceItem, ConnectionItem)):
            item = item.parentItem()
        if item is not None and not item.isSelected():
            self.clearSelection()
            item.setSelected(True)
        self.sig_context_menu_requested.emit(event.screenPos(), event.scenePos())
        event.accept()
