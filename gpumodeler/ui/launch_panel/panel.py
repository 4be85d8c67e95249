"""LaunchPanel: one kernel launch on one GPU, edited field by field, predicted live.

Inputs (left): the launch, its GPU (placed GPUs of the system) and kernel, grid or data
size, block size, registers and shared memory (occupancy from the calculator, or an
explicit override), λ, loop variables and the transfers. Each finished field edit is one
``UpdateItem("launches", ...)`` command; a value the model refuses stays in the field, red,
with the reason under the form, and the model is unchanged.

Results (right) come from :func:`gpumodeler.core.project.evaluate_launch`, the same call
the CLI's numbers come from. Sweeps and their plot are below (:mod:`.sweep`).
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGridLayout, QGroupBox,
                               QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton,
                               QScrollArea, QSplitter, QTableWidget, QVBoxLayout, QWidget)

from gpumodeler.core.commands import AddItem, UpdateItem
from gpumodeler.core.errors import ModelError
from gpumodeler.core.expressions import parse
from gpumodeler.core.latency_bound import analyze
from gpumodeler.core.project import LaunchConfig, Transfer, evaluate_launch
from gpumodeler.core.throughput import RESOURCES

from ..binding import DocumentBinding, current_or_first, fill_item_combo, item_choices
from ..plots.units import fmt_bytes, fmt_count, fmt_time
from .fields import (FieldError, Form, clear_error, fmt_number, mark_error, message_label,
                     parse_float, parse_int)
from .sweep import SweepPanel

RESOURCE_NAMES = {"cuda_cores": "CUDA cores", "issue": "issue", "memory": "global memory",
                  "sfu": "SFU", "fp64": "FP64", "shared_memory": "shared memory", "latency": "latency"}
LIMIT_NAMES = {"warps": "warps", "registers": "registers", "shared_memory": "shared memory",
               "blocks": "blocks per SM"}
# core error items -> our field names
ITEM_FIELDS = {"registers_per_thread": "registers", "static_shared_mem_bytes": "shared_mem",
               "shared_mem_bytes": "shared_mem", "grid_size": "size", "data_size": "size"}
DIRECTIONS = (("host → device", "htod"), ("device → host", "dtoh"))


class LaunchPanel(DocumentBinding, QWidget):
    """Edit and predict the launches of ``document.project``."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.launch_id: str | None = None
        self.result = None
        self.error = ""
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
        self.launch_combo.activated.connect(lambda i: self.set_launch(self.launch_combo.itemData(i)))
        self.new_button = QPushButton("New launch")
        self.new_button.clicked.connect(self.new_launch)
        top.addWidget(QLabel("Launch"))
        top.addWidget(self.launch_combo)
        top.addWidget(self.new_button)
        top.addStretch(1)

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
        self.form.check("occupancy_auto", "Occupancy from calculator",
                        help_text="unchecked: give the active warps per SM yourself")
        self.form.line("occupancy_override", "Occupancy override",
                       lambda t: parse_float(t, "occupancy (warps per SM)", 0.0, 1024, strict_minimum=True),
                       help_text="active warps per SM")
        self.occupancy_label = QLabel()
        self.occupancy_label.setWordWrap(True)
        self.occupancy_label.setStyleSheet("color: #34495e;")
        fl.addRow("", self.occupancy_label)
        self.form.line("lam", "λ", lambda t: parse_float(t, "λ", 0.0, strict_minimum=True),
                       help_text="kernel scaling parameter (Gajger eq. 4.1; calibrate from a measurement)")
        il.addWidget(box)
        il.addWidget(self.message)  # a refused edit's reason, near the fields

        self.variables_box = QGroupBox("Loop variables")
        self.variables_layout = QFormLayout(self.variables_box)
        il.addWidget(self.variables_box)

        tbox = QGroupBox("Transfers (in sequence with the kernel)")
        tl = QVBoxLayout(tbox)
        self.transfer_table = QTableWidget(0, 3)
        self.transfer_table.setHorizontalHeaderLabels(["Direction", "Bytes", "Link"])
        self.transfer_table.horizontalHeaderItem(1).setToolTip(
            "bytes (1.6e9) or an expression of the data size N and the launch variables (4*N)")
        header = self.transfer_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Stretch)
        header.setSectionResizeMode(2, QHeaderView.Interactive)
        self.transfer_table.setColumnWidth(2, 150)
        self.transfer_table.verticalHeader().setVisible(False)
        self.transfer_table.setSelectionBehavior(QTableWidget.SelectRows)
        self.transfer_table.setMinimumHeight(110)
        tl.addWidget(self.transfer_table)
        row = QHBoxLayout()
        self.add_transfer_button = QPushButton("Add transfer")
        self.add_transfer_button.clicked.connect(lambda: self.add_transfer())
        self.remove_transfer_button = QPushButton("Remove")
        self.remove_transfer_button.clicked.connect(self._remove_selected_transfer)
        row.addWidget(self.add_transfer_button)
        row.addWidget(self.remove_transfer_button)
        row.addStretch(1)
        tl.addLayout(row)
        il.addWidget(tbox)
        il.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(inputs)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(440)

        # results
        results = QGroupBox("Prediction")
        self.results_layout = QGridLayout(results)
        self.results_layout.setColumnStretch(1, 1)
        self.result_labels: dict[str, QLabel] = {}
        rows = (("kernel_time", "Kernel time"), ("mode", "Mode"), ("latency_bound", "Latency bound"),
                ("occupancy", "Occupancy"), ("warps", "Warps launched"),
                ("warp_throughput", "Warp throughput"), ("cycles", "Cycles per warp"),
                ("knee", "Mode changes at"), ("transfers", "Transfers"), ("total", "Total"))
        for r, (key, title) in enumerate(rows):
            t = QLabel(title)
            t.setStyleSheet("color: #5f6368;")
            t.setAlignment(Qt.AlignTop | Qt.AlignLeft)
            v = QLabel("—")
            v.setWordWrap(True)
            v.setTextInteractionFlags(Qt.TextSelectableByMouse)
            v.setTextFormat(Qt.RichText)
            self.results_layout.addWidget(t, r, 0)
            self.results_layout.addWidget(v, r, 1)
            self.result_labels[key] = v
        self.result_message = message_label()
        self.results_layout.addWidget(self.result_message, len(rows), 0, 1, 2)
        self.results_layout.setRowStretch(len(rows) + 1, 1)

        self.sweep = SweepPanel(self)

        right = QSplitter(Qt.Vertical)
        right.addWidget(results)
        right.addWidget(self.sweep)
        right.setStretchFactor(1, 1)
        right.setSizes([300, 420])
        split = QSplitter(Qt.Horizontal)
        split.addWidget(scroll)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([450, 850])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(split, 1)

    def document_connections(self, document):
        return ((document.changed, self._on_changed), (document.refused, self._on_refused))

    def show_project(self) -> None:
        self.launch_id = None
        self.sweep.set_launch(None)  # another project: its launch ids mean other launches
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
        for w in (self.transfer_table, self.add_transfer_button, self.remove_transfer_button,
                  self.variables_box):
            w.setEnabled(enabled)
        for w in self.form.widgets.values():
            w.setEnabled(enabled)
        if launch is None:
            self.result = None
            self.error = ("No launch: add one with “New launch” (the system needs a GPU and the "
                          "project a kernel).")
            self._show_result(None, self.error)
            self._fill_variables_empty()
            self.transfer_table.setRowCount(0)
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
        self._fill_transfers(launch)
        self.evaluate()
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
        """Predict the launch (evaluate_launch) and show the numbers or the reason why not."""
        try:
            self.result = evaluate_launch(self.project, self.launch_id, self.document.gpu_spec,
                                          self.document.link_spec)
            self.error = ""
        except ModelError as exc:
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

    # -- results ---------------------------------------------------------------------------
    def _show_result(self, r, message: str) -> None:
        L = self.result_labels
        self._show_occupancy(r)
        if r is None:
            for v in L.values():
                v.setText("—")
            self.result_message.setText(message)
            self.result_message.setVisible(bool(message))
            return
        self.result_message.setVisible(False)
        p, k, tb = r.prediction, r.prediction.kernel, r.prediction.throughput
        L["kernel_time"].setText(f"<b>{fmt_time(k.time_s)}</b>  ({fmt_count(k.time_cycles)} cycles, λ = {k.lam:g})")
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
                name = RESOURCE_NAMES[res]
                cells.append(f"<b>{name} {v:.4g}</b>" if res == tb.binding else f"{name} {v:.4g}")
        L["cycles"].setText(" · ".join(cells) + f"  (binding: {RESOURCE_NAMES.get(tb.binding, tb.binding)})")
        L["knee"].setText(f"occupancy {k.knee_occupancy:.4g} warps/SM "
                          f"(latency-bound below it, throughput-bound above)")
        if p.transfers:
            lines = [f"{'host → device' if d == 'htod' else 'device → host'} {fmt_bytes(n)}: {fmt_time(t)}"
                     for (d, n), t in zip(p.transfers, p.transfer_times_s)]
            L["transfers"].setText("<br>".join(lines) + (f"<br><span style='color:#5f6368'>over {r.link.name}</span>"
                                                        if r.link else ""))
        else:
            L["transfers"].setText("none")
        L["total"].setText(f"<b>{fmt_time(p.total_time_s)}</b>")

    def _show_occupancy(self, r) -> None:
        launch = self.launch
        if r is None or launch is None:
            self.occupancy_label.setText("")
            return
        d = r.occupancy_detail
        if d is None:
            self.occupancy_label.setText(f"{r.occupancy_warps_per_sm:g} warps/SM (override)")
            return
        limits = ", ".join(LIMIT_NAMES.get(x, x) for x in d.limited_by)
        self.occupancy_label.setText(
            f"{d.active_warps_per_sm} warps/SM ({d.occupancy * 100:.0f} %), limited by {limits}; "
            f"{d.active_blocks_per_sm} blocks/SM")

    # -- variables and transfers -----------------------------------------------------------
    def _variable_names(self, launch) -> list[str]:
        names = set(launch.variables)
        graph = self.project.kernels.get(launch.kernel)
        if graph is not None:
            names |= set(graph.variables)
            try:
                names |= set(analyze(graph).variables)
            except ModelError:
                pass
        names.discard("N")
        return sorted(names)

    def _fill_variables(self, launch) -> None:
        names = self._variable_names(launch)
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
        for name, f in self._variable_fields.items():
            default = graph.variables.get(name) if graph is not None else None
            f.setPlaceholderText(f"kernel default: {fmt_number(default)}" if default is not None
                                 else "value needed")
            f.setToolTip("empty: the kernel's default value")
            if not f.hasFocus():
                f.setText(fmt_number(launch.variables.get(name)))
            clear_error(f)
        self.variables_box.setVisible(bool(names))

    def _fill_variables_empty(self) -> None:
        while self.variables_layout.rowCount():
            self.variables_layout.removeRow(0)
        self._variable_fields = {}
        self.variables_box.setVisible(False)

    def _fill_transfers(self, launch) -> None:
        table = self.transfer_table
        table.blockSignals(True)
        table.setRowCount(len(launch.transfers))
        links = [("(the GPU's host link)", None)]
        if launch.gpu:
            for c in self.project.connections_of(launch.gpu):
                links.append((c.label or c.link_name, c.id))
        for row, t in enumerate(launch.transfers):
            d = QComboBox()
            for text, value in DIRECTIONS:
                d.addItem(text, value)
            d.setCurrentIndex(0 if t.direction == "htod" else 1)
            d.activated.connect(lambda i, r=row, w=d: self._edit_transfer(r, direction=w.itemData(i)))
            size = QLineEdit(t.size)
            size.setObjectName(f"transfer_size_{row}")
            size.editingFinished.connect(lambda r=row, w=size: self._edit_transfer(r, size=w.text().strip()))
            link = QComboBox()
            for text, value in links:
                link.addItem(text, value)
            link.setCurrentIndex(max(link.findData(t.connection), 0) if t.connection else 0)
            link.activated.connect(lambda i, r=row, w=link: self._edit_transfer(r, connection=w.itemData(i)))
            table.setCellWidget(row, 0, d)
            table.setCellWidget(row, 1, size)
            table.setCellWidget(row, 2, link)
        table.blockSignals(False)

    # -- editing ---------------------------------------------------------------------------
    def _parse_size(self, text: str):
        mode = self.form.values.get("size_mode", "data")
        return parse_int(text, "data size N" if mode == "data" else "grid size", 1)

    def command_done(self) -> None:
        self.refresh()

    def update_launch(self, field: str | None = None, **changes) -> bool:
        """One undoable edit of the current launch; refused edits leave it unchanged."""
        launch = self.launch
        if launch is None:
            return False
        field = field or next(iter(changes))
        reason = self._feasibility(replace(launch, **changes))
        if reason:
            self.refuse(field, reason)
            return False
        label = field.replace("_", " ")
        return self.push(UpdateItem("launches", self.launch_id, text=f"edit {label}", **changes), field)

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

    def _feasibility(self, candidate: LaunchConfig) -> str:
        """Why the launch cannot run (checked before the edit is pushed), or ''."""
        try:
            candidate.checked()
        except ModelError:
            return ""  # the command refuses it with the model's message
        if candidate.occupancy_override is None and candidate.gpu in self.project.devices:
            try:
                gpu = self.document.gpu_spec(self.project.devices[candidate.gpu].device_name)
            except (ModelError, LookupError):
                return ""
            if gpu.compute_capability:
                from gpumodeler.core.occupancy import occupancy
                try:
                    occupancy(gpu.compute_capability, candidate.block_size, candidate.registers,
                              candidate.shared_mem)
                except ModelError as exc:
                    return str(exc)
        return ""

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
            reason = self._size_problem(changes["size"], launch)
            if reason:
                self.refuse(f"transfer_size_{row}", reason)
                return
        transfers = list(launch.transfers)
        transfers[row] = new
        self.update_launch(f"transfer_size_{row}" if "size" in changes else "transfers",
                           transfers=tuple(transfers))

    def _size_problem(self, text: str, launch) -> str:
        if not text:
            return "transfer size: give bytes (1.6e9) or an expression of N (4*N)"
        try:
            expr = parse(text)
        except ModelError as exc:
            return f"transfer size: {exc}"
        known = {"N"} | set(self._variable_names(launch))
        graph = self.project.kernels.get(launch.kernel)
        if graph is not None:
            known |= set(graph.variables)
        unknown = sorted(expr.variables - known)
        if unknown:
            return (f"transfer size {text!r}: unknown variable(s) {', '.join(unknown)}; use N (the data "
                    f"size) or the launch variables ({', '.join(sorted(known))})")
        return ""

    def add_transfer(self, direction: str = "htod", size: str | None = None) -> bool:
        launch = self.launch
        if launch is None:
            return False
        size = size or ("4*N" if launch.data_size is not None else "1e6")
        return self.update_launch("transfers", transfers=launch.transfers + (Transfer(direction, size),))

    def _remove_selected_transfer(self) -> None:
        launch = self.launch
        rows = sorted({i.row() for i in self.transfer_table.selectedIndexes()})
        row = rows[0] if rows else (len(launch.transfers) - 1 if launch and launch.transfers else None)
        if launch is None or row is None:
            return
        transfers = tuple(t for i, t in enumerate(launch.transfers) if i != row)
        self.update_launch("transfers", transfers=transfers)

    def new_launch(self) -> bool:
        lid = self.project.new_id("l")
        gpus = self.project.gpus()
        kernel = next(iter(self.project.kernels), None)
        launch = LaunchConfig(lid, name=f"launch {len(self.project.launches) + 1}",
                              gpu=gpus[0].id if gpus else None, kernel=kernel, block_size=256,
                              data_size=1_000_000)
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
        elif event.startswith(("devices_", "connections_", "kernels_", "kernel_edited")):
            self._schedule_refresh()
