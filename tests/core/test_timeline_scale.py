"""The timeline at trace scale outside the simulation: a large application's report
summarises it (per-name totals, the critical path, the longest steps) instead of listing
every step, its Gantt chart merges steps narrower than a pixel (level of detail), and each
kernel step's launch is predicted once per launch, GPU and share."""
from pathlib import Path
import random
import re
import time

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.application.app import Application, Step
from gpumodeler.db.project_file import load_project, save_project
from gpumodeler.report.application import SUMMARY_OVER, merged_runs, path_text, step_summary, timeline_svg

ROOT = Path(__file__).resolve().parents[2]
MULTI = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"


def step(i, name, kind, start, end, critical=False, engine="e"):
    return {"id": f"s{i}", "name": name, "kind": kind, "engine": engine, "engines": [engine], "links": [],
            "device": "g", "start_s": start, "end_s": end, "ready_s": start, "alone_s": end - start,
            "waited_s": 0.0, "stretched_s": 0.0, "energy_j": None, "critical": critical}


def test_merged_runs_join_only_narrow_neighbours_and_keep_every_step_once():
    steps = [step(0, "a", "kernel", 0.0, 0.1), step(1, "b", "kernel", 0.1, 0.1004),
             step(2, "b", "kernel", 0.1004, 0.1008), step(3, "b", "kernel", 0.1015, 0.1016),
             step(4, "c", "kernel", 0.2, 0.2001), step(5, "d", "kernel", 0.2001, 0.5)]
    runs = merged_runs(steps, pixel=0.001)
    assert [[s["id"] for s in r] for r in runs] == [["s0"], ["s1", "s2", "s3"], ["s4"], ["s5"]]
    assert sorted(s["id"] for r in runs for s in r) == sorted(s["id"] for s in steps)
    # a finer pixel: nothing is narrow, nothing merges
    assert len(merged_runs(steps, pixel=1e-5)) == len(steps)


def test_step_summary_totals_the_critical_path_and_the_longest():
    steps = [step(0, "k", "kernel", 0, 2, True), step(1, "copy", "copy", 2, 3, True),
             step(2, "k", "kernel", 3, 7, True), step(3, "other", "kernel", 0, 0.5)]
    result = {"steps": steps, "critical_path": ["s0", "s1", "s2"], "makespan_s": 7.0}
    s = step_summary(result, top=2, groups=2)
    assert [(g["name"], g["count"], g["total_s"], g["mean_s"], g["critical"]) for g in s["by_name"]] == [
        ("k", 2, 6, 3, 2), ("copy", 1, 1, 1, 1)]
    assert s["other"] == {"count": 1, "total_s": 0.5, "names": 1}
    assert s["critical"] == {"steps": 3, "first": "k", "last": "k", "by_name": [("k", 6), ("copy", 1)]}
    assert [t["id"] for t in s["top"]] == ["s2", "s0"]
    assert path_text(["a", "b"]) == "a → b"
    long = path_text([f"p{i}" for i in range(100)], shown=4)
    assert long.startswith("p0 → p1 → … (96 steps) … → p98") and long.endswith("p99")


def test_a_gantt_chart_of_many_steps_draws_a_bar_per_pixel_at_most():
    rnd = random.Random(5)
    t, steps = 0.0, []
    for i in range(20000):
        d = rnd.uniform(1e-6, 1e-4)
        steps.append(step(i, f"k{i % 7}", "kernel", t, t + d))
        t += d
    steps.append(step(20000, "long", "kernel", t, t + 1.0))  # one wide step stays itself
    result = {"name": "big", "steps": steps, "critical_path": [], "makespan_s": t + 1.0}
    svg = timeline_svg(result, width=900)
    bars = svg.count("<rect") - 2  # the background and the one row's stripe
    assert 1 < bars <= 900 - 190
    assert "20000 steps, each narrower than a pixel" in svg
    assert "long (kernel): " in svg


@pytest.mark.usefixtures("gpumodeler_env")
def test_the_report_of_a_large_application_is_a_summary(tmp_path):
    project = load_project(MULTI)
    rnd = random.Random(3)
    steps = []
    for i in range(1500):
        g = f"gpu{1 + i % 4}"
        if i % 3 == 1:
            steps.append(Step(f"k{i}", "kernel", f"kernel {rnd.choice('ab')}", stream=g, launch="launch1", gpu=g,
                              fraction=rnd.choice([0.25, 0.5])))
        else:
            steps.append(Step(f"c{i}", "copy", "upload" if i % 3 == 0 else "download", stream=g,
                              src="host1" if i % 3 == 0 else g, dst=g if i % 3 == 0 else "host1",
                              size=str(rnd.randint(1 << 16, 1 << 22))))
    project.applications.clear()
    project.put("applications", Application("big", "a large application", tuple(steps)))
    path = save_project(project, tmp_path / "big.gpm")
    out = tmp_path / "r.html"
    t0 = time.process_time()
    assert main(["report", str(path), "-o", str(out)]) == 0
    spent = time.process_time() - t0
    html = out.read_text()
    assert len(steps) > SUMMARY_OVER and f"{len(steps)} steps: a summary" in html
    for name in ("kernel a", "kernel b", "upload", "download"):
        assert re.search(rf"<td>{name}</td><td>(kernel|copy)</td><td class=\"num\">\d+</td>", html), name
    assert "longest steps" in html and "critical path:" in html
    assert "<td>k1</td>" not in html and html.count("<tr") < 200  # no row per step
    assert spent < 30  # a generous bound: each kernel is predicted once per launch, GPU and share


def test_a_sync_waits_for_the_streams_last_steps_the_same_wait_as_for_every_step():
    """A sync without ``after`` waits for every earlier step; the build names only each
    stream's last step (linear in a trace with many syncs), and the timeline is the one that
    waiting on every earlier step gives."""
    from dataclasses import replace as copy_with

    from gpumodeler.core.application.app import build
    from gpumodeler.core.application.timeline import simulate
    from tests.core.test_application import LOOKUPS, system

    rnd = random.Random(11)
    steps = []
    for i in range(300):
        if i % 50 == 49:
            steps.append(Step(f"s{i}", "sync", stream=rnd.choice(["0", "sync"])))
        elif rnd.random() < 0.5:
            steps.append(Step(f"k{i}", "kernel", launch="l", gpu=rnd.choice(["g1", "g2"]),
                              stream=str(rnd.randrange(4)), fraction=rnd.choice([0.1, 0.5])))
        else:
            steps.append(Step(f"c{i}", "copy", src="h", dst=rnd.choice(["g1", "g2"]), size=str(rnd.randint(1, 10 ** 8)),
                              stream=str(rnd.randrange(4))))
    built = build(system(), Application("a", steps=tuple(steps)), **LOOKUPS)
    syncs = [a for a in built.activities if a.id.startswith("s")]
    assert syncs and all(len(a.after) <= 5 for a in syncs)  # 4 streams and the syncs' own
    # the same timeline as waiting on every earlier step
    ids = [a.id for a in built.activities]
    full = [copy_with(a, after=tuple(ids[:ids.index(a.id)])) if a.id.startswith("s") else a
            for a in built.activities]
    assert simulate(built.activities, built.capacities) == simulate(full, built.capacities)
