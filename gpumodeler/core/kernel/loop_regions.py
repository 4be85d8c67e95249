"""A kernel execution graph with its loops collapsed, and the numeric longest path through it
(Volkov §3.7; Gajger §4.4.2).

The latency bound of a warp is the longest path through its execution graph; the semantics
are in :mod:`gpumodeler.core.kernel.latency_bound`. There each loop is collapsed into an *entry* and
an *exit* inside its parent, so that the graph becomes one DAG per level: a :class:`_Region`,
the body of a loop or the top level. This module holds that structure: the loop nesting
(:func:`_loop_structure`), the regions, and the numeric longest path through a region
(:func:`_longest`, vectorised over numpy arrays of iteration counts), which the exact numeric
pass and the critical path use. :func:`gpumodeler.core.kernel.latency_bound.analyze` builds the
regions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.kernel.graph import KernelGraph


@dataclass(frozen=True)
class _Region:
    """One level of the collapsed graph: the body of a loop, or the top level (id None)."""

    id: object
    topo: tuple  # DAG nodes in topological order: instruction ids, ("in", L), ("out", L)
    preds: dict  # node -> tuple of (pred, weight, step); weight is cycles or ("loop", L)
    carried: tuple  # ((start node, end node, weight, edge id), ...) for loops


def _longest(region: _Region, loop_weight: dict, sources=None, track=False):
    """Numeric longest path in a region; values may be numpy arrays (vectorised).

    Returns {node: arrival} (and {node: (pred, step)} when ``track``); with ``sources`` only
    those nodes may start a path (others start unreachable, -inf)."""
    dist, back = {}, {}
    neg = -np.inf
    for n in region.topo:
        best = 0.0 if sources is None or n in sources else neg
        choice = None
        for pred, w, step in region.preds.get(n, ()):
            d = dist[pred]
            cand = d + (loop_weight[w[1]] if isinstance(w, tuple) else w)
            if track:
                if cand >= best:  # ties prefer arriving paths (longer in edges) over starting here
                    best, choice = cand, (pred, step)
            else:
                best = np.maximum(best, cand) if (np.ndim(cand) or np.ndim(best)) else max(best, cand)
        dist[n] = best
        if track:
            back[n] = choice
    return (dist, back) if track else dist


def _loop_structure(graph: KernelGraph):
    """parent loop of each loop, innermost loop of each node, depth of each loop."""
    loops = sorted(graph.loops.values(), key=lambda lp: (len(lp.members), lp.id))
    parent = {}
    for i, lp in enumerate(loops):
        parent[lp.id] = next((o.id for o in loops[i + 1:] if lp.members < o.members), None)
    depth = {}
    for lp in loops:
        d, p = 0, parent[lp.id]
        while p is not None:
            d, p = d + 1, parent[p]
        depth[lp.id] = d
    innermost = {}
    for lp in loops:  # smallest first, so the first assignment is the innermost
        for n in lp.members:
            innermost.setdefault(n, lp.id)
    return parent, depth, innermost


def _sinks(region: _Region):
    """Nodes nothing leaves: with non-negative latencies, the longest paths end there."""
    has_succ = {pred for preds in region.preds.values() for pred, _, _ in preds}
    return [n for n in region.topo if n not in has_succ]
