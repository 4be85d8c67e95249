"""Mouse gestures on the kernel canvas. Each gesture turns presses, moves and releases into
one intent the scene announces (and the editor turns into one command): a drag of nodes is
one move, a drag from one node to another is one edge.
"""
from __future__ import annotations

import itertools

from PySide6.QtCore import QPointF

from .items import InstructionItem, RubberEdge

_drag_ids = itertools.count(1)


def node_at(scene, pos: QPointF) -> InstructionItem | None:
    for item in scene.items(pos):
        while item is not None and not isinstance(item, InstructionItem):
            item = item.parentItem()
        if isinstance(item, InstructionItem):
            return item
    return None


class MoveGesture:
    """Remembers where the selected instructions were when the drag began; on release,
    reports the new positions (if any moved) with one merge key for the whole drag."""

    def __init__(self, scene):
        self.scene = scene
        self.start = {}
        self._at: dict = {}

    def press(self, items) -> None:
        self.start = {it.node_id: (it.pos().x(), it.pos().y()) for it in items}
        self._at = dict(self.start)  # where each was when last seen

    def dragged(self) -> list:
        """The ids of the pressed instructions that moved since this was last asked."""
        moved = []
        for nid, was in self._at.items():
            item = self.scene.node_items.get(nid)
            if item is not None and (item.pos().x(), item.pos().y()) != was:
                self._at[nid] = (item.pos().x(), item.pos().y())
                moved.append(nid)
        return moved

    def release(self) -> tuple[dict, object] | None:
        moved = {}
        for nid, (x, y) in self.start.items():
            item = self.scene.node_items.get(nid)
            if item is None:
                continue
            p = item.pos()
            if abs(p.x() - x) > 0.5 or abs(p.y() - y) > 0.5:
                moved[nid] = (round(p.x(), 1), round(p.y(), 1))
        self.start, self._at = {}, {}
        if not moved:
            return None
        # the other selected nodes moved with them: report all, one step
        return moved, ("kernel-drag", next(_drag_ids))


class EdgeGesture:
    """Drag from an instruction to another: a rubber line follows the mouse; releasing
    over a different instruction asks for an edge of the current kind."""

    def __init__(self, scene, source: InstructionItem, kind: str):
        self.scene = scene
        self.source = source
        self.rubber = RubberEdge(source.sceneBoundingRect().center(), kind)
        scene.addItem(self.rubber)

    def move(self, pos: QPointF) -> None:
        self.rubber.set_end(pos)
        target = node_at(self.scene, pos)
        for item in self.scene.node_items.values():
            item.setOpacity(0.55 if target is item and item is not self.source else 1.0)

    def release(self, pos: QPointF) -> tuple[str, str] | None:
        target = node_at(self.scene, pos)
        self.cancel()
        if target is None or target is self.source:
            return None
        return self.source.node_id, target.node_id

    def cancel(self) -> None:
        if self.rubber.scene() is not None:
            self.scene.removeItem(self.rubber)
        for item in self.scene.node_items.values():
            item.setOpacity(1.0)
