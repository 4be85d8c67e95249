"""Where the Gantt chart's texts go, worked out without Qt: which bar names fit inside their
bar, which are shortened with an ellipsis, which move beside their bar, which are hidden; which
lane names the left axis can show; how many lanes the view holds. Everything is in pixels of
the view as it is now (the chart calls these again after every zoom, pan or resize), and text
widths come from a ``measure`` function the caller gives (the real font's metrics on screen,
a fixed width per character in tests).

The rule is that no two placed texts overlap and no text leaves its lane: a name that cannot
be shown whole is shortened, then moved beside its bar, then dropped; the tooltip of the bar
still names it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

ELLIPSIS = "…"
MIN_CHARS = 3          # a shortened name keeps at least this many characters before the "…"
PAD_PX = 3.0           # space kept between a text and its bar's edge, or another text
MIN_LANE_PX = 18.0     # a lane is never drawn thinner than this: more lanes scroll
MAX_LANE_PX = 44.0     # nor thicker: a lane of two GPUs need not fill a 1080 p screen


@dataclass(frozen=True)
class BarText:
    """A bar's name as the chart draws it: ``text`` (maybe shortened), its centre ``x_px``,
    its ``lane``, and whether it sits ``inside`` the bar (light on the bar's colour) or
    beside it (dark on the background). ``left_px``/``right_px`` are its extent."""
    bar: int
    text: str
    x_px: float
    lane: int
    inside: bool
    left_px: float
    right_px: float


def char_measure(char_px: float) -> Callable[[str], float]:
    """A measure that gives every character the same width (for tests and estimates)."""
    return lambda text: char_px * len(text)


def elide(text: str, room_px: float, measure: Callable[[str], float]) -> str | None:
    """``text`` whole if it fits in ``room_px``, else its longest start that fits followed by
    "…" (at least :data:`MIN_CHARS` characters of it), else None."""
    if measure(text) <= room_px:
        return text
    lo, hi = 0, len(text) - 1   # longest n with measure(text[:n] + "…") <= room_px
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure(text[:mid].rstrip() + ELLIPSIS) <= room_px:
            lo = mid
        else:
            hi = mid - 1
    if lo < min(MIN_CHARS, len(text)):
        return None
    return text[:lo].rstrip() + ELLIPSIS


def _free(spans: list[tuple[float, float]], left: float, right: float) -> bool:
    return all(right + PAD_PX <= a or left - PAD_PX >= b for a, b in spans)


def place_bar_labels(bars: Sequence[tuple[int, float, float, str]], *, lane_px: float,
                     text_px: float, view_px: tuple[float, float],
                     measure: Callable[[str], float]) -> list[BarText]:
    """The names of ``bars`` — (lane, left px, right px, name) each — placed so that none
    overlaps another or leaves the view ``view_px`` (left, right):

    - inside the visible part of its bar, whole or shortened, when at least
      :data:`MIN_CHARS` characters fit;
    - else just right of the bar, dark, whole or shortened, when that space of its lane is
      free up to the next bar (no bar of the lane runs past this one's end);
    - else not at all.

    Nothing is placed when a lane is thinner than a line of text. Bars earlier in the list
    win a contested place (the chart lists the critical path's first)."""
    if lane_px < text_px + 2:
        return []
    lo_view, hi_view = view_px
    by_lane: dict[int, list[tuple[float, float]]] = {}   # lane -> bars' extents
    for lane, left, right, _name in bars:
        by_lane.setdefault(lane, []).append((left, right))
    for spans in by_lane.values():
        spans.sort()
    taken: dict[int, list[tuple[float, float]]] = {}       # lane -> placed texts' extents
    out = []
    for index, (lane, left, right, name) in enumerate(bars):
        if not name or right < lo_view or left > hi_view:
            continue
        used = taken.setdefault(lane, [])
        a, b = max(left, lo_view), min(right, hi_view)
        text = elide(name, b - a - 2 * PAD_PX, measure)
        if text is not None:
            w = measure(text)
            centre = (a + b) / 2
            if _free(used, centre - w / 2, centre + w / 2):
                used.append((centre - w / 2, centre + w / 2))
                out.append(BarText(index, text, centre, lane, True, centre - w / 2, centre + w / 2))
                continue
        # beside: from the bar's end to the next bar that starts after it (or the view's edge),
        # never over another bar (one running past this bar's end: a concurrent kernel)
        if any(s < right < e for s, e in by_lane[lane]):
            continue
        start = max(right, lo_view) + PAD_PX
        stop = min([s for s, _e in by_lane[lane] if s >= right] + [hi_view]) - PAD_PX
        text = elide(name, stop - start, measure)
        if text is None:
            continue
        w = measure(text)
        if _free(used, start, start + w):
            used.append((start, start + w))
            out.append(BarText(index, text, start + w / 2, lane, False, start, start + w))
    return out


def lane_label_step(lane_px: float, text_px: float) -> int:
    """Show every k-th lane name so that names do not overlap (1: all of them)."""
    if lane_px <= 0:
        return 0
    k = 1
    while k * lane_px < text_px:
        k += 1
    return k


def lane_names(rows: Sequence[str], *, lane_px: float, text_px: float, room_px: float,
               measure: Callable[[str], float]) -> list[str]:
    """The left axis's text for each of ``rows``: the display name (:func:`display_name`),
    shortened to ``room_px``, or "" for lanes skipped because lanes are thinner than text."""
    step = lane_label_step(lane_px, text_px)
    out = []
    for i, row in enumerate(rows):
        text = elide(display_name(row), room_px, measure) if step and i % step == 0 else None
        out.append(text or "")
    return out


def display_name(row: str) -> str:
    """A lane as a person reads it: ``gpu1/copy`` -> ``gpu1 copy``,
    ``link1:host1>gpu1`` -> ``link1 host1→gpu1``."""
    if ":" in row:
        link, _, direction = row.partition(":")
        return f"{link} {direction.replace('>', '→')}"
    return row.replace("/", " ")


def lanes_in_view(n_lanes: int, view_px: float, *, min_px: float = MIN_LANE_PX,
                  max_px: float = MAX_LANE_PX) -> float:
    """How many lanes the chart's height ``view_px`` shows at once: all of them when each
    gets at least ``min_px`` (the rest scroll otherwise), and never lanes thicker than
    ``max_px`` (the chart then leaves space below the last lane)."""
    if n_lanes <= 0:
        return 1.0
    if view_px <= 0:
        return float(n_lanes)
    fit = max(1.0, view_px / min_px)
    if n_lanes > fit:
        return float(int(fit))
    return max(float(n_lanes), view_px / max_px)
