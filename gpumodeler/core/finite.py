"""The one rule for values a document may carry: plain and finite.

Text, whole numbers, flags, None and finite floats, in lists, tuples and dicts (only a
dict's values count, whatever its keys): what the CLI's JSON and text, the report and the
chart print as they are. NaN and the infinities are refused, and so is a value of another
type — a numpy scalar, a subclass of str or float, a Decimal — not because it is wrong but
because it is not plain: the caller then asks the full check, which names the number that
is not finite (:func:`gpumodeler.core.physical.first_non_finite`) or says what is wrong
with an item. A fast form therefore never says True where its full check refuses, and may
say False where the full check passes; tests/core/test_finite_rule.py pins every form's
answer on awkward values.

Which form to use:

* :func:`plain_finite` — one value, exact: for a few small values, each checked as it is
  made (an application's build, per step and per shared detail). A call per value and per
  container; nesting deeper than Python's recursion limit, as a cycle is, says False.
* :func:`plain_finite_values` — a long list of values, read a block and a level at a time
  in C (every column of a 10^5-step timeline in 0.08 s, against 0.21 s value by value).
  Also says False for floats whose sum overflows and for nesting deeper than
  :data:`DEEPEST`; it costs more than :func:`plain_finite` on one small value (6 µs
  against 2).
* :func:`plain_finite_document` — one whole result of unknown shape, before the CLI prints
  it: one stack, no depth limit, each container read once (a prediction's result in 4 µs,
  against 12 µs as a list of one value); also says False for floats whose sum overflows
  and for a list or dict met twice (shared, or a cycle, or the empty tuple twice).

Numbers of a kernel file (positions, latencies), where text, None and flags are not
numbers:

* :func:`is_finite_number` — the items' full check: any real number (numpy's, a Fraction)
  but a flag, whose value a float holds finitely;
* :func:`finite_number` — its fast form for one value: an exact int within ±1e308 or a
  finite exact float;
* :func:`finite_numbers` — its fast form for a column of values: also says False for a
  float at or beyond ±1e308 and for a sum that overflows.

And one number typed into a project, :func:`finite_real`, which is neither: it takes any
subclass of int or float (numpy's float64 is one, numpy's ints are not); an int beyond a
float is refused (it raised OverflowError through the application's checks before).
"""
from __future__ import annotations

from itertools import chain, compress, repeat
import math
import numbers
from operator import is_

#: values that are never a number that is not finite
PLAIN_TYPES = frozenset({str, int, bool, type(None)})

#: how many values :func:`plain_finite_values` reads together (their objects stay in the
#: cache from one pass to the next: 1024 to 16384 all read a 10^5-step timeline's columns
#: as fast)
BLOCK = 4096

#: the deepest nesting :func:`plain_finite_values` reads (deeper, or a cycle: False)
DEEPEST = 64


def plain_finite(value) -> bool:
    """Whether ``value`` is text, a whole number, a flag, None or a finite float, or lists,
    tuples and dicts of them: what the check of a document passes (a float of another
    type, e.g. numpy's, or anything else: False)."""
    kind = type(value)
    if kind is float:
        return value - value == 0.0   # (inf - inf and NaN - NaN are NaN)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    try:
        if kind is dict:
            return all(map(plain_finite, value.values()))
        return (kind is list or kind is tuple) and all(map(plain_finite, value))
    except RecursionError:   # (a cycle)
        return False


def plain_finite_values(values: list) -> bool:
    """True when ``values`` hold only text, whole numbers, flags, None and finite floats, in
    lists, tuples and dicts; False when not, or when that is not plain (a value of another
    type, nesting deeper than :data:`DEEPEST`, as a cycle is, floats whose sum overflows).

    Read a block of :data:`BLOCK` values at a time, each block a level at a time, in C:
    the values of all of a level's lists put together, and of all its dicts (whatever
    their keys: only the values count), each value's type read once, the floats summed as
    they are picked out (a sum is finite only when every term is). A pass over a 10^5-step
    document's scattered objects costs a tenth of a second when they are not in the cache
    any more, so the passes are few and each block's passes after the first find them
    there: the 10^5-step timeline's columns in 0.23 s, not 0.33 s when the whole column
    was read a level at a time (the walk: 0.9 s)."""
    return all(map(_plain_finite_block, (values[i:i + BLOCK] for i in range(0, len(values), BLOCK))))


def _plain_finite_block(values: list) -> bool:
    """:func:`plain_finite_values` of one block of values."""
    stack = [(values, 0)]
    while stack:
        values, depth = stack.pop()
        if depth > DEEPEST:
            return False
        types = list(map(type, values))
        kinds = set(types)
        for kind in kinds - PLAIN_TYPES:
            part = values if len(kinds) == 1 else compress(values, map(is_, types, repeat(kind)))
            if kind is float:
                if not math.isfinite(sum(part)):
                    return False
            elif kind is list or kind is tuple:
                stack.append((list(chain.from_iterable(part)), depth + 1))
            elif kind is dict:
                stack.append((list(chain.from_iterable(map(dict.values, part))), depth + 1))
            else:
                return False
    return True


def plain_finite_document(obj) -> bool:
    """True when ``obj`` is dicts, lists and tuples of text, whole numbers, flags, None and
    finite floats; False when it holds anything else (a numpy value, a complex number), a
    container met twice (shared, or a cycle), or floats that are not all finite. The floats
    are summed, not tested one by one: a sum is finite only when every term is (an infinity
    or NaN stays one; a sum that overflows only sends the document to the naming walk)."""
    seen: set = set()
    stack = [obj]
    floats: list = []
    add = floats.append
    while stack:
        o = stack.pop()
        cls = o.__class__
        if cls is dict or cls is list or cls is tuple:
            if id(o) in seen:
                return False
            seen.add(id(o))
            for v in (o.values() if cls is dict else o):
                c = v.__class__
                if c is float:
                    add(v)
                elif c not in PLAIN_TYPES:
                    stack.append(v)
        elif cls is float:
            add(o)
        elif cls not in PLAIN_TYPES:
            return False
    return math.isfinite(sum(floats))


def is_finite_number(value) -> bool:
    """True for an int or float (not a bool) whose value a float holds finitely."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond a float
        return False


def finite_number(value) -> bool:
    """:func:`is_finite_number` for the common cases, False (ask the full check) otherwise."""
    cls = value.__class__
    if cls is float:
        return value - value == 0.0  # inf - inf and nan - nan are nan
    return cls is int and -1e308 < value < 1e308


def finite_numbers(values) -> bool:
    """Every value is an int or a float (not a bool) that :func:`finite_number` accepts.
    May say False for valid values (a float at or beyond ±1e308, a sum that overflows); the
    caller then reads item by item."""
    if not values:
        return True
    if not set(map(type, values)) <= {int, float}:
        return False
    try:
        if not (-1e308 < min(values) and max(values) < 1e308):
            return False
        total = sum(values)
    except OverflowError:  # an int beyond a float, added to a float
        return False
    return total - total == 0  # NaN or inf anywhere makes the sum NaN or inf


def finite_real(value) -> bool:
    """Whether ``value``, one number a project holds (an application's host power, a step's
    share of its launch), is a finite int or float, of any subclass but bool. An int beyond
    a float is not (the caller's message then says what is valid)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int no float holds
        return False


__all__ = ["BLOCK", "DEEPEST", "PLAIN_TYPES", "finite_number", "finite_numbers", "finite_real",
           "is_finite_number", "plain_finite", "plain_finite_document", "plain_finite_values"]
