"""An application from an Nsight Systems trace (``gpumodeler application import`` and
File › Import Application…; docs/timeline.md, "Applications from a trace").

:func:`plan_import` reads the export (:func:`gpumodeler.db.nsys_export.read_trace`), finds
or creates its GPUs in the device catalog, and returns the undoable edits that add the
trace's system (a host, the GPUs, a host link fitted to the copies), one launch per distinct
kernel configuration and the application (:func:`gpumodeler.core.application.trace.trace_application`)
to a project. Nothing is changed in the project until the caller does the returned
command; the export is only read.

GPUs: matched in the catalog by the trace's name (as given, then without a leading
``NVIDIA``); a GPU the catalog does not know is added to the user database with the trace's
facts (SMs, SM clock, memory bandwidth, L2, memory size, copy engines, compute
capability). A matched GPU whose catalog entry has no copy engines, or another number than
the trace's, gets the trace's number as a project override (the trace saw the board); a
trace whose copies in opposite directions overlapped had at least two, whatever its GPU
table says. The host is the project's first host, else a user-database host
named :data:`TRACE_HOST` (the trace says nothing about the CPU: the host holds no engine in
the timeline). A GPU already placed in the project under the same device name is reused,
with its host link and that link's host; otherwise (or when it has no host link) a new link
joins it to the host: the PCIe x16 link of the
lowest generation that carries the copies' rate, with its startup time and bandwidth of
each direction set from the trace's copies (:func:`fit_host_link`).
"""
from __future__ import annotations

from dataclasses import dataclass

from gpumodeler.core.application.app import Application
from gpumodeler.core.application.replay import graph_for_kernel, short_kernel_name
from gpumodeler.core.application.trace import trace_application
from gpumodeler.core.architectures import architecture_name
from gpumodeler.core.commands import AddConnection, AddItem, Macro
from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice

#: The user-database host an imported trace runs on when the project has no host.
TRACE_HOST = "Host of an imported trace"
#: The share of :func:`read_import`'s progress the kernels and copies take (the CUDA API
#: tables the rest).
READ_TRACE = 0.8
#: Base links tried for a new host link, slowest first (their values are replaced by the fit).
HOST_LINKS = ("PCIe 3.0 x16", "PCIe 4.0 x16", "PCIe 5.0 x16", "PCIe 6.0 x16")


@dataclass
class ImportPlan:
    """The edits that add a trace to a project, and what they hold."""

    command: Macro
    application: str  # the new application's id
    name: str
    steps: int
    kernels: int
    copies: int
    host_gaps: int
    host_delays: int
    inferred_dependencies: int
    launches: int
    gpus: list  # {"trace": name, "device": catalog name, "placed": id, "created": bool}
    link: dict | None  # the new host link's fitted values, None when an existing one is used
    measured_makespan_s: float
    notes: list
    added_devices: list  # names added to the catalog's user database (not undone with the edit)
    api_dependencies: int = 0   # event waits read from the export's CUDA API tables
    host_waits: int = 0         # host synchronisations read from them
    legacy_dependencies: int = 0    # implicit waits through the legacy default stream

    def to_json(self) -> dict:
        return {"application": self.application, "name": self.name, "steps": self.steps,
                "kernels": self.kernels, "copies": self.copies, "host_gaps": self.host_gaps,
                "host_delays": self.host_delays,
                "inferred_dependencies": self.inferred_dependencies,
                "launches": self.launches, "gpus": self.gpus, "link": self.link,
                "measured_makespan_s": self.measured_makespan_s, "notes": self.notes,
                "added_devices": self.added_devices,
                "api_dependencies": self.api_dependencies, "host_waits": self.host_waits,
                "legacy_dependencies": self.legacy_dependencies}


def _find_gpu(catalog, name: str):
    """The catalog's device name for a GPU as the trace names it, or None."""
    for candidate in (name, name[len("NVIDIA "):] if name.startswith("NVIDIA ") else None):
        if not candidate:
            continue
        try:
            summary = catalog.resolve(candidate)
        except ModelError:
            continue
        if summary.kind == "gpu":
            return summary.name
    return None


def _gpu_values(facts: dict) -> dict:
    values = {}
    for key, field_name in (("sm_count", "sms"), ("clock_hz", "sm_clock_hz"),
                            ("memory_bandwidth_bps", "memory_bandwidth_theoretical_bytes_per_s"),
                            ("l2_bytes", "l2_bytes"), ("total_memory_bytes", "memory_size_bytes"),
                            ("async_engines", "copy_engines"),
                            ("compute_capability", "compute_capability")):
        value = facts.get(key)
        if value not in (None, "", 0):
            values[field_name] = value
    arch = architecture_name(facts.get("compute_capability") or "")
    if arch:
        values["architecture"] = arch
    return values


def _directions_overlap(copies) -> bool:
    """Whether a host-to-device and a device-to-host copy ran at the same time (then the
    GPU has a copy engine per direction, whatever the trace's GPU table says)."""
    spans = sorted((r.start_s, r.end_s, r.direction) for r in copies
                   if r.direction in ("htod", "dtoh") and r.start_s is not None)
    last_end = {"htod": None, "dtoh": None}
    for start, end, direction in spans:
        other = last_end["dtoh" if direction == "htod" else "htod"]
        if other is not None and start < other:
            return True
        if last_end[direction] is None or end > last_end[direction]:
            last_end[direction] = end
    return False


def memory_kind_note(copies) -> str | None:
    """A note when host copies of one direction ran at clearly different rates by memory kind
    (pageable against pinned: the link model has one rate per direction), else None."""
    parts = []
    for direction in ("htod", "dtoh"):
        rates = {}
        for r in copies:
            if r.direction == direction and r.size_bytes and r.time_s:
                n, t = rates.get(r.memory_kind or "unknown", (0.0, 0.0))
                rates[r.memory_kind or "unknown"] = (n + r.size_bytes, t + r.time_s)
        by_kind = {k: n / t for k, (n, t) in rates.items() if t > 0}
        if len(by_kind) > 1 and max(by_kind.values()) > 1.2 * min(by_kind.values()):
            parts.append(f"{direction} " + ", ".join(f"{k} {v / 1e9:.3g} GB/s"
                                                     for k, v in sorted(by_kind.items())))
    if not parts:
        return None
    return ("copies of several memory kinds ran at different rates (" + "; ".join(parts)
            + "); the link has one rate per direction, fitted to all of them")


def fit_host_link(copies) -> dict:
    """Startup time and bandwidth of each direction from the trace's host copies (records
    with ``direction`` htod or dtoh, ``size_bytes``, ``time_s``): the least-squares line
    ``t = t_s + n / bw`` of eq. 5.5 (Gajger 2017 §5.2) with absolute weights, so that the
    large copies, which make most of the makespan, fit best; with fewer than two sizes, or
    times that do not grow with size, ``t_s`` = 0 and ``bw`` = total bytes / total time. A
    direction without copies takes the other's values. Returns link overrides
    (``bandwidth_bytes_per_s`` the faster direction's, ``lambda_*`` each direction's share
    of it) and ``fit`` (per direction: startup, bandwidth, copies)."""
    from gpumodeler.core.transfers.calibration import fit_link
    fitted = {}
    for direction in ("htod", "dtoh"):
        rows = [(r.size_bytes, r.time_s) for r in copies if r.direction == direction
                and r.size_bytes and r.time_s and r.time_s > 0]
        if not rows:
            continue
        sizes, times = [n for n, _ in rows], [t for _, t in rows]
        try:
            fit = fit_link(sizes, times, weighting="absolute")
            ts, bw = float(fit.startup_s), float(fit.effective_bandwidth_bytes_per_s)
        except (InvalidParameter, ArithmeticError):
            ts, bw = 0.0, sum(sizes) / sum(times)
        fitted[direction] = {"startup_s": ts, "bandwidth_bytes_per_s": bw, "copies": len(rows)}
    if not fitted:
        return {}
    for direction, other in (("htod", "dtoh"), ("dtoh", "htod")):
        if direction not in fitted:
            fitted[direction] = dict(fitted[other], copies=0)
    top = max(f["bandwidth_bytes_per_s"] for f in fitted.values())
    return {"bandwidth_bytes_per_s": top,
            "startup_htod_s": fitted["htod"]["startup_s"],
            "startup_dtoh_s": fitted["dtoh"]["startup_s"],
            "lambda_htod": fitted["htod"]["bandwidth_bytes_per_s"] / top,
            "lambda_dtoh": fitted["dtoh"]["bandwidth_bytes_per_s"] / top,
            "fit": fitted}


def _base_link(catalog, bandwidth: float) -> str:
    """The slowest PCIe x16 link of the catalog whose bandwidth carries ``bandwidth``."""
    known = []
    for name in HOST_LINKS:
        try:
            known.append((name, catalog.get(name).to_link_spec().bandwidth_bytes_per_s))
        except ModelError:
            continue
    if not known:
        raise InvalidParameter("the device database has no PCIe x16 link to join the trace's "
                               "GPU to its host; rebuild it (gpumodeler devices list)")
    for name, bw in known:
        if bw is not None and bw >= bandwidth:
            return name
    return known[-1][0]


class ImportCancelled(Exception):
    """Raised through a ``tick`` callback to stop an import (nothing has been changed)."""


@dataclass
class TraceRead:
    """What :func:`read_import` reads from an export (no catalog, no project: it may run off
    the GUI thread): the kernel and copy records, the export's GPUs by id, its rows of other
    kinds, and per traced device what its copies say (the host link's fit, whether copies in
    opposite directions overlapped, a note on memory kinds); ``all_copies_fit``: the fit to
    every copy of the trace (for a GPU without copies of its own)."""

    path: object
    records: list
    facts: dict
    other_rows: int
    copies_of: dict     # device -> {"fit": dict, "overlap": bool, "note": str | None}
    all_copies_fit: dict
    api: object = None  # TraceApi: the CUDA API and synchronisation tables, when read
    streams: object = None  # StreamKinds: the legacy and non-blocking streams, when known


def read_import(path, tick=None) -> TraceRead:
    """Read the export at ``path`` for an import. ``tick(fraction)``, when given, is called
    as the rows are read (it may raise to stop). FormatError (one line) for a file that is
    not an Nsight Systems export with a kernel table or holds no kernel or copy."""
    from pathlib import Path

    from gpumodeler.core.kernel.collector import collector_paused
    from gpumodeler.db.nsys_export import read_api, read_trace
    from gpumodeler.db.nsys_streams import read_stream_kinds

    path = Path(path)
    # 10^5 records make millions of objects that live to the end of the import: the
    # cyclic collector's passes over them took a fifth of the time, and nothing here makes
    # cycles to collect
    with collector_paused():
        result = read_trace(path, tick=None if tick is None else lambda f: tick(READ_TRACE * f))
        records = [r for r in result.records if r.kind in ("kernel", "transfer")]
        copies = [r for r in records if r.kind == "transfer"]
        by_device: dict = {}
        for r in copies:
            by_device.setdefault(r.device, []).append(r)
        copies_of = {device: {"fit": fit_host_link(mine), "overlap": _directions_overlap(mine),
                              "note": memory_kind_note(mine)}
                     for device, mine in by_device.items()}
        api = read_api(path, tick=None if tick is None else
                       lambda f: tick(READ_TRACE + (1 - READ_TRACE) * f))
        return TraceRead(path, records, {d["id"]: d for d in result.devices},
                         result.other_rows, copies_of, fit_host_link(copies), api,
                         read_stream_kinds(path))


@dataclass
class PreparedImport:
    """The catalog's answers for an import (:func:`prepare_import`, on the catalog's
    thread): the edits that add the system, the devices still to add to the user database
    (kind, name, values; added by :func:`add_devices` when the import is done), and what
    :func:`finish_import` needs to turn the records into steps."""

    commands: list
    gpus: list
    link: dict | None
    notes: list
    to_add: list
    placed_of: dict
    traced_name: dict
    engines: dict
    host_of: dict
    taken: set


def prepare_import(project, trace: TraceRead, catalog) -> PreparedImport:
    """Match the trace's GPUs in ``catalog`` and make the edits that place them (module
    docstring); reads the catalog only (a GPU or host it lacks is listed in ``to_add``).
    InvalidParameter for a catalog without a PCIe x16 link."""
    records, facts = trace.records, trace.facts
    used = list(dict.fromkeys(r.device for r in records))
    notes: list = []
    commands: list = []
    gpus: list = []
    to_add: list = []
    taken = set().union(project.devices, project.connections, project.kernels, project.launches,
                        project.sweeps, project.measurements, project.calibrations,
                        project.history, project.applications)

    def new_id(prefix):
        return _new_id(taken, prefix)

    hosts = [d for d in project.devices.values() if d.kind == "host"]
    if hosts:
        host_id = hosts[0].id
    else:
        host_id = new_id("host")
        try:
            host_name = catalog.resolve(TRACE_HOST).name
        except ModelError:
            host_name = TRACE_HOST
            to_add.append(("host", TRACE_HOST, {}))
        commands.append(AddItem("devices", PlacedDevice(
            host_id, "host", host_name, label="host", x=0.0, y=0.0)))
    placed_of: dict = {}
    traced_name: dict = {}
    engines: dict = {}
    host_of: dict = {}
    link_values = None
    for i, device in enumerate(used):
        gpu = facts.get(device) or {}
        trace_name = gpu.get("name") or f"GPU {device}"
        catalog_name = _find_gpu(catalog, trace_name)
        values = _gpu_values(gpu)
        pending = {n: v for _kind, n, v in to_add}
        if catalog_name is None:
            catalog_name = " ".join(trace_name.split())     # (as the catalog stores it)
        created = catalog_name not in pending and _find_gpu(catalog, catalog_name) is None
        if created:
            if not values:
                notes.append(f"{trace_name}: the trace gives none of its facts; set them in "
                             f"the device editor before predicting on it elsewhere")
            to_add.append(("gpu", catalog_name, values))
            pending[catalog_name] = values
        traced_name[device] = catalog_name
        mine = trace.copies_of.get(device)
        seen = 2 if mine and mine["overlap"] else 1
        engines[device] = max(gpu.get("async_engines") or 1, seen)
        gpus.append({"trace": trace_name, "device": catalog_name, "created": created})
        reuse = [d for d in project.gpus() if d.device_name == catalog_name
                 and d.id not in placed_of.values()]   # (eight A100s are eight GPUs)
        if reuse:
            gid = placed_of[device] = gpus[-1]["placed"] = reuse[0].id
            link = project.host_link_for(gid)
            if link is not None:    # its copies go over its own host link, as it is
                host_of[device] = link.a if link.b == gid else link.b
                continue
        else:
            gid = placed_of[device] = gpus[-1]["placed"] = new_id("gpu")
            overrides = {}
            if gpu.get("async_engines") or seen > 1:
                known = pending[catalog_name].get("copy_engines") if catalog_name in pending \
                    else catalog.get(catalog_name).to_gpu_spec().copy_engines
                if known is None or known < seen or (gpu.get("async_engines") and
                                                     known != gpu["async_engines"]):
                    overrides["copy_engines"] = int(engines[device])
            commands.append(AddItem("devices", PlacedDevice(
                gid, "gpu", catalog_name, overrides=overrides, label=trace_name,
                x=250.0, y=150.0 * i)))
        host_of[device] = host_id
        fit = mine["fit"] if mine else trace.all_copies_fit
        if mine and mine["note"]:
            notes.append(f"{trace_name}: {mine['note']}")
        if fit:
            link_values = {k: v for k, v in fit.items() if k != "fit"}
            base = _base_link(catalog, link_values["bandwidth_bytes_per_s"])
            commands.append(AddConnection(Connection(
                new_id("conn"), base, host_id, gid, "pcie", overrides=link_values,
                label="host link (from the trace's copies)")))
            link_values = dict(fit, link=base)
        else:
            base = _base_link(catalog, 0.0)
            commands.append(AddConnection(Connection(new_id("conn"), base, host_id, gid, "pcie")))
    return PreparedImport(commands, gpus, link_values, notes, to_add, placed_of, traced_name,
                          engines, host_of, taken)


def _new_id(taken: set, prefix: str) -> str:
    """An id free in the project (as Project.new_id) and in this plan (``taken``)."""
    n = 1
    while f"{prefix}{n}" in taken:
        n += 1
    taken.add(f"{prefix}{n}")
    return f"{prefix}{n}"


def finish_import(project, trace: TraceRead, prepared: PreparedImport,
                  name: str | None = None, tick=None) -> ImportPlan:
    """The import's plan from the records and the catalog's answers: the steps
    (:func:`gpumodeler.core.application.trace.trace_application`), one launch per distinct
    kernel configuration, the application. Pure (no catalog): may run off the GUI thread
    while the project is not edited. ``tick(fraction)`` as in :func:`read_import`."""
    from gpumodeler.core.kernel.collector import collector_paused

    with collector_paused():
        return _finish_import(project, trace, prepared, name, tick)


def _finish_import(project, trace, prepared, name, tick) -> ImportPlan:
    commands = list(prepared.commands)
    notes = list(prepared.notes)
    taken = set(prepared.taken)
    placed_of = prepared.placed_of
    launch_ids: list = []

    def launch_id(index: int) -> str:   # asked in the launches' order, once each
        launch_ids.append(_new_id(taken, "launch"))
        return launch_ids[index]
    traced = trace_application(trace.records, gpu_of=placed_of.__getitem__,
                               host_of=prepared.host_of.__getitem__,
                               traced_name_of=prepared.traced_name.__getitem__,
                               copy_engines=prepared.engines, launch_id_of=launch_id,
                               tick=tick, api=trace.api, streams=trace.streams)
    for tl, lid in zip(traced.launches, launch_ids):
        commands.append(AddItem("launches", LaunchConfig(
            lid, short_kernel_name(tl.name) or tl.name, gpu=placed_of[tl.device],
            kernel=graph_for_kernel(project, tl.name), block_size=tl.block,
            grid_size=tl.grid, registers=min(max(tl.registers, 0), 255),
            shared_mem=tl.shared_mem)))
    steps = traced.steps
    app_id = _new_id(taken, "app")
    app_name = (name or "").strip() or trace.path.stem
    commands.append(AddItem("applications", Application(app_id, app_name, steps,
                                                        policy="in-order")))
    skipped = traced.counts["skipped"]
    if skipped:
        notes.append("not imported: " + ", ".join(f"{n} {k}(s)" for k, n in skipped.items()))
    if trace.other_rows:
        notes.append(f"not imported: {trace.other_rows} memset(s) or copies of other kinds "
                     f"(their time is in the host gaps and delays)")
    c = traced.counts
    if c["legacy_contradicted"]:
        notes.append(f"{c['legacy_contradicted']} step(s) overlapped a step of the legacy "
                     f"default stream that they would wait for (or be waited for by): no "
                     f"dependency added between them (another context, or a stream the "
                     f"export does not mark non-blocking)")
    return ImportPlan(Macro(f"import application {app_name}", commands), app_id, app_name,
                      len(steps), c["kernels"], c["copies"], c["host_gaps"], c["host_delays"],
                      c["inferred_dependencies"], len(launch_ids), prepared.gpus, prepared.link,
                      traced.measured_makespan_s, notes,
                      [name for _kind, name, _values in prepared.to_add],
                      c["api_dependencies"], c["host_waits"], c["legacy_dependencies"])


def add_devices(catalog, prepared: PreparedImport) -> None:
    """Add the devices the import needs and the catalog lacks to its user database (a
    device already there by now is left as it is)."""
    for kind, name, values in prepared.to_add:
        try:
            catalog.resolve(name)
        except ModelError:
            catalog.add_device(kind, name, values=values)


def plan_import(project, path, catalog, name: str | None = None) -> ImportPlan:
    """The edits that add the trace at ``path`` to ``project`` (module docstring), in one
    go: :func:`read_import`, :func:`prepare_import`, :func:`finish_import`, then the GPUs
    the catalog lacks (and the trace host) are added to its user database. FormatError for
    a file that is not an Nsight Systems export with a kernel table or holds no kernel or
    copy; InvalidParameter for a trace the project cannot take."""
    trace = read_import(path)
    prepared = prepare_import(project, trace, catalog)
    plan = finish_import(project, trace, prepared, name)
    add_devices(catalog, prepared)
    return plan


__all__ = ["HOST_LINKS", "ImportCancelled", "ImportPlan", "PreparedImport", "TRACE_HOST",
           "TraceRead", "add_devices", "finish_import", "fit_host_link", "memory_kind_note",
           "plan_import", "prepare_import", "read_import"]
