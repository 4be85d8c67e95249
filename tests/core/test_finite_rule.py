"""The "plain and finite" rule in each of its forms, pinned on awkward values.

Text, whole numbers, flags, None and finite floats, in lists, tuples and dicts: what a
document may carry; NaN, infinities and values of other types refused. The rule has forms
for different callers, and where they answer differently on purpose the table below says so
(a fast form may say False for a valid value, sending its caller to the full check; it never
says True for one the full check refuses: see the last tests).

The forms (columns of the table):

* ``value``: one value, exact (a build's details, as made);
* ``block``: a list of values read a block and a level at a time (a timeline's columns):
  may also say False for floats whose sum overflows and for nesting deeper than 64;
* ``document``: one whole document, one stack (the CLI's results before the naming walk):
  may also say False for a list or dict met twice;
* ``number``: one number of a kernel file, exact types (positions, latencies): ints within
  ±1e308, no text, no None;
* ``column``: a column of such numbers: may also say False for floats at or beyond ±1e308
  and sums that overflow;
* ``real``: one number typed in a project (an application's host power, a step's share):
  any int or float subclass (numpy's float64 included, not its ints); an int beyond a float
  refused;
* ``reference``: the kernel items' full check (any real number, numpy's and Fractions
  included, an int beyond a float refused).
"""
import decimal
import fractions
import math
import sys

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from repetitions import repetitions

from gpumodeler.core import finite, physical

FORMS = {
    "value": finite.plain_finite,
    "block": lambda v: finite.plain_finite_values([v]),
    "document": finite.plain_finite_document,
    "number": finite.finite_number,
    "column": lambda v: finite.finite_numbers([v]),
    "real": finite.finite_real,
    "reference": finite.is_finite_number,
}
COLUMNS = list(FORMS)


class _Text(str):
    pass


class _Float(float):
    pass


class _Int(int):
    pass


def _nested(depth):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _cycle_list():
    value: list = [1.0]
    value.append(value)
    return value


def _cycle_dict():
    value: dict = {"a": 1.0}
    value["b"] = [value]
    return value


def _shared():
    part = [1.0, "x"]
    return [part, {"again": part}]


T, F = True, False
#: name: (make the value, answers of value, block, document, number, column, real, reference)
TABLE = {
    "nan":           (lambda: math.nan,                 F, F, F, F, F, F, F),
    "inf":           (lambda: math.inf,                 F, F, F, F, F, F, F),
    "-inf":          (lambda: -math.inf,                F, F, F, F, F, F, F),
    "-0.0":          (lambda: -0.0,                     T, T, T, T, T, T, T),
    "1.0":           (lambda: 1.0,                      T, T, T, T, T, T, T),
    "1":             (lambda: 1,                        T, T, T, T, T, T, T),
    "1e308":         (lambda: 1e308,                    T, T, T, T, F, T, T),
    "-1.5e308":      (lambda: -1.5e308,                 T, T, T, T, F, T, T),
    "10**30":        (lambda: 10**30,                   T, T, T, T, T, T, T),
    "10**308":       (lambda: 10**308,                  T, T, T, T, T, T, T),
    "2 * 10**308":   (lambda: 2 * 10**308,              T, T, T, F, F, F, F),
    "10**400":       (lambda: 10**400,                  T, T, T, F, F, F, F),
    "True":          (lambda: True,                     T, T, T, F, F, F, F),
    "None":          (lambda: None,                     T, T, T, F, F, F, F),
    "text":          (lambda: "x",                      T, T, T, F, F, F, F),
    "unicode text":  (lambda: "λ → ∞",                  T, T, T, F, F, F, F),
    "str subclass":  (lambda: _Text("x"),               F, F, F, F, F, F, F),
    "float subclass": (lambda: _Float(1.0),             F, F, F, F, F, T, T),
    "int subclass":  (lambda: _Int(1),                  F, F, F, F, F, T, T),
    "np.float64":    (lambda: np.float64(1.0),          F, F, F, F, F, T, T),
    "np.float64 nan": (lambda: np.float64("nan"),       F, F, F, F, F, F, F),
    "np.float32":    (lambda: np.float32(1.0),          F, F, F, F, F, F, T),
    "np.int64":      (lambda: np.int64(1),              F, F, F, F, F, F, T),
    "np.bool_":      (lambda: np.bool_(True),           F, F, F, F, F, F, F),
    "Decimal":       (lambda: decimal.Decimal(1),       F, F, F, F, F, F, F),
    "Fraction":      (lambda: fractions.Fraction(1, 2), F, F, F, F, F, F, T),
    "complex":       (lambda: 1j,                       F, F, F, F, F, F, F),
    "bytes":         (lambda: b"x",                     F, F, F, F, F, F, F),
    "set":           (lambda: {1.0},                    F, F, F, F, F, F, F),
    "nested":        (lambda: [{"a": (1.0, [None, "x", {"b": 2, "c": True}])}],
                                                        T, T, T, F, F, F, F),
    "nested nan":    (lambda: [{"a": (1.0, [None, "x", {"b": math.nan}])}],
                                                        F, F, F, F, F, F, F),
    "nested np":     (lambda: {"a": [np.float64(1.0)]}, F, F, F, F, F, F, F),
    "[]":            (lambda: [],                       T, T, T, F, F, F, F),
    "()":            (lambda: (),                       T, T, T, F, F, F, F),
    "{}":            (lambda: {},                       T, T, T, F, F, F, F),
    "non-str keys":  (lambda: {1: 1.0, (2, 3): "x", None: 2},
                                                        T, T, T, F, F, F, F),
    "nan key":       (lambda: {math.nan: 1.0},          T, T, T, F, F, F, F),
    "nan value":     (lambda: {"a": math.nan},          F, F, F, F, F, F, F),
    "list cycle":    (_cycle_list,                      F, F, F, F, F, F, F),
    "dict cycle":    (_cycle_dict,                      F, F, F, F, F, F, F),
    "shared list":   (_shared,                          T, T, F, F, F, F, F),
    "sum overflows": (lambda: [1e308, 1e308],           T, F, F, F, F, F, F),
    "nested 63":     (lambda: _nested(63),              T, T, T, F, F, F, F),
    "nested 64":     (lambda: _nested(64),              T, F, T, F, F, F, F),
    "nested 3000":   (lambda: _nested(3000),            F, F, T, F, F, F, F),
}


def _answer(form, value):
    try:
        return FORMS[form](value)
    except OverflowError:
        return OverflowError


@pytest.mark.parametrize("name", TABLE)
def test_each_form_answers_as_pinned(name):
    make, *expected = TABLE[name]
    got = [_answer(form, make()) for form in COLUMNS]
    assert dict(zip(COLUMNS, got)) == dict(zip(COLUMNS, expected))
    assert all(type(g) is bool for g in got)  # no form raises, on any value


@pytest.mark.parametrize("name", TABLE)
def test_a_fast_form_passes_only_what_its_full_check_passes(name):
    """(value, block and document stand for the naming walk of core.physical; number and
    column for the kernel items' full check)"""
    make = TABLE[name][0]
    value = make()
    walkable = name != "nested 3000"   # (the walk recurses: deeper than Python's limit)
    for form in ("value", "block", "document"):
        if _answer(form, value) is True and walkable:
            assert physical.first_non_finite(value) is None, form
    if _answer("number", value) is True:
        assert FORMS["reference"](value)
    if _answer("column", value) is True:
        assert FORMS["number"](value)
    if (_answer("block", value) is True or _answer("document", value) is True) and walkable:
        assert FORMS["value"](value)


def test_the_column_of_numbers():
    column = finite.finite_numbers
    assert column([]) and column([1, 2.5, -0.0, 10**30, -3])
    assert not column([1.0, math.nan]) and not column([math.inf, 1]) and not column([-math.inf])
    assert not column([1.0, True]) and not column([1.0, None]) and not column([np.float64(1)])
    assert not column([10**400, 1.0])   # (an int beyond a float, added to a float)
    assert not column([2 * 10**308, 1])   # (ints within ±1e308 only, as one by one)
    assert not column([1e308, 1e308]) and not column([-1e308])
    assert column([9e307, -9e307, 1e307])
    values = [float(i) for i in range(10000)] + [math.nan] + [1.0] * 5
    assert not column(values) and column(values[:10000])


def test_one_value_at_a_time_matches_the_column_where_the_column_can_tell():
    rows = [[1, 2.5], [0.0, -0.0, 3], [10**30], [1e307, -1e307], []]
    for row in rows:
        assert finite.finite_numbers(row) == all(map(finite.finite_number, row))


def test_the_block_form_reads_every_block_and_level():
    block = finite.plain_finite_values
    values = [{"a": [1.0, {"b": (2.0, "t")}], "n": i} for i in range(3 * finite.BLOCK + 5)]
    assert block(values) and block([]) and block(values[:1])
    for i in (0, finite.BLOCK - 1, finite.BLOCK, 2 * finite.BLOCK + 8, len(values) - 1):
        for bad in (math.inf, np.float64(1.0)):
            broken = values[:i] + [{"a": [1.0, {"b": (bad, "t")}]}] + values[i + 1:]
            assert not block(broken)
            assert not finite.plain_finite(broken)
            assert not finite.plain_finite_document(broken)


def test_the_recursion_limit_is_not_changed():
    limit = sys.getrecursionlimit()
    finite.plain_finite(_nested(3000))
    assert sys.getrecursionlimit() == limit


def _reference(value) -> bool:
    """The rule as it reads, one value at a time (no cycles, shallow)."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind in (str, int, bool) or value is None:
        return True
    if kind is dict:
        return all(map(_reference, value.values()))
    return kind in (list, tuple) and all(map(_reference, value))


def _floats(value):
    kind = type(value)
    if kind is float:
        yield value
    elif kind is dict:
        for v in value.values():
            yield from _floats(v)
    elif kind in (list, tuple):
        for v in value:
            yield from _floats(v)


def _no_overflow(numbers) -> bool:
    """No sum of these numbers, in any order, can overflow a float."""
    numbers = list(numbers)
    return max(map(abs, numbers), default=0) * max(len(numbers), 1) < 1e307


def _containers(value):
    kind = type(value)
    if kind in (dict, list, tuple):
        yield value
        for v in (value.values() if kind is dict else value):
            yield from _containers(v)


_AWKWARD = [np.float64(1.0), np.float64("nan"), np.int64(2), np.bool_(False), _Text("x"),
            _Float(1.0), _Int(1), decimal.Decimal(1), fractions.Fraction(1, 2), 1j, b"x"]
_leaves = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**400, max_value=10**400),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3),
                    st.sampled_from(_AWKWARD))
_values = st.recursive(_leaves, lambda children: st.one_of(
    st.lists(children, max_size=4), st.lists(children, max_size=3).map(tuple),
    st.dictionaries(st.one_of(st.text(max_size=3), st.integers(), st.none()), children,
                    max_size=4)), max_leaves=25)


@settings(max_examples=repetitions(150, 600), deadline=None)
@given(_values)
def test_each_document_form_agrees_with_the_rule_as_it_reads(value):
    """(value: exactly the rule; block and document: never more, and exactly it where the
    floats cannot overflow a sum)"""
    expected = _reference(value)
    assert finite.plain_finite(value) is expected
    small = _no_overflow(_floats(value)) if expected else True
    ids = [id(c) for c in _containers(value)]
    unshared = len(set(ids)) == len(ids)   # (the empty tuple is one object, however often)
    for got, exact in ((finite.plain_finite_values([value]), small),
                       (finite.plain_finite_document(value), small and unshared)):
        assert got is expected if exact else not got or expected
    if expected:
        assert physical.first_non_finite(value) is None


@settings(max_examples=repetitions(150, 600), deadline=None)
@given(st.lists(st.one_of(st.integers(min_value=-10**400, max_value=10**400),
                          st.floats(allow_nan=True, allow_infinity=True),
                          st.sampled_from(_AWKWARD + [True, None, "1"])), max_size=8))
def test_each_number_form_agrees_with_the_full_check(values):
    """(number: never more than the full check, exactly it on exact ints within ±1e308 and
    floats; column: exactly number's answers where no float nears the edge of a float)"""
    for v in values:
        if finite.finite_number(v):
            assert finite.is_finite_number(v)
        if type(v) is float or (type(v) is int and abs(v) < 1e308):
            assert finite.finite_number(v) is finite.is_finite_number(v)
    each = all(map(finite.finite_number, values))
    column = finite.finite_numbers(values)
    assert not column or each
    if each and _no_overflow(values):
        assert column
