"""How many times a randomised or robustness test repeats itself.

A fuzz test, a kill-at-any-moment test or a random round trip draws the same classes of
case whatever its count; the count only says how many draws. ``make test`` runs a smaller
fixed number so the suite stays quick; a run whose ``-m`` names ``slow`` (``make
test-slow``, which runs every test) runs the full number. ``tests/conftest.py`` sets the switch.
"""
import os

#: Set by tests/conftest.py: "1" when the run's -m names the slow tests, else "0".
FULL = "GPUMODELER_TESTS_FULL"


def repetitions(quick: int, full: int) -> int:
    """``full`` in a run that selects the slow tests, else ``quick``."""
    if quick < 1 or full < quick:
        raise ValueError(f"repetitions({quick}, {full}): need 1 <= quick <= full")
    return full if os.environ.get(FULL) == "1" else quick
