"""File › Import Kernel…: a kernel graph from a SASS listing, a cubin or a CUDA source.

The dialog reads the file off the GUI thread (a ``.cu`` is compiled with nvcc for the chosen
architecture and disassembled: seconds) with a busy indication, lists the functions when
there are several (demangled names, the mangled one in the tool tip), then builds the graph
of the chosen one (core's importer, :mod:`gpumodeler.core.kernel.sass`), names the device
database's latency table for the listing's architecture and fills the latencies that table
lacks from the compiler's schedule — the same steps as ``gpumodeler kernel import``
(:mod:`gpumodeler.core.kernel.sass.latencies`) — and adds it to the project as one undoable
command. Every failure (no nvcc, no disassembler, nvcc's error, a file that is no listing)
is a message in the dialog; the project is unchanged.

Tests drive it without ``exec()``: :meth:`ImportKernelDialog.load` (then wait for
:meth:`~ImportKernelDialog.is_busy` to turn False), :meth:`~ImportKernelDialog.function_choices`,
:meth:`~ImportKernelDialog.choose_function`, :meth:`~ImportKernelDialog.import_selected`.
"""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
                               QProgressBar, QPushButton, QVBoxLayout)

from gpumodeler.core.commands import AddKernel
from gpumodeler.core.errors import ModelError

from gpumodeler.core.kernel.layout import DEFAULT_ASPECT, wrapped_layout

from ..logs import bug, error_shown
from ..workers import in_background

#: The architectures a ``.cu`` can be compiled for: Maxwell and Pascal (sm_5x/6x) and Volta
#: (sm_70/72) need a CUDA 12 or older nvcc, CUDA 13 compiles for sm_75 and later (nvcc's own
#: message says so when the installed one cannot).
ARCHITECTURES = ("sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72",
                 "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120")
#: The architecture offered when the project has no GPU of an offered architecture.
DEFAULT_ARCH = "sm_90"
#: The first architecture CUDA 13's nvcc compiles for (the tool tips say which need older).
FIRST_CUDA13_ARCH = "sm_75"


def arch_of_compute_capability(cc) -> str | None:
    """``"sm_89"`` for compute capability ``"8.9"`` (or 8.9), when it is offered; else the
    highest offered architecture of the same major version below it (code for it runs on the
    GPU); None when there is none."""
    try:
        major, minor = (int(part) for part in str(cc).split(".")[:2])
    except (TypeError, ValueError):
        return None
    wanted = major * 10 + minor
    same_major = [a for a in ARCHITECTURES
                  if int(a[3:]) // 10 == major and int(a[3:]) <= wanted]
    return same_major[-1] if same_major else None


def project_architecture(document) -> str | None:
    """The architecture of the first GPU placed in ``document``'s project (its compute
    capability, a project override first), or None when no GPU's is known and offered."""
    project = getattr(document, "project", None)
    for placed in (project.devices.values() if project is not None else ()):
        if placed.kind != "gpu":
            continue
        cc = placed.overrides.get("compute_capability")
        if cc is None:
            try:
                cc = document.gpu_spec(placed.device_name).compute_capability
            except (ModelError, KeyError):
                continue
        arch = arch_of_compute_capability(cc)
        if arch:
            return arch
    return None
FILE_FILTER = ("Kernels (*.sass *.txt *.cubin *.cu);;SASS listings (*.sass *.txt);;"
               "cubins (*.cubin);;CUDA sources (*.cu);;All files (*)")
ERROR_STYLE = "color: #a00000;"
#: Reads under way: a job must outlive a dialog closed while it runs.
_RUNNING: set = set()


#: what a core message's command-line option means in this dialog (no message names a flag)
DIALOG_WORDS = (
    (re.compile(r"choose one with --arch"), "choose one under Architecture"),
    (re.compile(r"e\.g\. --arch (sm_\w+)"), r"e.g. \1 under Architecture"),
    (re.compile(r"choose one with --function"), "choose one in the Function list"),
    (re.compile(r";?\s*\(?also: [^)]*; choose with --latency-table\)"), ""),
    (re.compile(r",? or give graph/sweep --table"), ""),
    (re.compile(r"--latency-table"), "the kernel's latency table (Kernel tab)"),
)


def dialog_words(text: str) -> str:
    """``text`` with each command-line option replaced by the dialog's own field."""
    for pattern, words in DIALOG_WORDS:
        text = pattern.sub(words, text)
    return text


class ReadSignals(QObject):
    finished = Signal(object)  # SassListing
    failed = Signal(str)


class ReadListingJob(QRunnable):
    """Read (compile, disassemble) one file in a worker thread; the project is never
    touched from it. Keep a reference until one of its signals arrives."""

    def __init__(self, path: str, arch: str | None):
        super().__init__()
        self.setAutoDelete(False)
        self.path, self.arch = path, arch
        self.signals = ReadSignals()

    def run(self) -> None:
        from gpumodeler.core.kernel.sass.importer import read_listing
        try:
            listing = read_listing(self.path, self.arch)
        except ModelError as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # a bug must not take the application down: report it
            bug("the SASS import")
            self.signals.failed.emit(f"the import failed unexpectedly ({type(exc).__name__}: {exc})")
        else:
            self.signals.finished.emit(listing)


class ImportKernelDialog(QDialog):
    """Choose a file (and an architecture for a ``.cu``, a function when there are several)
    and import it into ``document``'s project. ``imported(kernel id, note)`` after the
    kernel was added; the note is the import summary and the schedule-fill note in full, the
    hint the same in one short line (for the status bar)."""

    imported = Signal(str, str, str)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setWindowTitle("Import Kernel")
        self.listing = None
        self.kernel_id: str | None = None
        self.note = self.hint = ""
        #: width / height of the view the kernel will be shown in (its layout's shape)
        self.aspect = DEFAULT_ASPECT
        self._job: ReadListingJob | None = None
        self._build_ui()
        self._update_state()

    # -- construction ----------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText("cuobjdump -sass / nvdisasm listing, cubin or .cu")
        self.path_edit.editingFinished.connect(self._path_edited)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        self.arch_combo = QComboBox()
        for arch in ARCHITECTURES:
            self.arch_combo.addItem(arch, arch)
            if ARCHITECTURES.index(arch) < ARCHITECTURES.index(FIRST_CUDA13_ARCH):
                self.arch_combo.setItemData(self.arch_combo.count() - 1,
                                            "needs the nvcc of CUDA 12 or older",
                                            Qt.ItemDataRole.ToolTipRole)
        default = project_architecture(self.document) or DEFAULT_ARCH
        self.arch_combo.setCurrentIndex(ARCHITECTURES.index(default))
        self.arch_combo.setToolTip("Architecture nvcc compiles the .cu for (-arch=sm_XX); "
                                   "the project's GPU's by default")
        self.arch_combo.activated.connect(lambda _i: self._arch_changed())
        self.read_button = QPushButton("Compile")
        self.read_button.setToolTip("Compile the .cu with nvcc and disassemble it")
        self.read_button.clicked.connect(self.reload)
        arch_row = QHBoxLayout()
        arch_row.addWidget(self.arch_combo)
        arch_row.addWidget(self.read_button)
        arch_row.addStretch(1)
        form = QFormLayout()
        form.addRow("File", row)
        self.arch_label = QLabel("Architecture")
        form.addRow(self.arch_label, arch_row)

        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # an indeterminate bar: the tools give no progress
        self.busy.setTextVisible(False)
        self.busy_label = QLabel()
        self.functions_label = QLabel("Function")
        self.function_list = QListWidget()
        self.function_list.itemSelectionChanged.connect(self._update_state)
        self.function_list.itemDoubleClicked.connect(lambda _item: self.import_selected())
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.AcceptRole)
        self.buttons.accepted.connect(self.import_selected)
        self.buttons.rejected.connect(self.reject)

        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.busy_label)
        lay.addWidget(self.busy)
        lay.addWidget(self.functions_label)
        lay.addWidget(self.function_list, 1)
        lay.addWidget(self.message_label)
        lay.addWidget(self.buttons)
        self.resize(640, 420)

    # -- state -----------------------------------------------------------------------------
    def path(self) -> str:
        return self.path_edit.text().strip()

    def is_source(self) -> bool:
        return Path(self.path()).suffix.lower() == ".cu"

    def is_busy(self) -> bool:
        return self._job is not None

    def message(self) -> str:
        return self.message_label.text()

    def _update_state(self) -> None:
        busy = self.is_busy()
        source = self.is_source()
        for w in (self.arch_label, self.arch_combo, self.read_button):
            w.setVisible(source)
        self.arch_combo.setEnabled(not busy)
        self.read_button.setEnabled(not busy and bool(self.path()))
        self.busy.setVisible(busy)
        self.busy_label.setVisible(busy)
        several = self.function_list.count() > 1
        self.functions_label.setVisible(several)
        self.function_list.setVisible(several)
        self.import_button.setEnabled(not busy and self._selected() is not None)

    def _show_error(self, text: str) -> None:
        text = dialog_words(text)
        error_shown("Import kernel", text)
        self.message_label.setStyleSheet(ERROR_STYLE)
        self.message_label.setText(text)

    def _show_info(self, text: str) -> None:
        text = dialog_words(text)
        self.message_label.setStyleSheet("")
        self.message_label.setText(text)

    # -- reading the file ------------------------------------------------------------------
    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import kernel", self.path() or "", FILE_FILTER)
        if path:
            self.path_edit.setText(path)
            self._path_edited()

    def _path_edited(self) -> None:
        """A listing or cubin is read as soon as its name is entered; a ``.cu`` waits for the
        architecture and the Compile button (compiling takes seconds and is for one
        architecture)."""
        if not self.path() or (self.listing is not None and self.path() == self._loaded_path):
            return
        if self.is_source():
            self._update_state()
            self._show_info("Choose the architecture to compile for, then press Compile.")
            return
        self.load(self.path())

    def _arch_changed(self) -> None:
        if self.is_source() and self.listing is not None:
            self.reload()  # the listing was compiled for the other architecture

    _loaded_path = ""

    def load(self, path: str, arch: str | None = None) -> None:
        """Read ``path`` in the background (a ``.cu``: compile it for ``arch``, default the
        chooser's); the function list (or a message) follows when it is done."""
        self.path_edit.setText(str(path))
        if arch is not None:
            i = self.arch_combo.findData(arch)
            if i < 0:
                self._show_error(f"architecture {arch!r} is not one of {', '.join(ARCHITECTURES)}")
                return
            self.arch_combo.setCurrentIndex(i)
        self.reload()

    def reload(self) -> None:
        path = self.path()
        if not path or self.is_busy():
            return
        self.listing = None
        self._loaded_path = path
        self.function_list.clear()
        arch = self.arch_combo.currentData() if self.is_source() else None
        name = Path(path).name
        self.busy_label.setText(f"Compiling {name} for {arch} and disassembling it…" if arch
                                else f"Reading {name}…")
        self._show_info("")
        job = self._job = ReadListingJob(path, arch)
        _RUNNING.add(job)  # alive until it reports, even if the dialog is gone
        job.signals.finished.connect(self._read_done)  # queued to the GUI thread
        job.signals.failed.connect(self._read_failed)
        self._update_state()
        in_background(job)

    def _finished_job(self) -> bool:
        """True when the job reporting is the one this dialog waits for (not an earlier
        read of another file or one the user cancelled)."""
        sender = self.sender()
        for job in list(_RUNNING):
            if job.signals is sender:
                _RUNNING.discard(job)
        if self._job is None or self._job.signals is not sender:
            return False
        self._job = None
        return True

    def _read_failed(self, message: str) -> None:
        if not self._finished_job():
            return
        self._show_error(message)
        self._update_state()

    def _read_done(self, listing) -> None:
        if not self._finished_job():
            return
        self.listing = listing
        several_archs = len(listing.archs()) > 1
        for f in listing.functions:
            text = f.demangled or f.name
            if several_archs and f.arch:
                text += f"  ({f.arch})"
            item = QListWidgetItem(text)
            item.setData(Qt.UserRole, (f.name, f.arch))
            item.setToolTip(f.name)
            self.function_list.addItem(item)
        if self.function_list.count():
            self.function_list.setCurrentRow(0)
        n = len(listing.functions)
        self._show_info(f"{n} functions: choose one to import" if n > 1 else "")
        self._update_state()

    # -- choosing and importing -------------------------------------------------------------
    def function_choices(self) -> list[str]:
        """The functions listed (as shown: demangled where known)."""
        return [self.function_list.item(i).text() for i in range(self.function_list.count())]

    def choose_function(self, text: str) -> bool:
        """Select the function shown as ``text`` or with that mangled name."""
        for i in range(self.function_list.count()):
            item = self.function_list.item(i)
            if text in (item.text(), item.data(Qt.UserRole)[0]):
                self.function_list.setCurrentRow(i)
                return True
        return False

    def _selected(self):
        item = self.function_list.currentItem()
        return item.data(Qt.UserRole) if item is not None else None

    def import_selected(self) -> str | None:
        """Build the chosen function's graph and add it to the project (one undoable step);
        the new kernel's id, or None with the reason shown."""
        from gpumodeler.core.kernel.sass.importer import import_from_listing
        from gpumodeler.core.kernel.sass.latencies import (fill_latencies_from_schedule,
                                                           table_for_architecture)
        chosen = self._selected()
        if self.listing is None or chosen is None or self.is_busy():
            self._show_error("Choose a file to import first" if self.listing is None
                             else "Choose the function to import")
            return None
        name, arch = chosen
        try:
            graph, report = import_from_listing(self.listing, name, arch)
        except ModelError as exc:
            self._show_error(str(exc))
            return None
        graph.latency_table, table_note = table_for_architecture(report.arch,
                                                                 self.document.latency_tables())
        scheduled = fill_latencies_from_schedule(graph, self.document.table_for(graph.latency_table))
        # the importer's one tall column, wrapped into columns the shape of the view
        for nid, (x, y) in wrapped_layout(graph, self.aspect).items():
            graph.update_instruction(nid, x=x, y=y)
        kid = self.document.project.new_id("k")
        command = AddKernel(kid, graph)
        command.text = f"import kernel {graph.name} from {Path(self.path()).name}"
        if not self.document.push(command):
            self._show_error("The kernel was not added: the project refused it (see the "
                             "status bar)")
            return None
        self.kernel_id = kid
        self.note = f"Imported {report.summary()}; {table_note}" + (f". Note: {scheduled}" if scheduled else "")
        loops = len(report.loops)
        self.hint = (f"Imported {graph.name} from {Path(self.path()).name}: {report.instructions} "
                     f"instructions, {loops} loop{'s' if loops != 1 else ''}; latency table "
                     f"{graph.latency_table or '(none)'}"
                     + (f"; {scheduled.split(' ', 1)[0]} edge latencies from the compiler's "
                        f"schedule (lower bounds)" if scheduled else ""))
        self.imported.emit(kid, self.note, self.hint)
        self.accept()
        return kid

    def reject(self) -> None:
        self._job = None  # a read still running reports to nobody who acts on it
        super().reject()
