"""One launch's view of a kernel graph's memory: the one function every prediction uses.

A graph imported from SASS carries its memory accesses as import-time values (a 1-D block
of warp-wide rows, each load's neighbour reuse within a warp). Three things only a launch
decides change them, applied here in this order:

1. the guards the block decides: the once-per-block guards' ``warps_per_block`` and the
   thread tests' shares of the block's warps
   (:func:`gpumodeler.core.kernel.graph_items.launch_guard_values`);
2. the block's shape: a block narrower than a warp puts several rows in one warp
   (:func:`gpumodeler.core.kernel.sass.launch_shape.shaped_graph`, after the CUDA C++
   Programming Guide's thread numbering);
3. reuse across the blocks of a wave and whether the L2 holds it
   (:func:`gpumodeler.core.kernel.sass.reuse.reuse_graph`: compulsory bytes after Williams,
   Waterman & Patterson 2009, waves after Volkov 2016 §5.6), and reuse within a block and
   whether the SM's L1 caches and holds it (NVIDIA's Maxwell, Pascal and Volta tuning
   guides), which needs the GPU (its SMs, L2 size, compute capability and L1 size), the
   grid, the occupancy and the shared memory per block (the L1's carve-out).

``predict``, ``validate`` and a project's launches all call :func:`graph_for_launch`, so one
kernel, GPU and launch gives one prediction whichever way it is asked for.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpumodeler.core.kernel.graph_items import launch_guard_values
from gpumodeler.core.kernel.sass.launch_shape import block_dims, shaped_graph
from gpumodeler.core.kernel.sass.reuse import reuse_graph


@dataclass(frozen=True)
class LaunchGraph:
    """The graph as this launch sees it (the given graph itself when nothing changes), the
    variable values to evaluate it with (the given ones plus the launch's guard values), a
    line per change for the output, and ``latency_graph``: the graph after the block shape
    and before the reuse, which is all the latency bound reads (the reuse changes only hit
    ratios, and no edge latency reads one), so a caller may analyse that graph (the given
    one itself for most launches) and keep the analysis across launches."""

    graph: Any
    values: dict
    notes: tuple[str, ...] = ()
    latency_graph: Any = None


def graph_for_launch(graph, values: dict | None, *, block_size, warp_size: int = 32,
                     gpu=None, grid_size=None, occupancy: float | None = None,
                     working_set_bytes: float | None = None,
                     shared_bytes_per_block: float | None = None,
                     compulsory: bool = False) -> LaunchGraph:
    """``graph`` for one launch: the guard values, the block shape, then (with ``gpu``,
    ``grid_size`` and ``occupancy`` in warps per SM) the reuse across blocks and the L2 fit.

    ``values`` are the user's values (a guard variable among them is kept). Without ``gpu``
    only the first two apply (a sweep or graph listing with no device). The wave is the
    ``SMs × blocks per SM`` blocks resident together, blocks per SM being
    ``floor(occupancy / warps per block)`` (at least 1). ``working_set_bytes`` replaces the
    computed working sets (the user's figure, ``predict --working-set``).
    ``shared_bytes_per_block`` (static + dynamic; default the graph's static shared memory,
    else 0) is taken out of the SM's combined L1/shared capacity. ``compulsory`` gives the
    compulsory bytes instead (the one-line roofline's, core.models.roofline_peak): a cache
    of any size, so every re-read another read could serve is served (f = 1, the L2 taken
    as bounded) and each footprint comes from DRAM once — "each array element read once";
    it needs ``gpu``, ``grid_size`` and ``occupancy`` like the reuse does."""
    vals = dict(values or {})
    threads = math.prod(block_dims(block_size))
    warp = int(warp_size) if warp_size else 32
    vals.update(launch_guard_values(graph, vals, block_dims(block_size), warp,
                                    None if grid_size is None else block_dims(grid_size)))
    graph, shape_notes = shaped_graph(graph, block_size, warp)
    shaped = graph
    notes = list(shape_notes)
    if gpu is not None and grid_size is not None and occupancy is not None:
        wpb = -(-threads // warp)
        if shared_bytes_per_block is None:
            shared_bytes_per_block = getattr(graph, "static_shared_bytes", None) or 0
        graph, report = reuse_graph(graph, grid_size=grid_size, warps_per_block=wpb,
                                    blocks_per_sm=int(float(occupancy) // wpb),
                                    sms=gpu.require("sms"),
                                    l2_bytes=math.inf if compulsory else gpu.l2_bytes,
                                    values=vals,
                                    warp_size=warp, working_set_bytes=working_set_bytes,
                                    block=block_dims(block_size),
                                    compute_capability=gpu.compute_capability,
                                    l1_bytes_per_sm=gpu.l1_bytes_per_sm,
                                    shared_bytes_per_block=float(shared_bytes_per_block),
                                    l2_bounded=(compulsory
                                                or gpu.l2_bandwidth_bytes_per_s is not None))
        more = report.notes()
        if working_set_bytes is not None:
            more.insert(0, f"working set {working_set_bytes:g} B given (--working-set)")
        if gpu.l2_bandwidth_bytes_per_s is None and any(ld.followed for ld in report.loads):
            more.append("L2 bandwidth unknown for this GPU: the L2 hits are not bounded (l2 "
                        "row 0) and the reuse within a block that no L1 keeps is charged to "
                        "DRAM (give --l2-bandwidth B/S)")
        if gpu.l1_bytes_per_cycle_per_sm is None and any(ld.l1_hit > 0 for ld in report.loads):
            more.append("L1 bandwidth unknown for this GPU: the L1 hits are not bounded (l1 "
                        "row 0)")
        notes += more
    return LaunchGraph(graph, vals, tuple(notes), shaped)




def memory_may_change(graph) -> bool:
    """Whether a launch can change what ``graph`` counts (:func:`graph_for_launch`): a
    memory access with an address the import followed, a load with a hit ratio, the
    once-per-block guards' variable, a guard's thread test or a loop's trip count from the
    block. A hand-drawn graph has none: one view serves every launch."""
    from gpumodeler.core.kernel.graph_items import WARPS_PER_BLOCK
    from gpumodeler.core.kernel.sass.launch_shape import parse_address
    if WARPS_PER_BLOCK in graph.variables or any(g.test for g in graph.guards.values()) or \
            graph.block_trips:
        return True
    return any(ins.unit == "ldst" and (ins.hit_ratio > 0 or parse_address(ins.address) is not None)
               for ins in graph.instructions.values())


@dataclass(frozen=True)
class LaunchView:
    """One launch's graph with its latency bound and per-warp counts (analysed once for every
    launch that sees the same graph), and the guard values the launch adds to the user's."""

    graph: Any
    bound: Any
    counts: Any
    guards: dict


class LaunchViews:
    """:func:`graph_for_launch` for the many launches of a sweep: launches whose graphs have
    the same block shape, hit ratios and guard values share one analysis (latency bound and
    counts), which is what a launch view costs (about 3 ms for an 81-instruction graph,
    35 ms for 3 300 instructions); the given graph's own analysis serves the launches that
    change nothing. ``table``: the latency table the bound is analysed with."""

    def __init__(self, graph, table, warp_size: int = 32, *, bound=None, counts=None):
        self.graph = graph
        self.table = table
        self.warp = int(warp_size) if warp_size else 32
        self._bound = bound
        self._counts = counts
        self._views: dict = {}

    def _own(self):
        from gpumodeler.core.kernel.latency_bound import analyze
        from gpumodeler.core.kernel.warp_counts import count
        if self._bound is None:
            self._bound = analyze(self.graph, self.table)
        if self._counts is None:
            self._counts = count(self.graph, self.warp)
        return self._bound, self._counts

    def view(self, values: dict | None, *, block_size, gpu=None, grid_size=None,
             occupancy: float | None = None, working_set_bytes: float | None = None,
             shared_bytes_per_block: float | None = None) -> LaunchView:
        """The view of one launch (the arguments of :func:`graph_for_launch`)."""
        from gpumodeler.core.kernel.latency_bound import analyze
        from gpumodeler.core.kernel.warp_counts import count
        values = dict(values or {})
        seen = graph_for_launch(self.graph, values, block_size=block_size, warp_size=self.warp,
                                gpu=gpu, grid_size=grid_size, occupancy=occupancy,
                                working_set_bytes=working_set_bytes,
                                shared_bytes_per_block=shared_bytes_per_block)
        guards = {k: v for k, v in seen.values.items() if k not in values}
        shaped = seen.latency_graph is not self.graph
        hits = (tuple((ins.hit_ratio, ins.l1_hit_ratio) for ins in seen.graph.instructions.values())
                if seen.graph is not seen.latency_graph else None)
        key = (tuple(block_dims(block_size)) if shaped else None, hits,
               tuple(sorted(guards.items())))
        if key not in self._views:
            bound, counts = self._own()
            if seen.graph is not self.graph:
                counts = count(seen.graph, self.warp)
                if shaped:
                    bound = analyze(seen.latency_graph, self.table)
            self._views[key] = (seen.graph, bound, counts)
        g, bound, counts = self._views[key]
        return LaunchView(g, bound, counts, guards)


__all__ = ["LaunchGraph", "LaunchView", "LaunchViews", "graph_for_launch", "memory_may_change"]
