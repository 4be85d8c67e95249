"""One evaluation of a project: its launches, kernels, sweeps and applications predicted
against one set of lookups, each kernel graph analysed once (its latency bound, Volkov 2016
§3.7-3.8, and per-warp counts, Volkov §3.6, by :class:`~gpumodeler.core.pipeline.GraphAnalyses`).

An evaluation lives for one call of a front end (a ``project predict``, a report, the launch
panel's refresh): the graphs must not change while it is used.
"""
from __future__ import annotations


class ProjectEvaluation:
    """``project`` evaluated with ``lookups`` (core's resolvers: ``gpu_lookup``,
    ``link_lookup``, ``table_lookup``, ``calibration_lookup``; :func:`.lookups.catalog_lookups`
    builds them over the device catalog) and the kernel ``terms`` (KernelTerms; default
    ``predict``'s)."""

    def __init__(self, project, lookups: dict, *, terms=None):
        from gpumodeler.core.pipeline import GraphAnalyses
        self.project = project
        self.lookups = dict(lookups)
        self.terms = terms
        self.analyses = GraphAnalyses(self.lookups.get("table_lookup"))

    def launch(self, launch_id: str, *, values: dict | None = None,
               include_transfers: bool = True, working_set_bytes=None):
        """The launch's :class:`~gpumodeler.core.pipeline.LaunchResult` (raises ModelError);
        ``working_set_bytes`` switches on the L2 term for it (evaluate_launch)."""
        from gpumodeler.core.pipeline import evaluate_launch
        return evaluate_launch(self.project, launch_id, **self.lookups, values=values,
                               include_transfers=include_transfers, terms=self.terms,
                               analyses=self.analyses, working_set_bytes=working_set_bytes)

    def kernel_bound(self, kernel_id: str):
        """The kernel's latency bound (LatencyBound) with its own latency table (none: the
        default one), as ``project show`` and the report give it. Raises ModelError when the
        graph cannot be analysed."""
        graph = self.project.kernels[kernel_id]
        return self.analyses.bound(graph, graph.latency_table)

    def kernel_counts(self, kernel_id: str) -> dict:
        """The kernel's per-warp counts (warp of 32 threads) at its own variables."""
        graph = self.project.kernels[kernel_id]
        return self.analyses.counts(graph).evaluate(dict(graph.variables))

    def snapshot(self, launch_id: str, variable: str, values, devices=(), **options):
        """The sweep's snapshot (:func:`gpumodeler.core.launch_sweep.make_snapshot`, the
        lookups and terms this evaluation's; ``options`` its other keywords)."""
        from gpumodeler.core.launch_sweep import make_snapshot
        options.setdefault("terms", self.terms)
        options.setdefault("analyses", self.analyses)
        return make_snapshot(self.project, launch_id, self.lookups["gpu_lookup"],
                             self.lookups["link_lookup"], variable, values, devices,
                             table_lookup=self.lookups.get("table_lookup"),
                             calibration_lookup=self.lookups.get("calibration_lookup"), **options)

    def sweep(self, launch_id: str, variable: str, values, devices=(), **options):
        """(snapshot, SweepResult) of one variable of the launch over ``values``."""
        from gpumodeler.core.launch_sweep import run_sweep
        snap = self.snapshot(launch_id, variable, values, devices, **options)
        return snap, run_sweep(snap)

    def saved_sweep(self, sweep_id: str):
        """(snapshot, SweepResult) of a sweep saved in the project."""
        import numpy as np
        sw = self.project.sweeps[sweep_id]
        return self.sweep(sw.launch, sw.variable,
                          np.asarray(sw.values) if sw.variable != "gpu" else (), tuple(sw.devices))

    def application(self, app_id: str) -> dict:
        """The ``timeline --json`` document of the application (raises ModelError)."""
        from gpumodeler.service.application import run_application
        return run_application(self.project, app_id, self.lookups, analyses=self.analyses)
