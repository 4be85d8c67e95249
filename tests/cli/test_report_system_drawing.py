"""The report draws the system as the canvas does: the four-H100 ring's closing NVLink
goes around GPUs 2 and 3, and no link label covers a device or another label."""
import re
from pathlib import Path

from gpumodeler.core.system_routes import overlap_area, segment_hits_rect
from gpumodeler.db.project_file import load_project
from gpumodeler.report.html import system_svg

FOUR = Path(__file__).resolve().parents[2] / "resources" / "examples" / "four-h100-nvlink.gpm"


def _rects(svg: str, stroke_colour: bool):
    out = []
    for m in re.finditer(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)" rx="(\d+)"', svg):
        x, y, w, h, rx = (float(v) for v in m.groups())
        if (rx == 3) == stroke_colour:       # labels have rx 3, devices rx 6
            out.append((x, y, w, h))
    return out


def test_the_report_routes_the_ring_and_places_labels_apart():
    svg = system_svg(load_project(FOUR))
    devices, labels = _rects(svg, False), _rects(svg, True)
    assert len(devices) == 5 and len(labels) == 8
    gpus = sorted((r for r in devices if r[1] == min(d[1] for d in devices)), key=lambda r: r[0])
    lines = [[tuple(float(v) for v in p.split(",")) for p in m.group(1).split()]
             for m in re.finditer(r'<polyline points="([^"]+)"', svg)]
    closing = [pts for pts in lines if len(pts) > 2]
    assert len(closing) == 1                          # only the 4↔1 NVLink needs a detour
    for middle in gpus[1:3]:
        assert not any(segment_hits_rect(a, b, middle) for a, b in zip(closing[0], closing[0][1:]))
    for label in labels:
        assert all(overlap_area(label, d) == 0 for d in devices)
    for i, a in enumerate(labels):
        assert all(overlap_area(a, b) == 0 for b in labels[i + 1:])
