"""The launch panel's results: the prediction of one launch, row by row, or why there is none.

It shows a :class:`~gpumodeler.core.pipeline.LaunchResult` (from ``evaluate_launch``, the
call the CLI's numbers come from) and computes nothing.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QPushButton

from gpumodeler.core.models.throughput import RESOURCES

from ..plots.units import fmt_bytes, fmt_count, fmt_time
from .fields import message_label
from .terms_box import panel_words

RESOURCE_NAMES = {"cuda_cores": "CUDA cores", "issue": "issue", "memory": "global memory",
                  "sfu": "SFU", "fp64": "FP64", "shared_memory": "shared memory", "latency": "latency",
                  "fp32": "FP32 pipe", "int32": "INT32 pipe", "fp32_int32": "FP32+INT32 lanes",
                  "fp16": "FP16 pipe", "tensor": "tensor cores", "l2": "L2",
                  "l1": "L1", "lsu": "load/store units"}
LIMIT_NAMES = {"warps": "warps", "registers": "registers", "shared_memory": "shared memory",
               "blocks": "blocks per SM"}
ROWS = (("kernel_time", "Kernel time"), ("terms", "Kernel terms"), ("mode", "Mode"), ("latency_bound", "Latency bound"),
        ("occupancy", "Occupancy"), ("warps", "Warps launched"),
        ("warp_throughput", "Warp throughput"), ("cycles", "Cycles per warp"),
        ("knee", "Mode changes at"), ("transfers", "Transfers"), ("total", "Total"))


class PredictionView(QGroupBox):
    """The "Prediction" box: ``labels`` (one value label per row of :data:`ROWS`) and
    ``message`` (why there is no prediction). When only the transfers cannot be predicted,
    the kernel rows stay, the transfer and total rows say why, and ``fix_button`` (when the
    panel knows the missing field) emits ``fix_requested``."""

    fix_requested = Signal()

    def __init__(self, parent=None):
        super().__init__("Prediction", parent)
        grid = QGridLayout(self)
        grid.setColumnStretch(1, 1)
        # why there is no prediction (or no transfer prediction), and the button to the
        # missing value: at the top, on screen however short the window
        self.message = message_label()
        grid.addWidget(self.message, 0, 0, 1, 2)
        self.fix_button = QPushButton()
        self.fix_button.setObjectName("fix_button")
        self.fix_button.setToolTip("Select the link and its field in the inspector, to type the value")
        self.fix_button.clicked.connect(self.fix_requested)
        self.fix_button.hide()
        grid.addWidget(self.fix_button, 1, 0, 1, 2, Qt.AlignLeft)
        self.labels: dict[str, QLabel] = {}
        for r, (key, title) in enumerate(ROWS, start=2):
            t = QLabel(title)
            t.setStyleSheet("color: #5f6368;")
            t.setAlignment(Qt.AlignTop | Qt.AlignLeft)
            v = QLabel("—")
            v.setWordWrap(True)
            v.setTextInteractionFlags(Qt.TextSelectableByMouse)
            v.setTextFormat(Qt.RichText)
            grid.addWidget(t, r, 0)
            grid.addWidget(v, r, 1)
            self.labels[key] = v
        grid.setRowStretch(len(ROWS) + 2, 1)

    def show_result(self, r, message: str = "", transfer_error: str = "", fix_text: str = "") -> None:
        """Show result ``r``, or dashes and ``message`` when it is None. ``transfer_error``:
        ``r`` is the kernel alone because the transfers cannot be predicted (the reason);
        ``fix_text``: the text of the button that shows the missing field."""
        L = self.labels
        self.fix_button.setText(fix_text)
        self.fix_button.setVisible(bool(fix_text))
        if r is None:
            for v in L.values():
                v.setText("—")
            self.message.setText(message)
            self.message.setVisible(bool(message))
            return
        self.message.setText(transfer_error and f"Transfers not predicted: {transfer_error}")
        self.message.setVisible(bool(transfer_error))
        p, k, tb = r.prediction, r.prediction.kernel, r.prediction.throughput
        L["kernel_time"].setText(f"<b>{fmt_time(k.time_s)}</b>  ({fmt_count(k.time_cycles)} cycles, λ = {k.lam:g})")
        L["terms"].setText(terms_text(p.terms))
        limiting = RESOURCE_NAMES.get(k.limiting_resource, k.limiting_resource)
        L["mode"].setText(f"<b>{k.mode}-bound</b>, limited by {limiting}")
        L["latency_bound"].setText(f"{r.latency_bound_formula} = {r.latency_bound_cycles:g} cycles per warp")
        L["occupancy"].setText(f"{r.occupancy_warps_per_sm:g} warps/SM"
                               + ("" if r.occupancy_detail else " (override)"))
        L["warps"].setText(f"{fmt_count(k.warps_launched)} in {fmt_count(r.grid_size)} blocks")
        L["warp_throughput"].setText(
            f"{k.warp_throughput:.4g} warps/cycle/SM = min(occupancy/latency {k.latency_throughput:.4g}, "
            f"throughput bound {k.throughput_bound:.4g})")
        cells = []
        for res in RESOURCES:
            v = tb.cycles_per_warp[res]
            if v:
                name = RESOURCE_NAMES.get(res, res)
                cells.append(f"<b>{name} {v:.4g}</b>" if res == tb.binding else f"{name} {v:.4g}")
        L["cycles"].setText(" · ".join(cells) + f"  (binding: {RESOURCE_NAMES.get(tb.binding, tb.binding)})")
        L["knee"].setText(f"occupancy {k.knee_occupancy:.4g} warps/SM "
                          f"(latency-bound below it, throughput-bound above)")
        if transfer_error:
            L["transfers"].setText("<span style='color:#b00000'>unknown (see above)</span>")
            L["total"].setText(f"— (the kernel alone takes {fmt_time(k.time_s)})")
            return
        if p.transfers:
            lines = [f"{'host → device' if d == 'htod' else 'device → host'} {fmt_bytes(n)}: {fmt_time(t)}"
                     for (d, n), t in zip(p.transfers, p.transfer_times_s)]
            L["transfers"].setText("<br>".join(lines) + (f"<br><span style='color:#5f6368'>over {r.link.name}</span>"
                                                        if r.link else ""))
        else:
            L["transfers"].setText("none")
        L["total"].setText(f"<b>{fmt_time(p.total_time_s)}</b>")


def terms_text(terms) -> str:
    """The kernel terms of a prediction (core.models.kernel_terms_vec.VecTerms): those that
    changed the time first, with eq. 4.1's time, then the others and why they are off."""
    if terms is None:
        return "none (eq. 4.1)"
    effects = terms.effects()
    applied = [panel_words(t.describe()) for t in effects if t.applied]
    off = [panel_words(t.describe()) for t in effects if not t.applied]
    lines = [f"<b>{a}</b>" for a in applied]
    if applied:
        lines.append(f"eq. 4.1 alone: {fmt_time(float(terms.eq41_cycles / terms.clock_hz))}")
    lines += [f"<span style='color:#5f6368'>{o}</span>" for o in off]
    return "<br>".join(lines)


def occupancy_text(r) -> str:
    """What the occupancy calculator found for result ``r`` ('' without one)."""
    if r is None:
        return ""
    d = r.occupancy_detail
    if d is None:
        return f"{r.occupancy_warps_per_sm:g} warps/SM (override)"
    limits = ", ".join(LIMIT_NAMES.get(x, x) for x in d.limited_by)
    return (f"{d.active_warps_per_sm} warps/SM ({d.occupancy * 100:.0f} %), limited by {limits}; "
            f"{d.active_blocks_per_sm} blocks/SM")
