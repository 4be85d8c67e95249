"""The peak-rate floor's warning has a tolerance of one part in 10^9 (rounding only): a time
that far below the floor passes, anything further below is flagged."""
import pytest

from gpumodeler.core.models.sanity import floor_warning

FLOOR = 2.5e-3  # s


@pytest.mark.parametrize("below", [0.0, 1e-10, 5e-10, 9e-10])
def test_within_the_tolerance_no_warning(below):
    assert floor_warning("gajger", FLOOR * (1 - below), FLOOR) is None


@pytest.mark.parametrize("below", [2e-9, 1e-6, 1e-3, 0.05, 0.099])
def test_beyond_the_tolerance_warns(below):
    w = floor_warning("gajger", FLOOR * (1 - below), FLOOR)
    assert w is not None
    assert w.startswith("gajger: predicted") and "peak rates" in w


def test_above_the_floor_or_no_floor_never_warns():
    assert floor_warning("gajger", FLOOR * 1.5, FLOOR) is None
    assert floor_warning("gajger", 1e-12, None) is None
    assert floor_warning("gajger", 1e-12, 0.0) is None
