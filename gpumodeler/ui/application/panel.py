"""The Application tab: an application's steps (kernels, copies, syncs on streams), edited
through undoable commands, and its timeline as a Gantt chart updated live.

Steps are added from the system's GPUs and links and the project's launches, reordered by
drag (a step may then not depend on a later one: the model refuses it and the order is put
back), given a stream and dependencies. The simulation (core.application) runs on every
change: here for applications of a few hundred steps (milliseconds), in a worker from
:data:`BACKGROUND_FROM` steps (an imported trace: seconds), on a snapshot of the project
with the catalog's answers looked up beforehand (the catalog is the GUI thread's); the tab
says "simulating…" meanwhile, and a result the project changed after is dropped.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, QRunnable, Qt, QTimer, Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QFormLayout, QListWidgetItem, QWidget

from gpumodeler.core.application.app import Application, Step, data_parallel_steps
from gpumodeler.core.commands import AddItem, RemoveItem, UpdateItem
from gpumodeler.core.errors import ModelError
from gpumodeler.ui.application.layout import build_panel
from gpumodeler.ui.application.split_dialog import SplitDialog
from gpumodeler.ui.binding import DocumentBinding, current_or_first
from gpumodeler.core.units_format import format_time
from gpumodeler.report.application import path_text
from gpumodeler.ui.application.fields import (field_message, merge_device_notes, parse_variables,
                                               size_text, variables_text)
from gpumodeler.ui.logs import bug
from gpumodeler.ui.units import QuantityError, number_text, parse_exact_number, parse_quantity
from gpumodeler.ui.workers import in_background

LIVE_DELAY_MS = 30
#: applications of this many steps or more are simulated in a worker
BACKGROUND_FROM = 2000


def _lookups(document) -> dict:
    return document.lookups()


class _NotLookedUp(Exception):
    """The simulation asked the catalog something not looked up before it began."""


class _Answers:
    """The catalog's answers to what a simulation of ``app`` in ``project`` will ask
    (GPUs, links, calibrations, latency tables), looked up here in the GUI thread; its
    :meth:`lookups` answer from them in a worker, and raise :class:`_NotLookedUp` for
    anything else (the simulation is then run in the GUI thread)."""

    def __init__(self, lookups: dict, project, app):
        from gpumodeler.core.kernel.latency_tables import TABLES
        from gpumodeler.core.pipeline import transfer_calibration
        self._lookups = lookups
        self._answers: dict = {}
        gpus = {d.device_name for d in project.devices.values() if d.kind == "gpu"}
        gpus |= {s.traced_gpu for s in app.steps if s.traced_gpu}
        tables = set()
        for name in gpus:
            spec = self._ask("gpu_lookup", name)
            tables.add(getattr(spec, "latency_table", None))
        for conn in project.connections.values():
            label = transfer_calibration(conn)
            if label is None:
                self._ask("link_lookup", conn.link_name)
            else:
                self._ask("calibration_lookup", conn.link_name, label)
        kernels = {la.kernel for la in project.launches.values()}
        tables |= {g.latency_table for k, g in project.kernels.items() if k in kernels}
        for key in tables - {None, ""} - set(TABLES):
            self._ask("table_lookup", key)

    def _ask(self, kind: str, *key):
        lookup = self._lookups.get(kind)
        if lookup is None:
            return None
        try:
            answer = lookup(*key)
        except ModelError as exc:
            self._answers[kind, key] = (False, exc)
            return None
        except Exception:   # asked again in the GUI thread, where it is reported as before
            return None
        self._answers[kind, key] = (True, answer)
        return answer

    def lookups(self) -> dict:
        def answering(kind):
            def lookup(*key):
                found = self._answers.get((kind, key))
                if found is None:
                    raise _NotLookedUp
                if found[0]:
                    return found[1]
                raise found[1]
            return lookup
        return {kind: answering(kind) for kind in self._lookups}


def _snapshot(project, app):
    """What a simulation of ``app`` reads of ``project``, apart from it: its collections
    copied (their values are frozen) and the kernel graphs its launches use (the only
    mutable values) copied too."""
    from gpumodeler.core.project import Project
    copy = Project(project.name)
    for collection in ("devices", "connections", "launches", "sweeps", "measurements",
                       "calibrations", "history", "applications"):
        setattr(copy, collection, dict(getattr(project, collection)))
    used = {la.kernel for la in project.launches.values()}
    copy.kernels = {k: g.copy() for k, g in project.kernels.items() if k in used}
    return copy


_ALIVE: set = set()  # the jobs started and not yet reported: the pool holds no reference


class _SimulationSignals(QObject):
    # generation, result dict or None, error message, whether the catalog was asked
    # something not looked up beforehand
    finished = Signal(int, object, str, bool)


class _SimulationJob(QRunnable):
    """One simulation of a snapshot, in the thread pool. Keep a reference until it reports."""

    def __init__(self, generation: int, project, app_id: str, lookups: dict):
        super().__init__()
        self.setAutoDelete(False)
        self.generation = generation
        self.args = (project, app_id, lookups)
        self.signals = _SimulationSignals()

    def run(self) -> None:
        from gpumodeler.service.application import run_application
        result, error, missed = None, "", False
        try:
            result = run_application(*self.args)
        except _NotLookedUp:
            missed = True
        except ModelError as exc:
            error = field_message(exc)
        except Exception as exc:  # a bug must not take the application down: report it
            bug("the application's simulation")
            error = f"the simulation failed unexpectedly ({type(exc).__name__}: {exc})"
        try:
            self.signals.finished.emit(self.generation, result, error, missed)
        except RuntimeError:  # the application is closing: no one is left to show it to
            pass


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
        self._generation = 0   # of the simulation last asked for
        self._jobs: dict = {}  # generation -> its job, running in the background
        self._timer = QTimer(self, singleShot=True, interval=LIVE_DELAY_MS)
        self._timer.timeout.connect(self.simulate)
        self._build()
        self.set_document(document)

    # ---- layout
    def _build(self) -> None:
        build_panel(self)

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
            self.message.setText(field_message(message))
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
            self.host_power.setText("" if app.host_power_w is None
                                    else f"{number_text(app.host_power_w)} W")
            self.variables_edit.setText(variables_text(app.variables))
            # (items made by Qt, not one Python item each: 10^5 steps of a trace were 1.5 s
            # to add and 1.6 s to clear again on the next change, the GUI frozen)
            self.steps.addItems([self._step_text(s) for s in app.steps])
            model, role = self.steps.model(), Qt.ItemDataRole.UserRole
            for row, s in enumerate(app.steps):
                model.setData(model.index(row), s.id, role)
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
        bad = ((s.src and s.src not in devices) or (s.dst and s.dst not in devices)
               or (s.gpu and s.gpu not in devices))
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
        self.fraction_edit.setText(number_text(step.fraction))
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

    def set_app(self, text="edit application", **changes) -> bool:
        """Change the shown application's fields ``changes`` as one undoable command; False when nothing changed."""
        if self._filling or self.app_id is None:
            return False
        app = self.application
        if all(getattr(app, k) == v for k, v in changes.items()):
            return True
        return self.push(UpdateItem("applications", self.app_id, text=text, **changes))

    def host_power_edited(self) -> None:
        """The host power field was edited: store it on the application (undoable)."""
        text = self.host_power.text().strip()
        if not text:
            self.set_app(text="clear host power", host_power_w=None)
            return
        try:
            value = parse_quantity(text, "W")
        except QuantityError as exc:
            self.message.setText(f"Host power: {exc}")
            return
        self.set_app(text="set host power", host_power_w=value)

    def variables_edited(self) -> None:
        """The step's variables field was edited: store them (undoable)."""
        try:
            values = parse_variables(self.variables_edit.text())
        except ValueError as exc:
            self.message.setText(str(exc))
            return
        if self.application is not None and values == self.application.variables:
            self.variables_edit.setText(variables_text(values))   # 16Mi shown as its digits
            return
        self.set_app(text="set application variables", variables=values)

    def size_edited(self) -> None:
        """The step's size field was edited: store it (undoable)."""
        size = size_text(self.size_edit.text())
        self.size_edit.setText(size)
        self.set_step(size=size)

    def _steps_changed(self, steps, text) -> bool:
        return self.set_app(text=text, steps=tuple(steps))

    def set_step(self, **changes) -> bool:
        """Change the current step's fields ``changes`` as one undoable command; False when nothing changed."""
        step = self.current_step()
        if self._filling or step is None:
            return False
        if all(getattr(step, k) == v for k, v in changes.items()):
            return True
        name = ", ".join(changes)
        steps = [replace(s, **changes) if s.id == step.id else s for s in self.application.steps]
        return self._steps_changed(steps, f"set {name} of step {step.label}")

    def fraction_edited(self) -> None:
        """The step's fraction field was edited: store it (undoable)."""
        try:
            value = float(parse_exact_number(self.fraction_edit.text()))
        except QuantityError as exc:
            self.message.setText(f"Share must be a number in (0, 1]: {exc}")
            return
        self.set_step(fraction=value)

    def after_changed(self, _item) -> None:
        """The step list's "after" checkboxes changed: the step waits for the ones ticked."""
        chosen = tuple(self.after_list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.after_list.count())
                       if self.after_list.item(i).checkState() == Qt.CheckState.Checked)
        self.set_step(after=chosen)

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

    def rows_moved(self, *_args) -> None:
        """The step list was reordered by dragging: store the new order (undoable)."""
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
            self.message.setText(field_message(exc))
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

    @property
    def simulating(self) -> bool:
        """A simulation runs in the background whose result is still to be shown."""
        return self._generation in self._jobs

    def simulate(self) -> None:
        """Simulate the shown application: here, or in a worker from
        :data:`BACKGROUND_FROM` steps (the result is shown when it comes, unless another
        simulation was asked for since)."""
        self._generation += 1
        app = self.application
        if app is not None and len(app.steps) >= BACKGROUND_FROM:
            answers = _Answers(_lookups(self.document), self.project, app)
            job = _SimulationJob(self._generation, _snapshot(self.project, app), app.id,
                                 answers.lookups())
            job.signals.finished.connect(self._simulated_in_background)
            self._jobs[self._generation] = job
            _ALIVE.add(job)  # until it reports (also if this panel is gone by then)
            self.summary.setStyleSheet("color: #5f6368")
            self.summary.setText(f"simulating… ({len(app.steps)} steps)")
            in_background(job)
            return
        self._simulate_here()

    def _simulated_in_background(self, generation: int, result, error: str,
                                 missed: bool) -> None:
        _ALIVE.discard(self._jobs.pop(generation, None))
        if generation != self._generation:
            return   # the project changed since: a newer simulation is on its way
        if missed:   # the catalog was asked something unforeseen: ask it here
            self._simulate_here()
            return
        self._show(result, error)

    def _simulate_here(self) -> None:
        from gpumodeler.service.application import run_application
        result, error = None, ""
        app = self.application
        if app is not None and app.steps:
            try:
                result = run_application(self.project, app.id, _lookups(self.document))
            except ModelError as exc:
                error = field_message(exc)
        self._show(result, error)

    def _show(self, result: dict | None, error: str) -> None:
        self.result, self.error = result, error
        app = self.application
        self.chart.show_result(self.result)
        self.groups.show_result(self.result)
        if self.result:
            r = self.result
            energy = ("energy unknown: " + "; ".join(merge_device_notes(r["energy_unknown"]))
                      if r["energy_j"] is None
                      else f"energy {r['energy_j']:.4g} J (energy-delay {r['energy_delay_js']:.4g} J·s; "
                           f"{r['energy_bound']})")
            self.summary.setStyleSheet("")
            # one line per note that differs in more than its device: four GPUs with the same
            # unknown take one line, not four (the chart keeps the height)
            measured = ("" if r.get("measured_makespan_s") is None
                        else f" (measured {format_time(r['measured_makespan_s'], 6)})")
            self.summary.setText(f"makespan {format_time(r['makespan_s'], 6)}{measured} · critical path "
                                 f"{path_text(r['critical_path'])} · {energy}"
                                 + "".join(f"<br>note: {n}" for n in merge_device_notes(r["notes"])))
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

    def export_dialog(self, kind: str) -> None:
        """Ask for a file and export the timeline as ``kind`` (png, svg or csv)."""
        path, _ = QFileDialog.getSaveFileName(self, f"Export timeline as {kind.upper()}", f"timeline.{kind}",
                                              f"{kind.upper()} (*.{kind})")
        if path:
            self.export(path, kind)

    def app_chosen(self, index: int) -> None:
        """The application combo box chose another application: show it."""
        if self._filling or index < 0:
            return
        self.app_id = self.app_combo.itemData(index)
        self.step_id = None
        self._fill()
        self.schedule()

    def step_chosen(self, current, _previous) -> None:
        """Another step was selected in the list: fill the step form."""
        if self._filling or current is None:
            return
        self.step_id = current.data(Qt.ItemDataRole.UserRole)
        self._filling = True
        try:
            self._fill_form()
        finally:
            self._filling = False

