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

    def to_json(self) -> dict:
        return {"application": self.application, "name": self.name, "steps": self.steps,
                "kernels": self.kernels, "copies": self.copies, "host_gaps": self.host_gaps,
                "host_delays": self.host_delays,
                "inferred_dependencies": self.inferred_dependencies,
                "launches": self.launches, "gpus": self.gpus, "link": self.link,
                "measured_makespan_s": self.measured_makespan_s, "notes": self.notes,
                "added_devices": self.added_devices}


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


def _host_device(catalog, added: list) -> str:
    try:
        return catalog.resolve(TRACE_HOST).name
    except ModelError:
        added.append(TRACE_HOST)
        return catalog.add_device("host", TRACE_HOST).name


def plan_import(project, path, catalog, name: str | None = None) -> ImportPlan:
    """The edits that add the trace at ``path`` to ``project`` (module docstring).
    FormatError for a file that is not an Nsight Systems export with a kernel table or
    holds no kernel or copy; InvalidParameter for a trace the project cannot take. May
    add the trace's GPUs (and the trace host) to the catalog's user database."""
    from gpumodeler.core.kernel.collector import collector_paused

    # 10^5 records make millions of objects that live to the end of the import: the
    # cyclic collector's passes over them took a fifth of the time, and nothing here makes
    # cycles to collect
    with collector_paused():
        return _plan_import(project, path, catalog, name)


def _plan_import(project, path, catalog, name: str | None) -> ImportPlan:
    from pathlib import Path

    from gpumodeler.db.nsys_export import read_trace

    path = Path(path)
    result = read_trace(path)
    records = [r for r in result.records if r.kind in ("kernel", "transfer")]
    facts = {d["id"]: d for d in result.devices}
    used = list(dict.fromkeys(r.device for r in records))
    notes, commands, gpus, added = [], [], [], []
    taken = set().union(project.devices, project.connections, project.kernels, project.launches,
                        project.sweeps, project.measurements, project.calibrations,
                        project.history, project.applications)

    def new_id(prefix):
        """An id free in the project (as Project.new_id) and in this plan."""
        n = 1
        while f"{prefix}{n}" in taken:
            n += 1
        taken.add(f"{prefix}{n}")
        return f"{prefix}{n}"

    hosts = [d for d in project.devices.values() if d.kind == "host"]
    if hosts:
        host_id = hosts[0].id
    else:
        host_id = new_id("host")
        commands.append(AddItem("devices", PlacedDevice(
            host_id, "host", _host_device(catalog, added), label="host", x=0.0, y=0.0)))
    placed_of, traced_name, engines, host_of = {}, {}, {}, {}
    copies = [r for r in records if r.kind == "transfer"]
    link_values = None
    for i, device in enumerate(used):
        gpu = facts.get(device) or {}
        trace_name = gpu.get("name") or f"GPU {device}"
        catalog_name = _find_gpu(catalog, trace_name)
        created = catalog_name is None
        values = _gpu_values(gpu)
        if created:
            if not values:
                notes.append(f"{trace_name}: the trace gives none of its facts; set them in "
                             f"the device editor before predicting on it elsewhere")
            catalog_name = catalog.add_device("gpu", trace_name, values=values).name
            added.append(catalog_name)
        traced_name[device] = catalog_name
        mine = [r for r in copies if r.device == device]
        seen = 2 if _directions_overlap(mine) else 1
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
                known = catalog.get(catalog_name).to_gpu_spec().copy_engines
                if known is None or known < seen or (gpu.get("async_engines") and
                                                     known != gpu["async_engines"]):
                    overrides["copy_engines"] = int(engines[device])
            commands.append(AddItem("devices", PlacedDevice(
                gid, "gpu", catalog_name, overrides=overrides, label=trace_name,
                x=250.0, y=150.0 * i)))
        host_of[device] = host_id
        fit = fit_host_link(mine or copies)
        note = memory_kind_note(mine)
        if note:
            notes.append(f"{trace_name}: {note}")
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
    launch_ids: list = []

    def launch_id(index: int) -> str:   # asked in the launches' order, once each
        launch_ids.append(new_id("launch"))
        return launch_ids[index]
    traced = trace_application(records, gpu_of=placed_of.__getitem__, host_of=host_of.__getitem__,
                               traced_name_of=traced_name.__getitem__, copy_engines=engines,
                               launch_id_of=launch_id)
    for tl, lid in zip(traced.launches, launch_ids):
        commands.append(AddItem("launches", LaunchConfig(
            lid, short_kernel_name(tl.name) or tl.name, gpu=placed_of[tl.device],
            kernel=graph_for_kernel(project, tl.name), block_size=tl.block,
            grid_size=tl.grid, registers=min(max(tl.registers, 0), 255),
            shared_mem=tl.shared_mem)))
    steps = traced.steps
    app_id = new_id("app")
    app_name = (name or "").strip() or path.stem
    commands.append(AddItem("applications", Application(app_id, app_name, steps,
                                                        policy="in-order")))
    skipped = traced.counts["skipped"]
    if skipped:
        notes.append("not imported: " + ", ".join(f"{n} {k}(s)" for k, n in skipped.items()))
    if result.other_rows:
        notes.append(f"not imported: {result.other_rows} memset(s) or copies of other kinds "
                     f"(their time is in the host gaps and delays)")
    c = traced.counts
    return ImportPlan(Macro(f"import application {app_name}", commands), app_id, app_name,
                      len(steps), c["kernels"], c["copies"], c["host_gaps"], c["host_delays"],
                      c["inferred_dependencies"], len(launch_ids), gpus, link_values,
                      traced.measured_makespan_s, notes, added)


__all__ = ["HOST_LINKS", "ImportPlan", "TRACE_HOST", "fit_host_link", "memory_kind_note",
           "plan_import"]
