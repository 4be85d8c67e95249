"""The legacy default stream's implicit synchronisation in a trace (docs/timeline.md,
"Applications from a trace", "The legacy default stream").

NVIDIA, CUDA Runtime API, "Stream synchronization behavior" (section "Legacy default
stream"): the legacy default stream (the NULL stream, stream 0 of a program compiled
without ``--default-stream per-thread``) synchronises with every other *blocking* stream of
its context: an operation on it first waits for all work issued before it on the blocking
streams, and work issued after it on a blocking stream waits for it. A stream created with
``cudaStreamNonBlocking`` takes no part; a per-thread default stream is a blocking stream
("not a non-blocking stream"). With the runtime API there is one context per device.

On the traced GPU the effect is in the measured starts; on another system it must be a
dependency, or a default-stream kernel runs before the work it waited for. What the export
says (read by :mod:`gpumodeler.db.nsys_streams` into a :class:`StreamKinds`):
Nsight Systems' ``TARGET_INFO_CUDA_CONTEXT_INFO.nullStreamId`` names each context's legacy
stream, and ``TARGET_INFO_CUDA_STREAM.flag`` gives each stream CUPTI's
``CUpti_ActivityStreamFlag`` (NVIDIA, CUPTI API: 0 unknown, 1 default — a blocking stream,
2 non-blocking, 3 the NULL stream).

Choices (each tested):

* an export without those tables names no legacy stream: no implicit dependency is added
  and the effect stays in the host delays, as before (the stream ids nsys gives the NULL
  stream vary with the driver; a wrong guess would serialise independent streams);
* a stream the tables do not list, or list with an unknown flag, is a blocking stream
  (CUDA's default for ``cudaStreamCreate``);
* a stream whose context is not given is in the context of its device's legacy stream;
* *issue order* is taken as start order. In a trace that obeyed the rule the two agree:
  a blocking step issued before a legacy step ended before it started, and one issued after
  it started after it ended. A pair the trace contradicts (overlapping: the stream did not
  synchronise, e.g. another process's context on the GPU) gets no dependency, and is
  counted;
* a dependency that the stream order already implies is not repeated: a legacy step waits
  for each blocking stream's last step issued since the previous legacy step (the earlier
  ones it waits for through that step), and a blocking stream's step for the last legacy
  step, once per stream.

Several host threads do not order each other's launches: a ``cudaDeviceSynchronize`` blocks
only the thread that calls it (it waits for all work issued to the device before it, by any
thread, and returns), and another thread's later launch is ordered by the program's own
host synchronisation (mutexes, joins), which a CUDA trace does not record. The legacy
stream's rule is the one ordering across threads that the device itself enforces, and it is
read here whatever thread issued the work.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: CUPTI's CUpti_ActivityStreamFlag: id -> what it means for the legacy stream's rule
STREAM_FLAG = {0: "unknown", 1: "blocking", 2: "non-blocking", 3: "legacy"}


@dataclass(frozen=True)
class StreamKinds:
    """What an export says of its streams, by (device, stream id): ``legacy``: each
    context's legacy default stream; ``non_blocking``: streams created with
    ``cudaStreamNonBlocking``; ``context``: the context of a stream where known. Every
    other stream is a blocking one."""

    legacy: frozenset = frozenset()
    non_blocking: frozenset = frozenset()
    context: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.legacy)


class LegacyOrder:
    """The implicit dependencies of a trace's steps, given in start order (module
    docstring): :meth:`waits` before a step is added, then :meth:`add`. Linear: each step
    is handed out at most once per legacy step that follows it."""

    def __init__(self, kinds: StreamKinds):
        self.kinds = kinds
        self.primary: dict = {}     # device -> context of its legacy stream
        for device, stream in sorted(kinds.legacy, key=repr):
            self.primary.setdefault(device, kinds.context.get((device, stream)))
        self.pending: dict = {}     # group -> {lane: index} issued since its last legacy step
        self.last_legacy: dict = {}  # group -> index of its last legacy step
        self.seen: dict = {}        # lane -> the legacy step its steps already wait for

    def _group(self, device, stream) -> tuple:
        return device, self.kinds.context.get((device, stream), self.primary.get(device))

    def waits(self, device, stream, lane) -> list:
        """Indices of earlier steps that a step on ``stream`` of ``device`` (placed on
        ``lane``) waits for through the legacy stream, not implied by its stream order."""
        key = (device, stream)
        if key in self.kinds.non_blocking:
            return []
        group = self._group(device, stream)
        if key in self.kinds.legacy:
            return list(self.pending.get(group, {}).values())
        last = self.last_legacy.get(group)
        return [] if last is None or self.seen.get(lane) == last else [last]

    def barrier(self) -> None:
        """Every step so far ended before every later one starts (a host gap orders
        them): no later step needs a dependency on an earlier one."""
        self.pending.clear()
        self.last_legacy.clear()
        self.seen.clear()

    def add(self, device, stream, lane, index: int) -> None:
        """Step ``index`` was issued on ``stream`` of ``device``, on ``lane``."""
        key = (device, stream)
        if key in self.kinds.non_blocking:
            return
        group = self._group(device, stream)
        if key in self.kinds.legacy:
            self.last_legacy[group] = index
            self.pending[group] = {}
            return
        self.pending.setdefault(group, {})[lane] = index
        last = self.last_legacy.get(group)
        if last is not None:
            self.seen[lane] = last


__all__ = ["LegacyOrder", "STREAM_FLAG", "StreamKinds"]
