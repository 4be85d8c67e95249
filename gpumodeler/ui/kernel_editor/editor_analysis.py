"""The kernel editor's analysis: the latency bound, edge latencies, critical path and errors
of the kernel shown (:class:`EditorAnalysis`, a part of
:class:`~gpumodeler.ui.kernel_editor.editor.KernelEditor`).

The graph is analysed again only when something the analysis reads changed: a command that
moves instructions or renames them (position and label, on a kernel of 10^4 instructions the
usual edit) leaves the bound, the labels and the marks as they are. What the analysis finds is
given to the scene, which touches only the labels and marks that change.

The analysis itself (:func:`analyse_kernel`) is a function of a graph and a latency table,
with no Qt in it. A kernel of :attr:`EditorAnalysis.BACKGROUND_FROM` instructions or more
takes it past ~100 ms, so after an edit it runs on a snapshot of the graph in a worker thread
(docs/contributing.md's rule for the GUI thread); its result is shown when it comes back, unless the
graph changed meanwhile (a newer analysis is then on its way). A kernel is shown the first
time with its analysis done at once, so that every label is made with its value.

The worker starts once the view has painted the edit (or after
:attr:`EditorAnalysis.START_AFTER_MS` if no paint comes: a hidden view, a change outside it).
A worker computing in Python holds the GIL, which the GUI thread must take back for every
call of its items' Python code in a paint: a worker started with the edit made the edit's own
paint wait for most of the analysis (an edge added to a kernel of 2·10^4 instructions: 9 ms
on the GUI thread alone, 130-150 ms in about half the runs, whenever the worker got going
before the paint). Edits made before the worker starts are analysed once, the last one.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import QObject, QRunnable, QTimer, Signal

from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.collapse import as_dict
from gpumodeler.core.kernel.latency_bound import CriticalPath, LatencyBound, analyze
from gpumodeler.core.kernel.latency_bound import resolve_edge_latency
from gpumodeler.ui.logs import bug

from ..launch_panel.fields import fmt_number
from ..workers import in_background


@dataclass(frozen=True)
class KernelAnalysis:
    """What the editor shows of a graph's analysis."""

    bound: LatencyBound | None
    latencies: dict  # edge id -> cycles, or None (unknown)
    errors: dict  # item id ('' for the graph) -> message
    value: float | None = None  # the bound at the graph's variable values
    path: CriticalPath | None = None
    path_text: str = ""
    missing: tuple = ()  # variables the bound needs a value of


def analyse_kernel(g, table, table_problem: str | None = None) -> KernelAnalysis:
    """Analyse ``g`` with latency table ``table`` (None: none); ``table_problem`` says why
    the table the graph names cannot be had. Reads ``g`` only (a snapshot may be given)."""
    bound, errors = None, {}
    try:
        if table_problem:
            raise ModelError(table_problem)
        bound = analyze(g, table)
    except ModelError as exc:
        errors[exc.item or ""] = str(exc)
    latencies = dict(as_dict(bound.edge_latency)) if bound else _table_latencies(g, table)
    if bound is None:
        return KernelAnalysis(bound, latencies, errors)
    try:
        value = float(bound.evaluate(dict(g.variables)))
        path = bound.critical_path(dict(g.variables))
    except ModelError as exc:
        missing = tuple(sorted(set(bound.variables) - set(g.variables)))
        if not missing:  # else not an error of the graph: the number needs values
            errors[""] = str(exc)
        return KernelAnalysis(bound, latencies, errors, missing=missing)
    return KernelAnalysis(bound, latencies, errors, value, path, path.describe(g))


def _table_latencies(g, table) -> dict:
    """Each edge's latency as far as it resolves alone (the graph cannot be analysed)."""
    order = g.order()
    out = {}
    for e in g.edges.values():
        try:
            out[e.id] = resolve_edge_latency(g, e, table, order)
        except ModelError:
            out[e.id] = None
    return out


_ALIVE: set = set()  # the jobs started and not yet reported: the pool holds no reference


class _Signals(QObject):
    finished = Signal(int, object)  # generation, KernelAnalysis


class _AnalysisJob(QRunnable):
    """One analysis of a snapshot, in the thread pool. Keep a reference until it reports."""

    def __init__(self, generation: int, snapshot, table, table_problem):
        super().__init__()
        self.setAutoDelete(False)
        self.generation = generation
        self.args = (snapshot, table, table_problem)
        self.signals = _Signals()

    def run(self) -> None:
        try:
            result = analyse_kernel(*self.args)
        except Exception as exc:  # a bug must not take the application down: report it
            bug("the kernel analysis")
            result = KernelAnalysis(None, {}, {"": f"the analysis failed unexpectedly "
                                                 f"({type(exc).__name__}: {exc})"})
        try:
            self.signals.finished.emit(self.generation, result)
        except RuntimeError:  # the application is closing: no one is left to show it to
            pass


class EditorAnalysis:
    """Analysis of :class:`KernelEditor` (which holds ``graph``, ``scene``, ``document``,
    ``bound_label``, the flags ``_analysis_pending`` and ``_analysis_stale`` and what the last
    analysis saw, ``_analysed``)."""

    #: kernels of this many instructions or more are analysed in a worker after an edit
    BACKGROUND_FROM = 5000
    #: a worker starts at the first paint of the view after the edit, at the latest this long
    #: after it (no paint comes while the view is hidden or the change is out of sight)
    START_AFTER_MS = 30
    _waiting: object  # the analysis job made and not yet started (the editor sets it: None)
    _start_timer: QTimer  # the latest start of the waiting job (the editor's own)
    _generation: int  # of the analysis last asked for (the editor sets it)
    _jobs: dict  # generation -> its job, running in the background (the editor's own)

    def _schedule_analysis(self) -> None:
        if not self._analysis_pending:
            self._analysis_pending = True
            QTimer.singleShot(0, self, self._deferred_analysis)

    def _deferred_analysis(self) -> None:
        if self._analysis_pending and self._analysis_stale:
            self.refresh_analysis()
        self._analysis_pending = False

    def _placed_only(self, ins) -> bool:
        """The instruction differs from the one the last analysis saw in its position or
        label only, which no analysis reads."""
        graph, seen = self._analysed
        old = seen.get(ins.id) if graph is self.graph else None
        return old is not None and replace(old, x=ins.x, y=ins.y, label=ins.label) == ins

    def analysis_busy(self) -> bool:
        """An analysis runs in the background whose result is still to be shown."""
        return self._generation in self._jobs

    def refresh_analysis(self) -> None:
        """Analyse the graph again: edge latencies, the bound, the critical path, errors
        (a big kernel in the background, shown when done)."""
        g = self.graph
        if g is None or len(g.instructions) < self.BACKGROUND_FROM:
            self._show_analysis(g, self._analyse())
            return
        generation, table, problem = self._begin_analysis(g)
        job = _AnalysisJob(generation, g.copy(), table, problem)
        job.signals.finished.connect(self._analysis_done)
        self._jobs[generation] = job
        if self._waiting is not None:  # made for an earlier edit and not started: not needed
            self._jobs.pop(self._waiting.generation, None)
        self._waiting = job
        self._start_timer.start(self.START_AFTER_MS)
        if "analysing" not in self.bound_label.text():
            self.bound_label.setText(self.bound_label.text() + " <span style='color:#5f6368'>"
                                     "(analysing the change…)</span>")

    def _start_waiting_job(self) -> None:
        """Start the analysis made for the last edit, if it is still waiting (the view has
        painted the edit, or the timer ran out)."""
        job, self._waiting = self._waiting, None
        self._start_timer.stop()
        if job is None:
            return
        _ALIVE.add(job)  # until it reports (also if this editor is gone by then)
        in_background(job)

    def _analysis_done(self, generation: int, result: KernelAnalysis) -> None:
        _ALIVE.discard(self._jobs.pop(generation, None))
        if generation == self._generation and self._analysed[0] is self.graph:
            self._show_analysis(self.graph, result)  # else a newer one is on its way

    def _begin_analysis(self, g) -> tuple:
        """A new analysis of ``g`` begins: (its generation, the latency table, what is
        wrong with the table the graph names, or None)."""
        self._analysis_pending = False
        self._analysis_stale = False
        self._generation += 1
        self._analysed = (g, dict(g.instructions) if g is not None else {})
        if g is None:
            return self._generation, None, None
        table = self._table(g)
        problem = None
        if g.latency_table and table is None:
            tables_problem = self.document.tables_problem
            problem = (f"unknown latency table '{g.latency_table}': it is neither built in nor "
                       f"in the device database; choose one of: "
                       f"{', '.join(self.document.latency_tables())}, or none"
                       + (f" (the device database's tables could not all be read: "
                          f"{tables_problem})" if tables_problem else ""))
        return self._generation, table, problem

    def _analyse(self) -> KernelAnalysis | None:
        """The current kernel's analysis, done now (None: no kernel)."""
        g = self.graph
        _, table, problem = self._begin_analysis(g)
        return None if g is None else analyse_kernel(g, table, problem)

    def _show_analysis(self, g, analysis: KernelAnalysis | None) -> None:
        """Show what :func:`analyse_kernel` found: labels, the bound, the critical path,
        errors."""
        if g is None:
            self.bound, self.errors = None, {}
            self.scene.set_errors({})
            self.bound_label.setText("No kernel: add one with <b>New</b> or <b>Import…</b>")
            self._fill_variables(set())
            self.show_message("")
            return
        self.bound, self.errors = analysis.bound, dict(analysis.errors)
        self.scene.set_latencies(analysis.latencies)
        variables = set(g.variables)
        critical = ((), (), ())
        if self.bound is not None:
            variables |= set(self.bound.variables)
            value_text = ""
            if analysis.path is not None:
                value, path = analysis.value, analysis.path
                critical = (path.node_ids, path.edge_ids, path.loop_ids)
                value_text = f" = <b>{value:,.6g}</b> cycles" if value >= 1e6 else f" = <b>{value:g}</b> cycles"
                given = ", ".join(f"{k} = {fmt_number(v)}" for k, v in g.variables.items()
                                  if k in self.bound.variables)
                if given:
                    value_text += f" <span style='color:#5f6368'>({given})</span>"
                self.bound_label.setToolTip("Critical path: " + analysis.path_text)
            elif analysis.missing:
                value_text = (f" <span style='color:#5f6368'>(give {', '.join(analysis.missing)} "
                              f"a value for the number)</span>")
            self.bound_label.setText(f"Latency bound: <b>{self.bound.formula()}</b>{value_text}")
        else:
            self.bound_label.setText("Latency bound: <span style='color:#a00000'>—</span> (see the message)")
            self.bound_label.setToolTip("")
        self.scene.set_critical(*critical)
        self.scene.set_errors({k: v for k, v in self.errors.items() if k})
        self._fill_variables(variables)
        if self.errors:
            self.show_message("  ".join(self.errors.values()), error=True)
        elif not self.pushing:
            self.show_message("")
        self._refresh_selection_panel()

    def latency_bound_formula(self) -> str:
        return self.bound.formula() if self.bound else ""

    def command_done(self) -> None:
        if self._analysis_stale:
            self.refresh_analysis()
