"""How the loops of a kernel graph nest, found in time linear in their members.

Loops are regions of instructions that must nest or be disjoint (a laminar family,
:mod:`gpumodeler.core.kernel.graph`). Everything that needs the nesting — validating a file
with many loops, the per-warp counts (a node counts once per iteration of every enclosing
loop), the collapsed regions of the latency bound — takes it from :func:`loop_nesting`
instead of comparing loops pairwise.

The algorithm: visit the loops largest first and label every instruction with the last
(hence smallest) loop visited that contains it. A loop is properly nested iff all its members
carry the same label ``P`` when it is visited (``P`` is then its parent: it contains the
loop, and every larger loop meeting the loop contains ``P``) and ``P`` is larger than it (an
equal size means the same instructions). Each member is looked at once per loop that
contains it, so the cost is the total number of memberships plus sorting the loops by size.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoopNesting:
    """``parent[loop]`` the smallest loop strictly containing it (None at the top level),
    ``depth[loop]`` 0 for the outermost loops, ``innermost[instruction]`` the smallest loop
    containing the instruction (instructions in no loop are absent)."""

    parent: dict
    depth: dict
    innermost: dict

    def enclosing(self, node_id) -> tuple:
        """Loop ids containing the instruction, outermost first."""
        out = []
        lid = self.innermost.get(node_id)
        while lid is not None:
            out.append(lid)
            lid = self.parent[lid]
        out.reverse()
        return tuple(out)


def nesting_or_none(loops) -> LoopNesting | None:
    """The nesting of ``loops`` (Loop objects with distinct ids), or None when two of them
    partly overlap or have the same instructions."""
    size = {lp.id: len(lp.members) for lp in loops}
    label: dict = {}
    parent: dict = {}
    depth: dict = {}
    empty = []
    for lp in sorted(loops, key=lambda lp: (-size[lp.id], lp.id)):
        if not lp.members:
            empty.append(lp.id)
            continue
        # the members' labels, looked up in C: one label for all of them, or a conflict
        labels = set(map(label.get, lp.members))
        if len(labels) != 1:
            return None
        p = labels.pop()
        if p is not None and size[p] == size[lp.id]:
            return None
        parent[lp.id] = p
        depth[lp.id] = 0 if p is None else depth[p] + 1
        label.update(dict.fromkeys(lp.members, lp.id))
    if len(empty) > 1:
        return None  # two loops with the same (no) instructions
    for lid in empty:
        # Only a graph read from a damaged project file has an empty loop. It holds no
        # instruction and so changes no count and no path; like a strict subset of every
        # other loop, it sits inside the smallest one (ties by id).
        nonempty = [l for l in parent]
        p = min(nonempty, key=lambda l: (size[l], l)) if nonempty else None
        parent[lid] = p
        depth[lid] = 0 if p is None else depth[p] + 1
    return LoopNesting(parent, depth, label)


def loop_nesting(loops) -> LoopNesting:
    """The nesting of a graph's loops (``graph.loops``, a dict or an iterable of Loop).

    Raises GraphError when two loops partly overlap or have the same instructions, which
    the graph's own mutations never allow."""
    from gpumodeler.core.errors import GraphError
    loops = list(loops.values()) if isinstance(loops, dict) else list(loops)
    nesting = nesting_or_none(loops)
    if nesting is None:
        k = first_conflict(loops)
        raise GraphError(f"loop {loops[k].id} partly overlaps another loop or has the same "
                         f"instructions as one; loops must nest or be disjoint", item=loops[k].id)
    return nesting


def first_conflict(loops, start: int = 0) -> int | None:
    """Index of the first loop in ``loops`` that does not nest with the loops before it
    (None when they all nest); ``loops[:start]`` are known to nest.

    A family of nested loops stays nested when loops are removed, so the answer is found by
    bisection over prefixes: O((memberships + loops·log loops)·log loops), and only called
    once something is already known to be wrong."""
    loops = list(loops)
    if nesting_or_none(loops) is not None:
        return None
    lo, hi = max(start, 0), len(loops)  # prefix of length lo nests, of length hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if nesting_or_none(loops[:mid]) is not None:
            lo = mid
        else:
            hi = mid
    return hi - 1
