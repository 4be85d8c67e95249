"""The switch between quick and full repetition counts (tests/repetitions.py)."""
import pytest

import repetitions
from repetitions import repetitions as count


def test_quick_unless_the_run_selects_the_slow_tests(request, monkeypatch):
    selected = "slow" in (request.config.getoption("markexpr") or "")
    assert count(3, 10) == (10 if selected else 3)
    monkeypatch.setenv(repetitions.FULL, "1")
    assert count(3, 10) == 10
    monkeypatch.setenv(repetitions.FULL, "0")
    assert count(3, 10) == 3


@pytest.mark.parametrize("quick, full", [(0, 5), (6, 5)])
def test_a_quick_count_above_the_full_one_or_none_is_refused(quick, full):
    with pytest.raises(ValueError, match="quick <= full"):
        count(quick, full)
