"""Pausing CPython's cyclic garbage collector while a big kernel graph is built or analysed.

Reading, validating and analysing a graph of 10^5 instructions allocates millions of small
objects that all stay reachable. Every so often the collector runs a full pass over every
object alive, so with it running the work grows faster than the graph (measured: 10× the
instructions took 13–20× the time; with the collector paused, 10–12×). Those passes cannot
free anything here, so the graph stages run with the collector paused and restore it after.

Pausing alone only moves the work: every object made during the pause is still in the
youngest generation when the collector is enabled again, so the next allocation starts a
pass over all of them (and later passes of the middle generation go over them again) — for a
10^5-instruction graph about 0.6 s of CPU per read-analyse-count-path (measured with
``gc.callbacks``), growing faster than the graph. So on leaving the pause the objects are
moved straight to the oldest generation, with ``gc.freeze()`` then ``gc.unfreeze()`` ("move
all objects into a permanent generation" / "put them back into the oldest generation",
Python documentation of the ``gc`` module): they are then looked at by the next full pass
only, like any other long-lived object, and cycles made meanwhile are collected then. This is
skipped when something else has frozen objects (``gc.get_freeze_count()``), whose
``unfreeze`` would be undone.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    """Disable the cyclic collector for the block (it stays off if it already was); on
    leaving, move what the block made to the oldest generation (module docstring)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
