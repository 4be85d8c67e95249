"""The CLI's indented JSON (cli/common.indented_json, speed targets) is the standard library's
``json.dumps(obj, indent=2, ensure_ascii=False)`` text, byte for byte, written faster."""
from __future__ import annotations

import json
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.cli.common import _json_default, indented_json
from repetitions import repetitions


def stdlib(obj, indent=2):
    return json.dumps(obj, indent=indent, default=_json_default, ensure_ascii=False)


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 5).map(np.int64), st.floats(-1e3, 1e3).map(np.float64),
    st.booleans().map(np.bool_))
keys = st.one_of(st.text(max_size=4), st.integers(-3, 3), st.floats(-2, 2), st.booleans(),
                 st.none())


def containers(children):
    return st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=4), children, max_size=5),
        st.dictionaries(keys, children, max_size=3),
        st.lists(st.integers(-9, 9), max_size=4).map(np.array),
        st.lists(st.floats(-9, 9), max_size=4).map(lambda v: np.array(v, dtype=float)),
        st.frozensets(st.integers(0, 9), max_size=3))


documents = st.recursive(scalars, containers, max_leaves=30)


@settings(max_examples=repetitions(60, 600), deadline=None)
@given(documents, st.sampled_from([2, 4]))
def test_the_same_text_as_the_standard_library(obj, indent):
    assert indented_json(obj, _json_default, indent) == stdlib(obj, indent)


def test_documents_the_cli_prints():
    doc = {"kernel": "k", "variables": {"a": 10.0, "b": 3}, "latency_bound_cycles": 3.5e6,
           "critical_path": {"text": "n0 -> n1", "edges": [f"e{i}" for i in range(50)],
                             "instructions": ["n0", "n1"], "loops": {"L0": [], "L1": ["e3"]}},
           "per_warp": {"instructions": 155000.0, "gmem_bytes": 2.2e6},
           "rows": [{"x": 1, "y": [1, 2, {"z": None}]}, [], {}, "é ✓", np.float32(0.1)],
           "array": np.arange(3), "nested": [[[]], [[1]], [{}]]}
    assert indented_json(doc, _json_default) == stdlib(doc)
    assert json.loads(indented_json(doc, _json_default))["critical_path"]["edges"][49] == "e49"


def test_what_cannot_be_written_is_the_same_error():
    for bad in ({"a": object()}, [1, {2, 3}, object()]):
        try:
            stdlib(bad)
        except TypeError as want:
            try:
                indented_json(bad, _json_default)
            except TypeError as got:
                assert str(got) == str(want)
            else:
                raise AssertionError("no error")


def test_a_cycle_and_deep_nesting_as_the_standard_library_takes_them():
    cycle: list = [1]
    cycle.append({"back": cycle})
    for call in (lambda: stdlib(cycle), lambda: indented_json(cycle, _json_default)):
        try:
            call()
        except ValueError as exc:
            assert "Circular reference" in str(exc)
        else:
            raise AssertionError("no error")
    deep: list = []
    for _ in range(700):  # deeper than the C-assisted writer recurses, as json.dumps takes it
        deep = [deep, 1]
    assert indented_json(deep, _json_default) == stdlib(deep)


def test_a_small_document_needs_no_numpy():
    """(a command answering a few lines starts without importing numpy; nor does a big
    document of finite floats; one with both zeros, whose floats are told apart by their
    bits, takes it)"""
    import os
    import subprocess
    import sys
    from pathlib import Path
    code = ("import json, sys\n"
            "from gpumodeler.cli.common import indented_json\n"
            "small = {'a': [1, 2.5, 'x'], 'b': {'c': None}}\n"
            "assert indented_json(small) == json.dumps(small, indent=2)\n"
            "print('numpy' in sys.modules)\n"
            "big = {'ids': [{'n': i, 'x': [i / 3]} for i in range(5000)]}\n"
            "assert indented_json(big) == json.dumps(big, indent=2)\n"
            "print('numpy' in sys.modules)\n"
            "zeros = {'z': [0.0, -0.0] * 300}\n"
            "assert indented_json(zeros) == json.dumps(zeros, indent=2)\n"
            "print('numpy' in sys.modules)\n")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(root)}).stdout
    assert out.split() == ["False", "False", "True"]


@settings(max_examples=repetitions(150, 600), deadline=None)
@given(documents, st.sampled_from([2, 4]))
def test_the_columnar_writer_writes_the_standard_librarys_text_or_leaves_it(obj, indent):
    """(cli/columnar_json: what it writes is the standard library's text; what it does not
    write it leaves to indented_json's other route)"""
    from gpumodeler.cli import columnar_json
    try:
        text = columnar_json.dumps(obj, _json_default, indent)
    except (columnar_json.Unsupported, TypeError, ValueError, RecursionError):
        return
    assert text == stdlib(obj, indent)


def test_the_columnar_writer_on_many_records():
    """Columns long enough to be written once per distinct value: -0.0 keeps its sign, NaN
    and the infinities are written as the standard library writes them (or refused), repeated
    and distinct strings, a column mixing None, floats and text, lists of one length and of
    several, objects of two shapes, and a '%' in a key."""
    from gpumodeler.cli import columnar_json
    rng = np.random.default_rng(3)
    rows = []
    for i in range(2000):
        x = float(rng.choice([0.0, -0.0, 1.5, 1e-12 * i, 3.0]))
        rows.append({"id": f"s{i}", "kind": ["copy", "kernel", "sync"][i % 3], "x": x,
                     "t": i / 7, "maybe": [None, x, "é\"", True, i][i % 5],
                     "engines": ["gpu1/compute"] if i % 2 else ["a", "b"],
                     "route": [] if i % 4 == 0 else [{"bw": 1e10, "lambda": 1.0}] * (i % 3 + 1),
                     "100%": {"n": i} if i % 7 else {}})
        if i % 11 == 0:
            rows[-1] = {"other": i, "shape": [x]}
    doc = {"rows": rows, "critical": [r.get("id") for r in rows], "busy": {"a": 0.5}}
    assert columnar_json.dumps(doc, _json_default, 2) == stdlib(doc)
    assert indented_json(doc, _json_default) == stdlib(doc)
    special = {"v": [float(v) for v in rng.normal(size=600)] + [math.nan, math.inf, -math.inf]}
    assert columnar_json.dumps(special, _json_default, 2) == stdlib(special)
    with pytest.raises(ValueError, match="Out of range float"):
        columnar_json.dumps(special, _json_default, 2, allow_nan=False)


record_keys = st.lists(st.text(max_size=4), max_size=5, unique=True)


@st.composite
def record_tables(draw):
    """(keys, columns) of a :class:`~gpumodeler.cli.columnar_json.Records`: each column
    drawn whole from one of a few kinds (floats with None, as a timeline's measured times;
    any documents), long enough at times for the floats to be formatted once per value."""
    keys = draw(record_keys)
    n = draw(st.sampled_from([0, 1, 3, 300]))
    floats = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False),
                       st.sampled_from([0.0, -0.0, 1e-300, 2.5]))
    column = st.one_of(st.lists(floats, min_size=n, max_size=n),
                       st.lists(st.floats(-1, 1), min_size=n, max_size=n),
                       st.lists(documents, min_size=n, max_size=n))
    return keys, [draw(column) for _ in keys]


@settings(max_examples=repetitions(100, 400), deadline=None)
@given(record_tables(), st.sampled_from([2, 4]))
def test_records_are_written_as_the_list_of_their_rows(table, indent):
    """A list of objects given as columns is the standard library's text of the list of
    those objects (in a document, at depth 1; or refused as the writer refuses the rows)."""
    from gpumodeler.cli import columnar_json
    keys, columns = table
    records = columnar_json.Records(keys, columns)
    rows = records.rows()
    assert len(rows) == len(records) and all(list(r) == keys for r in rows)
    for doc, plain in (({"a": 1, "steps": records, "z": [0.5]}, {"a": 1, "steps": rows, "z": [0.5]}),
                       (records, rows)):
        try:
            text = columnar_json.dumps(doc, _json_default, indent)
        except (columnar_json.Unsupported, TypeError, ValueError, RecursionError):
            with pytest.raises((columnar_json.Unsupported, TypeError, ValueError, RecursionError)):
                columnar_json.dumps(plain, _json_default, indent)
            continue
        assert text == stdlib(plain, indent)
        with mock.patch.object(columnar_json, "_ROWS", 7):   # (written a few rows at a time)
            assert columnar_json.dumps(doc, _json_default, indent) == text
            assert "".join(columnar_json.dump_parts(doc, _json_default, indent)) == text


def test_records_are_given_a_piece_per_slice_among_text_holding_the_mark_character():
    """dump_parts: the pieces of the text are the text, each Records' rows a piece per
    slice, wherever they stand, even when keys and strings hold the character that marks
    their place (written escaped, never taken for a mark)."""
    from gpumodeler.cli import columnar_json
    first = columnar_json.Records(["a\x00", "b"], [[0.5, -0.0, None] * 5, ["\x000\x00", "x", ""] * 5])
    second = columnar_json.Records(["c"], [[[1, "\x00"]] * 4])
    doc = {"\x001\x00": first, "list": [second, "\x00", first], "none": columnar_json.Records([], [])}
    plain = {"\x001\x00": first.rows(), "list": [second.rows(), "\x00", first.rows()], "none": []}
    with mock.patch.object(columnar_json, "_ROWS", 4):
        parts = columnar_json.dump_parts(doc, None, 2)
    assert "".join(parts) == stdlib(plain) == columnar_json.dumps(doc, None, 2)
    # 4 slices of each of the first two, 1 of the second, plus their ends and the text between
    assert len(parts) >= 2 * (4 + 1) + (1 + 1)
    assert all(isinstance(p, str) and p for p in parts)
    assert columnar_json.dump_parts([1.5], None, 2) == [stdlib([1.5])]


def test_records_refuse_what_is_not_finite_and_ragged_columns():
    from gpumodeler.cli import columnar_json
    records = columnar_json.Records(["a", "b"], [[1.0] * 400, [2.0] * 399 + [math.inf]])
    assert columnar_json.dumps(records, None, 2) == stdlib(records.rows())
    with pytest.raises(ValueError, match="Out of range float"):
        columnar_json.dumps({"steps": records}, None, 2, allow_nan=False)
    with pytest.raises(ValueError):
        columnar_json.Records(["a", "b"], [[1.0], [2.0, 3.0]])
    with pytest.raises(ValueError):
        columnar_json.Records(["a", "b"], [[1.0]])
    assert columnar_json.dumps(columnar_json.Records([], []), None, 2) == "[]"
    # more rows than are written at a time: the slices' texts are the rows' text
    n = 3 * columnar_json._ROWS + 5
    records = columnar_json.Records(["t", "s", "m"], [[i / 7 for i in range(n)],
                                                     [f"s{i % 5}" for i in range(n)],
                                                     [None if i % 3 else [i, 0.5] for i in range(n)]])
    assert columnar_json.dumps({"steps": records}, None, 2) == stdlib({"steps": records.rows()})


def test_lists_long_and_short_of_one_length():
    """A few long lists of one length (a critical path's ids and instructions) are joined a
    list at a time, many short ones by a template: both the standard library's text, at the
    boundary between the two (as many lists as items in each) and on either side of it."""
    from gpumodeler.cli import columnar_json
    for count, length in ((1, 5000), (2, 3), (3, 3), (4, 3), (300, 300), (299, 300),
                          (301, 300), (1, 1), (2, 1)):
        lists = [[f"n{k}é", k, k / 3, None, True][k % 5] for k in range(length)]
        doc = {"path": {"edges": [list(map(str, lists)) for _ in range(count)],
                        "mixed": [lists] * count,
                        "nested": [[[k] for k in range(length)]] * count}}
        assert columnar_json.dumps(doc, _json_default, 2) == stdlib(doc), (count, length)


@pytest.mark.parametrize("zeros", [[0.0], [-0.0], [0.0, -0.0], []])
@pytest.mark.parametrize("other", [[1.5, 2.0, 1e-300], [math.inf], [math.nan], [-math.inf, 3.0]])
def test_repeated_floats_found_by_equality_or_by_bits(zeros, other):
    """A long column of few distinct floats is written once per distinct number: found by a
    dict when equal numbers have one text (finite, zeros of one sign), by bit pattern
    otherwise (-0.0 beside 0.0, NaN, the infinities); mostly distinct floats without a
    table. Each the standard library's text, or its refusal of what is not finite."""
    from gpumodeler.cli import columnar_json
    rng = np.random.default_rng(5)
    few = zeros + other
    for values in ([few[k % len(few)] for k in range(700)] if few else [],
                   [float(v) for v in rng.normal(size=600)] + few * 3):
        doc = {"v": values, "rows": [{"x": v, "y": 1.0} for v in values]}
        assert columnar_json.dumps(doc, _json_default, 2) == stdlib(doc)
        if all(map(math.isfinite, values)):
            assert columnar_json.dumps(doc, _json_default, 2, allow_nan=False) == stdlib(doc)
        else:
            with pytest.raises(ValueError, match="Out of range float"):
                columnar_json.dumps(doc, _json_default, 2, allow_nan=False)


@pytest.mark.parametrize("doc", [
    {"kernel": "k × 2", "edges": [f"e{i}" for i in range(300)], "formula": "3·a", "n": 1.5},
    {}, {"only": "é"}, [{"a": 1}, "×"], {1: "a non-text key", "b": [1.0]}, "text", 3.5,
    {"a": {"b": {"c": ["✓"] * 3}}, "d": np.arange(3), "e": None}])
def test_print_json_prints_the_standard_librarys_text_a_piece_at_a_time(doc, capsys):
    """print_json writes an object's text in the pieces it was joined from (its plain-ASCII
    values written out as such): what print() of the standard library's text prints."""
    from gpumodeler.cli import columnar_json
    from gpumodeler.cli.common import indented_json_parts, print_json
    print_json(doc)
    assert capsys.readouterr().out == stdlib(doc) + "\n"
    parts = indented_json_parts(doc, _json_default)
    assert "".join(parts) == stdlib(doc) and all(parts)
    if type(doc) is dict and doc and all(type(k) is str for k in doc):
        assert len(parts) == 2 * len(doc) + 1
        assert columnar_json.dump_parts(doc, _json_default) == parts


@pytest.mark.parametrize("zeros", [[], [0.0], [-0.0], [0.0, -0.0], [-0.0, 0.0], [0.0] * 9 + [-0.0]])
def test_zeros_of_one_sign_told_as_numpy_tells_them(zeros):
    """columnar_json._one_sign (the zeros picked out and their bytes read) against numpy's
    sign bits, among floats whose bytes hold 0x80 (-2.0, 5e-324, subnormals, NaN, -inf,
    1e300, 2^-1074·0x80) and whose truth is not their value's (NaN)."""
    from gpumodeler.cli import columnar_json
    others = [-2.0, 5e-324, -5e-324, 1e-320, math.nan, -math.inf, 1e300, 0x80 * 5e-324,
              float(2 ** 63), -1.5]
    rng = np.random.default_rng(len(zeros))
    for values in (zeros, others + zeros, list(rng.permutation(others * 3 + zeros * 5))):
        values = [float(v) for v in values]
        array = np.array(values)
        want = len(set(np.signbit(array[array == 0.0]).tolist())) <= 1
        assert columnar_json._one_sign(values) is want, values


@pytest.mark.parametrize("rows", [0, 1, 3])
@pytest.mark.parametrize("count", [0, 1, 4])
def test_interleaved_pieces_are_the_rows_zipped(rows, count):
    """columnar_json.interleaved (the constants laid out by repeating a row, the columns by
    slice assignment) against the pieces zip gives, row after row."""
    from gpumodeler.cli import columnar_json
    between = [f"<{k}%>" for k in range(count + 1)]
    columns = [[f"{k}.{r}é" for r in range(rows)] for k in range(count)]
    want = []
    for r in range(rows if count else 1):
        for k in range(count):
            want += [between[k], columns[k][r]]
        want.append(between[-1])
    assert columnar_json.interleaved(between, columns) == want
