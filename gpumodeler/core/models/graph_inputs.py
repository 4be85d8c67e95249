"""What the registry's models read from a kernel graph beyond Gajger's KernelInputs, and the
models of one project launch side by side (the launch panel's comparison).

* ``instructions``: warp instructions per warp, dual-issued pairs counted twice and reissues
  not at all (H&K #Total_insts: each instruction holds the cores Issue_cycles);
* ``memory_instructions``: global/local memory warp instructions per warp (H&K #Mem_insts,
  Amarís ld_1 + st_1); constant-bank loads (kernel parameters, ``__constant__`` data) are
  served by the constant cache and are not counted;
* ``shared_instructions``: shared-memory warp instructions per warp (Amarís ld_0 + st_0);
* ``synch_instructions``: barriers per warp (H&K #Synch_insts), loop-weighted; a warp's
  wait on its own scoreboards (``DEPBAR``) and a memory fence (``MEMBAR``) synchronise with
  no other warp and are not counted (``opcodes.is_block_barrier``);
* ``critical_dram_accesses``: DRAM accesses on the latency bound's critical path, the slope
  dL/d(DRAM latency) of the bound (Volkov §6.5 adds the contention delay once per access
  on the path). The bound is piecewise linear in the latency, so one cycle more gives the
  slope at the values evaluated;
* ``bound_dram_latency_cycles``: the DRAM latency the latency bound was worked out with (the
  table's), so that a model may put another unloaded latency in its place (Volkov's fitted
  intercept ``a``, §6.5: L₀ + k·(a − this)).
"""
from __future__ import annotations

from dataclasses import replace

from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.opcodes import is_block_barrier


class GraphCounter:
    """:func:`graph_counts` for one graph, table and warp size, analysed once and evaluated
    at many variable values (a sweep's points)."""

    def __init__(self, graph: KernelGraph, table=None, warp_size: int = 32):
        from gpumodeler.core.kernel.latency_bound import analyze
        from gpumodeler.core.kernel.latency_tables import LatencyTable, get_table
        from gpumodeler.core.kernel.warp_counts import count
        self.graph = graph
        self.counts = count(graph, warp_size)
        # a warp's wait on its own scoreboards (DEPBAR) or memory fence (MEMBAR)
        # synchronises with no other warp
        self.barriers = [[lp.iterations for lp in graph.loops.values() if nid in lp.members]
                         for nid, ins in graph.instructions.items()
                         if is_block_barrier(ins.unit, ins.opcode)]
        if table is None:
            table = graph.latency_table
        if isinstance(table, str):
            table = get_table(table)
        self.bounds = None
        self.dram_cycles = None
        if isinstance(table, LatencyTable) and table.memory_cycles.get("dram") is not None:
            self.dram_cycles = float(table.memory_cycles["dram"])
            mem = dict(table.memory_cycles)
            for level in ("dram", "dram_random"):
                if mem.get(level) is not None:
                    mem[level] = mem[level] + 1
            self.bounds = (analyze(graph, table), analyze(graph, replace(table, memory_cycles=mem)))

    def at(self, values: dict | None = None) -> dict:
        """The extra per-warp counts at ``values`` (the graph's defaults for the rest)."""
        vals = dict(self.graph.variables, **(values or {}))
        c = self.counts.evaluate(vals)
        out: dict[str, float | None] = {"instructions": float(c["instructions"]),
               "memory_instructions": float(c["gmem_accesses"]),
               "shared_instructions": float(c["smem_accesses"])}
        synch = 0.0
        for loops in self.barriers:
            term = 1.0
            for iterations in loops:
                term = term * float(iterations.evaluate(vals))
            synch += term
        out["synch_instructions"] = synch
        if self.bounds is not None:
            base = float(self.bounds[0].evaluate(vals))
            bumped = float(self.bounds[1].evaluate(vals))
            out["critical_dram_accesses"] = max(0.0, round(bumped - base, 9))
            out["bound_dram_latency_cycles"] = self.dram_cycles
        return out


def graph_counts(graph: KernelGraph, values: dict | None = None, table=None, warp_size: int = 32) -> dict:
    """The extra per-warp counts of ``graph`` at ``values`` (see the module docstring).

    ``table`` is what :func:`~gpumodeler.core.kernel.latency_bound.analyze` takes (a key or a
    LatencyTable); without a DRAM latency in it ``critical_dram_accesses`` is left out."""
    return GraphCounter(graph, table, warp_size).at(values)


def compare_launch(project, launch_id: str, result, *, table_lookup=None, terms=None,
                   parameters=None, analyses=None) -> dict:
    """{model: ModelResult or ModelError} for a project launch already evaluated by
    :func:`~gpumodeler.core.pipeline.evaluate_launch` (``result``): the same GPU, occupancy,
    grid and kernel values, every registered model. ``analyses``: a
    :class:`~gpumodeler.core.pipeline.GraphAnalyses` (over the same ``table_lookup``) whose
    analyses of the graph to reuse, so that comparing many launches analyses it once."""
    from gpumodeler.core.kernel.expressions import parse
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph
    from gpumodeler.core.models.registry import evaluate_all
    from gpumodeler.core.models.result import KernelTerms, ModelInputs
    from gpumodeler.core.pipeline import resolve_table
    launch = project.launches[launch_id]
    graph = project.kernels[launch.kernel]
    variables = dict(graph.variables, **launch.variables)
    if launch.data_size is not None:
        variables.setdefault("N", launch.data_size)
    table = resolve_table(graph.latency_table, table_lookup)
    warp = result.gpu.warp_size
    if analyses is not None:
        inputs = kernel_inputs_from_graph(graph, variables, table=table, warp_size=warp,
                                          bound=analyses.bound(graph, graph.latency_table),
                                          counts=analyses.counts(graph, warp))
    else:
        inputs = kernel_inputs_from_graph(graph, variables, table=table, warp_size=warp)
    if launch.kernel_overrides:
        inputs = replace(inputs, **{k: parse(v).evaluate(variables) for k, v in launch.kernel_overrides.items()})
    if analyses is not None:
        counter = analyses.cached("graph counter", graph, (graph.latency_table, warp),
                                  lambda: GraphCounter(graph, table, warp))
        counts = counter.at(variables)
    else:
        counts = graph_counts(graph, variables, table, warp)
    return evaluate_all(ModelInputs(gpu=result.gpu, kernel=inputs, grid_size=result.grid_size,
                                    block_size=launch.block_size, occupancy=result.occupancy_warps_per_sm,
                                    lam=launch.lam, counts=counts, parameters=dict(parameters or {}),
                                    terms=terms or KernelTerms()))
