"""Reuse across the blocks of a launch, and whether the L2 holds it: at prediction time.

The SASS import charges each global load the sectors its warp touches, less the neighbour
reuse within a warp (stencils: :func:`gpumodeler.core.kernel.sass.addresses.reuse_hits`,
the node's ``hit_ratio``). Blocks also read what other blocks read: the address of a tiled
matrix multiply's ``A[row·n + k]`` holds ``ctaid.y`` but not ``ctaid.x``, so every block of
a grid row reads the same tiles. The first read of a byte comes from DRAM (the compulsory,
"unique" bytes of the Roofline model, Williams, Waterman & Patterson, CACM 2009); a later read
by another block is an L2 hit while the L2 still holds the line (NVIDIA CUDA C++ Best
Practices Guide, "L2 Cache": the L2 is shared by all SMs and keeps the lines global reads
bring). :func:`reuse_graph` sets each global load's hit ratio from that, for one launch.

The rule, per global load whose address the import followed (``address`` text):

* ``s``: the blocks of the grid that read the same bytes, the product of the grid's
  dimensions whose ``ctaid`` the address does not hold;
* the **wave**: the ``W = min(blocks, SMs × blocks per SM)`` blocks resident together, the
  first ``W`` in launch order (x fastest, then y, z; blocks are dispatched in that order,
  Volkov 2016 §5.6 observes them run as synchronized waves). ``n``: the distinct footprints
  of the load among them, ``s_w = W / n`` the blocks of a wave that share one;
* two working sets, the unique bytes the wave reads (a load in a loop that runs no trip at
  this launch, an unrolled loop's remainder, reads none): per trip of the loads' loops
  (``WS_trip``: the blocks of a wave run their loop iterations about together, so the
  reads a wave shares fall that close in time) and over the wave's life (``WS_wave``: what
  a later wave re-reading the same bytes finds between its read and the first one);
* the **L2 fit**: ``f = min(1, L2 / WS)``, the share of the reuse the L2 holds.
  ASSUMPTION: the proportional rule (a working set twice the L2 keeps half its reuse) — a
  strict LRU cache under a cyclic sweep larger than itself keeps none, a random-replacement
  one about this; NVIDIA does not publish its L2's replacement policy. So the DRAM share of
  the load's bytes is

      d = (1/s_w)·(1 − (1 − s_w/s)·f_wave) + (1 − 1/s_w)·(1 − f_trip)

  (first reads in the wave: from DRAM unless an earlier wave read them and the L2 still
  holds them; the wave's repeats: from L2 as far as the per-trip working set fits), and the
  load's neighbour reuse within a warp (the imported ``hit_ratio`` ``h``, a few instructions
  apart) counts as far as ``WS_trip`` fits: ``hit = 1 − (1 − h·f_trip)·d``.

Stores are left as they are (each block writes its own part). A load whose address the import
did not follow reads its own bytes (``s = 1``) and counts in the working sets. Without the
GPU's L2 size nothing changes (the imported hit ratios stand) and the report says so.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
import math

import numpy as np

from gpumodeler.core.kernel.sass.launch_shape import parse_address
from gpumodeler.core.kernel.warp_counts import access_bytes_per_warp

_DIMS = ("ctaid.x", "ctaid.y", "ctaid.z")


@dataclass(frozen=True)
class LoadReuse:
    """One global load at a launch: ``sharing`` s, ``wave_sharing`` s_w, ``imported_hit``
    h, ``hit`` the launch's hit ratio and ``dram_share`` 1 − hit."""

    id: str
    sharing: float
    wave_sharing: float
    imported_hit: float
    hit: float


@dataclass(frozen=True)
class ReuseReport:
    """What :func:`reuse_graph` found for one launch (bytes; ``l2_bytes`` None: unknown)."""

    l2_bytes: float | None
    wave_blocks: int
    trip_working_set: float
    wave_working_set: float
    trip_fit: float
    wave_fit: float
    loads: tuple = ()

    def notes(self) -> list:
        """Lines for the output: the working sets against the L2, and what did not fit."""
        if self.l2_bytes is None:
            return ["L2 size unknown: no reuse across blocks, no L2 fit check (imported hit "
                    "ratios kept)"]
        if not self.loads:
            return []
        out = [f"wave of {self.wave_blocks} blocks reads {self.trip_working_set:.4g} B per loop "
               f"trip and {self.wave_working_set:.4g} B in all; L2 {self.l2_bytes:.4g} B"]
        if self.trip_fit < 1:
            out.append(f"per-trip working set exceeds the L2: {1 - self.trip_fit:.0%} of the "
                       f"reuse within a wave falls back to DRAM")
        if self.wave_fit < 1:
            out.append(f"a wave's working set exceeds the L2: {1 - self.wave_fit:.0%} of the "
                       f"reuse across waves falls back to DRAM")
        shared = [ld for ld in self.loads if ld.sharing > 1 or ld.hit != ld.imported_hit]
        for ld in shared:
            out.append(f"{ld.id}: read by {ld.sharing:g} blocks ({ld.wave_sharing:.3g} per "
                       f"wave), {ld.hit:.1%} from L2")
        return out


@lru_cache(maxsize=1024)
def _distinct_footprints(present: tuple, grid: tuple, wave: int) -> int:
    """Distinct values of the block-index dimensions ``present`` among the first ``wave``
    blocks in launch order (x fastest)."""
    if not present:
        return 1
    b = np.arange(wave, dtype=np.int64)
    gx, gy, _ = grid
    idx = {"ctaid.x": b % gx, "ctaid.y": (b // gx) % gy, "ctaid.z": b // (gx * gy)}
    key = np.zeros(wave, dtype=np.int64)
    for d in present:
        key = key * (max(grid) + 1) + idx[d]
    return int(np.unique(key).size)


def _grid_dims(grid_size) -> tuple:
    if isinstance(grid_size, (tuple, list)):
        dims = tuple(int(d) for d in grid_size) + (1, 1)
        return dims[:3]
    return (int(grid_size), 1, 1)


def reuse_graph(graph, *, grid_size, warps_per_block: int, blocks_per_sm: int, sms: int,
                l2_bytes: float | None, values: dict | None = None, warp_size: int = 32,
                working_set_bytes: float | None = None):
    """(graph, ReuseReport): ``graph`` with the hit ratios of its global loads for this
    launch (a copy when any changes). See the module docstring for the rule.
    ``working_set_bytes``, when given, replaces both computed working sets (the user's
    figure for the bytes the L2 must hold between a read and its re-read)."""
    grid = _grid_dims(grid_size)
    blocks = grid[0] * grid[1] * grid[2]
    wave = max(1, min(blocks, int(sms) * max(1, int(blocks_per_sm))))
    vals = dict(graph.variables, **(values or {}))
    rows, loop_trips = [], {}
    for nid, ins in graph.instructions.items():
        if ins.unit != "ldst" or ins.space != "global" or not ins.is_load:
            continue
        poly = parse_address(ins.address)
        present = tuple(d for d in _DIMS if poly is None or d in poly.symbols())
        absent = [grid[i] for i, d in enumerate(_DIMS) if d not in present]
        sharing = float(math.prod(absent)) if absent else 1.0
        n = _distinct_footprints(present, grid, wave) if poly is not None else wave
        raw = access_bytes_per_warp(ins.width_bytes, ins.stride, ins.pattern, ins.segment_bytes,
                                    warp_size)
        trips = 1.0
        for lp in graph.loops_containing(nid):
            if lp.id not in loop_trips:
                loop_trips[lp.id] = max(0.0, float(lp.iterations.evaluate(vals)))
            trips *= loop_trips[lp.id]
        per_trip = raw * (1.0 - ins.hit_ratio) * warps_per_block  # a block's unique bytes
        if trips == 0:
            per_trip = 0.0  # a load in a loop that never runs holds nothing in the L2
        rows.append((nid, ins, sharing, wave / n, per_trip * n, per_trip * n * trips))
    ws_trip = sum(r[4] for r in rows)
    ws_wave = sum(r[5] for r in rows)
    if working_set_bytes is not None:
        ws_trip = ws_wave = float(working_set_bytes)
    if l2_bytes is None or not rows:
        return graph, ReuseReport(l2_bytes, wave, ws_trip, ws_wave, 1.0, 1.0, ())
    f_trip = min(1.0, l2_bytes / ws_trip) if ws_trip > 0 else 1.0
    f_wave = min(1.0, l2_bytes / ws_wave) if ws_wave > 0 else 1.0
    loads, changes = [], {}
    for nid, ins, s, s_w, _, _ in rows:
        s_w = max(1.0, min(s_w, s))
        d = (1.0 / s_w) * (1.0 - (1.0 - s_w / s) * f_wave) + (1.0 - 1.0 / s_w) * (1.0 - f_trip)
        hit = min(1.0, max(0.0, 1.0 - (1.0 - ins.hit_ratio * f_trip) * d))
        loads.append(LoadReuse(nid, s, s_w, ins.hit_ratio, hit))
        if hit != ins.hit_ratio:
            changes[nid] = hit
    report = ReuseReport(float(l2_bytes), wave, ws_trip, ws_wave, f_trip, f_wave, tuple(loads))
    if not changes:
        return graph, report
    out = graph.copy()
    for nid, hit in changes.items():
        out.instructions[nid] = replace(out.instructions[nid], hit_ratio=hit)
    return out, report
