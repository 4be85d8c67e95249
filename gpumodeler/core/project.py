"""The project document: a system of devices and links, kernel graphs, launches, sweeps,
measurements, calibrations and a history of predictions.

Entities carry a stable string id and, where they are drawn, their canvas position (house style:
"position is document state"). Every mutation goes through :mod:`gpumodeler.core.commands`
(undoable); the project tells listeners ``(event, payload)`` after each change so views can
mirror it. Devices refer to the device catalog by name; a project stores only the
per-project overrides, so the catalog (gpumodeler.db) resolves the rest. Core never touches
the database: :func:`evaluate_launch` takes resolver callables instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
import math

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter, LaunchError, ModelError, shown
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.launch_limits import check_launch
from gpumodeler.core.override_types import check_overrides, check_value, type_name
from gpumodeler.core.models.kernel_time import grid_for
from gpumodeler.core.models.gajger import ApplicationPrediction, kernel_inputs_from_graph, predict

DEVICE_KINDS = ("gpu", "host")
KERNEL_INPUT_NAMES = ("latency_bound", "issued_instructions", "cuda_core_instructions", "gmem_bytes",
                      "sfu_instructions", "fp64_instructions", "smem_bank_cycles")
LINK_TYPES = ("pcie", "nvlink", "network", "other")


@dataclass(frozen=True)
class PlacedDevice:
    """A GPU or host from the catalog, placed on the system canvas ``count`` times."""

    id: str
    kind: str
    device_name: str
    count: int = 1
    overrides: dict = field(default_factory=dict)  # field -> value, this project only
    label: str = ""
    x: float = 0.0
    y: float = 0.0

    def checked(self) -> "PlacedDevice":
        if self.kind not in DEVICE_KINDS:
            raise InvalidParameter(f"device kind must be one of {', '.join(DEVICE_KINDS)}, got {self.kind!r}", item=self.id)
        if not isinstance(self.count, int) or isinstance(self.count, bool) or not 1 <= self.count <= 1024:
            raise InvalidParameter(f"{self.label or self.device_name}: count must be a whole number 1..1024, got {self.count!r}", item=self.id)
        if not self.device_name:
            raise InvalidParameter("a placed device needs a device name from the catalog", item=self.id)
        check_overrides(self.overrides, "gpu" if self.kind == "gpu" else "host",
                        f"device {self.label or self.id}", item=self.id)
        return self


@dataclass(frozen=True)
class Connection:
    """A link (from the catalog) joining two placed devices."""

    id: str
    link_name: str
    a: str
    b: str
    link_type: str = "pcie"
    overrides: dict = field(default_factory=dict)
    label: str = ""

    def checked(self) -> "Connection":
        """Refuses overrides of a field no link has or of the wrong type (the link's
        ``transfer_calibration`` label is text)."""
        check_overrides(self.overrides, "link", f"link {self.label or self.link_name or self.id}",
                        item=self.id, extra=(TRANSFER_CALIBRATION,))
        return self


@dataclass(frozen=True)
class Transfer:
    """One host<->device copy of a launch; ``size`` is bytes or an expression of the data
    size ``N`` and the launch variables (e.g. ``4*N``)."""

    direction: str
    size: str
    connection: str | None = None

    def checked(self) -> "Transfer":
        if self.direction not in ("htod", "dtoh"):
            raise InvalidParameter(f"transfer direction must be htod or dtoh, got {self.direction!r}")
        parse(self.size)
        return self


@dataclass(frozen=True)
class LaunchConfig:
    """A kernel launch: which GPU (placed device id) runs which kernel, how.

    The grid is ``grid_size`` blocks or, when ``data_size`` is given, ceil(N / block).
    Occupancy comes from the calculator (registers, shared memory) unless
    ``occupancy_override`` (warps per SM) is set."""

    id: str
    name: str = "launch"
    gpu: str | None = None
    kernel: str | None = None
    block_size: int = 256
    grid_size: int | None = None
    data_size: int | None = None
    registers: int = 32
    shared_mem: int = 0
    occupancy_override: float | None = None
    lam: float = 1.0
    variables: dict = field(default_factory=dict)
    transfers: tuple = ()
    # expert mode: per-warp inputs given as expressions of the variables instead of derived
    # from the graph, e.g. {"issued_instructions": "26 + 4*a"} (Gajger Fig. 5.23)
    kernel_overrides: dict = field(default_factory=dict)

    def checked_types(self) -> "LaunchConfig":
        """Refuses values of the wrong type, which a project file can hold (text where a
        number belongs, a number that is not finite); the ranges are :meth:`checked`'s."""
        where = f"launch {self.name or self.id}"
        check_value(self.occupancy_override, "number", where, "occupancy_override",
                    item="occupancy_override", signed=True)
        check_value(self.lam, "number", where, "λ (lam)", item="lam", signed=True,
                    nullable=False)
        for name, kind in (("block_size", "whole"), ("grid_size", "whole"),
                           ("data_size", "whole"), ("registers", "whole"),
                           ("shared_mem", "whole")):
            check_value(getattr(self, name), kind, where, name, item=name, signed=True,
                        nullable=name in ("grid_size", "data_size"))  # ranges: checked()
        for what, mapping, kind in (("variables", self.variables, "number"),
                                    ("kernel_overrides", self.kernel_overrides, "text")):
            if not isinstance(mapping, dict):
                raise InvalidParameter(f"{where}: {what} is {type_name(mapping)}; expected an "
                                       f"object of name: value", item=what)
            for key, value in mapping.items():
                check_value(value, kind, where, f"{what} {key}", item=what, nullable=False,
                            signed=True)
        return self

    def checked(self) -> "LaunchConfig":
        self.checked_types()

        def positive_int(name, v, allow_none=False):
            if v is None and allow_none:
                return
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidParameter(f"{name} must be a whole number >= 1, got {v!r}", item=name)
        positive_int("block_size", self.block_size)
        positive_int("grid_size", self.grid_size, True)
        positive_int("data_size", self.data_size, True)
        try:  # CUDA's limits of any GPU (evaluate_launch checks its GPU's)
            check_launch(self.grid_size, self.block_size)
        except LaunchError as exc:
            raise InvalidParameter(str(exc), item=exc.item) from None
        if isinstance(self.registers, bool) or not isinstance(self.registers, int) or not 0 <= self.registers <= 255:
            raise InvalidParameter(f"registers per thread must be 0..255, got {self.registers!r}", item="registers")
        if isinstance(self.shared_mem, bool) or not isinstance(self.shared_mem, int) or self.shared_mem < 0:
            raise InvalidParameter(f"shared memory must be a whole number of bytes >= 0, got {self.shared_mem!r}", item="shared_mem")
        if self.occupancy_override is not None and not (0 < self.occupancy_override <= 1024):
            raise InvalidParameter(f"occupancy must be > 0 warps per SM, got {self.occupancy_override}", item="occupancy_override")
        if not (isinstance(self.lam, (int, float)) and math.isfinite(self.lam) and self.lam > 0):
            raise InvalidParameter(f"λ must be a number > 0, got {self.lam!r}", item="lam")
        for t in self.transfers:
            t.checked()
        bad = sorted(set(self.kernel_overrides) - set(KERNEL_INPUT_NAMES))
        if bad:
            raise InvalidParameter(f"unknown kernel input(s) {', '.join(bad)}; valid: {', '.join(KERNEL_INPUT_NAMES)}",
                                   item="kernel_overrides")
        for k, v in self.kernel_overrides.items():
            parse(v)
        return self


@dataclass(frozen=True)
class SweepDef:
    """A saved sweep: one variable (block_size, occupancy, data_size, a loop variable or
    'gpu') over ``values`` (or GPU names) for a launch."""

    id: str
    launch: str
    variable: str
    values: tuple
    devices: tuple = ()
    name: str = ""


@dataclass(frozen=True)
class Measurement:
    """A measured time: ``what`` is 'kernel', 'htod' or 'dtoh'; ``parameters`` the value
    of the swept variable(s) (e.g. {"data_size": 4e8}) or size in bytes for transfers."""

    id: str
    launch: str | None
    what: str
    parameters: dict
    time_s: float
    source: str = ""


@dataclass(frozen=True)
class Calibration:
    id: str
    launch: str | None
    what: str  # 'kernel' | 'htod' | 'dtoh'
    values: dict  # lam / startup_s / bandwidth_bytes_per_s
    mape_percent: float
    created: str = ""


@dataclass(frozen=True)
class PredictionRecord:
    id: str
    created: str
    launch: str | None
    inputs: dict
    outputs: dict


class Project:
    """The whole document. Collections are dicts id -> frozen value (kernels are mutable
    KernelGraph entities). Use commands to change it; read it freely."""

    def __init__(self, name: str = "untitled"):
        self.name = name
        self.description = ""
        self.devices: dict[str, PlacedDevice] = {}
        self.connections: dict[str, Connection] = {}
        self.kernels: dict[str, KernelGraph] = {}
        self.launches: dict[str, LaunchConfig] = {}
        self.sweeps: dict[str, SweepDef] = {}
        self.measurements: dict[str, Measurement] = {}
        self.calibrations: dict[str, Calibration] = {}
        self.history: dict[str, PredictionRecord] = {}
        self.applications: dict = {}  # id -> core.application.app.Application
        self.listeners: list = []
        self._kernel_relays: dict = {}

    # -- events ----------------------------------------------------------------------------
    def emit(self, event: str, payload) -> None:
        for fn in list(self.listeners):
            fn(event, payload)

    def new_id(self, prefix: str) -> str:
        taken = set(self.devices) | set(self.connections) | set(self.kernels) | set(self.launches) \
            | set(self.sweeps) | set(self.measurements) | set(self.calibrations) | set(self.history) \
            | set(self.applications)
        n = 1
        while f"{prefix}{n}" in taken:
            n += 1
        return f"{prefix}{n}"

    # -- low-level setters used by commands (they emit; they do not record undo) ------------
    def put(self, collection: str, item) -> None:
        table = getattr(self, collection)
        existed = item.id in table if hasattr(item, "id") else False
        table[item.id] = item
        self.emit(f"{collection}_changed" if existed else f"{collection}_added", item)

    def drop(self, collection: str, item_id: str):
        table = getattr(self, collection)
        item = table.pop(item_id)
        self.emit(f"{collection}_removed", item)
        return item

    def put_kernel(self, kernel_id: str, graph: KernelGraph) -> None:
        existed = kernel_id in self.kernels
        self.kernels[kernel_id] = graph
        relay = lambda event, payload, kid=kernel_id: self.emit("kernel_edited", (kid, event, payload))
        old = self._kernel_relays.pop(kernel_id, None)
        if old and existed:
            try:
                self.kernels[kernel_id].listeners.remove(old)
            except ValueError:
                pass
        graph.listeners.append(relay)
        self._kernel_relays[kernel_id] = relay
        self.emit("kernels_changed" if existed else "kernels_added", (kernel_id, graph))

    def drop_kernel(self, kernel_id: str) -> KernelGraph:
        graph = self.kernels.pop(kernel_id)
        relay = self._kernel_relays.pop(kernel_id, None)
        if relay in graph.listeners:
            graph.listeners.remove(relay)
        self.emit("kernels_removed", (kernel_id, graph))
        return graph

    # -- queries ---------------------------------------------------------------------------
    def connections_of(self, device_id: str) -> list[Connection]:
        return [c for c in self.connections.values() if device_id in (c.a, c.b)]

    def gpus(self) -> list[PlacedDevice]:
        return [d for d in self.devices.values() if d.kind == "gpu"]

    def host_link_for(self, gpu_id: str) -> Connection | None:
        """The first link joining the GPU to a host (for host<->device transfers)."""
        for c in self.connections_of(gpu_id):
            other = c.b if c.a == gpu_id else c.a
            if other in self.devices and self.devices[other].kind == "host":
                return c
        return None

    def __eq__(self, other):
        if not isinstance(other, Project):
            return NotImplemented
        fields_ = ("name", "description", "devices", "connections", "kernels", "launches",
                   "sweeps", "measurements", "calibrations", "history", "applications")
        return all(getattr(self, f) == getattr(other, f) for f in fields_)


def launch_resources(graph) -> dict:
    """A new launch's ``registers`` and ``shared_mem`` from what the kernel's listing says
    the compiler allocated (``registers_per_thread``, ``static_shared_bytes``, set by the
    SASS import); {} when the graph does not say (the launch's defaults stand)."""
    if graph is None or not graph.registers_per_thread:
        return {}
    out = {"registers": int(graph.registers_per_thread)}
    if graph.static_shared_bytes is not None:
        out["shared_mem"] = int(graph.static_shared_bytes)
    return out


def connection_refusal(project: Project, a: str, b: str, link_type: str) -> str | None:
    """Why a link of ``link_type`` cannot join devices ``a`` and ``b``, or None if it can.

    PCIe joins a host and a GPU (or two GPUs behind a switch); NVLink joins GPUs (NVLink-C2C
    hosts such as Grace are modelled as a host with an NVLink); a network link joins hosts."""
    if link_type not in LINK_TYPES:
        return f"link type must be one of {', '.join(LINK_TYPES)}"
    if a == b:
        return "a link needs two different devices"
    missing = [x for x in (a, b) if x not in project.devices]
    if missing:
        return f"no device {missing[0]!r} on the canvas"
    ka, kb = project.devices[a].kind, project.devices[b].kind
    kinds = {ka, kb}
    if link_type == "network" and kinds != {"host"}:
        return "a network link joins two hosts; GPUs reach the network through their host"
    if link_type == "pcie" and kinds == {"host"}:
        return "PCIe joins a host to a GPU (or two GPUs); two hosts need a network link"
    for c in project.connections.values():
        if {c.a, c.b} == {a, b} and c.link_type == link_type:
            return f"these devices are already joined by {c.link_name}"
    return None


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


def resolve_table(key: str | None, table_lookup=None):
    """What analyze() takes for ``key``: the key of a built-in table (or None), else the
    table ``table_lookup(key)`` finds; without a lookup an unknown key stays a key (and
    analyze reports it)."""
    from gpumodeler.core.kernel.latency_tables import TABLES
    if key is None or key in TABLES or table_lookup is None:
        return key
    return table_lookup(key)


def resolve_gpu(project: Project, device_id: str, gpu_lookup) -> GPUSpec:
    """Catalog spec of a placed GPU with the project's overrides applied."""
    placed = project.devices.get(device_id)
    if placed is None or placed.kind != "gpu":
        raise InvalidParameter("choose a GPU for the launch (none is selected)", item="gpu")
    check_overrides(placed.overrides, "gpu", f"device {placed.label or placed.id}", item=placed.id)
    spec = gpu_lookup(placed.device_name)
    return spec.with_overrides(**placed.overrides) if placed.overrides else spec


#: Key of ``Connection.overrides`` naming the stored link calibration (its user's label, e.g.
#: "pinned" or an application) whose fitted transfer models this project uses on the link.
TRANSFER_CALIBRATION = "transfer_calibration"


def transfer_calibration(connection: Connection) -> str | None:
    """The calibration label a connection uses (None: the nominal link, eq. 5.5)."""
    label = connection.overrides.get(TRANSFER_CALIBRATION)
    if label is None:
        return None
    if not isinstance(label, str) or not label.strip():
        raise InvalidParameter(f"link {connection.link_name!r}: {TRANSFER_CALIBRATION} must be the "
                               f"label of a stored link calibration (a non-empty text), got {label!r}",
                               item=connection.id)
    return label


def resolve_link(project: Project, connection_id: str, link_lookup,
                 calibration_lookup=None) -> LinkSpec:
    """Catalog spec of a connection's link with the project's overrides applied. When the
    connection names a calibration (overrides[``transfer_calibration``]),
    ``calibration_lookup(link_name, label) -> LinkSpec`` gives the link carrying that
    calibration's fitted transfer models (the db layer's ``calibrated_link_spec``); it raises
    InvalidParameter when the link has no calibration of that label."""
    conn = project.connections[connection_id].checked()
    overrides = dict(conn.overrides)
    label = transfer_calibration(conn)
    overrides.pop(TRANSFER_CALIBRATION, None)
    if label is None:
        spec = link_lookup(conn.link_name)
    elif calibration_lookup is None:
        raise InvalidParameter(f"link {conn.link_name!r} uses the transfer calibration {label!r}, but "
                               "no calibration store is available here to look it up (labels: unknown); "
                               "clear the link's calibration to use the nominal link", item=conn.id)
    else:
        spec = calibration_lookup(conn.link_name, label)
    return replace(spec, **overrides) if overrides else spec


def evaluate_launch(project: Project, launch_id: str, gpu_lookup, link_lookup,
                    values: dict | None = None, table_lookup=None,
                    include_transfers: bool = True, calibration_lookup=None,
                    terms=None) -> LaunchResult:
    """Predict a launch of the project: occupancy, latency bound, kernel and transfer times.

    ``include_transfers=False`` predicts the kernel alone (no link is resolved): what can
    still be shown when a transfer cannot be predicted (e.g. a link without startup time).

    ``gpu_lookup(name) -> GPUSpec`` and ``link_lookup(name) -> LinkSpec`` resolve catalog
    names (the db layer provides them); ``table_lookup(key) -> LatencyTable`` resolves a
    latency table that is not built in (a user's or the device database's). ``values``
    override launch variables. ``calibration_lookup(link_name, label) -> LinkSpec`` resolves
    a connection's ``transfer_calibration`` (see :func:`resolve_link`).

    ``terms`` switches the kernel terms (:class:`~gpumodeler.core.models.result.KernelTerms`;
    default: ``predict``'s — under-filled GPU on, tail off, launch overhead when the GPU's
    is known). A launch has no working set, so the L2 term stays off here; the result's
    ``prediction.terms`` lists what applied."""
    from gpumodeler.core.kernel.latency_bound import analyze
    from gpumodeler.core.models.result import KernelTerms
    from gpumodeler.core.occupancy.calculator import occupancy as occupancy_of

    if launch_id not in project.launches:
        raise InvalidParameter(f"the project has no launch {shown(launch_id)} (launches: "
                               f"{', '.join(sorted(project.launches)) or 'none'})", item="launch")
    launch = project.launches[launch_id].checked()
    gpu = resolve_gpu(project, launch.gpu, gpu_lookup)
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
    if "warps_per_block" in graph.variables and "warps_per_block" not in {**launch.variables,
                                                                          **(values or {})}:
        # the launch's block, where a guard runs once per block (core.kernel.sass.guards)
        variables["warps_per_block"] = -(-launch.block_size // gpu.warp_size)
    check_launch(grid, launch.block_size, gpu.compute_capability)
    # a graph without its own table takes the GPU's (every Volta-or-later GPU links one)
    bound = analyze(graph, resolve_table(graph.latency_table or gpu.latency_table, table_lookup))
    inputs = kernel_inputs_from_graph(graph, variables, bound=bound, warp_size=gpu.warp_size)
    if launch.kernel_overrides:
        inputs = inputs.overridden(**{k: parse(v).evaluate(variables) for k, v in launch.kernel_overrides.items()})
    transfers, link = [], None
    launch_transfers = launch.transfers if include_transfers else ()
    host_link = project.host_link_for(launch.gpu) if launch_transfers else None
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
                         terms=KernelTerms() if terms is None else terms)
    formula = launch.kernel_overrides.get("latency_bound") or bound.formula()
    return LaunchResult(gpu, link, float(warps), detail, float(inputs.latency_bound), formula,
                        grid, prediction)


def check_project(project: Project) -> Project:
    """Refuse a project whose values have the wrong types (:mod:`gpumodeler.core.override_types`):
    every device's and link's overrides, every launch's occupancy override, λ, sizes,
    variables and kernel overrides. A reader calls it once the file is read, so a bad value
    is named at load, not at use. (Ranges, and what refers to what, are checked where a
    launch is evaluated: a saved sweep of a launch the project lacks is refused by itself.)"""
    for d in project.devices.values():
        d.checked()
    for c in project.connections.values():
        c.checked()
    for la in project.launches.values():
        la.checked_types()
    return project


__all__ = [
    "check_project", "PlacedDevice", "Connection", "Transfer", "LaunchConfig", "SweepDef", "Measurement",
    "Calibration", "PredictionRecord", "Project", "connection_refusal", "evaluate_launch",
    "resolve_gpu", "resolve_link", "LaunchResult", "ModelError", "TRANSFER_CALIBRATION",
    "transfer_calibration",
]
