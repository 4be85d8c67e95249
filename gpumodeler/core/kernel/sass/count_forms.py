"""A count worked out at every block (or parameter) value, written as a formula: the forms
the trip counts (:mod:`.trip_counts`) and the block's tests (:mod:`.block_tests`) give a
loop variable or a share.

* **The forms.** The count is worked out for every block the count reads (``blockDim.x``
  or ``.y`` from 1 to 1024, ``.z`` to 64; a count of two dimensions is not derived) and
  written as the first of these forms that gives it at every one: ``a·b + c``,
  ``floor((b + k) / m) + c`` (``m`` up to 64), a remainder ``(b + k) % m``,
  ``floor(log2(b)) + c``, ``ceil(log2(b)) + c`` (a halving or doubling counter), or any of
  them with at least one trip, ``max(1, …)``; ``b`` is ``block_x``, ``block_y`` or
  ``block_z``. A form that fits every value but the first one to eight and gives no trips
  at those is taken with ``max(1, …)``: where the source loop runs none (``k`` from 1 to
  ``nz − 2`` at ``nz`` = 1, 2) the compiled loops are not entered and their counters give
  no count.
* **Two inputs.** A count of one block dimension ``b`` and one other value ``a`` (a kernel
  parameter) is worked out at sampled pairs and written as ``floor(a / b) + c`` or
  ``ceil(a / b) + c`` (or either with ``max(1, …)``).
* **Block indices.** An axis marked as a block index (a third entry in the follower's axes,
  :mod:`.parameter_trips`) must leave the count unchanged (checked at several values) and
  is not in the formula. A count that reads no dimension is a number.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.kernel.graph_items import BLOCK_DIMENSIONS
from gpumodeler.core.kernel.sass.block_values import BLOCK_AXES

_LARGEST_DIVISOR = 64
#: the divisors m and offsets k of the forms floor((b + k) / m) and (b + k) % m, m-major
_DIVISION_M, _DIVISION_K = (np.array(x, dtype=np.int64) for x in zip(
    *((m, k) for m in range(2, _LARGEST_DIVISOR + 1) for k in range(m))))
#: the first values of a count's input that may be left out of its fit (where the source
#: loop runs no trips: :func:`formula`)
_SKIPPED_FIRST = 8
#: a block index a count must not depend on: the values it is checked at (0, 1 and random
#: ones up to the largest)
_INDEX_SAMPLES = 8
_LARGEST_INDEX = 255
_INDEX_SEED = 20261130


@dataclass(frozen=True)
class TripCount:
    """What the listing says of a loop variable: ``formula`` an expression of
    :data:`~gpumodeler.core.kernel.graph_items.BLOCK_DIMENSIONS` (each launch's block sets the variable) or ``number`` (the
    variable's value at every launch)."""

    formula: str = ""
    number: int | None = None


def domain(dims_used: frozenset, axes: dict | None = None):
    """The values to evaluate a count at: every value of the one axis it reads, 1 to its
    largest (``axes``: axis -> (name, largest), by default the block's), the others 1, or
    one block when it reads none; None for two or more axes."""
    axes = BLOCK_AXES if axes is None else axes
    if not dims_used:
        return None, (np.int64(1), np.int64(1), np.int64(1))
    if len(dims_used) > 1:
        return None
    axis = next(iter(dims_used))
    values = np.arange(1, axes[axis][1] + 1, dtype=np.int64)
    dims = tuple(values if a == axis else np.int64(1) for a in range(max(3, axis + 1)))
    return axis, dims


def _fit(b: str, ws, vs) -> str | None:
    """``a·b + c``, ``floor((b + k) / m) + c``, ``(b + k) % m`` or a logarithm's form
    giving ``vs`` at every ``ws``, as text."""
    if len(ws) >= 2 and ws[1] != ws[0]:
        a = int(vs[1] - vs[0]) // int(ws[1] - ws[0])
        c = int(vs[0]) - a * int(ws[0])
        if np.array_equal(a * ws + c, vs):
            core = b if a == 1 else f"{a} * {b}" if a else ""
            return f"{core} {'+' if c > 0 else '-'} {abs(c)}" if core and c else core or str(c)
    # every (m, k) at once on the first values, then the survivors, in order, on all
    head_w, head_v = ws[:2 * _LARGEST_DIVISOR], vs[:2 * _LARGEST_DIVISOR]
    shifted = head_w[None, :] + _DIVISION_K[:, None]
    floors = shifted // _DIVISION_M[:, None]
    offsets = vs[0] - (ws[0] + _DIVISION_K) // _DIVISION_M
    for i in np.flatnonzero(np.all(floors + offsets[:, None] == head_v[None, :], axis=1)):
        m, k, c = int(_DIVISION_M[i]), int(_DIVISION_K[i]), int(offsets[i])
        if np.array_equal((ws + k) // m + c, vs):
            core = f"floor({b} / {m})" if not k else f"floor(({b} + {k}) / {m})"
            return f"{core} {'+' if c > 0 else '-'} {abs(c)}" if c else core
    rests = shifted - floors * _DIVISION_M[:, None]  # a remainder loop's (b + k) % m
    for i in np.flatnonzero(np.all(rests == head_v[None, :], axis=1)):
        m, k = int(_DIVISION_M[i]), int(_DIVISION_K[i])
        if np.array_equal((ws + k) % m, vs):
            text = f"{b} + {k}" if k else b
            return f"{text} - {m} * floor(({text}) / {m})"
    logs = np.log2(ws.astype(float))
    for name, base in (("floor", np.floor(logs)), ("ceil", np.ceil(logs))):
        c = int(vs[0] - base[0])
        if np.array_equal(base + c, vs):
            core = f"{name}(log2({b}))"
            return f"{core} {'+' if c > 0 else '-'} {abs(c)}" if c else core
    return None


def formula(axis: int, w, v, name: str | None = None) -> str | None:
    """The first of the module's forms that gives ``v`` at every ``w``, as text of ``name``
    (by default the block dimension ``axis``)."""
    from gpumodeler.core.kernel.expressions import parse
    b = name or BLOCK_DIMENSIONS[axis]
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
    # a source loop that runs no trips at the first values (``for (k = 1; k < nz - 1;
    # ++k)`` at nz = 1, 2): the compiled group is not entered there (nvcc checks before
    # it), so what its counters would give there is no count; the form fitted on the rest
    # must give no trips there
    for skip in range(1, min(_SKIPPED_FIRST, len(w) - 2) + 1):
        inner = _fit(b, w[skip:], v[skip:])
        if inner is None:
            continue
        e = parse(inner)
        head = np.asarray(e.evaluate({b: w[:skip].astype(float)}))
        if np.all(head <= 0) and v[skip] >= 1:
            return parse(f"max(1, {inner})").text
    return None


def describe(counted, divisor: int = 1, axes: dict | None = None) -> TripCount | None:
    """The :class:`TripCount` of ``counted = (count, the dimensions it reads)``: ``count``
    a function of the block dimensions (or of the ``axes`` a follower knows) evaluated over
    :func:`domain` (None: not derived), ``divisor`` dividing it exactly; or None."""
    count, dims_used = counted
    known = BLOCK_AXES if axes is None else axes
    free = frozenset(a for a in dims_used if len(known.get(a, ())) > 2)
    pair = _block_and_other(dims_used - free, known)
    if pair is not None:
        return _describe_pair(count, pair, free, divisor, known)
    found = domain(dims_used - free, axes)
    if found is None:
        return None
    axis, dims = found
    v = count(dims) if not free else _same_at_every_index(count, dims, free)
    if v is None:
        return None
    v = np.asarray(v, dtype=np.int64)
    if np.any(v < 0) or np.any(v % divisor):
        return None
    v = v // divisor
    if axis is None:
        return TripCount(number=int(np.ravel(v)[0]))
    text = formula(axis, dims[axis], np.broadcast_to(v, dims[axis].shape),
                   (axes or BLOCK_AXES)[axis][0])
    return TripCount(formula=text) if text else None


def _block_and_other(used: frozenset, axes: dict) -> tuple | None:
    """``(block axis, other axis)`` where a count reads one block dimension and one other
    axis (a kernel parameter: ``(n + blockDim.x − 1) / blockDim.x`` tiles), else None."""
    if len(used) != 2:
        return None
    block = [a for a in used if a in BLOCK_AXES]
    other = [a for a in used if a not in BLOCK_AXES and a in axes]
    return (block[0], other[0]) if len(block) == 1 and len(other) == 1 else None


#: the values of a count of a block dimension and another value: the dimension's first 64
#: and the usual larger blocks, the other value's first 300 and random ones up to its
#: largest (a sample, the two together too many to take whole)
_PAIR_BLOCKS = np.array(sorted(set(range(1, 65)) | {96, 128, 160, 192, 256, 320, 384, 512,
                                                     640, 768, 896, 1024}), dtype=np.int64)
_PAIR_SEED = 20261201


def _describe_pair(count, pair: tuple, free: frozenset, divisor: int, axes: dict):
    """The :class:`TripCount` of a count of a block dimension ``b`` and another value ``a``
    (``pair``): the first of ``floor(a / b) + c``, ``ceil(a / b) + c`` (each also with at
    least one trip, ``max(1, …)``) that gives it at every sampled pair; else None."""
    from gpumodeler.core.kernel.expressions import parse
    b_axis, a_axis = pair
    b_largest, a_largest = axes[b_axis][1], axes[a_axis][1]
    rng = np.random.default_rng(_PAIR_SEED)
    a_values = np.unique(np.concatenate([np.arange(1, min(300, a_largest) + 1),
                                         rng.integers(1, a_largest + 1, 200)]))
    b_values = _PAIR_BLOCKS[_PAIR_BLOCKS <= b_largest]
    a_grid, b_grid = np.meshgrid(a_values, b_values, indexing="ij")
    width = max(3, a_axis + 1, b_axis + 1)
    dims = [np.int64(1)] * width
    dims[a_axis], dims[b_axis] = a_grid.ravel(), b_grid.ravel()
    v = count(tuple(dims)) if not free else _same_at_every_index(count, tuple(dims), free)
    if v is None:
        return None
    v = np.broadcast_to(np.asarray(v, dtype=np.int64), a_grid.ravel().shape)
    if np.any(v < 0) or np.any(v % divisor):
        return None
    v = v // divisor
    a, b = a_grid.ravel(), b_grid.ravel()
    an, bn = axes[a_axis][0], axes[b_axis][0]
    for core, values in ((f"floor({an} / {bn})", a // b), (f"ceil({an} / {bn})", -(-a // b))):
        c = int(v[0] - values[0])
        inner = f"{core} {'+' if c > 0 else '-'} {abs(c)}" if c else core
        for text, fitted in ((inner, values + c), (f"max(1, {inner})", np.maximum(1, values + c))):
            if np.array_equal(fitted, v):
                return TripCount(formula=parse(text).text)
    return None


def _same_at_every_index(count, dims: tuple, free: frozenset):
    """``count`` at ``dims`` where it is the same for every value of the ``free`` axes (a
    block index: a loop from ``aBegin = wA · 32 · blockIdx.y`` to ``aBegin + wA − 1``
    makes the same trips in every block), checked at :data:`_INDEX_SAMPLES` of them; else
    None."""
    width = max(len(dims), max(free) + 1)
    rng = np.random.default_rng(_INDEX_SEED)
    first = None
    for k in range(_INDEX_SAMPLES):
        at = list(dims) + [np.int64(1)] * (width - len(dims))
        for a in free:
            at[a] = np.int64(k if k < 2 else rng.integers(2, _LARGEST_INDEX + 1))
        v = count(tuple(at))
        if v is None:
            return None
        v = np.asarray(v)
        if first is None:
            first = v
        elif v.shape != first.shape or not np.array_equal(v, first):
            return None
    return first


__all__ = ["TripCount", "describe", "domain", "formula"]
