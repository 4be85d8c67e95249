"""Auto-layout of a kernel graph: a layered layout in program order.

Instructions go downwards in program order, one row each; instructions inside loops are
indented by their loop depth so the loop regions nest visibly. Pure function: the editor
turns the positions into one undoable MoveInstructions command.
"""
from __future__ import annotations

from gpumodeler.core.kernel.graph import KernelGraph

ROW_SPACING = 56.0
INDENT = 36.0


def layered_layout(graph: KernelGraph, x0: float = 0.0, y0: float = 0.0) -> dict:
    """{instruction id: (x, y)} for every instruction; loop regions get a gap above them
    (room for their title) and below."""
    depth = {nid: len(graph.loops_containing(nid)) for nid in graph.instructions}
    positions = {}
    y = y0
    prev = 0
    for nid in graph.instructions:
        d = depth[nid]
        if d > prev:
            y += 14.0 * (d - prev)  # room for the loop's title bar
        elif d < prev:
            y += 12.0 * (prev - d)
        positions[nid] = (x0 + INDENT * d, y)
        y += ROW_SPACING
        prev = d
    return positions
