"""Latency bound: the critical path of a kernel execution graph (Volkov §3.7; Gajger §4.4.2).

The latency bound of a warp is the longest path through its execution graph, each edge
weighted by the latency it stands for (:mod:`gpumodeler.core.kernel.graph`). Loops follow
Gajger eq. 5.1 (latency bound = 942 + 24a for saxpy2): a loop contributes
``iterations × per-iteration critical path``.

Semantics, chosen and documented here because the documents only show one example:

* Program order is the order of the instructions. Every path starts at issue time 0.
* A loop is collapsed into an *entry* and an *exit*: entry time = latest arrival over the
  edges entering the loop; exit time = entry + iterations × P; edges leaving the loop start
  at the exit. (Where inside the body an edge enters or leaves is not tracked: the same
  simplification as Gajger's "latency of the loop multiplied by the computational
  intensity".)
* P, the per-iteration critical path, is the longest cycle through a loop-carried edge
  (an edge going backwards in program order, e.g. the taken branch back to the loop head):
  ``max over carried edges u→v of (longest path v ⇝ u inside the body + latency(u→v))``.
  With complete ILP chains and the back edge this is the in-order issue recurrence. A loop
  with no carried edge costs the longest path inside its body per iteration.
* Loops nest: an inner loop is collapsed inside its parent's body first.

Because iteration counts are expressions, the result is symbolic: a set of linear forms
``c0 + Σ c_k · Π iterations`` (one per path that can be critical for some values of the
variables; dominated forms are pruned, iteration counts being >= 0; loops with the same
iteration expression share a term). The bound for given values is the largest form, which
vectorises over numpy arrays for sweeps. When paths that skip loops make more than
:data:`MAX_FORMS` candidate forms at some instruction (e.g. hundreds of loops each bypassed
by a dependency), the symbolic form is given up and the bound is evaluated exactly by a
numeric longest-path pass for the given values (still vectorised over arrays); the formula
is then reported as not available. The critical path itself always comes from the numeric
pass at the given values.

Layout. This module holds the analysis (:func:`analyze`), its result :class:`LatencyBound`
with the exact numeric pass, and :class:`CriticalPath`. The collapsed loops (regions, loop
nesting, numeric longest path) are in :mod:`gpumodeler.core.kernel.loop_regions`; the symbolic
max-of-linear-forms algebra and pass in :mod:`gpumodeler.core.kernel.latency_forms`; the latency of
one edge (:func:`resolve_edge_latency`, still importable from here) in
:mod:`gpumodeler.core.kernel.edge_latency`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from gpumodeler.core.kernel.collapse import LazyTable, collapse
from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.kernel.edge_latency import resolve_edge_latency  # noqa: F401  (re-exported)
from gpumodeler.core.errors import ExpressionError
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.item_table import id_positions, values_of
from gpumodeler.core.kernel.latency_forms import symbolic_forms
from gpumodeler.core.kernel.latency_tables import LatencyTable, get_table
from gpumodeler.core.kernel.loop_regions import (build_regions, longest_path, loop_structure,
                                                 place_edges)

MAX_FORMS = 16
#: dominance comparisons allowed per instruction before the symbolic pass gives up
WORK_PER_NODE = 40


@dataclass(frozen=True)
class CriticalPath:
    """The critical path for given variable values.

    ``steps`` is the path in order: edge ids, and ``("loop", loop_id)`` where the path
    crosses a loop, whose per-iteration path (edge ids) is ``loop_paths[loop_id]``.
    ``edge_ids`` and ``node_ids`` are everything on the path, loops included (for
    highlighting); ``loop_ids`` the loops crossed. ``edge_ends``, when the analysis gives
    it, holds the (source, target) of each edge on the path, as in the graph analysed."""

    steps: tuple
    edge_ids: tuple
    node_ids: tuple
    loop_ids: tuple
    loop_paths: dict
    edge_ends: dict | None = field(default=None, compare=False, repr=False)

    def describe(self, graph) -> str:
        """``a -> b -> [loop L × a: c -> d] -> e`` with instruction ids: the edges' ends as
        in the graph analysed (:attr:`edge_ends`, else ``graph``'s), the loops' names and
        iteration counts ``graph``'s."""
        ends = self.edge_ends
        if ends is None:
            # the ends of the edges on the path only, looked up together (a graph read from
            # a file makes no edge object for it)
            on_path = [step for step in self.steps if not isinstance(step, tuple)]
            on_path += chain.from_iterable(self.loop_paths.values())
            ends = dict(zip(on_path, zip(values_of(graph.edges, "src", on_path),
                                         values_of(graph.edges, "dst", on_path))))
        end_of = ends.__getitem__
        out: list[str] = []

        def nodes_of(edge_ids):
            nodes: list[str] = []
            for eid in edge_ids:
                src, dst = end_of(eid)
                if not nodes or nodes[-1] != src:
                    nodes.append(src)
                nodes.append(dst)
            return nodes

        for step in self.steps:
            if isinstance(step, tuple):
                lp = graph.loops[step[1]]
                inner = " -> ".join(nodes_of(self.loop_paths.get(step[1], ())))
                out.append(f"[{lp.name or lp.id} × {lp.iterations.text}: {inner}]")
            else:
                src, dst = end_of(step)
                if not out or out[-1] != src:
                    out.append(src)
                out.append(dst)
        return " -> ".join(out)


@dataclass(frozen=True)
class LatencyBound:
    """The latency bound of a graph: symbolic ``forms`` when available (else None) and the
    collapsed regions for the exact numeric pass."""

    forms: tuple | None
    iterations: dict  # loop id -> Expression
    loop_names: dict
    per_iteration: dict  # loop id -> tuple of forms (P), when symbolic
    edge_latency: dict  # edge id -> resolved latency in cycles
    edge_ends: dict  # edge id -> (src, dst)
    regions: dict  # loop id (None = top) -> Region
    loop_order: tuple  # loop ids, innermost first

    @property
    def variables(self) -> frozenset:
        names = set()
        for expr in self.iterations.values():
            names |= expr.variables
        return frozenset(names)

    @property
    def symbolic(self) -> bool:
        return self.forms is not None

    def _loop_values(self, values):
        out = {}
        for lid, expr in self.iterations.items():
            v = expr.evaluate(values)
            if np.any(np.asarray(v) < 0):
                raise ExpressionError(
                    f"loop {self.loop_names.get(lid) or lid}: iteration count {expr.text} is negative "
                    f"for the given values; it must be >= 0")
            out[lid] = v
        return out

    def _eval_form(self, form, loops_by_text):
        total = form[0]
        for mono, coef in form[1]:
            term = coef
            for text in mono:
                term = term * loops_by_text[text]
            total = total + term
        return total

    def _numeric(self, loop_values, track=False):
        """Exact longest path for the given iteration counts (arrays broadcast).

        With ``track``, also where the path ends in the top region and each loop's
        per-iteration path: ``(back, end)`` and ``{loop: (back, end, carried edge id)}``,
        ``back`` being :func:`longest_path`'s (by position in the region's ``topo``)."""
        scalar = all(np.ndim(v) == 0 for v in loop_values.values())
        weight, paths = {}, {}
        for lid in self.loop_order:
            region = self.regions[lid]
            if region.carried:
                per_iter, best_path = None, None
                from_start: dict = {}  # carried edges back to one node share its pass
                index = region.index
                for start, end, w, eid in region.carried:
                    res = from_start.get(start)
                    if res is None:
                        res = from_start[start] = longest_path(region, weight, source=index[start],
                                                           track=track, scalar=scalar)
                    dist, back = res if track else (res, None)
                    cand = dist[index[end]] + w
                    if per_iter is None:
                        per_iter = cand
                        best_path = (back, index[end], eid)
                    elif track:
                        if cand > per_iter:
                            per_iter, best_path = cand, (back, index[end], eid)
                    else:
                        per_iter = np.maximum(per_iter, cand)
            else:
                res = longest_path(region, weight, track=track, scalar=scalar)
                dist, back = res if track else (res, None)
                end = (max(range(len(dist)), key=lambda i: float(np.max(dist[i])))
                       if track else None)
                per_iter = _max_of(0.0, dist, scalar)
                best_path = (back, end, None)
            per_iter = np.maximum(per_iter, 0.0)
            weight[lid] = loop_values[lid] * per_iter
            if scalar:  # the same float64 value, without numpy's cost per operation
                weight[lid] = float(weight[lid])
            if track:
                paths[lid] = best_path
        res = longest_path(self.regions[None], weight, track=track, scalar=scalar)
        dist, back = res if track else (res, None)
        total = _max_of(0.0, dist, scalar)
        if not track:
            return total
        if not dist:
            end = None
        elif scalar:  # the first node of the longest arrival, as below
            end = max(range(len(dist)), key=dist.__getitem__)
        else:
            end = max(range(len(dist)), key=lambda i: float(dist[i]))
        return total, (back, end), paths

    def evaluate(self, values: dict | None = None):
        """Latency bound in cycles for the given variables (numbers or broadcasting arrays)."""
        loops = self._loop_values(values or {})
        if self.forms is None:
            return self._numeric(loops)
        by_text = {self.iterations[lid].text: v for lid, v in loops.items()}
        result = None
        for form in self.forms:
            v = self._eval_form(form, by_text)
            result = v if result is None else np.maximum(result, v)
        return 0.0 if result is None else result

    @collector_paused()
    def critical_path(self, values: dict | None = None) -> CriticalPath:
        """The critical path for scalar variable values (exact numeric pass)."""
        loops = self._loop_values(values or {})
        if any(np.ndim(v) for v in loops.values()):
            raise ExpressionError("the critical path needs one value per variable, not arrays")
        _, (back, end), loop_tracks = self._numeric(loops, track=True)

        loop_paths: dict = {}
        steps = _expand(_walk(back, end), loop_tracks, loop_paths)
        edges = [s for s in steps if s.__class__ is not tuple]
        edges += [e for sub in loop_paths.values() for e in sub]
        ends = self.edge_ends
        pairs = (ends.many(edges) if isinstance(ends, LazyTable)
                 else list(map(ends.__getitem__, edges)))
        on_path = dict(zip(edges, pairs))
        crossed = [s[1] for s in steps if s.__class__ is tuple]
        return CriticalPath(tuple(steps), tuple(on_path),
                            tuple(dict.fromkeys(chain.from_iterable(pairs))),
                            tuple(dict.fromkeys(crossed)), loop_paths, on_path)

    def formula(self, digits: int = 6) -> str:
        """The bound as text in the loop variables, e.g. ``942 + 24·a``."""
        if self.forms is None:
            return "(too many candidate paths for a formula; evaluated numerically)"

        def num(c):
            r = round(c, digits)
            return str(int(r)) if float(r).is_integer() else f"{r:g}"

        def it(text):
            return text if text.isidentifier() or _is_number(text) else f"({text})"

        parts = []
        for form in self.forms:
            terms = [num(form[0])] if form[0] or not form[1] else []
            for mono, coef in sorted(form[1], key=lambda mc: (len(mc[0]), mc[0])):
                factor = "·".join(it(t) for t in mono)
                terms.append(factor if coef == 1 else f"{num(coef)}·{factor}")
            parts.append(" + ".join(terms) if terms else "0")
        if not parts:
            return "0"
        return parts[0] if len(parts) == 1 else "max(" + ", ".join(parts) + ")"


# The walks of critical_path, as functions of their own: nested in it, the recursive one would
# make a reference cycle holding every back map until the cyclic collector's next full pass.
def _walk(back_map, node, stop_edge=None) -> list:
    """The steps back from ``node`` (a position) to where its path starts, in path order
    (``back_map`` as :func:`~gpumodeler.core.kernel.loop_regions.longest_path` gives it)."""
    steps = []
    while node is not None:
        entry = back_map[node]
        if entry is None:
            break
        node, step = entry
        steps.append(step)
    steps.reverse()
    if stop_edge is not None:
        steps.append(stop_edge)
    return steps


def _expand(steps, loop_tracks: dict, loop_paths: dict) -> list:
    """``steps`` (edge ids, and ``("loop", L)`` where the path crosses loop ``L``), with each
    crossed loop's per-iteration path put in ``loop_paths``, in the order the path meets
    them (a loop's nested loops before it)."""
    for step in [s for s in steps if s.__class__ is tuple]:  # ("loop", lid): the collapsed loop
        lid = step[1]
        if lid not in loop_paths:
            back_l, end_l, eid = loop_tracks[lid]
            inner = _expand(_walk(back_l, end_l, eid), loop_tracks, loop_paths)
            loop_paths[lid] = tuple(s for s in inner if s.__class__ is not tuple)
    return steps


def _max_of(start, values, scalar: bool):
    """``start`` and ``np.maximum`` of it with each value in turn; for numbers one
    ``np.maximum`` over them all, which is the same (NaN propagates in both)."""
    if not scalar:
        for v in values:
            start = np.maximum(start, v)
        return start
    values = np.array(values, dtype=float)
    return np.maximum(start, values.max()) if values.size else start


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def never_run(graph: KernelGraph) -> frozenset:
    """The instructions of guards whose fraction is the constant 0: code that never runs
    (docs/sass-import.md, "Guards": the thread index cannot take the guard's side)."""
    out: set = set()
    for g in graph.guards.values():
        if g.fraction.is_constant and float(g.fraction.evaluate()) == 0.0:
            out |= g.members
    return frozenset(out)


def without_never_run(graph: KernelGraph) -> KernelGraph:
    """``graph`` with every edge into or out of an instruction that never runs
    (:func:`never_run`) at latency 0: such an instruction puts no time on a warp's critical
    path (a predicated-off one is issued but produces nothing to wait for). The same graph
    when there is none."""
    never = never_run(graph)
    if not never:
        return graph
    from dataclasses import replace
    out = graph.copy()
    for eid, e in graph.edges.items():
        if (e.src in never or e.dst in never) and e.latency != 0.0:
            out.edges[eid] = replace(e, latency=0.0)
    return out


@collector_paused()
def analyze(graph: KernelGraph, table: LatencyTable | str | None = None) -> LatencyBound:
    """Analyse ``graph``: collapse loops, then compute the symbolic bound when it stays small.

    ``table`` defaults to the graph's own ``latency_table``. Raises GraphError (with the
    offending item) for a cycle outside a loop, a negative latency or a latency the table
    does not have.
    """
    if table is None and graph.latency_table:
        table = graph.latency_table
    if isinstance(table, str):
        table = get_table(table)
    graph = without_never_run(graph)
    # program order: a table read from a file already holds it (its index), read only here
    order = id_positions(graph.instructions) or graph.order()
    parent, depth, innermost = loop_structure(graph)
    collapsed = collapse(graph, table, order, parent, depth, innermost)
    if collapsed is not None:
        edge_latency, edge_ends, regions = collapsed
    else:  # the general way, which raises for the first edge the analysis cannot take
        edge_latency, edge_ends, forward, carried = place_edges(graph, table, order, parent,
                                                                 depth, innermost)
        regions = build_regions(graph, parent, innermost, forward, carried)
    loop_order = tuple(sorted(graph.loops, key=lambda l: -depth[l]))
    iterations = {lid: lp.iterations for lid, lp in graph.loops.items()}
    forms, per_iteration = symbolic_forms(regions, loop_order, iterations, MAX_FORMS, WORK_PER_NODE)
    return LatencyBound(
        forms=forms, iterations=iterations,
        loop_names={lid: lp.name for lid, lp in graph.loops.items()},
        per_iteration=per_iteration, edge_latency=edge_latency,
        edge_ends=edge_ends, regions=regions, loop_order=loop_order,
    )
