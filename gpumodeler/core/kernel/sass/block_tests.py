"""Tests of the block's dimensions the guards read off a listing (:mod:`.guards`).

* :func:`block_compares`: a compare of values of the block's dimensions the address analysis
  does not follow (their bit fields, ``blockDim.x % 4 != 0``: the checks around an unrolled
  loop over ``blockDim.x``) becomes a thread test of ``ntid.x``, ``ntid.x%M`` and ``ntid.x/M``
  (:mod:`.thread_tests`), kept only where it holds exactly where the compare does at every
  block dimension;
* :func:`trip_tests`: a compare of a value of the thread index against a loop's halving
  counter (a reduction tree's ``if (tid < s)``) becomes a trip test, averaged per launch over
  the loop's trips.

The values are followed as :mod:`.block_values` does; the loops' counters as
:mod:`.trip_counts` finds them.
"""
from __future__ import annotations

import numpy as np

from gpumodeler.core.kernel.sass.block_values import (
    Follower, Node, bits_of, compare_truth, evaluate, op_node, const, poly_of, signed, simplified)
from gpumodeler.core.kernel.sass.thread_tests import MIRRORED, SETP_OPS
from gpumodeler.core.kernel.sass.count_forms import domain, formula
from gpumodeler.core.kernel.sass.trip_counts import counter, once_per_trip


def block_compares(f: Follower, indices) -> dict:
    """``{index: (value, value)}`` of the integer compares at ``indices`` (``ISETP``) whose
    two values follow (:class:`Follower`) to numbers and one of the block's dimensions
    (``blockDim.x % 4 != 0``, ``blockDim.x − 1 >= 3``: the checks around an unrolled loop
    over ``blockDim.x``), written as polynomials of ``ntid.x``, ``ntid.x%M`` and
    ``ntid.x/M`` with the number moved to the right; kept only where the thread test the
    guards make of them (:func:`.guards.setter_test`) holds, on each side, exactly where
    the compare does for every block dimension from 1 to its largest."""
    from gpumodeler.core.kernel.sass.addresses import Poly
    from gpumodeler.core.kernel.sass.guards import setter_test
    from gpumodeler.core.kernel.sass.thread_tests import test_holds
    out: dict = {}
    for s in indices:
        ins = f.ins[s]
        ops = [o.strip() for o in ins.operands]
        if ins.mnemonic != "ISETP" or len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT")):
            continue
        cmp = next((SETP_OPS[m] for m in ins.modifiers if m in SETP_OPS), None)
        a, b = f.operand(ops[2], s, 0), f.operand(ops[3], s, 0)
        if cmp is None or a is None or b is None or len(a.dims | b.dims) != 1:
            continue
        pa, pb = poly_of(a), poly_of(b)
        if pa is None or pb is None:
            continue
        pa, pb = simplified(pa), simplified(pb)
        side, bound = (pa, pb) if pa.symbols() else (pb, pa)
        number = side.terms.get((), 0)
        side, bound = side + Poly.const(-number), bound + Poly.const(-number)
        pair = (side, bound) if pa.symbols() else (bound, side)
        found = domain(a.dims | b.dims)
        if found is None:
            continue
        axis, dims = found
        truth = compare_truth(cmp, "U32" in ins.modifiers, evaluate(a, dims), evaluate(b, dims))
        ok = True
        for runs in (True, False):
            text = setter_test(ins, {ins.address: pair}, runs)
            if text is None or not np.array_equal(test_holds(text, dims), truth == runs):
                ok = False
                break
        if ok:
            out[s] = pair
    return out


def trip_tests(f: Follower, groups: dict, compared: dict, indices) -> dict:
    """``{compare index: (thread value, op, first, shift, trips variable)}`` of the integer
    compares at ``indices`` that test a value of the thread index against a loop's halving
    counter (``if (tid < s)`` in ``for (s = blockDim.x / 2; s > 0; s >>= 1)``) or doubling
    one (``if (tid >= stride)`` in a Kogge-Stone scan's ``stride *= 2``; ``shift``
    negative):

    * the compare (``ISETP``, not combined with another predicate) is in a loop of its own
      (not an unrolled group) whose counter halves or doubles each trip in place
      (:func:`loop_trip_counts`' rules) and is written after the compare in the trip;
    * one side is a value of the thread index (``compared``, the address analysis's), the
      other the counter or (halving) the counter shifted right by a constant ``m``;
    * ``first``, that side's value on the first trip, a formula of the block's dimensions
      (the forms of :func:`.count_forms.formula`) or a number; on trip ``j`` it is ``first >> shift·(j−1)``
      (``first << −shift·(j−1)`` for a doubling counter).

    ``op`` is the compare's, read with the thread value on the left; ``trips variable`` the
    loop's. Each launch averages the share of the block's warps passing the test over the
    loop's trips (:func:`gpumodeler.core.kernel.graph_items.launch_guard_values`)."""
    from gpumodeler.core.kernel.sass.bitfields import is_lane_varying
    ranges = f.ranges
    own = {members[0][0]: var for var, members in groups.items() if len(members) == 1}
    out: dict = {}
    for s in indices:
        ins = f.ins[s]
        ops = [o.strip() for o in ins.operands]
        pair = compared.get(ins.address)
        cmp = next((SETP_OPS[m] for m in ins.modifiers if m in SETP_OPS), None)
        if ins.mnemonic != "ISETP" or len(ops) < 4 or (ops[4:] and ops[-1] not in ("PT", "!PT")) \
                or pair is None or cmp is None:
            continue
        around = [k for k, r in enumerate(ranges) if r.header <= s <= r.latch]
        if not around:
            continue
        k = max(around, key=lambda i: ranges[i].header)
        r = ranges[k]
        c = counter(f, r) if k in own else None
        if c is None or not c.shift or c.entry is None:
            continue
        u = once_per_trip(f, r, c.register)
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
            if m is None or (c.left and m):  # a doubled stride: compared as it is
                continue
            first = op_node("shr", c.entry, const(m))
            text = _first_text(first)
            if text is not None:
                out[s] = (thread.text(), cmp if pos == 0 else MIRRORED[cmp], text,
                          -c.shift if c.left else c.shift, own[k])
            break
    return out


def _counter_shift(node: Node | None) -> int | None:
    """``m`` where ``node`` is the loop's counter shifted right by ``m`` (0: itself)."""
    if node is None:
        return None
    if node.op == "counter":
        return 0
    if node.op in ("shr", "sar") and node.args[0].op == "counter":
        m = bits_of(node.args[1])
        return m if m is not None and 0 <= m < 31 else None
    return None


def _first_text(node: Node) -> str | None:
    """``node``, a value of the block's dimensions, as a formula (or a number), or None."""
    found = domain(node.dims)
    if found is None:
        return None
    axis, dims = found
    v = signed(np.asarray(evaluate(node, dims), dtype=np.int64))
    if np.any(v < 0):
        return None
    if axis is None:
        return str(int(np.ravel(v)[0]))
    return formula(axis, dims[axis], np.broadcast_to(v, dims[axis].shape))


__all__ = ["block_compares", "trip_tests"]
