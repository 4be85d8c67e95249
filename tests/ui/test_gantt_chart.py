"""The Gantt chart on screen: 2 to 8 GPUs and 50 steps at the height it has in a 1280×720
window — lanes no thinner than a line of text, names that never overlap and stay in their
lane, zoom and pan on the time axis only, the legend of step kinds, the critical path
strong and the rest faded."""
import pyqtgraph as pg
import pytest

from gpumodeler.report.svg import CRITICAL
from gpumodeler.ui.application.gantt import FADED_ALPHA, KIND_COLORS, GanttChart
from gpumodeler.ui.application.gantt_labels import MIN_LANE_PX

pytestmark = pytest.mark.usefixtures("private_settings")


def synthetic_result(gpus: int, steps: int) -> dict:
    """A data-parallel timeline: per GPU a scatter, kernels and a gather, in rounds, with
    one GPU's chain critical; ``steps`` steps in all (the last ones syncs)."""
    out, t = [], {g: 0.0 for g in range(1, gpus + 1)}
    k = 0
    while len(out) < steps:
        g = k % gpus + 1
        kind = ("copy", "kernel", "kernel", "copy", "sync")[(k // gpus) % 5]
        length = {"copy": 2e-3, "kernel": 0.4e-3 * (1 + g % 3), "sync": 1e-6}[kind]
        engines = {"copy": [f"gpu{g}/copy"], "kernel": [f"gpu{g}/compute"], "sync": []}[kind]
        links = [f"pcie{g}:host1>gpu{g}"] if kind == "copy" else []
        out.append({"id": f"s{k}", "name": f"{kind} step {k} on gpu{g}", "kind": kind,
                    "device": f"gpu{g}", "engine": engines[0] if engines else None,
                    "engines": engines, "links": links, "start_s": t[g], "end_s": t[g] + length,
                    "alone_s": length, "waited_s": 0.0, "stretched_s": 0.0, "energy_j": None,
                    "critical": g == 1, "prediction": {}})
        t[g] += length
        k += 1
    return {"name": "synthetic", "steps": out, "makespan_s": max(s["end_s"] for s in out)}


@pytest.fixture
def chart(qtbot):
    c = GanttChart()
    qtbot.addWidget(c)
    c.resize(1260, 300)   # the chart's share of a 1280×720 window's Application tab
    c.show()
    qtbot.waitExposed(c)
    return c


def _painted(chart, qtbot):
    """Let the resize land and paint once: the view's transform is brought up to date at
    paint time, and the items' scene rectangles with it."""
    qtbot.wait(20)
    chart.grab()


def _overlaps(items):
    rects = [i.sceneBoundingRect() for i in items]
    return [(a, b) for i, a in enumerate(rects) for b in rects[i + 1:]
            if a.intersected(b).width() > 0.5 and a.intersected(b).height() > 0.5]


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_fifty_steps_read_at_1280_by_720(chart, qtbot, gpus):
    result = synthetic_result(gpus, 50)
    chart.show_result(result)
    _painted(chart, qtbot)
    vb = chart.plotItem.vb
    (x_lo, x_hi), (y_lo, y_hi) = vb.viewRange()
    assert vb.height() / (y_hi - y_lo) >= MIN_LANE_PX - 1e-6         # lanes readable
    assert y_hi == pytest.approx(0.5)                                  # from the first lane
    if len(chart.rows) * MIN_LANE_PX > vb.height():
        assert chart.plotItem.vb.state["mouseEnabled"][1]              # the rest by dragging
    assert chart.label_items, "some names fit"
    assert _overlaps(chart.label_items) == []
    for label in chart.label_items:                                    # inside the plot area
        assert vb.sceneBoundingRect().contains(label.sceneBoundingRect().center())


def test_zooming_in_shows_more_names_and_never_overlapping(chart, qtbot):
    chart.show_result(synthetic_result(4, 50))
    _painted(chart, qtbot)

    def whole_names():
        return {label.toPlainText() for label in chart.label_items if not label.toPlainText().endswith("…")}

    before = whole_names()
    span = lambda: chart.plotItem.vb.viewRange()[0][1] - chart.plotItem.vb.viewRange()[0][0]  # noqa: E731
    full_span = span()
    chart.zoom(4.0)
    _painted(chart, qtbot)
    assert span() == pytest.approx(full_span / 4, rel=1e-6)
    assert _overlaps(chart.label_items) == []
    assert whole_names() - before, "zoomed in, names shortened before are shown whole"
    chart.whole()
    assert span() == pytest.approx(full_span, rel=1e-6)


def test_the_time_axis_pans_and_zooms_the_lanes_do_not(chart):
    chart.show_result(synthetic_result(2, 50))
    x_on, y_on = chart.plotItem.vb.state["mouseEnabled"]
    assert x_on and not y_on                      # 2 GPUs: every lane fits
    makespan = chart.result["makespan_s"]
    limits = chart.plotItem.vb.state["limits"]
    assert limits["xLimits"][1] > 0 and limits["yRange"][0] == limits["yRange"][1]
    assert makespan > 0


def test_legend_and_critical_path_at_a_glance(chart):
    result = synthetic_result(4, 50)
    chart.show_result(result)
    title = chart.plotItem.titleLabel.text
    for kind in {s["kind"] for s in result["steps"]}:
        assert kind in title and KIND_COLORS[kind] in title
    assert "critical path" in title
    # one item per colour and outline: the critical path's opaque and outlined, the rest faded
    assert {b["step"]["critical"] for b in chart.bars} == {True, False}
    for item in chart._bar_items:
        alpha = pg.mkBrush(item.opts["brush"]).color().alpha()
        critical = pg.mkPen(item.opts["pen"]).color().name() == pg.mkColor(CRITICAL).name()
        assert (alpha == 255) == critical
        assert critical or alpha == FADED_ALPHA
    assert {pg.mkBrush(i.opts["brush"]).color().alpha() for i in chart._bar_items} == {255, FADED_ALPHA}


def test_a_live_edit_keeps_the_zoom_a_new_application_does_not(chart, qtbot):
    result = synthetic_result(4, 50)
    chart.show_result(result)
    chart.zoom(4.0)
    zoomed = chart.plotItem.vb.viewRange()[0]
    longer = dict(result, steps=[dict(s, end_s=s["end_s"] * 1.01) for s in result["steps"]])
    chart.show_result(longer)                      # the same application, edited
    assert chart.plotItem.vb.viewRange()[0] == pytest.approx(zoomed)
    other = dict(result, name="another application")
    chart.show_result(other)
    (x_lo, x_hi), _ = chart.plotItem.vb.viewRange()
    assert x_lo <= 0 and x_hi >= max(b["x1"] for b in chart.bars)


def test_without_link_lanes_fewer_lanes_and_every_step_still_shows(chart, qtbot):
    result = synthetic_result(8, 50)
    chart.show_result(result)
    with_links = list(chart.rows)
    chart.set_show_links(False)
    _painted(chart, qtbot)
    assert not any(":" in row for row in chart.rows) and len(chart.rows) < len(with_links)
    assert {b["step"]["id"] for b in chart.bars} == {s["id"] for s in result["steps"]}
    assert _overlaps(chart.label_items) == []
    chart.set_show_links(True)
    assert chart.rows == with_links
