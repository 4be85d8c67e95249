"""KernelScene: mirrors one KernelGraph on a QGraphicsScene.

The scene keeps id -> item maps for instructions, edges and loops, follows the graph's
events, and announces gestures as intents (``edge_requested``, ``nodes_moved``,
``instruction_dropped``, ``latency_edited``) for the editor to turn into commands. It never
changes the graph. What analysis says (latencies, the critical path, errors) is given to it
by the editor.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene

from gpumodeler.core.kernel.graph import KernelGraph

from .interactions import EdgeGesture, MoveGesture, node_at
from .items import EdgeItem, EdgeLabel, InstructionItem, LoopItem
from .routing import SceneGeometry

KIND_NAMES = {
    "ilp": "ILP (issue spacing)", "dual": "dual issue", "dependency": "register dependency",
    "memory": "memory access", "branch": "branch", "barrier": "barrier",
    "replacement": "block replacement",
}


def _fmt(value) -> str:
    return "?" if value is None else f"{value:g}"


class KernelScene(SceneGeometry, QGraphicsScene):
    edge_requested = Signal(str, str)  # source id, destination id
    nodes_moved = Signal(dict, object)  # {id: (x, y)}, merge key of the drag
    instruction_dropped = Signal(str, QPointF)  # opcode, scene position
    latency_edited = Signal(str, str)  # edge id, text ('' = table value)
    drawing_progress = Signal(int, int)  # edges drawn, edges in all (a big graph, drawn in turns)

    #: edges drawn in one turn of the event loop: a graph with more is drawn in turns
    #: (~50 ms each), so that the window stays responsive and shows how far it got
    EDGES_PER_TURN = 600

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackgroundBrush(QColor("#fafafa"))
        self.graph: KernelGraph | None = None
        self.node_items: dict[str, InstructionItem] = {}
        self.edge_items: dict[str, EdgeItem] = {}
        self.loop_items: dict[str, LoopItem] = {}
        self.mode = "select"
        self.edge_kind = "ilp"
        self._gesture: EdgeGesture | None = None
        self._move = MoveGesture(self)
        self._latency: dict[str, float | None] = {}
        self._errors: dict[str, str] = {}
        self._critical = (set(), set(), set())
        self._critical_items: set = set()
        self._building = False
        # worked out when first needed after a change (edges or instructions added, removed)
        self._order: dict | None = None  # program order of the instructions
        self._edge_index: tuple | None = None  # (edges at each instruction, parallel edges)
        self._loop_heights: tuple | None = None  # (the graph's LoopNesting, heights)
        self._to_draw: tuple | None = None  # (edge ids, how many done) while drawing in turns
        self._draw_timer = QTimer(self)
        self._draw_timer.setInterval(0)
        self._draw_timer.timeout.connect(self._draw_more)
        self._pending_moves: set = set()  # instructions placed, whose edges follow (flush_moves)
        self._refit_all = False  # every loop to be fitted again (flush_moves)
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(0)
        self._flush_timer.timeout.connect(self.flush_moves)

    # -- building --------------------------------------------------------------------------
    def set_graph(self, graph: KernelGraph | None, latencies: dict | None = None) -> None:
        """Show ``graph`` (None: an empty canvas), its edges labelled with ``latencies``
        ({edge id: cycles or None}, as :meth:`set_latencies`) when they are known."""
        if self._gesture is not None:
            self._gesture.cancel()
            self._gesture = None
        self.stop_drawing()
        self._pending_moves, self._refit_all = set(), False
        self.clear()
        self.node_items.clear()
        self.edge_items.clear()
        self.loop_items.clear()
        self._latency, self._errors = dict(latencies or {}), {}
        self._critical = (set(), set(), set())
        self._critical_items = set()
        self._order = self._edge_index = self._loop_heights = None
        self.graph = graph
        if graph is None:
            return
        self._building = True
        try:
            for ins in graph.instructions.values():
                self._add_node(ins)
            # each edge labelled and routed before it enters the scene: the scene's index
            # takes it once, where it is (not once empty, then again for each change)
            if len(graph.edges) <= self.EDGES_PER_TURN:
                for e in graph.edges.values():
                    self._add_edge(e, route=True)
            else:
                self._to_draw = (list(graph.edges), 0)
            for lp in graph.loops.values():
                self._put_loop(lp)
        finally:
            self._building = False
        self._refresh_loops()
        if self._to_draw is not None:
            self._draw_more()  # the first turn now, the others as the event loop turns
            if self._to_draw is not None:
                self._draw_timer.start()

    def drawing(self) -> bool:
        """Edges of the graph are still to be drawn (a big graph, drawn in turns)."""
        return self._to_draw is not None

    def stop_drawing(self) -> None:
        self._draw_timer.stop()
        self._to_draw = None

    def _draw_more(self) -> None:
        """Draw the next :data:`EDGES_PER_TURN` edges of the graph (those an edit added
        meanwhile are drawn already; those it removed are skipped), marked as the analysis
        says."""
        if self._to_draw is None or self.graph is None:
            self.stop_drawing()
            return
        ids, done = self._to_draw
        end = min(done + self.EDGES_PER_TURN, len(ids))
        edges, critical = self.graph.edges, self._critical[1]
        for eid in ids[done:end]:
            e = edges.get(eid)
            if e is None or eid in self.edge_items:
                continue
            item = self._add_edge(e, route=True)
            if eid in critical:
                item.set_critical(True)
                self._critical_items.add(item)
        if end == len(ids):
            self.stop_drawing()
        else:
            self._to_draw = (ids, end)
        self.drawing_progress.emit(end, len(ids))

    def _add_node(self, ins) -> InstructionItem:
        item = InstructionItem(ins.id)
        self.node_items[ins.id] = item
        self._set_node_content(item, ins)
        item.setPos(ins.x, ins.y)
        self.addItem(item)
        return item

    def _set_node_content(self, item: InstructionItem, ins) -> None:
        tip = [f"{ins.id}: {ins.label or ins.opcode}", f"unit {ins.unit}"]
        if ins.latency_class:
            tip.append(f"latency class {ins.latency_class}")
        if ins.unit == "ldst":
            tip.append(f"{'load' if ins.is_load else 'store'}, {ins.space} space, "
                       f"{ins.width_bytes} B × stride {ins.stride:g}, {ins.pattern}")
        head, text = ins.opcode, ins.label.strip()
        if text.split(" ", 1)[0].rstrip(".").isdigit():  # "4. XMAD.MRG R3, ..." -> drop "4."
            text = text.split(" ", 1)[1] if " " in text else ""
        first, _, rest = text.partition(" ")
        if first.upper().split(".")[0] == ins.opcode.upper().split(".")[0]:
            head, text = first, rest  # "XMAD.MRG" bold, operands after it
        item.set_content(head, text, ins.unit, "\n".join(tip))
        if self._errors.get(ins.id):
            item.set_error(self._errors[ins.id])

    def _add_edge(self, e, route: bool = False) -> EdgeItem:
        """A new edge item, labelled (and, with ``route``, routed) before it is added."""
        item = EdgeItem(e.id)
        item.label.on_commit = self.latency_edited.emit
        self.edge_items[e.id] = item
        self._set_edge_content(item, e)
        if route:
            self._route_item(e, item, self._program_order(), self._edges_index()[1])
        self.addItem(item)
        return item

    def _set_edge_content(self, item: EdgeItem, e) -> None:
        value = e.latency if e.latency is not None else self._latency.get(e.id)
        source = "explicit" if e.latency is not None else (
            f"from latency table {self.graph.latency_table}" if self.graph and self.graph.latency_table
            else "no latency table")
        tip = f"{e.id}: {KIND_NAMES.get(e.kind, e.kind)} {e.src} → {e.dst}, {_fmt(value)} cycles ({source})"
        if e.kind == "branch":
            tip += "; taken" if e.taken else ("; not taken" if e.taken is False else "")
        item.set_content(e.kind, _fmt(value), e.latency is not None, tip)
        item.set_error(self._errors.get(e.id, ""))

    def _put_loop(self, lp) -> LoopItem:
        item = self.loop_items.get(lp.id)
        if item is None:
            item = LoopItem(lp.id)
            self.loop_items[lp.id] = item
            self.addItem(item)
        title = f"{lp.name + '  ' if lp.name else ''}× {lp.iterations.text}"
        tip = (f"loop {lp.name or lp.id}: {len(lp.members)} instruction(s), "
               f"{lp.iterations.text} iterations")
        item.set_content(title, self._errors.get(lp.id) or tip, 0)
        return item

    # -- following the graph ---------------------------------------------------------------
    def apply(self, event: str, payload) -> None:
        """Mirror one graph event (see KernelGraph mutations)."""
        if self.graph is None:
            return
        if event in ("instruction_added", "instruction_removed"):
            self._order = None
        if event == "instruction_added":
            self._add_node(payload)
            self._refit_loops_later()
        elif event == "instruction_changed":
            item = self.node_items.get(payload.id)
            if item is None:
                return
            self._set_node_content(item, payload)
            if (item.pos().x(), item.pos().y()) != (payload.x, payload.y):
                item.setPos(payload.x, payload.y)
                self._moved_later(payload.id)
        elif event == "instruction_removed":
            item = self.node_items.pop(payload.id, None)
            if item is not None:
                self.removeItem(item)
            self._pending_moves.discard(payload.id)
            self._refit_loops_later()
        elif event in ("edge_added", "edge_changed"):
            item = self.edge_items.get(payload.id)
            old_pair = item.pair if item is not None else None
            self._index_edge(payload, old_pair)
            if item is None:
                item = self._add_edge(payload)
            else:
                self._set_edge_content(item, payload)
            # the edges between its two instructions share lanes (and between the two it
            # joined before, when its ends changed)
            self._route_pairs({old_pair, frozenset((payload.src, payload.dst))})
        elif event == "edge_removed":
            item = self.edge_items.pop(payload.id, None)
            self._unindex_edge(payload.id, frozenset((payload.src, payload.dst)))
            if item is not None:
                self.removeItem(item)
            self._route_pairs({frozenset((payload.src, payload.dst))})
        elif event in ("loop_added", "loop_changed"):
            self._put_loop(payload)
            self._refit_loops_later()
        elif event == "loop_removed":
            item = self.loop_items.pop(payload.id, None)
            if item is not None:
                self.removeItem(item)
            self._refit_loops_later()
        elif event == "properties_changed":
            self.refresh_edge_labels()

    # -- what the analysis says ------------------------------------------------------------
    def set_latencies(self, latencies: dict) -> None:
        """{edge id: cycles or None (unknown)} as resolved by the analysis. Only the labels
        whose value changed are set again, so that an edit of a big kernel does not redo
        all of them."""
        old, self._latency = self._latency, dict(latencies)
        if self.graph is None:
            return
        new, edges = self._latency, self.graph.edges
        for eid, item in self.edge_items.items():
            if old.get(eid) != new.get(eid):
                e = edges.get(eid)
                if e is not None:
                    self._set_edge_content(item, e)

    def refresh_edge_labels(self) -> None:
        """Set every edge's label and tooltip again (the latency table changed)."""
        if self.graph is None:
            return
        for eid, item in self.edge_items.items():
            e = self.graph.edges.get(eid)
            if e is not None:
                self._set_edge_content(item, e)
        self._route_all()

    def set_critical(self, node_ids=(), edge_ids=(), loop_ids=()) -> None:
        """Mark the critical path's items; only those that change are touched."""
        self._critical = (set(node_ids), set(edge_ids), set(loop_ids))
        marked = set()
        for table, ids in zip((self.node_items, self.edge_items, self.loop_items), self._critical):
            marked.update(table[i] for i in ids if i in table)
        for item in self._critical_items - marked:
            item.set_critical(False)
        for item in marked - self._critical_items:
            item.set_critical(True)
        self._critical_items = marked

    def critical(self) -> tuple[set, set, set]:
        return self._critical

    def set_errors(self, errors: dict) -> None:
        """{item id: message}; items not named are cleared. Only the items whose message
        changed are touched (their content set again, which restores the tooltip)."""
        old, self._errors = self._errors, dict(errors)
        graph = self.graph
        for iid in set(old) | set(self._errors):
            message = self._errors.get(iid, "")
            if old.get(iid, "") == message:
                continue
            if iid in self.node_items:
                item = self.node_items[iid]
                item.set_error(message)
                if not message and graph is not None and iid in graph.instructions:
                    self._set_node_content(item, graph.instructions[iid])
            if iid in self.edge_items:
                item = self.edge_items[iid]
                if graph is not None and iid in graph.edges:
                    self._set_edge_content(item, graph.edges[iid])
                else:
                    item.set_error(message)
            if iid in self.loop_items:
                self.loop_items[iid].set_error(message)
                if graph is not None and iid in graph.loops:
                    self._put_loop(graph.loops[iid])

    # -- selection -------------------------------------------------------------------------
    def selected_ids(self) -> tuple[list, list, list]:
        """(instruction ids, edge ids, loop ids) selected, in graph order. Found from the
        selected items, not by a look at every item: it is asked each time the selection
        changes, which a delete of many instructions does once per instruction."""
        nodes, edges, loops = [], [], []
        for it in self.selectedItems():
            if isinstance(it, InstructionItem):
                if self.node_items.get(it.node_id) is it:
                    nodes.append(it.node_id)
            elif isinstance(it, EdgeItem):
                if self.edge_items.get(it.edge_id) is it:
                    edges.append(it.edge_id)
            elif isinstance(it, LoopItem) and self.loop_items.get(it.loop_id) is it:
                loops.append(it.loop_id)
        if self.graph is not None:
            for ids, table in ((nodes, self.graph.instructions), (edges, self.graph.edges),
                               (loops, self.graph.loops)):
                if len(ids) > 1:
                    if table is self.graph.instructions:
                        position = self._program_order()
                    else:
                        position = dict(zip(table, range(len(table))))
                    ids.sort(key=lambda k: position.get(k, -1))
        return nodes, edges, loops

    def select_ids(self, ids) -> None:
        ids = set(ids)
        self.blockSignals(True)
        try:
            self.clearSelection()
            for table in (self.node_items, self.edge_items, self.loop_items):
                for iid, item in table.items():
                    if iid in ids:
                        item.setSelected(True)
        finally:
            self.blockSignals(False)
        self.selectionChanged.emit()

    # -- gestures --------------------------------------------------------------------------
    def mousePressEvent(self, event):
        if event.button() == Qt.LeftButton:
            node = node_at(self, event.scenePos())
            if node is not None and (self.mode == "connect" or event.modifiers() & Qt.ShiftModifier):
                self._gesture = EdgeGesture(self, node, self.edge_kind)
                event.accept()
                return
        super().mousePressEvent(event)
        if event.button() == Qt.LeftButton:
            self._move.press([it for it in self.selectedItems() if isinstance(it, InstructionItem)])

    def mouseMoveEvent(self, event):
        if self._gesture is not None:
            self._gesture.move(event.scenePos())
            event.accept()
            return
        super().mouseMoveEvent(event)
        dragged = self._move.dragged()
        if dragged:  # their edges and loops follow them as they go
            self._pending_moves.update(dragged)
            self.flush_moves()

    def mouseReleaseEvent(self, event):
        if self._gesture is not None:
            result = self._gesture.release(event.scenePos())
            self._gesture = None
            event.accept()
            if result:
                self.edge_requested.emit(*result)
            return
        super().mouseReleaseEvent(event)
        moved = self._move.release()
        if moved:
            self.nodes_moved.emit(*moved)

    def mouseDoubleClickEvent(self, event):
        for item in self.items(event.scenePos()):
            if isinstance(item, EdgeLabel):
                item = item.parentItem()
            if isinstance(item, EdgeItem):
                self.begin_latency_edit(item.edge_id)
                event.accept()
                return
        super().mouseDoubleClickEvent(event)

    def begin_latency_edit(self, edge_id: str) -> None:
        e = self.graph.edges[edge_id]
        self.edge_items[edge_id].label.begin_edit("" if e.latency is None else f"{e.latency:g}")

    def keyPressEvent(self, event):
        if event.key() == Qt.Key_Escape and self._gesture is not None:
            self._gesture.cancel()
            self._gesture = None
            return
        super().keyPressEvent(event)
