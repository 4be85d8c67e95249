"""One rule for the unit of a shown time (core/units_format.py), and every caller's text the
same as the rule it had before it used this module (written out below as references)."""
from __future__ import annotations

import math
import random

import pytest

from gpumodeler.cli.common import fmt_time as cli_fmt_time
from gpumodeler.core.units_format import TIME_UNITS, format_time, time_unit


def _values():
    rng = random.Random(7)
    fixed = [0.0, 1e-12, 1e-9, 9.99e-10, 1e-6, 1e-3, 0.999e-3, 1.0, 0.999999, 12.5, 3600.0,
             1.5e-4, 2.5e-7, 146e-3]
    return fixed + [10 ** rng.uniform(-12, 4) for _ in range(300)]


@pytest.mark.parametrize("seconds, unit", [(0.146, "ms"), (1.0, "s"), (0.999, "ms"),
                                           (1e-3, "ms"), (2e-6, "µs"), (5e-9, "ns"),
                                           (1e-12, "ns"), (0.0, "ns"), (-0.5, "ms"),
                                           (math.inf, "s"), (math.nan, "ns")])
def test_the_unit_is_the_largest_with_at_least_one(seconds, unit):
    assert time_unit(seconds)[0] == unit
    assert time_unit(seconds)[1] == dict(TIME_UNITS)[unit]


def test_a_smallest_unit_stops_the_search():
    assert time_unit(1e-9, smallest="µs") == ("µs", 1e-6)
    assert time_unit(0.0, smallest="ms") == ("ms", 1e-3)
    with pytest.raises(ValueError, match="valid: s, ms, µs, ns"):
        time_unit(1.0, smallest="us")


def test_format_time_in_its_unit_or_a_given_one():
    assert format_time(0.0001234) == "123.4 µs"
    assert format_time(0.0001234, unit=("ms", 1e-3)) == "0.1234 ms"
    assert format_time(2.0, 6) == "2 s"


def test_the_cli_prints_as_before():
    def before(seconds):  # the CLI's own rule before it used core
        if seconds >= 1:
            return f"{seconds:.6g} s"
        if seconds >= 1e-3:
            return f"{seconds * 1e3:.6g} ms"
        return f"{seconds * 1e6:.6g} µs"
    for v in _values():
        assert cli_fmt_time(v) == before(v), v


def test_the_gui_fields_and_tables_show_as_before():
    pytest.importorskip("numpy")
    from gpumodeler.ui.plots.units import fmt_time
    from gpumodeler.ui.units import _trim, format_quantity

    def quantity_before(value, digits=4):
        for name, scale in TIME_UNITS:
            if abs(value) >= scale or name == "ns":
                return f"{_trim(value / scale, digits)} {name}"

    def table_before(seconds, digits=4):
        top = abs(seconds) if seconds else 1.0
        name, scale = next(((n, s) for n, s in TIME_UNITS if top >= s), TIME_UNITS[-1])
        return f"{seconds / scale:.{digits}g} {name}"
    for v in _values() + [-v for v in _values()]:
        assert format_quantity(v, "s") == quantity_before(v), v
        assert fmt_time(v) == table_before(v), v
    assert fmt_time(0.0) == "0 s" and format_quantity(0.0, "s") == "0 ns"


def test_the_measurement_dialog_shows_times_as_before():
    pytest.importorskip("PySide6")
    from gpumodeler.ui.measurements.dialog import _time

    def before(t):
        for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
            if t >= scale:
                return f"{t / scale:.4g} {unit}"
        return f"{t / 1e-9:.4g} ns"
    for v in _values():
        assert _time(v) == before(v), v
    assert _time(None) == "(metrics only)"
