"""GPUSpec.require: a plain number (int, float) is checked without building an array, and
must be refused or accepted exactly as the same value given as a numpy number (the general
path) is, with the same message."""
import math

import numpy as np
import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter

VALUES = [1, 13, 2.5, 1e-30, 1.7e308, 0, 0.0, -0.0, -1, -2.5, math.nan, math.inf, -math.inf]


def _outcome(spec: GPUSpec, name: str):
    try:
        return "ok", spec.require(name)
    except InvalidParameter as exc:
        return "refused", str(exc), exc.item


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_plain_number_is_checked_as_an_array_number_is(value):
    plain = _outcome(GPUSpec(name="G", sms=value), "sms")
    general = _outcome(GPUSpec(name="G", sms=np.float64(value)), "sms")
    assert plain[0] == general[0]
    if plain[0] == "ok":
        assert plain[1] == value and type(plain[1]) is type(value)  # returned as given
    else:  # the same words: a zero says the GPU has none, others say > 0
        assert plain[2] == general[2] == "sms"
        assert plain[1].replace(repr(float(value)), str(value)) == general[1].replace(
            repr(float(value)), str(value))
    expected_ok = isinstance(value, (int, float)) and 0 < value < math.inf
    assert (plain[0] == "ok") == expected_ok


def test_zero_says_the_gpu_has_none_and_a_negative_says_positive():
    with pytest.raises(InvalidParameter, match="is 0 .this GPU has none"):
        GPUSpec(name="G", fp64_units_per_sm=0).require("fp64_units_per_sm")
    with pytest.raises(InvalidParameter, match="must be > 0, got -1"):
        GPUSpec(name="G", sms=-1).require("sms")
    with pytest.raises(InvalidParameter, match="is unknown"):
        GPUSpec(name="G").require("sms")


def test_an_int_too_large_for_a_float_overflows_as_an_array_would():
    with pytest.raises(OverflowError):
        np.asarray(10 ** 400, dtype=float)
    with pytest.raises(OverflowError):
        GPUSpec(name="G", sms=10 ** 400).require("sms")


def test_arrays_are_checked_element_by_element():
    assert np.array_equal(GPUSpec(name="G", sms=np.array([1.0, 2.0])).require("sms"), [1.0, 2.0])
    for bad in ([1.0, 0.0], [1.0, math.nan], [2.0, -1.0]):
        with pytest.raises(InvalidParameter, match="must be > 0"):
            GPUSpec(name="G", sms=np.array(bad)).require("sms")
