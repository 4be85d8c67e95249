"""SweepPanel: sweep one variable of the launch and plot predicted times.

Pick the variable (block size, occupancy, data size, a loop variable, or GPUs from the
catalog) and a range; the sweep runs in the background on a snapshot (progress bar,
Cancel) and the plot shows kernel and total time. Measured points imported from CSV
(:mod:`.measurements`: the swept variable and ``measured_s``; optional ``what`` = kernel |
total) are stored as Measurement items and overlaid with their relative error. The definition is
saved in the project as a SweepDef. Plot export: PNG, SVG, CSV.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gpumodeler.core.commands import AddItem, Macro
from gpumodeler.core.errors import ModelError
from gpumodeler.core.launch_sweep import variable_label
from gpumodeler.core.project import SweepDef
from gpumodeler.ui.logs import bug

from .. import workers
from ..plots.figure import figure_size
from ..plots.sweep_plot import SweepPlot, axis_title
from .checks import MAX_LOOP_ITERATIONS, data_size_limit, variable_names
from .fields import FieldError, clear_error, fmt_number, mark_error, message_label, parse_float
from .controls import build_controls
from .model_overlay import ModelOverlayList
from .measurements import (MeasurementsRefused, column_for, compare, measured_points,
                           measurements_from_rows, read_csv)
from .ranges import SweepRange, default_range, range_of, range_values

STATUS_STYLE = "color: #34495e; padding: 2px 0;"


class SweepPanel(QWidget):
    def __init__(self, panel, parent=None):
        super().__init__(parent)
        self.panel = panel  # the LaunchPanel: its document and launch
        self.launch_id: str | None = None
        self.job = None
        self.result = None
        self._auto = False
        self._job_kernel_only = False
        self._title = ""
        self._measurements = None
        self._rerun = QTimer(self)
        self._rerun.setSingleShot(True)
        self._rerun.setInterval(150)
        self._rerun.timeout.connect(lambda: self.run() if self._auto else None)
        self._build_ui()

    @property
    def document(self):
        return self.panel.document

    @property
    def project(self):
        return self.panel.document.project

    def _build_ui(self) -> None:
        rows = build_controls(self)  # variable_combo, from_edit, ..., run_button, saved_combo, ...
        self.plot = SweepPlot()
        self.plot.setMinimumHeight(180)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setStyleSheet(STATUS_STYLE)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.message = message_label()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        for row in rows:
            lay.addLayout(row)
        # the models overlaid on the sweep (a checkable list beside the plot)
        self.model_list = ModelOverlayList()
        self.model_list.changed.connect(self._models_changed)
        plot_row = QHBoxLayout()
        plot_row.addWidget(self.plot, 1)
        plot_row.addWidget(self.model_list)
        lay.addLayout(plot_row, 1)
        lay.addWidget(self.status)
        lay.addWidget(self.message)
        self._set_busy(False)

    # -- launch ----------------------------------------------------------------------------
    def set_launch(self, launch_id: str | None) -> None:
        changed = launch_id != self.launch_id
        self.launch_id = launch_id
        if changed:
            self.cancel()
            self._auto = False
            self.result = None
            self.plot.clear()
            self.status.setText("")
            self._job_kernel_only = False
        self.refresh_choices(reset_range=changed)
        if changed:
            self.show_first_saved()

    def show_first_saved(self) -> bool:
        """Select the launch's first saved sweep and run it in the background, so a project
        opens with its curve; False when the launch has no saved sweep."""
        sid = next((sid for sid, s in self.project.sweeps.items() if s.launch == self.launch_id), None)
        if sid is None:
            return False
        self.saved_combo.setCurrentIndex(self.saved_combo.findData(sid))
        return self.load_sweep(sid)

    def _graph(self):
        """The kernel graph of the panel's launch (None without one)."""
        launch = self.project.launches.get(self.launch_id) if self.launch_id else None
        return self.project.kernels.get(launch.kernel) if launch is not None else None

    def refresh_choices(self, reset_range: bool = False) -> None:
        launch = self.project.launches.get(self.launch_id) if self.launch_id else None
        current = self.variable_combo.currentData()
        self.variable_combo.blockSignals(True)
        self.variable_combo.clear()
        for v in ("block_size", "occupancy", "data_size"):
            self.variable_combo.addItem(variable_label(v), v)
        if launch is not None:
            graph = self._graph()
            for name in variable_names(self.project, launch):
                self.variable_combo.addItem(variable_label(name, graph), name)
        self.variable_combo.addItem("GPU (compare)", "gpu")
        i = self.variable_combo.findData(current)
        self.variable_combo.setCurrentIndex(i if i >= 0 else 0)
        self.variable_combo.blockSignals(False)
        # the choice fell away (the launch's kernel changed): the range shown is the new one's
        reset_range = reset_range or (current is not None and i < 0)
        if not self.gpu_actions and self.document.catalog is not None:
            try:
                names = [s.name for s in self.document.catalog.list("gpu")]
            except Exception as exc:  # a broken catalog must not break the panel
                bug("listing the catalog's GPUs")
                names = []
                self.message.setText(f"device catalog: {exc}")
            for name in names:
                a = self.gpus_menu.addAction(name)
                a.setCheckable(True)
                a.toggled.connect(lambda on: self._update_gpus_button())
                self.gpu_actions[name] = a
        self._fill_saved()
        if reset_range or not self.from_edit.text():
            self._variable_chosen()
        for w in (self.variable_combo, self.run_button, self.save_button, self.import_button):
            w.setEnabled(launch is not None)

    def _fill_saved(self) -> None:
        self.saved_combo.clear()
        self.saved_combo.addItem("(none)", None)
        for sid, s in self.project.sweeps.items():
            if s.launch == self.launch_id:
                self.saved_combo.addItem(s.name or f"{s.variable} ({sid})", sid)

    def _update_gpus_button(self) -> None:
        n = len(self.chosen_gpus())
        self.gpus_button.setText(f"Compare GPUs ({n})" if n else "Compare GPUs")

    def chosen_gpus(self) -> list[str]:
        return [name for name, a in self.gpu_actions.items() if a.isChecked()]

    def set_gpus(self, names) -> None:
        for name, a in self.gpu_actions.items():
            a.setChecked(name in names)

    @property
    def variable(self) -> str:
        return self.variable_combo.currentData() or "block_size"

    def set_variable(self, variable: str) -> None:
        i = self.variable_combo.findData(variable)
        if i < 0:
            raise ValueError(f"{variable!r} cannot be swept for this launch")
        self.variable_combo.setCurrentIndex(i)
        self._variable_chosen()

    def _variable_chosen(self) -> None:
        """Default range for the variable around the launch's own value."""
        launch = self.project.launches.get(self.launch_id) if self.launch_id else None
        graph = self.project.kernels.get(launch.kernel) if launch else None
        result = self.panel.result
        top = result.occupancy_detail.max_warps_per_sm if result and result.occupancy_detail else 64
        var = self.variable
        self._show_range(default_range(var, launch, graph, top))
        numeric = var != "gpu"
        for w in (self.from_edit, self.to_edit, self.points_spin, self.log_check):
            w.setEnabled(numeric)
            clear_error(w)

    def _show_range(self, r: SweepRange) -> None:
        self.from_edit.setText(fmt_number(float(r.lo)))
        self.to_edit.setText(fmt_number(float(r.hi)))
        self.points_spin.setValue(int(r.points))
        self.log_check.setChecked(r.log)

    # -- running ---------------------------------------------------------------------------
    def values(self) -> np.ndarray:
        """The swept values from the range fields; FieldError (shown at the field) if bad."""
        var = self.variable
        if var == "gpu":
            return np.zeros(0)
        fields = {}
        for name, w in (("from", self.from_edit), ("to", self.to_edit)):
            try:
                fields[name] = parse_float(w.text(), f"sweep {name}")
                clear_error(w)
            except FieldError as exc:
                mark_error(w, str(exc))
                raise
        r = SweepRange(fields["from"], fields["to"], self.points_spin.value(), self.log_check.isChecked())
        if r.log and (r.lo <= 0 or r.hi <= 0):
            mark_error(self.from_edit if r.lo <= 0 else self.to_edit, "log spacing needs values > 0")
            raise FieldError("a logarithmic sweep needs from and to > 0")
        limit, what = None, ""
        if var == "data_size":
            launch = self.project.launches.get(self.launch_id) if self.launch_id else None
            limit = data_size_limit(launch.block_size if launch else 1024)
            what = f"data size N: at most {limit:.4g} (2^31 - 1 blocks, CUDA's grid limit)"
        elif var not in ("block_size", "occupancy"):
            limit, what = MAX_LOOP_ITERATIONS, f"{var}: at most {MAX_LOOP_ITERATIONS:.0e} iterations"
        if limit is not None and max(r.lo, r.hi) > limit:
            mark_error(self.to_edit if r.hi >= r.lo else self.from_edit, what)
            raise FieldError(f"sweep range: {what}, got {max(r.lo, r.hi):.4g}")
        return range_values(var, r)

    def run(self) -> bool:
        """Snapshot the launch and sweep it in the background; False if it cannot start."""
        self._rerun.stop()
        self.message.setVisible(False)
        if self.launch_id is None:
            return False
        try:
            values = self.values()
        except FieldError as exc:
            self._stale(str(exc))
            return False
        mx, mt, mw = measured_points(self.project, self.launch_id, self.variable)
        devices = self.chosen_gpus()
        if self.variable == "gpu" and not devices:
            self._stale("choose the GPUs to compare (Compare GPUs)")
            return False
        # transfers the panel cannot predict (a link value unknown): sweep the kernel alone
        kernel_only = bool(self.panel.transfer_error)
        try:
            evaluation = self.panel.evaluation()  # with the panel's kernel terms
            snap = evaluation.snapshot(self.launch_id, self.variable, values, devices,
                                       measured_x=mx, include_transfers=not kernel_only,
                                       models=self.model_list.checked(),
                                       model_parameters=self.panel.model_parameters())
        except (ModelError, LookupError) as exc:
            self._stale(f"cannot sweep: {exc}")
            return False
        self.cancel()
        job = workers.SweepJob(snap)
        job.measured = (mx, mt, mw)
        job.kernel_only = kernel_only
        # bound slots of this widget: Qt drops the connections if the panel is deleted first
        job.signals.progress.connect(self.progress.setValue)
        job.signals.finished.connect(self._on_job_finished)
        job.signals.failed.connect(self._on_job_failed)
        job.signals.cancelled.connect(self._on_job_cancelled)
        self.job = job
        self._set_busy(True)
        self.status.setText(f"Sweeping {variable_label(self.variable, self._graph()).lower()} over "
                            f"{max(values.size, len(devices))} points…")
        workers.start(job)
        return True

    def cancel(self) -> None:
        """Stop the running sweep and a re-run about to start."""
        self._rerun.stop()
        if self.job is not None:
            self.job.cancel()
            self.job = None
            self._set_busy(False)
            self.status.setText("Sweep cancelled.")

    def is_running(self) -> bool:
        return self.job is not None

    def is_busy(self) -> bool:
        """A sweep runs or a re-run is about to start."""
        return self.job is not None or self._rerun.isActive()

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.progress.setValue(0)
        self.cancel_button.setEnabled(busy)

    def _current_job(self):
        """The job whose signal is being handled, if it is still the one on show."""
        job = self.job
        return job if job is not None and self.sender() is job.signals else None

    @Slot(object)
    def _on_job_finished(self, result) -> None:
        job = self._current_job()
        if job is not None:
            self._finished(job, result, job.measured)

    @Slot(str)
    def _on_job_failed(self, message: str) -> None:
        job = self._current_job()
        if job is not None:
            self._job_failed(job, message)

    @Slot()
    def _on_job_cancelled(self) -> None:
        job = self._current_job()
        if job is not None:
            self._job_cancelled(job)

    def _finished(self, job, result, measured) -> None:
        if job is not self.job:
            return  # a cancelled or superseded sweep
        self.job = None
        self._set_busy(False)
        self.result = result
        self._auto = True
        launch = self.project.launches.get(self.launch_id)
        kernel = self.project.kernels.get(launch.kernel) if launch else None
        title = kernel.name if kernel else ""
        if len(result.curves) == 1 and result.variable != "gpu":
            title += f" on {result.curves[0].label}"
        measurements, notes = None, []
        if measured[0].size and result.curves and result.variable != "gpu":
            measurements, note = compare(result.curves[0], measured)
            notes += [note] if note else []
        self._job_kernel_only = getattr(job, "kernel_only", False)
        self._title = title
        self._measurements = measurements
        self.plot.set_models(self.model_list.checked())
        self.model_list.show_outcome(result)
        self.plot.show_result(result, axis_title(result.variable, variable_label(result.variable, self._graph())), title,
                              log_x=self.log_check.isChecked(), measurements=measurements,
                              kernel_only=getattr(job, "kernel_only", False),
                              log_y=self.log_y_check.isChecked())
        if getattr(job, "kernel_only", False):
            notes.append("total not plotted: the transfers cannot be predicted (see Prediction)")
        for c in result.curves:
            reasons = [str(r) for r in c.reasons if r]
            if not reasons:
                continue
            unique = list(dict.fromkeys(reasons))
            if result.variable != "gpu" and len(reasons) == len(c.reasons):
                notes.append(f"{c.label} is not plotted: {unique[0]}")
            else:
                notes.append(f"{len(reasons)} point(s) cannot run: " + "; ".join(unique[:2])
                             + (" …" if len(unique) > 2 else ""))
        if result.variable == "occupancy" and result.curves and math.isfinite(result.curves[0].knee_occupancy):
            notes.append(f"the mode changes at {result.curves[0].knee_occupancy:.4g} warps/SM")
        self.status.setText("  ".join(notes) or f"{result.x.size} points.")

    def _job_failed(self, job, message: str) -> None:
        if job is not self.job:
            return
        self.job = None
        self._set_busy(False)
        self._stale(message)

    def _job_cancelled(self, job) -> None:
        if job is self.job:
            self.job = None
            self._set_busy(False)

    def _models_changed(self) -> None:
        """Overlay the checked models: replot when the sweep has them all, else sweep again
        (the models run in the sweep's worker)."""
        checked = self.model_list.checked()
        have = set(self.result.curves[0].model_times) if self.result is not None and self.result.curves else set()
        if self.result is not None and set(checked) <= have:
            self.replot()
        elif self.result is not None or self._auto:
            self.run()

    def replot(self) -> None:
        """Show the sweep on show again (an axis option changed)."""
        self.plot.set_models(self.model_list.checked())
        if self.result is not None:
            self.plot.show_result(self.result, axis_title(self.result.variable,
                                                          variable_label(self.result.variable, self._graph())),
                                  self._title, log_x=self.log_check.isChecked(),
                                  measurements=self._measurements, kernel_only=self._job_kernel_only,
                                  log_y=self.log_y_check.isChecked())

    def _stale(self, message: str) -> None:
        """The sweep on show no longer describes the launch: clear it (a stale curve must not
        be read, or exported, as current) and say why."""
        self.result = None
        self.plot.clear(f"No sweep: {message}")
        self._fail(message)

    def _fail(self, message: str) -> None:
        self.message.setText(message)
        self.message.setVisible(True)
        self.status.setText("")

    def model_changed(self) -> None:
        """The launch, its kernel or the system changed: re-run a sweep that is on show."""
        if self._auto:
            self._rerun.start()

    # -- saving ----------------------------------------------------------------------------
    def save_sweep(self) -> str | None:
        if self.launch_id is None:
            return None
        try:
            values = self.values()
        except FieldError as exc:
            self._fail(str(exc))
            return None
        sid = self.project.new_id("s")
        sweep = SweepDef(sid, self.launch_id, self.variable, tuple(float(v) for v in values),
                         tuple(self.chosen_gpus()), name=f"{variable_label(self.variable, self._graph())}"
                         + (f", {len(values)} points" if values.size else ""))
        if not self.panel.push(AddItem("sweeps", sweep, text="save sweep")):
            return None
        self._fill_saved()
        self.saved_combo.setCurrentIndex(self.saved_combo.findData(sid))
        return sid

    def load_sweep(self, sweep_id: str | None) -> bool:
        """Show a saved sweep's definition and run it; False if it cannot start."""
        s = self.project.sweeps.get(sweep_id) if sweep_id else None
        if s is None:
            return False
        try:
            self.set_variable(s.variable)
        except ValueError as exc:  # e.g. the kernel lost that loop variable since
            self._fail(f"saved sweep {s.name or sweep_id}: {exc}")
            return False
        self.set_gpus(s.devices)
        if s.values:
            self._show_range(range_of(s.values))
        return self.run()

    # -- measurements ----------------------------------------------------------------------
    def import_measurements(self, path: str) -> int:
        """Read measured times from CSV into the project (one undo step); returns the count,
        0 with a message when the file is refused."""
        name = Path(path).name
        try:
            rows, columns = read_csv(path, name)
            others = [self.variable_combo.itemData(i) for i in range(self.variable_combo.count())]
            variable, column = column_for(columns, self.variable, others)
            if variable != self.variable:  # the file names another sweepable variable: switch to it
                self.set_variable(variable)
            found = measurements_from_rows(rows, columns, column, variable, self.launch_id,
                                           self.project.measurements, name)
        except MeasurementsRefused as exc:
            self._fail(str(exc))
            return 0
        commands = [AddItem("measurements", m) for m in found]
        n = len(commands)
        if not self.panel.push(Macro(f"import {n} measurement{'s' if n > 1 else ''}", commands)):
            return 0
        self.status.setText(f"Imported {n} measured point(s) from {name}.")
        self.run()  # show them against the prediction
        return n

    def _on_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import measured times", "", "CSV files (*.csv);;All files (*)")
        if path:
            self.import_measurements(path)

    # -- export ----------------------------------------------------------------------------
    def export(self, path: str, kind: str | None = None) -> bool:
        kind = kind or Path(path).suffix.lstrip(".").lower()
        if self.result is None:
            self._fail("run a sweep first: there is nothing to export")
            return False
        try:
            if kind in ("png", "svg"):
                self.plot.export_figure(path, figure_size(self.figure_combo.currentData(), self.dpi_spin.value()),
                                        inputs=self._inputs())
            elif kind == "csv":
                self.plot.export_csv(path, self.variable, inputs=self._inputs())
            else:
                self._fail(f"cannot export to {kind!r}: choose PNG, SVG or CSV")
                return False
        except OSError as exc:
            self._fail(f"cannot write {Path(path).name}: {exc.strerror or exc}")
            return False
        except ModelError as exc:  # atomic_files.OutputError: names the file and the reason
            self._fail(str(exc))
            return False
        self.status.setText(f"Exported {Path(path).name}.")
        return True

    def _inputs(self) -> list:
        """The files an export must never replace: the open project, the device databases."""
        document = self.panel.document
        catalog = getattr(document, "catalog", None)
        inputs = [(getattr(document, "path", None), "the project file")]
        if catalog is not None:
            inputs += [(catalog.user_path, "your device database"),
                       (catalog.shipped_path, "the device database")]
        return [(p, what) for p, what in inputs if p]

    def _on_export(self, kind: str) -> None:
        filters = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "csv": "CSV data (*.csv)"}
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", f"sweep-{self.variable}.{kind}",
                                              filters[kind])
        if path:
            self.export(path, kind)
