"""Reuse between neighbouring loads of one array, found in the import's address analysis
(:mod:`gpumodeler.core.kernel.sass.addresses`): a stencil's neighbours, the unrolled loads of
one row, and a 2-D stencil's rows above and below (docs/sass-import.md, "Reuse between
neighbouring loads" and "Rows"). What each grouped load's ``address`` says of it is read back
at launch by :mod:`gpumodeler.core.kernel.sass.reuse`.
"""
from __future__ import annotations

import re

from gpumodeler.core.kernel.sass.addresses import (PARAM_STRIDE_BYTES, SECTOR_BYTES, WARP, Poly,
                                                   is_lane_varying)

#: what the ``address`` of a load grouped with an earlier one says, before that load's id
OVERLAPS_NOTE = "; overlaps "


def reuse_hits(addressed: dict, widths: dict, scopes: dict, loads: set) -> dict:
    """``{index: (hit ratio, index of the first load of its group[, axis, rows])}`` for global
    loads whose footprints overlap another's of the same array (stencil neighbours).

    Loads group when their addresses differ only in the numeric offset (same pointer, same
    thread-index terms, same lane stride and width) and they run in the same loops under the
    same guards (``scopes``: a key per instruction, of both: a guarded load runs in only some
    warps, so it brings nothing for an unguarded one in the others); warp-uniform loads too (lane stride 0: an unrolled
    ``A[row·n + k]``, ``k`` … ``k + 15``, whose sixteen loads touch two sectors). Per warp the group moves the 32-byte sectors of
    the union of its footprints once; the first load in program order is charged its own
    sectors, each later one only the sectors it adds to the union (its ``hit_ratio`` is
    the rest, served by L2, which keeps a line for later requests: NVIDIA CUDA C++ Best
    Practices Guide, "L2 Cache"). This is the reuse of the "unique bytes" of a stencil's
    neighbour reads (Williams, Waterman & Patterson, "Roofline", CACM 2009, count a stencil's
    compulsory traffic the same way), on the assumption that a wave's footprint fits the L2
    between the first and the last neighbour read (docs/sass-import.md).

    **Rows.** A group whose addresses differ from an earlier group's by a whole number ``k``
    of the ``tid.y`` (or ``tid.z``) coefficient (a 2-D stencil's ``in[i − nx]``, ``in[i + nx]``
    beside ``in[i]``, ``i = y·nx + x``) reads what the earlier group's loads read in the
    threads ``k`` rows away: the same columns of another row, which those threads' warps
    bring (in the block, or in the neighbouring block of the wave). It joins that group's
    family: each of its loads is charged only the sectors of its columns the family has not
    read yet, and the entry carries ``axis`` (``"tid.y"``, ``"tid.z"``) and ``rows`` = k,
    which the launch reads back (core.kernel.sass.reuse: the rows within the block are near
    repeats, the others the neighbouring block's). Same assumption: the L2 holds the rows
    between the two reads (a 3-D stencil's plane a ``tid.z`` row away may not fit; not
    checked).

    A lane stride holding a kernel parameter (each lane walks its own row: ``A[r·n + k]``,
    ``r`` following ``tid.x``) is taken as :data:`PARAM_STRIDE_BYTES`, as the node's own
    charge is, so an unrolled row walk's ``k``, ``k + 1``, … ``k + 15`` group: sixteen
    requests of 32 sectors that touch two sectors per lane. Such a group's hits are L2
    traffic many times its DRAM bytes; where neither the L1 nor a known L2 bandwidth bounds
    them they are not credited at launch (core.kernel.sass.reuse)."""
    groups: dict = {}
    for i in sorted(addressed):
        a = addressed[i]
        if i not in loads or a.space != "global" or not a.affine:
            continue
        stride = PARAM_STRIDE_BYTES if a.param_stride else a.lane_stride
        if stride is None:
            continue
        rest = Poly({m: c for m, c in a.poly.terms.items() if m})
        key = (tuple(sorted(rest.terms.items())), stride, widths[i], scopes[i])
        groups.setdefault(key, []).append(i)
    out: dict = {}
    # per (stride, width, scope): [rest, base offset, covered, charged, first, {axis: rows}]
    families: dict = {}
    for (rest_terms, stride, width, scope), members in sorted(groups.items(),
                                                             key=lambda kv: kv[1][0]):
        rest = Poly(dict(rest_terms))
        # warp_counts' charge: a broadcast (lane stride 0) moves one sector
        own = (float(max(SECTOR_BYTES, width)) if stride == 0
               else float(WARP * max(min(abs(stride), SECTOR_BYTES), width)))
        same_kind = families.setdefault((stride, width, scope), [])
        match = next(((fam, shift) for fam in same_kind
                      if (shift := _row_shift(fam[0], rest)) is not None), None) if stride else None
        if match is None:
            base = min(addressed[i].offset for i in members)
            covered: set = set()
            charged = 0.0
            for n, i in enumerate(members):
                covered |= _sectors(addressed[i].offset - base, stride, width)
                # the group has moved the union's sectors so far; the first load is charged
                # its own (aligned) bytes, each later one what the union grew by beyond that
                added = own if n == 0 else max(0.0, len(covered) * SECTOR_BYTES - charged)
                charged += added
                if n and added < own:
                    out[i] = (max(0.0, min(1.0, 1.0 - added / own)), members[0])
            same_kind.append([rest, base, covered, charged, members[0], {}])
            continue
        # a row family: the columns the family's loads have read, in other threads' rows
        # (the nearest of its groups' rows: the threads that read them are the fewest rows away)
        family, (axis, k) = match
        base, covered, charged, first, seen = family[1:6]
        rows_read = seen.setdefault(axis, [0])
        rows = k - min(rows_read, key=lambda r: (abs(k - r), r))
        rows_read.append(k)
        for i in members:
            covered |= _sectors(addressed[i].offset - base, stride, width)
            added = max(0.0, len(covered) * SECTOR_BYTES - charged)
            charged += added
            if added < own:
                out[i] = (max(0.0, min(1.0, 1.0 - added / own)), first, axis, rows)
        family[3] = charged
    _covered_by_wider_runs(groups, addressed, out)
    return out


def _covered_by_wider_runs(groups: dict, addressed: dict, out: dict) -> None:
    """A guarded load's sectors that a load of the same array runs under fewer of its guards
    (a subset: it runs in every warp the guarded one runs in, and more) brings in the same
    warp: a stencil's halo load under ``threadIdx.x < R`` reads sectors the block's main load
    read, which runs in every warp. Each member of a guarded group is charged only the
    sectors neither those wider-running groups nor the earlier members of its own group
    touch (the reverse does not hold: the guarded load runs in only some warps, so it brings
    nothing for the others). Updates ``out`` (:func:`reuse_hits`) where the hit grows."""
    by_array: dict = {}
    for key, members in groups.items():
        rest_terms, stride, width, scope = key
        # the build's scope is (the loops, the guards); any other key is a scope of its own
        split = isinstance(scope, tuple) and len(scope) == 2 and isinstance(scope[1], tuple)
        loops, guards = scope if split else (scope, ())
        by_array.setdefault((rest_terms, stride, width, loops), []).append((set(guards), members))
    for (_, stride, width, _), runs in by_array.items():
        if len(runs) < 2 or stride == 0:
            continue
        own = float(WARP * max(min(abs(stride), SECTOR_BYTES), width))
        for guards, members in runs:
            wider = [m for g, m in runs if guards and g < guards]
            if not wider:
                continue
            firsts = sorted(w[0] for w in wider)
            everyone = [i for w in wider for i in w] + members
            base = min(addressed[i].offset for i in everyone)
            covered: set = set()
            for w in wider:
                for i in w:
                    covered |= _sectors(addressed[i].offset - base, stride, width)
            charged = float(len(covered) * SECTOR_BYTES)
            for i in members:
                covered |= _sectors(addressed[i].offset - base, stride, width)
                added = max(0.0, len(covered) * SECTOR_BYTES - charged)
                charged += added
                hit = max(0.0, min(1.0, 1.0 - added / own))
                if hit > (out[i][0] if i in out else 0.0):
                    out[i] = (hit, firsts[0])


#: the thread-index dimensions along which a stencil's rows lie (:func:`reuse_hits`)
ROW_AXES = ("tid.y", "tid.z")
_ROWS = re.compile(r" at ([+-]\d+) (tid\.[yz]) rows?:")


def rows_note(axis: str, rows: int) -> str:
    """What a row neighbour's ``address`` says after :data:`OVERLAPS_NOTE` and the id of
    the load it overlaps: the threads ``rows`` rows of ``axis`` away read its bytes
    (:func:`row_shift_of` reads it back)."""
    return f" at {rows:+d} {axis} row{'s' if abs(rows) != 1 else ''}"


def row_shift_of(address_text: str) -> tuple | None:
    """``(axis, rows)`` of a row neighbour's ``address`` text (:func:`rows_note`), else None."""
    m = _ROWS.search(address_text or "")
    return (m.group(2), int(m.group(1))) if m else None


def _row_shift(base: Poly, other: Poly) -> tuple | None:
    """``(axis, k)`` when ``other − base`` is ``k`` times ``base``'s coefficient of ``tid.y``
    (else ``tid.z``), a whole number k ≠ 0, the coefficient holding no other thread index,
    and the blocks tile the rows without gaps (``base`` holds ``ctaid.y·ntid.y`` times that
    coefficient: ``y = blockIdx.y·blockDim.y + threadIdx.y``, so the row ``k`` away is some
    thread's own); else None. A tiled transpose's rows 8, 16, 24 of a 32-row tile read by
    8-row blocks (``blockIdx.y·32 + threadIdx.y + 8``) are nobody's own row: not grouped."""
    diff = dict(other.terms)
    for m, c in base.terms.items():
        diff[m] = diff.get(m, 0) - c
    diff = {m: c for m, c in diff.items() if c}
    if not diff:
        return None
    for axis in ROW_AXES:
        coef = {tuple(s for s in m if s != axis): c for m, c in base.terms.items() if axis in m}
        if not coef or len(coef) != len(diff) or any(is_lane_varying(s) for m in coef for s in m):
            continue
        tiling = ("ctaid." + axis[-1], "ntid." + axis[-1])
        if any(base.terms.get(tuple(sorted(m + tiling))) != c for m, c in coef.items()):
            continue  # the blocks leave rows no thread owns: the row k away may be nobody's
        k = None
        for m, c in diff.items():
            cc = coef.get(m)
            if not cc or c % cc or (k is not None and c // cc != k):
                k = None
                break
            k = c // cc
        if k:
            return axis, k
    return None


def _sectors(start: int, stride: int, width: int) -> set:
    """The 32-byte sectors a warp touches, lane l at ``start + l·stride``."""
    if 0 < stride <= SECTOR_BYTES:  # contiguous: one range
        return set(range(start // SECTOR_BYTES,
                         (start + (WARP - 1) * stride + width - 1) // SECTOR_BYTES + 1))
    return {s for lane in range(WARP)
            for s in range((start + lane * stride) // SECTOR_BYTES,
                           (start + lane * stride + width - 1) // SECTOR_BYTES + 1)}
