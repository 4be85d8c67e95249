"""What the launch panel checks before it pushes an edit, so a bad value is refused at its
field with a reason: the variables a launch's expressions may name, a transfer size, whether
the GPU can run the block at all. Plain functions of the project (no Qt).
"""
from __future__ import annotations

from gpumodeler.core.architectures import architecture_name
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.launch_limits import MAX_GRID_X, launch_problem, limits
from gpumodeler.core.launch_limits import data_size_limit as core_data_size_limit


def variable_names(project, launch) -> list[str]:
    """The loop variables of ``launch``: its own, its kernel's and those its latency bound
    needs (N, the data size, is not one)."""
    names = set(launch.variables)
    graph = project.kernels.get(launch.kernel)
    if graph is not None:
        names |= set(graph.variables)
        try:
            names |= set(analyze(graph).variables)
        except ModelError:
            pass
    names.discard("N")
    return sorted(names)


# CUDA's grid x dimension holds at most 2^31 - 1 blocks (compute capability 3.0 and later;
# every limit of a launch: core.launch_limits, which the CLI checks too)
MAX_GRID_BLOCKS = MAX_GRID_X
# a transfer larger than this (1 PB) is no host's memory: surely a typo
MAX_TRANSFER_BYTES = 1e15
# a loop runs at most this many iterations per thread in any model we draw
MAX_LOOP_ITERATIONS = 1e12


def data_size_limit(block_size: int, compute_capability=None) -> int:
    """The largest data size N a launch of ``block_size`` threads per block can cover (on a
    GPU of ``compute_capability``; None: 3.0 and later)."""
    return core_data_size_limit(block_size, compute_capability)


def loop_variable_problem(name: str, value: float) -> str:
    """Why ``value`` cannot be loop variable ``name`` (an iteration count), or ''."""
    if value < 1:
        return (f"variable {name} counts loop iterations: give a number >= 1 (got {value:g}); "
                f"leave the field empty to use the kernel's default")
    if value > MAX_LOOP_ITERATIONS:
        return f"variable {name}: at most {MAX_LOOP_ITERATIONS:.0e} iterations, got {value:g}"
    return ""


def transfer_size_problem(project, launch, text: str) -> str:
    """Why ``text`` is not a transfer size of ``launch`` (bytes or an expression of N and
    the launch variables, worth 0 to 1 PB at the launch's values), or ''."""
    if not text:
        return "transfer size: give bytes (1.6e9) or an expression of N (4*N)"
    try:
        expr = parse(text)
    except ModelError as exc:
        return f"transfer size: {exc}"
    known = {"N"} | set(variable_names(project, launch))
    unknown = sorted(expr.variables - known)
    if unknown:
        return (f"transfer size {text!r}: unknown variable(s) {', '.join(unknown)}; use N (the data "
                f"size) or the launch variables ({', '.join(sorted(known))})")
    graph = project.kernels.get(launch.kernel)
    values = dict(graph.variables if graph is not None else {}, **launch.variables)
    if launch.data_size is not None:
        values.setdefault("N", launch.data_size)
    if expr.variables <= set(values):
        try:
            size = float(expr.evaluate(values))
        except (ModelError, ArithmeticError, ValueError) as exc:
            return f"transfer size {text!r}: {exc}"
        if not size == size or size in (float("inf"), float("-inf")):
            return f"transfer size {text!r} is not a finite number of bytes"
        if size < 0:
            return f"transfer size {text!r} is {size:g} bytes; give a size >= 0"
        if size > MAX_TRANSFER_BYTES:
            return (f"transfer size {text!r} is {size:.3g} bytes, more than 1 PB (1e15): "
                    f"give the bytes one transfer moves")
    return ""


def occupancy_problem(project, gpu_spec, candidate) -> str:
    """Why the GPU of launch ``candidate`` cannot run it (CUDA's launch limits of the GPU's
    compute capability, the occupancy calculator's reason, an occupancy override above the
    GPU's warps per SM, a data size beyond the grid limit), or ''. Other problems are left
    to the command, which refuses them with the model's message. ``gpu_spec``: catalog
    name -> GPUSpec."""
    cc = None
    if candidate.gpu in project.devices:
        try:
            gpu = gpu_spec(project.devices[candidate.gpu].device_name)
        except (ModelError, LookupError):
            gpu = None
        cc = gpu.compute_capability if gpu is not None else None
    else:
        gpu = None
    problem = launch_limit_problem(candidate, cc)
    if problem:
        return problem
    try:
        candidate.checked()
    except ModelError:
        return ""
    if gpu is None or not gpu.compute_capability:
        return ""
    if candidate.occupancy_override is not None:
        from gpumodeler.core.occupancy.compute_capability import architecture
        try:
            most = architecture(gpu.compute_capability).max_warps_per_sm
        except ModelError:
            return ""
        if candidate.occupancy_override > most:
            return (f"occupancy {candidate.occupancy_override:g} warps/SM: {gpu.name} runs at most "
                    f"{most} warps per SM (compute capability {gpu.compute_capability})")
        return ""
    from gpumodeler.core.occupancy.calculator import occupancy  # when first needed, as evaluate_launch does
    try:
        occupancy(gpu.compute_capability, candidate.block_size, candidate.registers,
                  candidate.shared_mem)
    except ModelError as exc:
        return str(exc)
    return ""


def launch_limit_problem(candidate, compute_capability=None) -> str:
    """Why CUDA cannot launch ``candidate``'s grid and block on a GPU of
    ``compute_capability`` (core.launch_limits: the same verdict as the CLI's), or ''.
    Values that are not whole numbers >= 1 are left to the field's own check."""
    block, grid, data = candidate.block_size, candidate.grid_size, candidate.data_size
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
               for v in (block, grid, data) if v is not None):
        return ""
    problem = launch_problem(block_size=block, compute_capability=compute_capability)
    if problem:
        return problem
    if data is not None:
        most = data_size_limit(block, compute_capability)
        if data > most:
            grid_x = limits(compute_capability).grid[0]
            return (f"data size N = {data:.4g} needs more than "
                    f"{'2^31 - 1' if grid_x == MAX_GRID_X else grid_x} blocks of {block} threads "
                    f"(CUDA's grid limit); at most {most:.4g}")
        grid = -(-data // block)
    return launch_problem(grid, block, compute_capability)


def missing_link_value(project, launch, link_spec, calibration_lookup=None):
    """(connection id, field, link name) of the first link value a transfer of ``launch``
    needs and the catalog does not know (bandwidth, or the startup time of the transfer's
    direction, unless a calibrated transfer model covers it), or None. ``link_spec``: catalog
    name -> LinkSpec; ``calibration_lookup`` as for evaluate_launch."""
    from gpumodeler.core.pipeline import resolve_link
    host = project.host_link_for(launch.gpu) if launch.transfers else None
    for t in launch.transfers:
        conn_id = t.connection or (host.id if host else None)
        if conn_id not in project.connections:
            return None
        try:
            spec = resolve_link(project, conn_id, link_spec, calibration_lookup)
        except (ModelError, LookupError, TypeError):
            return None
        if spec.transfer_model(t.direction) is not None:
            continue
        if spec.bandwidth_bytes_per_s is None:
            return conn_id, "bandwidth_bytes_per_s", spec.name
        if getattr(spec, f"startup_{t.direction}_s", None) is None:
            return conn_id, f"startup_{t.direction}_s", spec.name
    return None


def table_mismatch(graph, gpu, tables: dict):
    """(message, key of a table of the GPU's architecture or None) when ``graph``'s latency
    table is another architecture's than ``gpu``'s; None when they agree or either is
    unknown. ``tables``: key -> LatencyTable (the document's)."""
    if graph is None or gpu is None or not graph.latency_table:
        return None
    table = tables.get(graph.latency_table)
    arch = architecture_name(gpu.compute_capability)
    if table is None or not arch or not table.architecture:
        return None
    if table.architecture.split()[0] == arch.split()[0]:
        return None
    own = [key for key, t in tables.items() if (t.architecture or "").split()[0] == arch.split()[0]]
    own.sort(key=lambda k: ("gajger" not in k, k))  # Gajger's tables are the ones the model was calibrated with
    message = (f"The kernel's latencies are {table.name}'s ({table.architecture}), but {gpu.name} is "
               f"{arch}: the latency bound may be off.")
    if own:
        message += f" Use {tables[own[0]].name}?"
    else:
        message += f" The catalog has no {arch} latency table; give the edges' latencies yourself."
    return message, (own[0] if own else None)
