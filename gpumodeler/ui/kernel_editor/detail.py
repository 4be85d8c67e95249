"""How much the kernel canvas draws at the view's scale.

Below :data:`DETAIL_SCALE` an item's text is too small to read, so instructions are drawn as
plain boxes in their unit's colour, edges without antialiasing, and latency labels and loop
titles not at all: a kernel of 10^4 instructions fitted in the view (F) repaints in a
fraction of the time, and zooming in shows the text again. Below :data:`OVERVIEW_SCALE` (an
overview of thousands of instructions) only the marked edges are drawn (the critical path,
the selected, those in error): the others would be a grey blur of sub-pixel lines.
"""
from __future__ import annotations

from PySide6.QtGui import QPainter

DETAIL_SCALE = 0.4
OVERVIEW_SCALE = 0.15


def zoomed_out(option, painter: QPainter) -> bool:
    """The view shows the item too small for its text (:data:`DETAIL_SCALE`)."""
    return option.levelOfDetailFromTransform(painter.worldTransform()) < DETAIL_SCALE


def overview(option, painter: QPainter) -> bool:
    """The view shows the item at an overview's scale (:data:`OVERVIEW_SCALE`)."""
    return option.levelOfDetailFromTransform(painter.worldTransform()) < OVERVIEW_SCALE
