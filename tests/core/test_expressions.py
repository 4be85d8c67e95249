import numpy as np
import pytest

from gpumodeler.core.errors import ExpressionError
from gpumodeler.core.kernel.expressions import Expression, parse


@pytest.mark.parametrize("text, values, expected", [
    ("a", {"a": 128}, 128), ("N/256", {"N": 1024}, 4), ("2*(a+1) - 3", {"a": 4}, 7),
    ("ceil(N / 256)", {"N": 1000}, 4), ("floor(7/2)", {}, 3), ("min(a, 3, 2)", {"a": 9}, 2),
    ("max(a, b)", {"a": 1, "b": 5}, 5), ("-a + 10", {"a": 3}, 7), ("2 × 3 ÷ 4", {}, 1.5),
    ("1e3", {}, 1000), ("a·b", {"a": 2, "b": 3}, 6),
])
def test_evaluate(text, values, expected):
    assert parse(text).evaluate(values) == pytest.approx(expected)


def test_arrays_broadcast():
    out = parse("N/256 + a").evaluate({"N": np.array([256, 512]), "a": np.array([[0], [1]])})
    assert out.shape == (2, 2) and out.tolist() == [[1, 2], [2, 3]]


def test_variables_and_text():
    e = Expression("N/256 + 24*a")
    assert e.variables == {"N", "a"}
    assert Expression(e.text) == e


@pytest.mark.parametrize("text, message", [
    ("__import__('os')", "unexpected character"), ("a ** 2", "expected a number"),
    ("open(1)", "unknown function"), ("min(1)", "at least 2"), ("ceil(1, 2)", "exactly 1"),
    ("(a + 1", r"expected '\)'"), ("", "empty expression"), ("a b", "unexpected 'b'"),
    ("ceil", "is a function"), ("1/0", "division by zero"), ("(" * 200 + "1" + ")" * 200, "nested"),
    ("log2(a - 1)", "not positive"), ("log2(1, 2)", "exactly 1"),
])
def test_bad_expressions_are_clear_errors(text, message):
    with pytest.raises(ExpressionError, match=message):
        parse(text).evaluate({"a": 1})


def test_log2_counts_the_halvings_of_a_reduction_tree():
    e = parse("max(1, floor(log2(block_x)) - 5)")
    assert e.text == "max(1, floor(log2(block_x)) - 5)"
    assert e.evaluate({"block_x": np.array([32, 64, 96, 256, 1024])}).tolist() == [1, 1, 1, 3, 5]


def test_unknown_variable_names_it():
    with pytest.raises(ExpressionError, match=r"unknown variable\(s\) N .*--set N=128"):
        parse("N/256").evaluate({"a": 1})
