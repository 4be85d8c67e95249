"""The kernel editor's analysis: the latency bound, edge latencies, critical path and errors
of the kernel shown (:class:`EditorAnalysis`, a part of
:class:`~gpumodeler.ui.kernel_editor.editor.KernelEditor`).

The graph is analysed again only when something the analysis reads changed: a command that
moves instructions or renames them (position and label, on a kernel of 10^4 instructions the
usual edit) leaves the bound, the labels and the marks as they are. What the analysis finds is
given to the scene, which touches only the labels and marks that change.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QTimer

from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.collapse import plain
from gpumodeler.core.kernel.latency_bound import analyze, resolve_edge_latency

from ..launch_panel.fields import fmt_number


class EditorAnalysis:
    """Analysis of :class:`KernelEditor` (which holds ``graph``, ``scene``, ``document``,
    ``bound_label``, the flags ``_analysis_pending`` and ``_analysis_stale`` and what the last
    analysis saw, ``_analysed``)."""

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

    def refresh_analysis(self) -> None:
        """Analyse the graph again: edge latencies, the bound, the critical path, errors."""
        self._show_analysis(*self._analyse())

    def _analyse(self) -> tuple:
        """(graph, bound or None, {edge id: latency or None}, {item id: error}) of the
        current kernel."""
        self._analysis_pending = False
        self._analysis_stale = False
        g = self.graph
        self._analysed = (g, dict(g.instructions) if g is not None else {})
        if g is None:
            return g, None, {}, {}
        bound, errors = None, {}
        table = self._table(g)
        try:
            if g.latency_table and table is None:
                problem = self.document.tables_problem
                raise ModelError(
                    f"unknown latency table '{g.latency_table}': it is neither built in nor in "
                    f"the device database; choose one of: "
                    f"{', '.join(self.document.latency_tables())}, or none"
                    + (f" (the device database's tables could not all be read: {problem})"
                       if problem else ""))
            bound = analyze(g, table)
        except ModelError as exc:
            errors[exc.item or ""] = str(exc)
        latencies = dict(plain(bound.edge_latency)) if bound else self._resolve_latencies(g)
        return g, bound, latencies, errors

    def _show_analysis(self, g, bound, latencies: dict, errors: dict) -> None:
        """Show what :meth:`_analyse` found: labels, the bound, the critical path, errors."""
        self.bound, self.errors = bound, errors
        if g is None:
            self.scene.set_errors({})
            self.bound_label.setText("No kernel: add one with <b>New</b> or <b>Import…</b>")
            self._fill_variables(set())
            self.show_message("")
            return
        self.scene.set_latencies(latencies)
        variables = set(g.variables)
        value_text = ""
        critical = ((), (), ())
        if self.bound is not None:
            variables |= set(self.bound.variables)
            try:
                value = float(self.bound.evaluate(dict(g.variables)))
                path = self.bound.critical_path(dict(g.variables))
                critical = (path.node_ids, path.edge_ids, path.loop_ids)
                value_text = f" = <b>{value:,.6g}</b> cycles" if value >= 1e6 else f" = <b>{value:g}</b> cycles"
                given = ", ".join(f"{k} = {fmt_number(v)}" for k, v in g.variables.items()
                                  if k in self.bound.variables)
                if given:
                    value_text += f" <span style='color:#5f6368'>({given})</span>"
                self.bound_label.setToolTip("Critical path: " + path.describe(g))
            except ModelError as exc:
                missing = sorted(set(self.bound.variables) - set(g.variables))
                if missing:  # not an error of the graph: the number needs values
                    value_text = (f" <span style='color:#5f6368'>(give {', '.join(missing)} a value "
                                  f"for the number)</span>")
                else:
                    self.errors[""] = str(exc)
            formula = self.bound.formula()
            self.bound_label.setText(f"Latency bound: <b>{formula}</b>{value_text}")
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

    def _resolve_latencies(self, g) -> dict:
        table = self._table(g)
        order = g.order()
        out = {}
        for e in g.edges.values():
            try:
                out[e.id] = resolve_edge_latency(g, e, table, order)
            except ModelError:
                out[e.id] = None
        return out

    def latency_bound_formula(self) -> str:
        return self.bound.formula() if self.bound else ""

    def command_done(self) -> None:
        if self._analysis_stale:
            self.refresh_analysis()
