"""Where the kernel scene's edges and loop regions go: edges routed between their
instructions' boxes, loop regions fitted around their members (:class:`SceneGeometry`, a part
of :class:`~gpumodeler.ui.kernel_editor.scene.KernelScene`).

A kernel imported from SASS has 10^4 instructions and more, so what a change needs is found
through indexes kept until the graph changes: the edges at each instruction and between each
pair (parallel edges share lanes), the program order, and the loops' heights from the graph's
nesting. Moved instructions re-route their own edges and fit the loops holding them, nothing
else (:meth:`SceneGeometry.flush_moves`).
"""
from __future__ import annotations

from PySide6.QtCore import QRectF

from gpumodeler.core.kernel.layout import NODE_H, NODE_W


class SceneGeometry:
    """Routing and loop regions of :class:`KernelScene` (which holds ``graph``,
    ``node_items``, ``edge_items``, ``loop_items`` and the caches ``_order``, ``_edge_index``,
    ``_loop_heights``, emptied when the graph changes)."""

    def _program_order(self) -> dict:
        if self._order is None:
            self._order = self.graph.order()
        return self._order

    def _edges_index(self) -> tuple:
        """({instruction: ids of the edges at it}, {pair of instructions: ids of the edges
        between them, in edge order}), made once and kept as edges are added and removed."""
        if self._edge_index is None:
            at: dict = {}
            lanes: dict = {}
            for e in self.graph.edges.values():
                at.setdefault(e.src, []).append(e.id)
                if e.dst != e.src:
                    at.setdefault(e.dst, []).append(e.id)
                lanes.setdefault(frozenset((e.src, e.dst)), []).append(e.id)
            self._edge_index = (at, lanes)
        return self._edge_index

    def _index_edge(self, e, old_pair=None) -> None:
        """Keep the index (when made) with edge ``e`` added or changed (its ends were
        ``old_pair`` before, None: it is new): new edges come last, as in the graph."""
        if self._edge_index is None:
            return
        pair = frozenset((e.src, e.dst))
        if old_pair is not None:
            if old_pair != pair:  # rare: made again, with the edge in its place in edge order
                self._edge_index = None
            return
        at, lanes = self._edge_index
        for node in pair:
            at.setdefault(node, []).append(e.id)
        lanes.setdefault(pair, []).append(e.id)

    def _unindex_edge(self, edge_id: str, pair) -> None:
        """Keep the index (when made) without the edge that joined ``pair``."""
        if self._edge_index is None:
            return
        at, lanes = self._edge_index
        for node in pair:
            if edge_id in at.get(node, ()):
                at[node].remove(edge_id)
        if edge_id in lanes.get(pair, ()):
            lanes[pair].remove(edge_id)

    def _route_all(self) -> None:
        """Route every edge."""
        if self.graph is None or self._building:
            return
        self._route(self.graph.edges)

    def _route_pairs(self, pairs) -> None:
        """Route the edges between each pair of instructions (a frozenset; None: none)."""
        if self.graph is None or self._building:
            return
        lanes = self._edges_index()[1]
        self._route([eid for pair in pairs if pair for eid in lanes.get(pair, ())])

    def _route(self, edge_ids) -> None:
        edges, order = self.graph.edges, self._program_order()
        lanes = self._edges_index()[1]
        for eid in edge_ids:
            e = edges.get(eid)
            item = self.edge_items.get(eid)
            if e is not None and item is not None:
                self._route_item(e, item, order, lanes)

    def _route_item(self, e, item, order: dict, lanes: dict) -> None:
        src, dst = self.node_items.get(e.src), self.node_items.get(e.dst)
        if src is None or dst is None:
            return
        item.pair = pair = frozenset((e.src, e.dst))
        group = lanes[pair]
        # a node's box is NODE_W × NODE_H from its position (its bounding rectangle less
        # the 2 px it leaves for its pen)
        s, d = src.pos(), dst.pos()
        sx, sy, dx, dy = s.x(), s.y(), d.x(), d.y()
        item.route(sx, sy, sx + NODE_W, sy + NODE_H, dx, dy, dx + NODE_W, dy + NODE_H,
                   order[e.src] >= order[e.dst], group.index(e.id), len(group))

    def _heights(self):
        """(LoopNesting of the graph, {loop: height}): a loop with no loop inside is 0 high,
        else one more than the highest loop inside it (how far its border stands out)."""
        nesting = self.graph.nesting()
        if self._loop_heights is None or self._loop_heights[0] is not nesting:
            height = dict.fromkeys(self.graph.loops, 0)
            for lid in sorted(height, key=nesting.depth.__getitem__, reverse=True):
                up = nesting.parent[lid]
                if up is not None:
                    height[up] = max(height[up], height[lid] + 1)
            self._loop_heights = (nesting, height)
        return self._loop_heights

    def _moved_later(self, node_id: str) -> None:
        """``node_id`` was placed by a command: its edges and loops follow when the command
        is done (:meth:`flush_moves`; an auto-layout moves every instruction, and each loop
        is then fitted once, not once per member)."""
        self._pending_moves.add(node_id)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _refit_loops_later(self) -> None:
        """Instructions or loops were added or removed: every loop is fitted again when the
        command is done (:meth:`flush_moves`; deleting a selection removes them one by one)."""
        self._refit_all = True
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def flush_moves(self) -> None:
        """Route the edges and fit the loops of the instructions placed since last time (by
        a command, or dragged), and every loop when instructions or loops were added or
        removed."""
        self._flush_timer.stop()
        nodes, self._pending_moves = self._pending_moves, set()
        refit_all, self._refit_all = self._refit_all, False
        if self.graph is None or self._building:
            return
        if refit_all:
            self._refresh_loops()
        if not nodes:
            return
        at = self._edges_index()[0]
        self._route({eid for n in nodes for eid in at.get(n, ())})
        if not refit_all:
            nesting = self.graph.nesting()
            self._refresh_loops(loop_ids={lid for n in nodes if n in self.graph.instructions
                                          for lid in nesting.enclosing(n)})

    def _refresh_loops(self, loop_ids=None) -> None:
        """Fit every loop's region around its instructions, or only the loops
        ``loop_ids``."""
        if self.graph is None or self._building:
            return
        loops = self.graph.loops
        nesting, height = self._heights()
        chosen = loops if loop_ids is None else [lid for lid in loop_ids if lid in loops]
        for lid in chosen:
            lp = loops[lid]
            item = self.loop_items.get(lid) or self._put_loop(lp)
            rect = QRectF()
            for nid in lp.members:
                node = self.node_items.get(nid)
                if node is not None:
                    r = node.sceneBoundingRect().adjusted(2, 2, -2, -2)
                    rect = r if rect.isNull() else rect.united(r)
            m = 10 + 12 * height[lid]
            item.set_region(rect.adjusted(-m, -m - 16, m + 36, m))
            item.setZValue(nesting.depth[lid] * 0.1)
