"""Latency bound: the critical path of a kernel execution graph (Volkov §3.7; Gajger §4.4.2).

The latency bound of a warp is the longest path through its execution graph, each edge
weighted by the latency it stands for (:mod:`gpumodeler.core.kernel_graph`). Loops follow
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
variables; dominated forms are pruned, iteration counts being >= 0). The bound for given
values is the largest form, which vectorises over numpy arrays for sweeps.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import networkx as nx
import numpy as np

from .errors import ExpressionError, GraphError
from .kernel_graph import KernelGraph
from .latency_tables import LatencyTable, get_table

# A linear form is (constant, ((monomial, coefficient), ...)) with monomial a tuple of loop
# ids (outermost first) and monomials sorted; paths are linked lists (prev, step).
_ZERO = (0.0, ())


def _add_const(form, c):
    return (form[0] + c, form[1])


def _add_forms(a, b):
    if not b[1]:
        return (a[0] + b[0], a[1])
    if not a[1]:
        return (a[0] + b[0], b[1])
    terms = dict(a[1])
    for m, c in b[1]:
        terms[m] = terms.get(m, 0.0) + c
    return (a[0] + b[0], tuple(sorted(terms.items())))


def _scale_by_loop(form, loop_id, depth_key):
    terms = {}
    if form[0]:
        terms[(loop_id,)] = form[0]
    for m, c in form[1]:
        mono = tuple(sorted(m + (loop_id,), key=depth_key))
        terms[mono] = terms.get(mono, 0.0) + c
    return (0.0, tuple(sorted(terms.items())))


def _dominates(a, b) -> bool:
    """a >= b for every non-negative value of the iteration counts."""
    if a[0] < b[0]:
        return False
    ta = dict(a[1])
    return all(ta.get(m, 0.0) >= c for m, c in b[1])


def _prune(frontier):
    """Drop dominated (form, path) entries; keeps the first of equal forms."""
    if len(frontier) <= 1:
        return frontier
    kept = []
    for i, (f, p) in enumerate(frontier):
        if any(_dominates(g, f) and (g != f or j < i) for j, (g, _) in enumerate(frontier) if j != i):
            continue
        kept.append((f, p))
    return kept


def _flatten(path) -> list:
    steps = []
    while path is not None:
        path, step = path
        steps.append(step)
    steps.reverse()
    return steps


@dataclass(frozen=True)
class CriticalPath:
    """The critical path for given variable values.

    ``steps`` is the path in order: edge ids, and ``("loop", loop_id)`` where the path
    crosses a loop, whose per-iteration path (edge ids) is ``loop_paths[loop_id]``.
    ``edge_ids`` and ``node_ids`` are everything on the path, loops included (for
    highlighting); ``loop_ids`` the loops crossed."""

    steps: tuple
    edge_ids: tuple
    node_ids: tuple
    loop_ids: tuple
    loop_paths: dict

    def describe(self, graph) -> str:
        """``a -> b -> [loop L × a: c -> d] -> e`` with instruction ids."""
        ends = {e.id: (e.src, e.dst) for e in graph.edges.values()}
        out: list[str] = []

        def chain(edge_ids):
            nodes: list[str] = []
            for eid in edge_ids:
                src, dst = ends[eid]
                if not nodes or nodes[-1] != src:
                    nodes.append(src)
                nodes.append(dst)
            return nodes

        for step in self.steps:
            if isinstance(step, tuple):
                lp = graph.loops[step[1]]
                inner = " -> ".join(chain(self.loop_paths.get(step[1], ())))
                out.append(f"[{lp.name or lp.id} × {lp.iterations.text}: {inner}]")
            else:
                src, dst = ends[step]
                if not out or out[-1] != src:
                    out.append(src)
                out.append(dst)
        return " -> ".join(out)


@dataclass(frozen=True)
class LatencyBound:
    """Symbolic latency bound of a graph. ``forms`` are the non-dominated linear forms."""

    forms: tuple
    iterations: dict  # loop id -> Expression
    loop_names: dict
    per_iteration: dict  # loop id -> tuple of forms (P)
    edge_latency: dict  # edge id -> resolved latency in cycles
    edge_ends: dict  # edge id -> (src, dst)

    @property
    def variables(self) -> frozenset:
        names = set()
        for expr in self.iterations.values():
            names |= expr.variables
        return frozenset(names)

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

    @staticmethod
    def _eval_form(form, loops):
        total = form[0]
        for mono, coef in form[1]:
            term = coef
            for lid in mono:
                term = term * loops[lid]
            total = total + term
        return total

    def evaluate(self, values: dict | None = None):
        """Latency bound in cycles for the given variables (numbers or broadcasting arrays)."""
        loops = self._loop_values(values or {})
        result = None
        for form, _ in self.forms:
            v = self._eval_form(form, loops)
            result = v if result is None else np.maximum(result, v)
        return 0.0 if result is None else result

    def critical_path(self, values: dict | None = None) -> CriticalPath:
        """The path of the largest form for scalar variable values."""
        loops = self._loop_values(values or {})
        if not self.forms:
            return CriticalPath((), (), (), (), {})
        best = max(self.forms, key=lambda fp: float(self._eval_form(fp[0], loops)))
        loop_paths: dict = {}

        def visit(path):
            seq = []
            for step in _flatten(path):
                if isinstance(step, tuple):  # ("loop", loop id, per-iteration path)
                    _, lid, inner = step
                    loop_paths[lid] = tuple(e for e in visit(inner) if not isinstance(e, tuple))
                    seq.append(("loop", lid))
                else:
                    seq.append(step)
            return seq

        steps = visit(best[1])
        edges = [s for s in steps if not isinstance(s, tuple)]
        edges += [e for sub in loop_paths.values() for e in sub]
        nodes = []
        for eid in edges:
            nodes.extend(self.edge_ends[eid])
        crossed = [s[1] for s in steps if isinstance(s, tuple)]
        return CriticalPath(tuple(steps), tuple(dict.fromkeys(edges)), tuple(dict.fromkeys(nodes)),
                            tuple(dict.fromkeys(crossed)), loop_paths)

    def formula(self, digits: int = 6) -> str:
        """The bound as text in the loop variables, e.g. ``942 + 24·a``."""
        def num(c):
            r = round(c, digits)
            return str(int(r)) if float(r).is_integer() else f"{r:g}"

        def it(lid):
            e = self.iterations[lid]
            t = e.text
            return t if (e.is_constant or t.isidentifier()) else f"({t})"

        parts = []
        for form, _ in self.forms:
            terms = [num(form[0])] if form[0] or not form[1] else []
            for mono, coef in form[1]:
                factor = "·".join(it(l) for l in mono)
                terms.append(factor if coef == 1 else f"{num(coef)}·{factor}")
            parts.append(" + ".join(terms) if terms else "0")
        if not parts:
            return "0"
        return parts[0] if len(parts) == 1 else "max(" + ", ".join(parts) + ")"


def resolve_edge_latency(graph: KernelGraph, edge, table: LatencyTable | None, order=None) -> float:
    """Latency of one edge in cycles: explicit value, else from the latency table."""
    if edge.latency is not None:
        return float(edge.latency)
    if edge.kind == "dual":
        return 0.0
    if table is None:
        raise GraphError(f"edge {edge.id} ({edge.kind}) has no latency and the graph has no "
                         f"latency table; set one or give the edge a latency", item=edge.id)
    try:
        if edge.kind == "ilp":
            return float(table.ilp())
        if edge.kind == "replacement":
            return float(table.block_replacement())
        if edge.kind == "barrier":
            return float(table.barrier())
        if edge.kind == "branch":
            taken = edge.taken
            if taken is None:
                order = order or graph.order()
                taken = order[edge.src] >= order[edge.dst]
            return float(table.branch(taken))
        producer = graph.instructions[edge.src]
        if producer.unit == "ldst":
            if not producer.is_load:
                raise GraphError(f"edge {edge.id}: {producer.opcode} ({edge.src}) is a store and "
                                 f"produces no register; use an ilp edge or give a latency", item=edge.id)
            key = producer.latency_key()
            if producer.space == "shared" and producer.bank_conflict_degree == 2 \
                    and "shared_2way" in table.memory_cycles and producer.memory_level is None:
                key = "shared_2way"
            if producer.pattern == "random" and key == "dram" and "dram_random" in table.memory_cycles:
                key = "dram_random"
            return float(table.memory(key))
        if edge.kind == "memory":
            raise GraphError(f"edge {edge.id}: a memory edge must start at a load; "
                             f"{producer.opcode} ({edge.src}) is not one", item=edge.id)
        if producer.latency_class is None:
            raise GraphError(f"edge {edge.id}: {producer.opcode} ({edge.src}) has no latency class "
                             f"(unit {producer.unit}); give the edge an explicit latency", item=edge.id)
        return float(table.instruction(producer.latency_class))
    except GraphError as exc:
        if exc.item is None:
            raise GraphError(f"edge {edge.id}: {exc}", item=edge.id) from None
        raise


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


def analyze(graph: KernelGraph, table: LatencyTable | str | None = None) -> LatencyBound:
    """Compute the symbolic latency bound of ``graph``.

    ``table`` defaults to the graph's own ``latency_table``. Raises GraphError (with the
    offending item) for a cycle outside a loop, a negative latency or a latency the table
    does not have.
    """
    if table is None and graph.latency_table:
        table = graph.latency_table
    if isinstance(table, str):
        table = get_table(table)
    order = graph.order()
    parent, depth, innermost = _loop_structure(graph)

    def chain(node):  # loops containing node, innermost first, ending with None (top)
        out, lid = [], innermost.get(node)
        while lid is not None:
            out.append(lid)
            lid = parent[lid]
        out.append(None)
        return out

    chains = {n: chain(n) for n in graph.instructions}

    def item_at(node, region):
        """The item representing node at the level of region (node itself or a child loop)."""
        prev = node
        for lid in chains[node]:
            if lid == region:
                return prev
            prev = ("L", lid)
        raise AssertionError("node not in region")

    edge_latency = {}
    forward = {}  # region -> list of (src_item, dst_item, weight, edge_id)
    carried = {}  # loop -> list of (src_item, dst_item, weight, edge_id)
    for e in graph.edges.values():
        w = resolve_edge_latency(graph, e, table, order)
        if w < 0 or not math.isfinite(w):
            raise GraphError(f"edge {e.id}: latency must be a finite number >= 0, got {w}", item=e.id)
        edge_latency[e.id] = w
        src_chain, dst_set = chains[e.src], set(chains[e.dst])
        region = next(l for l in src_chain if l in dst_set)
        s_item, d_item = item_at(e.src, region), item_at(e.dst, region)
        if order[e.src] >= order[e.dst]:
            if region is None:
                raise GraphError(
                    f"edge {e.id} from {e.src} back to {e.dst} makes a cycle outside any loop; "
                    f"put both instructions in a loop, or draw the edge forwards", item=e.id)
            carried.setdefault(region, []).append((s_item, d_item, w, e.id))
        else:
            forward.setdefault(region, []).append((s_item, d_item, w, e.id))

    depth_key = lambda lid: depth[lid]
    loop_weight = {}  # loop id -> frontier of iterations × P
    per_iteration = {}

    def level_dag(region, members):
        dag = nx.DiGraph()
        items = set()
        for n in members:
            items.add(item_at(n, region))
        for it in items:
            if isinstance(it, tuple):
                dag.add_edge(("in", it[1]), ("out", it[1]), w=loop_weight[it[1]], eid=("loop", it[1]))
            else:
                dag.add_node(it)
        for s, d, w, eid in forward.get(region, []):
            src = ("out", s[1]) if isinstance(s, tuple) else s
            dst = ("in", d[1]) if isinstance(d, tuple) else d
            if dag.has_edge(src, dst) and not isinstance(dag[src][dst]["eid"], tuple):
                if dag[src][dst]["w"][0][0][0] >= w:
                    continue
            dag.add_edge(src, dst, w=[((w, ()), None)], eid=eid)
        return dag

    def longest(dag, sources=None):
        try:
            topo = list(nx.topological_sort(dag))
        except nx.NetworkXUnfeasible:
            cycle = nx.find_cycle(dag)
            names = " -> ".join(str(u if not isinstance(u, tuple) else u[1]) for u, _ in cycle)
            raise GraphError(f"the graph has a cycle outside a loop ({names}); "
                             f"put it inside a loop", item=None) from None
        best = {n: [] for n in topo}
        for n in topo:
            # a path may start here at time 0; listed after the arrivals so that, among equal
            # forms, the longer path (e.g. through a 0-cycle dual edge) is the one kept
            if sources is None or n in sources:
                best[n].append((_ZERO, None))
            here = _prune(best[n])
            best[n] = here
            if not here:
                continue
            for _, succ, data in dag.out_edges(n, data=True):
                eid = data["eid"]
                if isinstance(eid, tuple):
                    ext = []
                    for f, p in here:
                        for wf, wp in data["w"]:
                            ext.append((_add_forms(f, wf), (p, ("loop", eid[1], wp))))
                else:
                    wconst = data["w"][0][0][0]
                    ext = [(_add_const(f, wconst), (p, eid)) for f, p in here]
                best[succ].extend(ext)
        return best

    # Inner loops first (deepest depth first).
    for lid in sorted(graph.loops, key=lambda l: -depth[l]):
        members = graph.loops[lid].members
        dag = level_dag(lid, members)
        frontier = []
        if carried.get(lid):
            for s, d, w, eid in carried[lid]:
                src = ("in", d[1]) if isinstance(d, tuple) else d
                dst = ("out", s[1]) if isinstance(s, tuple) else s
                best = longest(dag, sources={src})
                for f, p in best.get(dst, []):
                    frontier.append((_add_const(f, w), (p, eid)))
        else:
            best = longest(dag)
            for entries in best.values():
                frontier.extend(entries)
        frontier = _prune(frontier) or [(_ZERO, None)]
        per_iteration[lid] = tuple(frontier)
        loop_weight[lid] = [(_scale_by_loop(f, lid, depth_key), p) for f, p in frontier]

    dag = level_dag(None, graph.instructions)
    best = longest(dag)
    frontier = []
    for entries in best.values():
        frontier.extend(entries)
    frontier = _prune(frontier)
    return LatencyBound(
        forms=tuple(frontier),
        iterations={lid: lp.iterations for lid, lp in graph.loops.items()},
        loop_names={lid: lp.name for lid, lp in graph.loops.items()},
        per_iteration=per_iteration,
        edge_latency=edge_latency,
        edge_ends={e.id: (e.src, e.dst) for e in graph.edges.values()},
    )
