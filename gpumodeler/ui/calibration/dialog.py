"""CalibrationDialog: pick a measurement file, the copies to fit (direction, memory kind or
application label), fit the transfer model (off the GUI thread), look at the fit, store it
as the link's calibration. Every error is shown in the dialog; nothing is stored unless
Save is pressed on a fit that succeeded.

Opened from a project, the dialog starts at the shown launch's transfers
(:func:`launch_context`): their link and their first direction; and it says so, before the
fit and after, when the file's copies were measured on another GPU than the launch's, or
when the link the fit would be stored under is not the one the launch's transfers use."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
                               QWidget)

from gpumodeler.core.errors import ModelError
from gpumodeler.core.measurements.from_json import read_measurements
from gpumodeler.db.nsys_export import is_sqlite, read_export
from gpumodeler.core.transfers.fit import fit_transfer_model
from gpumodeler.core.transfers.selection import select_copies

from ..workers import CallJob, in_background
from .plot import CalibrationPlot


DIRECTION_NAMES = {"htod": "host → device", "dtoh": "device → host"}


@dataclass(frozen=True)
class FitRequest:
    """A snapshot of what to fit (values only: the worker touches nothing else)."""

    records: tuple
    direction: str
    memory_kind: str | None
    gpu: str | None = None


def fit_of(request: FitRequest) -> tuple:
    """(selection, fit) of the request's copies (run off the GUI thread)."""
    sel = select_copies(request.records, direction=request.direction,
                        memory_kind=request.memory_kind, gpu=request.gpu)
    return sel, fit_transfer_model(sel.sizes_bytes, sel.times_s)


def fit_job(request: FitRequest) -> CallJob:
    """The fit of ``request`` as a background job (finished: (selection, fit))."""
    return CallJob(lambda: fit_of(request), "the link calibration", dialog_words)


@dataclass(frozen=True)
class LaunchContext:
    """What the calibration is for: the launch's GPU (catalog name), the link its transfers
    use (catalog name) and their first direction; each "" when the launch does not say."""

    launch: str = ""
    gpu: str = ""
    link: str = ""
    direction: str = ""


def launch_context(project, launch_id: str | None = None) -> LaunchContext:
    """The context of launch ``launch_id`` (None: the project's first launch with transfers,
    else its first launch) of ``project``."""
    launches = project.launches
    if launch_id not in launches:
        launch_id = next((k for k, v in launches.items() if v.transfers), next(iter(launches), None))
    if launch_id is None:
        return LaunchContext()
    launch = launches[launch_id]
    device = project.devices.get(launch.gpu) if launch.gpu else None
    gpu = device.device_name if device is not None else ""
    conn = None
    for t in launch.transfers:
        if t.connection in project.connections:
            conn = project.connections[t.connection]
            break
    if conn is None and launch.gpu:
        conn = project.host_link_for(launch.gpu)
    direction = launch.transfers[0].direction if launch.transfers else ""
    return LaunchContext(launch.name or launch_id, gpu, conn.link_name if conn else "",
                         direction if direction in ("htod", "dtoh") else "")


#: what the selection's hints at command-line options mean in this dialog
OPTION_WORDS = (("choose one with --direction htod|dtoh", "choose it under Direction"),
                ("choose one with --gpu NAME", "choose it under GPU"),
                ("choose one with --memory-kind", "type it under Memory kind / label"),
                ("choose with --memory-kind", "type it under Memory kind / label"))


def dialog_words(message: str) -> str:
    """A fit's error with each option it names replaced by this dialog's field."""
    for option, words in OPTION_WORDS:
        message = message.replace(option, words)
    return message


def _gpu_key(name: str) -> str:
    """A GPU name compared loosely: a profiler writes "NVIDIA GeForce GTX 970" for the
    catalog's "GeForce GTX 970"."""
    key = " ".join(name.lower().split())
    return key[len("nvidia "):] if key.startswith("nvidia ") else key


def _size(n: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.3g} B"


class CalibrationDialog(QDialog):
    """``catalog``: the device catalog the calibration is stored in."""

    fitted = Signal(object)

    def __init__(self, catalog, parent: QWidget | None = None, document=None,
                 launch_id: str | None = None):
        super().__init__(parent)
        self.setWindowTitle("Calibrate a link from measured copies")
        self.catalog = catalog
        #: the open project's Document, told when a calibration is stored (may be None)
        self.document = document
        #: the launch the calibration is for (launch_context; empty without a project)
        self.context = launch_context(document.project, launch_id) if document is not None \
            else LaunchContext()
        self.path: Path | None = None
        self.records: tuple = ()
        self.selection = None
        self.fit = None
        self.saved = None
        self._job: CallJob | None = None     # the running fit
        self._last_job: CallJob | None = None  # kept alive until its thread surely returned

        self.file_edit = QLineEdit(readOnly=True, placeholderText="JSON records or a profiler CSV")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        file_row = QHBoxLayout()
        file_row.addWidget(self.file_edit, 1)
        file_row.addWidget(browse)
        self.direction_box = QComboBox()
        for code, name in DIRECTION_NAMES.items():
            self.direction_box.addItem(name, code)
        self.label_edit = QLineEdit(placeholderText="pageable, pinned or an application")
        self.link_box = QComboBox()
        #: the GPU whose copies to fit, when the file holds several (hidden otherwise)
        self.gpu_box = QComboBox()
        self.gpu_box.setToolTip("The file holds copies measured on several GPUs: the one to fit")
        self.gpu_box.currentIndexChanged.connect(lambda _i: self._check_context())
        if catalog is not None:
            self.link_box.addItems([s.name for s in catalog.list("link")])
        if self.context.link and self.link_box.findText(self.context.link) >= 0:
            self.link_box.setCurrentText(self.context.link)   # the launch's transfers' link
        elif document is not None:   # the project's own link first, not the list's first
            used = [c.link_name for c in document.project.connections.values()
                    if self.link_box.findText(c.link_name) >= 0]
            if used:
                self.link_box.setCurrentText(used[0])
        if self.context.direction:
            self.direction_box.setCurrentIndex(self.direction_box.findData(self.context.direction))
        self.link_box.currentTextChanged.connect(lambda _t: self._check_context())
        self.fit_button = QPushButton("Fit")
        self.fit_button.clicked.connect(self.start_fit)
        form = QFormLayout()
        form.addRow("Measurements", file_row)
        form.addRow("Direction", self.direction_box)
        form.addRow("Memory kind / label", self.label_edit)
        form.addRow("Link", self.link_box)
        form.addRow("GPU", self.gpu_box)
        self.gpu_row = form
        form.setRowVisible(self.gpu_box, False)
        self.plot = CalibrationPlot()
        self.summary = QLabel(wordWrap=True)
        self.message = QLabel(wordWrap=True)
        self.message.setStyleSheet("color: #b00020")
        #: the file's GPU or the chosen link is not the launch's ("" when they agree)
        self.warning = QLabel(wordWrap=True)
        self.warning.setObjectName("context_warning")
        self.warning.setStyleSheet("color: #8a4b00; background: #fff4e0; padding: 3px;")
        self.warning.hide()
        self.for_label = QLabel(wordWrap=True)
        self.for_label.setStyleSheet("color: #5f6368;")
        if self.context.launch:
            self.for_label.setText(
                f"For launch {self.context.launch}: GPU {self.context.gpu or 'not chosen'}, "
                f"transfers over {self.context.link or 'no link'}"
                + (f", {DIRECTION_NAMES[self.context.direction]} first" if self.context.direction else ""))
        else:
            self.for_label.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.save_button = buttons.addButton("Save calibration",
                                             QDialogButtonBox.ButtonRole.ApplyRole)
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.for_label)
        layout.addLayout(form)
        layout.addWidget(self.warning)
        layout.addWidget(self.fit_button)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.resize(760, 680)

    # -- input --------------------------------------------------------------------

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Measured copies", "",
                                              "Measurements (*.json *.csv *.sqlite);;All files (*)")
        if path:
            self.load_file(path)

    def load_file(self, path) -> bool:
        """Read the records of ``path``; False (and a message) when it cannot be read."""
        self._clear_fit()
        try:
            if is_sqlite(path):     # an Nsight Systems export
                records = tuple(read_export(path).records)
            else:
                records = tuple(read_measurements(path))
        except ModelError as exc:
            self.message.setText(str(exc))
            return False
        self.path, self.records = Path(path), records
        self.file_edit.setText(str(path))
        directions = sorted({r.direction for r in records if r.kind == "transfer"
                             and r.direction in ("htod", "dtoh")})
        # the direction shown (the launch's) stays when the file has it; else the file's
        if directions and self.direction_box.currentData() not in directions:
            self.direction_box.setCurrentIndex(
                self.direction_box.findData("htod" if "htod" in directions else directions[0]))
        self._fill_gpus()
        kinds = sorted({r.memory_kind for r in records if r.kind == "transfer" and r.memory_kind})
        if len(kinds) == 1 and not self.label_edit.text().strip():
            self.label_edit.setText(kinds[0])
        self.message.setText("")
        self._check_context()
        return True

    def file_gpus(self) -> list[str]:
        """The GPUs the file's copies name (none when it does not say)."""
        return sorted({r.gpu for r in self.records if r.kind == "transfer" and r.gpu})

    def _fill_gpus(self) -> None:
        """The GPU choice, shown when the file's copies name several GPUs; it starts at the
        launch's GPU when the file has it."""
        gpus = self.file_gpus()
        self.gpu_box.blockSignals(True)
        self.gpu_box.clear()
        for g in gpus:
            self.gpu_box.addItem(g, g)
        mine = [g for g in gpus if self.context.gpu and _gpu_key(g) == _gpu_key(self.context.gpu)]
        if mine:
            self.gpu_box.setCurrentIndex(self.gpu_box.findData(mine[0]))
        self.gpu_box.blockSignals(False)
        self.gpu_row.setRowVisible(self.gpu_box, len(gpus) > 1)

    def chosen_gpu(self) -> str | None:
        """The GPU whose copies are fitted: the one chosen when the file has several."""
        return self.gpu_box.currentData() if self.gpu_box.count() > 1 else None

    def context_problems(self) -> list[str]:
        """Why the fit may not be this launch's: the file's copies on another GPU, or the
        link chosen is not the one the launch's transfers use."""
        problems = []
        ctx = self.context
        file_gpus = [self.chosen_gpu()] if self.chosen_gpu() else self.file_gpus()
        if ctx.gpu and file_gpus and _gpu_key(ctx.gpu) not in {_gpu_key(g) for g in file_gpus}:
            problems.append(f"The file's copies were measured on {', '.join(file_gpus)}, but "
                            f"launch {ctx.launch} runs on {ctx.gpu}.")
        link = self.link_box.currentText()
        if ctx.link and link and link != ctx.link:
            problems.append(f"The fit would be stored for {link}, but launch {ctx.launch}'s "
                            f"transfers use {ctx.link}.")
        return problems

    def _check_context(self) -> None:
        problems = self.context_problems()
        self.warning.setText("⚠ " + " ".join(problems) if problems else "")
        self.warning.setVisible(bool(problems))

    # -- fitting ------------------------------------------------------------------

    def _clear_fit(self) -> None:
        self.selection = self.fit = None
        self.save_button.setEnabled(False)
        self.summary.setText("")
        self.plot.show_fit(None)

    def start_fit(self) -> CallJob | None:
        """Fit off the GUI thread; the result arrives through ``fitted`` (or a message)."""
        if not self.records:
            self.message.setText("Choose a measurement file first.")
            return None
        if self._job is not None:
            return self._job
        self._clear_fit()
        self.message.setText("")
        label = self.label_edit.text().strip() or None
        job = fit_job(FitRequest(self.records, self.direction_box.currentData(), label,
                                self.chosen_gpu()))
        job.signals.finished.connect(self._fit_done)
        job.signals.failed.connect(self._fit_failed)
        self._job = job
        self.fit_button.setEnabled(False)
        in_background(job)
        return job

    def _fit_done(self, result) -> None:
        self._last_job, self._job = self._job, None
        self.fit_button.setEnabled(True)
        self.selection, self.fit = result
        fit = self.fit
        regimes = ", ".join(f"{r.bandwidth_bytes_per_s / 1e9:.3g} GB/s from "
                            f"{_size(r.first_size_bytes)}" for r in fit.model.regimes)
        self.summary.setText(
            f"{fit.sizes_bytes.size} copies · startup {fit.model.startup_s * 1e6:.3g} µs · "
            f"{regimes}<br>leave-one-out error: mean {fit.loo_mape:.3g} %, median "
            f"{fit.loo_median_ape:.3g} % · in-sample {fit.mape_percent:.3g} %"
            + "".join(f"<br><i>{n}</i>" for n in fit.notes))
        self.plot.show_fit(fit)
        self.save_button.setEnabled(self.link_box.count() > 0)
        self.fitted.emit(fit)

    def _fit_failed(self, message: str) -> None:
        self._last_job, self._job = self._job, None
        self.fit_button.setEnabled(True)
        self.message.setText(message)

    # -- storing ------------------------------------------------------------------

    def save(self):
        """Store the current fit as the link's calibration; returns it, or None with a
        message."""
        from gpumodeler.db.calibrations import Calibration, save_calibration
        if self.fit is None or self.path is None:
            self.message.setText("Fit the measurements before saving.")
            return None
        label = self.label_edit.text().strip() or self.selection.memory_kind or "default"
        fit = self.fit
        residuals = tuple({"size_bytes": float(n), "measured_s": float(m),
                           "predicted_s": float(p), "relative_residual": float(q),
                           "loo_relative_error": float(e)}
                          for n, m, p, q, e in zip(fit.sizes_bytes, fit.measured_s,
                                                   fit.predicted_s, fit.relative_residuals,
                                                   fit.loo_relative_errors))
        try:
            digest = hashlib.sha256(self.path.read_bytes()).hexdigest()
            cal = Calibration(self.link_box.currentText(), "link", self.selection.direction,
                              label, fit.parameters(), residuals, fit.mape_percent,
                              fit.loo_mape, fit.loo_median_ape, self.path.name, digest,
                              datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                              note="; ".join(fit.notes) or None)
            self.saved = save_calibration(self.catalog, cal)
        except OSError as exc:
            self.message.setText(f"Cannot read {self.path}: {exc.strerror}")
            return None
        except ModelError as exc:
            self.message.setText(str(exc))
            return None
        if self.document is not None:
            self.document.catalog_changed((self.saved.device,))
        self.message.setText("")
        self.summary.setText(self.summary.text() + f"<br><b>Saved</b> as the {label} "
                             f"{self.saved.subject} calibration of {self.saved.device}.")
        return self.saved


def open_calibration_dialog(parent: QWidget, catalog, document=None,
                            launch_id: str | None = None) -> CalibrationDialog:
    """Show a non-modal calibration dialog over ``parent`` (deleted when closed);
    ``document``: the open project, told when a calibration is stored; ``launch_id`` the
    launch it starts from (launch_context)."""
    from PySide6.QtCore import Qt
    dialog = CalibrationDialog(catalog, parent, document, launch_id)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
