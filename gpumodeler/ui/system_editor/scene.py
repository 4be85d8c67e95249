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
        self.setBackgroundBrush(QColor("#fbfbfa"))
        self.setSceneRect(-2000, -2000, 4000, 4000)
        document.changed.connect(self._on_changed)
        for device in document.project.devices.values():
            self._add_device(device)
        for connection in document.project.connections.values():
            self._add_connection(connection)

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
        for device_id in list(self.device_items):
            if device_id in project.devices:
                self._update_device(project.devices[device_id])
        for connection_id in list(self.connection_items):
            if connection_id in project.connections:
                self._update_connection(project.connections[connection_id])

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
            self._route_connections_of(device.id)

    def _remove_device(self, device) -> None:
        item = self.device_items.pop(device.id)
        self.removeItem(item)

    def _add_connection(self, connection) -> None:
        item = ConnectionItem(connection.id)
        self.connection_items[connection.id] = item
        self.addItem(item)
        self._update_connection(connection)
        self._route_pair(connection.a, connection.b)  # its parallel siblings move apart

    def _update_connection(self, connection) -> None:
        item = self.connection_items[connection.id]
        view = self.presenter.connection_view(connection)
        item.set_text(view.title, view.subtitle)
        item.set_link_type(connection.link_type)
        item.setToolTip(view.tooltip)
        self._route(connection)

    def _remove_connection(self, connection) -> None:
        item = self.connection_items.pop(connection.id)
        self.removeItem(item)
        self._route_pair(connection.a, connection.b)

    #: distance between parallel links of the same two devices (each stays selectable)
    PARALLEL_GAP = 34.0

    def _parallel(self, connection) -> tuple[int, int]:
        """(index, count) of ``connection`` among the shown links joining the same devices."""
        pair = {connection.a, connection.b}
        same = [c.id for c in self.document.project.connections.values()
                if {c.a, c.b} == pair and c.id in self.connection_items]
        return (same.index(connection.id) if connection.id in same else 0), max(len(same), 1)

    def _route_pair(self, a: str, b: str) -> None:
        for c in self.document.project.connections.values():
            if {c.a, c.b} == {a, b} and c.id in self.connection_items:
                self._route(c)

    def _route(self, connection) -> None:
        a, b = self.device_items.get(connection.a), self.device_items.get(connection.b)
        if a is None or b is None:
            return
        p1, p2 = a.edge_point(b.centre()), b.edge_point(a.centre())
        index, count = self._parallel(connection)
        label_at = 0.5
        if count > 1:
            # links of one pair side by side, perpendicular to the line (direction taken
            # from the smaller id to the larger, so both ends agree)
            first, second = sorted((connection.a, connection.b))
            c1, c2 = self.device_items[first].centre(), self.device_items[second].centre()
            dx, dy = c2.x() - c1.x(), c2.y() - c1.y()
            length = (dx * dx + dy * dy) ** 0.5 or 1.0
            shift = (index - (count - 1) / 2) * self.PARALLEL_GAP
            offset = QPointF(-dy / length * shift, dx / length * shift)
            p1, p2 = p1 + offset, p2 + offset
            # labels staggered along the lines too, so neither hides the other
            label_at = 0.5 + (index - (count - 1) / 2) * (0.6 / count)
            if connection.a != first:
                label_at = 1.0 - label_at
        self.connection_items[connection.id].set_line(p1, p2, label_at)

    def _route_connections_of(self, device_id: str) -> None:
        for connection in self.document.project.connections_of(device_id):
            if connection.id in self.connection_items:
                self._route(connection)

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
