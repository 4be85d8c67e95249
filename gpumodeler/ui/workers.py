"""Background work off the GUI thread: a sweep runs on a snapshot in a thread pool and
reports progress, its result (a value) or a message; the model is never touched from it.
Other long calls (a calibration, an evaluation, a trace import) run as a :class:`CallJob`,
with progress and cancel when the work reports how far it is.
"""
from __future__ import annotations

import sys
import threading

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from gpumodeler.core.errors import ModelError
from gpumodeler.ui.logs import bug

from gpumodeler.core.launch_sweep import SweepCancelled, run_sweep


class SweepSignals(QObject):
    progress = Signal(int)  # percent
    finished = Signal(object)  # SweepResult
    failed = Signal(str)
    cancelled = Signal()


class SweepJob(QRunnable):
    """One sweep. Keep a reference until one of its end signals arrives."""

    def __init__(self, snapshot):
        super().__init__()
        self.setAutoDelete(False)
        self.snapshot = snapshot
        self.signals = SweepSignals()
        self._cancel = threading.Event()
        self.done = threading.Event()
        self.measured = None  # what the launcher wants back with the result

    def cancel(self) -> None:
        self._cancel.set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def run(self) -> None:
        last = [-1]

        def progress(fraction):
            pct = int(fraction * 100)
            if pct != last[0]:
                last[0] = pct
                self.signals.progress.emit(pct)

        try:
            result = run_sweep(self.snapshot, progress=progress, cancelled=self._cancel.is_set)
        except SweepCancelled:
            self.signals.cancelled.emit()
        except ModelError as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # a bug must not take the application down: report it
            bug("the sweep")
            self.signals.failed.emit(f"the sweep failed unexpectedly ({type(exc).__name__}: {exc})")
        else:
            if self._cancel.is_set():
                self.signals.cancelled.emit()
            else:
                self.signals.finished.emit(result)
        finally:
            self.done.set()


class CallSignals(QObject):
    progress = Signal(int)  # percent (a job made with progress=True)
    finished = Signal(object)  # the call's value
    failed = Signal(str)
    cancelled = Signal()


class JobCancelled(Exception):
    """Raised by :meth:`CallJob.tick` once the job is cancelled; the job catches it."""


class CallJob(QRunnable):
    """One call of ``work()`` off the GUI thread: its value by ``signals.finished``; a
    ModelError's message (through ``words``, the dialog's own wording) or a bug's by
    ``signals.failed``, never a crash (``what`` names it in the log). Keep a reference
    until an end signal arrives.

    With ``progress=True`` the call is ``work(tick)``: the work calls ``tick(fraction)`` as
    it goes, which reports ``signals.progress`` (percent, when it changes) and, once
    :meth:`cancel` was called, stops the work (``signals.cancelled`` instead of a value)."""

    def __init__(self, work, what: str, words=str, progress: bool = False):
        super().__init__()
        self.setAutoDelete(False)
        self.work, self.what, self.words = work, what, words
        self.with_progress = progress
        self.signals = CallSignals()
        self._cancel = threading.Event()
        self._percent = -1

    def cancel(self) -> None:
        self._cancel.set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def tick(self, fraction: float) -> None:
        if self._cancel.is_set():
            raise JobCancelled()
        percent = int(fraction * 100)
        if percent != self._percent:
            self._percent = percent
            self.signals.progress.emit(percent)

    def run(self) -> None:
        try:
            value = self.work(self.tick) if self.with_progress else self.work()
        except JobCancelled:
            self.signals.cancelled.emit()
            return
        except ModelError as exc:
            self.signals.failed.emit(self.words(str(exc)))
            return
        except Exception as exc:  # a bug: say so where the user waits, never crash the app
            bug(self.what)
            self.signals.failed.emit(f"internal error ({type(exc).__name__}: {exc})")
            return
        if self._cancel.is_set():
            self.signals.cancelled.emit()
        else:
            self.signals.finished.emit(value)


_POOL: QThreadPool | None = None


def sweep_pool() -> QThreadPool:
    """The pool sweeps run in (one at a time: a new sweep cancels the previous one)."""
    global _POOL
    if _POOL is None:
        _POOL = QThreadPool()
        _POOL.setMaxThreadCount(2)
    return _POOL


def start(job: SweepJob) -> None:
    in_background(job, sweep_pool())


#: the longest a thread computing in Python keeps the GIL from a thread waiting for it
GUI_SWITCH_INTERVAL_S = 0.001


def in_background(job: QRunnable, pool: QThreadPool | None = None) -> None:
    """Start ``job`` in ``pool`` (Qt's global pool by default), the GUI thread first in line
    for the GIL while it runs.

    Python gives the GIL to a waiting thread only once the thread holding it has run for the
    switch interval, 5 ms by default, and PySide lets the GIL go around its calls into Qt: so
    while a worker computes, the GUI thread waits up to 5 ms each time it takes the GIL
    back, many times in one paint. An edge added to a kernel of 2·10^4 instructions, its
    analysis then running in the background, took a median 38 ms on the GUI thread over five
    runs (31-70 ms); with 1 ms, 17-21 ms in most runs (benchmarks/bench_gui_kernel.py, a
    shared machine). The worker pays with more hand-overs: no slower analysis was measured
    through that noise. The interval is the process's: lowered once, never raised."""
    if sys.getswitchinterval() > GUI_SWITCH_INTERVAL_S:
        sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    (pool if pool is not None else QThreadPool.globalInstance()).start(job)
