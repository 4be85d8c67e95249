"""The Gantt chart of a project's application (docs/timeline.md). Simulating it is the
service layer's (:mod:`gpumodeler.service.application`; ``pick_application`` and
``run_application`` are still found here)."""
from __future__ import annotations

from gpumodeler.core.units_format import format_time
from gpumodeler.service.application import pick_application, run_application
from gpumodeler.service.application import ENERGY_BOUND  # noqa: F401  (re-exported)


#: Above this many steps the report summarises an application (per-name totals, the critical
#: path, the longest steps) instead of listing every step; ``timeline --json`` lists them all.
SUMMARY_OVER = 200

#: The plot's width in the SVG Gantt chart is the chart's width less its margins
#: (:func:`gpumodeler.report.svg.gantt`): bars are merged below one of its pixels.
_GANTT_MARGINS = 190


def timeline_svg(result: dict, width: int = 900) -> str:
    """The Gantt chart of a :func:`~gpumodeler.service.application.run_application` result:
    one row per engine and link. Level of detail: on each row, consecutive steps narrower
    than a pixel that touch within a pixel are drawn as one bar ("N steps"), so a 10^5-step
    application makes a chart of at most a few thousand bars per row."""
    from gpumodeler.report.svg import gantt

    rows: list[str] = []
    per_row: dict = {}
    for s in result["steps"]:
        places = s["engines"] + s["links"] or ["(no engine)"]
        for r in places:
            if r not in per_row:
                rows.append(r)
                per_row[r] = []
            per_row[r].append(s)
    pixel = max(result["makespan_s"], 0.0) / max(1, width - _GANTT_MARGINS)
    bars = []
    for r in rows:
        for group in merged_runs(per_row[r], pixel):
            if len(group) == 1:
                s = group[0]
                tip = (f"{s['name']} ({s['kind']}): {s['start_s']:.6g} s .. {s['end_s']:.6g} s; alone "
                       f"{s['alone_s']:.6g} s" + (f"; energy {s['energy_j']:.4g} J" if s["energy_j"] else ""))
                bars.append({"row": r, "start_s": s["start_s"], "end_s": s["end_s"], "label": s["name"],
                             "group": s["kind"] + (s["device"] or ""), "critical": s["critical"], "tooltip": tip})
                continue
            start, end = group[0]["start_s"], max(s["end_s"] for s in group)
            bars.append({"row": r, "start_s": start, "end_s": end, "label": f"{len(group)} steps",
                         "group": "merged", "critical": any(s["critical"] for s in group),
                         "tooltip": f"{len(group)} steps, each narrower than a pixel: {start:.6g} s .. {end:.6g} s"})
    return gantt(rows, bars, title=f"{result['name']}: makespan {format_time(result['makespan_s'])}", width=width)


def merged_runs(steps: list, pixel: float, start: str = "start_s", end: str = "end_s",
                presorted: bool = False) -> list:
    """``steps`` of one row (each with a ``start`` and an ``end`` key) in runs to draw as one
    bar: by start time, a step narrower than ``pixel`` joins the run before it when that run
    is also made of such steps and ends less than a pixel before it starts. Wider steps stay
    alone. Each step is in exactly one run. ``presorted``: the steps are already by start."""
    runs: list = []
    narrow_end = None  # the end of the current run of narrow steps, None when there is none
    ordered = steps if presorted else sorted(steps, key=lambda s: (s[start], s[end]))
    for s in ordered:
        s0, s1 = s[start], s[end]
        narrow = s1 - s0 < pixel
        if narrow and narrow_end is not None and s0 - narrow_end < pixel:
            runs[-1].append(s)
            if s1 > narrow_end:
                narrow_end = s1
        else:
            runs.append([s])
            narrow_end = s1 if narrow else None
    return runs


def step_summary(result: dict, top: int = 15, groups: int = 30) -> dict:
    """What a report shows of an application too large to list (docs/timeline.md):

    * ``by_name``: per step name and kind (a kernel's name, a copy's), the count, total and
      mean duration and how many are on the critical path, largest total first (at most
      ``groups``; ``other`` sums the rest);
    * ``critical``: the critical path's length in steps, its first and last step, and its
      time per name (largest first, at most ``groups``);
    * ``top``: the ``top`` longest steps (name, kind, engine, start, end, waited, stretched).
    """
    names: dict = {}
    for s in result["steps"]:
        g = names.setdefault((s["name"], s["kind"]), {"name": s["name"], "kind": s["kind"], "count": 0,
                                                       "total_s": 0.0, "critical": 0})
        g["count"] += 1
        g["total_s"] += s["end_s"] - s["start_s"]
        g["critical"] += bool(s["critical"])
    ranked = sorted(names.values(), key=lambda g: (-g["total_s"], g["name"], g["kind"]))
    for g in ranked:
        g["mean_s"] = g["total_s"] / g["count"]
    rest = ranked[groups:]
    other = ({"count": sum(g["count"] for g in rest), "total_s": sum(g["total_s"] for g in rest),
              "names": len(rest)} if rest else None)
    by_id = {s["id"]: s for s in result["steps"]}
    path = [by_id[i] for i in result["critical_path"] if i in by_id]
    on_path: dict = {}
    for s in path:
        on_path[s["name"]] = on_path.get(s["name"], 0.0) + s["end_s"] - s["start_s"]
    longest = sorted(result["steps"], key=lambda s: (-(s["end_s"] - s["start_s"]), s["start_s"]))[:top]
    return {
        "steps": len(result["steps"]), "by_name": ranked[:groups], "other": other,
        "critical": {"steps": len(path), "first": path[0]["name"] if path else None,
                     "last": path[-1]["name"] if path else None,
                     "by_name": sorted(on_path.items(), key=lambda kv: (-kv[1], kv[0]))[:groups]},
        "top": [{k: s[k] for k in ("id", "name", "kind", "engine", "start_s", "end_s", "waited_s", "stretched_s")}
                for s in longest]}


def path_text(path: list, shown: int = 12) -> str:
    """A critical path for a line of text: every step when it is short, else its first and
    last steps and how many lie between."""
    if len(path) <= shown:
        return " → ".join(path)
    half = shown // 2
    return " → ".join(path[:half]) + f" → … ({len(path) - 2 * half} steps) … → " + " → ".join(path[-half:])


__all__ = ["SUMMARY_OVER", "merged_runs", "path_text", "pick_application", "run_application", "step_summary",
           "timeline_svg"]
