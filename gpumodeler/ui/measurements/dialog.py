"""MeasurementsDialog (File › Import Measurements…): the records of one measurement file
read by the core importer (format detected), the importer's counts (noise lines, rows of
other kinds, unit disagreements), and three uses: calibrate the link on the copies (the
link calibration dialog), fit λ of a launch's kernel and store it, add the kernel launches
as measured points of a launch (one undoable command) so they overlay its sweep.

A file that cannot be read is refused with a message before any dialog opens; nothing in
the project or the calibration store changes unless a button says so. The kernel's launches
are matched to the launch's GPU and kernel by the names the file records (normalised,
core/measurements/matching.py): when either differs (or the file gives none) the λ and the
points are used only after the user chooses so in a question naming both sides.
"""
from __future__ import annotations

import re

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QGroupBox,
                               QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMessageBox,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from gpumodeler.core.commands import AddItem, Macro
from gpumodeler.core.errors import FormatError, ModelError
from gpumodeler.core.measurements.importer import ImportResult, import_text
from gpumodeler.core.units_format import format_time

from . import use

COLUMNS = ("kind", "direction", "name", "gpu", "size / <<<grid, block>>>", "time", "memory kind")


def read_file(path) -> ImportResult:
    """The file's records and the importer's counts; FormatError with a one-line reason.
    JSON records (``measure import --json``) are read as they are (no counts); a file
    with the SQLite header is read as an Nsight Systems export."""
    from gpumodeler.core.measurements.from_json import read_measurements
    from gpumodeler.db.nsys_export import is_sqlite, read_export
    path = Path(path)
    if is_sqlite(path):
        return read_export(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FormatError(f"{path.name}: not a text file (expected a profiler CSV, a timings "
                          "CSV or JSON records)") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot read it ({exc.strerror})") from None
    if text.lstrip().startswith(("[", "{")):
        return ImportResult("json", path.name, read_measurements(path))
    if "\x00" in text:
        raise FormatError(f"{path.name}: not a text file (expected a profiler CSV, a timings "
                          "CSV or JSON records)")
    return import_text(text, path.name)


def _time(t) -> str:
    """A measured time in the table (imported times are > 0)."""
    if t is None:
        return "(metrics only)"
    return format_time(t)


def _size_or_grid(r) -> str:
    if r.kind == "transfer" and r.size_bytes is not None:
        for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if r.size_bytes >= scale:
                return f"{r.size_bytes / scale:.4g} {unit}"
        return f"{r.size_bytes:.4g} B"
    if r.grid:
        return f"<<<{_dims(r.grid)}, {_dims(r.block)}>>>" if r.block else _dims(r.grid)
    return ""


def _dims(v) -> str:
    """CUDA launch notation: (4096, 1, 1) -> '4096', (16, 16, 1) -> '(16, 16)'."""
    v = list(v)
    while len(v) > 1 and v[-1] == 1:
        v.pop()
    return str(v[0]) if len(v) == 1 else "(" + ", ".join(str(x) for x in v) + ")"


def record_cells(r) -> tuple[str, ...]:
    return (r.kind, r.direction, r.name, r.gpu, _size_or_grid(r), _time(r.time_s),
            r.memory_kind)


class MeasurementsDialog(QDialog):
    """``document``: the open project (its undo stack); ``catalog``: the device database
    (calibrations are stored there); ``launch_id``: the launch to preselect."""

    def __init__(self, document, catalog, path, result: ImportResult,
                 launch_id: str | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.document, self.catalog = document, catalog
        self.path, self.result = Path(path), result
        self.records = tuple(result.records)
        self.report = self.saved = None
        self.link_dialog = None
        self.setWindowTitle(f"Measurements — {self.path.name}")

        self.counts = QLabel(self._counts_text(), wordWrap=True)
        self.table = QTableWidget(len(self.records), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        for i, r in enumerate(self.records):
            for j, text in enumerate(record_cells(r)):
                item = QTableWidgetItem(text)
                if j in (4, 5):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

        # -- transfers: the link calibration dialog
        copies = sum(1 for r in self.records if r.kind == "transfer"
                     and r.direction in ("htod", "dtoh") and r.time_s is not None)
        self.link_button = QPushButton("Calibrate a link on these copies…")
        self.link_button.setEnabled(copies > 0 and catalog is not None)
        self.link_button.setToolTip(f"{copies} host↔device copies" if copies
                                    else "the file has no host↔device copies")
        self.link_button.clicked.connect(self.calibrate_link)

        # -- kernels: λ and measured points, for a launch of the project
        self.kernel_box = QComboBox()
        for name, gpu in use.kernels_of(self.records):
            n = len(use.timed_launches(self.records, name, gpu))
            self.kernel_box.addItem(f"{name} — {gpu or 'GPU not given'} ({n} launches)",
                                    (name, gpu))
        self.launch_box = QComboBox()
        for lid, launch in document.project.launches.items():
            self.launch_box.addItem(launch.name, lid)
        if launch_id is not None and self.launch_box.findData(launch_id) >= 0:
            self.launch_box.setCurrentIndex(self.launch_box.findData(launch_id))
        self.label_edit = QLineEdit("default", placeholderText="what the λ is for (an application…)")
        self.lambda_button = QPushButton("Fit λ and save for this GPU")
        self.lambda_button.clicked.connect(self.calibrate_lambda)
        self.points_button = QPushButton("Add as measured points of the launch")
        self.points_button.clicked.connect(self.add_points)
        has_kernels = self.kernel_box.count() > 0 and self.launch_box.count() > 0
        self.lambda_button.setEnabled(has_kernels and catalog is not None)
        self.points_button.setEnabled(has_kernels)
        kernels = QGroupBox("Kernel launches")
        form = QFormLayout(kernels)
        form.addRow("Kernel", self.kernel_box)
        form.addRow("Launch", self.launch_box)
        form.addRow("λ label", self.label_edit)
        self.match_label = QLabel(wordWrap=True)
        self.match_label.setStyleSheet("color: #8a5a00")
        form.addRow(self.match_label)
        self.kernel_box.currentIndexChanged.connect(self._show_match)
        self.launch_box.currentIndexChanged.connect(self._show_match)
        row = QHBoxLayout()
        row.addWidget(self.lambda_button)
        row.addWidget(self.points_button)
        form.addRow(row)
        if not has_kernels:
            form.addRow(QLabel("No timed kernel launches in the file." if self.kernel_box.count() == 0
                               else "The project has no launch: add one in the Launch tab."))

        self.summary = QLabel(wordWrap=True)
        self.outcomes: list[str] = []   # what the buttons did, newest first
        self.message = QLabel(wordWrap=True)
        self.message.setStyleSheet("color: #b00020")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.counts)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.link_button)
        layout.addWidget(kernels)
        layout.addWidget(self.summary)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.resize(980, 620)
        self.mismatch_box: QMessageBox | None = None
        self._show_match()

    def _counts_text(self) -> str:
        r = self.result
        kinds = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in sorted(r.counts().items()))
        text = (f"<b>{self.path.name}</b> read as {r.format}: {kinds} · {r.noise_lines} noise "
                f"line(s) skipped · {r.other_rows} row(s) of other kinds skipped · "
                f"{len(r.disagreements)} unit disagreement(s)")
        if r.devices:       # the GPUs an Nsight Systems export describes
            from html import escape

            from gpumodeler.db.nsys_export import describe_gpu
            text += "".join(f"<br>{escape(describe_gpu(g))}" for g in r.devices)
        for d in r.disagreements[:5]:
            text += f"<br><i>row {d.row}, {d.column}: {d.message}</i>"
        if len(r.disagreements) > 5:
            text += f"<br><i>… and {len(r.disagreements) - 5} more</i>"
        return text

    def _tell(self, text: str) -> None:
        self.outcomes.insert(0, text)
        self.summary.setText("<br>".join(self.outcomes))

    def _chosen(self):
        return self.kernel_box.currentData(), self.launch_box.currentData()

    # -- does the file's kernel belong to the launch? -------------------------------------
    def match(self):
        """The chosen kernel's names against the chosen launch's (None without a choice)."""
        (name, gpu), launch_id = self._chosen() if self.kernel_box.count() else ((None, None), None)
        if name is None or launch_id is None:
            return None
        project = self.document.project
        launch = project.launches[launch_id]
        device = project.devices.get(launch.gpu) if launch.gpu else None
        aliases = ()
        if device is not None and self.catalog is not None:
            try:
                aliases = self.catalog.resolve(device.device_name).aliases
            except (ModelError, LookupError):   # a GPU not in the database: its name only
                aliases = ()
        return use.launch_match(project, launch_id, name, gpu, aliases)

    def _show_match(self, *_args) -> None:
        found = self.match()
        self.match_label.setText("" if found is None or found.matches else
                                 f"Not the same launch: {found.describe()}.")

    def confirm_match(self, action: str) -> bool:
        """True when the chosen kernel's launches fit the chosen launch, or the user chose
        to use them anyway in a question naming the file's GPU and kernel and the launch's;
        False (and a message) otherwise."""
        found = self.match()
        if found is None or found.matches:
            return True
        launch = self.launch_box.currentText()
        differ = " and ".join(w for w, same in (("GPU", found.gpu_matches),
                                                 ("kernel", found.kernel_matches)) if not same)
        box = QMessageBox(QMessageBox.Icon.Warning, "Measurements of another launch?",
                          f"The measured launches are not of launch {launch}: another {differ}.",
                          QMessageBox.StandardButton.NoButton, self)
        box.setInformativeText(
            f"In the file: kernel {_named(found.file_kernel)} on GPU {_named(found.file_gpu)}.\n"
            f"Launch {launch}: kernel {_named(found.launch_kernel)} on GPU "
            f"{_named(found.launch_gpu)}.\n\n{action} for {_named(found.launch_gpu)} anyway?")
        use_button = box.addButton(f"{action} anyway", QMessageBox.ButtonRole.AcceptRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        self.mismatch_box = box
        try:
            box.exec()
            chosen = box.clickedButton() is use_button
        finally:
            self.mismatch_box = None
            box.deleteLater()
        if not chosen:
            self.message.setText(f"Nothing done: {found.describe()}. Choose the launch these "
                                 "measurements are of.")
        return chosen

    # -- uses ---------------------------------------------------------------------------
    def calibrate_link(self):
        """The link calibration dialog on this file (non-modal); returns it."""
        from gpumodeler.ui.calibration.dialog import open_calibration_dialog
        self.link_dialog = open_calibration_dialog(self, self.catalog, self.document)
        self.link_dialog.load_file(self.path)
        return self.link_dialog

    def calibrate_lambda(self):
        """Fit λ of the chosen kernel with the chosen launch's λ = 1 predictions and store
        it for the launch's GPU; the stored calibration, or None with a message."""
        (name, gpu), launch_id = self._chosen()
        label = self.label_edit.text().strip()
        if not label:
            self.message.setText("Give the λ a label (default, or the application it is for).")
            return None
        if not self.confirm_match("Fit λ and save it"):
            return None
        doc = self.document
        try:
            report = use.fit_lambda(doc.project, launch_id, use.timed_launches(self.records, name, gpu),
                                    use.short_name(name), gpu_lookup=doc.gpu_spec,
                                    link_lookup=doc.link_spec, table_lookup=doc.latency_table)
            saved = use.save_lambda(self.catalog, report, label, self.path)
        except ModelError as exc:
            self.message.setText(str(exc))
            return None
        except (KeyError, LookupError) as exc:
            self.message.setText(f"not in the device catalog: {exc}")
            return None
        except OSError as exc:
            self.message.setText(f"cannot read {self.path}: {exc.strerror}")
            return None
        self.report, self.saved = report, saved
        doc.catalog_changed((saved.device,))
        loo = (f"leave-one-out error: mean {report['loo_mape']:.3g} %, median "
               f"{report['loo_median_ape']:.3g} %" if report["loo_mape"] is not None
               else "no leave-one-out (one launch size)")
        self._tell(
            f"λ = {report['lambda']:.4g} for {report['kernel']} on {report['gpu']} from "
            f"{report['launches']} launches · in-sample {report['mape_percent']:.3g} % · {loo}"
            + "".join(f"<br><i>{n}</i>" for n in report["notes"])
            + (f"<br><b>warning:</b> {report['warning']}" if report["warning"] else "")
            + f"<br><b>Saved</b> as the {saved.label} λ of {saved.subject} on {saved.device}; "
              "choose it in the launch panel (Calibrated for this GPU).")
        self.message.setText("")
        return saved

    def add_points(self) -> int:
        """Add the chosen kernel's launches as measured points of the chosen launch (one
        undo step); the count added (0 and a message when refused)."""
        (name, gpu), launch_id = self._chosen()
        project = self.document.project
        if not self.confirm_match("Add them as measured points"):
            return 0
        try:
            points = use.measured_points(use.timed_launches(self.records, name, gpu), launch_id,
                                         project.measurements)
        except ModelError as exc:
            self.message.setText(str(exc))
            return 0
        n = len(points)
        if not self.document.push(Macro(f"import {n} measured point{'s' if n != 1 else ''}",
                                        [AddItem("measurements", m) for m in points])):
            self.message.setText("The project refused the measured points.")
            return 0
        self.message.setText("")
        self._tell(f"Added {n} measured point(s) of {use.short_name(name)} to launch "
                             f"{project.launches[launch_id].name}: sweep data size N or block "
                             "size in the Launch tab to see them over the prediction.")
        return n


def file_words(text: str) -> str:
    """A reader's message without the command line's option: this dialog recognises the
    format from the file's columns and has no format choice."""
    return re.sub(r"; give --format nvprof\|ncu\|timings if it is one of them",
                  "; save it as CSV from nvprof or Nsight Compute, or as a timings CSV "
                  "(docs/measurements.md)", text)


def _named(name: str) -> str:
    return f"'{name}'" if str(name or "").strip() else "(not given)"


def open_measurements(window, path) -> MeasurementsDialog | None:
    """Read ``path`` and show its dialog over ``window`` (a MainWindow: its document,
    catalog, current launch and show_error); None (after a message) when the file is bad."""
    try:
        result = read_file(path)
    except ModelError as exc:
        window.show_error("Cannot import the measurements", file_words(str(exc)))
        return None
    panel = window.launch_panel
    dialog = MeasurementsDialog(window.document, window.catalog, path, result,
                                getattr(panel, "launch_id", None), window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


__all__ = ["MeasurementsDialog", "open_measurements", "read_file"]
