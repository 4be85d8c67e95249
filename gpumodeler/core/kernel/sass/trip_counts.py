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
  (``R17 = R13 + R10``), against a value the loop does not change; the loop has no other
  way out (a ``break``, an ``EXIT``: the count would be an upper bound). The counter's
  value on entry is its last write before the loop's header (program order, as the guards
  read values: :mod:`.guards`).
* **Values followed.** The entry value and the bound are followed back through their
  register writes (at most :data:`MAX_DEPTH` steps) to numbers and the block's dimensions in
  the constant bank (``c[0x0][0x0]`` on Volta to Hopper: the offsets the address analysis
  uses, :mod:`.addresses`), through ``MOV``, ``LDC``/``ULDC``, ``CS2R … SRZ``, Ampere's
  ``HFMA2.MMA`` of a constant, ``IMAD`` (not ``.HI``/``.WIDE``/``.X``),
  ``IADD3``, ``IADD``, ``IADD32I``, ``VIADD``, ``LEA``, ``ISCADD``, ``SHF``/``SHL``/``SHR``
  by a constant, ``LOP3.LUT`` (its truth table), ``LOP``/``LOP32I``, ``IABS`` and
  ``IMNMX``, in 32-bit arithmetic. A write that is predicated, in a loop the reader is not
  in, or in a loop around the reader that writes the register again (a value carried from
  trip to trip) stops it, and so does one a forward branch may jump over on its way to the
  reader (an ``if``/``else`` that writes it on one side); so does any other value (a
  parameter, the thread or block index, loaded data).
* **Trips of one loop** (a do-while, as compiled: at least one trip): with ``c1`` the
  counter's value at the compare on the first trip and ``s`` its step, the loop goes on
  while ``c1 + (j − 1)·s`` and the bound compare as the branch needs; the first trip ``j``
  on which they do not is the count (``<``, ``<=``, ``>``, ``>=`` with a step towards the
  bound, ``!=`` reaching it exactly; an unsigned compare only where every value is below
  2^31). A counter that would never meet its bound is a loop the code does not enter with
  that value (the compiler checks before it): no trips. Anything else is not derived.
* **An unrolled loop** (the loops of one source loop: :func:`.build._iteration_expressions`;
  its variable ``v`` counts the smallest loop's bodies): every loop of the group counts the
  same register down by its copies times one step ``d``, and the smallest stops at zero
  (``!= 0``, ``> 0``); then ``v = entry / d``, where the entry value is a multiple of ``d``
  for every block (nvcc's ``n − n % 4``). Or two loops, one of ``c`` copies with a count
  of its own and a remainder loop counting a register down to zero by ``d``, which holds
  a remainder below ``c`` (times ``d``) where the group starts: ``v = c · trips + that / d``.
* **The count as a formula.** The count is worked out for every block the count reads
  (``blockDim.x`` or ``.y`` from 1 to 1024, ``.z`` to 64; a count of two dimensions is not
  derived) and written as the first of these forms that gives it at every one: ``a·b + c``,
  ``floor((b + k) / m) + c`` (``m`` up to 64), ``floor(log2(b)) + c``, ``ceil(log2(b)) + c``
  (a halving counter), or any of them with at least one trip, ``max(1, …)``; ``b`` is
  ``block_x``, ``block_y`` or ``block_z``. A count that reads no
  dimension is a number.

The import gives such a loop's variable the formula (``KernelGraph.block_trips``: each launch
sets the variable from its block unless the user sets it,
:func:`gpumodeler.core.kernel.graph_items.launch_guard_values`) or the number (the
variable's default). What is left out: counts of the thread index (a grid-stride loop:
each thread its own count), of a kernel parameter or of data, and loops whose exit is not
one counter's compare (``break``, two exits).

The same following serves the guards (:func:`block_compares`): a compare of values of the
block's dimensions the address analysis does not follow (their bit fields, ``blockDim.x %
4 != 0``: the checks around an unrolled loop over ``blockDim.x``) becomes a thread test of
``ntid.x``, ``ntid.x%M`` and ``ntid.x/M`` (:mod:`.thread_tests`), kept only where it holds
exactly where the compare does at every block dimension.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
import re

import numpy as np

from gpumodeler.core.kernel.graph_items import BLOCK_DIMENSIONS
from gpumodeler.core.kernel.sass.addresses import half_pair
from gpumodeler.core.kernel.sass.listing import BRANCHES
#: steps back through register writes when following a value
MAX_DEPTH = 16
#: the largest block dimension along each axis (NVIDIA CUDA C++ Programming Guide,
#: "Technical Specifications per Compute Capability": x and y at most 1024, z at most 64)
DIM_MAX = (1024, 1024, 64)
_LARGEST_DIVISOR = 64
_U32 = 0xFFFFFFFF
_REG = re.compile(r"^(U?R)(\d+|Z)$")
_REG_MODS = re.compile(r"\.(reuse|U32|S32)$", re.I)
_STEP_ADDS = frozenset({"IADD3", "VIADD", "IADD", "IADD32I"})
_SETP_OPS = {"LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "EQ": "==", "NE": "!="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


@dataclass(frozen=True)
class TripCount:
    """What the listing says of a loop variable: ``formula`` an expression of
    :data:`~gpumodeler.core.kernel.graph_items.BLOCK_DIMENSIONS` (each launch's block sets the variable) or ``number`` (the
    variable's value at every launch)."""

    formula: str = ""
    number: int | None = None


# -- values -------------------------------------------------------------------------------

class _Node:
    """A value followed back to numbers and block dimensions: ``op`` and its inputs."""

    __slots__ = ("op", "args", "dims")

    def __init__(self, op: str, args: tuple, dims: frozenset):
        self.op, self.args, self.dims = op, args, dims


def _const(v: int) -> _Node:
    return _Node("const", (int(v) & _U32,), frozenset())


def _dim(axis: int) -> _Node:
    return _Node("dim", (axis,), frozenset({axis}))


def _op(op: str, *args) -> _Node:
    dims: frozenset = frozenset()
    for a in args:
        if isinstance(a, _Node):
            dims |= a.dims
    return _Node(op, args, dims)


class _Follower:
    """Follows register values back through a listing to numbers and block dimensions
    (:meth:`register`, :meth:`operand`: a :class:`_Node`, or None where the module's rules
    stop)."""

    def __init__(self, ins_list, access, n_dest, ranges, dim_offsets: dict):
        self.ins = ins_list
        self.access = access  # (written, read) per instruction
        self.n_dest = n_dest  # instruction -> its number of destination operands
        self.ranges = ranges
        self.dims = dim_offsets  # constant-bank offset -> axis 0, 1, 2
        self._writes: dict | None = None  # register -> the instructions writing it, in order
        self._jumps: list | None = None  # (branch index, target index) of forward branches
        #: (register, loop range): a loop's counter read inside that loop, as the symbol
        #: ``counter`` (its value on the trip: :func:`trip_tests`)
        self.counter: tuple | None = None

    def loops_of(self, k: int) -> list:
        return [r for r in self.ranges if r.header <= k <= r.latch]

    def skippable(self, j: int, k: int) -> bool:
        """Whether a forward branch may jump over instruction ``j`` to a place up to ``k``
        (``j`` then not on every path to ``k``: an if/else that writes the register on one
        side)."""
        if self._jumps is None:
            at = {ins.address: i for i, ins in enumerate(self.ins)}
            self._jumps = [(b, at[ins.target]) for b, ins in enumerate(self.ins)
                           if ins.mnemonic in BRANCHES and ins.target is not None
                           and at.get(ins.target, -1) > b]
        return any(b < j < t <= k for b, t in self._jumps)

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

    def register(self, reg: str, k: int, depth: int, entering=None) -> _Node | None:
        """The value of ``reg`` where instruction ``k`` reads it (``entering``: the loop
        whose header ``k`` is, entered from before it), or None."""
        if depth > MAX_DEPTH:
            return None
        if self.counter is not None and reg == self.counter[0] and \
                self.counter[1].header <= k <= self.counter[1].latch:
            return _Node("counter", (), frozenset())
        j = self.last_write(reg, k)
        if j is None or self.ins[j].guard or self.skippable(j, k):
            return None
        around = self.loops_of(k)
        # carried from one trip to the next: written again after k in a loop around k that
        # does not write it afresh before k on every trip
        if any(r is not entering and not r.header <= j and self.written_between(reg, k, r.latch)
               for r in around):
            return None
        if any(r not in around for r in self.loops_of(j)):
            return None  # left by a loop the reader is not in: its last trip's value
        return self.instruction(j, depth + 1)

    def operand(self, text: str, k: int, depth: int) -> _Node | None:
        t = text.strip()
        neg = t.startswith("-")
        t = t.lstrip("-")
        inverted = t.startswith("~")
        absolute = t.startswith("|") and t.endswith("|")
        t = t.strip("~|")
        if t.startswith("c["):
            ref = t.replace(" ", "").replace("[RZ]", "[0x0]").replace("[URZ]", "[0x0]")
            m = re.match(r"^c\[(0x[0-9a-f]+)\]\[(0x[0-9a-f]+)\]$", ref, re.I)
            if m is None or int(m.group(1), 16) != 0 or int(m.group(2), 16) not in self.dims:
                return None  # a kernel parameter or another constant
            node = _dim(self.dims[int(m.group(2), 16)])
        else:
            base = _REG_MODS.sub("", t)
            if base in ("RZ", "URZ"):
                node = _const(0)
            elif _REG.match(base):
                node = self.register(base, k, depth)  # type: ignore[assignment]
            else:
                try:
                    node = _const(int(base, 16) if base.lower().startswith("0x") else int(base))
                except ValueError:
                    return None
        if node is None:
            return None
        if absolute:
            node = _op("abs", node)
        if inverted:
            node = _op("not", node)
        return _op("neg", node) if neg else node

    def instruction(self, j: int, depth: int) -> _Node | None:
        """The value instruction ``j`` writes to its first destination, or None."""
        ins = self.ins[j]
        mnem, mods = ins.mnemonic, set(ins.modifiers)
        if mnem.startswith("U") and mnem[1:] in ("MOV", "IMAD", "IADD3", "LEA", "SHF", "LOP3",
                                                  "LDC"):
            mnem = mnem[1:]
        nd = self.n_dest(j)
        srcs = [o for o in ins.operands[nd:]]
        if nd < 1 or _is_predicate(ins.operands[0]) or any(
                o.strip() not in ("PT", "UPT") for o in ins.operands[1:nd]):
            return None  # one register written (and carry-outs to PT, written nowhere)

        def src(i):
            return self.operand(srcs[i], j, depth) if i < len(srcs) else None

        def all_of(*xs):
            return None if any(x is None for x in xs) else xs

        if mnem in ("MOV", "LDC", "LDCU") and srcs and "64" not in mods:
            return src(0)
        if mnem == "CS2R" and srcs and srcs[0].strip() == "SRZ":
            return _const(0)
        if mnem == "HFMA2" and len(srcs) == 4 and \
                {o.strip().lstrip("-") for o in srcs[:2]} == {"RZ"}:
            pair = half_pair(srcs[2], srcs[3])  # Ampere's way of writing a constant
            return None if pair is None else _const(pair.constant() or 0)
        if mnem == "IMAD" and not mods & {"HI", "WIDE", "X"} and len(srcs) >= 3:
            got = all_of(src(0), src(1), src(2))
            return got and _op("add", _op("mul", got[0], got[1]), got[2])
        if mnem == "IADD3" and "X" not in mods:
            values = [o for o in srcs if not _is_predicate(o)]
            got = all_of(*(self.operand(o, j, depth) for o in values))
            return got and _op("add", *got)
        if mnem in ("IADD", "IADD32I", "VIADD") and "X" not in mods and len(srcs) >= 2:
            got = all_of(src(0), src(1))
            return got and _op("add", *got)
        if mnem in ("LEA", "ISCADD", "ISCADD32I") and not mods & {"HI", "X"} and len(srcs) >= 3:
            got = all_of(src(0), src(1), src(2))
            return got and _op("add", _op("shl", got[0], got[2]), got[1])
        if mnem == "SHF" and len(srcs) >= 3 and mods & {"U32", "S32"}:
            if "L" in mods and "HI" not in mods:
                got = all_of(src(0), src(1))
                return got and _op("shl", *got)
            if "R" in mods and "HI" in mods and not mods & {"U64", "S64"}:
                got = all_of(src(2), src(1))
                return got and _op("sar" if "S32" in mods else "shr", *got)
            return None
        if mnem == "SHL" and len(srcs) >= 2:
            got = all_of(src(0), src(1))
            return got and _op("shl", *got)
        if mnem == "SHR" and len(srcs) >= 2:
            got = all_of(src(0), src(1))
            return got and _op("shr" if "U32" in mods else "sar", *got)
        if mnem == "LOP3" and "LUT" in mods and len(srcs) >= 4:
            try:
                lut = int(srcs[3].strip(), 0)
            except ValueError:
                return None
            got = all_of(src(0), src(1), src(2))
            return got and _op("lut", lut, *got)
        if mnem in ("LOP", "LOP32I") and len(srcs) >= 2:
            kind = next((m for m in ("AND", "OR", "XOR") if m in mods), None)
            got = all_of(src(0), src(1))
            return None if got is None or kind is None else _op(kind.lower(), *got)
        if mnem == "IABS" and srcs:
            got = all_of(src(0))
            return got and _op("abs", got[0])
        if mnem == "IMNMX" and len(srcs) >= 3 and srcs[2].strip() in ("PT", "!PT"):
            got = all_of(src(0), src(1))
            kind = ("max" if srcs[2].strip() == "!PT" else "min") + ("u" if "U32" in mods else "")
            return got and _op(kind, *got)
        return None


def _signed(v):
    v = v & _U32
    return np.where(v >= 2 ** 31, v - 2 ** 32, v)


def _evaluate(node: _Node, dims: tuple):
    """The value of ``node`` (an int64 array, 32-bit unsigned) for the block dimensions
    ``dims`` (three arrays or numbers)."""
    op, a = node.op, node.args
    if op == "const":
        return np.int64(a[0])
    if op == "dim":
        return np.asarray(dims[a[0]], dtype=np.int64) & _U32
    if op == "lut":
        lut, *xs = a
        x, y, z = (_evaluate(n, dims) for n in xs)
        out = np.zeros(np.broadcast(x, y, z).shape, dtype=np.int64)
        for bits in range(8):
            if lut >> bits & 1:
                term = np.full_like(out, _U32)
                for v, bit in ((x, 4), (y, 2), (z, 1)):
                    term &= v if bits & bit else ~v & _U32
                out |= term
        return out & _U32
    xs = [_evaluate(n, dims) for n in a]
    if op == "add":
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out & _U32
    if op == "mul":
        return (xs[0] * xs[1]) & _U32
    if op == "neg":
        return (-xs[0]) & _U32
    if op == "not":
        return ~xs[0] & _U32
    if op == "abs":
        return np.abs(_signed(xs[0])) & _U32
    if op == "shl":
        return (xs[0] << (xs[1] & 31)) & _U32
    if op == "shr":
        return (xs[0] >> (xs[1] & 31)) & _U32
    if op == "sar":
        return (_signed(xs[0]) >> (xs[1] & 31)) & _U32
    if op == "and":
        return xs[0] & xs[1] & _U32
    if op == "or":
        return (xs[0] | xs[1]) & _U32
    if op == "xor":
        return (xs[0] ^ xs[1]) & _U32
    if op == "min":
        return np.minimum(_signed(xs[0]), _signed(xs[1])) & _U32
    if op == "max":
        return np.maximum(_signed(xs[0]), _signed(xs[1])) & _U32
    if op in ("minu", "maxu"):
        return (np.minimum if op == "minu" else np.maximum)(xs[0], xs[1])
    raise ValueError(f"unknown value operation {op}")


# -- loops ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Counter:
    register: str
    step: int  # added once per trip
    first: _Node | None  # its value at the compare on the first trip
    entry: _Node | None  # its value on entering the loop (None: not followed)
    bound: _Node
    op: str  # the loop goes on while ``counter op bound``
    unsigned: bool
    #: a counter halved each trip (``s >>= 1``: a reduction tree): the bits it shifts right
    #: by (``step`` is then 0), and whether the shift keeps the sign
    shift: int = 0
    arithmetic: bool = False


def _counter(f: _Follower, r, entry_needed: bool = True) -> _Counter | None:
    """The counter of loop range ``r`` (the module rules), or None; ``entry_needed``
    False: its entry value may be one the module does not follow (a remainder loop's)."""
    ins = f.ins
    t = r.latch
    latch = ins[t]
    condition = latch.guard or (latch.operands[0].strip() if latch.operands
                                and _is_predicate(latch.operands[0]) else "")
    if len(r.back_edges) != 1 or latch.mnemonic not in BRANCHES or \
            condition.lstrip("@!") in ("", "PT", "UPT"):
        return None
    for j in range(r.header, t):  # one way out: no break, no exit in the loop
        if ins[j].mnemonic in ("EXIT", "RET", "BRK") or (
                ins[j].mnemonic in BRANCHES and ins[j].target is not None
                and not ins[r.header].address <= ins[j].target <= latch.address):
            return None
    pred = condition.lstrip("@!")
    goes_on_when = not condition.lstrip("@").startswith("!")
    s = f.last_write(pred, t)
    if s is None or s < r.header or ins[s].mnemonic not in ("ISETP", "UISETP") or ins[s].guard:
        return None
    ops = [o.strip() for o in ins[s].operands]
    if len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT", "UPT", "!UPT")) or \
            ops[0] != pred:
        return None
    cmp = next((_SETP_OPS[m] for m in ins[s].modifiers if m in _SETP_OPS), None)
    if cmp is None:
        return None
    op = cmp if goes_on_when else _NEGATED[cmp]
    regs = [_REG_MODS.sub("", o) for o in ops[2:4]]
    inside = [f.written_between(reg, r.header, t) if _REG.match(reg) and reg not in ("RZ", "URZ")
              else False for reg in regs]
    if inside.count(True) != 1:
        return None
    pos = inside.index(True)
    reg = regs[pos]
    if pos == 1:
        op = _MIRRORED[op]
    u = _once_per_trip(f, r, reg)
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
        first = _op("sar" if arithmetic else "shr", entry, _const(k)) if u < s else entry
        return _Counter(reg, 0, first, entry, bound, op, unsigned, k, arithmetic)
    step = _step(ins[u], reg, f.n_dest(u))
    if step is not None:  # the counter itself: IADD3 R, R, step
        start = f.register(reg, r.header, 0, entering=r)
        if start is None and entry_needed:
            return None
        added = None if start is None else _op("add", start, _const(step)) if u < s else start
        return _Counter(reg, step, added, start, bound, op, unsigned)
    # a value the loop recomputes from a counter and values it does not change
    # (R17 = R13 + R10 with R10 += 4: nvcc's unrolled loop against n - n % 4)
    if u > s or ins[u].mnemonic not in ("IADD3", "IADD", "IMAD", "UIADD3") or \
            "X" in ins[u].modifiers:
        return None
    srcs = [o.strip() for o in ins[u].operands[f.n_dest(u):] if not _is_predicate(o)]
    if ins[u].mnemonic == "IMAD":
        if "IADD" not in ins[u].modifiers or len(srcs) != 3 or srcs[1] not in ("0x1", "1"):
            return None
        srcs = [srcs[0], srcs[2]]
    counters = [o for o in srcs if _REG.match(_REG_MODS.sub("", o.lstrip("-")))
                and f.written_between(_REG_MODS.sub("", o.lstrip("-")), r.header, t)]
    if len(counters) != 1 or counters[0].startswith("-"):
        return None
    inner = _REG_MODS.sub("", counters[0])
    v = _once_per_trip(f, r, inner)
    inner_step = None if v is None else _step(ins[v], inner, f.n_dest(v))
    if inner_step is None:
        return None
    others = [f.operand(o, u, 0) for o in srcs if o != counters[0]]
    inner_entry = f.register(inner, r.header, 0, entering=r)
    if inner_entry is None or any(o is None for o in others):
        return None
    assert v is not None
    first = _op("add", inner_entry, _const(inner_step if v < u else 0), *others)
    return _Counter(reg, inner_step, first, None, bound, op, unsigned)


def _once_per_trip(f: _Follower, r, reg: str) -> int | None:
    """The one instruction of loop ``r`` that writes ``reg``, where it runs once a trip (not
    predicated, not in an inner loop, not skipped by a branch); else None."""
    writes = f.writes_between(reg, r.header, r.latch)
    if len(writes) != 1:
        return None
    u = writes[0]
    if f.ins[u].guard or _skipped(f, r, u):
        return None
    if any(o is not r and r.header <= o.header and o.latch <= r.latch for o in f.loops_of(u)):
        return None  # in an inner loop: not once per trip
    return u


def _is_predicate(text: str) -> bool:
    return re.match(r"^!?U?P([0-7]|T)$", text.strip()) is not None


def _step(ins, reg: str, nd: int) -> int | None:
    """The constant ``ins`` adds to ``reg`` (``IADD3 R, R, -0x10, RZ``), or None."""
    mnem = ins.mnemonic[1:] if ins.mnemonic in ("UIADD3", "UVIADD") else ins.mnemonic
    if mnem not in _STEP_ADDS or "X" in ins.modifiers or nd < 1 or any(
            o.strip() not in ("PT", "UPT") for o in ins.operands[1:nd]):
        return None
    if _REG_MODS.sub("", ins.operands[0].strip()) != reg:
        return None
    srcs = [o.strip() for o in ins.operands[nd:]]
    if any(_is_predicate(o) for o in srcs):
        return None
    others = [o for o in srcs if _REG_MODS.sub("", o) != reg and o not in ("RZ", "URZ")]
    if sum(_REG_MODS.sub("", o) == reg for o in srcs) != 1 or len(others) != 1:
        return None
    try:
        k = int(others[0], 0)
    except ValueError:
        return None
    k &= _U32
    return k - 2 ** 32 if k >= 2 ** 31 else k


def _halving(f: _Follower, r, reg: str, u: int) -> tuple | None:
    """``(k, arithmetic)`` where loop ``r``'s one write ``u`` of ``reg`` sets it to itself
    shifted right by ``k``: in place, or a copy (``MOV R4, R5``) of a register the loop
    shifted from it once before (``SHF.R.U32.HI R5, RZ, 0x1, R4``); else None."""
    direct = _shift_step(f.ins[u], reg, reg, f.n_dest(u))
    if direct is not None:
        return direct
    ins = f.ins[u]
    ops = [_REG_MODS.sub("", o.strip()) for o in ins.operands]
    if ins.mnemonic == "MOV" and len(ops) == 2:
        copied = ops[1]
    elif ins.mnemonic == "IMAD" and "MOV" in ins.modifiers and len(ops) == 4 and \
            ops[1:3] == ["RZ", "RZ"]:
        copied = ops[3]
    else:
        return None
    if not _REG.match(copied):
        return None
    v = _once_per_trip(f, r, copied)
    if v is None or v > u:
        return None
    return _shift_step(f.ins[v], copied, reg, f.n_dest(v))


def _shift_step(ins, dest: str, reg: str, nd: int) -> tuple | None:
    """``(k, arithmetic)`` where ``ins`` writes ``dest`` with ``reg`` shifted right by a
    constant ``k`` (``SHF.R.U32.HI R, RZ, 0x1, R``; ``SHF.R.S32.HI``; Maxwell's ``SHR``),
    else None."""
    ops = [_REG_MODS.sub("", o.strip()) for o in ins.operands]
    mods = set(ins.modifiers)
    if nd != 1 or not ops or ops[0] != dest:
        return None
    if ins.mnemonic == "SHF" and {"R", "HI"} <= mods and mods & {"U32", "S32"} and \
            len(ops) == 4 and ops[1] == "RZ" and ops[3] == reg:
        amount, arithmetic = ops[2], "S32" in mods
    elif ins.mnemonic == "SHR" and len(ops) == 3 and ops[1] == reg:
        amount, arithmetic = ops[2], "U32" not in mods
    else:
        return None
    try:
        k = int(amount, 0)
    except ValueError:
        return None
    return (k, arithmetic) if 0 < k < 32 else None


def _skipped(f: _Follower, r, u: int) -> bool:
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
    first = _evaluate(c.first, dims)
    bound = _evaluate(c.bound, dims)
    if c.shift:
        return _halving_trips(c, first, bound)
    if c.unsigned:
        if np.any(first >= 2 ** 31) or np.any(bound >= 2 ** 31):
            return None
    first, bound = _signed(first), _signed(bound)
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
    """The trips of a do-while loop whose counter is shifted right by ``c.shift`` each trip
    (at most 32 before it is 0 or -1 for good): None where it would go on for ever."""
    first, bound = np.broadcast_arrays(first, bound)
    value, trips = first.copy(), np.zeros(first.shape, dtype=np.int64)
    going = np.ones(first.shape, dtype=bool)
    for _ in range(34):
        trips += going
        going &= _compare_truth(c.op, c.unsigned, value, bound)
        if not going.any():
            return trips
        value = (_signed(value) >> c.shift) & _U32 if c.arithmetic else value >> c.shift
    return None


def _domain(dims_used: frozenset):
    """The block dimensions to evaluate a count at: every value of the one axis it reads
    (the others 1), or one block when it reads none; None for two or more axes."""
    if not dims_used:
        return None, (np.int64(1), np.int64(1), np.int64(1))
    if len(dims_used) > 1:
        return None
    axis = next(iter(dims_used))
    values = np.arange(1, DIM_MAX[axis] + 1, dtype=np.int64)
    dims = tuple(values if a == axis else np.int64(1) for a in range(3))
    return axis, dims


def _fit(b: str, ws, vs) -> str | None:
    """``a·b + c`` or ``floor((b + k) / m) + c`` giving ``vs`` at every ``ws``, as text."""
    if len(ws) >= 2 and ws[1] != ws[0]:
        a = int(vs[1] - vs[0]) // int(ws[1] - ws[0])
        c = int(vs[0]) - a * int(ws[0])
        if np.array_equal(a * ws + c, vs):
            core = b if a == 1 else f"{a} * {b}" if a else ""
            return f"{core} {'+' if c > 0 else '-'} {abs(c)}" if core and c else core or str(c)
    for m in range(2, _LARGEST_DIVISOR + 1):
        for k in range(m):
            base = (ws + k) // m
            c = int(vs[0] - base[0])
            if np.array_equal(base + c, vs):
                core = f"floor({b} / {m})" if not k else f"floor(({b} + {k}) / {m})"
                return f"{core} {'+' if c > 0 else '-'} {abs(c)}" if c else core
    logs = np.log2(ws.astype(float))
    for name, base in (("floor", np.floor(logs)), ("ceil", np.ceil(logs))):
        c = int(vs[0] - base[0])
        if np.array_equal(base + c, vs):
            core = f"{name}(log2({b}))"
            return f"{core} {'+' if c > 0 else '-'} {abs(c)}" if c else core
    return None


def _formula(axis: int, w, v) -> str | None:
    """The first of the module's forms that gives ``v`` at every ``w``, as text."""
    from gpumodeler.core.kernel.expressions import parse
    b = BLOCK_DIMENSIONS[axis]
    text = _fit(b, w, v)
    if text is not None:
        return parse(text).text
    more = v > 1
    if np.all(v >= 1) and more.any() and not more.all():
        inner = _fit(b, w[more], v[more])
        if inner is not None:
            e = parse(f"max(1, {inner})")
            if np.array_equal(np.asarray(e.evaluate({b: w.astype(float)})), v):
                return e.text
    return None


def _describe(counted, divisor: int = 1) -> TripCount | None:
    """The :class:`TripCount` of ``counted = (count, the dimensions it reads)``: ``count``
    a function of the block dimensions evaluated over :func:`_domain` (None: not derived),
    ``divisor`` dividing it exactly; or None."""
    count, dims_used = counted
    domain = _domain(dims_used)
    if domain is None:
        return None
    axis, dims = domain
    v = count(dims)
    if v is None:
        return None
    v = np.asarray(v, dtype=np.int64)
    if np.any(v < 0) or np.any(v % divisor):
        return None
    v = v // divisor
    if axis is None:
        return TripCount(number=int(np.ravel(v)[0]))
    text = _formula(axis, dims[axis], np.broadcast_to(v, dims[axis].shape))
    return TripCount(formula=text) if text else None


def loop_trip_counts(ins_list, access, n_dest, ranges, groups: dict, dim_offsets: dict) -> dict:
    """``{variable: TripCount}`` of the loop variables the listing decides (the module
    rules). ``groups``: variable -> ``[(loop index, copies), …]``, its loops (one loop of one
    copy for a loop of its own; an unrolled group most copies first, the smallest last)."""
    f = _Follower(ins_list, access, n_dest, ranges, dim_offsets)
    out: dict = {}
    for var, members in groups.items():
        try:
            found = _group_count(f, ranges, members)
        except (ValueError, OverflowError):
            found = None
        if found is not None:
            out[var] = found
    return out


def _group_count(f: _Follower, ranges, members) -> TripCount | None:
    if len(members) == 1:
        c = _counter(f, ranges[members[0][0]])
        if c is None or c.first is None:
            return None
        return _describe((lambda dims: _trips(c, dims), c.first.dims | c.bound.dims))
    first = min((k for k, _ in members), key=lambda k: ranges[k].header)
    counters = [(_counter(f, ranges[k], entry_needed=k == first), copies) for k, copies in members]
    if any(c is None for c, _ in counters):
        return None
    found = _shared_countdown(counters, members, first, ranges)
    return found if found is not None else _unrolled_and_remainder(f, ranges, members, counters)


def _shared_countdown(counters, members, first, ranges) -> TripCount | None:
    """An unrolled group whose loops count one register down to zero (the module rules)."""
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
    bound = _evaluate(smallest.bound, (1, 1, 1))
    # the smallest loop stops at zero: goes on while != 0, > 0 or >= 1
    if (smallest.op, int(bound)) not in (("!=", 0), (">", 0), (">=", 1)):
        return None
    c0 = next(c for (c, _), (k, _) in zip(counters, members) if k == first)
    assert c0 is not None
    entry = c0.entry
    if entry is None:
        return None

    def count(dims):
        v = _signed(_evaluate(entry, dims))
        return None if np.any(v < 0) else v
    return _describe((count, entry.dims), divisor=d)


def _unrolled_and_remainder(f: _Follower, ranges, members, counters) -> TripCount | None:
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
    bound = _evaluate(small.bound, (1, 1, 1))
    if small.step >= 0 or small.bound.dims or (small.op, int(bound)) not in (
            ("!=", 0), (">", 0), (">=", 1)):
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
        rest = _signed(_evaluate(left, dims))
        if trips is None or np.any(rest < 0) or np.any(rest % d) or np.any(rest // d >= c):
            return None
        return c * trips + rest // d
    return _describe((count, big.first.dims | big.bound.dims | left.dims))


__all__ = ["TripCount", "block_compares", "loop_trip_counts", "trip_tests"]


# -- compares the block decides (guards) ---------------------------------------------------

_DIM_NAMES = ("ntid.x", "ntid.y", "ntid.z")


def _bits_of(node: _Node) -> int | None:
    """The value of a node that reads no block dimension (32 bits), or None."""
    if node.dims:
        return None
    return int(np.asarray(_evaluate(node, (1, 1, 1))).ravel()[0]) & _U32


def _dim_name(node: _Node) -> str | None:
    """``ntid.x`` (``.y``, ``.z``) where ``node`` is a block dimension itself, else None."""
    if len(node.dims) != 1:
        return None
    p = _poly(node)
    name = _DIM_NAMES[next(iter(node.dims))]
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


def _poly(node: _Node):
    """The polynomial (:class:`.addresses.Poly`) of a value of the block's dimensions and
    numbers: ``ntid.x``, its bit fields ``ntid.x%M`` and ``ntid.x/M`` (M a power of two);
    None for what it cannot write."""
    from gpumodeler.core.kernel.sass.addresses import Poly
    op, a = node.op, node.args
    if op == "const":
        v = a[0] & _U32
        return Poly.const(v - 2 ** 32 if v >= 2 ** 31 else v)
    if op == "dim":
        return Poly.symbol(_DIM_NAMES[a[0]])
    if op == "add":
        out = Poly()
        for x in a:
            p = _poly(x)
            if p is None:
                return None
            out = out + p
        return out
    if op == "neg":
        p = _poly(a[0])
        return None if p is None else p.scaled(-1)
    if op == "mul":
        p, q = _poly(a[0]), _poly(a[1])
        return None if p is None or q is None else p * q
    if op == "shl":
        p, s = _poly(a[0]), _bits_of(a[1])
        return None if p is None or s is None or s > 30 else p.scaled(1 << s)
    if op in ("shr", "lut", "and"):
        if op == "shr":
            name, s = _dim_name(a[0]), _bits_of(a[1])
            if name is None or s is None or not 0 < s < 31:
                return None
            return Poly.symbol(f"{name}/{1 << s}")
        # a LUT's three operands; an AND is a & b & all ones (truth table 0x80)
        operands = list(a[1:]) if op == "lut" else [a[0], a[1], _const(_U32)]
        lut = a[0] if op == "lut" else 0x80
        dims = [i for i, x in enumerate(operands) if x.dims]
        if len(dims) != 1:
            return None
        name = _dim_name(operands[dims[0]])
        consts = [_bits_of(x) for i, x in enumerate(operands) if i != dims[0]]
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


def _simplified(poly):
    """``poly`` with ``c·d − c·d%M`` written ``c·M·(d/M)`` (d a block dimension): what a
    test needs, every coefficient non-negative."""
    from gpumodeler.core.kernel.sass.addresses import Poly
    terms = dict(poly.terms)
    for name in _DIM_NAMES:
        c = terms.get((name,), 0)
        for mono in [m for m in terms if len(m) == 1 and m[0].startswith(name + "%")]:
            m = int(mono[0].split("%")[1])
            if c and terms[mono] == -c:
                del terms[mono], terms[(name,)]
                key = (f"{name}/{m}",)
                terms[key] = terms.get(key, 0) + c * m
                break
    return Poly(terms)


def _compare_truth(op: str, unsigned: bool, a, b):
    if not unsigned:
        a, b = _signed(a), _signed(b)
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b,
            "!=": a != b}[op]


def block_compares(ins_list, access, n_dest, ranges, dim_offsets, indices) -> dict:
    """``{index: (value, value)}`` of the integer compares at ``indices`` (``ISETP``) whose
    two values follow (:class:`_Follower`) to numbers and one of the block's dimensions
    (``blockDim.x % 4 != 0``, ``blockDim.x − 1 >= 3``: the checks around an unrolled loop
    over ``blockDim.x``), written as polynomials of ``ntid.x``, ``ntid.x%M`` and
    ``ntid.x/M`` with the number moved to the right; kept only where the thread test the
    guards make of them (:func:`.guards.setter_test`) holds, on each side, exactly where
    the compare does for every block dimension from 1 to its largest."""
    from gpumodeler.core.kernel.sass.addresses import Poly
    from gpumodeler.core.kernel.sass.guards import setter_test
    from gpumodeler.core.kernel.sass.thread_tests import test_holds
    f = _Follower(ins_list, access, n_dest, ranges, dim_offsets)
    out: dict = {}
    for s in indices:
        ins = ins_list[s]
        ops = [o.strip() for o in ins.operands]
        if ins.mnemonic != "ISETP" or len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT")):
            continue
        cmp = next((_SETP_OPS[m] for m in ins.modifiers if m in _SETP_OPS), None)
        a, b = f.operand(ops[2], s, 0), f.operand(ops[3], s, 0)
        if cmp is None or a is None or b is None or len(a.dims | b.dims) != 1:
            continue
        pa, pb = _poly(a), _poly(b)
        if pa is None or pb is None:
            continue
        pa, pb = _simplified(pa), _simplified(pb)
        side, bound = (pa, pb) if pa.symbols() else (pb, pa)
        number = side.terms.get((), 0)
        side, bound = side + Poly.const(-number), bound + Poly.const(-number)
        pair = (side, bound) if pa.symbols() else (bound, side)
        domain = _domain(a.dims | b.dims)
        if domain is None:
            continue
        axis, dims = domain
        truth = _compare_truth(cmp, "U32" in ins.modifiers, _evaluate(a, dims), _evaluate(b, dims))
        ok = True
        for runs in (True, False):
            text = setter_test(ins, {ins.address: pair}, runs)
            if text is None or not np.array_equal(test_holds(text, dims), truth == runs):
                ok = False
                break
        if ok:
            out[s] = pair
    return out


# -- thread tests against a loop's halving counter (a reduction tree's if (tid < s)) ------

def trip_tests(ins_list, access, n_dest, ranges, dim_offsets, groups: dict, compared: dict,
               indices) -> dict:
    """``{compare index: (thread value, op, first, shift, trips variable)}`` of the integer
    compares at ``indices`` that test a value of the thread index against a loop's halving
    counter (``if (tid < s)`` in ``for (s = blockDim.x / 2; s > 0; s >>= 1)``):

    * the compare (``ISETP``, not combined with another predicate) is in a loop of its own
      (not an unrolled group) whose counter halves each trip (:func:`loop_trip_counts`' rules)
      and is written after the compare in the trip;
    * one side is a value of the thread index (``compared``, the address analysis's), the
      other the counter or the counter shifted right by a constant ``m``;
    * ``first``, that side's value on the first trip, a formula of the block's dimensions
      (the forms of :func:`_formula`) or a number; on trip ``j`` it is ``first >> shift·(j−1)``.

    ``op`` is the compare's, read with the thread value on the left; ``trips variable`` the
    loop's. Each launch averages the share of the block's warps passing the test over the
    loop's trips (:func:`gpumodeler.core.kernel.graph_items.launch_guard_values`)."""
    from gpumodeler.core.kernel.sass.bitfields import is_lane_varying
    f = _Follower(ins_list, access, n_dest, ranges, dim_offsets)
    own = {members[0][0]: var for var, members in groups.items() if len(members) == 1}
    out: dict = {}
    for s in indices:
        ins = ins_list[s]
        ops = [o.strip() for o in ins.operands]
        pair = compared.get(ins.address)
        cmp = next((_SETP_OPS[m] for m in ins.modifiers if m in _SETP_OPS), None)
        if ins.mnemonic != "ISETP" or len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT")) \
                or pair is None or cmp is None:
            continue
        around = [k for k, r in enumerate(ranges) if r.header <= s <= r.latch]
        if not around:
            continue
        k = max(around, key=lambda i: ranges[i].header)
        r = ranges[k]
        c = _counter(f, r) if k in own else None
        if c is None or not c.shift or c.entry is None:
            continue
        u = _once_per_trip(f, r, c.register)
        if u is None or u < s:
            continue
        for pos in (0, 1):
            thread = pair[pos]
            if thread is None or not any(is_lane_varying(x) for x in thread.symbols()) or \
                    any(x.startswith(("data@", "f@", "v@")) for x in thread.symbols()):
                continue
            f.counter = (c.register, r)
            try:
                other = f.operand(ops[3 - pos], s, 0)
            finally:
                f.counter = None
            m = _counter_shift(other)
            if m is None:
                continue
            first = _op("shr", c.entry, _const(m))
            text = _first_text(first)
            if text is not None:
                out[s] = (thread.text(), cmp if pos == 0 else _MIRRORED[cmp], text, c.shift,
                          own[k])
            break
    return out


def _counter_shift(node: _Node | None) -> int | None:
    """``m`` where ``node`` is the loop's counter shifted right by ``m`` (0: itself)."""
    if node is None:
        return None
    if node.op == "counter":
        return 0
    if node.op in ("shr", "sar") and node.args[0].op == "counter":
        m = _bits_of(node.args[1])
        return m if m is not None and 0 <= m < 31 else None
    return None


def _first_text(node: _Node) -> str | None:
    """``node``, a value of the block's dimensions, as a formula (or a number), or None."""
    domain = _domain(node.dims)
    if domain is None:
        return None
    axis, dims = domain
    v = _signed(np.asarray(_evaluate(node, dims), dtype=np.int64))
    if np.any(v < 0):
        return None
    if axis is None:
        return str(int(np.ravel(v)[0]))
    return _formula(axis, dims[axis], np.broadcast_to(v, dims[axis].shape))
