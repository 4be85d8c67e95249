"""The graph stages' pause of the cyclic collector (core/kernel/collector.py, for speed), and
the stages leaving no reference cycles (whose objects would wait for a collector pass)."""
from __future__ import annotations

import gc
import json

from gpumodeler.core.kernel.collector import PROMOTE_FROM, collector_paused
from gpumodeler.core.kernel.graph import from_dict

from test_graph_linear import random_kernel


def test_a_pause_inside_a_disabled_collector_leaves_it_disabled():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_graph_stages_leave_no_cycles_behind():
    """A stage must not leave cyclic garbage: it waits for a collector pass (a nested
    recursive function in critical_path once kept every back map alive until then)."""
    from gpumodeler.core.kernel.latency_bound import analyze
    from gpumodeler.core.kernel.warp_counts import count

    text = json.dumps(random_kernel(8, n=200, loops=10))
    gc.collect()
    was = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        graph = from_dict(json.loads(text))
        bound = analyze(graph)
        count(graph).evaluate({"a": 3, "b": 2, "N": 512})
        bound.evaluate({"a": 3, "b": 2, "N": 512})
        bound.critical_path({"a": 3, "b": 2, "N": 512})
        del graph, bound
        assert gc.collect() == 0, gc.garbage[:10]
    finally:
        gc.set_debug(was)
        gc.garbage.clear()


def _unfrozen():
    """Unfreeze what the test session froze (conftest), returning how to freeze it again."""
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    return frozen


def test_what_a_pause_made_leaves_the_young_generation_on_the_way_out():
    """Survivors of a pause go to the oldest generation, so that the next allocation does not
    start a young collection walking them all (freeze then unfreeze)."""
    frozen = _unfrozen()
    try:
        with collector_paused():
            made = [[i] for i in range(2 * PROMOTE_FROM)]
        assert gc.isenabled()
        young = {id(o) for o in gc.get_objects(generation=0)}
        assert not any(id(o) in young for o in made)
        assert any(id(o) in {id(x) for x in gc.get_objects(generation=2)} for o in made[:1])
    finally:
        if frozen:
            gc.freeze()


def test_a_small_pause_neither_promotes_nor_counts_the_frozen(monkeypatch):
    """A block that made few objects leaves them to the young collections, without walking the frozen objects
    (gc.get_freeze_count is linear in their number in CPython 3.11)."""
    frozen = _unfrozen()
    try:
        counted = []
        monkeypatch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or 0)
        gc.collect()
        with collector_paused():
            made = [[i] for i in range(PROMOTE_FROM // 10)]
        monkeypatch.undo()
        assert counted == []
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert not any(id(o) in oldest for o in made)   # left to the young collections
    finally:
        if frozen:
            gc.freeze()


def test_a_pause_leaves_objects_the_program_froze_frozen():
    frozen = _unfrozen()
    try:
        kept = [[1], [2]]
        gc.freeze()
        count = gc.get_freeze_count()
        with collector_paused():
            made = [[i] for i in range(100)]
        assert gc.get_freeze_count() == count  # not released by the pause
        assert made and kept
    finally:
        gc.unfreeze()
        if frozen:
            gc.freeze()
