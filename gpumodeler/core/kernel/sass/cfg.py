"""Control flow of one SASS function: successors, reachability, basic blocks and loops.

Rules (docs/sass-import.md §Control flow):

* A branch (``BRA``, ``JMP``) goes to its target; it falls through too when it is
  conditional (a guard predicate other than ``@PT``, or a predicate/uniform-register operand
  before the target, e.g. ``BRA.U !UP0, 0x...`` / ``BRA.DIV``). ``EXIT``/``RET``/``KILL``
  end the path unless guarded. Indirect branches (``BRX``/``JMX``) have unknown targets and
  are treated as falling through. ``CALL`` goes to its subroutine and falls through.
* Basic blocks start at the first instruction, at every branch or call target and after
  every instruction that can change the flow.
* A branch to an earlier (or its own) address is a loop's back edge; the loop is the
  program-order range from the target (header) to the branch (latch). Back edges to one
  header are one loop (their longest range); loops that partly overlap are merged into one,
  since the graph format requires loops to nest or be disjoint. Ranges nest as the source
  loops do (ptxas lays loops out contiguously).
* The end-of-function trap (``BRA`` to itself after the last ``EXIT``) and the ``NOP``
  padding after it are unreachable and are left out of the graph; nothing else is dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpumodeler.core.kernel.sass.listing import BRANCHES, CALLS

ENDS = {"EXIT", "RET", "KILL"}
INDIRECT = {"BRX", "JMX", "BRXU", "JMXU"}


def is_conditional(ins) -> bool:
    """True when the instruction may or may not transfer control."""
    if ins.guard and ins.guard not in ("@PT",):
        return True
    if ins.mnemonic in BRANCHES and len(ins.operands) > 1:
        return True  # BRA.U !UP0, target / BRA.DIV UR4, target
    return False


def successors(instructions, index_of) -> list[list[int]]:
    """Successor indices of each instruction (program order indices)."""
    n = len(instructions)
    out = []
    for i, ins in enumerate(instructions):
        nxt = [i + 1] if i + 1 < n else []
        m = ins.mnemonic
        if m in ENDS:
            out.append(nxt if is_conditional(ins) else [])
        elif m in BRANCHES and m not in INDIRECT and ins.target is not None:
            t = index_of.get(ins.target)
            targets = [t] if t is not None else []
            out.append(targets + ([x for x in nxt if x not in targets] if is_conditional(ins) else []))
        elif m in CALLS and ins.target is not None and ins.target in index_of:
            out.append([index_of[ins.target]] + nxt)
        else:
            out.append(nxt)
    return out


def reachable(succ) -> list[bool]:
    seen = [False] * len(succ)
    stack = [0] if succ else []
    while stack:
        i = stack.pop()
        if seen[i]:
            continue
        seen[i] = True
        stack.extend(j for j in succ[i] if not seen[j])
    return seen


def trailing_padding(instructions, succ) -> int:
    """How many instructions at the end are unreachable (the trap branch and NOP padding)."""
    seen = reachable(succ)
    k = len(instructions)
    while k > 0 and not seen[k - 1]:
        k -= 1
    return len(instructions) - k


def basic_blocks(succ, instructions=()) -> list[tuple[int, int]]:
    """(first, last) index of each basic block, in program order (a guarded ``EXIT`` in
    ``instructions`` ends a block too: the warp may leave there)."""
    n = len(succ)
    leaders = {0} if n else set()
    exits = {i for i, ins in enumerate(instructions) if ins.mnemonic in ENDS}
    for i, s in enumerate(succ):
        if s != [i + 1] or i in exits:
            if i + 1 < n:
                leaders.add(i + 1)
            leaders.update(s)
    starts = sorted(leaders)
    return [(a, (starts[k + 1] - 1) if k + 1 < len(starts) else n - 1)
            for k, a in enumerate(starts)]


@dataclass(frozen=True)
class LoopRange:
    header: int  # index of the first instruction
    latch: int  # index of the last instruction (the back-edge branch)
    back_edges: tuple  # indices of the branches going back to the header


def find_loops(instructions, index_of) -> list[LoopRange]:
    """Loops from backward branches, merged so that they nest or are disjoint; outermost
    first in program order."""
    ranges: dict[int, list] = {}
    for i, ins in enumerate(instructions):
        if ins.mnemonic in BRANCHES and ins.target is not None:
            t = index_of.get(ins.target)
            if t is not None and t <= i:
                ranges.setdefault(t, []).append(i)
    loops = [[h, max(bs), sorted(bs)] for h, bs in ranges.items()]
    changed = True
    while changed:
        changed = False
        for a in loops:
            for b in loops:
                if a is b:
                    continue
                overlap = a[0] <= b[1] and b[0] <= a[1]
                nested = (a[0] <= b[0] and b[1] <= a[1]) or (b[0] <= a[0] and a[1] <= b[1])
                same = a[0] == b[0] and a[1] == b[1]
                if overlap and (not nested or same):
                    a[0], a[1], a[2] = min(a[0], b[0]), max(a[1], b[1]), sorted(a[2] + b[2])
                    loops.remove(b)
                    changed = True
                    break
            if changed:
                break
    loops.sort(key=lambda r: (r[0], -r[1]))
    return [LoopRange(h, l, tuple(bs)) for h, l, bs in loops]
