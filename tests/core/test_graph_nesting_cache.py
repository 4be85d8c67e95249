"""KernelGraph.nesting() is worked out once while the loops stay the same objects, and again
whenever they change, however they change (for speed)."""
from __future__ import annotations

from dataclasses import replace

from gpumodeler.core.kernel.graph import Loop, from_dict
from gpumodeler.core.kernel.loop_nesting import loop_nesting

from test_graph_linear import random_kernel


def _same(nesting, loops):
    want = loop_nesting(loops)
    assert (nesting.parent, nesting.depth, nesting.innermost) == \
        (want.parent, want.depth, want.innermost)


def test_nesting_is_kept_while_the_loops_are_the_same_objects():
    g = from_dict(random_kernel(5, n=80, loops=8))
    first = g.nesting()
    assert g.nesting() is first  # from_dict's own check of the file's loops, kept
    _same(first, g.loops)
    g.instructions["extra"] = replace(g.instructions["n0"], id="extra")
    assert g.nesting() is first  # instructions do not change how loops nest


def test_nesting_follows_every_change_of_the_loops():
    g = from_dict(random_kernel(6, n=80, loops=8))
    lid, loop = next(iter(g.loops.items()))
    before = g.nesting()
    g.remove_loop(lid)
    assert g.nesting() is not before
    _same(g.nesting(), g.loops)
    g.add_loop(loop)
    _same(g.nesting(), g.loops)
    outer = max(g.loops.values(), key=lambda lp: len(lp.members))
    g.loops[outer.id] = Loop.make(outer.id, sorted(outer.members), "7")  # a new object
    _same(g.nesting(), g.loops)
    g.loops = {}
    assert g.nesting().parent == {} and g.nesting().innermost == {}
    assert g.copy().nesting() is not g.nesting()
