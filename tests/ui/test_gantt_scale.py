"""The application's Gantt chart at trace scale: 10^5 steps draw with level of detail (a
run of steps narrower than a pixel on a row is one bar), zooming in shows the steps again,
and hovering finds a step by bisection."""
import random
import time

import pytest

from gpumodeler.ui.application.gantt import MERGED, GanttChart


def big_result(n=100_000, seed=7):
    rnd = random.Random(seed)
    steps, clock = [], {}
    for i in range(n):
        engine = f"gpu{i % 4}/{'compute' if i % 3 else 'copy'}"
        start = clock.get(engine, 0.0) + rnd.uniform(0, 2e-6)
        end = start + rnd.uniform(1e-6, 5e-5)
        clock[engine] = end
        steps.append({"id": f"s{i}", "name": f"k{i % 5}", "kind": "kernel" if i % 3 else "copy",
                      "engine": engine, "engines": [engine], "links": [], "device": f"gpu{i % 4}",
                      "start_s": start, "end_s": end, "ready_s": start, "alone_s": end - start,
                      "waited_s": 0.0, "stretched_s": 0.0, "energy_j": None, "critical": i % 1000 == 0})
    return {"steps": steps, "makespan_s": max(clock.values()), "critical_path": []}


def drawn(chart):
    return sum(len(item.opts["x0"]) for item in chart._bar_items)


@pytest.fixture
def chart(qtbot):
    c = GanttChart()
    qtbot.addWidget(c)
    c.resize(1000, 400)
    c.show()
    qtbot.waitExposed(c)
    return c


@pytest.mark.slow
def test_ten_to_the_five_steps_draw_a_bar_per_pixel_at_most(chart):
    result = big_result()
    t0 = time.process_time()
    chart.show_result(result)
    spent = time.process_time() - t0
    pixels = int(chart.plotItem.vb.width())
    assert len(chart.bars) == 100_000
    assert 0 < drawn(chart) <= len(chart.rows) * pixels  # merged: not one item or bar per step
    assert len(chart._bar_items) <= 16  # one item per colour and outline
    assert any(item.opts["brush"].name() == MERGED for item in chart._bar_items)
    assert spent < 20  # generous: the point is that it finishes, not a benchmark
    # hover finds the step under the pointer by bisection
    b = chart.bars[12345]
    assert chart.step_at((b["x0"] + b["x1"]) / 2, -b["row"])["id"] == b["step"]["id"]
    assert chart.step_at(b["x0"], -b["row"] - 0.5) is None


def test_zooming_in_shows_single_steps_again(chart):
    result = big_result(20_000)
    chart.show_result(result)
    assert drawn(chart) <= len(chart.rows) * int(chart.plotItem.vb.width())
    assert any(item.opts["brush"].name() == MERGED for item in chart._bar_items)
    b = chart.bars[500]
    chart.plotItem.setXRange(b["x0"], b["x0"] + 40 * (b["x1"] - b["x0"]), padding=0)
    # only what can be visible, each step its own bar (no merged runs at this zoom)
    assert 0 < drawn(chart) < 1000
    assert all(item.opts["brush"].name() != MERGED for item in chart._bar_items)
