"""Reuse across the blocks of a launch, and whether the L2 holds it: at prediction time.

The SASS import charges each global load the sectors its warp touches, less the neighbour
reuse within a warp (stencils: :func:`gpumodeler.core.kernel.sass.neighbours.reuse_hits`,
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

**Reuse within a block, and the L1.** The warps of one block also read what other warps of
the block read: ``B[k·n + col]`` of a naive matrix multiply holds no ``tid.y``, so the eight
warps of a 16×16 block read the same 64 bytes. ``r``, the share of the sectors a block's
warps touch that another of its warps touches too (:func:`launch_shape.block_reuse`, every
lane of the block evaluated), and the imported neighbour reuse ``h`` make the load's *near*
repeats, ``near = h + (1 − h)·r``, read a few instructions or one loop trip after the first
read, by the same block, hence on the same SM. What a block reads once, ``1 − near`` of the
bytes, is what the wave shares and the working sets count (above). The near repeats are
served by

* the SM's L1, where it caches the load (:func:`l1_caches`: Volta and later, and GP100, by
  default; Maxwell and the other Pascal GPUs only for loads through the read-only/texture
  path or compiled to cache in L1, NVIDIA's Maxwell and Pascal tuning guides, "Unified
  L1/Texture Cache"; NVIDIA Volta Tuning Guide, "Unified Shared Memory/L1/Texture Cache"),
  as far as the resident blocks' footprint fits it: ``g = min(1, L1 / WS_L1)``, ``WS_L1``
  the blocks per SM × the bytes a block reads once per loop trip over the L1-cached loads,
  ``L1`` from Volta on the SM's combined L1/shared capacity less the shared memory of its
  resident blocks (the carve-out; NVIDIA Volta Tuning Guide: the L1 and shared memory are
  one 128 KB array, of which the shared memory takes what the kernel needs), before Volta
  the L1/texture cache, an array of its own (CUDA C++ Programming Guide, Compute
  Capabilities 5.x and 6.x: 24 KB, 48 KB on 6.1). The same proportional ASSUMPTION as for
  the L2;
* else the L2, as far as ``f_trip`` holds them, else DRAM at the load's share ``d``.

So, with ``c`` 1 where the L1 caches the load (0 else) and ``F = c·g + (1 − c·g)·f_trip``,
the share of the near repeats a cache keeps,

    DRAM share = d·(1 − near·F),   L1 share = c·g·near,   L2 share = the rest of the hits,

which is the rule above (``d·(1 − h·f_trip)``) for a load without L1 caching or reuse
within a block: such loads are unchanged. Choice: a load whose address the import did not
follow (a hand-drawn graph's, whose hit ratio the user set) is left to the L2 (``c = 0``):
how far apart its re-reads are is not known. The L1 share is the node's ``l1_hit_ratio`` (a
part of its ``hit_ratio``), counted as ``l1_bytes`` (the worksheet's ``l1`` row) and taken
off the L2's. Without the L1 size or the GPU's compute capability the L1 serves nothing and
the report says so.

Choice: where the GPU's L2 bandwidth is not known (no ``l2`` row can bound the hits, every
GPU before Volta in the shipped database), the reuse within a block that no L1 keeps is not
credited (``r = 0``): its re-reads stay DRAM traffic, an upper bound, rather than L2 hits
that would cost nothing. Credited without a ceiling, they made an imported uncoalesced
matrix add and a naive matrix multiply on Maxwell 3–8× too fast. The imported neighbour
reuse ``h`` and the reuse across blocks stand as before. ``--l2-bandwidth`` gives the
ceiling and so the credit.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
import math
from typing import Any, NamedTuple

import numpy as np

from gpumodeler.core.kernel.sass.addresses import PARAM_STRIDE_NOTE
from gpumodeler.core.kernel.sass.neighbours import OVERLAPS_NOTE, row_shift_of
from gpumodeler.core.kernel.sass.launch_shape import (block_dims, block_reuse,
                                                      group_block_reuse, parse_address,
                                                      trip_reuse, trip_step_of)
from gpumodeler.core.kernel.warp_counts import access_bytes_per_warp

_DIMS = ("ctaid.x", "ctaid.y", "ctaid.z")
#: SASS cache operators of a global load that keep it out of the L1: cache-global (L2 only),
#: don't-cache (volatile), memory-mapped I/O (PTX ISA, "Cache Operators": ``.cg``, ``.cv``)
_L1_BYPASS = frozenset({"CG", "CV", "MMIO"})
#: what puts a global load in the L1 of Maxwell and of Pascal but GP100: the read-only
#: (texture) path of ``__ldg``/``const __restrict__`` (``.CI``, non-coherent ``.NC``, and
#: ``.CONSTANT`` as Volta and later print it) or ``-Xptxas -dlcm=ca`` (``.CA``)
_L1_OPT_IN = frozenset({"CI", "NC", "CONSTANT", "CA"})
_TEXTURE_READS = frozenset({"TEX", "TEXS", "TLD", "TLDS", "TLD4", "TLD4S", "TXD", "SULD"})


def _major(compute_capability) -> int:
    """The major compute capability, -1 when unknown or malformed."""
    try:
        return int(str(compute_capability).split(".")[0])
    except ValueError:
        return -1


def l1_caches(opcode: str, compute_capability) -> bool | None:
    """Whether the SM's L1 caches the global load ``opcode`` (its SASS mnemonic with the
    cache operators, ``LDG.E.CI``) on a GPU of ``compute_capability``; None when that is
    unknown or below 5.0 (not modelled).

    NVIDIA Volta Tuning Guide ("Unified Shared Memory/L1/Texture Cache"): Volta's L1 caches
    global loads, as every later architecture's does; NVIDIA Pascal Tuning Guide ("Unified
    L1/Texture Cache"): GP100 (6.0) caches global loads in L1 by default, GP104 and the
    other 6.x follow Maxwell; Maxwell Tuning Guide (same section) and CUDA C++ Programming
    Guide (Compute Capability 5.x, "Global Memory"): global loads are cached in L2 only
    unless read through the read-only data cache (``__ldg``, ``LDG.E.CI``) or compiled with
    ``-Xptxas -dlcm=ca``. The Programming Guide says 6.x global memory "behaves the same
    way as in devices of compute capability 5.x", the Pascal Tuning Guide that GP100 caches
    by default: choice, the tuning guide, the one that names the chip. A texture or surface read goes through the L1/texture cache on all
    of them. Choice: a load marked to bypass L1 (``.CG``, ``.CV``, ``.MMIO``, a strong load
    at GPU or system scope, ``.STRONG.GPU``/``.STRONG.SYS``, as volatile loads are printed
    from Volta on) is not cached; the eviction hints (``.EF``, ``.EL``, ``.LU``) still
    allocate, so their loads are."""
    parts = str(opcode).upper().split(".")
    mods = set(parts[1:])
    try:
        major, minor = (int(x) for x in (str(compute_capability).split(".") + ["0"])[:2])
    except ValueError:
        return None
    if major < 5:
        return None
    if parts[0] in _TEXTURE_READS:
        return True
    if mods & _L1_BYPASS or ("STRONG" in mods and mods & {"GPU", "SYS"}):
        return False
    if major >= 7 or (major, minor) == (6, 0):
        return True
    return bool(mods & _L1_OPT_IN)


@dataclass(frozen=True)
class LoadReuse:
    """One global load at a launch: ``sharing`` s, ``wave_sharing`` s_w, ``imported_hit``
    h, ``hit`` the launch's hit ratio (its DRAM share is 1 − hit), ``block_reuse`` r,
    ``l1_cached`` whether the L1 caches it (None: not known), ``l1_hit`` its L1 share
    (a part of ``hit``) and ``followed`` whether the import followed its address."""

    id: str
    sharing: float
    wave_sharing: float
    imported_hit: float
    hit: float
    block_reuse: float = 0.0
    l1_cached: bool | None = None
    l1_hit: float = 0.0
    followed: bool = True
    trip_reuse: float = 0.0


class _LoadRow(NamedTuple):
    """One global load of a launch, before the cache fits (:func:`reuse_graph`): ``sharing``
    s, ``wave_sharing`` s_w, the wave's unique bytes per trip and over its life, r, the near
    and far (other blocks' rows) repeats, whether the L1 caches it, a block's unique bytes
    per trip, t and h (the imported hit, as the rule leaves it)."""

    id: str
    ins: Any
    sharing: float
    wave_sharing: float
    trip_bytes: float
    wave_bytes: float
    block_reuse: float
    near: float
    cached: bool | None
    block_bytes: float
    trip_reuse: float
    outside: float
    imported_hit: float


@dataclass(frozen=True)
class L1Report:
    """The L1 side of a launch: ``bytes`` the L1 per SM left after ``carveout`` bytes of
    shared memory (None: the GPU's L1 size is unknown), ``working_set`` the resident
    blocks' bytes per loop trip over the L1-cached loads, ``fit`` g, ``compute_capability``."""

    bytes: float | None
    carveout: float
    working_set: float
    fit: float
    compute_capability: str | None


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
    l1: L1Report | None = None
    #: loads whose row-walk re-reads were not credited (:func:`_walks_its_own_row`)
    unbounded: tuple = ()

    def notes(self) -> list:
        """Lines for the output: the working sets against the L2, and what did not fit."""
        dropped = ([f"{', '.join(self.unbounded)}: the re-reads of each lane's own row (a lane "
                    f"stride holding a parameter) are not credited: no L1 caches these loads "
                    f"and no L2 bandwidth bounds them (give --l2-bandwidth)"]
                   if self.unbounded else [])
        if self.l2_bytes is None:
            return ["L2 size unknown for this GPU: no reuse across or within blocks, no L2 fit "
                    "check (imported hit ratios kept; give --l2-size BYTES)"] + dropped
        if not self.loads:
            return dropped
        return self._fit_notes() + dropped

    def _fit_notes(self) -> list:
        out = [f"wave of {self.wave_blocks} blocks reads {self.trip_working_set:.4g} B per loop "
               f"trip and {self.wave_working_set:.4g} B in all; L2 {self.l2_bytes:.4g} B"]
        if self.trip_fit < 1:
            out.append(f"per-trip working set exceeds the L2: {1 - self.trip_fit:.0%} of the "
                       f"reuse within a wave falls back to DRAM")
        if self.wave_fit < 1:
            out.append(f"a wave's working set exceeds the L2: {1 - self.wave_fit:.0%} of the "
                       f"reuse across waves falls back to DRAM")
        out += self._l1_notes()
        shared = [ld for ld in self.loads
                  if ld.sharing > 1 or ld.hit != ld.imported_hit or ld.l1_hit > 0]
        for ld in shared:
            l1 = f", {ld.l1_hit:.1%} from L1" if ld.l1_hit > 0 else ""
            trips = (f" ({ld.trip_reuse:.1%} re-read of its loop's earlier trips)"
                     if ld.trip_reuse > 0 else "")
            out.append(f"{ld.id}: read by {ld.sharing:g} blocks ({ld.wave_sharing:.3g} per "
                       f"wave), {ld.hit - ld.l1_hit:.1%} from L2{l1}{trips}")
        return out

    def _l1_notes(self) -> list:
        near = [ld for ld in self.loads
                if ld.followed and (ld.block_reuse > 0 or ld.imported_hit > 0
                                    or ld.trip_reuse > 0)]
        l1 = self.l1
        if l1 is None or not near:
            return []
        if l1.compute_capability is None:
            return ["compute capability unknown: no L1 caching of global loads modelled (the "
                    "reuse within a block is L2 traffic)"]
        cached = [ld for ld in near if ld.l1_cached]
        if not cached:
            if any(ld.l1_cached is None for ld in near):
                return [f"compute capability {l1.compute_capability}: L1 caching of global "
                        f"loads is modelled from 5.0 on (the reuse within a block is L2 traffic)"]
            return [f"the L1 does not cache these loads on compute capability "
                    f"{l1.compute_capability} (only loads marked .CI/.CA/.CONSTANT and texture "
                    f"reads before Volta, but on GP100): the reuse within a block is L2 traffic"]
        if l1.bytes is None:
            return ["L1 size unknown for this GPU: the reuse within a block is served by L2 "
                    "(give --l1-size BYTES)"]
        out = [f"L1 {l1.bytes:.4g} B per SM (after {l1.carveout:.4g} B of shared memory) for "
               f"the resident blocks' {l1.working_set:.4g} B per loop trip"]
        if l1.fit < 1:
            out.append(f"the resident blocks' footprint exceeds the L1: {1 - l1.fit:.0%} of "
                       f"the reuse within a block falls back to L2")
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
                working_set_bytes: float | None = None, block=None,
                compute_capability: str | None = None, l1_bytes_per_sm: float | None = None,
                shared_bytes_per_block: float = 0.0, l2_bounded: bool = True):
    """(graph, ReuseReport): ``graph`` with the hit ratios (and L1 hit ratios) of its global
    loads for this launch (a copy when any changes). See the module docstring for the rule.
    ``working_set_bytes``, when given, replaces both computed working sets (the user's
    figure for the bytes the L2 must hold between a read and its re-read). ``block`` is the
    block's shape (a thread count or dimensions; default ``warps_per_block`` warps along x),
    ``compute_capability`` and ``l1_bytes_per_sm`` (the combined L1/shared capacity) decide
    the L1's part, less ``shared_bytes_per_block`` per resident block. ``l2_bounded`` says
    whether the GPU's L2 bandwidth is known (the throughput worksheet's ``l2`` row bounds the
    hits): without it, the reuse within a block that no L1 keeps stays DRAM traffic (module
    docstring, "Reuse within a block")."""
    unbounded: list = []  # loads whose row-walk re-reads are not credited (below)
    grid = _grid_dims(grid_size)
    shape = block_dims(block) if block is not None else (int(warps_per_block) * warp_size, 1, 1)
    resident = max(1, int(blocks_per_sm))
    blocks = grid[0] * grid[1] * grid[2]
    wave = max(1, min(blocks, int(sms) * max(1, int(blocks_per_sm))))
    vals = dict(graph.variables, **(values or {}))
    rows, loop_trips = [], {}
    groups = _neighbour_groups(graph)
    group_r: dict = {}
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
        cached = l1_caches(ins.opcode, compute_capability) if poly is not None else False
        group = groups.get(nid)
        if group is not None and group[0] not in group_r:
            charged = sum(access_bytes_per_warp(m.width_bytes, m.stride, m.pattern,
                                                m.segment_bytes, warp_size) * (1.0 - m.hit_ratio)
                          for m in group[1])
            group_r[group[0]] = group_block_reuse(group[1], shape, warp_size, charged)
        r = group_r.get(group[0]) if group is not None else None
        if r is None:
            r = block_reuse(ins, shape, warp_size, raw) if poly is not None else 0.0
        t = _trips_reuse(ins, shape, warp_size, loop_trips) if poly is not None else 0.0
        h = ins.hit_ratio
        if not cached and not l2_bounded:
            r = t = 0.0  # an L2 hit no ceiling bounds would be free: keep it as DRAM traffic
            if h > 0 and _walks_its_own_row(ins):
                h = 0.0  # so are a row walk's re-reads of its own row (the module docstring)
                unbounded.append(nid)
        # re-read within the block: by a neighbouring load, another warp, an earlier trip
        near = 1.0 - (1.0 - h) * (1.0 - r) * (1.0 - t)
        per_trip = raw * (1.0 - near) * warps_per_block  # a block's unique bytes
        if trips == 0:
            per_trip = 0.0  # a load in a loop that never runs holds nothing in the L2
        # a row neighbour's repeats from rows outside the block: the neighbouring block's
        inside = _rows_inside(ins.address, shape)
        if inside < 1.0:
            outside = near - (1.0 - (1.0 - h * inside) * (1.0 - r) * (1.0 - t))
            near -= outside
        else:
            outside = 0.0
        rows.append(_LoadRow(nid, ins, sharing, wave / n, per_trip * n, per_trip * n * trips,
                             r, near, cached, per_trip, t, outside, h))
    ws_trip = sum(row.trip_bytes for row in rows)
    ws_wave = sum(row.wave_bytes for row in rows)
    if working_set_bytes is not None:
        ws_trip = ws_wave = float(working_set_bytes)
    if l2_bytes is None or not rows:
        return (_with_hits(graph, {nid: (0.0, 0.0) for nid in unbounded}),
                ReuseReport(l2_bytes, wave, ws_trip, ws_wave, 1.0, 1.0, (),
                            unbounded=tuple(unbounded)))
    f_trip = min(1.0, l2_bytes / ws_trip) if ws_trip > 0 else 1.0
    f_wave = min(1.0, l2_bytes / ws_wave) if ws_wave > 0 else 1.0
    l1 = _l1_fit(rows, compute_capability, l1_bytes_per_sm, shared_bytes_per_block, resident)
    loads, changes = [], {}
    for row in rows:
        s, near = row.sharing, row.near
        s_w = max(1.0, min(row.wave_sharing, s))
        d = (1.0 / s_w) * (1.0 - (1.0 - s_w / s) * f_wave) + (1.0 - 1.0 / s_w) * (1.0 - f_trip)
        cg = l1.fit if row.cached and l1.bytes is not None else 0.0
        kept = cg + (1.0 - cg) * f_trip  # F: the share of the near repeats a cache keeps
        # the other blocks' rows (``outside``) come from the L2 as far as it holds a trip's reads
        hit = min(1.0, max(0.0, 1.0 - (1.0 - near * kept - row.outside * f_trip) * d))
        l1_hit = min(hit, cg * near)
        loads.append(LoadReuse(row.id, s, s_w, row.imported_hit, hit, row.block_reuse,
                               row.cached, l1_hit, parse_address(row.ins.address) is not None,
                               row.trip_reuse))
        if hit != row.ins.hit_ratio or l1_hit != row.ins.l1_hit_ratio:
            changes[row.id] = (hit, l1_hit)
    report = ReuseReport(float(l2_bytes), wave, ws_trip, ws_wave, f_trip, f_wave, tuple(loads),
                         l1, tuple(unbounded))
    return _with_hits(graph, changes), report


def _neighbour_groups(graph) -> dict:
    """``{load id: (first id, [the group's loads])}`` for the global loads the import grouped
    as neighbours of one array (:data:`OVERLAPS_NOTE` in the ``address``, naming the group's
    first load), the first included, each group's loads under the first's guards: their
    near repeats are taken over the group's union (:func:`group_block_reuse`). A row
    neighbour (another ``tid.y`` row) and a load under other guards stay on their own."""
    guards_of: dict = {}
    for g in graph.guards.values():
        for m in g.members:
            guards_of.setdefault(m, set()).add(g.id)
    members: dict = {}
    for nid, ins in graph.instructions.items():
        text = ins.address or ""
        if ins.unit != "ldst" or OVERLAPS_NOTE not in text or row_shift_of(text) is not None:
            continue
        first = text.split(OVERLAPS_NOTE, 1)[1].split(":", 1)[0].strip()
        if first in graph.instructions and guards_of.get(nid) == guards_of.get(first):
            members.setdefault(first, [first]).append(nid)
    out: dict = {}
    for first, ids in members.items():
        group = (first, [graph.instructions[i] for i in ids])
        for i in ids:
            out[i] = group
    return out


def _with_hits(graph, changes: dict):
    """``graph`` with ``{id: (hit ratio, L1 hit ratio)}`` set (a copy; itself when none)."""
    if not changes:
        return graph
    out = graph.copy()
    for nid, (hit, l1_hit) in changes.items():
        out.instructions[nid] = replace(out.instructions[nid], hit_ratio=hit,
                                        l1_hit_ratio=l1_hit)
    return out


def _walks_its_own_row(ins) -> bool:
    """Whether a global load is one of an unrolled walk along each lane's own row
    (``A[r·n + k]``, ``k + 1``, …, ``r`` following ``tid.x``) that the import grouped with
    its first (neighbours.reuse_hits). Its re-reads of the sectors that first load brought are
    32 sectors a request, many times the walk's DRAM bytes: where no L1 caches the loads and
    the GPU's L2 bandwidth is unknown nothing bounds them, so, as for the reuse within a
    block (module docstring), they stay DRAM traffic, the import's charge before grouping.
    Measured: grouped and credited on Maxwell, an uncoalesced matrix multiply (Amarís' MMGU)
    came out as fast as its coalesced pair, against 3.4–3.8× slower derived."""
    return PARAM_STRIDE_NOTE in ins.address and OVERLAPS_NOTE in ins.address


def _rows_inside(address: str, shape: tuple) -> float:
    """The share of a row neighbour's threads (neighbours.reuse_hits: the bytes of the
    threads ``k`` rows of ``tid.y`` or ``tid.z`` away) whose row lies in their own block,
    ``max(0, n − |k|) / n`` for a block ``n`` threads along that axis; 1 for any other load."""
    found = row_shift_of(address)
    if found is None:
        return 1.0
    axis, k = found
    n = shape[1] if axis == "tid.y" else shape[2]
    return max(0.0, n - abs(k)) / n


def _trips_reuse(ins, shape: tuple, warp_size: int, loop_trips: dict) -> float:
    """The share of a load's sectors an earlier trip of its loop read (launch_shape.
    trip_reuse, the steady state) over the ``T`` trips the loop runs at this launch: the
    first trip reads its footprint fresh, so ``(T − 1) / T`` of the steady state. Choice:
    reads of the same bytes by an earlier loop (a compiler's remainder loop after its
    unrolled body) are not seen."""
    found = trip_step_of(ins.address)
    if found is None or found[1] not in loop_trips:
        return 0.0
    trips = loop_trips[found[1]]
    if trips <= 1:
        return 0.0
    return trip_reuse(ins, shape, warp_size) * (trips - 1.0) / trips


def _l1_fit(rows, compute_capability, l1_bytes_per_sm, shared_bytes_per_block,
            resident: int) -> L1Report:
    """The L1 left per SM after the resident blocks' shared memory, the resident blocks'
    bytes per loop trip over the L1-cached loads, and g (module docstring). Before Volta the
    L1/texture cache is an array of its own (CUDA C++ Programming Guide, Compute
    Capabilities 5.x and 6.x, "Architecture"): no carve-out."""
    cc = None if compute_capability is None else str(compute_capability)
    shares = _major(cc) >= 7
    carve = float(shared_bytes_per_block or 0.0) * resident if shares else 0.0
    ws = resident * sum(row.block_bytes for row in rows if row.cached)
    if l1_bytes_per_sm is None or cc is None:
        return L1Report(None, carve, ws, 0.0, cc)
    room = max(0.0, float(l1_bytes_per_sm) - carve)
    fit = min(1.0, room / ws) if ws > 0 else (1.0 if room > 0 else 0.0)
    return L1Report(room, carve, ws, fit, cc)
