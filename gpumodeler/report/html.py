"""The reproducible HTML report of a project (``gpumodeler report``, File › Export report…).

One self-contained file — no external resource, no script: inline CSS and inline SVG — that
leads with the answer: a table of contents, then a summary (each launch's kernel and total
time, bound, binding resource and the spread of the registered models; each application's
makespan, energy and critical path) in engineering units, then the figures (the system, every
saved sweep, each application's timeline), then the details: the system drawing, every value of every device and link the project uses with its unit and
provenance (project overrides marked; identical placed devices or links shown once, with
their count and ids), each kernel's latency bound and per-warp counts, each
launch's prediction with the equations it evaluates and their intermediate values, every saved
sweep as a plot, each application's timeline, and a footer with the gpumodeler version, the
SHA-256 of the device databases and the command that regenerates the report.

Reproducible: the same project and databases give the same bytes (no date is written; every
number is formatted with a fixed precision; every collection keeps the document's order).
Printable from a browser: tables are not split across pages and their header rows repeat.
"""
from __future__ import annotations

import hashlib
from html import escape
import math
import re
from pathlib import Path

from gpumodeler.core.errors import ModelError
from gpumodeler.core.physical import describe, is_finite
from gpumodeler.core.system_routes import route_links
from gpumodeler.core.units_format import format_si
from gpumodeler.core.units_format import format_time

CSS = """
body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0 1.2em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
.override{font-weight:bold;color:#8b0000}.unknown{color:#999}.err{color:#b00}
.eq{font-family:monospace;background:#f7f7f7;padding:.1em .3em}
footer{margin-top:3em;border-top:1px solid #ccc;padding-top:.5em;font-size:.85em;color:#555}
code{background:#f4f4f4;padding:0 .2em}
table{max-width:100%}td{overflow-wrap:anywhere}svg{max-width:100%;height:auto}
nav ol{margin:.3em 0}nav li{margin:.1em 0}
@media print{body{max-width:none;margin:0;padding:0}a{color:inherit;text-decoration:none}
table{break-inside:avoid}thead{display:table-header-group}tr{break-inside:avoid}
h2,h3,h4{break-after:avoid}svg{break-inside:avoid}}
"""


def _num(v) -> str:
    if isinstance(v, bool) or v is None:
        return escape(str(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not is_finite(v):  # never a result (core.physical): flagged as an error
            return f"<span class='err'>refused: not a finite number ({describe(v)})</span>"
        return f"{v:.6g}"
    return escape(str(v))


#: units a device or link value is shown in with an SI prefix (every digit kept)
SI_UNITS = ("Hz", "B/s", "W")


def _quantity(v, unit: str) -> str:
    """A device or link value in engineering units when its unit takes a prefix (clocks,
    bandwidths, powers: "1.98 GHz"; times: "4.5 µs"), all its digits kept; else as is."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and is_finite(v) and v:
        if unit in SI_UNITS:
            return escape(format_si(float(v), unit, 12))
        if unit == "s":
            return escape(format_time(float(v), 12))
    return _num(v)


def _table(headers, rows, num_cols=()) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr></thead>"]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            cls = ' class="num"' if i in num_cols else ""
            cells.append(f"<td{cls}>{c}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def sha256_of(path) -> str:
    if path is None or not Path(path).exists():
        return "none"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


CANVAS_CARD = (236.0, 74.0)   # a device card's size on the System tab (ui DeviceItem)
LINK_SVG_COLOURS = {"nvlink": "#2e7d32", "pcie": "#1f4e9c", "network": "#7b1fa2"}
LINK_LABEL_CHAR_PX = 6.0   # a generous width per character of a 10 px sans-serif label


def system_svg(project) -> str:
    """The system canvas: devices at their positions, links with their names, routed and
    labelled by the canvas's rule (:func:`gpumodeler.core.system_routes.route_links`)."""
    devices = list(project.devices.values())
    if not devices:
        return "<p>(no devices)</p>"
    # The canvas's picture scaled down: positions and cards (236 × 74 there) in proportion,
    # so the links are routed as they are on the System tab.
    box_w, pad = 150, 40
    scale = box_w / CANVAS_CARD[0]
    box_h = CANVAS_CARD[1] * scale
    x0, y0 = min(d.x for d in devices), min(d.y for d in devices)
    pos = {d.id: (pad + (d.x - x0) * scale + box_w / 2, pad + (d.y - y0) * scale + box_h / 2)
           for d in devices}
    width = int(max(x for x, _y in pos.values()) + box_w / 2 + pad)   # as wide as the system
    height = int(max(y for _x, y in pos.values()) + box_h / 2 + pad)
    # Links routed as on the System tab (core.system_routes): around the boxes in the way,
    # pairs side by side, labels on no box and no other label. The routes may leave the
    # boxes' area (a detour over the row), so the picture grows to hold them.
    boxes = {i: (cx - box_w / 2, cy - box_h / 2, box_w, box_h) for i, (cx, cy) in pos.items()}
    links = [(c.id, c.a, c.b) for c in project.connections.values()]
    # short names, as on the canvas ("NVLink 4.0" for "NVLink 4.0 (H100 SXM5, 18 links)")
    names = {c.id: c.label or re.sub(r"\s*\(.*\)$", "", c.link_name) for c in project.connections.values()}
    sizes = {lid: (LINK_LABEL_CHAR_PX * len(names[lid]) + 10, 16.0) for lid, _a, _b in links}
    routes = route_links(boxes, links, sizes)
    xs_all = [x for r in routes.values() for x, _y in r.points] + [r.label[0] for r in routes.values()] + \
             [r.label[0] + r.label[2] for r in routes.values()] + [0.0, float(width)]
    ys_all = [y for r in routes.values() for _x, y in r.points] + [r.label[1] for r in routes.values()] + \
             [r.label[1] + r.label[3] for r in routes.values()] + [0.0, float(height)]
    left, top = min(xs_all) - 8, min(ys_all) - 8
    width, height = int(max(xs_all) + 8 - left + 0.5), int(max(ys_all) + 8 - top + 0.5)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="{left:.0f} {top:.0f} {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect x="{left:.0f}" y="{top:.0f}" width="{width}" height="{height}" fill="white"/>']
    connections = project.connections
    for lid, route in routes.items():
        c = connections[lid]
        color = LINK_SVG_COLOURS.get(c.link_type, "#555")
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in route.points)
        out.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2" '
                   f'stroke-linejoin="round"><title>{escape(c.link_name)}</title></polyline>')
    for lid, route in routes.items():
        c = connections[lid]
        color = LINK_SVG_COLOURS.get(c.link_type, "#555")
        x, y, w, h = route.label
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="3" fill="white" '
                   f'stroke="{color}" stroke-width="0.8"/>')
        out.append(f'<text x="{x + w / 2:.1f}" y="{y + h / 2 + 3.5:.1f}" text-anchor="middle" '
                   f'fill="{color}" font-size="10">{escape(names[lid])}</text>')
    for d in devices:
        cx, cy = pos[d.id]
        fill = "#e8f0fe" if d.kind == "gpu" else "#fff4e0"
        out.append(f'<rect x="{cx - box_w / 2:.1f}" y="{cy - box_h / 2:.1f}" width="{box_w}" height="{box_h}" '
                   f'rx="6" fill="{fill}" stroke="#444"/>')
        out.append(f'<text x="{cx:.1f}" y="{cy - 4:.1f}" text-anchor="middle" font-weight="bold">'
                   f'{escape(d.label or d.id)}</text>')
        name = d.device_name if len(d.device_name) <= 24 else d.device_name[:23] + "…"
        out.append(f'<text x="{cx:.1f}" y="{cy + 12:.1f}" text-anchor="middle" font-size="10">'
                   f'{escape(name)}{" ×" + str(d.count) if d.count != 1 else ""}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _placed_title(name: str, placed: list) -> str:
    """``NAME`` with its id (and label), or ``NAME ×4`` and the ids of the identical ones."""
    ids = ", ".join(escape(pid) + (f" ({escape(label)})" if label else "") for pid, label in placed)
    if len(placed) == 1:
        return f"{ids}: {escape(name)}"
    return f"{escape(name)} ×{len(placed)}: {ids}"


def identical_groups(items) -> list:
    """``(name, overrides, [(id, label), ...])`` for each distinct catalog entry and set of
    overrides among ``items`` (``(id, name, overrides, label)``), in the order of the first
    of each: placed devices or links whose value tables would be identical share one."""
    groups: dict = {}
    for pid, name, overrides, label in items:
        key = (name, tuple(sorted((k, repr(v)) for k, v in overrides.items())))
        groups.setdefault(key, (name, overrides, []))[2].append((pid, label))
    return list(groups.values())


def _values_section(project, catalog, what: str) -> str:
    """The value tables of the project's devices (``what`` "device") or links ("link"),
    one per group of identical ones."""
    parts = []
    sources = catalog.sources()
    if what == "device":
        items = [(d.id, d.device_name, d.overrides, d.label) for d in project.devices.values()]
    else:
        items = [(c.id, c.link_name, c.overrides, c.label) for c in project.connections.values()]
    for name, overrides, placed in identical_groups(items):
        title = _placed_title(name, placed)
        try:
            record = catalog.get(name)
        except ModelError as exc:
            parts.append(f"<h4>{title}</h4><p class='err'>{escape(str(exc))}</p>")
            continue
        rows = []
        fields = list(record.values)
        for f in list(overrides):
            if f not in fields:
                fields.append(f)
        for f in fields:
            r = record.default_record(f)
            cited = ""
            if r is not None:
                src = r.source_text or (sources.get(r.source, r.source) if r.source else "")
                cited = escape(src or "") + (f", {escape(r.where)}" if r.where else "")
            value = r.value if r is not None else None
            if f in overrides:
                rows.append((f"<span class='override'>{escape(f)}</span>",
                             f"<span class='override'>{_quantity(overrides[f], r.unit if r else '')}</span>",
                             escape(r.unit if r else ""), "<span class='override'>project override</span>",
                             f"catalog value {_quantity(value, r.unit if r else '')}" + (f" ({cited})" if cited else "")))
            elif value is None:
                rows.append((escape(f), "<span class='unknown'>unknown</span>", escape(r.unit if r else ""),
                             escape(r.provenance or "") if r else "", cited))
            else:
                rows.append((escape(f), _quantity(value, r.unit), escape(r.unit), escape(r.provenance or ""), cited))
        parts.append(f"<h4>{title}</h4>" + _table(("field", "value", "unit", "provenance", "source"), rows, (1,)))
    return "\n".join(parts) or f"<p>(no {what}s)</p>"


def _kernels_section(kernels: list) -> str:
    parts = []
    for entry in kernels:
        g = entry["graph"]
        parts.append(f"<h4>{escape(entry['id'])}: {escape(g.name)}</h4>")
        parts.append(f"<p>{len(g.instructions)} instructions, {len(g.edges)} edges, {len(g.loops)} loop(s); "
                     f"latency table <code>{escape(str(g.latency_table))}</code>; variables "
                     f"{escape(', '.join(f'{k} = {v:g}' for k, v in g.variables.items()) or 'none')}</p>")
        if entry["formula"] is not None:
            parts.append(f"<p>Latency bound (critical path of the execution graph, Volkov §3.7–3.8, "
                         f"Gajger §4.4.2): <span class='eq'>{escape(entry['formula'])}</span> cycles</p>")
        if entry["counts"] is not None:
            rows = [(escape(name), _num(float(v))) for name, v in entry["counts"].items()]
            parts.append("<p>Per-warp counts at the kernel's variables (Gajger §4.4.3, Volkov §3.6):</p>"
                         + _table(("count", "per warp"), rows, (1,)))
        if entry["error"] is not None:
            parts.append(f"<p class='err'>cannot analyse: {escape(entry['error'])}</p>")
        if g.loops:
            parts.append(_table(("loop", "name", "iterations", "instructions"), [
                (escape(lp.id), escape(lp.name), f"<code>{escape(lp.iterations.text)}</code>", str(len(lp.members)))
                for lp in g.loops.values()], (3,)))
    return "\n".join(parts) or "<p>(no kernels)</p>"


EQUATIONS = (  # (key of the prediction, equation, source); the key is the quantity's name
    ("warps_launched", "warps launched = grid × ⌈block / warp size⌉", "Gajger eq. 4.1"),
    ("latency_throughput", "occupancy / latency bound (warps/cycle/SM)", "Gajger eq. 4.3"),
    ("throughput_bound", "min over resources of issue rate / cycles per warp", "Volkov §3.6, Gajger §4.4.3"),
    ("warp_throughput", "min(occupancy / latency bound, throughput bound)", "Gajger eq. 4.3"),
    ("kernel_time_cycles", "warps launched / (warp throughput × SMs)", "Gajger eq. 4.1"),
    ("kernel_time_s", "warps launched / (warp throughput × SMs × clock × λ)", "Gajger eq. 4.1"),
    ("knee_occupancy", "occupancy where the bounds meet", "Gajger eq. 4.3"),
)


def _launches_section(launches: list) -> str:
    from gpumodeler.service.launches import calibration_text

    parts = []
    for entry in launches:
        lid, la, r = entry["id"], entry["launch"], entry["prediction"]
        parts.append(f"<h4 id='launch-{_anchor(lid)}'>{escape(lid)}: {escape(la.name)}</h4>")
        if entry["error"] is not None:
            parts.append(f"<p class='err'>cannot predict: {escape(entry['error'])}</p>")
            continue
        parts.append(f"<p>kernel <code>{escape(str(la.kernel))}</code> on {escape(r['device'])}; grid "
                     f"{r['grid_size']} blocks of {la.block_size}; occupancy {_num(r['occupancy_warps_per_sm'])} "
                     f"warps/SM; latency bound <span class='eq'>{escape(r['latency_bound_formula'])}</span> = "
                     f"{_num(r['latency_bound_cycles'])} cycles; λ = {_num(la.lam)}</p>")
        rows = [(escape(key), f"<span class='eq'>{escape(formula)}</span>", escape(eq), _num(r.get(key)))
                for key, formula, eq in EQUATIONS]
        rows.append(("mode", "", "", escape(str(r["mode"])) + ", limited by " + escape(str(r["limiting_resource"]))))
        parts.append(_table(("quantity", "equation", "source", "value"), rows, (3,)))
        cyc = r.get("cycles_per_warp", {})
        if cyc:
            parts.append("<p>Throughput worksheet, issue cycles per warp per resource (binding: "
                         f"{escape(str(r.get('binding_resource')))}):</p>"
                         + _table(("resource", "cycles per warp"), [(escape(k), _num(v)) for k, v in cyc.items()], (1,)))
        if r["transfers"]:
            how = ("<span class='eq'>T = t_s + n / (bw × λ)</span> (Gajger eq. 5.5)"
                   if not r.get("transfer_calibration") else
                   "transfers: " + escape(calibration_text(r["transfer_calibration"])))
            parts.append(f"<p>Transfers, {how}, in "
                         f"sequence over {escape(str(r['link']))}:</p>" + _table(
                             ("direction", "bytes", "time (s)"),
                             [(escape(t["direction"]), _num(t["bytes"]), _num(s))
                              for t, s in zip(r["transfers"], r["transfer_times_s"])], (1, 2)))
        parts.append(f"<p><b>kernel {_time(r['kernel_time_s'])}, total {_time(r['total_time_s'])}</b></p>")
    return "\n".join(parts) or "<p>(no launches)</p>"


def _sweeps_section(sweeps: list, project=None) -> str:
    import numpy as np

    from gpumodeler.core.launch_sweep import variable_label
    from gpumodeler.report.svg import line_chart

    parts = []
    for entry in sweeps:
        sw, res = entry["sweep"], entry["result"]
        title = f"{sw.id}: {sw.name or sw.variable}"
        if entry["error"] is not None:
            parts.append(f"<h4>{escape(title)}</h4><p class='err'>{escape(entry['error'])}</p>")
            continue
        x = [float(v) for v in np.asarray(res.x, dtype=float)]
        series = []
        for c in res.curves:
            series.append({"name": f"{c.label} kernel", "x": x, "y": [float(v) for v in c.kernel_time_s]})
            series.append({"name": f"{c.label} total", "x": x, "y": [float(v) for v in c.total_time_s],
                           "dash": True})
        pos = [v for v in x if v > 0]
        log_x = bool(pos) and len(pos) == len(x) and max(pos) / min(pos) > 100
        ys = [v for s in series for v in s["y"] if math.isfinite(v) and v > 0]
        log_y = bool(ys) and max(ys) / min(ys) > 100
        parts.append(f"<h4>{escape(title)}</h4>")
        launch = project.launches.get(sw.launch) if project is not None else None
        graph = project.kernels.get(launch.kernel) if launch is not None else None
        parts.append(line_chart(series, x_label=variable_label(sw.variable, graph), y_label="time (s)",
                                log_x=log_x, log_y=log_y))
    return "\n".join(parts) or "<p>(no saved sweeps)</p>"


def _time(seconds) -> str:
    """A time in engineering units (core's one time formatter); a non-finite one flagged."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return _num(seconds)
    if not is_finite(seconds):
        return _num(float(seconds))
    return escape(format_time(float(seconds)))


def _energy_text(r: dict) -> str:
    if r["energy_j"] is None:
        return "not known (" + escape("; ".join(r["energy_unknown"]) or "no energy model") + ")"
    return (f"{escape(format_si(r['energy_j'], 'J'))}, energy-delay product "
            f"{escape(format_si(r['energy_delay_js'], 'J·s'))}")


def _summary_section(data: dict) -> str:
    """The answer first: one row per launch and one per application."""
    from gpumodeler.report.application import path_text

    rows = []
    for entry in data["launches"]:
        la, r = entry["launch"], entry["prediction"]
        name = f"<a href='#launch-{_anchor(entry['id'])}'>{escape(entry['id'])}</a>: {escape(la.name)}"
        if entry["error"] is not None:
            rows.append((name, "", escape(str(la.kernel)),
                         f"<span class='err'>cannot predict: {escape(entry['error'])}</span>", "", "", "", ""))
            continue
        sp = entry["spread"]
        if sp is not None:
            spread = (f"{_time(sp['min_s'])} ({escape(sp['fastest'])}) – {_time(sp['max_s'])} "
                      f"({escape(sp['slowest'])}), {sp['models']} models")
        else:
            spread = f"<span class='unknown'>{escape(entry['spread_error'] or 'no model gives a time')}</span>"
        rows.append((name, escape(r["device"]), escape(str(la.kernel)), _time(r["kernel_time_s"]),
                     _time(r["total_time_s"]), escape(str(r["mode"])) + "-bound",
                     escape(str(r.get("binding_resource") or r["limiting_resource"])), spread))
    parts = [_table(("launch", "GPU", "kernel", "kernel time", "total", "bound", "binding resource",
                     "models' spread (min – max)"), rows, (3, 4))
             if rows else "<p>(no launches)</p>"]
    rows = []
    for entry in data["applications"]:
        r = entry["result"]
        name = f"<a href='#app-{_anchor(entry['id'])}'>{escape(entry['id'])}</a>: {escape(entry['application'].name)}"
        if entry["error"] is not None:
            rows.append((name, f"<span class='err'>cannot simulate: {escape(entry['error'])}</span>", "", ""))
            continue
        rows.append((name, f"<b>{_time(r['makespan_s'])}</b>", _energy_text(r),
                     escape(path_text(r["critical_path"]))))
    if rows:
        parts.append(_table(("application", "makespan", "energy", "critical path"), rows, (1,)))
    return "\n".join(parts)


def _anchor(item_id: str) -> str:
    """An id attribute's text for a project item id (letters, digits, '-', '_' kept)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in str(item_id))


def _timelines_section(applications: list) -> str:
    """Each application's Gantt chart (its numbers are in the details)."""
    from gpumodeler.report.application import timeline_svg

    parts = []
    for entry in applications:
        parts.append(f"<h4>{escape(entry['id'])}: {escape(entry['application'].name)}</h4>")
        if entry["error"] is not None:
            parts.append(f"<p class='err'>cannot simulate: {escape(entry['error'])}</p>")
            continue
        parts.append(timeline_svg(entry["result"]))
    return "\n".join(parts) or "<p>(no applications)</p>"


def _applications_section(applications: list) -> str:
    from gpumodeler.report.application import SUMMARY_OVER, path_text

    parts = []
    for entry in applications:
        aid, app, r = entry["id"], entry["application"], entry["result"]
        parts.append(f"<h4 id='app-{_anchor(aid)}'>{escape(aid)}: {escape(app.name)}</h4>")
        if entry["error"] is not None:
            parts.append(f"<p class='err'>cannot simulate: {escape(entry['error'])}</p>")
            continue
        parts.append(_groups_table(r))
        if len(r["steps"]) > SUMMARY_OVER:
            parts.append(_application_summary(r))
        else:
            parts.append(_table(("step", "kind", "engine", "start", "end", "alone", "energy (J)"), [
                (("<b>" if s["critical"] else "") + escape(s["name"]) + ("</b>" if s["critical"] else ""),
                 escape(s["kind"]), escape(s["engine"] or "—"), _time(s["start_s"]), _time(s["end_s"]),
                 _time(s["alone_s"]), "unknown" if s["energy_j"] is None else _num(s["energy_j"]))
                for s in r["steps"]], (3, 4, 5, 6)))
        measured = ("" if r.get("measured_makespan_s") is None
                    else f" (measured {_time(r['measured_makespan_s'])})")
        parts.append(f"<p>makespan <b>{_time(r['makespan_s'])}</b>{measured}; critical path "
                     f"{escape(path_text(r['critical_path']))}; energy {_energy_text(r)}</p>")
        parts.append(_table(("engine or link", "busy fraction"),
                            [(escape(k), f"{v:.1%}") for k, v in r["busy_fraction"].items()], (1,)))
        for note in r["notes"]:
            parts.append(f"<p class='unknown'>note: {escape(note)}</p>")
    return "\n".join(parts) or "<p>(no applications)</p>"


def _groups_table(result: dict) -> str:
    """Per kernel name: count, measured and predicted totals and means (``timeline --by
    kernel``; measured only for steps imported from a trace)."""
    from gpumodeler.service.application import aggregate

    def t(v):
        return "—" if v is None else _time(v)
    rows = [(escape(str(g["kernel"])), str(g["count"]), t(g["measured_total_s"]),
             t(g["measured_mean_s"]), t(g["predicted_total_s"]), t(g["predicted_mean_s"]),
             "—" if g["ratio"] is None else f"{g['ratio']:.3f}")
            for g in aggregate(result, "kernel")]
    if not rows:
        return ""
    return _table(("kernel or copy", "count", "measured", "mean", "predicted", "mean",
                   "predicted / measured"), rows, (1, 2, 3, 4, 5, 6))


def _application_summary(r: dict) -> str:
    """An application too large to list step by step: per-name totals, the critical path by
    name and the longest steps (:func:`gpumodeler.report.application.step_summary`)."""
    from gpumodeler.report.application import step_summary

    summary = step_summary(r)
    parts = [f"<p>{summary['steps']} steps: a summary (every step is in "
             f"<code>gpumodeler timeline --json</code>).</p>"]
    rows = [(escape(g["name"]), escape(g["kind"]), str(g["count"]), _time(g["total_s"]), _time(g["mean_s"]),
             str(g["critical"])) for g in summary["by_name"]]
    if summary["other"]:
        o = summary["other"]
        rows.append((f"({o['names']} other names)", "", str(o["count"]), _time(o["total_s"]), "", ""))
    parts.append(_table(("name", "kind", "steps", "total", "mean", "on the critical path"), rows, (2, 3, 4, 5)))
    c = summary["critical"]
    if c["steps"]:
        parts.append(f"<p>critical path: {c['steps']} steps, from {escape(c['first'])} to "
                     f"{escape(c['last'])}; its time by name:</p>")
        parts.append(_table(("name", "time on the critical path"),
                            [(escape(name), _time(t)) for name, t in c["by_name"]], (1,)))
    parts.append(f"<p>the {len(summary['top'])} longest steps:</p>")
    parts.append(_table(("step", "kind", "engine", "start", "end", "waited", "stretched"), [
        (escape(s["name"]), escape(s["kind"]), escape(s["engine"] or "—"), _time(s["start_s"]),
         _time(s["end_s"]), _time(s["waited_s"]), _time(s["stretched_s"])) for s in summary["top"]],
        (3, 4, 5, 6)))
    return "\n".join(parts)


def _calibrations_section(entries: list) -> str:
    """Each stored calibration of a placed device or link: its model, fit errors and the
    measurements it was fitted to."""
    rows = []
    for entry in entries:
        if entry["error"] is not None:
            rows.append((escape(entry["name"]), "", "", "", f"<span class='err'>{escape(entry['error'])}</span>",
                         "", "", ""))
        for c in entry["calibrations"]:
            params = ", ".join(f"{escape(str(k))} = {_num(v)}" for k, v in c.parameters.items()
                               if isinstance(v, (int, float, str)))
            rows.append((escape(entry["name"]), escape(c.kind), escape(c.subject), escape(c.label), params,
                         "—" if c.mape_percent is None else f"{c.mape_percent:.3g} %",
                         "—" if c.loo_mape is None else f"{c.loo_mape:.3g} %",
                         escape(c.measurements_name) + (f" ({escape(c.created)})" if c.created else "")))
    if not rows:
        return "<p>(no stored calibration for the devices and links of this project)</p>"
    return _table(("device or link", "kind", "subject", "label", "model", "error (MAPE)",
                   "leave-one-out error", "measurements"), rows, (5, 6))


#: the report's parts, in order: (anchor, title, level); level 2 parts group the level 3 ones
OUTLINE = (
    ("summary", "Summary", 2),
    ("figures", "Figures", 2),
    ("system", "System", 3),
    ("sweeps", "Saved sweeps", 3),
    ("timelines", "Application timelines", 3),
    ("details", "Details", 2),
    ("devices", "Devices: every value with its unit and provenance", 3),
    ("links", "Links: every value with its unit and provenance", 3),
    ("kernels", "Kernels", 3),
    ("launches", "Launches: equations and intermediate values", 3),
    ("applications", "Applications: steps and engines", 3),
    ("calibrations", "Calibrations", 3),
)


def _toc() -> str:
    out, open_sub = ["<nav id='contents'><h2>Contents</h2><ol>"], False
    for anchor, title, level in OUTLINE:
        if level == 2:
            if open_sub:
                out.append("</ol></li>")
            out.append(f"<li><a href='#{anchor}'>{escape(title)}</a><ol>")
            open_sub = True
        else:
            out.append(f"<li><a href='#{anchor}'>{escape(title)}</a></li>")
    out.append("</ol></li></ol></nav>")
    return "".join(out).replace("<ol></ol>", "")  # a part without sub-parts


def build_report(project, catalog, *, project_path: str, command: str) -> str:
    """The report's HTML text: the numbers come from :func:`gpumodeler.service.report_data`
    (the same evaluation as ``gpumodeler project predict``, ``timeline`` and the GUI)."""
    from gpumodeler import __version__
    from gpumodeler.service.report import report_data

    data = report_data(project, catalog)
    content = {
        "summary": _summary_section(data),
        "figures": "",
        "system": system_svg(project),
        "sweeps": _sweeps_section(data["sweeps"], project),
        "timelines": _timelines_section(data["applications"]),
        "details": "",
        "devices": _values_section(project, catalog, "device"),
        "links": _values_section(project, catalog, "link"),
        "kernels": _kernels_section(data["kernels"]),
        "launches": _launches_section(data["launches"]),
        "applications": _applications_section(data["applications"]),
        "calibrations": _calibrations_section(data["calibrations"]),
    }
    body = [f"<h1>{escape(project.name)}</h1>"]
    if project.description:
        body.append(f"<p>{escape(project.description)}</p>")
    body.append("<p>Model: Gajger's adaptation of Volkov's latency-hiding model (Gajger 2017 eq. 4.1–4.8, "
                "5.5; Volkov 2016 §3). Overridden values are <span class='override'>marked</span>.</p>")
    body.append(_toc())
    for anchor, title, level in OUTLINE:
        tag = "h2" if level == 2 else "h3"
        body.append(f"<{tag} id='{anchor}'>{escape(title)}</{tag.split()[0]}>\n{content[anchor]}")
    user = catalog.user_path if catalog.user_path and Path(catalog.user_path).exists() else None
    body.append(
        "<footer>"
        f"gpumodeler {escape(__version__)} · project <code>{escape(Path(project_path).name)}</code> "
        f"(SHA-256 {sha256_of(project_path)})<br>"
        f"devices.db SHA-256 {sha256_of(catalog.shipped_path)} · user database SHA-256 {sha256_of(user)}<br>"
        f"regenerate: <code>{escape(command)}</code></footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(project.name)} — gpumodeler report</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
