"""The fast graph paths (speed targets) against the simple reference implementations on the
benchmark's own synthetic kernels (benchmarks/bench_graph.py) at 10^3 and 10^4 instructions,
with and without edge and loop ids, with 10 and 1000 loops: the graph read, the per-warp
counts, the symbolic bound and its formula, the exact numeric bound and the critical path."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.warp_counts import (PIPE_COUNT_NAMES, TENSOR_MAC_COUNT_NAMES,
                                                count)

import graph_reference as ref
from test_graph_fast_paths import one_by_one, sequential_count
from test_graph_symbolic_inline import naive_symbolic

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_graph.py"
_spec = importlib.util.spec_from_file_location("bench_graph_for_tests", _BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

VALUES = {"a": 10.0, "b": 3.0}
# the 10^4-instruction kernels take a minute of CPU (the references are slow): benchmark
# sizes, run with -m slow; the 10^3 ones check the same paths in the default run
CASES = [(1_000, 10, True), (1_000, 10, False), (1_000, 1000, True), (1_000, 1000, False),
         pytest.param(10_000, 10, True, marks=pytest.mark.slow),
         pytest.param(10_000, 10, False, marks=pytest.mark.slow)]


@pytest.mark.parametrize("n, loops, ids", CASES)
def test_bench_kernels_match_the_references(n, loops, ids):
    data = bench.synthetic_kernel(n, loops, ids)
    g = from_dict(data)
    # reading: the item-by-item reader and, for the loops, the pairwise reference
    plain = one_by_one({**data, "loops": []})
    assert list(g.instructions.items()) == list(plain.instructions.items())
    assert list(g.edges.items()) == list(plain.edges.items())
    if loops <= 10:
        assert to_dict(g) == to_dict(ref.old_from_dict(data))
    # counts: the amounts added in turn
    got, want = count(g), sequential_count(g)
    assert {k: list(v.items()) for k, v in got.forms.items()} == \
        {k: list(v.items()) for k, v in want.forms.items()}
    # the symbolic pass: every node pruned by the general pruning
    bound = analyze(g)
    from gpumodeler.core.kernel.latency_bound import MAX_FORMS, WORK_PER_NODE
    assert (bound.forms, bound.per_iteration) == naive_symbolic(
        bound.regions, bound.loop_order, bound.iterations, MAX_FORMS, WORK_PER_NODE)[:2]
    # the whole analysis: the reference with networkx regions (and the old counts)
    old = ref.old_analyze(g)
    assert bound.forms == old.forms and bound.formula() == old.formula()
    assert bound.edge_latency == old.edge_latency and bound.loop_order == old.loop_order
    for lid, region in bound.regions.items():
        other = old.regions[lid]
        assert region.topo == other.topo and region.carried == other.carried
        assert list(region.preds.items()) == list(other.preds.items())
    assert bound.evaluate(VALUES) == old.evaluate(VALUES)
    arrays = {k: np.asarray([0.0, 1.0, v, 7 * v]) for k, v in VALUES.items()}
    np.testing.assert_array_equal(bound.evaluate(arrays), old.evaluate(arrays))
    assert bound.critical_path(VALUES) == old.critical_path(VALUES)
    pipes = set(PIPE_COUNT_NAMES.values()) | set(TENSOR_MAC_COUNT_NAMES.values())
    old_counts = ref.old_count(g)
    assert {k: list(v.items()) for k, v in got.forms.items() if k not in pipes} == \
        {k: list(v.items()) for k, v in old_counts.forms.items() if k not in pipes}
