"""Where a system drawing puts its links and their labels: the one rule of the System tab's
canvas and the report's drawing, in plain numbers (no Qt), so both draw the same picture.

- A link is a straight segment between its two boxes' edges when that segment crosses no
  other box. Otherwise it is routed around the boxes orthogonally: out of one box's side,
  along a channel beyond every box in the way, into the other box's same side; the shortest
  such detour that crosses no box wins (the four-H100 ring's closing NVLink 4↔1 goes over
  GPUs 2 and 3, not through them). Detours on the same side take channels further out, so
  they never run on top of each other.
- Links of the same two devices (PCIe and NVLink between two GPUs) are drawn side by side,
  :data:`PARALLEL_GAP` apart.
- A label is placed on its route at the first spot, from the middle outwards, where its box
  covers no device box and no label placed before it; beside the route when no spot on it
  is free; where it overlaps least when no spot is free at all.

Geometry only: these are drawing conventions, not a model of the hardware, so there is no
paper to cite. Rectangles are ``(x, y, width, height)`` with y downwards, as on screen.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

Point = tuple[float, float]
Rect = tuple[float, float, float, float]

PARALLEL_GAP = 34.0    # between links of the same two devices
CLEARANCE = 32.0       # between a detour's channel and the boxes it goes around
CHANNEL_GAP = 16.0     # between two detours on the same side
BOX_MARGIN = 4.0       # a route may pass this close to a box it does not join
LABEL_GAP = 4.0        # kept free around a label
LABEL_SPOTS = (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.12, 0.88)


@dataclass(frozen=True)
class Route:
    """A link as drawn: the polyline ``points`` from its first device to its second, and
    the ``label`` rectangle (x, y, width, height)."""
    points: tuple[Point, ...]
    label: Rect

    def middle_segment(self) -> tuple[Point, Point]:
        """The segment in the middle of the route (the channel of a detour)."""
        k = (len(self.points) - 2) // 2
        return self.points[k], self.points[k + 1]


def inflate(r: Rect, d: float) -> Rect:
    return (r[0] - d, r[1] - d, r[2] + 2 * d, r[3] + 2 * d)


def overlap_area(r: Rect, s: Rect) -> float:
    w = min(r[0] + r[2], s[0] + s[2]) - max(r[0], s[0])
    h = min(r[1] + r[3], s[1] + s[3]) - max(r[1], s[1])
    return w * h if w > 0 and h > 0 else 0.0


def centre(r: Rect) -> Point:
    return (r[0] + r[2] / 2, r[1] + r[3] / 2)


def segment_hits_rect(p: Point, q: Point, r: Rect) -> bool:
    """Whether segment ``p``–``q`` meets rectangle ``r`` (Liang–Barsky clipping)."""
    x0, y0 = p
    dx, dy = q[0] - x0, q[1] - y0
    t0, t1 = 0.0, 1.0
    for edge_p, edge_q in ((-dx, x0 - r[0]), (dx, r[0] + r[2] - x0),
                           (-dy, y0 - r[1]), (dy, r[1] + r[3] - y0)):
        if edge_p == 0:
            if edge_q < 0:
                return False
            continue
        t = edge_q / edge_p
        if edge_p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def edge_point(r: Rect, toward: Point, through: Point | None = None) -> Point:
    """Where the ray from ``through`` (default: the box's centre) toward ``toward`` leaves
    box ``r``; ``through`` is clamped into the box."""
    cx, cy = centre(r)
    if through is not None:
        cx = min(max(through[0], r[0]), r[0] + r[2])
        cy = min(max(through[1], r[1]), r[1] + r[3])
    dx, dy = toward[0] - cx, toward[1] - cy
    if dx == 0 and dy == 0:
        return (cx, cy)
    tx = ((r[0] + r[2] - cx) / dx if dx > 0 else (r[0] - cx) / dx) if dx else float("inf")
    ty = ((r[1] + r[3] - cy) / dy if dy > 0 else (r[1] - cy) / dy) if dy else float("inf")
    t = max(0.0, min(tx, ty))
    return (cx + dx * t, cy + dy * t)


def _length(points: Sequence[Point]) -> float:
    return sum(((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5 for a, b in zip(points, points[1:]))


def _clear(points: Sequence[Point], obstacles: Sequence[Rect]) -> bool:
    return not any(segment_hits_rect(a, b, o) for a, b in zip(points, points[1:]) for o in obstacles)


def _flip(r):
    """A rectangle or point with x and y swapped: a detour to the left or right is one
    above or below in the mirrored picture."""
    return (r[1], r[0], r[3], r[2]) if len(r) == 4 else (r[1], r[0])


def _detour(ra: Rect, rb: Rect, side: str, shift: float, boxes: Sequence[Rect],
            used: dict[str, list[tuple[float, float, float]]]) -> list[Point]:
    """Out of ``side`` of ``ra``, along a channel beyond every box between the two, into the
    same side of ``rb``. ``used`` holds the channels taken so far per side (coordinate,
    span)."""
    if side in ("left", "right"):
        mirrored = _detour(_flip(ra), _flip(rb), "above" if side == "left" else "below", shift,
                           [_flip(b) for b in boxes], {"above": used.get("left", []),
                                                       "below": used.get("right", [])})
        return [_flip(p) for p in mirrored]
    (ax, _ay), (bx, _by) = centre(ra), centre(rb)
    lo, hi = sorted((ax + shift, bx + shift))
    inside = [b for b in boxes if b[0] < hi and b[0] + b[2] > lo]
    above = side == "above"
    channel = min(b[1] for b in inside) - CLEARANCE if above else max(b[1] + b[3] for b in inside) + CLEARANCE
    outward = -1.0 if above else 1.0
    for coordinate, s_lo, s_hi in sorted(used.get(side, []), key=lambda u: u[0] * outward):
        if s_lo < hi + CHANNEL_GAP and s_hi > lo - CHANNEL_GAP and \
                (channel - coordinate) * outward < CHANNEL_GAP:
            channel = coordinate + outward * CHANNEL_GAP
    ya = ra[1] if above else ra[1] + ra[3]
    yb = rb[1] if above else rb[1] + rb[3]
    return [(ax + shift, ya), (ax + shift, channel), (bx + shift, channel), (bx + shift, yb)]


def _channel_of(points: Sequence[Point], side: str) -> tuple[float, float, float]:
    (x1, y1), (x2, y2) = points[1], points[2]
    if side in ("above", "below"):
        return (y1, min(x1, x2), max(x1, x2))
    return (x1, min(y1, y2), max(y1, y2))


def route_paths(boxes: dict[str, Rect], links: Sequence[tuple[str, str, str]]) -> dict[str, list[Point]]:
    """The polyline of each link ``(id, a, b)`` between the boxes of devices ``a`` and
    ``b`` (links whose devices have no box are left out): straight, side by side with the
    other links of the same pair, or around the boxes in the way (module docstring)."""
    pairs: dict[frozenset, list[str]] = {}
    for lid, a, b in links:
        if a in boxes and b in boxes and a != b:
            pairs.setdefault(frozenset((a, b)), []).append(lid)
    used: dict[str, list[tuple[float, float, float]]] = {}
    out: dict[str, list[Point]] = {}
    for lid, a, b in links:
        if a not in boxes or b not in boxes or a == b:
            continue
        same = pairs[frozenset((a, b))]
        shift = (same.index(lid) - (len(same) - 1) / 2) * PARALLEL_GAP
        first, second = sorted((a, b))   # both ends agree on the perpendicular's direction
        (c1x, c1y), (c2x, c2y) = centre(boxes[first]), centre(boxes[second])
        dx, dy = c2x - c1x, c2y - c1y
        norm = (dx * dx + dy * dy) ** 0.5 or 1.0
        off = (-dy / norm * shift, dx / norm * shift)
        ca, cb = centre(boxes[a]), centre(boxes[b])
        through_a, through_b = (ca[0] + off[0], ca[1] + off[1]), (cb[0] + off[0], cb[1] + off[1])
        p1 = edge_point(boxes[a], through_b, through_a)
        p2 = edge_point(boxes[b], through_a, through_b)
        others = [inflate(r, BOX_MARGIN) for k, r in boxes.items() if k not in (a, b)]
        if _clear([p1, p2], others):
            out[lid] = [p1, p2]
            continue
        every = [r for k, r in boxes.items()]
        # a detour keeps its pair's side-by-side shift along the channel's direction
        candidates = []
        for side in ("above", "below", "left", "right"):
            path = _detour(boxes[a], boxes[b], side, shift, every, used)
            if _clear(path[1:-1], others) and _clear(path, others):
                candidates.append((_length(path), side, path))
        if not candidates:
            out[lid] = [p1, p2]
            continue
        _len, side, path = min(candidates, key=lambda c: c[0])
        used.setdefault(side, []).append(_channel_of(path, side))
        out[lid] = path
    return out


def _point_at(points: Sequence[Point], fraction: float) -> tuple[Point, Point]:
    """The point ``fraction`` of the way along the polyline, and the direction there."""
    total = _length(points)
    goal = total * fraction
    for a, b in zip(points, points[1:]):
        seg = ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5
        if seg > 0 and goal <= seg:
            t = goal / seg
            return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t), ((b[0] - a[0]) / seg, (b[1] - a[1]) / seg)
        goal -= seg
    a, b = points[-2], points[-1]
    seg = ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5 or 1.0
    return b, ((b[0] - a[0]) / seg, (b[1] - a[1]) / seg)


def place_labels(paths: Mapping[str, Sequence[Point]], sizes: dict[str, tuple[float, float]],
                 boxes: Sequence[Rect], order: Sequence[str] | None = None) -> dict[str, Rect]:
    """A rectangle of ``sizes[id]`` for each path's label: on the path at the first of
    :data:`LABEL_SPOTS` (then beside the path) where it covers no box and no label placed
    earlier (in ``order``, default the paths' order); where it overlaps least otherwise.
    Beside the path means up to four label widths off it, either side, nearest first."""
    placed: list[Rect] = []
    out: dict[str, Rect] = {}
    obstacles = [inflate(b, LABEL_GAP) for b in boxes]
    for lid in order if order is not None else list(paths):
        points = paths.get(lid)
        if not points or lid not in sizes:
            continue
        w, h = sizes[lid]
        best: tuple[float, Rect] | None = None
        for beside in (0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0):
            for fraction in LABEL_SPOTS:
                (x, y), (ux, uy) = _point_at(points, fraction)
                # beside: moved off the path, perpendicular to it, by (a multiple of) half the
                # label and a gap: out of a gap between two boxes too narrow to hold it
                dist = beside * ((abs(uy) * w + abs(ux) * h) / 2 + LABEL_GAP + 4)
                x, y = x - uy * dist, y + ux * dist
                rect = (x - w / 2, y - h / 2, w, h)
                cost = (sum(overlap_area(rect, o) for o in obstacles)
                        + sum(overlap_area(inflate(rect, LABEL_GAP), p) for p in placed))
                if best is None or cost < best[0]:
                    best = (cost, rect)
                if cost == 0:
                    break
            if best is not None and best[0] == 0:
                break
        assert best is not None  # LABEL_SPOTS is not empty
        out[lid] = best[1]
        placed.append(best[1])
    return out


def route_links(boxes: dict[str, Rect], links: Sequence[tuple[str, str, str]],
                label_sizes: dict[str, tuple[float, float]]) -> dict[str, Route]:
    """Each link's :class:`Route`: its path (:func:`route_paths`) and its label's place
    (:func:`place_labels`)."""
    paths = route_paths(boxes, links)
    labels = place_labels(paths, label_sizes, list(boxes.values()),
                          order=[lid for lid, _a, _b in links if lid in paths])
    return {lid: Route(tuple(p), labels[lid]) for lid, p in paths.items() if lid in labels}
