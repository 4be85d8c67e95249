"""Trip counts the listing decides: a loop that runs ``blockDim.x`` times (a tiled matrix
product whose tile width is the block's, ``for (k = 0; k < blockDim.x; ++k)``), or a fixed
number of times the compiler did not unroll.

An imported loop's iteration count is a variable (``loop1``, default 1) because most trip
counts are run-time values: a kernel parameter, loaded data. Where the count comes from the
block's dimensions alone, a launch decides it, as it decides the share of a thread test
(:mod:`.thread_tests`); where it comes from numbers alone, the listing does. The rules:

* **The counter.** A loop's back branch (``@P0 BRA`` to its header, ``@!P0``, Blackwell's
  ``BRA.U UP0``) is taken on a compare (``ISETP``, ``UISETP``) in the loop of a register the
  loop changes once per trip by a constant (``IADD3 R, R, -0x10, RZ``; ``UIADD3``,
  ``VIADD``, ``IADD``, ``IADD32I``: not predicated, not in an inner loop, never skipped by a
  branch) or halves (``s >>= 1``, in place or through a copy of the shifted value), or
  recomputes each trip from such a counter and values it does not change
  (``R17 = R13 + R10``; the register compared may hold an address earlier in the trip:
  its last write before the compare), or steps through a copy (``IADD3 R10, R6, 0x2`` …
  ``MOV R6, R10``: a loop unrolled by 2), against a value the loop does not change; the loop has no other
  way out (a ``break``, an ``EXIT``: the count would be an upper bound). A guarded
  ``CALL.REL.NOINC`` past an unconditional back branch is such a branch, taken on the
  guard's other side (nvcc's way out of some sm_80/sm_86 loops). The counter's
  value on entry is its last write before the loop's header (program order, as the guards
  read values: :mod:`.guards`).
* **Values followed** (:mod:`.block_values`). The entry value and the bound are followed back through their
  register writes (at most :data:`MAX_DEPTH` steps) to numbers and the block's dimensions in
  the constant bank (``c[0x0][0x0]`` on Volta to Hopper: the offsets the address analysis
  uses, :mod:`.addresses`), through ``MOV``, ``MOV32I``, ``LDC``/``ULDC`` (``.64``: the word
  each register of the pair holds), ``CS2R … SRZ``,
  Ampere's ``HFMA2.MMA`` of a constant, ``IMAD`` (not ``.HI``/``.WIDE``/``.X``),
  ``IADD3``, ``IADD``, ``IADD32I``, ``VIADD``, ``LEA``, ``LEA.HI``, ``ISCADD``, ``SHF``/``SHL``/``SHR``
  by a constant, ``LOP3.LUT`` (its truth table), ``LOP``/``LOP32I``, ``IABS``, ``IMNMX``, ``VIMNMX``,
  ``SEL`` on a plain ``ISETP`` and Maxwell's ``XMAD``, in 32-bit arithmetic. A write that is predicated, in a loop the reader is not
  in, or in a loop around the reader that writes the register again (a value carried from
  trip to trip) stops it, and so does one a forward branch may jump over on its way to the
  reader (an ``if``/``else`` that writes it on one side) but for one a single conditional
  ``@P BRA`` jumps over (a choice on ``P``'s compare); so does any other value (a
  parameter, the thread or block index, loaded data).
* **Trips of one loop** (a do-while, as compiled: at least one trip): with ``c1`` the
  counter's value at the compare on the first trip and ``s`` its step, the loop goes on
  while ``c1 + (j − 1)·s`` and the bound compare as the branch needs; the first trip ``j``
  on which they do not is the count (``<``, ``<=``, ``>``, ``>=`` with a step towards the
  bound, ``!=`` reaching it exactly; an unsigned compare only where every value is below
  2^31). A counter that would never meet its bound is a loop the code does not enter with
  that value (the compiler checks before it): no trips. Anything else is not derived.
* **An unrolled loop** (the loops of one source loop: :func:`.unrolling.iteration_expressions`;
  its variable ``v`` counts the smallest loop's bodies): every loop of the group counts the
  same register down by its copies times one step ``d``, and the smallest stops at zero
  (``!= 0``, ``> 0``); then ``v = entry / d``, where the entry value is a multiple of ``d``
  for every block (nvcc's ``n − n % 4``). Or two loops, one of ``c`` copies with a count
  of its own and a remainder loop counting a register down to zero by ``d``, which holds
  a remainder below ``c`` (times ``d``) where the group starts: ``v = c · trips + that / d``.
  Or loops counting one register down as above and a last, remainder loop of one copy
  counting another register down to zero by the same ``d`` (nvcc's ``n − n % 4`` by 16 and
  by 4, then ``n % 4``): ``v = (entry + remainder) / d``.
* **The count as a formula** (:mod:`.count_forms`): worked out at every block (and
  parameter) value the count reads and written as the first form that fits them all
  (``floor((b + k) / m) + c``, ``ceil(log2(b)) + c``, …); a count that reads none is a
  number.

The import gives such a loop's variable the formula (``KernelGraph.block_trips``: each launch
sets the variable from its block unless the user sets it,
:func:`gpumodeler.core.kernel.graph_items.launch_guard_values`) or the number (the
variable's default). What is left out: counts of the thread index (a grid-stride loop:
each thread its own count), of a kernel parameter or of data, and loops whose exit is not
one counter's compare (``break``, two exits).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.kernel.sass.block_values import (
    REG, REG_MODS, U32, Follower, Node, compare_truth, const, evaluate, is_predicate, op_node,
    signed)
from gpumodeler.core.kernel.sass.count_forms import TripCount, describe
from gpumodeler.core.kernel.sass.listing import BRANCHES
from gpumodeler.core.kernel.sass.thread_tests import MIRRORED, NEGATED, SETP_OPS

_STEP_ADDS = frozenset({"IADD3", "VIADD", "IADD", "IADD32I"})


@dataclass(frozen=True)
class _Counter:
    register: str
    step: int  # added once per trip
    first: Node | None  # its value at the compare on the first trip
    entry: Node | None  # its value on entering the loop (None: not followed)
    bound: Node
    op: str  # the loop goes on while ``counter op bound``
    unsigned: bool
    #: a counter halved each trip (``s >>= 1``: a reduction tree): the bits it shifts right
    #: by (``step`` is then 0), and whether the shift keeps the sign
    shift: int = 0
    arithmetic: bool = False
    #: the counter is shifted left instead (``s *= 2``: a scan's or an interleaved
    #: reduction's stride)
    left: bool = False


def counter(f: Follower, r, entry_needed: bool = True) -> _Counter | None:
    """The counter of loop range ``r`` (the module rules), or None; ``entry_needed``
    False: its entry value may be one the module does not follow (a remainder loop's).
    Worked out once per loop and follower."""
    key = (r, entry_needed)
    if key not in f.counters:
        f.counters[key] = _find_counter(f, r, entry_needed)
    return f.counters[key]


def latch_condition(f: Follower, r) -> tuple[str, bool] | None:
    """``(predicate, goes on when it is true)`` of loop ``r``'s one back branch, where the
    loop has no other way out (no ``break``, no ``EXIT`` in it); else None. Worked out once
    per loop (``f.latches``)."""
    key = (r.header, r.latch)
    if key not in f.latches:
        f.latches[key] = _latch_condition(f, r)
    return f.latches[key]


def _latch_condition(f: Follower, r) -> tuple[str, bool] | None:
    ins = f.ins
    t = r.latch
    latch = ins[t]
    condition = latch.guard or (latch.operands[0].strip() if latch.operands
                                and is_predicate(latch.operands[0]) else "")
    if not condition and t > r.header and t + 1 < len(ins) and _leaves_by_call(ins[t - 1],
                                                                            ins[t + 1]):
        # @P0 CALL.REL.NOINC <after the loop>; BRA <header>: the loop goes on while !P0
        guard = ins[t - 1].guard or ""
        condition = guard[:1] + ("" if guard.startswith("@!") else "!") + guard.lstrip("@!")
    if len(r.back_edges) != 1 or latch.mnemonic not in BRANCHES or \
            condition.lstrip("@!") in ("", "PT", "UPT"):
        return None
    for j in range(r.header, t):  # one way out: no break, no exit in the loop
        if ins[j].mnemonic in ("EXIT", "RET", "BRK") or (
                ins[j].mnemonic in BRANCHES and ins[j].target is not None
                and not ins[r.header].address <= ins[j].target <= latch.address):
            return None
    return condition.lstrip("@!"), not condition.lstrip("@").startswith("!")


def _leaves_by_call(ins, after) -> bool:
    """Whether ``ins`` is a guarded ``CALL.REL.NOINC`` to the instruction ``after`` the back
    branch: nvcc's way out of a loop whose back branch is unconditional (sm_80/sm_86)."""
    return ins.mnemonic == "CALL" and {"REL", "NOINC"} <= set(ins.modifiers) and \
        ins.guard not in (None, "@PT", "@!PT") and ins.target == after.address


def latch_compare(f: Follower, r, mnemonics=("ISETP", "UISETP")) -> tuple | None:
    """``(compare, its predicate, goes on when it is true)`` of loop ``r``
    (:func:`latch_condition`): the compare is the predicate's last write before the back
    branch, in the loop, not predicated, one of ``mnemonics``; else None."""
    found = latch_condition(f, r)
    if found is None:
        return None
    pred, goes_on_when = found
    s = f.last_write(pred, r.latch)
    if s is None or s < r.header or f.ins[s].mnemonic not in mnemonics or f.ins[s].guard:
        return None
    return s, pred, goes_on_when


def changed_in_loop(f: Follower, r, ops: list, op: str) -> tuple | None:
    """``(register, its position 0 or 1, the compare read with it on the left)`` of the
    compare ``a op b`` (``ops[2:4]``: its two values) where exactly one of them is a register
    loop ``r`` writes; else None."""
    regs = [REG_MODS.sub("", o) for o in ops[2:4]]
    inside = [f.written_between(reg, r.header, r.latch)
              if REG.match(reg) and reg not in ("RZ", "URZ") else False for reg in regs]
    if inside.count(True) != 1:
        return None
    pos = inside.index(True)
    return regs[pos], pos, MIRRORED[op] if pos == 1 else op


def _find_counter(f: Follower, r, entry_needed: bool) -> _Counter | None:
    ins = f.ins
    t = r.latch
    found = latch_compare(f, r)
    if found is None:
        return None
    s, pred, goes_on_when = found
    ops = [o.strip() for o in ins[s].operands]
    if len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT", "UPT", "!UPT")) or \
            ops[0] != pred:
        return None
    cmp = next((SETP_OPS[m] for m in ins[s].modifiers if m in SETP_OPS), None)
    if cmp is None:
        return None
    found_in = changed_in_loop(f, r, ops, cmp if goes_on_when else NEGATED[cmp])
    if found_in is None:
        return None
    reg, pos, op = found_in
    u = once_per_trip(f, r, reg)
    if u is None:
        # the register compared is also a scratch register of the trip (nvcc reuses it for
        # an address): the value compared is its last write before the compare, a value
        # the loop recomputes each trip (below)
        u = _recomputed_before(f, r, reg, s)
        if u is None:
            return None
    bound = f.operand(ops[3 - pos], s, 0)
    if bound is None:
        return None
    unsigned = "U32" in ins[s].modifiers
    halved = _halving(f, r, reg, u)
    if halved is not None:  # s >>= k
        entry = f.register(reg, r.header, 0, entering=r)
        if entry is None:
            return None
        k, arithmetic = halved
        first = op_node("sar" if arithmetic else "shr", entry, const(k)) if u < s else entry
        return _Counter(reg, 0, first, entry, bound, op, unsigned, k, arithmetic)
    doubled = _doubling(f, r, reg, u, s)
    if doubled is not None:  # s <<= k
        k, first, entry = doubled
        return _Counter(reg, 0, first, entry, bound, op, unsigned, k, False, True)
    step = _step(ins[u], reg, f.n_dest(u))
    if step is None:
        step = _step_through_copy(f, r, reg, u)
    if step is not None:  # the counter itself: IADD3 R, R, step
        start = f.register(reg, r.header, 0, entering=r)
        if start is None and entry_needed:
            return None
        added = None if start is None else op_node("add", start, const(step)) if u < s else start
        return _Counter(reg, step, added, start, bound, op, unsigned)
    # a value the loop recomputes from a counter and values it does not change
    # (R17 = R13 + R10 with R10 += 4: nvcc's unrolled loop against n - n % 4)
    if u > s or ins[u].mnemonic not in ("IADD3", "IADD", "IMAD", "UIADD3", "MOV") or \
            "X" in ins[u].modifiers:
        return None
    srcs = [o.strip() for o in ins[u].operands[f.n_dest(u):] if not is_predicate(o)]
    if ins[u].mnemonic == "IMAD":
        if len(srcs) == 3 and srcs[0] == "RZ" and srcs[1] == "RZ" and \
                "HI" not in ins[u].modifiers and "WIDE" not in ins[u].modifiers:
            srcs = [srcs[2]]  # IMAD.MOV.U32 / IMAD.U32 R, RZ, RZ, x: a copy of x
        elif "IADD" not in ins[u].modifiers or len(srcs) != 3 or srcs[1] not in ("0x1", "1"):
            return None
        else:
            srcs = [srcs[0], srcs[2]]
    elif ins[u].mnemonic == "MOV" and len(srcs) != 1:
        return None
    counters = [o for o in srcs if REG.match(REG_MODS.sub("", o.lstrip("-")))
                and f.written_between(REG_MODS.sub("", o.lstrip("-")), r.header, t)]
    if len(counters) != 1 or counters[0].startswith("-"):
        return None
    inner = REG_MODS.sub("", counters[0])
    v = once_per_trip(f, r, inner)
    inner_step = None if v is None else _step(ins[v], inner, f.n_dest(v))
    if inner_step is None:
        return None
    others = [f.operand(o, u, 0) for o in srcs if o != counters[0]]
    inner_entry = f.register(inner, r.header, 0, entering=r)
    if inner_entry is None or any(o is None for o in others):
        return None
    assert v is not None
    first = op_node("add", inner_entry, const(inner_step if v < u else 0), *others)
    return _Counter(reg, inner_step, first, None, bound, op, unsigned)


def once_per_trip(f: Follower, r, reg: str) -> int | None:
    """The one instruction of loop ``r`` that writes ``reg``, where it runs once a trip (not
    predicated, not in an inner loop, not skipped by a branch); else None."""
    writes = f.writes_between(reg, r.header, r.latch)
    return writes[0] if len(writes) == 1 and runs_every_trip(f, r, writes[0]) else None


def runs_every_trip(f: Follower, r, u: int) -> bool:
    """Whether instruction ``u`` of loop ``r`` runs once on every trip: not predicated, not
    skipped by a branch in the loop, not in an inner loop."""
    if f.ins[u].guard or skipped_in_loop(f, r, u):
        return False
    return not any(o is not r and r.header <= o.header and o.latch <= r.latch
                   for o in f.loops_of(u))


def _recomputed_before(f: Follower, r, reg: str, s: int) -> int | None:
    """The last write of ``reg`` before compare ``s`` in loop ``r``, where it runs once a
    trip (not predicated, not in an inner loop, not skipped by a branch) and does not read
    ``reg`` (a fresh value each trip, not a step); else None."""
    u = f.last_write(reg, s)
    if u is None or u < r.header or not runs_every_trip(f, r, u):
        return None
    if any(REG_MODS.sub("", o.strip().lstrip("-")) == reg
           for o in f.ins[u].operands[f.n_dest(u):]):
        return None
    return u


def _step_through_copy(f: Follower, r, reg: str, u: int) -> int | None:
    """The step of loop ``r``'s counter ``reg`` whose one write ``u`` copies a register the
    loop sets once a trip, before ``u``, to ``reg`` plus a constant (``IADD3 R10, R6, 0x2``
    … ``IMAD.MOV.U32 R6, RZ, RZ, R10``: a loop nvcc unrolled by 2); else None."""
    copied = _copied(f.ins[u], reg)
    if copied is None or not REG.match(copied) or copied in ("RZ", "URZ"):
        return None
    v = once_per_trip(f, r, copied)
    if v is None or v > u:
        return None
    return _step(f.ins[v], reg, f.n_dest(v), dest=copied)


def _step(ins, reg: str, nd: int, dest: str | None = None) -> int | None:
    """The constant ``ins`` adds to ``reg`` (``IADD3 R, R, -0x10, RZ``), written to ``reg``
    or to ``dest``, or None."""
    mnem = ins.mnemonic[1:] if ins.mnemonic in ("UIADD3", "UVIADD") else ins.mnemonic
    if mnem not in _STEP_ADDS or "X" in ins.modifiers or nd < 1 or any(
            o.strip() not in ("PT", "UPT") for o in ins.operands[1:nd]):
        return None
    if REG_MODS.sub("", ins.operands[0].strip()) != (dest or reg):
        return None
    srcs = [o.strip() for o in ins.operands[nd:]]
    if any(is_predicate(o) for o in srcs):
        return None
    others = [o for o in srcs if REG_MODS.sub("", o) != reg and o not in ("RZ", "URZ")]
    if sum(REG_MODS.sub("", o) == reg for o in srcs) != 1 or len(others) != 1:
        return None
    try:
        k = int(others[0], 0)
    except ValueError:
        return None
    k &= U32
    return k - 2 ** 32 if k >= 2 ** 31 else k


def _halving(f: Follower, r, reg: str, u: int) -> tuple | None:
    """``(k, arithmetic)`` where loop ``r``'s one write ``u`` of ``reg`` sets it to itself
    shifted right by ``k``: in place, or a copy (``MOV R4, R5``) of a register the loop
    shifted from it once before (``SHF.R.U32.HI R5, RZ, 0x1, R4``); else None."""
    direct = _shift_step(f.ins[u], reg, reg, f.n_dest(u))
    if direct is not None:
        return direct
    copied = _copied(f.ins[u], reg)
    if copied is None or not REG.match(copied):
        return None
    v = once_per_trip(f, r, copied)
    if v is None or v > u:
        return None
    return _shift_step(f.ins[v], copied, reg, f.n_dest(v))


def _doubling(f: Follower, r, reg: str, u: int, s: int) -> tuple | None:
    """``(k, value at the compare on the first trip, value on entering)`` (the last None
    where the register is set from a copy) where loop ``r``'s one write ``u``
    (before the compare ``s``) sets ``reg`` to a value shifted left by ``k`` each trip: to
    itself shifted (``SHF.L.U32 R2, R2, 0x1, RZ``; ``IMAD.SHL.U32 R2, R2, 0x2, RZ``;
    Maxwell's ``SHL`` and ``IADD R2, R2, R2``), or to a register shifted that the loop sets to ``reg`` once a trip
    (``SHF.L.U32 R6, R0, 0x1, RZ`` … ``MOV R0, R6``); uniform registers alike
    (``USHF.L.U32``); else None."""
    if u > s:
        return None
    found = _left_shift(f.ins[u], reg, f.n_dest(u))
    if found is None:
        return None
    source, k = found
    if source == reg:
        entry = f.register(reg, r.header, 0, entering=r)
        return None if entry is None else (k, op_node("shl", entry, const(k)), entry)
    else:
        # the source's last write in the trip copies the register: after the shift, it
        # carries this trip's value to the next (writes between them are scratch, as nvcc
        # reuses the register for a load); the one write, before the shift, the value the
        # register had on entering
        writes = f.writes_between(source, r.header, r.latch)
        if not writes or (writes[0] < u and len(writes) > 1):
            return None
        v = writes[-1]
        if not runs_every_trip(f, r, v) or _copied(f.ins[v], source) != reg:
            return None
        entry = f.register(source if v > u else reg, r.header, 0, entering=r)
    return None if entry is None else (k, op_node("shl", entry, const(k)), None)


def _left_shift(ins, dest: str, nd: int) -> tuple | None:
    """``(source register, k)`` where ``ins`` writes ``dest`` with a register shifted left
    by a constant ``k`` (1 to 31), else None."""
    found = _writes_one(ins, dest, nd)
    if found is None:
        return None
    ops, mods = found
    mnem = ins.mnemonic[1:] if ins.mnemonic in ("USHF", "UIMAD") else ins.mnemonic
    if mnem == "SHF" and "L" in mods and "U32" in mods and "HI" not in mods and \
            len(ops) == 4 and ops[3] in ("RZ", "URZ"):
        source, amount = ops[1], ops[2]
    elif mnem == "IMAD" and "SHL" in mods and len(ops) == 4 and ops[3] in ("RZ", "URZ"):
        try:
            factor = int(ops[2], 0)
        except ValueError:
            return None
        if factor < 2 or factor & (factor - 1):
            return None
        source, amount = ops[1], str(factor.bit_length() - 1)
    elif mnem == "SHL" and len(ops) == 3:
        source, amount = ops[1], ops[2]
    elif mnem in ("IADD", "IADD3") and "X" not in mods and \
            len(terms := [o for o in ops[1:] if o not in ("RZ", "URZ", "PT", "!PT")]) == 2 \
            and terms[0] == terms[1]:  # Maxwell's IADD R2, R2, R2: twice itself
        source, amount = terms[0], "1"
    else:
        return None
    k = _shift_amount(amount)
    return (source, k) if k and REG.match(source) and source not in ("RZ", "URZ") else None


def _writes_one(ins, dest: str, nd: int) -> tuple | None:
    """``(operands without modifiers, modifiers)`` where ``ins`` writes ``dest`` alone."""
    ops = [REG_MODS.sub("", o.strip()) for o in ins.operands]
    if nd != 1 or not ops or ops[0] != dest:
        return None
    return ops, set(ins.modifiers)


def _shift_amount(text: str) -> int | None:
    """A shift's constant amount, 1 to 31, else None."""
    try:
        k = int(text, 0)
    except ValueError:
        return None
    return k if 0 < k < 32 else None


def _copied(ins, dest: str) -> str | None:
    """The register ``ins`` copies into ``dest`` (``MOV R0, R6``; ``IMAD.MOV.U32 R0, RZ, RZ,
    R6``; ``UMOV UR5, UR6``), else None."""
    ops = [REG_MODS.sub("", o.strip()) for o in ins.operands]
    if not ops or ops[0] != dest or ins.guard:
        return None
    if ins.mnemonic in ("MOV", "UMOV") and len(ops) == 2:
        return ops[1]
    if ins.mnemonic == "IMAD" and "MOV" in ins.modifiers and len(ops) == 4 and \
            ops[1:3] == ["RZ", "RZ"]:
        return ops[3]
    return None


def _shift_step(ins, dest: str, reg: str, nd: int) -> tuple | None:
    """``(k, arithmetic)`` where ``ins`` writes ``dest`` with ``reg`` shifted right by a
    constant ``k`` (``SHF.R.U32.HI R, RZ, 0x1, R``; ``SHF.R.S32.HI``; Maxwell's ``SHR``),
    else None."""
    found = _writes_one(ins, dest, nd)
    if found is None:
        return None
    ops, mods = found
    if ins.mnemonic == "SHF" and {"R", "HI"} <= mods and mods & {"U32", "S32"} and \
            len(ops) == 4 and ops[1] == "RZ" and ops[3] == reg:
        amount, arithmetic = ops[2], "S32" in mods
    elif ins.mnemonic == "SHR" and len(ops) == 3 and ops[1] == reg:
        amount, arithmetic = ops[2], "U32" not in mods
    else:
        return None
    k = _shift_amount(amount)
    return None if k is None else (k, arithmetic)


def skipped_in_loop(f: Follower, r, u: int) -> bool:
    """Whether a branch in the loop may jump over instruction ``u`` (inside the loop)."""
    for j in range(r.header, u):
        ins = f.ins[j]
        if ins.mnemonic in BRANCHES and ins.target is not None and \
                f.ins[u].address < ins.target <= f.ins[r.latch].address:
            return True
    return False


def _trips(c: _Counter, dims: tuple):
    """The trips of a do-while loop with counter ``c`` for the block dimensions ``dims``
    (an int64 array), or None."""
    assert c.first is not None
    first = evaluate(c.first, dims)
    bound = evaluate(c.bound, dims)
    if c.shift:
        return _halving_trips(c, first, bound)
    if c.unsigned:
        if np.any(first >= 2 ** 31) or np.any(bound >= 2 ** 31):
            return None
    first, bound = signed(first), signed(bound)
    first, bound = np.broadcast_arrays(first, bound)
    s, op = c.step, c.op
    if op in (">", ">="):  # the mirror image: counting down to a bound below
        first, bound, s, op = -first, -bound, -s, {">": "<", ">=": "<="}[op]
    if op in ("<", "<="):
        if s <= 0:
            return None
        gap = bound - first if op == "<" else bound - first + 1  # trips j >= 1 + ceil(gap/s)
        return np.where(gap > 0, 1 + (gap + s - 1) // s, 1)
    if op == "!=":
        if s == 0:
            return None
        gap = bound - first
        ok = (gap % s == 0) & (gap // s >= 0)
        # a counter that never meets its bound would never end: the loop is not entered
        # with that value (the compiler checks before it), no trips
        return np.where(ok, gap // s + 1, 0)
    return None


def _halving_trips(c: _Counter, first, bound):
    """The trips of a do-while loop whose counter is shifted right (left: ``c.left``) by
    ``c.shift`` each trip (at most 32 before it is 0 or -1 for good): None where it would go
    on for ever."""
    first, bound = np.broadcast_arrays(first, bound)
    value, trips = first.copy(), np.zeros(first.shape, dtype=np.int64)
    going = np.ones(first.shape, dtype=bool)
    for _ in range(34):
        trips += going
        going &= compare_truth(c.op, c.unsigned, value, bound)
        if not going.any():
            return trips
        value = (value << c.shift) & U32 if c.left else \
            (signed(value) >> c.shift) & U32 if c.arithmetic else value >> c.shift
    return None


def loop_trip_counts(f: Follower, groups: dict) -> dict:
    """``{variable: TripCount}`` of the loop variables the listing decides (the module
    rules), its values followed by ``f``. ``groups``: variable -> ``[(loop index, copies),
    …]``, its loops (one loop of one copy for a loop of its own; an unrolled group most
    copies first, the smallest last)."""
    out: dict = {}
    for var, members in groups.items():
        try:
            found = _group_count(f, f.ranges, members)
        except (ValueError, OverflowError):
            found = None
        if found is not None:
            out[var] = found
    return out


def _group_count(f: Follower, ranges, members) -> TripCount | None:
    if len(members) == 1:
        c = counter(f, ranges[members[0][0]])
        if c is None or c.first is None:
            return None
        return describe((lambda dims: _trips(c, dims), c.first.dims | c.bound.dims),
                         axes=f.axes)
    first = min((k for k, _ in members), key=lambda k: ranges[k].header)
    counters = [(counter(f, ranges[k], entry_needed=k == first), copies) for k, copies in members]
    if any(c is None for c, _ in counters):
        return None
    found = _shared_countdown(counters, members, first, ranges, f.axes)
    if found is None:
        found = _unrolled_and_remainder(f, ranges, members, counters)
    if found is None:
        found = _remainder_first(f, ranges, members, counters)
    return found if found is not None else _countdown_and_remainder(f, ranges, members,
                                                                    counters)


def _countdown(counters, members, first) -> tuple | None:
    """``(entry, d)`` of loops that count one register down to zero: every loop by its
    copies times one step ``d``, the smallest stopping at zero, ``entry`` the register on
    entering the first; else None."""
    reg = counters[0][0].register  # type: ignore[union-attr]
    d = None
    for c, copies in counters:
        assert c is not None
        if c.register != reg or c.step >= 0 or c.step % copies or c.bound.dims:
            return None
        if d is None:
            d = -c.step // copies
        elif -c.step // copies != d:
            return None
    smallest = counters[-1][0]
    assert smallest is not None and d is not None
    if not _stops_at_zero(smallest):
        return None
    c0 = next(c for (c, _), (k, _) in zip(counters, members) if k == first)
    assert c0 is not None
    return None if c0.entry is None else (c0.entry, d)


def _stops_at_zero(c: _Counter) -> bool:
    """Whether counter ``c`` goes on while != 0, > 0 or >= 1."""
    if c.bound.dims:
        return False
    bound = evaluate(c.bound, (1, 1, 1))
    return (c.op, int(bound)) in (("!=", 0), (">", 0), (">=", 1))


def _shared_countdown(counters, members, first, ranges, axes) -> TripCount | None:
    """An unrolled group whose loops count one register down to zero (the module rules)."""
    found = _countdown(counters, members, first)
    if found is None:
        return None
    entry, d = found

    def count(dims):
        v = signed(evaluate(entry, dims))
        return None if np.any(v < 0) else v
    return describe((count, entry.dims), divisor=d, axes=axes)


def _countdown_and_remainder(f: Follower, ranges, members, counters) -> TripCount | None:
    """An unrolled group whose loops but the last count one register down to zero (nvcc's
    ``n − n % 4`` source iterations, by 16 and then by 4: :func:`_countdown`), the last a
    remainder loop of one copy counting another register down to zero by the same step
    ``d`` (``n % 4``, unchanged by the loops before it): ``v = (entry + left) / d``, ``left``
    the remainder register where the group starts."""
    if len(members) < 3 or members[-1][1] != 1:
        return None
    first = members[0][0]
    found = _countdown(counters[:-1], members[:-1], first)
    small = counters[-1][0]
    if found is None or small is None or small.register == counters[0][0].register:
        return None
    entry, d = found
    r, unit = ranges[first], ranges[members[-1][0]]
    if unit.header < r.header:
        return None
    if not _stops_at_zero(small) or f.written_between(small.register, r.header,
                                                      unit.header - 1):
        return _countdown_and_counted_remainder(small, entry, d, f.axes)
    if -small.step != d:
        return None
    left = f.register(small.register, r.header, 0, entering=r)  # the remainder, on entry
    if left is None:
        return None

    def count(dims):
        main, rest = signed(evaluate(entry, dims)), signed(evaluate(left, dims))
        if np.any(main < 0) or np.any(rest < 0) or np.any(main % d) or np.any(rest % d):
            return None
        return (main + rest) // d
    return describe((count, entry.dims | left.dims), axes=f.axes)


def _countdown_and_counted_remainder(small: _Counter, entry: Node, d: int,
                                     axes: dict) -> TripCount | None:
    """The group of :func:`_countdown_and_remainder` whose remainder loop is set up where
    the group's loops do not write (``n % 4`` less one before the loop, then counted down
    to −1, as nvcc writes it where ``n`` is known to be odd: ``2·r + 1``): its trips from
    its own counter, ``v = entry / d + trips``."""
    if small.first is None:
        return None

    def count(dims):
        main = signed(evaluate(entry, dims))
        rest = _trips(small, dims)
        if rest is None or np.any(main < 0) or np.any(main % d):
            return None
        return main // d + rest
    return describe((count, entry.dims | small.first.dims | small.bound.dims), axes=axes)


def _remainder_first(f: Follower, ranges, members, counters) -> TripCount | None:
    """An unrolled group whose remainder loop (one copy) comes before the unrolled loops
    (``for (j = -r; j <= r; ++j)``) and counts down to zero from ``n & (u − 1)``, ``u`` a
    power of two dividing every other loop's copies: ``v = n``. LLVM's run-time unrolling
    by ``u`` runs ``n mod u`` iterations first and the rest ``u`` at a time, ``n`` the
    source loop's trip count, so the mask's operand is that count (the unrolled loops'
    own counters start where the remainder loop leaves its induction variable, which the
    values followed here do not cross)."""
    unit, copies = members[-1]
    small = counters[-1][0]
    if copies != 1 or small is None or ranges[unit].header > min(
            ranges[k].header for k, _ in members[:-1]):
        return None
    if small.step != -1 or not _stops_at_zero(small):
        return None
    masked = _masked(small.entry)  # (the group's first loop: its entry was followed)
    if masked is None:
        return None
    n, u = masked
    if any(c % u for _, c in members[:-1]):
        return None

    def count(dims):
        v = signed(evaluate(n, dims))
        return None if np.any(v < 0) else v
    return describe((count, n.dims), axes=f.axes)


def _masked(node: Node | None) -> tuple | None:
    """``(n, u)`` where ``node`` is ``n & (u − 1)`` (``LOP3.LUT R6, R3, 0x3, RZ, 0xc0``), ``u``
    a power of two from 2 on; else None."""
    if node is None:
        return None
    if node.op == "and":
        pair = node.args
    elif node.op == "lut" and node.args[0] == 0xC0 and node.args[3].op == "const" and \
            node.args[3].args[0] == 0:
        pair = node.args[1:3]
    else:
        return None
    for n, mask in (pair, pair[::-1]):
        if isinstance(mask, Node) and mask.op == "const":
            u = mask.args[0] + 1
            if u >= 2 and u & (u - 1) == 0 and isinstance(n, Node):
                return n, u
    return None


def _unrolled_and_remainder(f: Follower, ranges, members, counters) -> TripCount | None:
    """nvcc's unrolled loop of ``c`` copies with its own count (counting up against
    ``n - n % c``) and a remainder loop counting a register down to zero by ``d`` a trip,
    that register holding the ``n % c`` steps left (times ``d``) where the group starts:
    ``v = c · trips of the unrolled loop + that value / d`` (two loops; the value checked to
    be a remainder, below ``c``, at every block)."""
    if len(members) != 2 or members[1][1] != 1:
        return None
    (main, c), (unit, _) = members
    big, small = counters[0][0], counters[1][0]
    if big is None or small is None or big.first is None or ranges[main].header > ranges[unit].header:
        return None
    if small.step >= 0 or not _stops_at_zero(small):
        return None
    d = -small.step
    r = ranges[main]
    if f.written_between(small.register, r.header, r.latch):
        return None
    left = f.register(small.register, r.header, 0, entering=r)  # the steps left, on entry
    if left is None:
        return None

    def count(dims):
        trips = _trips(big, dims)
        rest = signed(evaluate(left, dims))
        if trips is None or np.any(rest < 0) or np.any(rest % d) or np.any(rest // d >= c):
            return None
        return c * trips + rest // d
    return describe((count, big.first.dims | big.bound.dims | left.dims), axes=f.axes)


__all__ = ["counter", "loop_trip_counts", "once_per_trip", "runs_every_trip"]
