"""Values of the block's dimensions followed back through a listing's registers: what the
trip counts (:mod:`.trip_counts`) and the block's tests (:mod:`.block_tests`) read.

A register's value where an instruction reads it is followed back through its writes (at
most :data:`MAX_DEPTH` steps) to numbers and the block's dimensions in the constant bank
(``c[0x0][0x0]`` on Volta to Hopper: the offsets the address analysis uses,
:mod:`.addresses`), through ``MOV``, ``MOV32I``, ``LDC``/``ULDC`` (``.64``: the word each
register of the pair holds), ``CS2R … SRZ``, Ampere's
``HFMA2.MMA`` of a constant, ``IMAD`` (not ``.HI``/``.WIDE``/``.X``), ``IADD3``, ``IADD``,
``IADD32I``, ``VIADD``, ``LEA``, ``LEA.HI`` (``b`` plus the high word of ``{c, a} << s``: a
signed division by ``2^s``), nvcc's division by a run-time value (its reciprocal and guarded
fixes read as the quotient: :meth:`Follower._quotient`), ``ISCADD``,
``SHF``/``SHL``/``SHR`` by a constant, ``LOP3.LUT`` (its truth
table), ``LOP``/``LOP32I``, ``IABS``, ``IMNMX`` (Hopper's ``VIMNMX``), ``SEL`` on a plain
``ISETP`` (Volta's ``max(0, x)``) and Maxwell's ``XMAD`` (exactly), in 32-bit
arithmetic (:class:`Follower`:
a tree of :class:`Node`, :func:`evaluate` for arrays of blocks). The write read is the last
one before the reader in program order, as the guards read values (:mod:`.guards`). A write
that is predicated, in a loop the reader is not in, or in a loop around the reader that
writes the register again (a value carried from trip to trip) stops it, and so does one a
forward branch may jump over on its way to the reader (an ``if``/``else`` that writes it on
one side), unless one conditional ``@P BRA`` alone jumps over it: then the value is a
choice on ``P``'s compare (:meth:`Follower._either_side`); so does any other value (a
parameter, the thread or block index, loaded data).

:func:`poly_of` writes such a value as a polynomial of ``ntid.x``, ``ntid.y``, ``ntid.z``
and their bit fields ``ntid.x%M`` and ``ntid.x/M`` (M a power of two), the form of the
thread tests (:mod:`.thread_tests`).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
import heapq
import re

import numpy as np

from gpumodeler.core.kernel.sass.addresses import half_pair
from gpumodeler.core.kernel.sass.listing import BRANCHES
from gpumodeler.core.kernel.sass.thread_tests import COMPARE

#: steps back through register writes when following a value
MAX_DEPTH = 16
#: the instructions before a write searched for the one branch that may jump over it
#: (:meth:`Follower._either_side`)
SKIP_WINDOW = 64
U32 = 0xFFFFFFFF
REG = re.compile(r"^(U?R)(\d+|Z)$")
REG_MODS = re.compile(r"\.(reuse|U32|S32)$", re.I)
DIM_NAMES = ("ntid.x", "ntid.y", "ntid.z")
#: the block's axes: the variable a count of each is written with, and its largest value
#: (NVIDIA CUDA C++ Programming Guide, "Technical Specifications per Compute Capability":
#: x and y at most 1024, z at most 64)
BLOCK_AXES = {0: ("block_x", 1024), 1: ("block_y", 1024), 2: ("block_z", 64)}


class Node:
    """A value followed back to numbers and block dimensions: ``op`` and its inputs."""

    __slots__ = ("op", "args", "dims")

    def __init__(self, op: str, args: tuple, dims: frozenset):
        self.op, self.args, self.dims = op, args, dims


def const(v: int) -> Node:
    return Node("const", (int(v) & U32,), frozenset())


def dim(axis: int) -> Node:
    return Node("dim", (axis,), frozenset({axis}))


def op_node(op: str, *args) -> Node:
    dims: frozenset = frozenset()
    for a in args:
        if isinstance(a, Node):
            dims |= a.dims
    return Node(op, args, dims)


class Follower:
    """Follows register values back through a listing to numbers and block dimensions
    (:meth:`register`, :meth:`operand`: a :class:`Node`, or None where the module's rules
    stop)."""

    def __init__(self, ins_list, access, n_dest, ranges, dim_offsets: dict):
        self.ins = ins_list
        self.access = access  # (written, read) per instruction
        self.n_dest = n_dest  # instruction -> its number of destination operands
        self.ranges = ranges
        self.dims = dim_offsets  # constant-bank offset -> axis 0, 1, 2
        self._writes: dict | None = None  # register -> the instructions writing it, in order
        #: per instruction, the nearest target of a forward branch that jumps over it
        self._over: list | None = None
        #: the forward branches, (index, target index), in order (:meth:`_either_side`)
        self._forward: list | None = None
        #: loop range -> its counter (trip_counts.counter), worked out once
        self.counters: dict = {}
        #: loop range -> its back branch's condition (trip_counts.latch_condition): the
        #: listing's, shared by the followers of one listing
        self.latches: dict = {}
        #: (register, loop range): a loop's counter read inside that loop, as the symbol
        #: ``counter`` (its value on the trip: :func:`trip_tests`)
        self.counter: tuple | None = None
        #: axis -> (the variable a count of it is written with, its largest value)
        self.axes: dict = dict(BLOCK_AXES)

    def on_same_listing(self, dims: dict, cls=None):
        """A follower (of class ``cls``, by default this one's) of the same listing reading
        the constant-bank offsets ``dims`` as symbols, sharing this one's register and
        jump indexes and loop conditions (built here first, so both use them)."""
        self.writes("")
        self.skippable(0, 0)
        other = (cls or type(self))(self.ins, self.access, self.n_dest, self.ranges, dims)
        other._writes, other._over, other.latches = self._writes, self._over, self.latches
        other._forward = self._forward
        return other

    def loops_of(self, k: int) -> list:
        return [r for r in self.ranges if r.header <= k <= r.latch]

    def skippable(self, j: int, k: int) -> bool:
        """Whether a forward branch may jump over instruction ``j`` to a place up to ``k``
        (``j`` then not on every path to ``k``: an if/else that writes the register on one
        side)."""
        if self._over is None:
            at = {ins.address: i for i, ins in enumerate(self.ins)}
            starts: dict = {}  # branch index -> targets of the forward branches there
            for b, ins in enumerate(self.ins):
                t = at.get(ins.target, -1) if ins.mnemonic in BRANCHES else -1
                if t > b:
                    starts.setdefault(b, []).append(t)
            # a sweep down the listing: the targets of the branches taken so far, nearest
            # first; those at or before the instruction no longer jump over it
            self._over = []
            pending: list = []
            for i in range(len(self.ins)):
                while pending and pending[0] <= i:
                    heapq.heappop(pending)
                self._over.append(pending[0] if pending else None)
                for t in starts.get(i, ()):
                    heapq.heappush(pending, t)
        t = self._over[j]
        return t is not None and t <= k

    def writes(self, reg: str) -> list:
        if self._writes is None:
            self._writes = {}
            for j, (written, _) in enumerate(self.access):
                for w in written:
                    self._writes.setdefault(w, []).append(j)
        return self._writes.get(reg, [])

    def last_write(self, reg: str, k: int) -> int | None:
        at = self.writes(reg)
        i = bisect_left(at, k)
        return at[i - 1] if i else None

    def written_between(self, reg: str, lo: int, hi: int) -> bool:
        at = self.writes(reg)
        i = bisect_left(at, lo)
        return i < len(at) and at[i] <= hi

    def writes_between(self, reg: str, lo: int, hi: int) -> list:
        at = self.writes(reg)
        return at[bisect_left(at, lo):bisect_right(at, hi)]

    def register(self, reg: str, k: int, depth: int, entering=None) -> Node | None:
        """The value of ``reg`` where instruction ``k`` reads it (``entering``: the loop
        whose header ``k`` is, entered from before it), or None."""
        if depth > MAX_DEPTH:
            return None
        if self.counter is not None and reg == self.counter[0] and \
                self.counter[1].header <= k <= self.counter[1].latch:
            return Node("counter", (), frozenset())
        j = self.last_write(reg, k)
        if j is not None and self.ins[j].guard and not self.skippable(j, k):
            return self._quotient(reg, j, depth)  # nvcc's division's last, guarded fixes
        if j is None or self.ins[j].guard:
            return None
        around = self.loops_of(k)
        # carried from one trip to the next: written again after k in a loop around k that
        # does not write it afresh before k on every trip
        if any(r is not entering and not r.header <= j and self.written_between(reg, k, r.latch)
               for r in around):
            return None
        if any(r not in around for r in self.loops_of(j)):
            return None  # left by a loop the reader is not in: its last trip's value
        if self.skippable(j, k):
            return self._either_side(reg, j, k, depth)
        return self._written(reg, j, depth)

    def _written(self, reg: str, j: int, depth: int) -> Node | None:
        """The value instruction ``j`` writes to ``reg``."""
        half = _pair_half(self.ins[j], reg)
        if half is not None:  # a 64-bit constant-bank load: the word this register holds
            return self.operand(half, j, depth + 1)
        return self.instruction(j, depth + 1)

    def _either_side(self, reg: str, j: int, k: int, depth: int) -> Node | None:
        """The value of ``reg`` at ``k`` where its last write ``j`` lies in code one
        conditional forward branch ``@P BRA`` jumps over (``if (!P) reg = …``, nvcc's
        guarded first iteration): the value before the branch where ``P`` holds, ``j``'s
        where not, as a choice on the compare that sets ``P`` (:meth:`_compare`); None
        where more than one branch may skip ``j``, or any other branch lies between the
        branch and ``j``, or ``P`` is not one plain compare. The branch is looked for among
        the :data:`SKIP_WINDOW` instructions before ``j``."""
        if self._forward is None:
            at = {ins.address: i for i, ins in enumerate(self.ins)}
            self._forward = [(b, at.get(ins.target, -1)) for b, ins in enumerate(self.ins)
                             if ins.mnemonic in BRANCHES and at.get(ins.target, -1) > b]
        over = [b for b, t in self._forward if b < j < t <= k]
        if len(over) != 1 or over[0] < j - SKIP_WINDOW:
            return None
        b = over[0]
        guard = self.ins[b].guard
        if not guard or self.ins[b].mnemonic != "BRA" or \
                any(self.ins[i].mnemonic in BRANCHES for i in range(b + 1, j)):
            return None
        test = self._compare(guard.lstrip("@"), b, depth)
        if test is None:
            return None
        taken, written = self.register(reg, b, depth + 1), self._written(reg, j, depth)
        if taken is None or written is None:
            return None
        return op_node("select", *test, taken, written)

    def _quotient(self, reg: str, j: int, depth: int) -> Node | None:
        """The quotient of nvcc's integer division by a run-time value, read in ``reg``
        whose last write ``j`` is one of the division's guarded fixes; else None.

        nvcc divides by a value it does not know with a reciprocal (CUDA's own sequence,
        read here, not derived): ``I2F.U32.RP`` (``I2F.RP`` of ``IABS d`` for ``int``),
        ``MUFU.RCP``, ``IADD3 … 0xffffffe``, ``F2I.FTZ.U32.TRUNC``, a refining
        ``IMAD.HI.U32``, the estimate ``IMAD.HI.U32 q, inv, n, RZ`` (``n``, or ``IABS n``),
        then guarded fixes of ``q``: ``@P IADD3 q, q, 0x1`` (once or twice), for ``int``
        ``MOV r, q`` and ``@!P IMAD.MOV r, RZ, RZ, -r`` (the sign), and ``@!P LOP3.LUT r,
        RZ, d, RZ, 0x33`` (``~d``: a division by zero). The fixes make the estimate the
        exact quotient, so the value is ``n / d`` (unsigned), or ``n / d`` truncated
        toward zero (``int``: a node ``sdiv``)."""
        signed = False
        cur, at = reg, j
        for _ in range(8):
            ins = self.ins[at]
            nd = self.n_dest(at)  # Blackwell's IADD3 prints its carry-outs, PT, PT
            raw = [o.strip() for o in ins.operands[:1] + ins.operands[nd:]]
            ops = [REG_MODS.sub("", o) for o in raw]
            mods = set(ins.modifiers)
            if ins.guard:
                if (ins.mnemonic == "IADD3" and ops[1:] == [cur, "0x1", "RZ"] or
                        ins.mnemonic == "VIADD" and ops[1:] == [cur, "0x1"]) and ops[0] == cur:
                    pass  # q += 1
                elif ops and ops[0] == cur and (
                        ins.mnemonic == "IMAD" and "MOV" in mods and raw[1:] == ["RZ", "RZ",
                                                                            f"-{cur}"]
                        or ins.mnemonic == "IADD3" and raw[1:] == [f"-{cur}", "RZ", "RZ"]):
                    signed = True  # the sign of an int quotient
                elif ins.mnemonic == "LOP3" and len(ops) == 6 and ops[0] == cur and \
                        ops[1] == "RZ" and ops[3] == "RZ" and ops[4] == "0x33":
                    pass  # ~d where d is 0: outside the counts worked out here
                else:
                    return None
            elif ins.mnemonic == "MOV" and len(ops) == 2 and ops[0] == cur and REG.match(ops[1]):
                cur = ops[1]
            elif ins.mnemonic == "IMAD" and "HI" in mods and "U32" in mods and len(ops) == 4 \
                    and ops[0] == cur and ops[3] == "RZ":
                return self._estimate(at, ops, signed, depth)
            else:
                return None
            found = self.last_write(cur, at)
            if found is None or self.skippable(found, at):
                return None
            at = found
        return None

    def _estimate(self, at: int, ops: list, signed: bool, depth: int) -> Node | None:
        """``n / d`` of the estimate ``IMAD.HI.U32 q, inv, n, RZ`` at ``at`` (either
        factor the reciprocal): :meth:`_quotient`."""
        for inv, num in ((ops[1], ops[2]), (ops[2], ops[1])):
            divisor = self._reciprocal_of(inv, at)
            if divisor is None:
                continue
            dtext, via_abs = divisor
            ntext, nat = num, at
            if via_abs != signed:
                return None
            if signed:  # both |n| and |d|: follow n and d themselves
                w = self._through_copies(num, at)
                if w is None or self.ins[w].mnemonic != "IABS":
                    return None
                ntext, nat = self.ins[w].operands[1].strip(), w
            n = self.operand(ntext, nat, depth)
            d = self.operand(dtext[0], dtext[1], depth)
            if n is None or d is None:
                return None
            return op_node("sdiv" if signed else "div", n, d)
        return None

    def _through_copies(self, reg: str, at: int) -> int | None:
        """The last write of ``reg`` read at ``at``, through up to three copies (``MOV``,
        ``IMAD.MOV.U32 r, RZ, RZ, x``), unguarded; else None."""
        for _ in range(4):
            if not REG.match(reg):
                return None
            w = self.last_write(reg, at)
            if w is None or self.ins[w].guard or self.skippable(w, at):
                return None
            ins = self.ins[w]
            ops = [REG_MODS.sub("", o.strip()) for o in ins.operands]
            if ins.mnemonic == "MOV" and len(ops) == 2:
                reg, at = ops[1], w
            elif ins.mnemonic == "IMAD" and "MOV" in ins.modifiers and len(ops) == 4 and \
                    ops[1:3] == ["RZ", "RZ"] and not ins.operands[3].strip().startswith("-"):
                reg, at = ops[3], w
            else:
                return w
        return None

    def _reciprocal_of(self, reg: str, at: int) -> tuple | None:
        """``((the divisor's operand text, its instruction), through IABS)`` where ``reg``
        read at ``at`` is nvcc's refined reciprocal of a divisor (:meth:`_quotient`)."""
        chain: tuple[tuple[str, set[str]], ...] = (
            ("IMAD", {"HI", "U32"}), ("F2I", {"U32", "TRUNC"}), ("IADD3", set()),
            ("MUFU", {"RCP"}), ("I2F", {"RP"}))
        cur, k = reg, at
        for mnem, mods in chain:
            if not REG.match(cur):
                return None
            w = self.last_write(cur, k)
            if w is None or self.ins[w].guard or self.skippable(w, k) or \
                    self.ins[w].mnemonic != mnem or not mods <= set(self.ins[w].modifiers):
                return None
            srcs = [REG_MODS.sub("", o.strip()) for o in self.ins[w].operands[self.n_dest(w):]]
            if mnem == "IADD3" and srcs[1:] != ["0xffffffe", "RZ"]:
                return None
            if mnem == "I2F":
                text = self.ins[w].operands[1].strip()
                if "U32" in self.ins[w].modifiers:
                    return (text, w), False
                a = self._through_copies(REG_MODS.sub("", text), w)
                if a is None or self.ins[a].mnemonic != "IABS":
                    return None
                return (self.ins[a].operands[1].strip(), a), True
            cur, k = srcs[0], w
        return None

    def operand(self, text: str, k: int, depth: int) -> Node | None:
        t = text.strip()
        neg = t.startswith("-")
        t = t.lstrip("-")
        inverted = t.startswith("~")
        absolute = t.startswith("|") and t.endswith("|")
        t = t.strip("~|")
        if t.startswith("c["):
            offset = cbank_offset(t)
            if offset is None or offset not in self.dims:
                return None  # a kernel parameter or another constant
            node = dim(self.dims[offset])
        else:
            base = REG_MODS.sub("", t)
            if base in ("RZ", "URZ"):
                node = const(0)
            elif REG.match(base):
                node = self.register(base, k, depth)  # type: ignore[assignment]
            else:
                try:
                    node = const(int(base, 16) if base.lower().startswith("0x") else int(base))
                except ValueError:
                    return None
        if node is None:
            return None
        if absolute:
            node = op_node("abs", node)
        if inverted:
            node = op_node("not", node)
        return op_node("neg", node) if neg else node

    def instruction(self, j: int, depth: int) -> Node | None:
        """The value instruction ``j`` writes to its first destination, or None."""
        ins = self.ins[j]
        mnem, mods = ins.mnemonic, set(ins.modifiers)
        if mnem.startswith("U") and mnem[1:] in ("MOV", "IMAD", "IADD3", "LEA", "SHF", "LOP3",
                                                  "LDC"):
            mnem = mnem[1:]
        nd = self.n_dest(j)
        srcs = [o for o in ins.operands[nd:]]
        # one register written (and carry-outs to PT, written nowhere), or LOP3.LUT's
        # predicate and register (P1, R6: the register's value; the predicate is not read)
        both = mnem == "LOP3" and nd == 2 and is_predicate(ins.operands[0]) and \
            not is_predicate(ins.operands[1])
        if not both and (nd < 1 or is_predicate(ins.operands[0]) or any(
                o.strip() not in ("PT", "UPT") for o in ins.operands[1:nd])):
            return None

        def src(i):
            return self.operand(srcs[i], j, depth) if i < len(srcs) else None

        def all_of(*xs):
            return None if any(x is None for x in xs) else xs

        if mnem in ("MOV", "MOV32I", "LDC", "LDCU") and srcs and "64" not in mods:
            return src(0)
        if mnem == "CS2R" and srcs and srcs[0].strip() == "SRZ":
            return const(0)
        if mnem == "HFMA2" and len(srcs) == 4 and \
                {o.strip().lstrip("-") for o in srcs[:2]} == {"RZ"}:
            pair = half_pair(srcs[2], srcs[3])  # Ampere's way of writing a constant
            return None if pair is None else const(pair.constant() or 0)
        if mnem == "IMAD" and not mods & {"HI", "WIDE", "X"} and len(srcs) >= 3:
            got = all_of(src(0), src(1), src(2))
            return got and op_node("add", op_node("mul", got[0], got[1]), got[2])
        if mnem == "IADD3" and "X" not in mods:
            values = [o for o in srcs if not is_predicate(o)]
            got = all_of(*(self.operand(o, j, depth) for o in values))
            return got and op_node("add", *got)
        if mnem in ("IADD", "IADD32I", "VIADD") and "X" not in mods and len(srcs) >= 2:
            got = all_of(src(0), src(1))
            return got and op_node("add", *got)
        if mnem == "LEA" and "HI" in mods and "X" not in mods and len(srcs) == 4:
            # LEA.HI d, a, b, c, s: b plus the high word of the 64-bit {c, a} << s (nvcc's
            # signed division by 2^s adds (x >> 31) >> (32 - s) this way)
            got = all_of(src(0), src(1), src(2), src(3))
            s = None if got is None else bits_of(got[3])
            if got is None or s is None or not 0 < s < 32:
                return None
            high = op_node("or", op_node("shr", got[0], const(32 - s)),
                           op_node("shl", got[2], const(s)))
            return op_node("add", got[1], high)
        if mnem in ("LEA", "ISCADD", "ISCADD32I") and not mods & {"HI", "X"} and len(srcs) >= 3:
            got = all_of(src(0), src(1), src(2))
            return got and op_node("add", op_node("shl", got[0], got[2]), got[1])
        if mnem == "SHF" and len(srcs) >= 3 and mods & {"U32", "S32"}:
            if "L" in mods and "HI" not in mods:
                got = all_of(src(0), src(1))
                return got and op_node("shl", *got)
            if "R" in mods and "HI" in mods and not mods & {"U64", "S64"}:
                got = all_of(src(2), src(1))
                return got and op_node("sar" if "S32" in mods else "shr", *got)
            return None
        if mnem == "SHL" and len(srcs) >= 2:
            got = all_of(src(0), src(1))
            return got and op_node("shl", *got)
        if mnem == "SHR" and len(srcs) >= 2:
            got = all_of(src(0), src(1))
            return got and op_node("shr" if "U32" in mods else "sar", *got)
        if mnem == "LOP3" and "LUT" in mods and len(srcs) >= 4:
            try:
                lut = int(srcs[3].strip(), 0)
            except ValueError:
                return None
            got = all_of(src(0), src(1), src(2))
            return got and op_node("lut", lut, *got)
        if mnem in ("LOP", "LOP32I") and len(srcs) >= 2:
            kind = next((m for m in ("AND", "OR", "XOR") if m in mods), None)
            got = all_of(src(0), src(1))
            return None if got is None or kind is None else op_node(kind.lower(), *got)
        if mnem == "XMAD" and len(srcs) == 3 and not mods - {"MRG", "PSL", "CBCC"}:
            return self._xmad(srcs, j, depth, mods)
        if mnem == "IABS" and srcs:
            got = all_of(src(0))
            return got and op_node("abs", got[0])
        if mnem == "SEL" and len(srcs) == 3:  # SEL d, a, b, P: P ? a : b
            test = self._compare(srcs[2].strip(), j, depth)
            got = all_of(src(0), src(1))
            return None if test is None or got is None else op_node("select", *test, *got)
        if mnem in ("IMNMX", "VIMNMX") and len(srcs) >= 3 and srcs[2].strip() in ("PT", "!PT"):
            got = all_of(src(0), src(1))
            kind = ("max" if srcs[2].strip() == "!PT" else "min") + ("u" if "U32" in mods else "")
            return got and op_node(kind, *got)
        return None

    def _compare(self, pred: str, k: int, depth: int) -> tuple | None:
        """``(op, unsigned, a, b)`` of the compare that sets predicate ``pred`` (``P0``,
        ``!P0``: the op negated) where instruction ``k`` reads it: one ``ISETP`` not combined
        with another predicate, followed as a register's write is (:meth:`register`); else
        None."""
        from gpumodeler.core.kernel.sass.thread_tests import NEGATED, SETP_OPS
        negated, name = pred.startswith("!"), pred.lstrip("!")
        j = self.last_write(name, k)
        if j is None or depth > MAX_DEPTH or self.ins[j].guard or self.skippable(j, k) or \
                any(r not in self.loops_of(k) for r in self.loops_of(j)):
            return None
        ins = self.ins[j]
        ops = [o.strip() for o in ins.operands]
        op = next((SETP_OPS[m] for m in ins.modifiers if m in SETP_OPS), None)
        if ins.mnemonic != "ISETP" or op is None or len(ops) != 5 or ops[0] != name or \
                ops[1] != "PT" or ops[4] != "PT" or "AND" not in ins.modifiers:
            return None
        a, b = self.operand(ops[2], j, depth + 1), self.operand(ops[3], j, depth + 1)
        if a is None or b is None:
            return None
        return (NEGATED[op] if negated else op), "U32" in ins.modifiers, a, b

    def _xmad(self, srcs: list, j: int, depth: int, mods: set) -> Node | None:
        """Maxwell's and Pascal's 16-bit multiply-add ``XMAD d, a, b, c``: the product of
        a half of ``a`` and a half of ``b`` (the low one, or the high one with ``.H1``),
        shifted left 16 with ``.PSL``, plus ``c`` (plus ``b << 16`` with ``.CBCC``); ``.MRG``
        then puts ``b``'s low half in the result's high half. nvcc's three of them make a
        32-bit product: ``d1 = a·b.lo``, ``d2 = MRG(a·b.hi)``, ``d = PSL.CBCC(a.hi·d2.hi) + d1``."""
        halves, full = [], []
        for text in srcs:
            t = text.strip()
            high = t.endswith(".H1")
            base = t[:-3] if t.endswith((".H1", ".H0")) else t
            node = self.operand(base, j, depth)
            if node is None:
                return None
            full.append(node)
            halves.append(op_node("and", op_node("shr", node, const(16)) if high else node,
                                  const(0xFFFF)))
        product = op_node("mul", halves[0], halves[1])
        if "PSL" in mods:
            product = op_node("shl", product, const(16))
        addend = full[2]
        if "CBCC" in mods:
            addend = op_node("add", addend, op_node("shl", full[1], const(16)))
        out = op_node("add", product, addend)
        if "MRG" in mods:
            out = op_node("or", op_node("and", out, const(0xFFFF)),
                          op_node("shl", full[1], const(16)))
        return out


_CBANK0 = re.compile(r"^c\[(0x[0-9a-f]+)\]\[(0x[0-9a-f]+)\]$", re.I)


def _pair_half(ins, reg: str) -> str | None:
    """The constant-bank word ``reg`` holds where ``ins`` loads a 64-bit pair of registers
    (``ULDC.64 UR4, c[0x0][0x170]``: ``UR4`` the word at 0x170, ``UR5`` at 0x174), as an
    operand; None for any other instruction."""
    if ins.mnemonic not in ("LDC", "ULDC", "LDCU") or "64" not in ins.modifiers or \
            len(ins.operands) != 2:
        return None
    dest, src = (REG_MODS.sub("", o.strip()) for o in ins.operands)
    m, offset = REG.match(dest), cbank_offset(src)
    if m is None or m.group(2) == "Z" or offset is None:
        return None
    number = int(m.group(2))
    if reg == dest:
        return f"c[0x0][{offset:#x}]"
    return f"c[0x0][{offset + 4:#x}]" if reg == f"{m.group(1)}{number + 1}" else None


def cbank_offset(text: str) -> int | None:
    """The offset of a constant-bank-0 operand (``c[0x0][0x170]``, ``c[0x0] [0x8]``,
    ``c[0x0][RZ]``), or None for any other operand."""
    ref = text.strip().replace(" ", "").replace("[RZ]", "[0x0]").replace("[URZ]", "[0x0]")
    m = _CBANK0.match(ref)
    if m is None or int(m.group(1), 16) != 0:
        return None
    return int(m.group(2), 16)


def signed(v):
    v = v & U32
    return np.where(v >= 2 ** 31, v - 2 ** 32, v)


def evaluate(node: Node, dims: tuple):
    """The value of ``node`` (an int64 array, 32-bit unsigned) for the block dimensions
    ``dims`` (three arrays or numbers)."""
    op, a = node.op, node.args
    if op == "const":
        return np.int64(a[0])
    if op == "dim":
        return np.asarray(dims[a[0]], dtype=np.int64) & U32
    if op == "lut":
        lut, *xs = a
        x, y, z = (evaluate(n, dims) for n in xs)
        out = np.zeros(np.broadcast(x, y, z).shape, dtype=np.int64)
        for bits in range(8):
            if lut >> bits & 1:
                term = np.full_like(out, U32)
                for v, bit in ((x, 4), (y, 2), (z, 1)):
                    term &= v if bits & bit else ~v & U32
                out |= term
        return out & U32
    if op == "select":  # (compare op, unsigned, a, b, then, else)
        cmp, unsigned, *xs = a
        x, y, then, other = (evaluate(n, dims) for n in xs)
        return np.where(compare_truth(cmp, unsigned, x, y), then, other) & U32
    xs = [evaluate(n, dims) for n in a]
    if op == "add":
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out & U32
    if op == "mul":
        return (xs[0] * xs[1]) & U32
    if op == "neg":
        return (-xs[0]) & U32
    if op == "not":
        return ~xs[0] & U32
    if op == "abs":
        return np.abs(signed(xs[0])) & U32
    if op == "shl":
        return (xs[0] << (xs[1] & 31)) & U32
    if op == "shr":
        return (xs[0] >> (xs[1] & 31)) & U32
    if op == "sar":
        return (signed(xs[0]) >> (xs[1] & 31)) & U32
    if op == "and":
        return xs[0] & xs[1] & U32
    if op == "or":
        return (xs[0] | xs[1]) & U32
    if op == "xor":
        return (xs[0] ^ xs[1]) & U32
    if op == "min":
        return np.minimum(signed(xs[0]), signed(xs[1])) & U32
    if op == "max":
        return np.maximum(signed(xs[0]), signed(xs[1])) & U32
    if op in ("minu", "maxu"):
        return (np.minimum if op == "minu" else np.maximum)(xs[0], xs[1])
    if op == "div":  # unsigned; a division by zero gives all ones (the sequence's ~0)
        top, bottom = np.broadcast_arrays(xs[0], xs[1])
        return np.where(bottom == 0, U32, top // np.where(bottom == 0, 1, bottom)) & U32
    if op == "sdiv":  # int: truncated toward zero
        top, bottom = np.broadcast_arrays(signed(xs[0]), signed(xs[1]))
        q = np.abs(top) // np.where(bottom == 0, 1, np.abs(bottom))
        return np.where(bottom == 0, U32, np.where((top < 0) != (bottom < 0), -q, q)) & U32
    raise ValueError(f"unknown value operation {op}")


def is_predicate(text: str) -> bool:
    return re.match(r"^!?U?P([0-7]|T)$", text.strip()) is not None


def bits_of(node: Node) -> int | None:
    """The value of a node that reads no block dimension (32 bits), or None."""
    if node.dims:
        return None
    return int(np.asarray(evaluate(node, (1, 1, 1))).ravel()[0]) & U32


def _dim_name(node: Node) -> str | None:
    """``ntid.x`` (``.y``, ``.z``) where ``node`` is a block dimension itself, else None."""
    if len(node.dims) != 1:
        return None
    p = poly_of(node)
    name = DIM_NAMES[next(iter(node.dims))]
    return name if p is not None and p.terms == {(name,): 1} else None


def _dim_field(lut: int, consts: list, position: int):
    """``(kind, k)`` where a bitwise operation of a block dimension (operand ``position``
    of three, the others the numbers ``consts``) keeps its low ``k`` bits
    (``"low"``: ``d % 2^k``) or clears them (``"high"``: ``d - d % 2^k``); else None."""
    keep = []
    for bit in range(32):
        outs = []
        for d in (0, 1):
            bits = [(c >> bit) & 1 for c in consts]
            bits.insert(position, d)
            outs.append((lut >> (4 * bits[0] + 2 * bits[1] + bits[2])) & 1)
        if outs == [0, 1]:
            keep.append(True)
        elif outs == [0, 0]:
            keep.append(False)
        else:
            return None  # a set or inverted bit: not a field
    k = keep.index(False) if False in keep else 32
    if all(keep[:k]) and not any(keep[k:]):
        return "low", k
    k = keep.index(True) if True in keep else 32
    if not any(keep[:k]) and all(keep[k:]):
        return "high", k
    return None


def poly_of(node: Node):
    """The polynomial (:class:`.addresses.Poly`) of a value of the block's dimensions and
    numbers: ``ntid.x``, its bit fields ``ntid.x%M`` and ``ntid.x/M`` (M a power of two);
    None for what it cannot write."""
    from gpumodeler.core.kernel.sass.addresses import Poly
    op, a = node.op, node.args
    if op == "const":
        v = a[0] & U32
        return Poly.const(v - 2 ** 32 if v >= 2 ** 31 else v)
    if op == "dim":
        return Poly.symbol(DIM_NAMES[a[0]])
    if op == "add":
        out = Poly()
        for x in a:
            p = poly_of(x)
            if p is None:
                return None
            out = out + p
        return out
    if op == "neg":
        p = poly_of(a[0])
        return None if p is None else p.scaled(-1)
    if op == "mul":
        p, q = poly_of(a[0]), poly_of(a[1])
        return None if p is None or q is None else p * q
    if op == "shl":
        p, s = poly_of(a[0]), bits_of(a[1])
        return None if p is None or s is None or s > 30 else p.scaled(1 << s)
    if op in ("shr", "lut", "and"):
        if op == "shr":
            name, s = _dim_name(a[0]), bits_of(a[1])
            if name is None or s is None or not 0 < s < 31:
                return None
            return Poly.symbol(f"{name}/{1 << s}")
        # a LUT's three operands; an AND is a & b & all ones (truth table 0x80)
        operands = list(a[1:]) if op == "lut" else [a[0], a[1], const(U32)]
        lut = a[0] if op == "lut" else 0x80
        dims = [i for i, x in enumerate(operands) if x.dims]
        if len(dims) != 1:
            return None
        name = _dim_name(operands[dims[0]])
        consts = [bits_of(x) for i, x in enumerate(operands) if i != dims[0]]
        if name is None or any(c is None for c in consts):
            return None
        found = _dim_field(lut, consts, dims[0])  # type: ignore[arg-type]
        if found is None or not 0 < found[1] < 31:
            return None
        m = 1 << found[1]
        if found[0] == "low":
            return Poly.symbol(f"{name}%{m}")
        return Poly.symbol(f"{name}/{m}").scaled(m)
    return None


def simplified(poly):
    """``poly`` with ``c·d − c·d%M`` written ``c·M·(d/M)`` (d a block dimension): what a
    test needs, every coefficient non-negative."""
    from gpumodeler.core.kernel.sass.addresses import Poly
    terms = dict(poly.terms)
    for name in DIM_NAMES:
        c = terms.get((name,), 0)
        for mono in [m for m in terms if len(m) == 1 and m[0].startswith(name + "%")]:
            m = int(mono[0].split("%")[1])
            if c and terms[mono] == -c:
                del terms[mono], terms[(name,)]
                key = (f"{name}/{m}",)
                terms[key] = terms.get(key, 0) + c * m
                break
    return Poly(terms)


def compare_truth(op: str, unsigned: bool, a, b):
    """``a op b`` of 32-bit values (arrays), read signed or unsigned as the compare reads
    them."""
    if not unsigned:
        a, b = signed(a), signed(b)
    return COMPARE[op](a, b)


__all__ = ["BLOCK_AXES", "DIM_NAMES", "cbank_offset", "MAX_DEPTH", "REG", "REG_MODS", "U32", "Follower", "Node", "bits_of",
           "compare_truth", "const", "dim", "evaluate", "is_predicate", "op_node", "poly_of",
           "signed", "simplified"]
