"""Unrolled loops in a SASS listing: the loops of one source loop (nvcc's unrolled body and
remainder, and ptxas' second unrolling of that body) share one variable, the source loop's
trip count, and each loop's name says what its variable counts (docs/sass-import.md,
"Unrolled loop and remainder"). :func:`iteration_expressions` works out each loop's
iterations from that variable for the graph builder (:mod:`.build`).
"""
from __future__ import annotations

from bisect import bisect_left
from collections import Counter
import math

from gpumodeler.core.kernel.opcodes import pipe_of
from gpumodeler.core.kernel.sass.listing import BRANCHES

#: Pipes that do not count when matching an unrolled loop with its remainder: loop control,
#: address arithmetic and constant (parameter) loads differ between the two.
_BOOKKEEPING_PIPES = {"int32", "branch", "barrier", "exit", "virtual"}


def iteration_expressions(ins_list, ranges, loop_ids, infos) -> tuple[list[str], list[str], list,
                                                                       dict]:
    """The iterations and a note for each loop: ``loopk`` and ``""`` unless the listing
    shows how the loop was unrolled; the peeled copies; and each loop variable's loops
    (``{variable: [(loop index, copies), …]}``, most copies first: a loop of its own is one
    loop of one copy).

    Unrolling by U copies the source body U times into one loop and leaves the N mod U
    trips to a remainder loop (nvcc, and ptxas again on nvcc's unrolled loop): sibling loops
    whose non-bookkeeping instruction mixes are in integer ratios form a group. Its loops
    are sorted by copies c1 > c2 > ... > cm (each dividing the one before; the smallest is
    one source iteration, cm = 1) and share one variable v, the source loop's trip count:
    the loop of c1 copies runs ``floor(v / c1)`` times, the loop of ci copies
    ``floor(v / ci) - (c(i-1)/ci) * floor(v / c(i-1))`` and the last
    ``v - c(m-1) * floor(v / c(m-1))`` (v in mixed radix: the copies they run add up to v).
    ptxas peels p of a loop's bodies as straight code before it (between it and the loop of
    q = c(i-1)/ci times its copies, (q-1)/2 < p < q, e.g. 2 of 4): of the R trips left for
    that loop the peeled copies run ``floor(R / p)`` times (the importer gives their
    trip-count check that fraction) and the loop ``R - p * floor(R / p)``. One body
    peeled before a remainder loop of ``q > 2`` (nvcc's remainder rotated: its first trip
    run under the check that any trip is left, then the loop) leaves the loop
    ``R - min(1, R)`` trips; the copy keeps its own guard.
    Where the smallest loop's own body repeats every instruction a multiple of g >= 2 times,
    or an innermost loop has no such sibling and its body does, the source trip count cannot
    be known from the listing (nvcc may leave the remainder as straight code): the note says
    what the variable counts. A body with an instruction that occurs once is one source
    iteration (unrolling by U multiplies every count by U)."""
    exprs = list(loop_ids)
    notes = [""] * len(ranges)
    parent = []
    for k, r in enumerate(ranges):
        enclosing = [j for j, o in enumerate(ranges) if j != k and o.header <= r.header
                     and r.latch <= o.latch]
        parent.append(max(enclosing, key=lambda j: ranges[j].header) if enclosing else None)

    # what each instruction adds to its loops' mix (None: bookkeeping, not counted), once
    counted = [ins.opcode if info is not None and pipe_of(info) not in _BOOKKEEPING_PIPES
               and info.space != "constant" else None
               for ins, info in zip(ins_list, infos)] if ranges else []

    def mix(r):
        c = Counter(counted[r.header:r.latch + 1])
        c.pop(None, None)
        return c

    mixes = [mix(r) for r in ranges]
    repeats = [math.gcd(*m.values()) if m else 0 for m in mixes]
    headers = sorted(r.header for r in ranges)
    at = {ins.address: i for i, ins in enumerate(ins_list)}
    peeled: list = []
    groups: dict = {}

    def _peeled(before, loop, c_before, c, trips):
        """ptxas' copies of ``loop``'s body peeled as straight code between ``before`` and
        ``loop`` (p bodies, run when the trips left for ``loop``, R, are at least p; then
        ``loop`` runs R - p*floor(R/p)): (first, last index of the straight code between
        them, how often the copies run, loop, its iterations), or None."""
        lo, hi = ranges[before].latch + 1, ranges[loop].header
        # straight code: no loop starts between them (the loops around both, such as the
        # phase loop of a tiled kernel, start before)
        if lo >= hi or bisect_left(headers, lo) != bisect_left(headers, hi):
            return None
        m = Counter(counted[lo:hi])
        m.pop(None, None)
        unit = mixes[loop]
        if not m or set(m) != set(unit) or len({m[key] / unit[key] for key in unit}) != 1:
            return None
        p = sum(m.values()) / sum(unit.values())
        q = c_before // c
        if p == 1 and q > 2:
            # the remainder loop rotated: its first trip peeled before it, under the check
            # that any trip is left (its own guard), the loop the rest
            return lo, hi - 1, None, loop, f"{trips} - min(1, {trips})"
        if not float(p).is_integer() or not (q - 1) / 2 < p < q:
            return None  # runs more than once, or never: not the structure handled here
        p = int(p)
        runs = f"floor(({trips}) / {p})"
        return lo, hi - 1, runs, loop, f"{trips} - {p} * {runs}"
    def _epilogue(lo, unit, smallest):
        """nvcc's unrolled loop whose remainder loop comes first (``for (j = -r; j <= r;
        ++j)``): the copies of the body it leaves as straight code after the unrolled loop
        ending at ``lo`` - 1, each run once or not (blocks of half the copies before them:
        16, then 8, then 4), as ``[(first, last index, copies)]``; [] for none."""
        end = headers[bisect_left(headers, lo)] if bisect_left(headers, lo) < len(headers) \
            else len(ins_list)
        cuts = {lo, end}
        for j in range(lo, end):
            if ins_list[j].mnemonic in BRANCHES:
                cuts.add(j + 1)
                target = at.get(ins_list[j].target)
                if target is not None and lo < target < end:
                    cuts.add(target)
        found: list = []
        edges = sorted(cuts)
        for a, b in zip(edges, edges[1:]):
            m = Counter(counted[a:b])
            m.pop(None, None)
            if not m:
                continue  # the checks between the blocks
            if set(m) != set(unit) or len({m[key] / unit[key] for key in unit}) != 1:
                break
            p = sum(m.values()) / sum(unit.values())
            previous = found[-1][2] if found else smallest
            if not float(p).is_integer() or previous != 2 * p:
                break
            found.append((a, b - 1, int(p)))
        return found if found and found[-1][2] >= 2 else []

    grouped: set = set()
    for a in range(len(ranges)):
        if a in grouped or not mixes[a]:
            continue
        # the siblings whose mix is an integer multiple or divisor of a's
        members = [b for b in range(len(ranges)) if b not in grouped and parent[b] == parent[a]
                   and set(mixes[b]) == set(mixes[a])
                   and len({mixes[b][key] / mixes[a][key] for key in mixes[a]}) == 1]
        unit = min(members, key=lambda b: (sum(mixes[b].values()), b))
        copies: dict[int, int] = {}
        for b in members:
            ratio = sum(mixes[b].values()) / sum(mixes[unit].values())
            if float(ratio).is_integer() and int(ratio) not in copies.values():
                copies[b] = int(ratio)
        chain: list = []
        for b in sorted(copies, key=lambda b: -copies[b]):  # most copies first
            if not chain or copies[chain[-1]] % copies[b] == 0:
                chain.append(b)
        if len(chain) < 2:
            continue
        v = loop_ids[min(chain)]
        counts = [copies[b] for b in chain]
        for pos, b in enumerate(chain):
            c = counts[pos]
            if pos == 0:
                exprs[b] = f"floor({v} / {c})"
            elif c == 1:
                exprs[b] = f"{v} - {counts[pos - 1]} * floor({v} / {counts[pos - 1]})"
            else:
                exprs[b] = (f"floor({v} / {c}) - {counts[pos - 1] // c} * "
                            f"floor({v} / {counts[pos - 1]})")
            if pos:
                found = _peeled(chain[pos - 1], b, counts[pos - 1], c, exprs[b])
                if found and found[2] is None:  # a rotated loop: the rest of its trips
                    exprs[b] = found[4]
                elif found:
                    peeled.append(found)
            notes[b] = (f"{c} source iteration{'s' if c > 1 else ''} a trip "
                        f"({v} = the source loop's trip count)")
        if ranges[chain[-1]].header < ranges[chain[0]].header:
            epilogue = _epilogue(max(ranges[b].latch for b in chain[:-1]) + 1, mixes[unit],
                                 counts[-2])
            if epilogue:  # the remainder loop first, the last copies as straight code
                last = counts[-2]
                for lo, hi, p in epilogue:
                    peeled.append((lo, hi, f"floor({v} / {p}) - 2 * floor({v} / {last})",
                                   chain[-1], f"{v} - {p} * floor({v} / {p})"))
                    last = p
                exprs[chain[-1]] = f"{v} - {last} * floor({v} / {last})"
        g = repeats[unit]
        if g >= 2:
            for b in chain:
                notes[b] += (f"; if the loop at 0x{ins_list[ranges[unit].header].address:04x} "
                             f"is itself unrolled (every count a multiple of {g}), {v} counts "
                             f"its trips")
        grouped.update(chain)
        groups[v] = [(b, copies[b]) for b in chain]
    # an enclosing loop unrolled would repeat its inner loops (siblings, grouped above), so
    # only innermost loops can hide an unrolling in their bodies
    outer_loops = {p for p in parent if p is not None}
    for k in range(len(ranges)):
        if k not in grouped and k not in outer_loops and repeats[k] >= 2:
            notes[k] = (f"{loop_ids[k]} counts trips as compiled; the body may be the source "
                        f"loop unrolled {repeats[k]}x (every count a multiple of {repeats[k]}, "
                        f"no remainder loop shows it)")
    for k in range(len(ranges)):
        if k not in grouped:
            groups[loop_ids[k]] = [(k, 1)]
    return exprs, notes, peeled, groups


__all__ = ["iteration_expressions"]
