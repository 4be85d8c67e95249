"""LearnDialog (Calibrate › Learn…): pick measurement files, the learned methods and the
protocol, evaluate off the GUI thread (core.learn.evaluate, as `gpumodeler learn evaluate`),
and show the table of errors per held-out group beside every analytical model and the
roofline, with a log-log plot of predicted against measured times, one colour per held-out
group (docs/learning.md). Every error is shown in the dialog; nothing is stored."""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog,
                               QFormLayout, QHBoxLayout, QLabel, QListWidget, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from gpumodeler.core.errors import ModelError

from ..workers import CallJob, in_background
from .plot import log_log_plot

METHODS = ("lr", "svr", "rf", "hybrid")
LEAVE_OUT = ("gpu", "kernel", "size")
#: one colour per held-out group (cycled beyond ten groups)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


@dataclass(frozen=True)
class LearnRequest:
    """A snapshot of what to evaluate (values only: the worker touches nothing else)."""

    records: tuple
    gpus: dict  # cleaned GPU name -> GPUSpec
    methods: tuple
    leave_out: str


def evaluation_of(request: LearnRequest) -> tuple:
    """(evaluation, notes) of the request (run off the GUI thread)."""
    from gpumodeler.core.learn.dataset import build_rows, with_analytical
    from gpumodeler.core.learn.evaluate import evaluate
    from gpumodeler.core.models.registry import MODELS
    rows, notes = build_rows(request.records, request.gpus)
    return evaluate(with_analytical(rows), list(request.methods), request.leave_out,
                    models=list(MODELS)), notes


def learn_job(request: LearnRequest) -> CallJob:
    """The evaluation of ``request`` as a background job (finished: (evaluation, notes))."""
    return CallJob(lambda: evaluation_of(request), "the learned-model evaluation")


class AccuracyPlot(QWidget):
    """Predicted against measured times, log-log, one colour per held-out group, and the
    line of exact predictions. Built once; ``show_points`` updates it with ``setData``."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.graphics, self.plot = log_log_plot(self)
        self.plot.setLabel("bottom", "measured", units="s")
        self.plot.setLabel("left", "predicted", units="s")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.legend = self.plot.addLegend(offset=(10, 10))
        self.diagonal = self.plot.plot([], [], pen=pg.mkPen("#7f7f7f", style=Qt.PenStyle.DashLine))
        self.groups = [self.plot.plot([], [], pen=None, symbol="o", symbolSize=6,
                                      symbolBrush=c, symbolPen=None) for c in PALETTE]

    def show_points(self, points) -> None:
        """``points``: core.learn.evaluate.Point values of one method (an empty list clears)."""
        self.legend.clear()
        held = list(dict.fromkeys(p.held_out for p in points))
        for k, item in enumerate(self.groups):
            mine = [p for p in points if held.index(p.held_out) % len(self.groups) == k] if held else []
            item.setData([p.measured_s for p in mine], [p.predicted_s for p in mine])
            if mine:
                names = sorted({p.held_out for p in mine}, key=held.index)
                self.legend.addItem(item, ", ".join(names))
        if points:
            lo = min(min(p.measured_s, p.predicted_s) for p in points)
            hi = max(max(p.measured_s, p.predicted_s) for p in points)
            self.diagonal.setData([lo, hi], [lo, hi])
        else:
            self.diagonal.setData([], [])


class LearnDialog(QDialog):
    """``catalog``: the device catalog the measured GPUs are looked up in."""

    evaluated = Signal(object)

    def __init__(self, catalog, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Learn from measurements")
        self.catalog = catalog
        self.paths: list[str] = []
        self.records: tuple = ()
        self.result = None
        self._job: CallJob | None = None
        self._last_job: CallJob | None = None

        self.file_list = QListWidget()
        self.file_list.setMaximumHeight(70)
        add = QPushButton("Add files…")
        add.clicked.connect(self._browse)
        files = QHBoxLayout()
        files.addWidget(self.file_list, 1)
        files.addWidget(add, 0, Qt.AlignmentFlag.AlignTop)
        self.method_boxes = {m: QCheckBox(m) for m in METHODS}
        for m in ("lr", "hybrid"):
            self.method_boxes[m].setChecked(True)
        methods = QHBoxLayout()
        for box in self.method_boxes.values():
            methods.addWidget(box)
        methods.addStretch(1)
        self.leave_out_box = QComboBox()
        self.leave_out_box.addItems(LEAVE_OUT)
        self.evaluate_button = QPushButton("Evaluate")
        self.evaluate_button.clicked.connect(self.start_evaluation)
        form = QFormLayout()
        form.addRow("Measurements", files)
        form.addRow("Learned methods", methods)
        form.addRow("Leave one out", self.leave_out_box)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["held out", "method", "MAPE %", "median APE %", "n"])
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.plot_method = QComboBox()
        self.plot_method.currentTextChanged.connect(self._show_method)
        self.plot = AccuracyPlot()
        plot_row = QHBoxLayout()
        plot_row.addWidget(QLabel("Plot"))
        plot_row.addWidget(self.plot_method, 1)
        self.message = QLabel(wordWrap=True)
        self.message.setStyleSheet("color: #b00020")
        self.notes = QLabel(wordWrap=True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.evaluate_button)
        body = QHBoxLayout()
        body.addWidget(self.table, 1)
        right = QVBoxLayout()
        right.addLayout(plot_row)
        right.addWidget(self.plot, 1)
        body.addLayout(right, 1)
        layout.addLayout(body, 1)
        layout.addWidget(self.notes)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.resize(980, 640)

    # -- input --------------------------------------------------------------------

    def _browse(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Measured kernels", "", "Measurements (*.csv *.json *.sqlite);;All files (*)")
        for p in paths:
            self.add_file(p)

    def add_file(self, path) -> bool:
        """Read the records of ``path``; False (and a message) when it cannot be read."""
        from gpumodeler.service.learning import read_records
        try:
            records = read_records(path)
        except ModelError as exc:
            self.message.setText(str(exc))
            return False
        except OSError as exc:
            self.message.setText(f"Cannot read {path}: {exc.strerror}")
            return False
        self.paths.append(str(path))
        self.records = self.records + tuple(records)
        self.file_list.addItem(str(path))
        self.message.setText("")
        return True

    # -- evaluating ---------------------------------------------------------------

    def start_evaluation(self) -> CallJob | None:
        """Evaluate off the GUI thread; the result arrives through ``evaluated``."""
        from gpumodeler.core.learn.dataset import gpu_names
        from gpumodeler.service.learning import gpu_lookup
        methods = tuple(m for m, box in self.method_boxes.items() if box.isChecked())
        if not self.records:
            self.message.setText("Add a measurement file first.")
            return None
        if not methods:
            self.message.setText("Tick at least one learned method.")
            return None
        if self._job is not None:
            return self._job
        gpus = {}
        for name in gpu_names(self.records):   # the database is read here, on the GUI thread
            spec = gpu_lookup(self.catalog, name) if name else None
            if spec is None:
                self.message.setText(f"The measured GPU {name or '(unnamed)'!r} is not in the "
                                     f"device database; add it or rename it in the file.")
                return None
            gpus[name] = spec
        self.message.setText("")
        job = learn_job(LearnRequest(self.records, gpus, methods, self.leave_out_box.currentText()))
        job.signals.finished.connect(self._done)
        job.signals.failed.connect(self._failed)
        self._job = job
        self.evaluate_button.setEnabled(False)
        in_background(job)
        return job

    def _done(self, payload) -> None:
        self._last_job, self._job = self._job, None
        self.evaluate_button.setEnabled(True)
        self.result, notes = payload
        fmt = (lambda v: "n/a" if v is None else f"{v:.3g}")
        lines = [(g["held_out"], g["method"], g["mape_percent"], g["median_ape_percent"], g["n"])
                 for g in self.result["groups"]]
        lines += [("all", s["method"], s["mape_percent"], s["median_ape_percent"], s["n"])
                  for s in self.result["summary"]]
        self.table.setRowCount(len(lines))
        for i, line in enumerate(lines):
            for j, v in enumerate(line):
                text = fmt(v) if j in (2, 3) else str(v)
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        methods = [s["method"] for s in self.result["summary"] if s["n"]]
        self.plot_method.blockSignals(True)
        self.plot_method.clear()
        self.plot_method.addItems(methods)
        self.plot_method.blockSignals(False)
        self._show_method(methods[0] if methods else "")
        self.notes.setText("<br>".join(f"<i>{n}</i>" for n in notes))
        self.evaluated.emit(self.result)

    def _show_method(self, method: str) -> None:
        points = [p for p in (self.result or {}).get("points", []) if p.method == method]
        self.plot.show_points(points)

    def _failed(self, message: str) -> None:
        self._last_job, self._job = self._job, None
        self.evaluate_button.setEnabled(True)
        self.message.setText(message)


def open_learn_dialog(parent: QWidget, catalog) -> LearnDialog:
    """Show a non-modal Learn dialog over ``parent`` (deleted when closed)."""
    dialog = LearnDialog(catalog, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog

