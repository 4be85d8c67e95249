"""The Application tab: an application's steps (kernels, copies, syncs on streams), edited
through undoable commands, and its timeline as a Gantt chart updated live.

Steps are added from the system's GPUs and links and the project's launches, reordered by
drag (a step may then not depend on a later one: the model refuses it and the order is put
back), given a stream and dependencies. The simulation (core.application) runs on every
change; it takes milliseconds for applications of a few hundred steps, so it runs here.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDialog, QDialogButtonBox,
                               QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QPushButton, QSplitter, QVBoxLayout, QWidget)

from gpumodeler.core.application.app import Application, Step, data_parallel_steps
from gpumodeler.core.application.timeline import POLICIES
from gpumodeler.core.commands import AddItem, RemoveItem, UpdateItem
from gpumodeler.core.errors import ModelError
from gpumodeler.ui.application.gantt import GanttChart
from gpumodeler.ui.binding import DocumentBinding, current_or_first

LIVE_DELAY_MS = 30


def _lookups(document) -> dict:
    return {"gpu_lookup": document.gpu_spec, "link_lookup": document.link_spec,
            "table_lookup": document.latency_table,
            "calibration_lookup": document.calibrated_link_spec}


class ApplicationPanel(DocumentBinding, QWidget):
    #: a simulation finished: (result dict or None, error message or "")
    simulated = Signal(object, str)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.app_id: str | None = None
        self.step_id: str | None = None
        self.result: dict | None = None
        self.error = ""
        self._filling = False
        self._timer = QTimer(self, singleShot=True, interval=LIVE_DELAY_MS)
        self._timer.timeout.connect(self.simulate)
        self._build()
        self.set_document(document)

    # ---- layout
    def _build(self) -> None:
        top = QHBoxLayout()
        self.app_combo = QComboBox(toolTip="The application shown (a project can hold several)")
        self.app_combo.currentIndexChanged.connect(self._app_chosen)
        self.new_app_button = QPushButton("New application", toolTip="Add an empty application")
        self.new_app_button.clicked.connect(self.new_application)
        self.delete_app_button = QPushButton("Delete", toolTip="Delete this application (undoable)")
        self.delete_app_button.clicked.connect(self.delete_application)
        self.policy_combo = QComboBox(toolTip="in-order: each engine takes its steps in program order "
                                              "(monotone); greedy: a ready step may overtake a waiting one")
        self.policy_combo.addItems(POLICIES)
        self.policy_combo.currentTextChanged.connect(lambda t: self._set_app(policy=t))
        self.host_power = QLineEdit(placeholderText="host power W (optional)",
                                    toolTip="The host's power while the application runs, for the energy")
        self.host_power.editingFinished.connect(self._host_power_edited)
        for w in (QLabel("Application"), self.app_combo, self.new_app_button, self.delete_app_button,
                  QLabel("Engine queues"), self.policy_combo, self.host_power):
            top.addWidget(w)
        top.addStretch(1)

        self.steps = QListWidget(toolTip="Steps in program order; drag to reorder")
        self.steps.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.steps.model().rowsMoved.connect(self._rows_moved)
        self.steps.currentItemChanged.connect(self._step_chosen)
        buttons = QHBoxLayout()
        self.add_kernel_button = QPushButton("+ Kernel", toolTip="Add a kernel step (a launch of the project)")
        self.add_kernel_button.clicked.connect(lambda: self.add_step("kernel"))
        self.add_copy_button = QPushButton("+ Copy", toolTip="Add a copy between two devices of the system")
        self.add_copy_button.clicked.connect(lambda: self.add_step("copy"))
        self.add_sync_button = QPushButton("+ Sync", toolTip="Add a synchronisation")
        self.add_sync_button.clicked.connect(lambda: self.add_step("sync"))
        self.split_button = QPushButton("Split launch…", toolTip="Split a launch over several GPUs "
                                        "with scatter and gather copies")
        self.split_button.clicked.connect(self.split_dialog)
        self.remove_button = QPushButton("Remove", toolTip="Remove the selected step")
        self.remove_button.clicked.connect(self.remove_step)
        for b in (self.add_kernel_button, self.add_copy_button, self.add_sync_button, self.split_button,
                  self.remove_button):
            buttons.addWidget(b)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.steps, 1)
        lv.addLayout(buttons)

        self.form_widget = QWidget()
        self.form = QFormLayout(self.form_widget)
        self.name_edit = QLineEdit(toolTip="The step's name")
        self.name_edit.editingFinished.connect(lambda: self._set_step(name=self.name_edit.text()))
        self.stream_edit = QLineEdit(toolTip="Steps of one stream run in order")
        self.stream_edit.editingFinished.connect(lambda: self._set_step(stream=self.stream_edit.text().strip() or "0"))
        self.launch_combo = QComboBox(toolTip="The launch this kernel step runs")
        self.launch_combo.activated.connect(lambda _i: self._set_step(launch=self.launch_combo.currentData()))
        self.gpu_combo = QComboBox(toolTip="The GPU it runs on (default: the launch's)")
        self.gpu_combo.activated.connect(lambda _i: self._set_step(gpu=self.gpu_combo.currentData()))
        self.fraction_edit = QLineEdit(toolTip="Share of the launch's data or grid, 0 < share <= 1")
        self.fraction_edit.editingFinished.connect(self._fraction_edited)
        self.concurrent_check = QCheckBox("runs concurrently with other kernels of its GPU",
                                          toolTip="Checked: this kernel may overlap other kernels "
                                                  "on the same GPU (separate streams)")
        self.concurrent_check.toggled.connect(lambda on: self._set_step(concurrent=on))
        self.src_combo = QComboBox(toolTip="Copy from")
        self.src_combo.activated.connect(lambda _i: self._set_step(src=self.src_combo.currentData()))
        self.dst_combo = QComboBox(toolTip="Copy to")
        self.dst_combo.activated.connect(lambda _i: self._set_step(dst=self.dst_combo.currentData()))
        self.size_edit = QLineEdit(toolTip="Bytes, or an expression of the application's variables (4*N)")
        self.size_edit.editingFinished.connect(lambda: self._set_step(size=self.size_edit.text().strip()))
        self.after_list = QListWidget(toolTip="Earlier steps this one waits for (besides its stream)")
        self.after_list.setMaximumHeight(110)
        self.after_list.itemChanged.connect(self._after_changed)
        self.variables_edit = QLineEdit(toolTip="The application's variables, e.g. N=4e8, a=128")
        self.variables_edit.editingFinished.connect(self._variables_edited)
        self.form.addRow("Variables", self.variables_edit)
        self.form.addRow("Name", self.name_edit)
        self.form.addRow("Stream", self.stream_edit)
        self.form.addRow("Launch", self.launch_combo)
        self.form.addRow("GPU", self.gpu_combo)
        self.form.addRow("Share", self.fraction_edit)
        self.form.addRow("", self.concurrent_check)
        self.form.addRow("From", self.src_combo)
        self.form.addRow("To", self.dst_combo)
        self.form.addRow("Size", self.size_edit)
        self.form.addRow("Waits for", self.after_list)
        self.message = QLabel(wordWrap=True)
        self.message.setStyleSheet("color: #c62828")
        self.form.addRow(self.message)

        self.chart = GanttChart()
        self.summary = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        export = QHBoxLayout()
        for kind in ("PNG", "SVG", "CSV"):
            b = QPushButton(f"Export {kind}…", toolTip=f"Save the timeline as {kind}")
            b.clicked.connect(lambda _c=False, k=kind.lower(): self._export_dialog(k))
            export.addWidget(b)
        export.addStretch(1)
        bottom = QWidget()
        bv = QVBoxLayout(bottom)
        bv.setContentsMargins(0, 0, 0, 0)
        bv.addWidget(self.chart, 1)
        bv.addWidget(self.summary)
        bv.addLayout(export)

        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(left)
        upper.addWidget(self.form_widget)
        upper.setStretchFactor(0, 1)
        upper.setStretchFactor(1, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(upper)
        split.addWidget(bottom)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    # ---- document
    def document_connections(self, document):
        return ((document.changed, self._changed), (document.refused, self._refused))

    def show_project(self) -> None:
        self.app_id = current_or_first(self.project.applications, self.app_id)
        self._fill()
        self.schedule()

    def _changed(self, event, payload) -> None:
        self.app_id = current_or_first(self.project.applications, self.app_id)
        self._fill()
        self.schedule()

    def _refused(self, message, item) -> None:
        if self.pushing:
            self.message.setText(message)
            self._fill()  # put back what the model refused (a drag, a field)

    def command_done(self) -> None:
        self.message.setText("")

    @property
    def application(self) -> Application | None:
        return self.project.applications.get(self.app_id) if self.app_id else None

    # ---- filling the widgets from the model
    def _fill(self) -> None:
        self._filling = True
        try:
            self.app_combo.clear()
            for a in self.project.applications.values():
                self.app_combo.addItem(f"{a.name}  ({a.id})", a.id)
            self.app_combo.setCurrentIndex(self.app_combo.findData(self.app_id))
            app = self.application
            for w in (self.delete_app_button, self.policy_combo, self.host_power, self.steps,
                      self.add_kernel_button, self.add_copy_button, self.add_sync_button,
                      self.split_button, self.remove_button, self.form_widget):
                w.setEnabled(app is not None)
            self.steps.clear()
            if app is None:
                return
            self.policy_combo.setCurrentText(app.policy)
            self.host_power.setText("" if app.host_power_w is None else f"{app.host_power_w:g}")
            self.variables_edit.setText(", ".join(f"{k}={v:g}" for k, v in app.variables.items()))
            for s in app.steps:
                item = QListWidgetItem(self._step_text(s))
                item.setData(Qt.ItemDataRole.UserRole, s.id)
                self.steps.addItem(item)
            ids = [s.id for s in app.steps]
            self.step_id = self.step_id if self.step_id in ids else (ids[0] if ids else None)
            if self.step_id:
                self.steps.setCurrentRow(ids.index(self.step_id))
            self._fill_form()
        finally:
            self._filling = False

    def _step_text(self, s: Step) -> str:
        devices = self.project.devices
        if s.kind == "kernel":
            launch = self.project.launches.get(s.launch)
            gpu = s.gpu or (launch.gpu if launch else None)
            what = f"kernel {launch.name if launch else '(no launch)'} on {gpu or '?'}"
            if s.fraction != 1:
                what += f" ×{s.fraction:.3g}"
        elif s.kind == "copy":
            what = f"copy {s.size} B {s.src or '?'} → {s.dst or '?'}"
        else:
            what = "sync"
        bad = any(d and d not in devices for d in (s.src, s.dst, s.gpu))
        return f"[{s.stream}] {s.label}: {what}" + ("  ⚠ missing device" if bad else "")

    def _fill_form(self) -> None:
        step = self.current_step()
        kind = step.kind if step else None
        rows = {"Launch": kind == "kernel", "GPU": kind == "kernel", "Share": kind == "kernel",
                "From": kind == "copy", "To": kind == "copy", "Size": kind == "copy"}
        for label, visible in rows.items():
            for w in self._row_widgets(label):
                w.setVisible(visible)
        self.concurrent_check.setVisible(kind == "kernel")
        for w in (self.name_edit, self.stream_edit, self.after_list):
            w.setEnabled(step is not None)
        if step is None:
            return
        self.name_edit.setText(step.name)
        self.stream_edit.setText(step.stream)
        self._fill_combo(self.launch_combo, [(f"{la.name} ({la.id})", la.id) for la in self.project.launches.values()],
                         step.launch)
        gpus = [("(the launch's)", None)] + [(f"{d.label or d.device_name} ({d.id})", d.id) for d in self.project.gpus()]
        self._fill_combo(self.gpu_combo, gpus, step.gpu)
        self.fraction_edit.setText(f"{step.fraction:g}")
        self.concurrent_check.blockSignals(True)
        self.concurrent_check.setChecked(step.concurrent)
        self.concurrent_check.blockSignals(False)
        devices = [(f"{d.label or d.device_name} ({d.id})", d.id) for d in self.project.devices.values()]
        self._fill_combo(self.src_combo, devices, step.src)
        self._fill_combo(self.dst_combo, devices, step.dst)
        self.size_edit.setText(step.size)
        self.after_list.blockSignals(True)
        self.after_list.clear()
        for s in self.application.steps:
            if s.id == step.id:
                break
            item = QListWidgetItem(s.label)
            item.setData(Qt.ItemDataRole.UserRole, s.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if s.id in step.after else Qt.CheckState.Unchecked)
            self.after_list.addItem(item)
        self.after_list.blockSignals(False)

    def _row_widgets(self, label):
        for i in range(self.form.rowCount()):
            lab = self.form.itemAt(i, QFormLayout.ItemRole.LabelRole)
            if lab and lab.widget() and lab.widget().text() == label:
                field = self.form.itemAt(i, QFormLayout.ItemRole.FieldRole)
                return [lab.widget(), field.widget()]
        return []

    @staticmethod
    def _fill_combo(combo, choices, current) -> None:
        combo.blockSignals(True)
        combo.clear()
        for text, data in choices:
            combo.addItem(text, data)
        index = combo.findData(current)
        if index < 0 and current is not None:
            combo.addItem(f"{current} (not in the project)", current)
            index = combo.count() - 1
        combo.setCurrentIndex(index)
        combo.blockSignals(False)

    def current_step(self) -> Step | None:
        app = self.application
        if app is None or self.step_id is None:
            return None
        return next((s for s in app.steps if s.id == self.step_id), None)

    # ---- commands
    def new_application(self) -> bool:
        app_id = self.project.new_id("app")
        ok = self.push(AddItem("applications", Application(app_id, f"application {app_id[3:]}"),
                               text="add application"))
        if ok:
            self.app_id = app_id
            self._fill()
        return ok

    def delete_application(self) -> bool:
        if self.app_id is None:
            return False
        return self.push(RemoveItem("applications", self.app_id, text=f"delete application {self.application.name}"))

    def _set_app(self, text="edit application", **changes) -> bool:
        if self._filling or self.app_id is None:
            return False
        app = self.application
        if all(getattr(app, k) == v for k, v in changes.items()):
            return True
        return self.push(UpdateItem("applications", self.app_id, text=text, **changes))

    def _host_power_edited(self) -> None:
        text = self.host_power.text().strip()
        if not text:
            self._set_app(text="clear host power", host_power_w=None)
            return
        try:
            value = float(text.removesuffix("W").strip())
        except ValueError:
            self.message.setText(f"host power must be a number of W, got {text!r}")
            return
        self._set_app(text="set host power", host_power_w=value)

    def _variables_edited(self) -> None:
        from gpumodeler.core.kernel.expressions import parse
        values = {}
        for part in filter(None, (p.strip() for p in self.variables_edit.text().split(","))):
            name, eq, expr = part.partition("=")
            if not eq or not name.strip().isidentifier():
                self.message.setText(f"variables are name=value pairs separated by commas, got {part!r}")
                return
            try:
                values[name.strip()] = float(parse(expr.strip()).evaluate({}))
            except (ModelError, ValueError, TypeError) as exc:
                self.message.setText(f"variable {name.strip()}: {exc}")
                return
        self._set_app(text="set application variables", variables=values)

    def _steps_changed(self, steps, text) -> bool:
        return self._set_app(text=text, steps=tuple(steps))

    def _set_step(self, **changes) -> bool:
        step = self.current_step()
        if self._filling or step is None:
            return False
        if all(getattr(step, k) == v for k, v in changes.items()):
            return True
        name = ", ".join(changes)
        steps = [replace(s, **changes) if s.id == step.id else s for s in self.application.steps]
        return self._steps_changed(steps, f"set {name} of step {step.label}")

    def _fraction_edited(self) -> None:
        try:
            value = float(self.fraction_edit.text())
        except ValueError:
            self.message.setText(f"the share must be a number in (0, 1], got {self.fraction_edit.text()!r}")
            return
        self._set_step(fraction=value)

    def _after_changed(self, _item) -> None:
        chosen = tuple(self.after_list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.after_list.count())
                       if self.after_list.item(i).checkState() == Qt.CheckState.Checked)
        self._set_step(after=chosen)

    def add_step(self, kind: str) -> bool:
        app = self.application
        if app is None:
            return False
        taken = {s.id for s in app.steps}
        n = len(app.steps) + 1
        while f"s{n}" in taken:
            n += 1
        sid = f"s{n}"
        gpus = self.project.gpus()
        hosts = [d for d in self.project.devices.values() if d.kind == "host"]
        if kind == "kernel":
            launch = next(iter(self.project.launches), None)
            step = Step(sid, "kernel", launch=launch)
        elif kind == "copy":
            step = Step(sid, "copy", src=hosts[0].id if hosts else None, dst=gpus[0].id if gpus else None,
                        size="N" if "N" in app.variables else "0")
        else:
            step = Step(sid, "sync")
        ok = self._steps_changed(list(app.steps) + [step], f"add {kind} step")
        if ok:
            self.step_id = sid
            self._fill()
        return ok

    def remove_step(self) -> bool:
        step = self.current_step()
        if step is None:
            return False
        steps = [replace(s, after=tuple(d for d in s.after if d != step.id))
                 for s in self.application.steps if s.id != step.id]
        return self._steps_changed(steps, f"remove step {step.label}")

    def move_step(self, step_id: str, row: int) -> bool:
        """Move a step to position ``row`` (what a drag does)."""
        steps = list(self.application.steps)
        moving = next(s for s in steps if s.id == step_id)
        steps.remove(moving)
        steps.insert(row, moving)
        return self._steps_changed(steps, f"move step {moving.label}")

    def _rows_moved(self, *_args) -> None:
        if self._filling:
            return
        order = [self.steps.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.steps.count())]
        by_id = {s.id: s for s in self.application.steps}
        QTimer.singleShot(0, lambda: self._steps_changed([by_id[i] for i in order], "reorder steps"))

    def split_launch(self, launch_id: str, gpus, host: str, split: str = "even", scatter: str = "0",
                     gather: str = "0") -> bool:
        app = self.application
        if app is None:
            return False
        try:
            prefix = "dp"
            k = 1
            while any(s.id.startswith(f"{prefix}{k}") for s in app.steps):
                k += 1
            new = data_parallel_steps(self.project, launch_id, gpus, host=host, split=split,
                                      scatter_size=scatter, gather_size=gather, prefix=f"{prefix}{k}",
                                      variables=dict(app.variables) or None, **_lookups(self.document))
        except ModelError as exc:
            self.message.setText(str(exc))
            return False
        return self._steps_changed(list(app.steps) + list(new), f"split launch over {len(gpus)} GPUs")

    def split_dialog(self) -> None:
        dialog = SplitDialog(self.project, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.split_launch(**dialog.values())

    # ---- simulation
    def schedule(self) -> None:
        """Re-simulate soon; while the tab is hidden, only note that the result is stale (an
        edit in another tab costs nothing here until the Application tab is shown)."""
        if self.isVisible():
            self._timer.start()
        else:
            self._stale = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if getattr(self, "_stale", True):
            self._stale = False
            self._timer.start()

    def simulate(self) -> None:
        from gpumodeler.report.application import run_application
        self.result, self.error = None, ""
        app = self.application
        if app is not None and app.steps:
            try:
                self.result = run_application(self.project, app.id, _lookups(self.document))
            except ModelError as exc:
                self.error = str(exc)
        self.chart.show_result(self.result)
        if self.result:
            r = self.result
            energy = ("energy unknown: " + "; ".join(r["energy_unknown"]) if r["energy_j"] is None
                      else f"energy {r['energy_j']:.4g} J (energy-delay {r['energy_delay_js']:.4g} J·s)")
            self.summary.setStyleSheet("")
            self.summary.setText(f"makespan {r['makespan_s']:.6g} s · critical path "
                                 f"{' → '.join(r['critical_path'])} · {energy}"
                                 + "".join(f"<br>note: {n}" for n in r["notes"]))
        elif self.error:
            self.summary.setStyleSheet("color: #c62828")
            self.summary.setText(f"cannot simulate: {self.error}")
        else:
            self.summary.setStyleSheet("")
            self.summary.setText("add steps to see the timeline" if app else
                                 "no application: click New application")
        self.simulated.emit(self.result, self.error)

    def busy_fractions(self) -> dict:
        """Device id -> busy fraction of its compute engine in the last run (System tab)."""
        if not self.result:
            return {}
        out = {}
        for engine, f in self.result["busy_fraction"].items():
            device, _, what = engine.partition("/")
            if what == "compute":
                out[device] = f
        return out

    # ---- export
    def export(self, path: str, kind: str) -> bool:
        try:
            {"png": self.chart.export_png, "svg": self.chart.export_svg, "csv": self.chart.export_csv}[kind](path)
        except (ValueError, OSError, ModelError) as exc:
            self.message.setText(f"cannot export: {exc}")
            return False
        return True

    def _export_dialog(self, kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, f"Export timeline as {kind.upper()}", f"timeline.{kind}",
                                              f"{kind.upper()} (*.{kind})")
        if path:
            self.export(path, kind)

    def _app_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        self.app_id = self.app_combo.itemData(index)
        self.step_id = None
        self._fill()
        self.schedule()

    def _step_chosen(self, current, _previous) -> None:
        if self._filling or current is None:
            return
        self.step_id = current.data(Qt.ItemDataRole.UserRole)
        self._filling = True
        try:
            self._fill_form()
        finally:
            self._filling = False


class SplitDialog(QDialog):
    """Choose a launch, GPUs, the host, the split and the scatter/gather sizes."""

    def __init__(self, project, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Split a launch over GPUs")
        form = QFormLayout(self)
        self.launch = QComboBox()
        for la in project.launches.values():
            self.launch.addItem(f"{la.name} ({la.id})", la.id)
        self.gpus = QListWidget()
        for d in project.gpus():
            item = QListWidgetItem(f"{d.label or d.device_name} ({d.id})")
            item.setData(Qt.ItemDataRole.UserRole, d.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.gpus.addItem(item)
        self.host = QComboBox()
        for d in project.devices.values():
            if d.kind == "host":
                self.host.addItem(f"{d.label or d.device_name} ({d.id})", d.id)
        self.split = QComboBox()
        self.split.addItems(("even", "proportional"))
        self.scatter = QLineEdit("0", toolTip="Bytes copied to the GPUs in all (an expression of the variables)")
        self.gather = QLineEdit("0", toolTip="Bytes copied back in all")
        for label, w in (("Launch", self.launch), ("GPUs", self.gpus), ("Host", self.host),
                         ("Split", self.split), ("Scatter bytes", self.scatter), ("Gather bytes", self.gather)):
            form.addRow(label, w)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        form.addRow(box)

    def values(self) -> dict:
        gpus = [self.gpus.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.gpus.count())
                if self.gpus.item(i).checkState() == Qt.CheckState.Checked]
        return {"launch_id": self.launch.currentData(), "gpus": gpus, "host": self.host.currentData(),
                "split": self.split.currentText(), "scatter": self.scatter.text(), "gather": self.gather.text()}
