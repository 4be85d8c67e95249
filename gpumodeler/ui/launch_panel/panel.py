"""LaunchPanel: one kernel launch on one GPU, edited field by field, predicted live.

Inputs (left): the launch, its GPU (placed GPUs of the system) and kernel, grid or data
size, block size, registers and shared memory (occupancy from the calculator, or an
explicit override), λ, loop variables and the transfers. Each finished field edit is one
``UpdateItem("launches", ...)`` command; a value the model refuses stays in the field, red,
with the reason under the form, and the model is unchanged (what is checked before a push:
:mod:`.checks`; the transfer rows: :mod:`.transfers`).

The answer — total, kernel time, bound, binding resource and the models' spread — is in a
header above both (:mod:`.header`), which never scrolls. The kernel-time terms are controls
of the inputs (:mod:`.terms_box`), saved with the launch (an undoable edit), and apply to
the prediction, the models and the sweeps.

Results (right, :mod:`.results`) come from the service layer
(:class:`gpumodeler.service.evaluation.ProjectEvaluation`), the same call the CLI's and the
report's numbers come from; the registered models side by side below them
(:mod:`.models_view`, from :func:`gpumodeler.core.models.graph_inputs.compare_launch`).
Sweeps and their plot are below (:mod:`.sweep`; in the main window, its Sweep Plot dock).
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QSplitter, QVBoxLayout, QWidget)

from gpumodeler.core.commands import AddItem, SetKernelProperties, UpdateItem
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.graph_items import (block_set_variables, formula_inputs,
                                                launch_set_text)
from gpumodeler.core.models.graph_inputs import compare_launch
from gpumodeler.core.project import LaunchConfig, Transfer, launch_resources
from gpumodeler.service.evaluation import ProjectEvaluation

from ..binding import DocumentBinding, current_or_first, fill_item_combo, item_choices
from .calibrated import CalibratedLambdaBox, CalibratedLinkBox
from .checks import (MAX_GRID_BLOCKS, data_size_limit, loop_variable_problem, missing_link_value,
                     occupancy_problem, transfer_size_problem, variable_names)
from .header import AnswerHeader
from .fields import (FieldError, Form, clear_error, fmt_number, mark_error, message_label,
                     parse_float, parse_int)
from .models_view import ModelsView
from .results import PredictionView, occupancy_text
from .sweep import SweepPanel
from .table_check import TableCheck
from .terms_box import KernelTermsBox, panel_words
from .transfers import TransfersBox

# core error items -> our field names
ITEM_FIELDS = {"registers_per_thread": "registers", "static_shared_mem_bytes": "shared_mem",
               "shared_mem_bytes": "shared_mem", "grid_size": "size", "data_size": "size"}


class LaunchPanel(DocumentBinding, QWidget):
    """Edit and predict the launches of ``document.project``."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.launch_id: str | None = None
        self.result = None
        self.model_results = None
        self.error = ""
        #: why the transfers are not predicted while the kernel is ("" otherwise)
        self.transfer_error = ""
        #: (connection id, field, link name) the user should set for the transfers, or None
        self.missing_link_value = None
        self._pending = False
        self._variable_fields: dict[str, QLineEdit] = {}
        self._build_ui()
        self.set_document(document)

    # -- construction ----------------------------------------------------------------------
    def _build_ui(self) -> None:
        top = QHBoxLayout()
        top.setContentsMargins(6, 6, 6, 0)
        self.launch_combo = QComboBox()
        self.launch_combo.setMinimumContentsLength(16)
        self.launch_combo.setToolTip("The launch shown (a project can hold several)")
        self.launch_combo.activated.connect(lambda i: self.set_launch(self.launch_combo.itemData(i)))
        self.new_button = QPushButton("New launch")
        self.new_button.clicked.connect(self.new_launch)
        self.new_button.setToolTip("Add a launch of the project's first kernel on its first GPU")
        top.addWidget(QLabel("Launch"))
        top.addWidget(self.launch_combo)
        top.addWidget(self.new_button)
        self.header = AnswerHeader()
        top.addWidget(self.header, 1)

        # inputs
        inputs = QWidget()
        il = QVBoxLayout(inputs)
        il.setContentsMargins(6, 6, 6, 6)
        box = QGroupBox("Launch")
        fl = QFormLayout(box)
        fl.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.message = message_label()
        self.form = Form(fl, self.message, self)
        self.form.committed.connect(self._on_committed)
        self.form.combo("gpu", "GPU", [], help_text="a GPU placed in the system")
        self.form.combo("kernel", "Kernel", [])
        self.form.combo("size_mode", "Grid from", [("data size N (grid = ⌈N / block⌉)", "data"),
                                                    ("grid size (blocks)", "grid")])
        self.form.line("size", "N", self._parse_size, help_text="threads to cover, or blocks")
        self.form.line("block_size", "Block size", lambda t: parse_int(t, "block size", 1, 1024),
                       help_text="threads per block (1..1024)")
        self.form.line("registers", "Registers", lambda t: parse_int(t, "registers per thread", 0, 255),
                       help_text="registers per thread (from the compiler: -Xptxas -v)")
        self.form.line("shared_mem", "Shared memory", lambda t: parse_int(t, "shared memory (bytes)", 0),
                       help_text="bytes per block, static + dynamic")
        self.form.check("occupancy_auto", "Occupancy", text="from the occupancy calculator",
                        help_text="checked: active warps per SM from block size, registers and shared "
                                  "memory; unchecked: give them yourself below")
        self.form.line("occupancy_override", "Occupancy override",
                       lambda t: parse_float(t, "occupancy (warps per SM)", 0.0, 1024, strict_minimum=True),
                       help_text="active warps per SM")
        self.occupancy_label = QLabel()
        self.occupancy_label.setWordWrap(True)
        self.occupancy_label.setStyleSheet("color: #34495e;")
        fl.addRow("", self.occupancy_label)
        self.form.line("lam", "λ", lambda t: parse_float(t, "λ", 0.0, strict_minimum=True),
                       help_text="kernel scaling parameter (Gajger eq. 4.1; calibrate from a measurement)")
        fl.addRow("Calibrated for this GPU", CalibratedLambdaBox(self))
        self.link_calibration = CalibratedLinkBox(self)
        fl.addRow("Transfers calibrated", self.link_calibration)
        il.addWidget(box)
        il.addWidget(self.message)  # a refused edit's reason, near the fields
        # a kernel whose latency table is another architecture's than the GPU's
        self.table_check = TableCheck()
        self.table_warning, self.table_button = self.table_check.warning, self.table_check.button
        self.table_check.use_requested.connect(self.use_gpu_table)
        il.addWidget(self.table_check)

        self.terms_box = KernelTermsBox()
        self.terms_box.changed.connect(self._terms_edited)

        self.variables_box = QGroupBox("Kernel variables (loops, guards)")
        self.variables_layout = QFormLayout(self.variables_box)
        il.addWidget(self.variables_box)

        self.transfers = TransfersBox()
        self.transfer_table = self.transfers.table
        self.transfers.edited.connect(lambda row, changes: self._edit_transfer(row, **changes))
        self.transfers.add_requested.connect(lambda: self.add_transfer())
        self.transfers.remove_requested.connect(self._remove_selected_transfer)
        il.addWidget(self.transfers)
        il.addWidget(self.terms_box)
        il.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(inputs)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(440)

        self.prediction = PredictionView()
        self.result_labels = self.prediction.labels
        self.result_message = self.prediction.message
        self.prediction.fix_requested.connect(self.show_missing_link_value)

        self.models = ModelsView()
        self.models.spread_label.hide()  # the header shows the spread, on screen at any size

        self.sweep = SweepPanel(self)

        # the numbers scroll on a short screen, so the sweep controls and plot keep their room
        prediction_scroll = QScrollArea()
        prediction_scroll.setWidgetResizable(True)
        prediction_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        prediction_scroll.setWidget(self.prediction)
        prediction_scroll.setMinimumHeight(40)
        self._right = right = QSplitter(Qt.Vertical)
        right.setChildrenCollapsible(False)
        # the models first: with the answer in the header, their rows (and which of them are
        # uncalibrated) come next; the prediction's detail rows scroll below them
        right.addWidget(self.models)
        right.addWidget(prediction_scroll)
        right.addWidget(self.sweep)
        right.setStretchFactor(2, 1)
        right.setSizes([210, 300, 400])
        split = QSplitter(Qt.Horizontal)
        split.addWidget(scroll)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([450, 850])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(split, 1)

    def detach_sweep(self):
        """The sweep panel, out of the results column, for the main window's Sweep Plot
        dock (:mod:`gpumodeler.ui.docks`); the launch panel keeps driving it."""
        self.sweep.setParent(None)
        self._right.setStretchFactor(1, 1)
        return self.sweep

    def document_connections(self, document):
        return ((document.changed, self._on_changed), (document.refused, self._on_refused))

    def show_project(self) -> None:
        self.launch_id = None
        self.sweep.set_launch(None)  # another project: its launch ids mean other launches
        self.models.set_catalog(self.document.catalog)  # its stored learned models
        self.rebuild()

    @property
    def launch(self) -> LaunchConfig | None:
        return self.project.launches.get(self.launch_id) if self.launch_id else None

    # -- refresh ---------------------------------------------------------------------------
    def rebuild(self) -> None:
        self.launch_id = current_or_first(self.project.launches, self.launch_id)
        self._fill_launch_combo()
        self.refresh()

    def set_launch(self, launch_id: str | None) -> None:
        self.launch_id = launch_id if launch_id in self.project.launches else None
        self._fill_launch_combo()
        self.refresh()

    def _fill_launch_combo(self) -> None:
        fill_item_combo(self.launch_combo, self.project.launches, self.launch_id)

    def refresh(self) -> None:
        """Show the launch's inputs and evaluate it."""
        self._pending = False
        launch = self.launch
        enabled = launch is not None
        for w in (self.transfers, self.variables_box, self.terms_box):
            w.setEnabled(enabled)
        self.link_calibration.sync()
        for w in self.form.widgets.values():
            w.setEnabled(enabled)
        if launch is None:
            self.result = None
            self.error = ("No launch: add one with “New launch” (the system needs a GPU and the "
                          "project a kernel).")
            self._show_result(None, self.error)
            self._fill_variables_empty()
            self.transfers.show_transfers((), ())
            self.sweep.set_launch(None)
            return
        gpus = [(d.label or d.device_name + (f"  ({d.id})" if d.label == "" else ""), d.id)
                for d in self.project.gpus()]
        self.form.set_choices("gpu", [("(choose a GPU)", None)] + gpus)
        self.form.set_choices("kernel", [("(choose a kernel)", None)] + item_choices(self.project.kernels))
        mode = "data" if launch.data_size is not None or launch.grid_size is None else "grid"
        self.form.set_values({
            "gpu": launch.gpu, "kernel": launch.kernel, "size_mode": mode,
            "size": launch.data_size if mode == "data" else launch.grid_size,
            "block_size": launch.block_size, "registers": launch.registers,
            "shared_mem": launch.shared_mem, "occupancy_auto": launch.occupancy_override is None,
            "occupancy_override": launch.occupancy_override, "lam": launch.lam})
        self.form.layout.labelForField(self.form.widgets["size"]).setText(
            "N (threads)" if mode == "data" else "Grid (blocks)")
        override = self.form.widgets["occupancy_override"]
        override.setEnabled(launch.occupancy_override is not None)
        override.setPlaceholderText("from the calculator" if launch.occupancy_override is None else "")
        self._fill_variables(launch)
        self.terms_box.show_terms(launch.terms)
        links = [(c.label or c.link_name, c.id) for c in self.project.connections_of(launch.gpu)] \
            if launch.gpu else []
        self.transfers.show_transfers(launch.transfers, links)
        self.evaluate()
        self.table_check.check(self.project, launch, self.document)
        # a launch shown for the first time runs its first saved sweep (the sweep panel's
        # choices follow the launch's variables otherwise)
        self.sweep.set_launch(self.launch_id)
        self.sweep.model_changed()

    def is_busy(self) -> bool:
        """Background work is running or about to (a sweep, a re-run, a refresh)."""
        return self._pending or self.sweep.is_busy()

    def stop_background_work(self) -> None:
        self.sweep.cancel()

    def _schedule_refresh(self) -> None:
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, lambda: self._pending and self.refresh())

    def evaluate(self) -> None:
        """Predict the launch (the service's evaluation) and show the numbers or the reason why not.
        When only its transfers cannot be predicted, the kernel is still shown and the
        transfers say why (and which field to set)."""
        self.transfer_error, self.missing_link_value = "", None
        evaluation = self.evaluation()
        self._show_gpu_values()
        try:
            self.result = evaluation.launch(self.launch_id)
            self.error = ""
        except ModelError as exc:
            kernel_only = self._kernel_only(evaluation)
            if kernel_only is not None:
                self.result, self.error, self.transfer_error = kernel_only, "", str(exc)
                self.missing_link_value = missing_link_value(self.project, self.launch,
                                                             self.document.link_spec,
                                                             self.document.calibrated_link_spec)
                fix = ""
                if self.missing_link_value is not None:
                    _, field, name = self.missing_link_value
                    from gpumodeler.ui.device_fields import field_label
                    fix = f"Set the {field_label(field).lower()} of {name}…"
                    self.transfer_error = (f"the {field_label(field).lower()} of link {name} is "
                                           f"unknown")
                self._show_result(kernel_only, "", self.transfer_error, fix)
                return
            self.result, self.error = None, str(exc)
            self._show_result(None, self.error)
            field = ITEM_FIELDS.get(getattr(exc, "item", None) or "", getattr(exc, "item", None))
            if field in self.form.widgets:
                mark_error(self.form.widgets[field], self.error)
            return
        except (KeyError, LookupError) as exc:  # a catalog name that is not there
            self.result, self.error = None, f"not in the device catalog: {exc}"
            self._show_result(None, self.error)
            return
        self._show_result(self.result, "")
        try:  # the other models: each one's own error stays in its row
            self.model_results = compare_launch(self.project, self.launch_id, self.result,
                                                table_lookup=self.document.latency_table,
                                                terms=self.terms_box.terms(),
                                                parameters=self.model_parameters())
        except ModelError as exc:
            self.model_results = None
            self.models.show_results(None, str(exc))
            self.header.show_models(None, {})
            return
        project, launch_id, result, results = self.project, self.launch_id, self.result, self.model_results

        def launch_row():  # only when a learned model is chosen
            from gpumodeler.core.learn.launch import project_launch_row  # lazy: the learn package
            return project_launch_row(project, launch_id, result, results,
                                      table_lookup=self.document.latency_table)
        self.models.show_results(self.model_results, lam=self.launch.lam, launch_row=launch_row)
        self.header.show_models(self.model_results, self.models.statuses)

    def evaluation(self) -> ProjectEvaluation:
        """The service's evaluation of the project with the Kernel terms box's switches and
        GPU values (the prediction's, the models' and the sweeps')."""
        return ProjectEvaluation(self.project, self.terms_box.lookups(self.document.lookups()),
                                 terms=self.terms_box.terms())

    def model_parameters(self) -> dict:
        """The models' own inputs the panel gives (ModelInputs.parameters): none now (the
        working set of the old L2 term is replaced by the reuse model)."""
        return {}

    def _show_gpu_values(self) -> None:
        """The launch's GPU's own launch overhead and L2 values, as the terms box's hints."""
        from gpumodeler.core.pipeline import resolve_gpu
        launch = self.launch
        try:
            gpu = resolve_gpu(self.project, launch.gpu, self.document.gpu_spec) if launch else None
        except (ModelError, KeyError, LookupError):
            gpu = None
        self.terms_box.set_gpu(gpu)

    def use_gpu_table(self, key: str | None = None) -> bool:
        """Give the kernel the latency table of its GPU's architecture (one undo step)."""
        launch = self.launch
        key = key or self.table_check.key
        if launch is None or not key:
            return False
        command = SetKernelProperties(launch.kernel, latency_table=key,
                                      known_tables=self.document.latency_tables())
        command.text = "use the GPU's latency table"
        return self.push(command)

    def _kernel_only(self, evaluation=None):
        """The launch's kernel predicted without its transfers, or None if that fails too."""
        launch = self.launch
        if launch is None or not launch.transfers:
            return None
        evaluation = evaluation or self.evaluation()
        try:
            return evaluation.launch(self.launch_id, include_transfers=False)
        except (ModelError, KeyError, LookupError):
            return None

    def _show_result(self, r, message: str, transfer_error: str = "", fix_text: str = "") -> None:
        message, transfer_error = panel_words(message), panel_words(transfer_error)
        self.occupancy_label.setText(occupancy_text(r))
        self.prediction.show_result(r, message, transfer_error, fix_text)
        self.header.show_result(r, message, transfer_error)
        if r is None:
            self.model_results = None
            self.models.show_results(None, message)
            self.header.show_models(None, {})


    def show_missing_link_value(self) -> bool:
        """Select the link and the field the transfers need, in the inspector."""
        if self.missing_link_value is None:
            return False
        conn_id, field, _ = self.missing_link_value
        self.document.show_field("connection", conn_id, field)
        return True

    # -- variables -------------------------------------------------------------------------
    def _fill_variables(self, launch) -> None:
        names = variable_names(self.project, launch)
        if list(self._variable_fields) != names:
            while self.variables_layout.rowCount():
                self.variables_layout.removeRow(0)
            self._variable_fields = {}
            for name in names:
                f = QLineEdit()
                f.setObjectName(f"variable_{name}")
                f.editingFinished.connect(lambda n=name: self._on_variable_edited(n))
                self.variables_layout.addRow(name, f)
                self._variable_fields[name] = f
        graph = self.project.kernels.get(launch.kernel)
        from_block = block_set_variables(graph) if graph is not None else set()
        inputs = formula_inputs(graph) if graph is not None else set()
        for name, f in self._variable_fields.items():
            default = graph.variables.get(name) if graph is not None else None
            f.setPlaceholderText(launch_set_text(graph, name) if name in from_block else
                                 f"kernel parameter, default {fmt_number(default)}: "
                                 f"not given" if name in inputs and not default else
                                 f"kernel default: {fmt_number(default)}" if default is not None
                                 else "value needed")
            f.setToolTip("the kernel parameter a grid-stride loop runs to (the array's "
                         "length): each launch's block and grid give the loop's trips from "
                         "it; empty: not given, one trip" if name in inputs else
                         "empty: the kernel's default value")
            if not f.hasFocus():
                f.setText(fmt_number(launch.variables.get(name)))
            clear_error(f)
        self.variables_box.setVisible(bool(names))

    def _fill_variables_empty(self) -> None:
        while self.variables_layout.rowCount():
            self.variables_layout.removeRow(0)
        self._variable_fields = {}
        self.variables_box.setVisible(False)

    # -- editing ---------------------------------------------------------------------------
    def _parse_size(self, text: str):
        mode = self.form.values.get("size_mode", "data")
        if mode == "data":
            block = self.launch.block_size if self.launch is not None else 1024
            return parse_int(text, f"data size N (CUDA's grid limit: 2^31 - 1 blocks of {block} threads)",
                             1, data_size_limit(block))
        return parse_int(text, "grid size (blocks; CUDA's limit is 2^31 - 1)", 1, MAX_GRID_BLOCKS)

    def command_done(self) -> None:
        self.refresh()

    def update_launch(self, field: str | None = None, **changes) -> bool:
        """One undoable edit of the current launch; refused edits leave it unchanged."""
        launch = self.launch
        if launch is None:
            return False
        field = field or next(iter(changes))
        reason = occupancy_problem(self.project, self.document.gpu_spec, replace(launch, **changes))
        if reason:
            self.refuse(field, reason)
            return False
        label = self.field_words(field)
        return self.push(UpdateItem("launches", self.launch_id, text=f"edit {label}", **changes), field)

    def _terms_edited(self) -> None:
        """The Kernel terms box changed: one undoable edit of the launch's terms."""
        launch = self.launch
        terms = self.terms_box.launch_terms()
        if launch is None or terms == launch.terms:
            return
        self.push(UpdateItem("launches", self.launch_id, text="edit kernel terms", terms=terms),
                  "terms")

    def field_words(self, field: str) -> str:
        """A field's name as the form shows it, for undo texts ("edit block size")."""
        if field in self.form.widgets:
            label = self.form.layout.labelForField(self.form.widgets[field])
            text = label.text() if label is not None else ""
            if field == "occupancy_auto":
                text = "occupancy from calculator"
            return (text or field.replace("_", " ")).lower() if text != "λ" else text
        if field.startswith("variable_"):
            return f"variable {field[len('variable_'):]}"
        if field.startswith("transfer_size_"):
            return f"size of transfer {int(field.rsplit('_', 1)[1]) + 1}"
        return field.replace("_", " ")

    def refuse(self, field: str, message: str) -> None:
        if field in self.form.widgets:
            self.form.show_error(field, message)
        elif field.startswith("variable_"):
            w = self._variable_fields.get(field[len("variable_"):])
            if w is not None:
                mark_error(w, message)
            self.form.show_error(None, message)
        elif field.startswith("transfer_"):
            w = self.transfer_table.findChild(QLineEdit, field)
            if w is not None:
                mark_error(w, message)
            self.form.show_error(None, message)
        else:
            self.form.show_error(None, message)

    def _on_committed(self, name: str, value) -> None:
        launch = self.launch
        if launch is None:
            return
        if name == "size_mode":
            current = launch.data_size if launch.data_size is not None else launch.grid_size
            if value == "data":
                self.update_launch("size", data_size=current or 1, grid_size=None)
            else:
                self.update_launch("size", grid_size=launch.grid_size or (
                    -(-launch.data_size // launch.block_size) if launch.data_size else 1), data_size=None)
        elif name == "size":
            if self.form.values.get("size_mode") == "grid":
                self.update_launch("size", grid_size=value, data_size=None)
            else:
                self.update_launch("size", data_size=value, grid_size=None)
        elif name == "occupancy_auto":
            if value:
                self.update_launch("occupancy_auto", occupancy_override=None)
            else:
                warps = self.result.occupancy_warps_per_sm if self.result else 32.0
                self.update_launch("occupancy_auto", occupancy_override=float(warps))
        else:
            self.update_launch(name, **{name: value})

    def _on_variable_edited(self, name: str) -> None:
        launch = self.launch
        w = self._variable_fields[name]
        try:
            value = parse_float(w.text(), f"variable {name}", allow_empty=True)
        except FieldError as exc:
            self.refuse(f"variable_{name}", str(exc))
            return
        reason = loop_variable_problem(name, value) if value is not None else ""
        if reason:
            self.refuse(f"variable_{name}", reason)
            return
        variables = dict(launch.variables)
        if value is None:
            variables.pop(name, None)
        else:
            variables[name] = int(value) if value.is_integer() else value
        if variables != launch.variables:
            self.update_launch(f"variable_{name}", variables=variables)

    def _edit_transfer(self, row: int, **changes) -> None:
        launch = self.launch
        if launch is None or row >= len(launch.transfers):
            return
        old = launch.transfers[row]
        new = replace(old, **changes)
        if new == old:
            return
        if "size" in changes:
            reason = transfer_size_problem(self.project, launch, changes["size"])
            if reason:
                self.refuse(f"transfer_size_{row}", reason)
                return
        transfers = list(launch.transfers)
        transfers[row] = new
        self.update_launch(f"transfer_size_{row}" if "size" in changes else "transfers",
                           transfers=tuple(transfers))

    def add_transfer(self, direction: str = "htod", size: str | None = None) -> bool:
        launch = self.launch
        if launch is None:
            return False
        size = size or ("4*N" if launch.data_size is not None else "1e6")
        return self.update_launch("transfers", transfers=launch.transfers + (Transfer(direction, size),))

    def _remove_selected_transfer(self) -> None:
        launch = self.launch
        row = self.transfers.selected_row()
        if row is None and launch is not None and launch.transfers:
            row = len(launch.transfers) - 1
        if launch is None or row is None:
            return
        transfers = tuple(t for i, t in enumerate(launch.transfers) if i != row)
        self.update_launch("transfers", transfers=transfers)

    def new_launch(self) -> bool:
        lid = self.project.new_id("l")
        gpus = self.project.gpus()
        kernel = next(iter(self.project.kernels), None)
        # an imported kernel's registers and shared memory (from its listing), if it has them
        resources = launch_resources(self.project.kernels.get(kernel) if kernel else None)
        launch = LaunchConfig(lid, name=f"launch {len(self.project.launches) + 1}",
                              gpu=gpus[0].id if gpus else None, kernel=kernel, block_size=256,
                              data_size=1_000_000, **resources)
        ok = self.push(AddItem("launches", launch, text="add launch"))
        if ok:
            self.set_launch(lid)
        return ok

    # -- model events ----------------------------------------------------------------------
    def _on_refused(self, message: str, item: str) -> None:
        if self.pushing:
            field = self.refusal_field or ITEM_FIELDS.get(item, item)
            if item in ("grid_size", "data_size"):
                field = "size"
            self.refuse(field or "", message)

    def _on_changed(self, event: str, payload) -> None:
        if event == "project_replaced":
            self.show_project()
            return
        if event.startswith("launches_"):
            if event == "launches_added" and self.launch_id is None:
                self.launch_id = payload.id
            if self.launch_id not in self.project.launches:
                self.launch_id = current_or_first(self.project.launches, None)
                self.sweep.set_launch(self.launch_id)
            self._fill_launch_combo()
            if self.pushing:
                return  # _push refreshes once the command is done
            self._schedule_refresh()
        elif event.startswith(("devices_", "connections_", "kernels_", "kernel_edited",
                               "catalog_changed")):
            if event == "catalog_changed":
                self.models.set_catalog(self.document.catalog)  # a learned model stored or gone
            self._schedule_refresh()
