"""A learned model's prediction of one launch (``predict --learned`` and the launch panel's
learned row): the launch as a learning row, and the entry that marks the prediction with
the model's training data and the features outside the trained ranges (docs/learning.md).

The row has the features a launch has without a profiler: the GPU's parameters, the grid
and block, the occupancy, the kernel's per-warp counts (issued instructions and global
bytes, Gajger 2017 §4.2) and the analytical models' times; profiler metrics such as
Amarís' load and store transactions (Amarís 2018 Table 4.1) are absent, so they count as
0 and a model trained on them flags the prediction as outside its ranges.
"""
from __future__ import annotations

import math
from dataclasses import replace

from gpumodeler.core.learn.dataset import Row
from gpumodeler.core.models.result import ModelResult


def launch_row(kernel: str, gpu, grid, block, inputs, occupancy: float, results: dict,
               metrics=None) -> Row:
    """The learning row of a launch: ``inputs`` the kernel's per-warp inputs (KernelInputs),
    ``results`` ``{model: ModelResult or error}``, ``metrics`` profiled metrics if any."""
    grid_t = grid if isinstance(grid, tuple) else (int(grid),)
    block_t = block if isinstance(block, tuple) else (int(block),)
    warps = math.prod(grid_t) * -(-math.prod(block_t) // int(gpu.warp_size or 32))
    analytical = {n: float(r.time_s) for n, r in results.items() if isinstance(r, ModelResult)}
    quantities = {"occupancy_warps_per_sm": float(occupancy), "warps": float(warps),
                  "latency_bound_cycles": float(inputs.latency_bound),
                  "issued_instructions": float(inputs.issued_instructions),
                  "gmem_bytes": float(inputs.gmem_bytes)}
    size = float(math.prod(grid_t) * math.prod(block_t))
    return Row(kernel, gpu, grid_t, block_t, math.nan, dict(metrics or {}), (), size,
               analytical, {}, quantities)


def project_launch_row(project, launch_id: str, result, results: dict, *, table_lookup=None) -> Row:
    """The learning row of a project launch already evaluated (``result``, a
    :class:`~gpumodeler.core.pipeline.LaunchResult`) and compared (``results``, as
    :func:`~gpumodeler.core.models.graph_inputs.compare_launch` returns them): the kernel's
    inputs as the models took them (the result's: the launch's view of the graph, its
    guards, block shape and reuse; a result without them, the graph at the launch's
    variables). The kernel is named by its
    graph's name (a hybrid's kernel offset applies when that is a trained kernel's name)."""
    from gpumodeler.core.kernel.expressions import parse
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph
    from gpumodeler.core.pipeline import resolve_table
    launch = project.launches[launch_id]
    graph = project.kernels[launch.kernel]
    inputs = getattr(result, "kernel_inputs", None)  # the launch's view: guards, reuse
    if inputs is None:
        variables = dict(graph.variables, **launch.variables)
        if launch.data_size is not None:
            variables.setdefault("N", launch.data_size)
        inputs = kernel_inputs_from_graph(graph, variables,
                                          table=resolve_table(graph.latency_table, table_lookup),
                                          warp_size=result.gpu.warp_size)
        if launch.kernel_overrides:
            inputs = replace(inputs, **{k: parse(v).evaluate(variables)
                                        for k, v in launch.kernel_overrides.items()})
    name = getattr(graph, "name", "") or str(launch.kernel)
    return launch_row(name, result.gpu, result.grid_size, launch.block_size, inputs,
                      result.occupancy_warps_per_sm, results)


def learned_entry(model, row) -> dict:
    """The learned prediction of ``row`` with the model's training data and range flags."""
    t = float(model.predict([row])[0])
    outside = model.outside(row)
    train = model.training
    return {"model": "learned", "method": model.method, "features": model.features,
            "time_s": t if math.isfinite(t) else None,
            "error": None if math.isfinite(t) else
            f"the hybrid needs the {model.params.get('base_model', 'gajger')} model's time, "
            f"which this launch does not give",
            "outside_trained_ranges": outside,
            "training": {k: train[k] for k in ("gpus", "kernels", "rows", "digest")}}
