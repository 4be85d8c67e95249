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
    p = f.on_same_listing({}, _IndexFollower)
    read_as = _ParameterAxes(f.dims, base, p.axes, names, taken)
    p.dims = read_as
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


__all__ = ["LARGEST", "parameter_trip_counts"]
