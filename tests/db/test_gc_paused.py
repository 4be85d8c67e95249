"""comparison.gc_paused: the collector is off inside, on again after, and leaving the block
starts no collection over what was made inside (those objects are promoted first)."""
import gc

import pytest

from gpumodeler.db.comparison import gc_paused


@pytest.fixture
def unfrozen():
    """The process as a program that froze nothing (the test session freezes its start-up
    objects, tests/conftest.py): frozen again afterwards."""
    was_frozen = gc.get_freeze_count() > 0
    gc.unfreeze()
    if not gc.isenabled():
        pytest.skip("the collector is off in this process")
    yield
    if was_frozen:
        gc.freeze()


def test_leaving_the_pause_starts_no_collection_over_what_was_made(unfrozen):
    started = []

    def watch(phase, info):
        if phase == "start":
            started.append(info["generation"])
    with gc_paused():
        assert not gc.isenabled()
        made = [[i] for i in range(20_000)]     # far beyond the young generation's threshold
        gc.callbacks.append(watch)
    try:
        assert started == []
        assert gc.isenabled() and gc.get_freeze_count() == 0
        assert gc.get_count()[0] < gc.get_threshold()[0]
    finally:
        gc.callbacks.remove(watch)
    assert len(made) == 20_000


def test_a_program_that_froze_objects_keeps_them_frozen(unfrozen):
    gc.freeze()
    frozen = gc.get_freeze_count()
    with gc_paused():
        pass
    assert gc.get_freeze_count() == frozen and gc.isenabled()
