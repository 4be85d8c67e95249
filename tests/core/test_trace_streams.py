"""The legacy default stream's implicit synchronisation (core.application.trace_streams) and
its dependencies in trace_application: per context, once per stream, non-blocking streams
apart, and nothing against what the trace shows."""
from gpumodeler.core.application.trace import trace_application
from gpumodeler.core.application.trace_streams import LegacyOrder, StreamKinds
from gpumodeler.core.measurements.records import Measurement

US = 1e-6
LEGACY = 7


def k(start_us, end_us, stream, device=0, name="k"):
    return Measurement("kernel", (end_us - start_us) * US, name, grid=(10, 1, 1),
                       block=(128, 1, 1), registers_per_thread=32, shared_mem_bytes=0,
                       stream=stream, device=device, start_s=start_us * US,
                       end_s=end_us * US)


def c(start_us, end_us, stream, direction="htod", device=0):
    return Measurement("transfer", (end_us - start_us) * US, f"[CUDA memcpy {direction}]",
                       direction=direction, size_bytes=float(1 << 20), stream=stream,
                       device=device, start_s=start_us * US, end_s=end_us * US)


def traced(records, kinds):
    return trace_application(records, gpu_of=lambda d: f"gpu{d}", host_of=lambda d: "host1",
                             traced_name_of=lambda d: f"GPU {d}",
                             copy_engines={0: 2, 1: 2}, streams=kinds)


def waits(t) -> dict:
    """Step id -> what it waits for, its own list with that of a host delay before it."""
    out, delay = {}, {}
    for s in t.steps:
        if s.name == "host delay":
            delay[s.stream] = set(s.after)
            continue
        out[s.id] = set(s.after) | delay.pop(s.stream, set())
    return out


def test_the_order_hands_each_step_out_once_per_legacy_step():
    kinds = StreamKinds(frozenset({(0, LEGACY)}), frozenset({(0, 9)}))
    order = LegacyOrder(kinds)
    assert order.waits(0, 8, "8") == []          # no legacy step yet
    order.add(0, 8, "8", 0)
    order.add(0, 8, "8~1", 1)                     # a second lane of stream 8
    order.add(0, 9, "9", 2)                       # non-blocking: no part
    assert sorted(order.waits(0, LEGACY, "7")) == [0, 1]
    order.add(0, LEGACY, "7", 3)
    assert order.waits(0, LEGACY, "7") == []      # the earlier ones through step 3
    assert order.waits(0, 8, "8") == [3]
    order.add(0, 8, "8", 4)
    assert order.waits(0, 8, "8") == []           # once per stream
    assert order.waits(0, 8, "8~1") == [3]
    assert order.waits(0, 9, "9") == []
    assert order.waits(1, 8, "1/8") == []         # another device: another context
    assert order.waits(0, LEGACY, "7") == [4]


def test_contexts_of_one_device_are_apart():
    """Two contexts on one GPU (two processes): each legacy stream synchronises with its
    own context's streams; a stream of unknown context is the legacy stream's."""
    kinds = StreamKinds(frozenset({(0, 7), (0, 20)}), frozenset(),
                        {(0, 7): 1, (0, 8): 1, (0, 20): 2, (0, 21): 2})
    order = LegacyOrder(kinds)
    order.add(0, 8, "8", 0)
    order.add(0, 21, "21", 1)
    assert order.waits(0, 7, "7") == [0]
    assert order.waits(0, 20, "20") == [1]
    assert bool(kinds) and not StreamKinds()


def test_a_legacy_copy_waits_for_a_kernel_of_another_stream():
    """cudaMemcpy (the legacy stream) after a kernel on stream 8: on another engine, so
    only the legacy stream's rule orders them; the host delay is the latency after it."""
    kinds = StreamKinds(frozenset({(0, LEGACY)}), frozenset({(0, 10)}))
    # (a non-blocking stream keeps the GPU busy: no host gap orders the steps)
    t = traced([k(0, 300, 10, name="busy"), k(0, 100, 8, name="work"),
                k(1, 50, 9, name="side"), c(130, 150, LEGACY, "dtoh"),
                k(150, 170, 9, name="after")], kinds)
    assert t.counts["host_gaps"] == 0
    w = waits(t)
    ids = {s.name: s.id for s in t.steps}
    legacy_copy = ids["[CUDA memcpy dtoh]"]
    assert {ids["work"], ids["side"]} <= w[legacy_copy]
    assert ids["busy"] not in w[legacy_copy]
    assert legacy_copy in w[ids["after"]]
    (delay,) = [s for s in t.steps if s.name == "host delay" and s.stream == str(LEGACY)]
    assert abs(delay.host_s - 30 * US) < 1e-12
    assert t.counts["legacy_dependencies"] == 3
    assert t.counts["inferred_dependencies"] == 0


def test_a_step_overlapping_the_legacy_step_gets_no_dependency():
    kinds = StreamKinds(frozenset({(0, LEGACY)}))
    t = traced([k(0, 100, 8, name="long"), c(50, 60, LEGACY)], kinds)
    ids = {s.name: s.id for s in t.steps}
    assert ids["long"] not in waits(t)[ids["[CUDA memcpy htod]"]]
    assert t.counts["legacy_contradicted"] == 1
    assert t.counts["legacy_dependencies"] == 0


def test_without_stream_kinds_nothing_changes():
    records = [k(0, 100, 8, name="work"), c(130, 150, LEGACY, "dtoh")]
    plain = traced(records, None)
    assert plain.counts["legacy_dependencies"] == 0
    assert plain.steps == traced(records, StreamKinds()).steps


def test_a_host_delay_never_starts_before_the_trace():
    """A delay from the trace's start, computed in floats, is not a hair below 0."""
    t = traced([k(5, 900, 9), c(10, 20, 8)], None)
    assert all(s.measured_start_s >= 0 for s in t.steps)


def test_a_host_gap_orders_everything_before_it():
    """After an idle interval of the GPU (a host gap every later step waits for), no step
    gets a legacy dependency on a step before it."""
    kinds = StreamKinds(frozenset({(0, LEGACY)}))
    t = traced([k(0, 100, 8, name="before"), k(200, 250, LEGACY, name="legacy"),
                k(300, 350, 8, name="after")], kinds)
    ids = {s.name: s.id for s in t.steps}
    w = waits(t)
    assert t.counts["host_gaps"] == 2
    assert ids["before"] not in w[ids["legacy"]]
    assert ids["legacy"] not in w[ids["after"]]
    assert t.counts["legacy_dependencies"] == 0
