"""The main window's imports and exports: report, devices, measurements, kernels, figures.

A mixin of :class:`~gpumodeler.ui.main_window.MainWindow` (it uses the window's document,
catalog, tabs, :meth:`show_error`, :meth:`show_hint` and :meth:`_dialog_folder`): each
File- or Devices-menu entry asks for a path, then hands the work to the module that does it
(the report writer, :mod:`.devices.sharing`, :mod:`.measurements.dialog`, the kernel import
dialog, the sweep panel's export).
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog

from gpumodeler.core.errors import ModelError

IMPORT_MIN_SCALE = 0.4  # an imported kernel's first view: fitted down to this zoom


class ImportsExports:
    """File › Import/Export and Devices › Export/Import of the main window."""

    def export_report(self, path: str) -> bool:
        """Write the HTML report of the current project (its saved file, for the digests)."""
        from gpumodeler.report.files import write_text_atomically
        from gpumodeler.report.html import build_report
        if self.catalog is None:
            self.show_error("Cannot export the report", "No device database is open.")
            return False
        source = self.document.path or "(unsaved project)"
        try:
            html = build_report(self.document.project, self.catalog, project_path=source,
                                command=f"gpumodeler report {source} -o {path}")
            # never over the project or a device database (the file dialog only asks
            # whether to replace the file)
            write_text_atomically(path, html, inputs=[
                (self.document.path, "the project file"),
                (self.catalog.user_path, "your device database"),
                (self.catalog.shipped_path, "the device database")])
        except (ModelError, OSError) as exc:
            self.show_error("Cannot export the report", str(exc))
            return False
        self.show_hint(f"Wrote the report {path}")
        return True

    def export_devices_dialog(self) -> None:
        from gpumodeler.ui.devices.sharing import export_devices
        export_devices(self)

    def import_devices_dialog(self) -> None:
        from gpumodeler.ui.devices.sharing import import_devices
        if self.catalog is None:
            self.show_error("Cannot import devices", "No device database is open.")
            return
        path, _ = QFileDialog.getOpenFileName(self, "Import devices", self._dialog_folder(),
                                              "Device databases (*.db);;All files (*)")
        if path:
            import_devices(self, path)

    def import_measurements_dialog(self, path: str | None = None):
        """File › Import Measurements…: a profiler/timings CSV, JSON records or an Nsight
        Systems SQLite export, shown in a dialog that calibrates from them or adds them to a
        launch; None for a bad file."""
        from gpumodeler.ui.measurements.dialog import open_measurements
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, "Import measurements", self._dialog_folder(),
                "Measurements (*.csv *.json *.txt *.sqlite);;All files (*)")
            if not path:
                return None
        return open_measurements(self, path)

    def import_application(self, path: str):
        """File › Import Application…: an application from the Nsight Systems export at
        ``path``, read and built in the background with a progress dialog that cancels it
        (:class:`~gpumodeler.ui.application_import.ApplicationImport`), then added as one
        undoable step and shown on the Application tab. Returns the running import: its
        ``done`` signal carries the new application's id, or None (the reason shown) for a
        bad file, a failure or a cancel. GPUs the device database lacks are added to it
        when the import succeeds (not undone with the step)."""
        from gpumodeler.ui.application_import import ApplicationImport
        return ApplicationImport(self, path).start()

    def import_application_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import application", self._dialog_folder(),
            "Nsight Systems exports (*.sqlite);;All files (*)")
        if path:
            self.import_application(path)

    def export_report_dialog(self) -> None:
        start = os.path.join(self._dialog_folder(), f"{Path(self.project_name()).stem}-report.html")
        path, _ = QFileDialog.getSaveFileName(self, "Export report", start, "HTML (*.html)")
        if path:
            self.export_report(path)

    def import_kernel_dialog(self):
        """File › Import Kernel…: the dialog (shown, not run modally); an imported kernel is
        shown in the Kernel tab, the view fitted, the import's note in the status bar."""
        from gpumodeler.ui.kernel_editor.import_dialog import ImportKernelDialog
        from gpumodeler.core.kernel.layout import view_aspect
        dialog = ImportKernelDialog(self.document, self)
        viewport = self.kernel_editor.view.viewport()
        if self.kernel_editor.isVisible():
            dialog.aspect = view_aspect(viewport.width(), viewport.height())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def show(kernel_id: str, note: str, hint: str) -> None:
            self.tabs.setCurrentIndex(1)
            editor = self.kernel_editor
            editor.set_kernel(kernel_id)
            # after the editor's own first view: all of the graph (its blocks and loops) if
            # its text stays legible, else its top at that scale (F shows all of it)
            QTimer.singleShot(0, editor.view, lambda: editor.view.show_graph(IMPORT_MIN_SCALE))
            editor.show_message(note)
            self.show_hint(hint)
        dialog.imported.connect(show)
        dialog.open()
        return dialog

    def export_figure(self, path: str) -> bool:
        """File › Export › Sweep figure: the Launch tab's plot (PNG/SVG at the chosen figure
        size, or CSV); False with the reason shown there when there is no current sweep,
        and in the window's refusal line too when the file cannot be written."""
        sweep = self.launch_panel.sweep
        if sweep.export(path):
            return True
        if sweep.message.text():
            self.show_refusal(sweep.message.text())
        return False

    def export_figure_dialog(self) -> None:
        sweep = self.launch_panel.sweep
        if sweep.result is None:
            self.tabs.setCurrentIndex(2)
            self.show_refusal("There is no current sweep to export: run one on the Launch tab")
            return
        start = os.path.join(self._dialog_folder(), f"{Path(self.project_name()).stem}-sweep.png")
        path, _ = QFileDialog.getSaveFileName(self, "Export sweep figure", start,
                                              "PNG image (*.png);;SVG drawing (*.svg);;CSV data (*.csv)")
        if path:
            self.export_figure(path)
