"""The one number and quantity grammar (core/quantities.py) the GUI and the CLI share."""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpumodeler.core.errors import ModelError
from gpumodeler.core.quantities import QuantityError, parse_number, parse_quantity

BYTES = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
         "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
TIME = {"": 1, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


@pytest.mark.parametrize("text, value", [
    ("0", 0.0), ("1000000", 1e6), ("-2.5", -2.5), ("+7", 7.0), (".5", 0.5), ("5.", 5.0),
    ("1e6", 1e6), ("1.6E+9", 1.6e9), ("3.97e-6", 3.97e-6), ("  42 ", 42.0),
    ("1,000,000", 1e6), ("1,024", 1024.0), ("-1,024.5", -1024.5), ("12,345,678.25", 12345678.25),
    ("1_000_000", 1e6), ("1 000 000", 1e6), ("1\u202f000", 1000.0),
    ("2k", 2e3), ("2K", 2e3), ("16M", 16e6), ("1.6G", 1.6e9), ("3T", 3e12), ("2P", 2e15),
    ("1Ki", 1024.0), ("16Mi", 2.0**24), ("4Gi", 4 * 2.0**30), ("1Ti", 2.0**40),
    ("1,000M", 1e9),
    ("2^20", 2.0**20), ("2**20", 2.0**20), ("10^-3", 1e-3), ("2^0.5", math.sqrt(2)),
    ("1.5^2", 2.25), ("2 ^ 10", 1024.0), ("-2^2", -4.0), ("+2^2", 4.0), ("-8^0.5", -math.sqrt(8)),
])
def test_accepted_numbers(text, value):
    assert parse_number(text) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("text, message", [
    ("", "needs a number"),
    ("   ", "needs a number"),
    ("abc", "'abc' is not a number (e.g. 1000000, 1e6, 1,000,000, 16M, 16Mi or 2^20)"),
    ("1,5", "'1,5': a comma may only group digits by three (1,000,000); use a point for decimals"),
    ("1,00", "a comma may only group digits by three"),
    ("1,0000", "a comma may only group digits by three"),
    (",100", "a comma may only group digits by three"),
    ("1000,000", "a comma may only group digits by three"),
    ("16m", "is not a number"),        # milli is not a count prefix; M is mega
    ("16Mi2", "is not a number"),
    ("16MM", "is not a number"),
    ("2^", "is not a number"),
    ("2^^3", "is not a number"),
    ("2^3^2", "is not a number"),
    ("2k^3", "is not a number"),
    ("1e", "is not a number"),
    ("nan", "is not a number"), ("inf", "is not a number"), ("-Infinity", "is not a number"),
    ("0x10", "is not a number"),
    ("1e400", "'1e400' is not a finite number (at most about 1.8e308)"),
    ("10^400", "is not a finite number"),
    ("2**99999", "is not a finite number"),
    ("0^-1", "is not a finite number"),
    ("(-8)^0.5", "is not a number"),
    ("1e300P", "is not a finite number"),
])
def test_refused_numbers(text, message):
    with pytest.raises(QuantityError) as info:
        parse_number(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_refused_text_is_cut_and_errors_are_model_errors():
    with pytest.raises(QuantityError) as info:
        parse_number("x" * 3600)
    assert len(str(info.value)) < 200 and "…" in str(info.value)
    assert isinstance(info.value, ModelError) and isinstance(info.value, ValueError)


def test_prefixes_can_be_forbidden():
    assert parse_number("2^20", prefixes=False) == 2**20
    assert parse_number("1,000", prefixes=False) == 1000
    with pytest.raises(QuantityError, match="1e6, 1,000,000 or 2\\^20"):
        parse_number("16M", prefixes=False)


@pytest.mark.parametrize("text, units, value", [
    ("1.6e9", BYTES, 1.6e9), ("1.6GB", BYTES, 1.6e9), ("1.6 gb", BYTES, 1.6e9),
    ("2GiB", BYTES, 2 * 2**30), ("512KiB", BYTES, 512 * 1024), ("16M", BYTES, 16e6),
    ("16Mi", BYTES, 2**24), ("16MB", BYTES, 16e6), ("2^20B", BYTES, 2**20),
    ("1,000 MB", BYTES, 1e9), ("4 b", BYTES, 4.0),
    ("3.97us", TIME, 3.97e-6), ("3.97 µs", TIME, 3.97e-6), ("0.00396868ms", TIME, 3.96868e-6),
    ("5ns", TIME, 5e-9), ("2s", TIME, 2.0), ("2", TIME, 2.0), ("1e-3", TIME, 1e-3),
])
def test_accepted_quantities(text, units, value):
    assert parse_quantity(text, units, "quantity", "an example") == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("text, units, kwargs, message", [
    ("1.6XB", BYTES, {}, "'1.6XB' is not a valid size (e.g. 1.6GB; units: b, kb, mb, gb, tb, kib, "
                         "mib, gib, tib)"),
    ("16MMB", BYTES, {}, "is not a valid size"),      # the unit carries the prefix
    ("16kMB", BYTES, {}, "is not a valid size"),
    ("GB", BYTES, {}, "is not a valid size"),
    ("1,5GB", BYTES, {}, "'1,5GB': a comma may only group digits by three"),
    ("1e400GB", BYTES, {}, "'1e400GB' is not a finite size"),
    ("1e300TB", BYTES, {}, "is not a finite size"),
    ("1.253G", {"": 1, "mhz": 1, "ghz": 1e3}, {"bare_prefixes": False}, "is not a valid size"),
    ("12", {"s": 1}, {}, "is not a valid size (e.g. 1.6GB; units: s)"),
])
def test_refused_quantities(text, units, kwargs, message):
    with pytest.raises(QuantityError) as info:
        parse_quantity(text, units, "size", "1.6GB", **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_plain_floats_round_trip(x):
    assert parse_number(repr(x)) == x
    assert parse_number(f" {x!r} ") == x


@given(st.integers(min_value=-10**15, max_value=10**15))
def test_grouped_integers_round_trip(n):
    assert parse_number(f"{n:,}") == n
    assert parse_quantity(f"{n:,}", BYTES, "size", "1.6GB") == n


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
def test_grouped_floats_round_trip(x):
    text = f"{x:,.6f}"
    assert parse_number(text) == float(text.replace(",", ""))


# -- unit tables (one for the GUI's device fields and the CLI's flags) --------------------

from gpumodeler.core.quantities import BYTE_UNITS, TIME_UNITS, prefixed_units, units_of  # noqa: E402


@pytest.mark.parametrize("text, unit, value", [
    ("1253 MHz", "Hz", 1.253e9), ("1.253GHz", "Hz", 1.253e9), ("1253 mhz", "Hz", 1.253e9),
    ("1.253e9", "Hz", 1.253e9), ("1.253G", "Hz", 1.253e9),
    ("96 KiB", "B", 98304), ("4 GiB", "B", 4 * 2**30), ("1.6 GB", "B", 1.6e9), ("16Mi", "B", 2**24),
    ("15.8 GB/s", "B/s", 15.8e9), ("2 GiB/s", "B/s", 2 * 2**30),
    ("3.97 µs", "s", 3.97e-6), ("3.97 μs", "s", 3.97e-6), ("3.97us", "s", 3.97e-6), ("2 ms", "s", 2e-3),
    ("145 W", "W", 145), ("1.2 kW", "W", 1200),
    ("13.78 B/cycle", "B/cycle", 13.78), ("4 cycles", "cycle", 4), ("2^10", "count", 1024),
])
def test_device_units_accept(text, unit, value):
    assert parse_quantity(text, units_of(unit), "x", "y") == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text, unit", [
    ("5 mW", "W"),      # milli would read as mega in a case-insensitive table: refused
    ("7 kg", "Hz"), ("16MMB", "B"), ("3 kcycle", "cycle"), ("13 SMs", "count"), ("1,5 GHz", "Hz"),
    ("0.7 Hz", "ratio"), ("1e400 Hz", "Hz"),
])
def test_device_units_refuse(text, unit):
    with pytest.raises(QuantityError):
        parse_quantity(text, units_of(unit), "x", "y")


def test_unit_tables_are_the_clis():
    from gpumodeler.cli import common
    assert BYTE_UNITS == common._BYTES
    assert {k: v for k, v in TIME_UNITS.items() if k != "\u03bcs"} == common._TIME
    assert prefixed_units("hz", bare=False) == {"hz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9,
                                                "thz": 1e12}
