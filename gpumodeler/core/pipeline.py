"""The prediction pipeline of a project's launch: resolve the placed GPU, the links and the
latency table through caller-given lookups, analyse the kernel graph, and predict the kernel and
its transfers (Gajger 2017 eq. 4.1-4.3 for the kernel, eq. 5.5 for a copy over a link).

The document it reads is :mod:`gpumodeler.core.project`; this module only computes from it.
Core never touches the database: :func:`evaluate_launch` takes resolver callables (the
service layer, :mod:`gpumodeler.service`, builds them over the device catalog).

:class:`GraphAnalyses` keeps each kernel graph's latency bound (Volkov 2016 §3.7-3.8, the
critical path of the execution graph) and per-warp counts (Volkov §3.6) for the length of
one evaluation, so that many launches of one kernel analyse it once.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter, shown
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.sass.launch_memory import LaunchGraph, graph_for_launch
from gpumodeler.core.launch_limits import check_launch
from gpumodeler.core.models.gajger import ApplicationPrediction, kernel_inputs_from_graph, predict
from gpumodeler.core.models.kernel_time import grid_for
from gpumodeler.core.project import TRANSFER_CALIBRATION, Project
from gpumodeler.core.resolve import resolve_gpu, resolve_link, transfer_calibration


class GraphAnalyses:
    """Latency bounds and warp counts of kernel graphs, each computed once.

    Keyed by the graph's identity (the object, held here so its id stays its own) and the
    latency table's key, or the warp size: valid while no graph is edited, i.e. for one
    evaluation (a report, a sweep's base point, an application's steps). A failed analysis
    is not kept, so it raises its error again where it is asked for."""

    def __init__(self, table_lookup=None):
        self.table_lookup = table_lookup
        self._bounds: dict = {}
        self._counts: dict = {}
        self._derived: dict = {}
        self.analysed = 0   # how many graph analyses were made (the tests count them)

    def bound(self, graph, key: str | None):
        """``analyze(graph, table)`` for the table ``key`` names (:func:`resolve_table`)."""
        from gpumodeler.core.kernel.latency_bound import analyze
        k = (id(graph), key)
        hit = self._bounds.get(k)
        if hit is None or hit[0] is not graph:
            hit = self._bounds[k] = (graph, analyze(graph, resolve_table(key, self.table_lookup)))
            self.analysed += 1
        return hit[1]

    def counts(self, graph, warp_size: int = 32):
        """``count(graph, warp_size)``: the graph's per-warp counts (symbolic)."""
        from gpumodeler.core.kernel.warp_counts import count
        k = (id(graph), warp_size)
        hit = self._counts.get(k)
        if hit is None or hit[0] is not graph:
            hit = self._counts[k] = (graph, count(graph, warp_size))
        return hit[1]

    def launch_counts(self, seen: LaunchGraph, warp_size: int = 32):
        """The per-warp counts of a launch's graph (:func:`graph_for_launch`): kept on the
        graph before the reuse and the hit ratios the reuse set, so a launch whose reuse
        gives the hit ratios of an earlier one counts nothing again."""
        if seen.graph is seen.latency_graph:
            return self.counts(seen.graph, warp_size)
        from gpumodeler.core.kernel.warp_counts import count
        hits = tuple((ins.hit_ratio, ins.l1_hit_ratio) for ins in seen.graph.instructions.values())
        return self.cached("launch counts", seen.latency_graph, (warp_size, hits),
                           lambda: count(seen.graph, warp_size))

    def cached(self, what: str, graph, key, make):
        """``make()``, made once per ``what`` (a name), graph and hashable ``key``: for what
        another module derives from a graph (the other models' counts,
        :func:`gpumodeler.core.models.graph_inputs.compare_launch`)."""
        k = (what, id(graph), key)
        hit = self._derived.get(k)
        if hit is None or hit[0] is not graph:
            hit = self._derived[k] = (graph, make())
        return hit[1]


@dataclass(frozen=True)
class LaunchResult:
    """What the launch panel shows for one launch."""

    gpu: GPUSpec
    link: LinkSpec | None
    occupancy_warps_per_sm: float
    occupancy_detail: object  # OccupancyResult or None when overridden
    latency_bound_cycles: float
    latency_bound_formula: str
    grid_size: int
    prediction: ApplicationPrediction
    #: the kernel's per-warp inputs as the models took them (the launch's view of the graph:
    #: its guards, block shape and reuse; the launch's kernel overrides applied)
    kernel_inputs: object = None


def resolve_table(key: str | None, table_lookup=None):
    """What analyze() takes for ``key``: the key of a built-in table (or None), else the
    table ``table_lookup(key)`` finds; without a lookup an unknown key stays a key (and
    analyze reports it)."""
    from gpumodeler.core.kernel.latency_tables import TABLES
    if key is None or key in TABLES or table_lookup is None:
        return key
    return table_lookup(key)


def evaluate_launch(project: Project, launch_id: str, gpu_lookup, link_lookup,
                    values: dict | None = None, table_lookup=None,
                    include_transfers: bool = True, calibration_lookup=None,
                    terms=None, analyses: GraphAnalyses | None = None,
                    working_set_bytes=None) -> LaunchResult:
    """Predict a launch of the project: occupancy, latency bound, kernel and transfer times.

    ``include_transfers=False`` predicts the kernel alone (no link is resolved): what can
    still be shown when a transfer cannot be predicted (e.g. a link without startup time).

    ``gpu_lookup(name) -> GPUSpec`` and ``link_lookup(name) -> LinkSpec`` resolve catalog
    names (the db layer provides them); ``table_lookup(key) -> LatencyTable`` resolves a
    latency table that is not built in (a user's or the device database's). ``values``
    override launch variables. ``calibration_lookup(link_name, label) -> LinkSpec`` resolves
    a connection's ``transfer_calibration`` (see :func:`resolve_link`).

    ``terms`` switches the kernel terms (:class:`~gpumodeler.core.models.result.KernelTerms`;
    default: the launch's own, :class:`~gpumodeler.core.project.LaunchTerms`, whose defaults
    are ``predict``'s — under-filled GPU on, tail off, launch overhead when the GPU's is
    known). The launch's launch overhead and L2 bandwidth, when it gives them, take the
    place of its GPU's in any case. A launch has no working set of its own: ``working_set_bytes`` (bytes the
    kernel touches) switches the L2 term on for this call, as ``predict --working-set`` does;
    the result's ``prediction.terms`` lists what applied.

    ``analyses`` (:class:`GraphAnalyses`, its ``table_lookup`` this call's) keeps the kernel
    graph's analysis across calls; default: analysed for this call alone."""
    from gpumodeler.core.occupancy.calculator import occupancy as occupancy_of

    if launch_id not in project.launches:
        raise InvalidParameter(f"the project has no launch {shown(launch_id)} (launches: "
                               f"{', '.join(sorted(project.launches)) or 'none'})", item="launch")
    launch = project.launches[launch_id].checked()
    gpu = launch.terms.on_gpu(resolve_gpu(project, launch.gpu, gpu_lookup))
    if launch.kernel not in project.kernels:
        raise InvalidParameter("choose a kernel for the launch (none is selected)", item="kernel")
    graph = project.kernels[launch.kernel]
    variables = dict(graph.variables, **launch.variables, **(values or {}))
    if launch.occupancy_override is not None:
        warps, detail = launch.occupancy_override, None
    else:
        if not gpu.compute_capability:
            raise InvalidParameter(f"{gpu.name}: the compute capability is unknown, so occupancy cannot be "
                                   f"computed; set it or give an occupancy override", item="occupancy_override")
        detail = occupancy_of(gpu.compute_capability, launch.block_size, launch.registers, launch.shared_mem)
        warps = detail.active_warps_per_sm
    if launch.data_size is not None:
        grid = int(grid_for(launch.data_size, launch.block_size))
        variables.setdefault("N", launch.data_size)
    elif launch.grid_size is not None:
        grid = launch.grid_size
    else:
        raise InvalidParameter("give a grid size or a data size", item="grid_size")
    check_launch(grid, launch.block_size, gpu.compute_capability)
    # the launch's guards, block shape, reuse across blocks and L2 fit: the one function
    # predict and validate use (core.kernel.sass.launch_memory), from the user's values
    given = {**launch.variables, **(values or {})}
    if launch.data_size is not None:
        given.setdefault("N", launch.data_size)
    seen = graph_for_launch(graph, given, block_size=launch.block_size, warp_size=gpu.warp_size,
                            gpu=gpu, grid_size=grid, occupancy=float(warps),
                            working_set_bytes=working_set_bytes,
                            shared_bytes_per_block=launch.shared_mem or None)
    variables.update(seen.values)
    # a graph without its own table takes the GPU's (every Volta-or-later GPU links one)
    if analyses is None or analyses.table_lookup != table_lookup:
        analyses = GraphAnalyses(table_lookup)
    bound = analyses.bound(seen.latency_graph, graph.latency_table or gpu.latency_table)
    inputs = kernel_inputs_from_graph(seen.graph, variables, bound=bound, warp_size=gpu.warp_size,
                                      counts=analyses.launch_counts(seen, gpu.warp_size))
    if launch.kernel_overrides:
        inputs = inputs.overridden(**{k: parse(v).evaluate(variables) for k, v in launch.kernel_overrides.items()})
    transfers, link = [], None
    launch_transfers = launch.transfers if include_transfers else ()
    host_link = (project.host_link_for(launch.gpu) if launch_transfers and launch.gpu is not None
                 else None)
    for t in launch_transfers:
        conn_id = t.connection or (host_link.id if host_link else None)
        if conn_id is None or conn_id not in project.connections:
            raise InvalidParameter("transfers need a link between the GPU and a host; draw one in "
                                   "the system editor", item="transfers")
        this_link = resolve_link(project, conn_id, link_lookup, calibration_lookup)
        if link is not None and this_link != link:
            raise InvalidParameter("all transfers of a launch must use one link", item="transfers")
        link = this_link
        size = parse(t.size).evaluate(variables)
        transfers.append((t.direction, float(size)))
    prediction = predict(gpu, inputs, grid_size=grid, block_size=launch.block_size, occupancy=warps,
                         lam=launch.lam, link=link, transfers=transfers,
                         terms=launch.terms.kernel_terms() if terms is None else terms,
                         working_set_bytes=working_set_bytes)
    formula = launch.kernel_overrides.get("latency_bound") or bound.formula()
    return LaunchResult(gpu, link, float(warps), detail, float(inputs.latency_bound), formula,
                        grid, prediction, inputs)


__all__ = ["GraphAnalyses", "LaunchResult", "evaluate_launch", "resolve_gpu", "resolve_link",
           "resolve_table", "transfer_calibration", "TRANSFER_CALIBRATION"]
