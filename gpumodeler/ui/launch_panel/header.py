"""The launch panel's answer header: the launch's total time, kernel time, bound and binding
resource, and the registered models' spread, on one line above the inputs and the results,
so it stays on screen however short the window (nothing of it scrolls).

It shows a :class:`~gpumodeler.core.pipeline.LaunchResult` and the models' statuses
(:func:`.models_view.model_status`) and computes nothing.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy

from ..plots.units import fmt_time
from .models_view import spread_text
from .results import RESOURCE_NAMES

STYLE = ("QFrame#answer_header { background: #eef4f1; border: 1px solid #b9cfc6;"
         " border-radius: 4px; }")


class AnswerHeader(QFrame):
    """``total`` (the answer, large), ``summary`` (kernel time, bound, binding resource) and
    ``spread`` (the models), each a QLabel."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("answer_header")
        self.setStyleSheet(STYLE)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 3, 8, 3)
        lay.setSpacing(14)
        self._summary = ""  # the kernel's line as show_result wrote it
        self.total = QLabel("—")
        self.total.setObjectName("header_total")
        self.total.setTextFormat(Qt.RichText)
        self.total.setToolTip("The launch's predicted time: kernel plus its transfers")
        self.summary = QLabel()
        self.summary.setObjectName("header_summary")
        self.summary.setTextFormat(Qt.RichText)
        self.summary.setWordWrap(True)  # a narrow window wraps it rather than scrolling the page
        self.spread = QLabel()
        self.spread.setObjectName("header_spread")
        self.spread.setTextFormat(Qt.RichText)
        self.spread.setWordWrap(True)
        self.spread.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.spread.setToolTip("The registered models' fastest and slowest times for this launch "
                               "(their rows: Models side by side)")
        for w in (self.total, self.summary):
            w.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.total)
        lay.addWidget(self.summary, 1)
        lay.addWidget(self.spread, 1)

    def show_result(self, r, message: str = "", transfer_error: str = "") -> None:
        """Show result ``r`` (LaunchResult or None: ``message`` says why)."""
        if r is None:
            self.total.setText("<span style='font-size:14pt'><b>Total —</b></span>")
            self.summary.setText(f"<span style='color:#b00000'>{_short(message)}</span>"
                                 if message else "")
            self.summary.setToolTip(message)
            self.spread.setText("")
            self._summary = ""
            return
        p, k = r.prediction, r.prediction.kernel
        if transfer_error:
            total = "<b>Total —</b> <span style='font-size:9pt;color:#b00000'>(transfers unknown)</span>"
        else:
            total = f"<b>Total {fmt_time(p.total_time_s)}</b>"
        self.total.setText(f"<span style='font-size:14pt'>{total}</span>")
        limiting = RESOURCE_NAMES.get(k.limiting_resource, k.limiting_resource)
        self._summary = (f"kernel <b>{fmt_time(k.time_s)}</b> · <b>{k.mode}-bound</b>, "
                         f"limited by {limiting}")
        self.summary.setText(self._summary)
        self.summary.setToolTip("")

    def show_models(self, results: dict | None, statuses: dict) -> None:
        """The models' spread (nothing when no model gave a time)."""
        text = spread_text(results, statuses)
        self.spread.setText(text.replace("spread:", "models:", 1))
        # the kernel time is the gajger model's: say so when its λ is not calibrated
        if statuses.get("gajger", ("ok", ""))[0] == "uncalibrated" and self._summary:
            self.summary.setText(self._summary + " <span style='color:#a04a00'>(λ = 1, "
                                 "uncalibrated)</span>")


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
