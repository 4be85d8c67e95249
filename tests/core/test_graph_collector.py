"""The graph stages' pause of the cyclic collector (core/kernel/collector.py, issue #11)."""
from __future__ import annotations

import gc
import json

from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.kernel.graph import from_dict

from test_graph_linear import random_kernel


class _Cycle:
    def __init__(self):
        self.me = self


def test_objects_made_in_the_pause_skip_the_young_generations():
    gc.collect()
    with collector_paused():
        assert not gc.isenabled()
        graph = from_dict(json.loads(json.dumps(random_kernel(3, n=300, loops=6))))
    assert gc.isenabled()
    assert gc.get_count()[0] < 50  # not hundreds of objects waiting for a young pass
    young = {id(o) for o in gc.get_objects(generation=0)} | \
        {id(o) for o in gc.get_objects(generation=1)}
    assert not any(id(ins) in young for ins in graph.instructions.values())


def test_cycles_made_in_the_pause_are_still_collected():
    gc.collect()
    with collector_paused():
        _Cycle()
    assert gc.collect() >= 1  # the next full pass finds it


def test_objects_frozen_by_others_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            _Cycle()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    gc.collect()


def test_a_pause_inside_a_disabled_collector_leaves_it_disabled():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_graph_stages_leave_no_cycles_behind():
    """Objects made in a pause wait for the next full pass, so a stage must not leave cyclic
    garbage (a nested recursive function in critical_path once kept every back map)."""
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
