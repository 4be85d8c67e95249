"""Trip counts a kernel parameter decides: ``for (k = 0; k < n; ++k)``, ``for (t = 0; t <
n / 16; ++t)``, nvcc's unrolled groups of such loops.

The rules of :mod:`.trip_counts` (the counter, the values followed, a do-while's trips, the
unrolled groups), with each 32-bit kernel parameter the listing reads (``c[0x0][…]`` at or
after the architecture's first parameter, :func:`.parameters.parameter_base`) followed as
a symbol besides the block's dimensions. A count of one parameter and nothing else is worked
out for every value of it from 1 to :data:`LARGEST` and written as the first of the trip
counts' forms that gives it at every one (``n``, ``floor(n / 16)``, ``max(1, n - 1)``…),
in the parameter's variable (its name from the ``.cu``, else ``param_0x170``:
:func:`.parameters.named_parameter`). The block index (``S2R SR_CTAID.X`` …) is followed as
a symbol too, and may enter a count that does not depend on it: a walk from a block's first
tile ``wA · 32 · blockIdx.y`` to its last ``+ wA − 1`` makes ``floor((wA + 31) / 32)`` trips
in every block. A count of a parameter and a block dimension (``n / blockDim.x`` phases:
nvcc's division read as the quotient, :meth:`.block_values.Follower._quotient`) is fitted
over sampled pairs (:func:`.trip_counts.loop_trip_counts`). Counts of two parameters, or of
a 64-bit parameter (a ``size_t`` bound: its compare is a pair), are not derived.

The variable's default is 0, "not given": a launch applies a formula only where every
parameter it reads is given a value other than 0
(:func:`gpumodeler.core.kernel.graph_items.launch_guard_values`); until then the loop keeps
its own value, 1 by default, as before.
"""
from __future__ import annotations

import numpy as np

from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.graph_items import BLOCK_DIMENSIONS
from gpumodeler.core.kernel.sass.block_values import Follower, dim
from gpumodeler.core.kernel.sass.parameters import named_parameter, parameter_base
from gpumodeler.core.kernel.sass.trip_counts import loop_trip_counts

#: the largest parameter value a count is worked out at
LARGEST = 4096
_BLOCK_INDEX = frozenset({"SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z"})


class _ParameterAxes(dict):
    """The constant-bank offsets a follower reads as symbols: the block's dimensions, and
    each kernel parameter (at or after ``base``, 4-byte aligned) given an axis of its own
    the first time a value reads it (in ``axes``, with its variable and :data:`LARGEST`)."""

    def __init__(self, dims: dict, base: int, axes: dict, names: dict, taken):
        super().__init__(dims)
        self.base, self.axes, self.names, self.taken = base, axes, names, taken
        self.offsets: list = []
        self.variables: dict = {}
        self.indices: dict = {}  # SR_CTAID.X ... -> its axis

    def __contains__(self, offset) -> bool:
        if dict.__contains__(self, offset):
            return True
        if not isinstance(offset, int) or offset < self.base or offset % 4:
            return False
        axis = self._next_axis()
        self[offset] = axis
        self.offsets.append(offset)
        self.variables[offset] = named_parameter(offset, self.names, self.taken)
        self.axes[axis] = (self.variables[offset], LARGEST)
        return True

    def _next_axis(self) -> int:
        return 3 + len(self.offsets) + len(self.indices)

    def index_axis(self, special: str) -> int:
        """The axis of the block index ``special`` (``SR_CTAID.Y``): a value a count must
        not depend on (a third entry in ``axes``, :func:`.trip_counts.loop_trip_counts`)."""
        if special not in self.indices:
            axis = self._next_axis()
            self.indices[special] = axis
            self.axes[axis] = (special, 1, "block index")
        return self.indices[special]


class _IndexFollower(Follower):
    """A :class:`Follower` that also reads the block index (``S2R``/``S2UR`` of
    ``SR_CTAID.X``, ``.Y``, ``.Z``) as a symbol (:meth:`_ParameterAxes.index_axis`)."""

    dims: _ParameterAxes

    def instruction(self, j: int, depth: int):
        ins = self.ins[j]
        if ins.mnemonic in ("S2R", "S2UR") and not ins.guard and len(ins.operands) >= 2:
            special = ins.operands[1].strip()
            return dim(self.dims.index_axis(special)) if special in _BLOCK_INDEX else None
        return super().instruction(j, depth)


def _parameter_follower(f: Follower, base: int, names: dict, taken) -> tuple:
    """``(follower, its axes)``: a follower of ``f``'s listing reading each kernel parameter
    (at or after ``base``) and the block index as symbols (:class:`_ParameterAxes`)."""
    p = f.on_same_listing({}, _IndexFollower)
    read_as = _ParameterAxes(f.dims, base, p.axes, names, taken)
    p.dims = read_as
    return p, read_as


def parameter_trip_counts(f: Follower, groups: dict, arch_number: int | None,
                          names: dict, taken) -> dict:
    """``{loop variable: (formula, parameter variable, parameter offset)}`` of the loop
    variables of ``groups`` (``(number, None, None)`` for a count that is a number once the
    block index cancels) (variable -> its loops, as :func:`.trip_counts.loop_trip_counts`
    takes them) whose count one kernel parameter decides (the module rules). ``f`` gives
    the listing and its indexes; ``names`` the parameters' names from the source
    (``{offset: name}``), ``taken`` the graph's variables."""
    base = parameter_base(arch_number)
    if base is None or not groups:
        return {}
    p, read_as = _parameter_follower(f, base, names, taken)
    offsets, variable = read_as.offsets, read_as.variables
    out: dict = {}
    for var, tc in loop_trip_counts(p, groups).items():
        if tc.number is not None:
            # a number once the block index cancels (a walk of 30 planes from the block's
            # first, blockIdx.z * 30): the listing's count, as trip_counts gives one
            out[var] = (str(tc.number), None, None)
        if not tc.formula:
            continue
        read = parse(tc.formula).variables
        found = [off for off in offsets if variable[off] in read]
        if len(found) == 1 and read - set(BLOCK_DIMENSIONS) == {variable[found[0]]}:
            out[var] = (tc.formula, variable[found[0]], found[0])
    return out



#: the period a guard a kernel parameter decides may repeat with (``n % 4 != 0``)
_LARGEST_PERIOD = 64
#: values of the parameter above :data:`LARGEST` a guard's formula is checked at too: random
#: ones and the powers of two (and their neighbours) below 2^_GUARD_BITS, a parameter's
#: range where the kernel's own 32-bit arithmetic (2 · r + 1, 4 · n) does not overflow
_GUARD_CHECKS = 200
_GUARD_BITS = 28
_GUARD_SEED = 20261130


def guard_deciders(f: Follower, arch_number: int | None, names: dict, taken):
    """A function ``decide(setter index, runs when the predicate is)`` giving ``(formula,
    parameter variable)`` where guarded code runs on a compare (``ISETP``, not combined with
    another predicate) of values of one 32-bit kernel parameter alone (followed as the
    trip counts follow it: ``(2 * r + 1) & 3 != 1``, nvcc's check of an unrolled loop's
    remainder): 1 where the code runs and 0 where it does not, for every value of the
    parameter from 1 to :data:`LARGEST` and at others up to 2^28, written as a
    step (``min(1, max(0, r - 3))``: from 4 on) or a pattern of ``r`` modulo a period up to
    :data:`_LARGEST_PERIOD`; else None (a test no value from 1 on changes). The follower and the parameters'
    names are made on the first call."""
    from gpumodeler.core.kernel.sass.thread_tests import SETP_OPS
    base = parameter_base(arch_number)
    state: dict = {}

    def decide(s: int, runs_when: bool):
        if base is None:
            return None
        if not state:
            state.update(zip(("p", "read_as"), _parameter_follower(f, base, names, taken)))
        p, read_as = state["p"], state["read_as"]
        ins = f.ins[s]
        ops = [o.strip() for o in ins.operands]
        cmp = next((SETP_OPS[m] for m in ins.modifiers if m in SETP_OPS), None)
        if ins.mnemonic != "ISETP" or cmp is None or len(ops) != 5 or ops[1] != "PT" or \
                ops[4] != "PT" or "AND" not in ins.modifiers:
            return None
        a, b = p.operand(ops[2], s, 0), p.operand(ops[3], s, 0)
        if a is None or b is None:
            return None
        axes = a.dims | b.dims
        params = [off for off in read_as.offsets if read_as[off] in axes]
        if len(params) != 1 or axes != {read_as[params[0]]}:
            return None
        axis, name = read_as[params[0]], read_as.variables[params[0]]
        return _guard_formula(a, b, cmp, "U32" in ins.modifiers, runs_when, axis, name)

    return decide


def _guard_formula(a, b, cmp: str, unsigned: bool, runs_when: bool, axis: int,
                   name: str) -> tuple | None:
    """``(formula, name)`` of where ``a cmp b`` is ``runs_when`` as a function of the
    parameter on ``axis`` (:func:`guard_deciders`), else None."""
    from gpumodeler.core.kernel.sass.block_values import compare_truth, evaluate

    def runs(values):
        dims = [np.int64(1)] * max(3, axis + 1)
        dims[axis] = values
        return (compare_truth(cmp, unsigned, evaluate(a, tuple(dims)),
                              evaluate(b, tuple(dims))) == runs_when).astype(np.int64)
    ps = np.arange(1, LARGEST + 1, dtype=np.int64)
    ys = np.broadcast_to(runs(ps), ps.shape)
    text = _fit_indicator(ps, ys, name)
    if text is None:
        return None
    rng = np.random.default_rng(_GUARD_SEED)
    powers = np.array([2 ** k + d for k in range(12, _GUARD_BITS + 1) for d in (-1, 0, 1)])
    extra = np.concatenate([rng.integers(LARGEST + 1, 2 ** _GUARD_BITS, _GUARD_CHECKS),
                            powers]).astype(np.int64)
    formula = parse(text)
    check = np.concatenate([ps, extra])
    got = np.asarray(formula.evaluate({name: check.astype(float)}), dtype=float)
    if not np.array_equal(np.broadcast_to(got, check.shape),
                          np.broadcast_to(runs(check), check.shape).astype(float)):
        return None
    return formula.text, name


def _less(x: str, k: int) -> str:
    return f"{x} - {k}" if k else x


def _fit_indicator(ps, ys, name: str) -> str | None:
    """A formula of ``name`` giving the 0/1 values ``ys`` at ``ps`` (1, 2, …): a step up or
    down at one value, or a pattern repeating with a period up to :data:`_LARGEST_PERIOD`
    (its runs of 1s as differences of clamped steps of the remainder); None for one value
    at every ``ps`` (a flag's test, ``if (flag)``, turns on 0, which a parameter not given
    also reads as: such a guard keeps its variable)."""
    if np.all(ys == ys[0]):
        return None  # no value from 1 on changes it: a flag's test (0 or not) is the user's
    changes = np.flatnonzero(np.diff(ys))
    if len(changes) == 1:  # a step at one value c: from c on (or up to c − 1)
        c = int(ps[changes[0] + 1])
        up = f"min(1, max(0, {_less(name, c - 1)}))"
        return up if ys[-1] == 1 else f"1 - {up}"
    for m in range(2, _LARGEST_PERIOD + 1):
        if not np.array_equal(ys[m:], ys[:-m]):
            continue
        pattern = {int(p) % m: int(y) for p, y in zip(ps[:m], ys[:m])}
        x = f"({name} - {m} * floor({name} / {m}))"
        terms, r = [], 0
        while r < m:
            if pattern[r]:
                start = r
                while r + 1 < m and pattern[r + 1]:
                    r += 1
                end = r  # residues start … end run
                first = f"min(1, max(0, {_less(x, start - 1)}))" if start else "1"
                terms.append(first if end == m - 1 else
                             f"{first} - min(1, max(0, {_less(x, end)}))")
            r += 1
        return " + ".join(f"({t})" for t in terms)
    return None


__all__ = ["LARGEST", "guard_deciders", "parameter_trip_counts"]
