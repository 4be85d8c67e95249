"""How often guarded code runs: the guards of an imported SASS function (docs/sass-import.md,
"Guards").

Code under a guard does not run for every warp: a predicated instruction (``@P0 LDG``), the
instructions a forward conditional branch skips (``@P0 BRA`` over them) and everything after a
conditional ``@P0 EXIT``. Each gets a :class:`~gpumodeler.core.kernel.graph_items.Guard`
whose fraction multiplies its counts per warp (:mod:`gpumodeler.core.kernel.warp_counts`, as
a loop's iteration count does: Gajger §4.4.3 counts each instruction as often as it runs).
The fraction is derived where the predicate is worked out from the thread or block index
alone, else it is a variable:

* **the thread index against a number no index reaches** (``ISETP`` of a register
  ``S2R SR_TID.*`` wrote against an immediate, where no index a block can have: ``tid.x``,
  ``.y`` below 1024, ``.z`` below 64, reaches one side): that side never runs (fraction 0:
  a debug branch on ``threadIdx.x > 1243``), the other always does (no guard);
* **the block index against a number no index reaches** (a value of the block index
  alone, ``30 · ctaid.z``, against a number no index a grid can have reaches: ``ctaid.x``
  below 2^31 − 1, ``.y`` and ``.z`` below 65535): that side never runs, the other always
  does (nvcc's check that a plane index would overflow);
* **a thread test** (:mod:`.thread_tests`): an ``ISETP`` of a value of the thread index
  alone (as the address analysis follows the compared register: ``tid.x``, ``tid.x%32``,
  ``tid.x/32``, ``tid.x + 16·tid.y``) against a number: ``threadIdx.x < 3``, ``lane == 0``,
  ``threadIdx.x == 0``; or of the block's dimensions alone, their bit fields too
  (``blockDim.x % 4 != 0``: :func:`.block_tests.block_compares`). A variable ``guardN``
  with the test, which each launch sets to the share of its block's warps with a thread
  that passes it
  (:func:`gpumodeler.core.kernel.graph_items.launch_guard_values`); its default, the share
  in a block of :data:`DEFAULT_WARPS_PER_BLOCK` warps. A thread test folded with a bounds
  check into one predicate counts where the code runs on their conjunction
  (:func:`_combined_test`);
* **the thread index against zero** through a value the analysis does not follow (an
  ``ISETP.EQ``/``.NE`` against ``RZ`` of a register of thread-index origin only): the zero
  side runs in one warp of the block, ``1/warps_per_block`` (the variable
  ``warps_per_block``, default :data:`DEFAULT_WARPS_PER_BLOCK`; ``predict`` sets it from
  ``--block-size`` when it is not ``--set``); the other side runs in every warp (no guard).
* **a bounds check**: the thread or block index against anything else (``i < n``): every
  thread of a full block runs it, fraction 1 (no guard). The last, partial block is not
  modelled (the choice: blocks are full).
* **one kernel parameter alone** (``decided``, :func:`.parameter_trips.guard_deciders`: a
  remainder's check, ``(2 * r + 1) & 3 != 1``): a variable ``guardN`` with a formula of the
  parameter (``graph.block_trips``) each launch that gives the parameter applies;
* **anything else** (a kernel parameter, loaded data, the thread index against another
  register): a variable ``guard1``, ``guard2``, … with default :data:`DEFAULT_FRACTION` = 1
  (the choice: guarded code counts as always run, the counts of an import without guards,
  an upper bound), set with ``--set guard1=0.25`` like a loop count. Guards whose predicates
  are computed alike (the same comparison of values of the same origins: e.g. every unrolled
  copy of ``if (x[k] > t)``) share one variable.

A forward branch that leaves the loop it is in (a trip-count check of an unrolled loop, a
``break``) gets no guard: the loop's iteration count says how often the body runs.

On Maxwell and Pascal an ``if`` is ``SSY`` (where the threads meet again) and ``@P0 SYNC``
(the threads that skip the body go there): a conditional ``SYNC`` is a forward jump to the
innermost open ``SSY``'s address; an unconditional one closes it.

A predicated instruction is still issued by its warp (a ``predicate`` guard scales the data
it moves only); the code a branch or an EXIT skips is not issued (a ``region`` guard scales
every count). Where a predicate comes from is followed back through the nearest earlier
write of each register in program order (not the control-flow graph: a simplification, at
most :data:`MAX_DEPTH` steps).
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
import re

from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.graph_items import Guard, trip_test_share, trip_test_step
from gpumodeler.core.kernel.opcodes import classify
from gpumodeler.core.kernel.sass import cfg
from gpumodeler.core.kernel.sass.listing import BRANCHES, SassFunction
from gpumodeler.core.kernel.sass.operands import reg_access
from gpumodeler.core.kernel.sass.thread_tests import (MIRRORED, NEGATED, SETP_OPS, conjunction,
                                                      is_thread_value, offset_thread_value,
                                                      thread_test, warp_share)

#: Default of a guard variable: guarded code counts as always run.
DEFAULT_FRACTION = 1
#: Default warps per block of ``warps_per_block`` (256 threads).
DEFAULT_WARPS_PER_BLOCK = 8
#: Steps back through register writes when finding where a predicate comes from.
MAX_DEPTH = 12
ONCE_PER_BLOCK = "1/warps_per_block"


def _origins(k, ins_list, defs_of, units, memo, depth=0) -> frozenset:
    """Where instruction ``k``'s result comes from: ``tid``, ``ctaid``, ``param`` (constant
    bank 0: parameters and launch sizes), ``data`` (a load), ``other``."""
    if k in memo:
        return memo[k]
    ins = ins_list[k]
    out = set()
    text = " ".join(ins.operands)
    if ins.mnemonic in ("S2R", "CS2R", "S2UR"):
        out.add("ctaid" if "CTAID" in text else "tid" if "SR_TID" in text else "other")
    elif units[k] == "ldst" and ins.mnemonic not in ("LDC", "ULDC", "LDCU"):
        out.add("data")
    else:
        if "c[0x0]" in text.replace(" ", ""):
            out.add("param")
        if depth < MAX_DEPTH:
            for d in defs_of[k]:
                out |= _origins(d, ins_list, defs_of, units, memo, depth + 1)
    memo[k] = frozenset(out)
    return memo[k]


def _zero_test(ins) -> str | None:
    """'eq' or 'ne' when ``ins`` is an integer compare of a register against zero."""
    if ins.mnemonic != "ISETP":
        return None
    ops = [o.strip() for o in ins.operands]
    if len(ops) < 4 or not any(o in ("RZ", "0x0", "0") for o in ops[2:4]):
        return None
    if ops[4:] and ops[-1] not in ("PT", "!PT"):
        return None  # combined with another predicate
    mods = set(ins.modifiers)
    return "eq" if "EQ" in mods else "ne" if "NE" in mods else None


#: the largest thread index along each axis (blockDim.x and .y at most 1024, .z at most 64:
#: NVIDIA CUDA C++ Programming Guide, "Technical Specifications per Compute Capability")
_TID_MAX = {"SR_TID.X": 1023, "SR_TID.Y": 1023, "SR_TID.Z": 63}
_COMPARE = {"LT": lambda t, c: t < c, "LE": lambda t, c: t <= c, "GT": lambda t, c: t > c,
            "GE": lambda t, c: t >= c, "EQ": lambda t, c: t == c, "NE": lambda t, c: t != c}


def _constant_test(k: int, ins_list, defs_of) -> tuple | None:
    """``(always true, always false)`` for a compare ``ins_list[k]`` of the thread index
    itself (a register ``S2R SR_TID.*`` wrote) against a number, over every index a block
    may have; None for any other instruction (another value, another operand, a compare
    combined with another predicate)."""
    ins = ins_list[k]
    ops = [o.strip() for o in ins.operands]
    if ins.mnemonic != "ISETP" or len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT")):
        return None
    cmp = next((m for m in ins.modifiers if m in _COMPARE), None)
    try:
        c = int(ops[3], 0)
    except ValueError:
        return None
    source = next((d for d in defs_of[k] if ins_list[d].mnemonic == "S2R"
                   and ins_list[d].operands and ins_list[d].operands[0].strip() == ops[2]), None)
    axis = None if source is None else ins_list[source].operands[-1].strip().upper()
    if cmp is None or axis not in _TID_MAX:
        return None
    return _over_range(cmp, 0, _TID_MAX[axis], c)


#: the largest block index along each axis (gridDim.x at most 2^31 − 1, .y and .z at most
#: 65535: NVIDIA CUDA C++ Programming Guide, "Technical Specifications per Compute
#: Capability")
_CTAID_MAX = {"ctaid.x": 2 ** 31 - 2, "ctaid.y": 65534, "ctaid.z": 65534}


def _block_index_test(setter, compared: dict) -> tuple | None:
    """``(always true, always false)`` for a compare of a value of the block index alone (a
    sum of ``ctaid.*`` with coefficients of one sign, plus a number: ``30 · ctaid.z``, as
    the address analysis follows it) against a number, over every index a grid may have
    (nvcc's check that a plane index would overflow, ``30 · blockIdx.z >= 0x7fffffe3``,
    holds for no block); None for any other compare."""
    ops = [o.strip() for o in setter.operands]
    cmp = next((m for m in setter.modifiers if m in _COMPARE), None)
    values = compared.get(setter.address)
    if setter.mnemonic != "ISETP" or cmp is None or values is None or None in values or \
            len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT")) or \
            "U32" in setter.modifiers:
        return None
    a, b = values
    c = b.constant()
    if c is None or not a.terms:
        return None
    low = high = a.terms.get((), 0)
    for monomial, k in a.terms.items():
        if not monomial:
            continue
        if len(monomial) != 1 or monomial[0] not in _CTAID_MAX:
            return None
        reach = k * _CTAID_MAX[monomial[0]]
        low, high = low + min(0, reach), high + max(0, reach)
    if low < -2 ** 31 or high >= 2 ** 31:
        return None  # the 32-bit value may wrap: not decided here
    return _over_range(cmp, low, high, c)


def _over_range(cmp: str, low: int, high: int, c: int) -> tuple:
    """``(always true, always false)`` of ``v cmp c`` over every ``v`` from ``low`` to
    ``high``: the ends decide an order compare, the number itself (where it lies in
    between) an equality."""
    outcomes = {_COMPARE[cmp](v, c) for v in (low, high, min(max(c, low), high))}
    return outcomes == {True}, outcomes == {False}


#: the integer minimum/maximum (``IMNMX R0, R1, R2, PT``: the minimum, ``!PT``: the maximum;
#: Blackwell's ``VIMNMX`` may print two predicate operands after the destination)
MIN_MAX = frozenset({"IMNMX", "VIMNMX"})


def min_max_sources(ins) -> tuple:
    """The two values a ``IMNMX``/``VIMNMX`` compares (its operands but the destination,
    the predicates and the selector)."""
    return tuple(o for o in (x.strip() for x in ins.operands[1:-1])
                 if not _PREDICATE.match(o) and o not in ("PT", "!PT"))


def _min_max_of(k: int, ins_list, reaching, compared: dict) -> dict:
    """``{operand position: ("min" or "max", (value, value))}`` of the compare ``k``'s
    registers written by a minimum or maximum of two followed values."""
    out = {}
    ops = [o.strip() for o in ins_list[k].operands]
    for pos in (2, 3):
        reg = ops[pos].split(".")[0] if len(ops) > pos else ""
        d = next((d for r, d in reaching[k] if r == reg), None)
        if d is None or ins_list[d].mnemonic not in MIN_MAX:
            continue
        selector = ins_list[d].operands[-1].strip()
        values = compared.get(ins_list[d].address)
        if selector in ("PT", "!PT") and values is not None and None not in values:
            out[pos] = ("max" if selector == "!PT" else "min", values)
    return out




def setter_test(setter, compared: dict, runs_when_pred: bool,
                combined: bool = False, min_max: dict | None = None) -> str | None:
    """The thread test (:mod:`.thread_tests`) of the side that runs of a compare ``setter``
    of a value of the thread index (or of the block's dimensions alone, ``blockDim.x >= 64``)
    against a number or a value of the block's dimensions (``blockDim.x - 3``), either way
    round; None for any other instruction. ``combined``:
    the compare's own test even where it is combined with another predicate (its side
    taken as if that predicate held: :func:`_combined_test`). ``min_max``: its operands
    written by a minimum or maximum (:func:`_min_max_of`): ``max(a, b) < n`` is the
    conjunction ``a < n and b < n``, ``min(a, b) >= n`` too."""
    ops = [o.strip() for o in setter.operands]
    if setter.mnemonic != "ISETP" or len(ops) < 4 or \
            (ops[4:] and ops[-1] not in ("PT", "!PT") and not combined):
        return None
    cmp = next((SETP_OPS[m] for m in setter.modifiers if m in SETP_OPS), None)
    values = compared.get(setter.address)
    if cmp is None or values is None:
        return None
    op = cmp if runs_when_pred else NEGATED[cmp]
    unsigned = "U32" in setter.modifiers
    a, b = values
    if a is not None and (is_thread_value(a) or offset_thread_value(a) is not None):
        return thread_test(a, op, b, unsigned) if b is not None else None
    if b is not None and is_thread_value(b) and a is not None:
        return thread_test(b, MIRRORED[op], a, unsigned)
    for pos, side, bound in ((2, op, b), (3, MIRRORED[op], a)):
        kind, parts = (min_max or {}).get(pos, (None, ()))
        if bound is None or (kind, side) not in (("max", "<"), ("max", "<="), ("min", ">"),
                                                  ("min", ">=")):
            continue
        tests = [t for p in parts if is_thread_value(p)
                 and (t := thread_test(p, side, bound, unsigned)) is not None]
        if len(tests) == 2:
            return conjunction(*tests)
    return None


_PREDICATE = re.compile(r"^!?P[0-6]$")


def _combined_test(k: int, ins_list, compared: dict, runs_when_pred: bool, reaching,
                   origins_of, depth: int = 0) -> str | None:
    """The thread test of a compare ``ins_list[k]`` combined with another predicate where
    the code runs on a conjunction of the two (``if (threadIdx.x < 3 && i >= 3)``: nvcc
    writes ``P2 = (i < 3) OR (tid > 2)`` and runs the load ``@!P2``; or ``.AND`` and the
    true side), exactly one of the two is a thread test and the other a bounds check of the
    thread and block indices (``origins_of``: no loaded data): the thread test's side, the
    bounds check taken to hold where the code runs, as the bounds-check rule takes it; two
    thread tests (``tx < 12 && ty < 12``), their conjunction; the other predicate may be
    such a combination itself. None otherwise (a disjunction on the running side, neither a
    thread test, loaded data)."""
    if depth > 4:
        return None
    ins = ins_list[k]
    ops = [o.strip() for o in ins.operands]
    combiner = "AND" if "AND" in ins.modifiers else "OR" if "OR" in ins.modifiers else None
    if ins.mnemonic != "ISETP" or len(ops) < 5 or not _PREDICATE.match(ops[-1]) or \
            (combiner, runs_when_pred) not in (("AND", True), ("OR", False)):
        return None
    other = next((d for reg, d in reaching[k] if reg == ops[-1].lstrip("!")), None)
    if other is None:
        return None
    # F = A and B (or A or B): where the code runs, F == runs_when_pred, each part has the
    # value runs_when_pred (B's register that value where it is read negated: !P0)
    outer = setter_test(ins, compared, runs_when_pred, combined=True,
                        min_max=_min_max_of(k, ins_list, reaching, compared))
    side = runs_when_pred != ops[-1].startswith("!")
    inner = setter_test(ins_list[other], compared, side,
                        min_max=_min_max_of(other, ins_list, reaching, compared)) or \
        _combined_test(other, ins_list, compared, side, reaching, origins_of, depth + 1)
    if outer is not None and inner is not None:
        return conjunction(outer, inner)
    if outer is None and inner is None:
        return None
    neutral = origins_of(other) if outer is not None else origins_of(k)
    return (outer or inner) if neutral <= {"tid", "ctaid", "param"} else None


def _varies_by_trip(k: int, setter: int, reaching, writes, loops, depth: int = 0) -> bool:
    """Whether the value instruction ``k`` computes for the compare ``setter`` may differ
    from what the address analysis saw, which follows each loop's first trip: a register it
    reads (through the values it is computed from) is written again later in a loop around
    the reader (carried from one trip to the next: a reduction's ``s >>= 1``), or was left
    by a loop the compare is not in (its last trip's value). Unknown past
    :data:`MAX_DEPTH` steps: taken as varying."""
    if depth > MAX_DEPTH:
        return True
    around = [(h, t) for h, t in loops if h <= k <= t]
    for reg, d in reaching[k]:
        for h, t in around:
            if any(k <= w <= t for w in writes.get(reg, ())):
                return True
        if d is None:
            continue
        if any(h <= d <= t and not (h <= setter <= t) for h, t in loops):
            return True
        if _varies_by_trip(d, setter, reaching, writes, loops, depth + 1):
            return True
    return False


class _Defs:
    """The instructions whose results each instruction reads (the nearest earlier write of
    each register it reads, program order), from the reaching writes, on demand."""

    def __init__(self, reaching):
        self.reaching = reaching

    def __getitem__(self, k: int) -> list:
        return [d for _, d in self.reaching[k] if d is not None]


class _Writes:
    """register -> the indices of the instructions that write it, built when first asked
    (only the thread tests' loop checks ask)."""

    def __init__(self, wrote):
        self.wrote = wrote
        self.by_register: dict | None = None

    def get(self, reg: str, default=()):
        if self.by_register is None:
            self.by_register = {}
            for k, written in enumerate(self.wrote):
                for r in written:
                    self.by_register.setdefault(r, []).append(k)
        return self.by_register.get(reg, default)


def find_guards(func: SassFunction, ids: Mapping, compared: dict | None = None,
                exact: frozenset | set = frozenset(), trip_tests: dict | None = None,
                trip_specs: dict | None = None, infos: list | None = None,
                access: list | None = None, decided=None) -> list[tuple]:
    """``(kind, members, fraction or None, signature, test)`` of each guard of ``func``;
    ``ids``: address -> graph instruction id (instructions not in the graph are left out);
    ``compared``: the value each ISETP compares, by address (the import's address analysis;
    without it no thread tests); ``exact``: the addresses of the compares whose values hold
    on every trip of the loops around them (values of the block's dimensions followed by
    :func:`.block_tests.block_compares`, which checks that); ``trip_tests``: by address,
    the compares of a thread value against a loop's halving counter
    (:func:`.block_tests.trip_tests`), each guard on which gets a variable of its own, its
    test on the side that runs put in ``trip_specs`` (signature -> the graph's trip test).
    ``fraction`` None: a variable, shared by guards of equal ``signature``; ``test`` the
    thread test that sets it per launch ("" none). ``infos`` and ``access``: each of the
    first instructions' class and registers (written, read), where the caller has them
    (the graph builder: the function less its trailing padding). ``decided(setter index,
    side that runs)``: the ``(formula, parameter)`` of a compare one kernel parameter
    decides, or None (:func:`.parameter_trips.guard_deciders`)."""
    compared = compared or {}
    ins_list = list(func.instructions)
    infos = list(infos or [])
    infos += [classify(i.opcode) for i in ins_list[len(infos):]]
    units = [i.unit if i is not None else None for i in infos]
    known = access or []
    last: dict = {}
    reaching = []  # (register, its last write before the instruction or None) per read
    wrote = []  # the registers each instruction writes
    setter_of = []  # the last write of each instruction's guard predicate before it
    for k, ins in enumerate(ins_list):
        written, read = known[k] if k < len(known) else reg_access(ins, units[k])
        reaching.append([(r, last.get(r)) for r in read])
        wrote.append(written)
        setter_of.append(last.get((ins.guard or "").lstrip("@!")))
        for r in written:
            last[r] = k
    defs_of = _Defs(reaching)
    writes = _Writes(wrote)
    memo: dict = {}
    tests_of: dict = {}  # (setter, side that runs) -> its thread test or None
    guards = []
    n = len(ins_list)
    addresses = [i.address for i in ins_list]
    # the last instruction of the innermost loop around each instruction (None: in no loop)
    latch_of: list = [None] * n
    loops = [(r.header, r.latch) for r in cfg.find_loops(ins_list,
                                                         {a: j for j, a in enumerate(addresses)})]
    for header, latch in loops:  # outermost first: inner loops overwrite
        latch_of[header:latch + 1] = [latch] * (latch + 1 - header)
    meet: list = []  # sm_5x/6x: the SSY reconvergence addresses open at each instruction
    for k, ins in enumerate(ins_list):
        if ins.mnemonic == "SSY" and ins.target is not None:
            meet.append(ins.target)
        elif ins.mnemonic == "SYNC" and ins.guard is None and meet:
            meet.pop()
        if ins.guard is None or ins.guard in ("@PT", "@!PT"):
            continue
        negated = ins.guard.startswith("@!")
        setter = setter_of[k]
        origins = (_origins(setter, ins_list, defs_of, units, memo) if setter is not None
                   else frozenset({"other"}))
        # where a conditional jump goes: a branch's target, a Maxwell/Pascal conditional
        # SYNC's reconvergence address (the innermost open SSY's: its threads wait there)
        target = (ins.target if ins.mnemonic in BRANCHES else
                  meet[-1] if ins.mnemonic == "SYNC" and meet else None)
        if ins.mnemonic == "EXIT":
            members, kind, runs_when_true = list(range(k + 1, n)), "region", False
        elif ins.mnemonic in BRANCHES or (ins.mnemonic == "SYNC" and target is not None):
            if target is None or target <= ins.address:
                continue  # a loop's back edge: the loop count covers it
            if latch_of[k] is not None and target > addresses[latch_of[k]]:
                continue  # leaves its loop (a trip-count check, a break): the loop count covers it
            members = list(range(k + 1, bisect_left(addresses, target, k + 1)))
            kind, runs_when_true = "region", False
        else:
            members, kind, runs_when_true = [k], "predicate", True
        # the guarded code runs where the guard predicate (P0, or !P0) has this value
        runs_when_pred = runs_when_true != negated
        fraction = None
        signature: tuple | None = None
        fixed = (_constant_test(setter, ins_list, defs_of)
                 if origins == {"tid"} and setter is not None else
                 _block_index_test(ins_list[setter], compared or {})
                 if origins == {"ctaid"} and setter is not None else None)
        test = None
        if setter is not None and "data" not in origins:
            # one compare guards many instructions (every unrolled copy): worked out once
            key = (setter, runs_when_pred)
            if key not in tests_of:
                found = (setter_test(ins_list[setter], compared, runs_when_pred,
                                     min_max=_min_max_of(setter, ins_list, reaching, compared))
                         or _combined_test(setter, ins_list, compared, runs_when_pred, reaching,
                                           lambda j: _origins(j, ins_list, defs_of, units, memo)))
                # the analysis saw one trip's value: the share would be that trip's
                tests_of[key] = (None if found is not None and
                                 ins_list[setter].address not in exact and
                                 _varies_by_trip(setter, setter, reaching, writes, loops)
                                 else found)
            test = tests_of[key]
        trip = (trip_tests or {}).get(addresses[setter]) if setter is not None and \
            trip_tests else None
        if fixed is not None and (fixed[0] or fixed[1]):
            # the index cannot reach the other side
            fraction = "1" if (fixed[0] == runs_when_pred) else "0"
        elif test is not None:  # decided by each launch's block (thread_tests.py)
            signature = ("test", test)
        elif trip is not None:  # against a loop's halving counter: averaged over its trips
            value, op, first, shift, trips = trip
            assert setter is not None
            signature = ("trip test", addresses[setter], runs_when_pred)
            if trip_specs is not None:
                trip_specs[signature] = {"value": value,
                                         "op": op if runs_when_pred else NEGATED[op],
                                         "first": first, "shift": shift, "trips": trips}
        elif origins <= {"tid"} and origins and setter is not None and \
                _zero_test(ins_list[setter]):
            zero = _zero_test(ins_list[setter])
            zero_side = runs_when_pred == (zero == "eq")
            fraction = ONCE_PER_BLOCK if zero_side else "1"
        elif fixed is not None and setter is not None:  # against a number it may reach
            s_ins = ins_list[setter]
            signature = (s_ins.opcode, s_ins.operands[3:4], runs_when_pred, kind)
        elif origins & {"tid", "ctaid"} and "data" not in origins and "other" not in origins:
            fraction = "1"  # a bounds check: every thread of a full block
        elif decided is not None and setter is not None and origins == {"param"} and \
                (found := decided(setter, runs_when_pred)) is not None:
            # one kernel parameter decides: each launch that gives it sets the variable
            signature = ("parameter", *found)
        else:
            s_ins = ins_list[setter] if setter is not None else None
            signature = (s_ins.opcode if s_ins else "?", tuple(sorted(origins)),
                         runs_when_pred, kind)
        if fraction == "1":
            continue
        at = addresses[members.start:members.stop] if isinstance(members, range) else \
            [addresses[j] for j in members]
        member_ids = [ids[a] for a in at if a in ids]
        if member_ids:
            guards.append((kind, member_ids, fraction, signature,
                           test if signature is not None and signature[0] == "test" else ""))
    return guards


def add_guards(graph: KernelGraph, func: SassFunction, compared: dict | None = None,
               found: list | None = None, trip_specs: dict | None = None) -> list[str]:
    """Add the guards of ``func`` to its imported ``graph`` (ids ``guard1``…, variables
    ``guard1``… with :data:`DEFAULT_FRACTION`, or a thread test's share of the warps of a
    block of :data:`DEFAULT_WARPS_PER_BLOCK` warps; ``warps_per_block`` where needed);
    ``compared`` as :func:`find_guards` takes it; ``found``, its result where the caller
    has it already (the import's build: its ids are the graph's); ``trip_specs``, the
    trip tests :func:`find_guards` found (their variables go to ``graph.trip_tests``, their
    default the mean share in the default block). Returns the guard variables' names."""
    if found is None:
        ids = {int(nid[1:], 16): nid for nid in graph.instructions if nid.startswith("i")}
        found = find_guards(func, ids, compared)
    variables: dict = {}
    for k, (kind, members, fraction, signature, test) in enumerate(found, 1):
        if fraction is None:
            if signature not in variables:
                variables[signature] = f"guard{len(variables) + 1}"
            fraction = variables[signature]
            spec = (trip_specs or {}).get(signature)
            if test:
                graph.variables.setdefault(fraction, warp_share(
                    test, (DEFAULT_WARPS_PER_BLOCK * 32, 1, 1)))
                name = (f"runs where {test}: {fraction}, the share of a block's warps with "
                        f"such a thread, set by each launch's block")
            elif signature[0] == "parameter":
                formula, parameter = signature[1:]
                graph.block_trips[fraction] = formula
                graph.variables.setdefault(fraction, DEFAULT_FRACTION)
                graph.variables.setdefault(parameter, 0)
                name = (f"runs a fraction {fraction} of the time: {formula} once the kernel "
                        f"parameter {parameter} is given (until then 1)")
            elif spec is not None:
                graph.trip_tests[fraction] = spec
                graph.variables.setdefault(fraction, trip_test_share(
                    spec, (DEFAULT_WARPS_PER_BLOCK * 32, 1, 1),
                    graph.variables.get(spec["trips"], 1)))
                name = (f"runs where {spec['value']} {spec['op']} s, s = {spec['first']} "
                        f"{trip_test_step(spec)} each trip of {spec['trips']}: "
                        f"{fraction}, the mean share over the trips of a block's warps with "
                        f"such a thread, set by each launch's block")
            else:
                graph.variables.setdefault(fraction, DEFAULT_FRACTION)
                name = f"runs a fraction {fraction} of the time"
        elif fraction == "0":
            name = "never runs: the thread or block index cannot take the guard's side"
        else:
            graph.variables.setdefault("warps_per_block", DEFAULT_WARPS_PER_BLOCK)
            name = "runs in one warp of each block"
        gid = f"g{k}"
        while gid in graph.loops or gid in graph.instructions:
            gid += "_"
        graph.guards[gid] = Guard.make(gid, members, fraction, kind, name, test)
    return list(variables.values())
