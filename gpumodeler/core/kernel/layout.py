"""Auto-layout of a kernel graph: program order in columns that wrap to a landscape shape.

A listing read top to bottom makes a column hundreds of rows tall that no view can show
legibly. Here program order runs down a column and on into the next one to its right, and
the number of rows per column is chosen so that the whole graph has the aspect ratio of
the view (width / height, default 16:9; the smallest column height whose layout is not
wider than that). Pure and deterministic (a function of the graph's order, loops and
opcodes, and the aspect): the editor turns the positions into one undoable
MoveInstructions command; the GUI's kernel import and ``gpumodeler kernel import`` use it
for the imported graph (pure: no Qt, so the CLI lays out what it writes the same way).

Rules, in order of precedence:

- **Loops stay regions.** A loop's instructions are laid out together and indented by
  their nesting depth, with room above for the region's title and below for its margin
  (the editor's scene draws a loop as the rectangle around its members). A loop that
  fits in a column is never split; one taller than a column starts a new column and has its
  columns to itself (whatever follows it starts the next column), so its rectangle encloses
  its own instructions only.
- **Basic blocks stay together.** A straight-line run (up to a branch or exit, or a loop's
  edge) that fits in the rest of the column stays there, else starts the next column if it
  fits in one; only runs longer than a column are split.
- Columns are ``NODE_W`` + the deepest indent + a gutter apart, so no two instructions
  overlap and edges have room between columns.

Loops whose members are not consecutive in program order (possible in a hand-drawn graph)
are laid out per consecutive stretch; their rectangle may then enclose other instructions.
"""
from __future__ import annotations

import math

from gpumodeler.core.kernel.graph import KernelGraph

#: An instruction box's size in scene units (the kernel editor draws nodes this size).
NODE_W = 250.0
NODE_H = 30.0
ROW_SPACING = 56.0
INDENT = 36.0
#: Between columns, right of the deepest indent: room for edge arcs, labels, loop margins.
GUTTER = 150.0
#: Columns hold at least this many rows (a small graph stays one short column).
MIN_ROWS = 8
DEFAULT_ASPECT = 16 / 9
#: Units whose instruction ends a straight-line run (a basic block).
_BLOCK_ENDS = ("branch", "exit")


def loop_margin(height: int) -> float:
    """The scene's margin around a loop's members (:meth:`KernelScene._refresh_loops`) for
    a loop with ``height`` loops nested inside it (0: innermost); the title takes 16 more."""
    return 10.0 + 12.0 * height


def loop_paths(graph: KernelGraph) -> dict[str, tuple[str, ...]]:
    """{instruction id: the ids of the loops containing it, outermost first}."""
    size = {lid: len(lp.members) for lid, lp in graph.loops.items()}
    paths = {}
    for nid in graph.instructions:
        containing = [lp.id for lp in graph.loops_containing(nid)]
        paths[nid] = tuple(sorted(containing, key=lambda lid: (-size[lid], lid)))
    return paths


def loop_heights(graph: KernelGraph) -> dict[str, int]:
    """{loop id: how many loops deep its nesting goes inside it} (0 for an innermost)."""
    loops = graph.loops
    height: dict[str, int] = {}

    def h(lid):
        if lid not in height:
            inner = [o for o in loops.values() if o.members < loops[lid].members]
            height[lid] = 1 + max((h(o.id) for o in inner), default=-1)
        return height[lid]
    for lid in loops:
        h(lid)
    return height


def _tree(graph: KernelGraph, paths: dict) -> list:
    """Program order as nested elements: ("ins", id) and ("loop", loop id, [elements])."""
    root: list = []
    stack: list = [(None, root)]
    for nid in graph.instructions:
        path = paths[nid]
        open_ids = [lid for lid, _ in stack[1:]]
        k = 0
        while k < len(open_ids) and k < len(path) and open_ids[k] == path[k]:
            k += 1
        del stack[1 + k:]
        for lid in path[k:]:
            children: list = []
            stack[-1][1].append(("loop", lid, children))
            stack.append((lid, children))
        stack[-1][1].append(("ins", nid))
    return root


def _units(elements: list, graph: KernelGraph) -> list:
    """A sequence's elements grouped into runs (lists of instruction ids, each ending at a
    branch or exit) and loops."""
    units: list = []
    run: list = []
    for element in elements:
        if element[0] == "loop":
            if run:
                units.append(run)
                run = []
            units.append(element)
            continue
        run.append(element[1])
        if graph.instructions[element[1]].unit in _BLOCK_ENDS:
            units.append(run)
            run = []
    if run:
        units.append(run)
    return units


class _Packer:
    """Places the elements in columns of at most ``limit`` pixels."""

    def __init__(self, graph: KernelGraph, limit: float, heights: dict):
        self.graph, self.limit, self.heights = graph, limit, heights
        self.column, self.y = 0, 0.0
        self.used = False  # the current column holds an instruction
        self.slots: dict[str, tuple[int, float, int]] = {}  # id -> (column, y, depth)
        self._size: dict[int, float] = {}

    def enter(self, lid: str) -> float:
        return 8.0 + 12.0 * self.heights[lid]

    def leave(self, lid: str) -> float:
        return 6.0 + 12.0 * self.heights[lid]

    def size(self, element) -> float:
        if element[0] == "ins":
            return ROW_SPACING
        key = id(element)
        if key not in self._size:
            self._size[key] = (self.enter(element[1]) + self.leave(element[1])
                               + sum(self.size(e) for e in element[2]))
        return self._size[key]

    def next_column(self) -> None:
        if self.used:
            self.column += 1
            self.y, self.used = 0.0, False

    def place(self, elements: list, depth: int) -> None:
        for unit in _units(elements, self.graph):
            if isinstance(unit, list):  # a straight-line run
                height = ROW_SPACING * len(unit)
                if self.used and self.y + height > self.limit and height <= self.limit:
                    self.next_column()
                for nid in unit:
                    if self.used and self.y + ROW_SPACING > self.limit:
                        self.next_column()
                    self.slots[nid] = (self.column, self.y, depth)
                    self.y += ROW_SPACING
                    self.used = True
                continue
            _, lid, children = unit
            height = self.size(unit)
            spans = height > self.limit
            if self.used and (spans or self.y + height > self.limit):
                self.next_column()
            self.y += self.enter(lid)
            self.place(children, depth + 1)
            self.y += self.leave(lid)
            if spans:
                self.next_column()  # the loop keeps its columns to itself


def _pack(graph: KernelGraph, tree: list, rows: int, heights: dict) -> _Packer:
    packer = _Packer(graph, rows * ROW_SPACING, heights)
    packer.place(tree, 0)
    return packer


def _extent(packer: _Packer, column_width: float) -> tuple[float, float]:
    columns = 1 + max(c for c, _, _ in packer.slots.values())
    bottom = max(y for _, y, _ in packer.slots.values()) + NODE_H
    return columns * column_width - GUTTER, bottom


def wrapped_layout(graph: KernelGraph, aspect: float = DEFAULT_ASPECT, x0: float = 0.0,
                   y0: float = 0.0) -> dict:
    """{instruction id: (x, y)} of every instruction (top-left corners), in columns whose
    height gives the layout about ``aspect`` (width / height) — see the module docstring."""
    if not graph.instructions:
        return {}
    aspect = min(max(float(aspect), 0.5), 4.0)
    paths = loop_paths(graph)
    heights = loop_heights(graph)
    tree = _tree(graph, paths)
    deepest = max(len(p) for p in paths.values())
    column_width = NODE_W + INDENT * deepest + GUTTER
    n = len(graph.instructions)
    # the smallest column height (in rows) whose layout is no wider than ``aspect``; the
    # width shrinks as the columns grow, so a bisection finds it
    low, high = MIN_ROWS, max(MIN_ROWS, n)
    while low < high:
        mid = (low + high) // 2
        width, height = _extent(_pack(graph, tree, mid, heights), column_width)
        if width <= aspect * height:
            high = mid
        else:
            low = mid + 1
    best = _pack(graph, tree, low, heights)
    return {nid: (x0 + column * column_width + INDENT * depth, y0 + y)
            for nid, (column, y, depth) in best.slots.items()}


def layout_extent(positions: dict) -> tuple[float, float]:
    """Width and height of the instructions' bounding box for ``positions``."""
    xs = [x for x, _ in positions.values()]
    ys = [y for _, y in positions.values()]
    return max(xs) + NODE_W - min(xs), max(ys) + NODE_H - min(ys)


def view_aspect(width: float, height: float) -> float:
    """A view's aspect for :func:`wrapped_layout`, from its size in pixels (16:9 unknown)."""
    if width <= 0 or height <= 0 or not math.isfinite(width / height):
        return DEFAULT_ASPECT
    return min(max(width / height, 1.0), 3.0)
