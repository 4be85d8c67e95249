"""Pausing CPython's cyclic garbage collector while a big kernel graph is built or analysed.

Reading, validating and analysing a graph of 10^5 instructions allocates millions of small
objects that all stay reachable. Every so often the collector runs a full pass over every
object alive, so with it running the work grows faster than the graph (measured: 10× the
instructions took 13–20× the time; with the collector paused, 10–12×). Those passes cannot
free anything here, so the graph stages run with the collector paused and restore it after;
cycles made meanwhile are collected by a later pass of the oldest generation.

On the way out the objects the block made go straight to the oldest generation (``gc.freeze``
then ``gc.unfreeze``: two list splices). Left in the youngest, the first allocation after the
pause would start a young collection walking every one of them (10–25 ms per stage on a
graph of 10^5 instructions, three stages per analysis) to free nothing. This is skipped when
the program froze objects of its own (``gc.get_freeze_count()``), which unfreezing would
release.

It is also skipped when the block left fewer than :data:`PROMOTE_FROM` objects in the young
generation: their young collection costs a fraction of a millisecond, while
``gc.get_freeze_count()`` walks every frozen object (CPython 3.11 counts them one by one:
about 1 ms per 300 000, paid by every small pause of a program that froze many objects, such
as the test session, which froze its start-up objects).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

#: The young-generation count from which a pause promotes what it made on the way out.
PROMOTE_FROM = 10_000


@contextmanager
def collector_paused():
    """Disable the cyclic collector for the block (it stays off if it already was); when it
    was on, what the block made (when it is many objects) is moved to the oldest generation
    on the way out."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] >= PROMOTE_FROM and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
