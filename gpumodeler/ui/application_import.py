"""File › Import Application… off the GUI thread (docs/timeline.md, "Applications from a
trace").

An import runs in three parts (:mod:`gpumodeler.service.trace_import`): reading the export
(:func:`read_import`, in the background: 10^5 rows take seconds), matching its GPUs in the
device catalog (:func:`prepare_import`, on the GUI thread: the catalog's SQLite connections
belong to it; a few lookups), and turning the records into steps (:func:`finish_import`, in
the background again). A window-modal progress dialog shows how far it is and cancels it;
the window keeps repainting, and the project cannot be edited under the import. Only when
every part succeeded are the GPUs the catalog lacks added to the user database and the
import pushed as one undoable command; a bad file, a failure or a cancel leaves the project
and the device database as they were, with a message.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QProgressDialog

from gpumodeler.core.errors import ModelError

from .workers import CallJob, in_background

#: the share of the progress bar the reading takes (the steps take the rest)
READ_SHARE = 0.5
#: jobs alive until they report, even if their import was dropped (a closed window)
_RUNNING: set = set()


def _scaled(tick, lo: float, hi: float):
    return lambda fraction: tick(lo + (hi - lo) * fraction)


class ApplicationImport(QObject):
    """One import of the export at ``path`` into ``window``'s project. ``done`` carries the
    new application's id, or None (failed or cancelled: the reason is shown). ``dialog``:
    the progress dialog while it runs."""

    done = Signal(object)

    def __init__(self, window, path):
        super().__init__(window)
        self.window, self.path = window, str(path)
        self.job: CallJob | None = None
        self.dialog: QProgressDialog | None = None
        self.app_id: str | None = None
        self.finished = False
        self._trace = None
        self._prepared = None
        self._project = None

    # -- running ------------------------------------------------------------------------
    def start(self) -> "ApplicationImport":
        from gpumodeler.service.trace_import import read_import
        if self.window.catalog is None:
            return self._fail("No device database is open.")
        self._project = self.window.document.project
        name = Path(self.path).name
        dialog = self.dialog = QProgressDialog(f"Reading {name}…", "Cancel", 0, 100, self.window)
        dialog.setWindowTitle("Import application")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.setMinimumDuration(0)
        dialog.canceled.connect(self.cancel)
        dialog.setValue(0)
        path = self.path
        self._run(lambda tick: read_import(path, tick=_scaled(tick, 0.0, READ_SHARE)),
                  self._read)
        return self

    def _run(self, work, on_value) -> None:
        job = self.job = CallJob(work, "the application import", progress=True)
        _RUNNING.add(job)
        job.signals.progress.connect(self._progress)
        job.signals.finished.connect(on_value)
        job.signals.failed.connect(self._fail)
        job.signals.cancelled.connect(self._cancelled)
        for signal in (job.signals.finished, job.signals.failed, job.signals.cancelled):
            signal.connect(lambda *_a, job=job: _RUNNING.discard(job))
        in_background(job)

    def cancel(self) -> None:
        """Stop the import (nothing is changed); the dialog's Cancel button calls it."""
        if self.job is not None and not self.finished:
            self.job.cancel()

    def _progress(self, percent: int) -> None:
        if self.dialog is not None and not self.finished:
            self.dialog.setValue(percent)

    def _read(self, trace) -> None:
        """The export is read: match its GPUs (here: the catalog is this thread's), then
        build the steps in the background."""
        from gpumodeler.service.trace_import import finish_import, prepare_import
        if self.finished or self.job is None or self.job.is_cancelled():
            return self._cancelled()
        try:
            prepared = prepare_import(self._project, trace, self.window.catalog)
        except ModelError as exc:
            return self._fail(str(exc))
        self._trace, self._prepared = trace, prepared
        if self.dialog is not None:
            self.dialog.setLabelText(f"Building the application of {len(trace.records)} "
                                     f"kernels and copies…")
        project = self._project
        self._run(lambda tick: finish_import(project, trace, prepared,
                                             tick=_scaled(tick, READ_SHARE, 1.0)),
                  self._built)

    def _built(self, plan) -> None:
        """Every part succeeded: add the missing devices, push the one undoable command."""
        from gpumodeler.service.trace_import import add_devices
        if self.finished or (self.job is not None and self.job.is_cancelled()):
            return self._cancelled()
        window = self.window
        if window.document.project is not self._project:    # (another project was opened)
            return self._fail("the project was replaced while the trace was read")
        try:
            add_devices(window.catalog, self._prepared)
        except ModelError as exc:
            return self._fail(str(exc))
        if plan.added_devices:
            window.document.catalog_changed(plan.added_devices)
        if not window.document.push(plan.command):
            return self._end(None)
        panel = window.application_panel
        window.tabs.setCurrentIndex(3)    # the Application tab
        panel.app_id = plan.application
        panel.show_project()
        extra = []
        if plan.api_dependencies or plan.host_waits:
            extra.append(f"{plan.api_dependencies} event wait(s) and {plan.host_waits} host "
                         f"synchronisation(s) read from the CUDA API")
        if plan.legacy_dependencies:
            extra.append(f"{plan.legacy_dependencies} implicit wait(s) through the legacy "
                         f"default stream")
        window.show_hint(f"Imported {plan.name}: {plan.kernels} kernel(s), {plan.copies} "
                         f"copy(ies), {plan.host_gaps} host gap(s), {plan.host_delays} host "
                         f"delay(s); measured makespan {plan.measured_makespan_s:.6g} s"
                         + "".join(f"; {n}" for n in extra + plan.notes))
        self._end(plan.application)

    # -- ending -------------------------------------------------------------------------
    def _fail(self, message: str) -> "ApplicationImport":
        if not self.finished:
            self.window.show_error("Cannot import the application", message)
            self._end(None)
        return self

    def _cancelled(self) -> None:
        if not self.finished:
            self.window.show_hint(f"Import of {Path(self.path).name} cancelled; the project "
                                  f"is unchanged")
            self._end(None)

    def _end(self, app_id) -> None:
        self.finished = True
        self.app_id = app_id
        if self.dialog is not None:
            self.dialog.hide()
            self.dialog.deleteLater()
            self.dialog = None
        self._trace = self._prepared = None
        self.done.emit(app_id)
