"""The host side of a trace: the CUDA API calls that launched each kernel and copy, the
synchronisations and the event waits (docs/timeline.md, "Applications from a trace",
"Ordering read from the CUDA API").

Nsight Systems records the CUDA runtime calls (``CUPTI_ACTIVITY_KIND_RUNTIME``: host
thread, start, end, name, and the ``correlationId`` shared with the kernel or copy a call
launched; driver calls alike in ``CUPTI_ACTIVITY_KIND_DRIVER``) and the synchronisations (``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION``: CUPTI's
``CUpti_ActivitySynchronizationType`` — event synchronize, stream wait event, stream
synchronize, context synchronize — with the stream and the event; NVIDIA, "Nsight Systems
SQLite export schema reference" and "CUPTI API: CUpti_ActivitySynchronization").
:mod:`gpumodeler.db.nsys_export` reads them into a :class:`TraceApi`;
:func:`resolve_api` turns it into what :func:`.trace.trace_application` needs: which
records wait for which (event waits), and which host waits gate which launches.

Choices (each tested):

* **A launch's host time** is the start of the runtime call with its correlation id, on
  that call's thread.
* **Host waits** (``cudaDeviceSynchronize``/context synchronize, ``cudaStreamSynchronize``,
  ``cudaEventSynchronize``, and a call that returned only after the kernel or copy it
  launched had ended — a synchronous ``cudaMemcpy``): the thread issues nothing until the
  call returns, so every launch of that thread whose call starts after the wait's end
  depends on it. A device synchronize waits for every stream (of its device when the
  export names it); a stream synchronize for the last launch on that stream before it; an
  event synchronize for what the event captured. A synchronize the runtime table lists
  but the synchronisation table does not describe (no stream or event) waits for the
  record launched before it (among its thread's last :data:`RECENT`) that ended last
  before it returned.
* **Event waits** (``cudaStreamWaitEvent``): the first launch on the waiting stream after
  the call depends on what the event captured: the last launch on the recording stream
  before its ``cudaEventRecord``. The recording is the latest one of that event id before
  the wait (``CUPTI_ACTIVITY_KIND_CUDA_EVENT``, when the export has it); without that
  table, the latest ``cudaEventRecord`` call of the waiting thread before the wait, on the
  stream of that thread's last launch before the record. A wait without a stream
  (runtime table only) is for the stream of its thread's next launch.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

#: Host wait kinds: what each waits for ("named": a synchronize known by its name only).
WAIT_KINDS = ("device", "stream", "event", "call", "named")
#: Launches looked back over for a synchronize known by name only.
RECENT = 64


@dataclass(frozen=True)
class HostWait:
    """A host thread blocked in a CUDA call from ``start_s`` to ``end_s``. ``kind``: one of
    :data:`WAIT_KINDS`; ``stream``/``device``/``event`` where the export says;
    ``correlation``: the call's id (for ``call``: the id of the kernel or copy it waited
    for). ``name``: the API's name."""

    kind: str
    thread: object
    start_s: float
    end_s: float
    name: str = ""
    device: int | None = None
    stream: int | None = None
    event: int | None = None
    correlation: int | None = None


@dataclass(frozen=True)
class EventRecord:
    """A ``cudaEventRecord``: on ``stream`` (None: not known) at host time ``time_s``;
    ``event``: the event's id when the export gives it."""

    thread: object
    time_s: float
    stream: int | None = None
    event: int | None = None


@dataclass(frozen=True)
class StreamWait:
    """A ``cudaStreamWaitEvent``: ``stream`` waits for ``event`` from host time ``time_s``."""

    thread: object
    time_s: float
    stream: int | None = None
    event: int | None = None


@dataclass(frozen=True)
class TraceApi:
    """The host side of a trace. ``launches``: correlation id -> (thread, call start s,
    call end s) of the runtime call that launched a kernel or copy; ``correlation_of``:
    (record source, record row) -> correlation id of a kernel or copy record."""

    launches: dict
    correlation_of: dict
    waits: tuple = ()
    records: tuple = ()
    stream_waits: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.launches)


@dataclass
class ApiOrder:
    """What :func:`resolve_api` finds for the records of a trace (indices into them).

    ``host_time``: index -> (thread, launch call start) where known; ``event_deps``:
    index -> indices it waits for through an event; ``waits``: the host waits with what
    each waits for (``(wait, indices or None)``: None for a device wait, which waits for
    every stream); ``gates``: thread -> sorted (wait end, wait number)."""

    host_time: dict = field(default_factory=dict)
    event_deps: dict = field(default_factory=dict)
    waits: list = field(default_factory=list)
    gates: dict = field(default_factory=dict)

    def gate(self, index: int):
        """The number of the latest host wait that ended before record ``index``'s launch
        call on its thread, or None."""
        known = self.host_time.get(index)
        if known is None:
            return None
        thread, at = known
        ends = self.gates.get(thread)
        if not ends:
            return None
        i = bisect.bisect_right(ends, (at, float("inf"))) - 1
        return ends[i][1] if i >= 0 else None


def _key(record) -> tuple:
    return (record.source, record.row)


def resolve_api(api: TraceApi, records) -> ApiOrder:
    """Event waits and host waits of ``records`` (kernel and copy records with ``source``,
    ``row``, ``stream``, ``device``, ``end_s``; the order :func:`.trace.trace_application`
    steps them in) from ``api`` (module docstring)."""
    order = ApiOrder()
    by_thread: dict = {}        # thread -> sorted [(launch time, index)]
    by_stream: dict = {}        # stream -> sorted [(launch time, index)]
    index_of_correlation: dict = {}
    for i, r in enumerate(records):
        corr = api.correlation_of.get(_key(r))
        if corr is None:
            continue
        index_of_correlation[corr] = i
        call = api.launches.get(corr)
        if call is None:
            continue
        thread, at = call[0], call[1]
        order.host_time[i] = (thread, at)
        by_thread.setdefault(thread, []).append((at, i))
        by_stream.setdefault(r.stream, []).append((at, i))
    for launches in list(by_thread.values()) + list(by_stream.values()):
        launches.sort()

    def last_before(launches, t, skip_stream=None):
        """The index launched last before ``t`` in ``launches`` (not on ``skip_stream``)."""
        j = bisect.bisect_left(launches or [], (t, -1)) - 1
        while j >= 0:
            i = launches[j][1]
            if skip_stream is None or records[i].stream != skip_stream:
                return i
            j -= 1
        return None

    def first_after(launches, t):
        j = bisect.bisect_right(launches or [], (t, float("inf")))
        return launches[j][1] if launches and j < len(launches) else None

    recordings = sorted(api.records, key=lambda e: e.time_s)
    recorded_at = [e.time_s for e in recordings]

    def captured(event, thread, t, skip_stream=None):
        """What an event waited on at host time ``t`` captured: an index, or None."""
        rec = None
        for j in range(bisect.bisect_right(recorded_at, t) - 1, -1, -1):
            e = recordings[j]
            if (event is not None and e.event == event) or \
                    (event is None or e.event is None) and e.thread == thread:
                rec = e
                break
        if rec is None:
            return None
        stream = rec.stream
        if stream is None:      # the stream of the thread's last launch before the record
            i = last_before(by_thread.get(rec.thread), rec.time_s, skip_stream)
            if i is None:
                return None
            stream = records[i].stream
        return last_before(by_stream.get(stream), rec.time_s)

    for w in sorted(api.stream_waits, key=lambda w: w.time_s):
        stream = w.stream
        if stream is None:
            nxt = first_after(by_thread.get(w.thread), w.time_s)
            if nxt is None:
                continue
            stream = records[nxt].stream
        target = first_after(by_stream.get(stream), w.time_s)
        source = captured(w.event, w.thread, w.time_s, skip_stream=stream)
        if target is None or source is None or records[source].stream == stream:
            continue
        order.event_deps.setdefault(target, []).append(source)

    for w in sorted(api.waits, key=lambda w: w.end_s):
        if w.kind == "device":
            waits_for = None
        elif w.kind == "stream" and w.stream is not None:
            i = last_before(by_stream.get(w.stream), w.start_s)
            waits_for = [] if i is None else [i]
        elif w.kind == "event" and (w.event is not None or recordings):
            i = captured(w.event, w.thread, w.start_s)
            waits_for = [] if i is None else [i]
        elif w.kind == "call" and w.correlation in index_of_correlation:
            waits_for = [index_of_correlation[w.correlation]]
        else:   # described by name only: what ended last before it returned (among
            # the thread's last RECENT launches before it)
            best = None
            launches = by_thread.get(w.thread) or []
            j = bisect.bisect_left(launches, (w.start_s, -1)) - 1
            for _at, i in launches[max(0, j - RECENT + 1):j + 1]:
                if records[i].end_s <= w.end_s and (best is None or
                                                   records[i].end_s > records[best].end_s):
                    best = i
            waits_for = [] if best is None else [best]
        number = len(order.waits)
        order.waits.append((w, waits_for))
        order.gates.setdefault(w.thread, []).append((w.end_s, number))
    for ends in order.gates.values():
        ends.sort()
    return order


__all__ = ["ApiOrder", "EventRecord", "HostWait", "StreamWait", "TraceApi", "WAIT_KINDS",
           "resolve_api"]
