"""Deterministic SVG charts (text out, no Qt): the same input gives the same bytes.

Used by ``gpumodeler timeline --svg`` and the HTML report. Text stays text (vector, selectable,
searchable); numbers are written with a fixed precision so the output is reproducible.
"""
from __future__ import annotations

from html import escape
import math

from gpumodeler.core.units_format import time_unit

PALETTE = ("#4472c4", "#ed7d31", "#70ad47", "#7f6000", "#5b9bd5", "#a5a5a5", "#9e480e", "#264478")
CRITICAL = "#c00000"


def _n(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def nice_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    """Round tick values covering [lo, hi] (1, 2, 5 × 10^k steps)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, k = [], 0
    while True:
        v = start + k * step
        if v > hi + step * 1e-9:
            break
        if v >= lo - step * 1e-9:
            ticks.append(round(v, 12))
        k += 1
    return ticks


def gantt(rows: list[str], bars: list[dict], *, title: str = "", width: int = 900) -> str:
    """A Gantt chart: ``rows`` (engine and link names, top to bottom), ``bars`` with
    ``row``, ``start_s``, ``end_s``, ``label``, ``critical`` (bool) and ``tooltip``."""
    left, right, top, row_h, bottom = 170, 20, 34 if title else 14, 26, 40
    height = top + row_h * max(1, len(rows)) + bottom
    end = max((b["end_s"] for b in bars), default=0.0)
    unit, scale = time_unit(end if end > 0 else 1.0)
    span = end if end > 0 else 1.0
    plot_w = width - left - right

    def x(t):
        return left + plot_w * (t / span)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>')
    for i, r in enumerate(rows):
        y = top + i * row_h
        if i % 2 == 0:
            out.append(f'<rect x="{left}" y="{y}" width="{plot_w}" height="{row_h}" fill="#f4f4f4"/>')
        out.append(f'<text x="{left - 6}" y="{y + row_h / 2 + 4:.0f}" text-anchor="end">{escape(r)}</text>')
    for t in nice_ticks(0.0, span / scale):
        xx = x(t * scale)
        y0, y1 = top, top + row_h * len(rows)
        out.append(f'<line x1="{_n(xx)}" y1="{y0}" x2="{_n(xx)}" y2="{y1 + 4}" stroke="#bbbbbb" stroke-width="0.5"/>')
        out.append(f'<text x="{_n(xx)}" y="{y1 + 17}" text-anchor="middle">{t:g}</text>')
    out.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" text-anchor="middle">time ({unit})</text>')
    index = {r: i for i, r in enumerate(rows)}
    colors: dict = {}
    for b in bars:
        i = index[b["row"]]
        y = top + i * row_h + 4
        x0, x1 = x(b["start_s"]), x(b["end_s"])
        w = max(x1 - x0, 0.75)
        color = colors.setdefault(b.get("group", b["label"]), PALETTE[len(colors) % len(PALETTE)])
        stroke = f' stroke="{CRITICAL}" stroke-width="2"' if b.get("critical") else ""
        out.append(f'<rect x="{_n(x0)}" y="{y}" width="{_n(w)}" height="{row_h - 8}" fill="{color}" '
                   f'fill-opacity="0.85"{stroke}><title>{escape(b.get("tooltip", b["label"]))}</title></rect>')
        if w > 7 * len(b["label"]):
            out.append(f'<text x="{_n(x0 + w / 2)}" y="{y + row_h / 2}" text-anchor="middle" '
                       f'fill="white" font-size="11">{escape(b["label"])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def line_chart(series: list[dict], *, x_label: str, y_label: str, title: str = "",
               log_x: bool = False, log_y: bool = False, width: int = 640, height: int = 400) -> str:
    """Lines with markers: ``series`` items have ``name``, ``x``, ``y`` (lists of floats,
    non-finite points skipped), optional ``dash`` (bool). Used for saved sweeps in reports."""
    longest = max((len(s["name"]) for s in series), default=0)
    right = max(60, 50 + 7 * longest)
    width += right - 160
    left, top, bottom = 70, 34 if title else 14, 46
    pts = [(px, py) for s in series for px, py in zip(s["x"], s["y"])
           if _ok(px, log_x) and _ok(py, log_y)]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>')
    if not pts:
        out.append(f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle">no data</text></svg>')
        return "\n".join(out) + "\n"
    tx = (lambda v: math.log10(v)) if log_x else (lambda v: v)
    ty = (lambda v: math.log10(v)) if log_y else (lambda v: v)
    xs, ys = [tx(p[0]) for p in pts], [ty(p[1]) for p in pts]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x1 == x0:
        x0, x1 = x0 - 0.5, x1 + 0.5
    if y1 == y0:
        y0, y1 = (y0 - 0.5, y1 + 0.5) if log_y else (min(0.0, y0), y1 * 1.1 if y1 > 0 else 1.0)
    pw, ph = width - left - right, height - top - bottom

    def X(v):
        return left + pw * (tx(v) - x0) / (x1 - x0)

    def Y(v):
        return top + ph * (1 - (ty(v) - y0) / (y1 - y0))
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888888"/>')
    for axis, (lo, hi), log in (("x", (x0, x1), log_x), ("y", (y0, y1), log_y)):
        ticks = [10 ** k for k in range(math.ceil(lo), math.floor(hi) + 1)] if log else nice_ticks(lo, hi)
        for t in ticks:
            if axis == "x":
                xx = X(t)
                out.append(f'<line x1="{_n(xx)}" y1="{top + ph}" x2="{_n(xx)}" y2="{top + ph + 4}" stroke="#888888"/>')
                out.append(f'<text x="{_n(xx)}" y="{top + ph + 17}" text-anchor="middle">{t:g}</text>')
            else:
                yy = Y(t)
                out.append(f'<line x1="{left - 4}" y1="{_n(yy)}" x2="{left}" y2="{_n(yy)}" stroke="#888888"/>')
                out.append(f'<text x="{left - 6}" y="{_n(yy + 4)}" text-anchor="end">{t:g}</text>')
    out.append(f'<text x="{left + pw / 2:.0f}" y="{height - 8}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text x="14" y="{top + ph / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 14 {top + ph / 2:.0f})">{escape(y_label)}</text>')
    for k, s in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        sp = [(X(a), Y(b)) for a, b in zip(s["x"], s["y"]) if _ok(a, log_x) and _ok(b, log_y)]
        if not sp:
            continue
        dash = ' stroke-dasharray="6 4"' if s.get("dash") else ""
        path = " ".join(f"{_n(a)},{_n(b)}" for a, b in sp)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.6"{dash}/>')
        for a, b in sp:
            out.append(f'<circle cx="{_n(a)}" cy="{_n(b)}" r="2.2" fill="{color}"/>')
        ly = top + 14 + 18 * k
        out.append(f'<line x1="{left + pw + 10}" y1="{ly - 4}" x2="{left + pw + 34}" y2="{ly - 4}" '
                   f'stroke="{color}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{left + pw + 38}" y="{ly}">{escape(s["name"])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _ok(v, log) -> bool:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return False
    return math.isfinite(v) and (v > 0 or not log)
