"""An application in a project: kernel launches, copies and synchronisations on streams,
across the GPUs and links of the project's system, turned into timeline activities
(docs/timeline.md).

Durations come from the model the launch panel uses: a kernel step takes its launch's kernel
time (Gajger eq. 4.1–4.3; its launch's own transfers are not counted — copies are steps of
their own), a copy takes ``t_s + n / (bw × λ)`` (eq. 5.5) over its route when alone, and the
timeline (:mod:`.timeline`) adds queueing, overlap and bandwidth sharing.

Choices (documented in docs/timeline.md, tested):

* **Streams.** Steps of one stream run in order (each depends on the previous step of its
  stream); ``after`` adds dependencies across streams. A ``sync`` step waits for every
  earlier step of the application (``cudaDeviceSynchronize`` on all GPUs), or only for its
  ``after`` list when that is given (an event wait).
* **Engines.** Each GPU has one compute engine and one or two copy engines
  (``copy_engines`` from the device database or a project override; unknown → 1, the
  conservative choice, shown in the notes). With two, host→device and device→host copies
  each have their own engine; with one they share it. A peer copy uses the source GPU's
  outbound engine (device→host with two engines) and the destination's inbound engine is not
  held. Hosts have no engines.
* **Routes.** A copy between a host and a GPU crosses the link joining them; between two
  GPUs the link joining them directly (NVLink, or PCIe peer-to-peer), else it is staged
  through the host both GPUs are linked to (both links, both GPUs' engines, the two startup
  times added). Each direction of a link is its own bandwidth resource (links are full
  duplex) with capacity bw × λ of that direction; for a link between two GPUs the link's
  ``htod`` values describe the direction from its first device (``a``) to its second.
* **Placed devices with a count > 1** are modelled as one device (address separate GPUs by
  placing them separately).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
import copy as _copy
import math
from typing import Any, NamedTuple

from gpumodeler.core.application.energy import DevicePower, energy
from gpumodeler.core.application.timeline import POLICIES, Activity, simulate
from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.core.finite import finite_real, plain_finite
from gpumodeler.core.kernel.expressions import parse
from gpumodeler.core.project import VIA

STEP_KINDS = ("kernel", "copy", "sync")


@dataclass(frozen=True, slots=True)
class Step:
    """One step of an application. ``kind``: kernel, copy or sync.

    kernel: ``launch`` (a launch of the project: kernel, configuration), ``gpu`` (placed GPU
    id; default the launch's), ``fraction`` (share of the launch's data or grid, for
    data-parallel splits), ``concurrent`` (runs alongside other kernels of its GPU; on a copy,
    imported from a trace: on a copy engine of its own, holding none).
    copy: ``src`` and ``dst`` (placed device ids), ``size`` (bytes, or an expression of the
    application's variables, e.g. ``4*N``). sync: waits (see the module docstring).

    Steps imported from a trace (docs/timeline.md, "Applications from a trace") also carry
    what was measured: ``measured_s`` (duration), ``measured_start_s`` (start on the
    trace's clock, from its first step) and ``traced_gpu`` (the device name of the GPU it
    ran on), which the replay scales from when no kernel graph predicts the step; a sync
    with ``host_s`` > 0 is host time (the GPU idle while the host worked), kept as it is
    on any system.

    Slotted (no ``__dict__``): the project reader makes 10^5 imported steps by setting the
    slots (:class:`StepSlots`), and a slot is read as fast as an attribute."""

    id: str
    kind: str
    name: str = ""
    stream: str = "0"
    after: tuple = ()
    launch: str | None = None
    gpu: str | None = None
    fraction: float = 1.0
    concurrent: bool = False
    src: str | None = None
    dst: str | None = None
    size: str = "0"
    measured_s: float | None = None
    measured_start_s: float | None = None
    traced_gpu: str = ""
    host_s: float = 0.0

    @property
    def label(self) -> str:
        return self.name or self.id

    def measured(self) -> dict:
        """The trace's values of the step that differ from the defaults (the project
        file's ``measured`` column)."""
        return {key: getattr(self, key) for key, default in _MEASURED_DEFAULTS
                if getattr(self, key) != default}


#: Step fields that say what a trace measured (saved together in the project file).
MEASURED_FIELDS = ("measured_s", "measured_start_s", "traced_gpu", "host_s")
_MEASURED_DEFAULTS = tuple((f.name, f.default) for f in fields(Step) if f.name in MEASURED_FIELDS)
#: Step's fields in order.
STEP_FIELDS = tuple(f.name for f in fields(Step))


class StepSlots:
    """Step's slots in a class of the same layout without Step's frozen ``__setattr__``, for
    a reader that makes many steps of values already checked: ``object.__new__(StepSlots)``,
    every field set as a plain slot (one store each, which Python specialises), then
    ``obj.__class__ = Step`` (allowed between two classes of the same slots) gives the object
    ``Step(*values)`` gives (Step has no ``__post_init__``; :func:`step_slots` checks both).
    10^5 steps of a trace: 0.15 s through each slot's setter, 0.06 s this way (the frozen
    ``__init__`` sets each field by a Python-level ``object.__setattr__`` call: 0.29 s)."""

    __slots__ = STEP_FIELDS


def can_become(stand_in: type, cls: type) -> bool:
    """Whether an object of ``stand_in`` (a plain slotted class) whose slots are set can
    become the object ``cls(...)`` makes by ``obj.__class__ = cls``: the same slots in the
    same order, the same layout, and no ``__post_init__`` in ``cls``."""
    if getattr(cls, "__slots__", None) != getattr(stand_in, "__slots__") \
            or hasattr(cls, "__post_init__"):
        return False
    probe: Any = object.__new__(stand_in)
    try:
        probe.__class__ = cls
    except TypeError:   # (another layout)
        return False
    return True


def step_slots() -> type:
    """:class:`StepSlots`, once checked that its objects can become steps."""
    assert can_become(StepSlots, Step)
    return StepSlots


@dataclass(frozen=True)
class Application:
    """An ordered list of steps (program order) with the variables its sizes use."""

    id: str
    name: str = "application"
    steps: tuple = ()
    variables: dict = field(default_factory=dict)
    policy: str = "in-order"
    host_power_w: float | None = None

    def checked(self, project=None) -> "Application":
        """Check the application; with ``project``, also that every step's launch, GPU and
        devices exist there (a document may keep dangling references while it is edited:
        they are reported when the application is run)."""
        if self.policy not in POLICIES:
            raise InvalidParameter(f"{self.name}: engine policy must be one of {', '.join(POLICIES)}, "
                                   f"got {self.policy!r}", item="policy")
        if self.host_power_w is not None and not (finite_real(self.host_power_w) and self.host_power_w >= 0):
            raise InvalidParameter(f"{self.name}: host power must be a number of W >= 0, got "
                                   f"{self.host_power_w!r}", item="host_power_w")
        seen = set()
        parsed: set = set()  # size expressions already parsed (a trace repeats them)
        # what was checked once needs no second look (10^5 imported steps name a few
        # launches, devices and pairs of devices)
        fine_kernels: set = set()  # (launch, gpu)
        fine_copies: set = set()  # (src, dst, measured)
        for s in self.steps:
            if s.id in seen:
                raise InvalidParameter(f"{self.name}, step {s.label}: two steps have the id {s.id!r}",
                                       item=s.id)
            seen.add(s.id)
            kind = s.kind
            if kind not in STEP_KINDS:
                raise InvalidParameter(f"{self.name}, step {s.label}: kind must be one of "
                                       f"{', '.join(STEP_KINDS)}, got {kind!r}", item=s.id)
            for d in s.after:
                if d not in seen:
                    known = [x.id for x in self.steps]
                    raise InvalidParameter(
                        f"{self.name}, step {s.label}: depends on {d!r}, which is not an earlier step"
                        + ("" if d in known else f" (steps: {', '.join(known)})"), item=s.id)
            size, fraction = s.size, s.fraction
            if type(size) is not str or type(s.stream) is not str:
                if not isinstance(size, str) or not isinstance(s.stream, str):
                    raise InvalidParameter(f"{self.name}, step {s.label}: size and stream must be text",
                                           item=s.id)
            if not (fraction == 1.0 and type(fraction) is float) and \
                    not (finite_real(fraction) and 0 < fraction <= 1):
                raise InvalidParameter(f"{self.name}, step {s.label}: the share of the launch must be in "
                                       f"(0, 1], got {fraction!r}", item=s.id)
            if kind == "copy" and size not in parsed:
                if not _whole_bytes(size):
                    parse(size)
                parsed.add(size)
            if project is None:
                continue
            if kind == "kernel":
                if (s.launch, s.gpu) in fine_kernels:
                    continue
                where = f"{self.name}, step {s.label}"
                if s.launch not in project.launches:
                    raise InvalidParameter(f"{where}: choose a launch of the project "
                                           f"({', '.join(project.launches) or 'none defined'})", item=s.id)
                gpu = s.gpu or project.launches[s.launch].gpu
                _need_device(project, gpu, "gpu", where, "GPU")
                fine_kernels.add((s.launch, s.gpu))
            elif kind == "copy":
                key = (s.src, s.dst, s.measured_s is not None)
                if key in fine_copies:
                    continue
                where = f"{self.name}, step {s.label}"
                _need_device(project, s.src, None, where, "source device")
                _need_device(project, s.dst, None, where, "destination device")
                if s.src == s.dst and not (s.measured_s is not None
                                           and project.devices[s.src].kind == "gpu"):
                    # (a copy within one GPU's memory comes from a trace only: its time is
                    # the measured one, scaled; see replay.scaled_copy_time)
                    raise InvalidParameter(f"{where}: a copy needs two different devices", item=s.id)
                if {project.devices[s.src].kind, project.devices[s.dst].kind} == {"host"}:
                    raise InvalidParameter(f"{where}: a copy between two hosts is not modelled (copies "
                                           f"involve a GPU)", item=s.id)
                fine_copies.add(key)
        return self


_NO_STEP = object()   # (no step yet in a stream)


def _whole_bytes(size: str) -> bool:
    """A size written as plain ASCII digits (a trace's byte counts): read without the
    expression parser, which gives the same number and which 10^5 imported copies would
    otherwise each go through."""
    return size.isascii() and size.isdigit() and len(size) < 20


def _need_device(project, device_id, kind, where, what):
    d = project.devices.get(device_id) if device_id else None
    if d is None or (kind and d.kind != kind):
        options = [x.id for x in project.devices.values() if kind is None or x.kind == kind]
        raise InvalidParameter(f"{where}: choose a {what} of the system ({', '.join(options) or 'none placed'})")


_ACTIVITY_FIELDS = ("id", "name", "engines", "after", "fixed_s", "bytes", "links", "rate_cap")


class _ActivitySlots:
    """Activity's slots in a class of the same layout without its frozen ``__setattr__``
    (as :class:`StepSlots` for Step)."""

    __slots__ = _ACTIVITY_FIELDS


def _activity(id_, name, engines, after, fixed_s, bytes_, links, rate_cap,
              new=object.__new__, slots=_ActivitySlots, cls=Activity):
    """``Activity(id_, name, ...)``, the same object, made as an :class:`_ActivitySlots`
    whose slots are set as plain stores and which then becomes an Activity, without the
    frozen ``__init__``'s ``object.__setattr__`` call per field (10^5 activities: 0.17 s
    through ``__init__``, 0.13 s through ``object.__setattr__``, 0.04 s this way)."""
    a = new(slots)
    a.id = id_
    a.name = name
    a.engines = engines
    a.after = after
    a.fixed_s = fixed_s
    a.bytes = bytes_
    a.links = links
    a.rate_cap = rate_cap
    a.__class__ = cls
    return a


def _activity_slots_fit() -> bool:
    """Whether an :class:`_ActivitySlots` can become the Activity ``Activity(...)`` makes:
    the same fields in order and no ``__post_init__`` (else build calls the class itself)."""
    return can_become(_ActivitySlots, Activity)


#: how build makes an activity: its class itself should the class gain a field, a check or
#: another layout
make_activity = _activity if _activity_slots_fit() else Activity


class StepPrediction(NamedTuple):
    """What the model says about one step before any queueing or sharing (a named tuple,
    as the timeline's scheduled activities: 10^5 of them are made for a trace)."""

    step: str
    kind: str
    device: str | None  # the GPU a kernel runs on / the GPU a copy's engine belongs to
    alone_s: float  # duration alone on its engines and links
    detail: dict  # kernel: summary of the launch prediction; copy: bytes, route, startup, rate


@dataclass(frozen=True)
class BuiltApplication:
    activities: tuple
    capacities: dict
    kernel_device: dict  # activity id -> placed GPU id
    predictions: dict  # step id -> StepPrediction
    powers: dict  # placed GPU id -> DevicePower
    gpus: tuple  # placed GPU ids of the system
    notes: tuple
    # every prediction's detail holds only text, whole numbers, flags, None and finite
    # floats, in lists and dicts (checked as build made them: see plain_finite); False: unknown
    plain_details: bool = field(default=False, compare=False)


def _route(project, src, dst, where):
    """Connections a copy from src to dst crosses, each with its direction slot."""
    def direct(a, b):
        for c in project.connections.values():
            if {c.a, c.b} == {a, b}:
                return c
        return None
    kinds = (project.devices[src].kind, project.devices[dst].kind)
    c = direct(src, dst)
    if c is not None:
        return [(c, _slot(project, c, src, dst), src, dst)]
    if kinds == ("gpu", "gpu"):
        for h in project.devices.values():
            if h.kind != "host":
                continue
            c1, c2 = direct(src, h.id), direct(h.id, dst)
            if c1 and c2:
                return [(c1, _slot(project, c1, src, h.id), src, h.id),
                        (c2, _slot(project, c2, h.id, dst), h.id, dst)]
        raise InvalidParameter(f"{where}: no link joins {src} and {dst}, directly or through one host; "
                               f"draw one in the system editor")
    raise InvalidParameter(f"{where}: no link joins {src} and {dst}; draw one in the system editor")


def _upstream(project, conn, where):
    """The host-side link ``conn`` passes through (its ``via`` override), or None.

    A PCIe switch or root port shared by several GPUs is drawn as a PCIe link from the host
    to itself (a host-side link, with the uplink's bandwidth from the link catalog); each
    GPU's PCIe link behind it names it in ``via``. Host<->GPU copies over those links then
    also cross the host-side link, one bandwidth resource per direction, shared max-min
    fairly (docs/timeline.md)."""
    via = conn.overrides.get(VIA)
    if via in (None, ""):
        return None
    up = project.connections.get(via) if isinstance(via, str) else None
    hosts = [d for d in (conn.a, conn.b) if d in project.devices and project.devices[d].kind == "host"]
    if up is None or up.a != up.b or up.a not in hosts:
        choices = [c.id for c in project.connections.values() if c.a == c.b and c.a in hosts]
        raise InvalidParameter(f"{where}: link {conn.label or conn.link_name} passes through {via!r}, which is "
                               f"not a host-side link of its host (host-side links: "
                               f"{', '.join(choices) or 'none drawn'})", item=conn.id)
    return up


def _slot(project, conn, frm, to) -> str:
    """'htod' or 'dtoh': which direction values of the link a copy frm -> to uses."""
    kf, kt = project.devices[frm].kind, project.devices[to].kind
    if kf == "host" and kt == "gpu":
        return "htod"
    if kf == "gpu" and kt == "host":
        return "dtoh"
    return "htod" if conn.a == frm else "dtoh"


def build(project, app: Application, *, gpu_lookup, link_lookup, table_lookup=None,
          calibration_lookup=None, analyses=None, details: bool = True) -> BuiltApplication:
    """Timeline activities of ``app``. ``gpu_lookup``/``link_lookup``/``table_lookup``/
    ``calibration_lookup`` and ``analyses`` as for
    :func:`gpumodeler.core.pipeline.evaluate_launch`; a hop over
    a link with a calibrated transfer model of its direction takes that model's startup and
    its bandwidth at the copy's size (so alone it takes exactly the model's time); copy engines and powers are the GPUs'
    ``copy_engines``, ``board_power_w`` and ``idle_power_w`` (project overrides applied).
    ``details=False``: each prediction's ``detail`` is None, not made (for an output that
    shows none), ``plain_details`` still telling whether those it would make are plain."""
    from gpumodeler.core.application.replay import copy_scaling, kernel_scaling
    from gpumodeler.core.resolve import resolve_gpu, resolve_link

    app.checked(project)
    notes = []
    specs = {}

    def spec_of(device_id):
        if device_id not in specs:
            specs[device_id] = resolve_gpu(project, device_id, gpu_lookup)
        return specs[device_id]

    def device_value(device_id, name):
        return getattr(spec_of(device_id), name)

    traced_specs: dict = {}

    def traced_spec(name):
        if name not in traced_specs:
            traced_specs[name] = gpu_lookup(name)
        return traced_specs[name]

    scalings: dict = {}  # (scaling, GPU, traced GPU) -> _scaling's answer

    # whether every step's detail is plain and finite, told as it is made: what steps share
    # (a scaling, a kernel's prediction, a copy's plan) when it is made for the step that
    # first uses it, a step's own values each
    plain = True
    texts_after: dict = {}   # id -> a sync's ``after`` whose ids are all text

    def scaling_of(s, gpu, scaling):
        """How an imported step's measured time is carried to ``gpu``: (factor, traced
        GPU's name, detail), found once per GPU and traced GPU."""
        nonlocal plain
        key = (scaling, gpu, s.traced_gpu)
        if key not in scalings:
            scalings[key] = _scaling(project, s, gpu, spec_of(gpu), traced_spec, at(s), scaling)
            plain = plain and plain_finite(scalings[key][1:])   # (the name and detail)
        return scalings[key]

    def measured_time(s, gpu, scaling):
        """An imported step's measured time carried to ``gpu``: (time, detail)."""
        factor, name, how = scaling_of(s, gpu, scaling)
        return (s.measured_s if factor is None else s.measured_s * factor), {
            "measured_s": s.measured_s, "traced_gpu": name, **how}

    imported: dict = {}  # (launch, name) -> the graph predicting an imported kernel

    def imported_kernel(s):
        key = (s.launch, s.name)
        if key not in imported:
            imported[key] = _imported_kernel(project, s)
        return imported[key]

    engines_of = {}

    def copy_engines(gpu_id):
        if gpu_id not in engines_of:
            n = device_value(gpu_id, "copy_engines")
            if n is None:
                notes.append(f"{gpu_id}: number of copy engines unknown; taken as 1 (copies in both "
                             f"directions share one engine)")
                n = 1
            engines_of[gpu_id] = 2 if n >= 2 else 1
        return engines_of[gpu_id]

    def copy_engine(gpu_id, outbound: bool):
        if copy_engines(gpu_id) == 1:
            return f"{gpu_id}/copy"
        return f"{gpu_id}/copy-{'dtoh' if outbound else 'htod'}"

    activities: list = []
    capacities: dict = {}
    kernel_device: dict = {}
    predictions: dict = {}
    kernel_times: dict = {}  # (launch, GPU, share) -> (kernel time, prediction detail)
    sizes: dict = {}  # size expression -> bytes
    routes: dict = {}  # (source, destination) -> route
    link_specs: dict = {}  # connection id -> its link with the project's overrides
    copy_plans: dict = {}  # (source, destination) -> a copy's plan when its size changes none of it

    def copy_plan(s, size, where):
        """What a copy from ``s.src`` to ``s.dst`` of ``size`` bytes takes, alone: (startup,
        rate cap, bandwidth resources, route hops, engines held, owner GPU, whether the size
        changed it: a calibrated transfer model's bandwidth depends on the size)."""
        sized = False
        if (s.src, s.dst) not in routes:
            routes[(s.src, s.dst)] = _route(project, s.src, s.dst, where)
        route = routes[(s.src, s.dst)]
        startup, rate_cap, links, hops = 0.0, None, [], []
        for conn, slot, frm, to in route:
            try:
                if conn.id not in link_specs:  # each connection looked up once
                    link_specs[conn.id] = resolve_link(project, conn.id, link_lookup, calibration_lookup)
                spec = link_specs[conn.id]
                model = spec.transfer_model(slot) if slot in ("htod", "dtoh") else None
                if model is not None:
                    sized = True
                    ts, bw, lam = model.startup_s, float(model.bandwidth_bytes_per_s(max(size, 1.0))), 1.0
                else:
                    ts, bw, lam = spec.direction(slot)
            except InvalidParameter as exc:
                raise InvalidParameter(f"{where}: link {conn.link_name}: {exc}", item=s.id) from exc
            startup += ts
            rate = bw * lam
            rate_cap = rate if rate_cap is None else min(rate_cap, rate)
            res = f"{conn.id}:{frm}>{to}"
            capacities[res] = rate if res not in capacities else min(capacities[res], rate)
            links.append(res)
            hops.append({"connection": conn.id, "link": conn.link_name, "direction": slot,
                         "startup_s": ts, "bandwidth_bytes_per_s": bw, "lambda": lam})
            up = _upstream(project, conn, where)
            if up is not None and slot in ("htod", "dtoh") and "host" in (
                    project.devices[frm].kind, project.devices[to].kind):
                # the host side of a GPU's PCIe link: its switch's uplink (or root port),
                # shared by every GPU behind it; no startup of its own (docs/timeline.md)
                try:
                    if up.id not in link_specs:
                        link_specs[up.id] = resolve_link(project, up.id, link_lookup, calibration_lookup)
                    _ts, up_bw, up_lam = link_specs[up.id].direction(slot)
                except InvalidParameter as exc:
                    raise InvalidParameter(f"{where}: link {up.link_name}: {exc}", item=s.id) from exc
                up_rate = up_bw * up_lam
                rate_cap = min(rate_cap, up_rate)
                res = f"{up.id}:{slot}"
                capacities[res] = up_rate
                links.append(res)
                hops.append({"connection": up.id, "link": up.link_name, "direction": slot,
                             "startup_s": 0.0, "bandwidth_bytes_per_s": up_bw, "lambda": up_lam,
                             "shared_upstream": True})
        held: list[str] = []
        src_kind, dst_kind = project.devices[s.src].kind, project.devices[s.dst].kind
        if src_kind == "gpu":
            held.append(copy_engine(s.src, outbound=True))
        if dst_kind == "gpu" and (src_kind == "host" or len(route) == 2):
            held.append(copy_engine(s.dst, outbound=False))
        owner = s.src if src_kind == "gpu" else s.dst
        return startup, rate_cap, tuple(links), hops, tuple(held), owner, sized

    def kernel_time(s, launch, gpu):
        """A kernel step's launch predicted on ``gpu`` with the step's share: (kernel
        time, prediction detail)."""
        from gpumodeler.core.pipeline import evaluate_launch   # (a trace's steps need none)
        view = _copy.copy(project)
        view.launches = dict(project.launches)
        changes = {"gpu": gpu, "transfers": ()}
        if s.fraction != 1:
            if launch.data_size is not None:
                changes["data_size"] = max(1, math.ceil(launch.data_size * s.fraction))
            elif launch.grid_size is not None:
                changes["grid_size"] = max(1, math.ceil(launch.grid_size * s.fraction))
        view.launches[s.launch] = replace(launch, **changes)
        try:
            result = evaluate_launch(view, s.launch, gpu_lookup, link_lookup,
                                     values=dict(app.variables) or None, table_lookup=table_lookup,
                                     calibration_lookup=calibration_lookup, analyses=analyses)
        except InvalidParameter as exc:
            raise InvalidParameter(f"{at(s)}: {exc}", item=s.id) from exc
        t = float(result.prediction.kernel.time_s)
        summary = result.prediction.summary()
        return (t, {
            "launch": s.launch, "grid_size": (view.launches[s.launch].grid_size
                                              if view.launches[s.launch].data_size is None
                                              else result.grid_size),
            "kernel_time_s": t, "mode": summary.get("mode"),
            "limiting_resource": summary.get("limiting_resource"),
            "occupancy_warps_per_sm": result.occupancy_warps_per_sm,
            "latency_bound_cycles": result.latency_bound_cycles})

    # each stream's last step so far, the streams in the order of those steps (a stream
    # whose step is not the latest moves to the end: the order a sync waits in)
    last_in_stream: dict = {}
    latest_stream: object = _NO_STEP
    def at(step) -> str:   # (a step is named only in a message)
        return f"{app.name}, step {step.label}"

    # (10^5 steps of a trace name a few launches, GPUs and pairs of devices: what depends
    # only on those is found once. The activities are slotted, made by setting their slots
    # (make_activity); a prediction is made as StepPrediction(...) makes it, without the
    # named tuple's __new__ call.)
    new, Prediction = tuple.__new__, StepPrediction
    compute: dict = {}  # GPU -> the engines a kernel on it holds
    for s in app.steps:
        kind, stream, label = s.kind, s.stream, s.name or s.id
        last = last_in_stream.get(stream, _NO_STEP)
        if s.after:
            after = list(s.after)
            if last is not _NO_STEP and last not in after:
                after.insert(0, last)
            waits = tuple(after)
        elif kind == "sync" and not s.host_s:
            # every earlier step: each stream's last one ends after the others of its
            # stream (they run in order), so waiting for the streams' last steps is the
            # same wait, and a trace with many synchronisations stays linear (host time
            # waits only for what it names)
            waits = tuple(last_in_stream.values())
        else:
            waits = () if last is _NO_STEP else (last,)
        if kind == "kernel" and s.measured_s is not None and imported_kernel(s) is None:
            gpu = s.gpu or project.launches[s.launch].gpu
            factor, name, how = scaling_of(s, gpu, kernel_scaling)
            measured = s.measured_s
            t = measured if factor is None else measured * factor
            engines: tuple[str, ...]
            if s.concurrent:
                engines = ()
            elif gpu in compute:
                engines = compute[gpu]
            else:
                engines = compute[gpu] = (f"{gpu}/compute",)
            activities.append(make_activity(s.id, label, engines, waits, t, 0.0, (), None))
            kernel_device[s.id] = gpu
            detail = None
            if details:
                detail = {"launch": s.launch, "kernel_time_s": t, "mode": "measured",
                          "measured_s": measured, "traced_gpu": name}
                detail.update(how)
            if plain and not (type(t) is float and t - t == 0.0 and type(measured) is float
                              and measured - measured == 0.0 and type(s.launch) is str):
                plain = False
            predictions[s.id] = new(Prediction, (s.id, "kernel", gpu, t, detail))
        elif kind == "copy" and s.src == s.dst:   # within one GPU: from a trace
            t, how = measured_time(s, s.src, copy_scaling)
            activities.append(make_activity(s.id, label, (copy_engine(s.src, outbound=True),),
                                           waits, t, 0.0, (), None))
            detail = {"bytes": float(s.size) if _whole_bytes(s.size) else
                      float(parse(s.size).evaluate(dict(app.variables))), "route": [],
                      "mode": "measured", **how}
            plain = plain and plain_finite(detail)
            predictions[s.id] = new(Prediction, (s.id, "copy", s.src, t, detail if details else None))
        elif kind == "kernel":
            launch = project.launches[s.launch]
            if s.measured_s is not None and launch.kernel not in project.kernels:
                launch = replace(launch, kernel=imported_kernel(s))
            gpu = s.gpu or launch.gpu
            key = (s.launch, gpu, s.fraction)
            if key not in kernel_times:  # each launch, GPU and share predicted once
                kernel_times[key] = kernel_time(s, launch, gpu)
                plain = plain and plain_finite(kernel_times[key][1])
            t, detail = kernel_times[key]
            engines = () if s.concurrent else (f"{gpu}/compute",)
            activities.append(make_activity(s.id, label, engines, waits, t, 0.0, (), None))
            kernel_device[s.id] = gpu
            predictions[s.id] = new(Prediction, (s.id, "kernel", gpu, t, dict(detail) if details else None))
        elif kind == "copy":
            size = sizes.get(s.size)
            if size is None:  # each expression evaluated and checked once; whole numbers as such
                try:
                    size = (float(int(s.size)) if _whole_bytes(s.size)
                            else float(parse(s.size).evaluate(dict(app.variables))))
                except Exception as exc:  # ExpressionError and friends: name the step
                    raise InvalidParameter(f"{at(s)}: size {s.size!r}: {exc}", item=s.id) from exc
                if not (math.isfinite(size) and size >= 0):
                    raise InvalidParameter(f"{at(s)}: size must be a number of bytes >= 0, got {size}",
                                           item=s.id)
                sizes[s.size] = size
            plan = copy_plans.get((s.src, s.dst))
            if plan is None:
                plan = copy_plan(s, size, at(s))
                plain = plain and plain_finite(plan)   # (the size: a finite float, checked above)
                if not plan[-1]:   # the same for every size: made once
                    copy_plans[(s.src, s.dst)] = plan
                hops = plan[3]
            elif details:   # (each step its own hops: the document holds no shared object;
                # the usual one hop, between a host and a GPU, copied without a map's pass)
                hops = plan[3]
                hops = [hops[0].copy()] if len(hops) == 1 else list(map(dict, hops))
            startup, rate_cap, links, _hops, held_engines, owner, _sized = plan
            if s.concurrent:    # on an engine of its own (from a trace): holds none
                held_engines = ()
            activities.append(make_activity(s.id, label, held_engines, waits, startup, size, links,
                                           rate_cap))
            alone = startup + size / rate_cap
            predictions[s.id] = new(Prediction, (s.id, "copy", owner, alone, {
                "bytes": size, "route": hops, "startup_s": startup, "bandwidth_bytes_per_s": rate_cap}
                if details else None))
        else:
            # host time (a trace's idle gap) is the host's: the same on any system
            activities.append(make_activity(s.id, label, (), waits, s.host_s, 0.0, (), None))
            host_s, after = s.host_s, s.after
            if plain and not (type(host_s) is float and host_s - host_s == 0.0):
                plain = False
            # (what it waits for: steps' ids, text as every id is (below), and the ids its
            # ``after`` names, each distinct list once: a trace repeats them)
            if plain and after and id(after) not in texts_after:
                plain = all(type(w) is str for w in after)
                texts_after[id(after)] = after   # (kept: its id stays its own)
            predictions[s.id] = new(Prediction, (s.id, "sync", None, s.host_s, {
                "waits_for": list(waits), "host_s": s.host_s} if details else None))
        if stream is not latest_stream and stream != latest_stream:
            last_in_stream.pop(stream, None)
            latest_stream = stream
        last_in_stream[stream] = s.id

    gpus = tuple(d.id for d in project.gpus())
    powers = {}
    for g in gpus:
        busy, idle = device_value(g, "board_power_w"), device_value(g, "idle_power_w")
        powers[g] = DevicePower(busy, idle)
    plain = plain and set(map(type, predictions)) <= {str}   # (every step's id: a sync waits for some)
    return BuiltApplication(tuple(activities), capacities, kernel_device, predictions, powers, gpus,
                            tuple(dict.fromkeys(notes)), plain)


def _imported_kernel(project, step) -> str | None:
    """The kernel graph an imported kernel step is predicted by: its launch's, else the
    project's graph of the kernel's name (replay.graph_for_kernel); None: none."""
    from gpumodeler.core.application.replay import graph_for_kernel
    launch = project.launches.get(step.launch)
    if launch is not None and launch.kernel in project.kernels:
        return launch.kernel
    return graph_for_kernel(project, step.name)


def _scaling(project, step, gpu, target, traced_spec, where, scaling):
    """How an imported step's measured time is carried to placed GPU ``gpu`` (its spec
    ``target``) from the GPU it was traced on (``traced_spec(name)``): (factor, traced GPU's
    name, detail) by ``scaling`` (replay.kernel_scaling or copy_scaling; a factor of None
    keeps the measured time)."""
    placed = project.devices[gpu]
    name = step.traced_gpu or placed.device_name
    try:
        traced = traced_spec(name)
    except ModelError as exc:   # (not found: a user-database GPU of another machine)
        raise InvalidParameter(f"{where}: the GPU it was traced on, {name}, is not in the "
                               f"device database ({exc}); import the trace again here, or add "
                               f"the GPU", item=step.id) from exc
    try:
        factor, how = scaling(traced, target)
    except InvalidParameter as exc:
        raise InvalidParameter(f"{where}: {exc}", item=step.id) from exc
    return factor, step.traced_gpu or placed.device_name, how


def run(project, app: Application, details: bool = True, **lookups):
    """Build (``details``: see :func:`build`) and simulate ``app``: (BuiltApplication,
    Timeline, ApplicationEnergy). The cyclic garbage collector is paused meanwhile (a trace's
    10^5 steps make ~10^6 objects and no cycles; its full passes cost more than the building)."""
    with collector_paused():
        built = build(project, app, details=details, **lookups)
        timeline = simulate(built.activities, built.capacities, policy=app.policy)
        # every GPU of the system draws power for the whole makespan, used or not
        return built, timeline, energy(timeline, built.kernel_device, built.powers,
                                       host_power_w=app.host_power_w, devices=built.gpus)


SPLITS = ("even", "proportional")


def data_parallel_steps(project, launch_id: str, gpus, *, host: str, split: str = "even",
                        scatter_size: str = "0", gather_size: str = "0", prefix: str = "dp",
                        gpu_lookup=None, link_lookup=None, table_lookup=None, variables=None,
                        calibration_lookup=None) -> tuple:
    """Steps that split launch ``launch_id`` over ``gpus`` (placed GPU ids): per GPU, on its
    own stream, a scatter copy host→GPU of its share of ``scatter_size``, its share of the
    kernel, and a gather copy of its share of ``gather_size``; then a sync.

    ``split``: ``even`` (1/n each) or ``proportional`` to each GPU's predicted speed on the
    whole launch (share_i = (1/t_i) / Σ 1/t_j, t from the kernel model), so GPUs of unequal
    speed finish together. Sizes are expressions of the application's variables; each GPU's
    copy moves ``(size) * share``."""
    from gpumodeler.core.pipeline import evaluate_launch

    gpus = list(gpus)
    if not gpus:
        raise InvalidParameter("choose at least one GPU to split the launch over")
    if split not in SPLITS:
        raise InvalidParameter(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    if launch_id not in project.launches:
        raise InvalidParameter(f"no launch {launch_id!r} (launches: {', '.join(project.launches) or 'none'})")
    for g in gpus:
        _need_device(project, g, "gpu", "data-parallel split", "GPU")
    _need_device(project, host, "host", "data-parallel split", "host")
    parse(scatter_size)
    parse(gather_size)
    if split == "even":
        shares = [1.0 / len(gpus)] * len(gpus)
    else:
        speeds = []
        for g in gpus:
            view = _copy.copy(project)
            view.launches = dict(project.launches)
            view.launches[launch_id] = replace(project.launches[launch_id], gpu=g, transfers=())
            r = evaluate_launch(view, launch_id, gpu_lookup, link_lookup, values=variables,
                                table_lookup=table_lookup, calibration_lookup=calibration_lookup)
            speeds.append(1.0 / float(r.prediction.kernel.time_s))
        total = sum(speeds)
        shares = [v / total for v in speeds]
    steps = []
    for i, (g, f) in enumerate(zip(gpus, shares), start=1):
        stream = f"{prefix}-{g}"
        if scatter_size.strip() not in ("0", ""):
            steps.append(Step(f"{prefix}{i}-scatter", "copy", f"scatter to {g}", stream, src=host, dst=g,
                              size=f"({scatter_size})*{f!r}"))
        steps.append(Step(f"{prefix}{i}-kernel", "kernel", f"kernel on {g}", stream, launch=launch_id, gpu=g,
                          fraction=f))
        if gather_size.strip() not in ("0", ""):
            steps.append(Step(f"{prefix}{i}-gather", "copy", f"gather from {g}", stream, src=g, dst=host,
                              size=f"({gather_size})*{f!r}"))
    steps.append(Step(f"{prefix}-sync", "sync", "synchronise", f"{prefix}-sync"))
    return tuple(steps)
