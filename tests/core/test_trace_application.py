"""Steps from a trace's records (core.application.trace) and the replay's rules
(core.application.replay)."""
import pytest

from gpumodeler.core.application.replay import (scaled_copy_time, scaled_kernel_time,
                                                short_kernel_name)
from gpumodeler.core.application.trace import LINK_WINDOW_S, measured_makespan, trace_application
from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.measurements.records import Measurement

US = 1e-6


def k(start_us, end_us, name="k", stream=7, device=0, grid=(10, 2, 1), block=(128, 1, 1)):
    return Measurement("kernel", (end_us - start_us) * US, name, grid=grid, block=block,
                       registers_per_thread=32, shared_mem_bytes=0, stream=stream,
                       device=device, start_s=start_us * US, end_s=end_us * US)


def c(start_us, end_us, direction="htod", stream=7, device=0, size=1 << 20):
    return Measurement("transfer", (end_us - start_us) * US, f"[CUDA memcpy {direction}]",
                       direction=direction, size_bytes=float(size), stream=stream,
                       device=device, start_s=start_us * US, end_s=end_us * US)


def steps_of(records, engines=2, devices=None):
    return trace_application(records, gpu_of=lambda d: f"gpu{d}", host_of=lambda d: "host1",
                             traced_name_of=lambda d: f"GPU {d}",
                             copy_engines={d: engines for d in (devices or [0, 1])})


def by_id(traced):
    return {s.id: s for s in traced.steps}


def test_streams_order_and_measured_values():
    t = steps_of([c(100, 200), k(200, 500, "a"), k(250, 300, "b", stream=8),
                  c(500, 600, "dtoh")])
    s = by_id(t)
    # stream 8's kernel was issued 150 µs after the trace began, with nothing before it
    # ending then: a host delay on its stream, after nothing
    assert [x.id for x in t.steps] == ["c1", "k1", "d1", "k2", "c2"]
    assert (s["d1"].stream, s["d1"].after, s["d1"].host_s) == ("8", (), pytest.approx(150 * US))
    assert s["k2"].after == ()
    assert s["k1"].measured_start_s == pytest.approx(100 * US)
    assert s["k1"].measured_s == pytest.approx(300 * US)
    assert s["c1"].src == "host1" and s["c1"].dst == "gpu0" and s["c1"].size == str(1 << 20)
    assert s["c2"].src == "gpu0" and s["c2"].dst == "host1"
    assert s["k2"].stream == "8" and s["k1"].stream == "7"
    # the two kernels overlapped in the trace: both concurrent
    assert s["k1"].concurrent and s["k2"].concurrent
    assert t.measured_makespan_s == pytest.approx(500 * US)
    assert [x.traced_gpu for x in t.steps if x.kind != "sync"] == ["GPU 0"] * 4
    # one launch per distinct kernel configuration
    assert len(t.launches) == 2 and t.launches[0].grid == 20 and t.launches[0].block == 128


def test_a_gap_where_no_gpu_works_is_host_time_and_a_barrier():
    t = steps_of([k(0, 100, "a"), k(10, 50, "b", stream=8), k(400, 500, "a"),
                  k(420, 430, "b", stream=8)])
    s = by_id(t)
    # (stream 8's first kernel was issued 10 µs in: a host delay d1)
    assert [x.id for x in t.steps] == ["k1", "d1", "k2", "h1", "k3", "d2", "k4"]
    assert s["h1"].kind == "sync" and s["h1"].host_s == pytest.approx(300 * US)
    assert set(s["h1"].after) == {"k1", "k2"}
    # stream 8 went on 20 µs after the gap: its delay waits for the gap, its kernel for it
    assert "h1" in s["k3"].after and s["d2"].after == ("h1", "k2") and s["k4"].after == ()
    assert s["d2"].host_s == pytest.approx(20 * US)
    assert t.counts["host_gaps"] == 1
    assert measured_makespan(type("A", (), {"steps": t.steps})) == pytest.approx(500 * US)


def test_a_late_start_right_after_another_streams_end_is_a_dependency():
    # stream 8's upload could have started at 0 but started 5 µs after stream 7's kernel
    # ended (a copy out on stream 9 keeps the GPU busy meanwhile: no host gap)
    busy = c(0, 1000, "dtoh", stream=9)
    t = steps_of([busy, k(0, 300, "a"), c(305, 400, stream=8)])
    s = by_id(t)
    assert t.counts["inferred_dependencies"] == 1 and t.counts["host_gaps"] == 0
    # the upload waits for the kernel, then for the launch's 5 µs
    assert s["d1"].after == ("k1",) and s["d1"].host_s == pytest.approx(5 * US)
    assert s["c2"].after == () and s["c2"].stream == s["d1"].stream == "8"
    # beyond the window after the kernel's end: not read as waiting for it
    late = 300 + LINK_WINDOW_S / US + 1
    t = steps_of([busy, k(0, 300, "a"), c(late, late + 100, stream=8)])
    assert t.counts["inferred_dependencies"] == 0 and by_id(t)["d1"].after == ()
    # exactly at the end: the dependency alone
    t = steps_of([busy, k(0, 300, "a"), c(300, 400, stream=8)])
    assert by_id(t)["c2"].after == ("k1",) and t.counts["host_delays"] == 0
    # on the same engine the wait is the engine's: no dependency, the 1 µs after it a delay
    t = steps_of([busy, k(0, 300, "a"), k(301, 400, "b", stream=8)])
    s = by_id(t)
    assert t.counts["inferred_dependencies"] == 0
    assert s["d1"].after == ("k1",) and s["d1"].host_s == pytest.approx(1 * US)
    # started long after anything ended: not caused by it; all of the wait is the host's
    t = steps_of([busy, k(0, 100, "a"), c(500, 600, stream=8)])
    s = by_id(t)
    assert s["d1"].after == () and s["d1"].host_s == pytest.approx(500 * US)
    assert t.counts["inferred_dependencies"] == 0
    # a late start below the trace's rounding is no delay
    t = steps_of([busy, k(0, 300, "a"), k(300.05, 400, "b")])
    assert t.counts["host_delays"] == 0


def test_copies_within_a_gpu_and_several_gpus():
    t = steps_of([c(0, 10, "dtod"), c(5, 30, "htod", device=1)])
    s = by_id(t)
    assert s["c1"].src == s["c1"].dst == "gpu0"
    assert s["c2"].dst == "gpu1" and s["c2"].stream == "1/7" and s["c1"].stream == "0/7"


def test_other_records_are_counted_and_an_empty_trace_refused():
    mig = Measurement("migration", 1e-6, "[Unified Memory HtoD]", direction="htod",
                      size_bytes=4096.0, stream=7, device=0, start_s=0.0, end_s=1e-6)
    t = steps_of([mig, k(0, 10)])
    assert t.counts["skipped"] == {"migration": 1} and len(t.steps) == 1
    with pytest.raises(InvalidParameter, match="no kernel or copy"):
        steps_of([mig])


@pytest.mark.parametrize("name, short", [
    ("saxpy(int, float, float const*, float*)", "saxpy"),
    ("void gemm_kernel<float, 128>(int, float const*)", "gemm_kernel"),
    ("_Z6saxpy2ifPKfPfi", "saxpy2"),
    ("void ns::inner::scale(float*)", "scale"),
    ("saxpy2", "saxpy2"),
])
def test_short_kernel_names(name, short):
    assert short_kernel_name(name) == short


def gpu(name, sms, clock, bw):
    return GPUSpec(name=name, compute_capability="8.0", sms=sms, sm_clock_hz=clock,
                   memory_bandwidth_bytes_per_s=bw)


def test_measured_times_scale_by_the_less_favourable_ratio():
    a = gpu("A", 100, 1.0e9, 1.0e12)
    compute_bound_faster = gpu("B", 200, 1.0e9, 1.5e12)   # 2x SM rate, 1.5x bandwidth
    t, how = scaled_kernel_time(3e-3, a, compute_bound_faster)
    assert how["compute_ratio"] == pytest.approx(0.5)
    assert how["memory_ratio"] == pytest.approx(1 / 1.5)
    assert t == pytest.approx(3e-3 / 1.5)
    same, how = scaled_kernel_time(3e-3, a, a)
    assert same == 3e-3 and how["scale"] == 1.0
    t, _ = scaled_copy_time(1e-3, a, compute_bound_faster)
    assert t == pytest.approx(1e-3 / 1.5)
    with pytest.raises(InvalidParameter, match="cannot carry"):
        scaled_kernel_time(1e-3, a, GPUSpec(name="C"))


def test_steps_overlapping_in_one_stream_go_on_lanes():
    # a CUDA graph's parallel branches: one stream id, overlapping kernels
    t = steps_of([k(0, 100, "a"), k(10, 60, "b"), k(20, 30, "c"), k(100, 150, "d"),
                  k(70, 90, "e")])
    s = {x.name: x for x in t.steps}
    assert (s["a"].stream, s["b"].stream, s["c"].stream) == ("7", "7~1", "7~2")
    assert s["e"].stream == "7~1" and s["d"].stream == "7"


def test_copies_that_overlapped_in_one_direction_are_concurrent():
    t = steps_of([c(0, 100), c(50, 150, stream=8), c(60, 90, "dtoh", stream=9), c(200, 300)])
    s = by_id(t)
    assert (s["c1"].concurrent, s["c2"].concurrent) == (True, True)
    assert not s["c3"].concurrent and not s["c4"].concurrent


def test_the_same_gpu_for_the_scaling_keeps_the_measured_time():
    from dataclasses import replace
    a = gpu("A", 100, 1.0e9, 1.0e12)
    assert scaled_kernel_time(2e-3, a, replace(a, copy_engines=3))[0] == 2e-3
    bare = GPUSpec(name="GPU 0")    # nothing known, on both sides: the same GPU
    assert scaled_kernel_time(2e-3, bare, replace(bare, copy_engines=2))[0] == 2e-3
    # an override of what the scaling reads does change the time
    t, how = scaled_kernel_time(2e-3, a, replace(a, sms=50))
    assert t == pytest.approx(4e-3) and how["compute_ratio"] == pytest.approx(2.0)


def test_kernel_steps_name_their_launch_ids_when_given():
    records = [k(0, 10, "a"), k(10, 20, "b"), k(20, 30, "a"), c(30, 40),
               k(40, 50, "a", grid=(3, 1, 1)), k(50, 60, "b", stream=8)]
    asked = []

    def launch_id(index):
        asked.append(index)
        return f"L{10 * index + 1}"
    t = trace_application(records, gpu_of=lambda d: f"gpu{d}", host_of=lambda d: "host1",
                          traced_name_of=lambda d: f"GPU {d}", launch_id_of=launch_id)
    kernels = [s for s in t.steps if s.kind == "kernel"]
    assert asked == [0, 1, 2]   # once per launch, in first-use order
    assert [s.launch for s in kernels] == ["L1", "L11", "L1", "L21", "L11"]
    assert [t.launch_of[s.id] for s in kernels] == [0, 1, 0, 2, 1]
    assert all(s.launch is None for s in t.steps if s.kind != "kernel")
    # without it, the steps name no launch (the caller places them)
    assert all(s.launch is None for s in steps_of(records).steps)
    # the lanes of a stream are the stream's own on every device
    two = trace_application([k(0, 10, "a", device=0), k(0, 10, "a", device=1),
                             k(5, 15, "a", device=1)],
                            gpu_of=lambda d: f"gpu{d}", host_of=lambda d: "host1",
                            traced_name_of=lambda d: f"GPU {d}")
    assert [s.stream for s in two.steps if s.kind == "kernel"] == ["0/7", "1/7", "1/7~1"]
