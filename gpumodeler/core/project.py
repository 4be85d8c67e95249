"""The project document: a system of devices and links, kernel graphs, launches, sweeps,
measurements, calibrations and a history of predictions.

Entities carry a stable string id and, where they are drawn, their canvas position (house style:
"position is document state"). Every mutation goes through :mod:`gpumodeler.core.commands`
(undoable); the project tells listeners ``(event, payload)`` after each change so views can
mirror it. Devices refer to the device catalog by name; a project stores only the
per-project overrides, so the catalog (gpumodeler.db) resolves the rest.

This module is the document model only. Predicting a launch (``evaluate_launch``,
``LaunchResult``, ``resolve_gpu``, ``resolve_link``, ``resolve_table``,
``transfer_calibration``) is :mod:`gpumodeler.core.pipeline`, which imports this module
(never the other way: no cycle).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

from gpumodeler.core.errors import InvalidParameter, LaunchError, ModelError
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.launch_limits import check_launch
from gpumodeler.core.override_types import check_overrides, check_value, type_name

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
                        item=self.id, extra=(TRANSFER_CALIBRATION, VIA))
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


#: the switches of a launch's kernel terms: (field, default)
TERM_SWITCHES = (("underfill", True), ("tail", False), ("launch_overhead", True))
#: the values of a launch's kernel terms, GPUSpec fields the launch gives in place of the
#: device database's: (field, must be > 0)
TERM_VALUES = (("launch_overhead_s", False), ("l2_bandwidth_bytes_per_s", True))


@dataclass(frozen=True)
class LaunchTerms:
    """The kernel-time terms of one launch (:mod:`gpumodeler.core.models.kernel_terms`),
    saved with it: the switches of :class:`~gpumodeler.core.models.result.KernelTerms` —
    under-filled GPU (Volkov 2016 §3.4, §5.6), tail of the last wave (Volkov 2016
    §5.6–5.9; off: Gajger 2017 eq. 4.1's mean occupancy), launch overhead — and the values
    the launch gives in place of its GPU's: the launch overhead in seconds and the L2
    bandwidth in bytes/s (None: the GPU's from the device database).

    The defaults are ``predict``'s, so a launch saved before launches had terms (an empty
    object in the file) predicts as it did. A file keeps only what differs from them
    (:meth:`saved`)."""

    underfill: bool = True
    tail: bool = False
    launch_overhead: bool = True
    launch_overhead_s: float | None = None
    l2_bandwidth_bytes_per_s: float | None = None

    def checked(self, where: str = "launch") -> "LaunchTerms":
        """Refuses a switch that is not true or false, a value that is not a finite number
        >= 0 (> 0 for the L2 bandwidth)."""
        for name, _default in TERM_SWITCHES:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise InvalidParameter(f"{where}: kernel term {name} is {type_name(value)} "
                                       f"({value!r}); expected true or false", item="terms")
        for name, positive in TERM_VALUES:
            check_value(getattr(self, name), "number", where, f"kernel term {name}",
                        item="terms", positive=positive)
        return self

    def kernel_terms(self):
        """The switches as the models take them (KernelTerms; the L2 term as ``predict``'s)."""
        from gpumodeler.core.models.result import KernelTerms
        return KernelTerms(underfill=self.underfill, tail=self.tail,
                           launch_overhead=self.launch_overhead)

    def gpu_values(self) -> dict:
        """The GPUSpec fields this launch gives (``with_overrides`` keywords), None left out."""
        return {name: getattr(self, name) for name, _pos in TERM_VALUES
                if getattr(self, name) is not None}

    def on_gpu(self, gpu):
        """``gpu`` (GPUSpec) with the values this launch gives in place of its own."""
        values = self.gpu_values()
        return gpu.with_overrides(**values) if values else gpu

    def saved(self) -> dict:
        """What a project file keeps: the fields that differ from the defaults."""
        default = LaunchTerms()
        return {name: getattr(self, name) for name in TERM_FIELDS
                if getattr(self, name) != getattr(default, name)}

    @classmethod
    def from_saved(cls, data, where: str = "launch") -> "LaunchTerms":
        """The terms a project file kept (:meth:`saved`); InvalidParameter for an unknown
        field or a value of the wrong type."""
        if not isinstance(data, dict):
            raise InvalidParameter(f"{where}: kernel terms are {type_name(data)}; expected an "
                                   f"object of name: value", item="terms")
        unknown = sorted(set(data) - set(TERM_FIELDS))
        if unknown:
            raise InvalidParameter(f"{where}: unknown kernel term(s) {', '.join(unknown)}; valid: "
                                   f"{', '.join(TERM_FIELDS)}", item="terms")
        return cls(**data).checked(where)


TERM_FIELDS = tuple(name for name, _ in TERM_SWITCHES) + tuple(name for name, _ in TERM_VALUES)


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
    # the kernel-time terms (switches and values) of this launch's prediction
    terms: LaunchTerms = field(default_factory=LaunchTerms)

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
        if not isinstance(self.terms, LaunchTerms):
            raise InvalidParameter(f"{where}: terms is {type_name(self.terms)}; expected the "
                                   f"launch's kernel terms", item="terms")
        self.terms.checked(where)
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
    missing = [x for x in (a, b) if x not in project.devices]
    if missing:
        return f"no device {missing[0]!r} on the canvas"
    if a == b:
        if link_type == "pcie" and project.devices[a].kind == "host":
            # a host-side link: a PCIe switch's uplink or a root port that GPU links name in
            # their ``via`` override (a host may have several: one per switch)
            return None
        return ("a link needs two different devices (a PCIe link from a host to itself is a "
                "host-side link: a PCIe switch's uplink or root port)")
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


#: Key of ``Connection.overrides`` naming the host-side link (a PCIe switch's uplink or a root
#: port, drawn as a PCIe link from the host to itself) that a GPU's PCIe link passes through:
#: copies of GPUs behind one switch share its bandwidth (docs/timeline.md).
VIA = "via"

#: Key of ``Connection.overrides`` naming the stored link calibration (its user's label, e.g.
#: "pinned" or an application) whose fitted transfer models this project uses on the link.
TRANSFER_CALIBRATION = "transfer_calibration"


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
    "check_project", "PlacedDevice", "Connection", "Transfer", "LaunchConfig", "LaunchTerms", "SweepDef", "Measurement",
    "Calibration", "PredictionRecord", "Project", "connection_refusal", "ModelError",
    "TRANSFER_CALIBRATION",
]
