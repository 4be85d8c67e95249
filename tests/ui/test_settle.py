"""screenshot.settle runs the event loop for the time asked, and naps between rounds of
events instead of spinning a core for the whole wait."""
import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gpumodeler.ui import screenshot


def test_settle_runs_deferred_timers_for_the_time_asked_without_spinning(qapp, monkeypatch):
    rounds = []
    real = QApplication.processEvents
    monkeypatch.setattr(QApplication, "processEvents",
                        staticmethod(lambda *a: rounds.append(1) or real(*a)))
    fired = []
    QTimer.singleShot(0, lambda: fired.append("0 ms"))
    QTimer.singleShot(30, lambda: fired.append("30 ms"))
    ms = 120
    start = time.monotonic()
    screenshot.settle(ms)
    assert time.monotonic() - start >= ms / 1000 * 0.95
    assert fired == ["0 ms", "30 ms"]
    # a round, then a nap: about ms / NAP_MS rounds (a spinning loop makes thousands)
    assert 2 <= len(rounds) <= ms / screenshot.NAP_MS + 2
