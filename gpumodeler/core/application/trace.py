"""Applications from a measured trace (docs/timeline.md, "Applications from a trace").

A trace (an Nsight Systems export read by :mod:`gpumodeler.db.nsys_export`) lists every
kernel and copy with its stream, device, start and end. :func:`trace_application` turns
those records into the steps of an application, in trace order, each keeping what was
measured (``Step.measured_s``, ``measured_start_s``, ``traced_gpu``), so that the timeline
can replay it on the project's system and show the measured timeline next to the predicted
one. The replay rules of an imported step are :mod:`.replay`'s, used by
:func:`gpumodeler.core.application.app.build`.

What the ordering of the steps is built from (each choice tested):

* **Stream order.** Steps of one stream (per device) follow each other in start order. A
  step that started before the previous step of its stream ended (the parallel branches of
  a CUDA graph run under one stream id) goes on a lane of its own (stream ``7~1``), so
  the overlap is kept.
* **Host time.** When no kernel or copy runs on any GPU of the trace (an idle gap between
  the end of all earlier work and the next start), the host was working or waiting: the
  gap becomes a ``sync`` step with ``host_s`` = the gap, after every earlier step, and every
  later step waits for it. The host's time is kept as it is on any system (the replay
  changes the GPUs and links, not the host). Memsets and unified-memory migrations are not
  steps (gpumodeler models neither): where they kept the GPUs busy alone, their time is in
  these gaps.
* **Events and synchronisations across streams** are read from the export's CUDA API and
  synchronisation tables when it has them (:mod:`.trace_api`: event waits become
  dependencies, the host's synchronisations ``sync`` steps on the ``host`` stream that
  gate the thread's later launches, and nothing is inferred for a step whose launch call
  is known). Without them they are inferred: a step that started later than its
  stream allowed (its stream's previous step, or the last host gap, had ended) waited for
  something: the step that ended last before it, after it was ready and within
  :data:`LINK_WINDOW_S`. When that step is of another stream and holds none of its
  engines, it is taken as an event wait (``cudaStreamWaitEvent``) or a host
  synchronisation on it, and the step depends on it; when it holds one of its engines,
  the engine explains the wait.
* **The legacy default stream** (NVIDIA, CUDA Runtime API, "Stream synchronization
  behavior"): when the export says which stream it is (:mod:`.trace_streams`), a step on it
  depends on what the blocking streams of its context had issued before it, and a step of
  a blocking stream on the legacy stream's step issued before it; non-blocking streams
  take no part. These dependencies explain a late start as an event wait does.
* **Host delays.** What remains of the late start (all of it when nothing explains it; the
  time from the end it waited for to its start otherwise: a launch's latency) was the
  host's or the launch's: a ``sync`` step ``host delay`` on its stream, after what it
  waited for, with ``host_s`` = that time, comes first (delays under
  :data:`DELAY_MIN_S` are the trace's rounding and dropped). Like host gaps, it is kept as
  it is on any system: host work between calls, launch overhead, and memsets, which are
  not steps, all land there.
* **Concurrent steps.** Kernels of one GPU that overlapped in the trace, and copies of one
  GPU in one direction that did (a GPU with several copy engines per direction), are marked
  ``concurrent``: they hold no engine, so the replay lets them overlap too (overlapping
  copies still share the link's bandwidth).

What a step predicts on the project's system: a kernel by the project's kernel graph of the
same name when there is one (Gajger eq. 4.1-4.3 through the launch), else by its measured
time scaled to the project's GPU (:func:`.replay.scaled_kernel_time`); a copy between host and GPU
by the link model (eq. 5.5); a copy within one GPU's memory (device to device, or a peer
copy, which the export records on one device) by its measured time scaled by the GPUs'
memory bandwidths.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpumodeler.core.application.app import Step
from gpumodeler.core.application.trace_api import TraceApi, resolve_api
from gpumodeler.core.application.trace_streams import LegacyOrder, StreamKinds
from gpumodeler.core.errors import InvalidParameter

#: How close (s) a step's start must follow the end of another step for the trace to be
#: read as the first waiting for the second (module docstring). A launch triggered by an
#: event or by the host after a synchronisation starts a few µs after the end it waited for.
LINK_WINDOW_S = 10e-6
#: The shortest host delay recorded (s): below it a late start is the trace's rounding.
DELAY_MIN_S = 100e-9
#: Records between two calls of :func:`trace_application`'s ``tick``.
TICK_EVERY = 4096


@dataclass(frozen=True)
class TracedLaunch:
    """A distinct launch configuration of a kernel in the trace (one project launch)."""

    key: tuple
    name: str
    device: object
    grid: int
    block: int
    registers: int
    shared_mem: int


@dataclass(frozen=True)
class TraceSteps:
    """The steps of a trace and what the project needs beside them."""

    steps: tuple
    launches: tuple  # TracedLaunch, in first-use order; a kernel step's launch is its key's index
    launch_of: dict  # step id -> index in launches
    measured_makespan_s: float
    counts: dict  # kernels, copies, host_gaps, inferred_dependencies, skipped (by kind)


def _engines(record, copy_engines) -> set:
    """Engine names a record holds in the trace (for the inference of waits)."""
    if record.kind == "kernel":
        return {(record.device, "compute")}
    if copy_engines.get(record.device, 1) >= 2:
        return {(record.device, "copy-" + ("htod" if record.direction == "htod" else "dtoh"))}
    return {(record.device, "copy")}


def trace_application(records, *, gpu_of, host_of, traced_name_of,
                      copy_engines=None, launch_id_of=None, tick=None,
                      api: TraceApi | None = None,
                      streams: StreamKinds | None = None) -> TraceSteps:
    """Steps of the records of a trace (kernels, copies: ``Measurement`` records with
    stream, device, start and end), in start order (module docstring).

    ``gpu_of(device)`` is the placed GPU id of a trace device, ``traced_name_of(device)``
    its device name in the catalog, ``host_of(device)`` the placed host its copies go to
    and from; ``copy_engines`` maps a
    trace device to its copy engines (for the inference of waits: steps on one engine wait
    for each other without any event). ``launch_id_of(index)``, when given, is the project's
    id of launch ``index`` (asked once per launch, in first-use order), which the kernel
    steps then name in ``Step.launch``. ``tick(fraction)``, when given, is called with the
    share of the records done every :data:`TICK_EVERY` records (a caller's progress bar;
    it may raise to stop). ``api``: the host side of the trace (:mod:`.trace_api`), when
    the export has its CUDA API tables: the waits are then read from it, not inferred
    (module docstring). ``streams``: which streams are the legacy default stream and
    which are non-blocking (:mod:`.trace_streams`), when the export says: the legacy
    stream's implicit synchronisation becomes dependencies."""
    copy_engines = copy_engines or {}
    usable = [r for r in records if r.kind in ("kernel", "transfer")
              and r.start_s is not None and r.end_s is not None]
    skipped: dict = {}
    for r in records:
        if r.kind not in ("kernel", "transfer"):
            skipped[r.kind] = skipped.get(r.kind, 0) + 1
    if not usable:
        raise InvalidParameter("the trace has no kernel or copy with a start and an end; "
                               "profile with nsys profile --trace=cuda")
    usable.sort(key=lambda r: (r.start_s, r.end_s))
    order = resolve_api(api, usable) if api else None
    legacy = LegacyOrder(streams) if streams else None
    t0 = usable[0].start_s
    devices = {r.device for r in usable}

    lanes: dict = {}    # (device, trace stream) -> its lanes' names (the first: the stream)
    lane_device: dict = {}  # lane name -> trace device
    one_device = len(devices) == 1

    def stream_of(r) -> str:
        """The step's stream: the trace's, or a lane of it for a step that overlapped the
        stream's previous step (kernels of a CUDA graph's parallel branches share a
        stream id): the first lane whose last step had ended."""
        names = lanes.get((r.device, r.stream))
        if names is None:
            name = str(r.stream) if one_device else f"{r.device}/{r.stream}"
            names = lanes[(r.device, r.stream)] = [name]
            lane_device[name] = r.device
        for lane in names:
            last = last_of_stream.get(lane)
            if last is None or last[1] <= r.start_s:
                return lane
        names.append(f"{names[0]}~{len(names)}")
        lane_device[names[-1]] = r.device
        return names[-1]

    # concurrent: overlapped a step of its GPU on the same engine in the trace (kernels;
    # copies in one direction)
    concurrent: set = set()
    latest: dict = {}   # (device, engine) -> (end, index) of the step ending last so far
    for i, r in enumerate(usable):
        key = (r.device, "compute" if r.kind == "kernel" else
               "htod" if r.direction == "htod" else "dtoh")
        end, j = latest.get(key, (None, None))
        if end is not None and r.start_s < end:
            concurrent.update((i, j))
        if end is None or r.end_s > end:
            latest[key] = (r.end_s, i)

    steps: list = []
    launches: list = []
    launch_index: dict = {}
    launch_of: dict = {}
    launch_ids: list = []            # the project's launch ids (with launch_id_of)
    last_of_stream: dict = {}       # stream -> (step id, end)
    barrier, barrier_end = None, t0  # the last host gap step and when it ended
    seen_barrier: dict = {}          # stream -> barrier its steps already wait for
    covered = t0                     # when all earlier work had ended
    recent: list = []                # (end, step id, stream, engines) of recent steps
    keep = 64
    n_kernels = n_copies = n_gaps = n_inferred = n_delays = n_api = n_waits = 0
    n_legacy = n_contradicted = 0
    step_of: dict = {}      # record index -> its step id (with ``api``)
    wait_step: dict = {}    # host wait number -> (its step id, when it let the host go on)
    seen_gate: dict = {}    # stream -> host wait step its steps already wait for
    for i, r in enumerate(usable):
        if tick is not None and i % TICK_EVERY == 0:
            tick(i / len(usable))
        gate = order.gate(i) if order is not None else None
        new_wait = gate is not None and gate not in wait_step
        if new_wait:
            # the host's thread blocked in a synchronisation, then worked until it
            # launched this record: a host step after what it waited for
            n_waits += 1
            wait_step[gate] = _host_wait_step(order, gate, i, r, f"w{n_waits}", steps,
                                              step_of, usable, last_of_stream, lane_device, t0)
        if r.start_s > covered and not new_wait:
            n_gaps += 1
            gap_id = f"h{n_gaps}"
            steps.append(Step(gap_id, "sync", "host", "host",
                              after=tuple(sid for sid, _ in last_of_stream.values()),
                              measured_s=r.start_s - covered,
                              measured_start_s=covered - t0, host_s=r.start_s - covered))
            barrier, barrier_end = gap_id, r.start_s
            recent = []
            if legacy is not None:
                legacy.barrier()
        stream = stream_of(r)
        after = []
        if barrier is not None and seen_barrier.get(stream) != barrier:
            after.append(barrier)
            seen_barrier[stream] = barrier
        gate_end = t0
        if gate is not None:
            gate_id, gate_end = wait_step[gate]
            if seen_gate.get(stream) != gate_id:
                after.append(gate_id)
                seen_gate[stream] = gate_id
        # its waits are read (not inferred) when its launch call is known
        read = order is not None and i in order.host_time
        explicit = [j for j in order.event_deps.get(i, ()) if j in step_of] \
            if order is not None and read else []
        for j in explicit:      # an event it waited for (cudaStreamWaitEvent)
            after.append(step_of[j])
            n_api += 1
        implicit: list = []     # what it waited for through the legacy default stream
        if legacy is not None:
            previous = last_of_stream[stream][0] if stream in last_of_stream else None
            for j in legacy.waits(r.device, r.stream, stream):
                if usable[j].end_s > r.start_s + DELAY_MIN_S:   # the trace says otherwise
                    n_contradicted += 1
                elif step_of[j] != previous and step_of[j] not in after:
                    implicit.append(j)
                    after.append(step_of[j])
                    n_legacy += 1
            legacy.add(r.device, r.stream, stream, i)
        ready = max(last_of_stream[stream][1] if stream in last_of_stream else t0, barrier_end,
                    gate_end)
        engines = _engines(r, copy_engines)
        if r.start_s - ready > DELAY_MIN_S:
            waited: tuple | None = None
            since = max(ready, r.start_s - LINK_WINDOW_S)
            if read:
                # the latest end among the events it waited for (already in ``after``) and
                # the steps holding one of its engines that ended within the window (the
                # engine explains that wait); no wait across streams is inferred
                found = [(usable[j].end_s, None, True) for j in explicit + implicit
                         if usable[j].end_s <= r.start_s]
                found += [(end, sid, True) for end, sid, _other, held in recent
                          if since < end <= r.start_s and held & engines]
                if found:
                    waited = max(found, key=lambda w: w[0])
            else:   # the step ending last after it was ready, within the window
                for end, sid, other, held in recent:
                    if since < end <= r.start_s and (waited is None or end > waited[0]):
                        waited = (end, sid, bool(held & engines))
                known = max((usable[j].end_s for j in implicit), default=None)
                if known is not None and (waited is None or known >= waited[0]):
                    waited = (known, None, True)    # the legacy stream explains it
            if waited is not None and not waited[2]:    # another stream's step: a wait
                after.append(str(waited[1]))
                n_inferred += 1
            # (an event that ended before its stream was ready explains none of it)
            residual = r.start_s - (max(ready, waited[0]) if waited is not None else ready)
            if residual > DELAY_MIN_S:  # issued late: a host delay on its stream
                n_delays += 1
                delay = f"d{n_delays}"
                first = (last_of_stream[stream][0],) if stream in last_of_stream else ()
                named = after + ([waited[1]] if waited is not None and waited[1] else [])
                steps.append(Step(delay, "sync", "host delay", stream,
                                  after=tuple(dict.fromkeys(named + list(first))),
                                  measured_s=residual,
                                  # (never below 0 by a rounding: a delay from the start)
                                  measured_start_s=max(r.start_s - residual - t0, 0.0),
                                  host_s=residual))
                after = []      # (it follows the delay in its stream)
                last_of_stream[stream] = (delay, r.start_s)
        gpu = gpu_of(r.device)
        common = dict(stream=stream, after=tuple(after), measured_s=r.end_s - r.start_s,
                      measured_start_s=r.start_s - t0, traced_gpu=traced_name_of(r.device))
        if r.kind == "kernel":
            n_kernels += 1
            sid = f"k{n_kernels}"
            grid = _product(r.grid)
            block = _product(r.block)
            config = (r.name, r.device, grid, block, r.registers_per_thread or 0,
                      int(r.shared_mem_bytes or 0))
            if config not in launch_index:
                if launch_id_of is not None:
                    launch_ids.append(launch_id_of(len(launches)))
                launch_index[config] = len(launches)
                launches.append(TracedLaunch(config, r.name, r.device, grid, block,
                                             int(r.registers_per_thread or 0),
                                             int(r.shared_mem_bytes or 0)))
            launch_of[sid] = index = launch_index[config]
            steps.append(Step(sid, "kernel", r.name, gpu=gpu, concurrent=i in concurrent,
                              launch=None if launch_id_of is None else launch_ids[index],
                              **common))
        else:
            n_copies += 1
            sid = f"c{n_copies}"
            if r.direction == "htod":
                src, dst = host_of(r.device), gpu
            elif r.direction == "dtoh":
                src, dst = gpu, host_of(r.device)
            else:   # within one GPU (dtod; a peer copy is recorded on one device)
                src = dst = gpu
            steps.append(Step(sid, "copy", r.name, src=src, dst=dst, concurrent=i in concurrent,
                              size=str(int(r.size_bytes or 0)), **common))
        last_of_stream[stream] = (sid, r.end_s)
        step_of[i] = sid
        recent.append((r.end_s, sid, stream, engines))
        if len(recent) > keep:  # only ends within the window matter; keep the list short
            recent = [x for x in recent if x[0] >= r.start_s - LINK_WINDOW_S]
            keep = max(64, 2 * len(recent))     # (amortised: pruned when it doubled)
        covered = max(covered, r.end_s)
    return TraceSteps(tuple(steps), tuple(launches), launch_of, covered - t0, {
        "kernels": n_kernels, "copies": n_copies, "host_gaps": n_gaps,
        "inferred_dependencies": n_inferred, "host_delays": n_delays, "skipped": skipped,
        "api_dependencies": n_api, "host_waits": n_waits, "legacy_dependencies": n_legacy,
        "legacy_contradicted": n_contradicted})


def _host_wait_step(order, number, index, record, step_id, steps, step_of, usable,
                    last_of_stream, lane_device, t0) -> tuple:
    """Append the ``sync`` step of host wait ``number`` (:mod:`.trace_api`), which gates
    record ``index`` (the first record launched after it), to ``steps``: after what it
    waited for (a device wait: every stream's last step, of its device when known), with
    ``host_s`` = the host's time from the end of what it waited for to the launch call of
    the record. Returns (its id, when it let the host go on)."""
    wait, waits_for = order.waits[number]
    if waits_for is None:
        named = [(sid, end) for lane, (sid, end) in last_of_stream.items()
                 if wait.device is None or lane_device.get(lane) == wait.device]
    else:
        named = [(step_of[j], usable[j].end_s) for j in waits_for if j in step_of]
    launched = order.host_time[index][1]
    since = min(max([end for _sid, end in named], default=wait.end_s), launched)
    since = max(since, t0)
    host_s = launched - since
    steps.append(Step(step_id, "sync", wait.name or f"{wait.kind} synchronize", "host",
                      after=tuple(dict.fromkeys(sid for sid, _end in named)),
                      measured_s=host_s, measured_start_s=since - t0, host_s=host_s))
    return step_id, launched


def _product(dims) -> int:
    out = 1
    for d in dims or (1,):
        out *= int(d)
    return out


def measured_makespan(app) -> float | None:
    """The measured makespan of an imported application: from the first measured start to
    the last measured end of its steps; None when no step was measured."""
    starts = [(s.measured_start_s, s.measured_s) for s in app.steps
              if s.measured_start_s is not None and s.measured_s is not None]
    if not starts:
        return None
    return max(a + d for a, d in starts) - min(a for a, _ in starts)


__all__ = ["DELAY_MIN_S", "LINK_WINDOW_S", "TraceSteps", "TracedLaunch", "measured_makespan",
           "trace_application"]
