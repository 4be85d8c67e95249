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
    vals.update(launch_guard_values(graph, vals, block_dims(block_size), warp))
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


__all__ = ["LaunchGraph", "graph_for_launch"]
