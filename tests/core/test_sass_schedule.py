"""Latencies from the compiler's schedule where a published table has no value (sm_70+)."""
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.latency_tables import LatencyTable
from gpumodeler.core.kernel.sass import import_kernel
from gpumodeler.core.kernel.sass.schedule import fill_from_schedule, summary

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"

# a table that knows FP32 and DRAM only (like the published Ada/Hopper tables' gaps)
SPARSE = LatencyTable("sparse", "sparse", "Hopper", "test", instruction_cycles={"fp32_mad": 4.0, "int_add": 4.0},
                      memory_cycles={"dram": 500.0})


def test_fills_only_what_the_table_lacks_with_stall_distances():
    graph = import_kernel(SASS / "saxpy2.sm_90.sass")
    graph.latency_table = None
    with pytest.raises(GraphError):
        analyze(graph, SPARSE)
    explicit_before = {e.id for e in graph.edges.values() if e.latency is not None}
    filled = fill_from_schedule(graph, SPARSE)
    assert filled and all(f.latency_cycles >= 1 for f in filled)
    ids = {f.edge for f in filled}
    assert not ids & explicit_before
    for e in graph.edges.values():  # edges the table can resolve were left to the table
        if e.kind in ("dependency", "memory") and e.id not in ids | explicit_before:
            assert e.latency is None
    # a filled forward edge is the sum of the issue spacings between its ends
    order = list(graph.instructions)
    f = next(f for f in filled if order.index(graph.edges[f.edge].dst) > order.index(graph.edges[f.edge].src))
    e = graph.edges[f.edge]
    a, b = order.index(e.src), order.index(e.dst)
    spacing = {(x.src, x.dst): x.latency for x in graph.edges.values()
               if x.kind in ("ilp", "branch", "barrier") and x.latency is not None}
    assert f.latency_cycles == max(1.0, sum(spacing.get((order[k], order[k + 1]), 1.0) for k in range(a, b)))
    analyze(graph, SPARSE)  # now it evaluates
    text = summary(filled, "sparse")
    assert "lower bound" in text and "class mov" in text and "memory constant" in text


def test_a_graph_without_control_words_is_left_alone():
    graph = import_kernel(SASS / "saxpy2.sm_90.sass")
    for eid, e in list(graph.edges.items()):  # as if no stall counts were known
        if e.kind in ("ilp", "branch", "barrier"):
            graph.edges[eid] = replace(e, latency=None)
    assert fill_from_schedule(graph, SPARSE) == []


class _CountingEdges(dict):
    """A graph's edge dict that counts full scans (``values()``/``items()``)."""
    scans = 0

    def values(self):
        type(self).scans += 1
        return super().values()

    def items(self):
        type(self).scans += 1
        return super().items()


def test_loop_carried_edges_take_the_producers_smallest_spacing_in_one_scan():
    """Each loop-carried edge the table lacks takes the smallest issue spacing after its
    producer; the spacings are indexed once, not looked up by scanning every edge for each
    loop-carried edge (quadratic on a large unrolled listing)."""
    graph = import_kernel(SASS / "sfu_heavy.sm_90.sass")
    graph.latency_table = None
    order = {iid: k for k, iid in enumerate(graph.instructions)}
    expected_spacing = {}
    for x in graph.edges.values():
        if x.kind in ("ilp", "branch", "barrier") and x.latency is not None:
            expected_spacing[x.src] = min(expected_spacing.get(x.src, float("inf")), x.latency)
    _CountingEdges.scans = 0
    graph.edges = _CountingEdges(graph.edges)
    fp32_only = LatencyTable("fp32", "fp32", "Hopper", "test", instruction_cycles={"fp32_mad": 4.0},
                             memory_cycles={"dram": 500.0})
    filled = fill_from_schedule(graph, fp32_only)
    back = [f for f in filled if order[graph.edges[f.edge].dst] <= order[graph.edges[f.edge].src]]
    assert len(back) >= 3  # the loop's carried dependencies (its counter and values)
    for f in back:
        assert f.latency_cycles == max(1.0, expected_spacing.get(graph.edges[f.edge].src, 1.0))
    # a fixed number of scans, however many loop-carried edges were filled
    assert _CountingEdges.scans <= 4 < len(back) + 3
