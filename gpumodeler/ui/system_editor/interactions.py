"""Gestures on the system canvas, one object each (Orange-style user interactions).

The scene hands mouse and key events to the active interaction; an interaction returns
True when it consumed the event. Interactions ask the editor to change the project (the
editor pushes the commands); they only draw temporary, view-only items themselves.
"""
from __future__ import annotations

import itertools

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication, QGraphicsScene

from .items import RubberLinkItem

_drag_numbers = itertools.count(1)


class UserInteraction:
    """Base gesture: consumes nothing."""

    def __init__(self, editor):
        self.editor = editor
        self.scene = editor.scene

    def mouse_press(self, event) -> bool:
        return False

    def mouse_move(self, event) -> bool:
        return False

    def mouse_release(self, event) -> bool:
        return False

    def key_press(self, event) -> bool:
        return False

    def cancel(self) -> None:
        """Abandon the gesture, leaving the project as it is."""


class SelectAndMove(UserInteraction):
    """The default gesture. Clicks select (Qt's own selection handling); dragging selected
    devices moves them *through the model*: every mouse move pushes MoveDevices with one
    merge key per drag, so the scene follows the model and the whole drag is one undo step.
    """

    def __init__(self, editor):
        super().__init__(editor)
        self._press: QPointF | None = None
        self._start: dict[str, tuple[float, float]] = {}
        self._merge_key = None

    def mouse_press(self, event) -> bool:
        QGraphicsScene.mousePressEvent(self.scene, event)  # selection as Qt does it
        self._press, self._start, self._merge_key = None, {}, None
        if event.button() == Qt.MouseButton.LeftButton and event.isAccepted() \
                and self.scene.device_at(event.scenePos()) is not None:
            self._press = event.scenePos()
            self._start = {did: (self.scene.device_items[did].x(), self.scene.device_items[did].y())
                           for did in self.scene.selected_device_ids()}
        return True

    def mouse_move(self, event) -> bool:
        if self._press is None or not (event.buttons() & Qt.MouseButton.LeftButton):
            return False
        delta = event.scenePos() - self._press
        if self._merge_key is None:
            if delta.manhattanLength() < QApplication.startDragDistance():
                return True
            self._merge_key = ("move devices", next(_drag_numbers))
        positions = {did: (round(x + delta.x()), round(y + delta.y()))
                     for did, (x, y) in self._start.items()}
        self.editor.move_devices(positions, self._merge_key)
        return True

    def mouse_release(self, event) -> bool:
        QGraphicsScene.mouseReleaseEvent(self.scene, event)
        self._press, self._start, self._merge_key = None, {}, None
        return True

    def cancel(self) -> None:
        self._press, self._start, self._merge_key = None, {}, None


class ConnectDevices(UserInteraction):
    """A link dropped on a device waits for the second device: a dashed line follows the
    mouse, devices light up green (allowed) or red (refused, with the reason as hint);
    a click on a device connects, a click elsewhere or Esc cancels."""

    def __init__(self, editor, link_name: str, link_type: str, first: str):
        super().__init__(editor)
        self.link_name, self.link_type, self.first = link_name, link_type, first
        self.rubber = RubberLinkItem(link_type)
        self.scene.addItem(self.rubber)
        self._hovered: str | None = None
        first_item = self.scene.device_items[first]
        self.rubber.set_line(first_item.centre(), first_item.centre())
        first_item.set_highlight("ok")

    def mouse_move(self, event) -> bool:
        first_item = self.scene.device_items.get(self.first)
        if first_item is None:
            self.editor.end_interaction(self)
            return False
        self.rubber.set_line(first_item.centre(), event.scenePos())
        self.hover(self.scene.device_at(event.scenePos()))
        return True

    def hover(self, device_id: str | None) -> None:
        """Light up ``device_id`` by whether the link may join it to the first device."""
        if device_id == self._hovered:
            return
        if self._hovered not in (None, self.first) and self._hovered in self.scene.device_items:
            self.scene.device_items[self._hovered].set_highlight(None)
        self._hovered = device_id
        if device_id is None or device_id == self.first:
            self.editor.hint(f"Click the device to join with {self.link_name} (Esc cancels)")
            return
        reason = self.editor.connection_refusal(self.first, device_id, self.link_type)
        self.scene.device_items[device_id].set_highlight("refused" if reason else "ok")
        self.editor.hint(f"Cannot connect: {reason}" if reason
                         else f"Click to join with {self.link_name}")

    def mouse_press(self, event) -> bool:
        target = self.scene.device_at(event.scenePos())
        if event.button() == Qt.MouseButton.LeftButton and target not in (None, self.first):
            self.finish(target)
        else:
            self.editor.end_interaction(self)
            self.editor.hint("Link cancelled")
        return True

    def mouse_release(self, event) -> bool:
        return True

    def key_press(self, event) -> bool:
        if event.key() == Qt.Key.Key_Escape:
            self.editor.end_interaction(self)
            self.editor.hint("Link cancelled")
            return True
        return False

    def finish(self, second: str) -> bool:
        """Join the first device to ``second`` (the model may refuse, with a reason)."""
        self.editor.end_interaction(self)
        return self.editor.connect_devices(self.first, second, self.link_name)

    def cancel(self) -> None:
        for did in {self.first, self._hovered} - {None}:
            if did in self.scene.device_items:
                self.scene.device_items[did].set_highlight(None)
        if self.rubber.scene() is not None:
            self.scene.removeItem(self.rubber)
