"""`sweep --model NAME[,NAME]|all`: one column ``time_s_<model>`` per model (the model's
kernel time in seconds, kernel terms included), evaluated by :mod:`gpumodeler.core.models.overlay`.

The gajger column is the sweep's own ``kernel_time_s`` (the vectorised engine equals the
registry's gajger to 1e-12); the other models run point by point. A point a model cannot
evaluate is an empty cell, and after the table one stderr line per such model names the
value it lacks and the flag that gives it.
"""
from __future__ import annotations

import sys

from . import model_flags


class ModelColumns:
    """The overlay of one ``sweep`` run: graph counters per latency table and the errors
    gathered over every chunk."""

    def __init__(self, args, graph, table_for):
        self.args = args
        self.names = tuple(args.model or ())
        self.graph = graph
        self.table_for = table_for  # gpu -> latency table key
        self.counters: dict = {}
        self.errors: dict = {}  # model -> [ModelError, points]

    def check_size(self, points: int) -> None:
        from gpumodeler.core.models.overlay import MAX_MODEL_POINTS, VECTORISED
        from .main import CLIError
        if points > MAX_MODEL_POINTS and any(m not in VECTORISED for m in self.names):
            raise CLIError(f"--model evaluates the models other than gajger point by point, at most "
                           f"{MAX_MODEL_POINTS} points; this sweep has {points}")

    def _counter(self, gpu, graph=None):
        graph = self.graph if graph is None else graph
        if graph is None:
            return None
        key = (self.table_for(gpu), id(graph))
        if key not in self.counters:
            from gpumodeler.core.models.graph_inputs import GraphCounter
            from . import common
            self.counters[key] = (GraphCounter(graph, common.latency_table_for(key[0]),
                                               gpu.warp_size), graph)
        return self.counters[key][0]

    def columns(self, spec, grid: dict, n: int, valid, kin: dict, gsize, block, warps, lam,
                kernel_time, views_at=None) -> dict:
        """``{time_s_<model>: array}`` for one chunk of ``n`` launch points; ``views_at(i)``:
        the graph and variable values point ``i``'s launch sees, where the graph's memory
        depends on the launch (cmd_sweep._launch_inputs)."""
        import numpy as np

        from gpumodeler.core.models.gajger import KernelInputs
        from gpumodeler.core.models.overlay import column_name, evaluate_points
        from gpumodeler.core.models.result import ModelInputs

        if not self.names:
            return {}
        counter = self._counter(spec)
        at = lambda v, i: (np.broadcast_to(np.asarray(v), (n,))[i].item() if np.ndim(v) else v)
        swept_fields = [k for k in ("sms", "cuda_cores_per_sm", "schedulers_per_sm",
                                    "gmem_bytes_per_cycle_per_sm", "sm_clock_hz")
                        if np.ndim(getattr(spec, k))]
        variables = {k[4:]: v for k, v in grid.items() if k.startswith("var:")}
        cache: dict = {}
        params = model_flags.parameters_of(self.args)
        terms = model_flags.terms_of(self.args)
        gpu0 = model_flags.gpu_with_term_values(self.args, spec)

        def counts(i):
            if views_at is not None:
                graph, values = views_at(i)
                key = (id(graph), tuple(sorted(values.items())))
                if key not in cache:
                    cache[key] = self._counter(spec, graph).at(values)
                return cache[key]
            if counter is None:
                return {}
            values = {k: float(v[i]) for k, v in variables.items()}
            key = tuple(values.values())
            if key not in cache:
                cache[key] = counter.at(values)
            return cache[key]

        def inputs_at(i):
            gpu = gpu0.with_overrides(**{k: at(getattr(spec, k), i) for k in swept_fields}) \
                if swept_fields else gpu0
            kernel = KernelInputs(**{k: ({p: at(c, i) for p, c in v.items()} if isinstance(v, dict)
                                         else at(v, i)) for k, v in kin.items()})
            return ModelInputs(gpu=gpu, kernel=kernel, grid_size=int(at(gsize, i)),
                               block_size=int(at(block, i)), occupancy=float(at(warps, i)),
                               lam=float(at(lam, i)), counts=counts(i), parameters=params, terms=terms)

        overlay = evaluate_points(self.names, n, inputs_at, valid=valid,
                                  vectorised={"gajger": kernel_time})
        for m, (exc, k) in overlay.errors.items():
            if m in self.errors:
                self.errors[m][1] += k
            else:
                self.errors[m] = [exc, k]
        return {column_name(m): t for m, t in overlay.times.items()}

    def report(self) -> None:
        """One stderr line per model that left cells empty."""
        for m, (exc, k) in self.errors.items():
            print(f"gpumodeler sweep: {m}: {k} point(s) left empty: {model_flags.error_text(exc)}",
                  file=sys.stderr)
