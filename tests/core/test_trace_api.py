"""Waits read from a trace's CUDA API calls (core.application.trace_api) and the steps
trace_application makes of them."""
import dataclasses

import pytest

from gpumodeler.core.application.trace import trace_application
from gpumodeler.core.application.trace_api import (EventRecord, HostWait, StreamWait,
                                                   TraceApi, resolve_api)
from gpumodeler.core.measurements.records import Measurement

US = 1e-6
T = 1    # the host thread


def k(row, start_us, end_us, stream, name="k"):
    return Measurement("kernel", (end_us - start_us) * US, name, grid=(10, 1, 1),
                       block=(128, 1, 1), registers_per_thread=32, shared_mem_bytes=0,
                       stream=stream, device=0, start_s=start_us * US, end_s=end_us * US,
                       source="t#K", row=row)


def api_of(recs, calls_us, **kw):
    """Each record's launch call at ``calls_us[row]`` (µs, 1 µs long), correlation = row."""
    return TraceApi({r.row: (T, calls_us[r.row] * US, (calls_us[r.row] + 1) * US)
                     for r in recs},
                    {(r.source, r.row): r.row for r in recs}, **kw)


def steps_of(records, api):
    return trace_application(records, gpu_of=lambda d: "gpu1", host_of=lambda d: "host1",
                             traced_name_of=lambda d: "G", copy_engines={0: 2}, api=api)


def test_an_event_wait_depends_on_what_the_event_captured():
    """K3 on stream 8 waits for an event recorded on stream 7 after K1 (not after K2,
    launched on stream 7 after the record)."""
    recs = [k(1, 10, 100, 7), k(2, 100, 300, 7), k(3, 140, 200, 8)]
    api = api_of(recs, {1: 0, 2: 5, 3: 8},
                 records=(EventRecord(T, 2 * US, stream=7, event=4),),
                 stream_waits=(StreamWait(T, 3 * US, stream=8, event=4),))
    order = resolve_api(api, recs)
    assert order.event_deps == {2: [0]}
    t = steps_of(recs, api)
    k3 = [x for x in t.steps if x.kind == "kernel"][2]
    # K1 ended at 100 µs; K3 started at 140: 40 µs the host delay (the event's latency)
    (delay,) = [x for x in t.steps if x.name == "host delay"]
    assert "k1" in delay.after and "k2" not in delay.after
    assert delay.host_s == pytest.approx(40 * US)
    assert k3.stream == "8" and t.counts["api_dependencies"] == 1
    assert t.counts["inferred_dependencies"] == 0


def test_an_event_that_ended_before_its_stream_was_ready_explains_no_delay():
    """K3 (stream 8) waits for an event after K1 (ended at 100 µs), but its stream's own K2
    ended at 200 (stream 9 keeps the GPU busy): of its start at 230, only 30 µs are the
    host's."""
    recs = [k(1, 10, 100, 7), k(2, 20, 200, 8), k(3, 230, 260, 8), k(4, 150, 300, 9)]
    api = api_of(recs, {1: 0, 2: 2, 3: 6, 4: 7},
                 records=(EventRecord(T, 1.5 * US, stream=7, event=4),),
                 stream_waits=(StreamWait(T, 4 * US, stream=8, event=4),))
    t = steps_of(recs, api)
    (delay,) = [x for x in t.steps if x.name == "host delay" and x.stream == "8"
                and x.measured_start_s > 100 * US]
    assert delay.host_s == pytest.approx(30 * US)


def test_a_host_wait_gates_only_what_was_launched_after_it():
    """A stream synchronize on stream 7 returns at 120 µs; K3 (stream 8) was launched
    before it and runs on; K4, launched at 150 µs, waits for the synchronize, which waits
    for K1 only."""
    recs = [k(1, 10, 100, 7, "K1"), k(2, 20, 400, 8, "K2"), k(3, 400, 500, 8, "K3"),
            k(4, 160, 200, 7, "K4")]
    api = api_of(recs, {1: 0, 2: 2, 3: 4, 4: 150},
                 waits=(HostWait("stream", T, 6 * US, 120 * US, "cudaStreamSynchronize",
                                 stream=7),))
    t = steps_of(recs, api)
    (wait,) = [x for x in t.steps if x.name == "cudaStreamSynchronize"]
    kernels = {x.name: x for x in t.steps if x.kind == "kernel"}
    k1, k3, k4 = kernels["K1"], kernels["K3"], kernels["K4"]
    assert wait.after == (k1.id,) and wait.host_s == pytest.approx(50 * US)
    # (K4 started 10 µs after its call: the host delay before it carries the wait)
    (delay,) = [x for x in t.steps if x.name == "host delay" and x.stream == k4.stream]
    assert wait.id in delay.after and delay.host_s == pytest.approx(10 * US)
    assert wait.id not in k3.after
    assert t.counts["host_waits"] == 1


def test_a_device_wait_waits_for_every_stream_of_its_device():
    recs = [k(1, 10, 100, 7), k(2, 20, 150, 8), k(3, 300, 400, 7)]
    api = api_of(recs, {1: 0, 2: 2, 3: 290},
                 waits=(HostWait("device", T, 5 * US, 152 * US, "cudaDeviceSynchronize",
                                 device=0),))
    t = steps_of(recs, api)
    (wait,) = [x for x in t.steps if x.name == "cudaDeviceSynchronize"]
    assert set(wait.after) == {"k1", "k2"}
    assert wait.host_s == pytest.approx(140 * US)     # from K2's end to K3's call
    assert not [x for x in t.steps if x.name == "host"]    # not also an idle gap
    # a device wait on another device waits for none of these
    other = dataclasses.replace(api, waits=(dataclasses.replace(api.waits[0], device=1),))
    t = steps_of(recs, other)
    (wait,) = [x for x in t.steps if x.name == "cudaDeviceSynchronize"]
    assert wait.after == ()


def test_without_launch_calls_the_waits_are_inferred_as_before():
    """K2 (stream 8) starts 5 µs after stream 7's copy ends, stream 9 keeping the GPU
    busy: the timing says K2 waited for the copy."""
    copy = Measurement("transfer", 90 * US, "[CUDA memcpy HtoD]", direction="htod",
                       size_bytes=1e6, stream=7, device=0, start_s=10 * US, end_s=100 * US,
                       source="t#M", row=1)
    recs = [copy, k(2, 105, 200, 8), k(3, 50, 150, 9)]
    plain = trace_application(recs, gpu_of=lambda d: "gpu1", host_of=lambda d: "host1",
                              traced_name_of=lambda d: "G", copy_engines={0: 2})
    empty = steps_of(recs, TraceApi({}, {}))
    assert plain.steps == empty.steps and plain.counts["inferred_dependencies"] == 1


def test_a_synchronize_known_by_name_waits_for_what_ended_last_before_it_returned():
    """A cudaStreamSynchronize the synchronisation table does not describe (no stream):
    it waited for the launch that ended last before it returned (K2, not K3, which was
    still running)."""
    recs = [k(1, 10, 100, 7, "K1"), k(2, 20, 180, 8, "K2"), k(3, 30, 400, 9, "K3"),
            k(4, 200, 250, 8, "K4")]
    api = api_of(recs, {1: 0, 2: 2, 3: 4, 4: 190},
                 waits=(HostWait("named", T, 6 * US, 182 * US, "cudaStreamSynchronize"),))
    t = steps_of(recs, api)
    (wait,) = [x for x in t.steps if x.name == "cudaStreamSynchronize"]
    kernels = {x.name: x for x in t.steps if x.kind == "kernel"}
    assert wait.after == (kernels["K2"].id,)
    assert wait.host_s == pytest.approx(10 * US)
