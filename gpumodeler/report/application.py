"""The Gantt chart of a project's application (docs/timeline.md). Simulating it is the
service layer's (:mod:`gpumodeler.service.application`; ``pick_application`` and
``run_application`` are still found here)."""
from __future__ import annotations

from gpumodeler.core.units_format import format_time
from gpumodeler.service.application import pick_application, run_application
from gpumodeler.service.application import ENERGY_BOUND  # noqa: F401  (re-exported)


def timeline_svg(result: dict, width: int = 900) -> str:
    """The Gantt chart of a :func:`~gpumodeler.service.application.run_application` result:
    one row per engine and link."""
    from gpumodeler.report.svg import gantt

    rows: list[str] = []
    bars = []
    for s in result["steps"]:
        places = s["engines"] + s["links"] or ["(no engine)"]
        for r in places:
            if r not in rows:
                rows.append(r)
            tip = (f"{s['name']} ({s['kind']}): {s['start_s']:.6g} s .. {s['end_s']:.6g} s; alone "
                   f"{s['alone_s']:.6g} s" + (f"; energy {s['energy_j']:.4g} J" if s["energy_j"] else ""))
            bars.append({"row": r, "start_s": s["start_s"], "end_s": s["end_s"], "label": s["name"],
                         "group": s["kind"] + (s["device"] or ""), "critical": s["critical"], "tooltip": tip})
    return gantt(rows, bars, title=f"{result['name']}: makespan {format_time(result['makespan_s'])}", width=width)


__all__ = ["pick_application", "run_application", "timeline_svg"]
