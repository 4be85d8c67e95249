"""Pausing CPython's cyclic garbage collector while a big kernel graph is built or analysed.

Reading, validating and analysing a graph of 10^5 instructions allocates millions of small
objects that all stay reachable. Every so often the collector runs a full pass over every
object alive, so with it running the work grows faster than the graph (measured: 10× the
instructions took 13–20× the time; with the collector paused, 10–12×). Those passes cannot
free anything here, so the graph stages run with the collector paused and restore it after;
cycles made meanwhile are collected by its next pass as usual.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    """Disable the cyclic collector for the block (it stays off if it already was)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
