"""Core speed benchmarks (speed targets: a vectorised core near fused numpy, a thin scalar API).

1. Occupancy + bounds + time of one million launches (block size × registers × shared memory
   × data size × loop variable) of the saxpy2 graph on a GTX 970, as the engine computes
   them — the occupancy calculator's arrays path (``occupancy_array``), then ``predict``
   (throughput worksheet, eq. 4.1–4.3) — against the same arithmetic written as one
   straight, hand-fused numpy expression (checked equal to 1e-12). Both start from the
   per-warp inputs of the graph evaluated at every point (timed on their own line: that is
   the kernel graph's expression evaluator, not the prediction core).
   Target >= 10^7 launches/s/core and within 2x of the fused expression.
2. Scalar ``predict()`` for one launch (target <= 50 µs a call), with and without two
   transfers, and a Python loop over that scalar API against the vectorised sweep.
3. The critical path of a 100 000-node kernel graph with loops (symbolic latency bound).

Figures are medians of repeated runs (engine and comparator interleaved, so that a busy
machine slows both alike). Run: python benchmarks/bench_core.py; exit status 1 when a
target is missed.
"""
from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop, from_dict
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.warp_counts import count
from gpumodeler.core.models.gajger import KernelInputs, cartesian, kernel_inputs_from_graph, predict
from gpumodeler.core.models.kernel_time import grid_for
from gpumodeler.core.occupancy.arrays import occupancy_array
from gpumodeler.core.occupancy.checks import UNLIMITED
from gpumodeler.core.occupancy.compute_capability import architecture

ROOT = Path(__file__).resolve().parents[1]
GTX970 = GPUSpec("GeForce GTX 970", compute_capability="5.2", sms=13, sm_clock_hz=1253e6,
                 cuda_cores_per_sm=128, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=13.78)
PCIE3 = LinkSpec("PCIe 3.0 x16", bandwidth_bytes_per_s=15.8e9, startup_htod_s=3.96868e-6,
                 startup_dtoh_s=5.15692e-6, lambda_htod=0.689, lambda_dtoh=0.653)
LAM = 0.703787
SWEEP_RATE_TARGET = 1e7  # launches per second per core
FUSED_RATIO_TARGET = 2.0
SCALAR_TARGET_US = 50.0
missed = []


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def medians(*fns, repeat=7, cpu=False):
    """Median seconds of each function, the functions run in turn ``repeat`` times: wall
    time, or with ``cpu`` the (wall, CPU) pair of this process. The core is single-threaded,
    so its CPU time is the time per core, which on a shared machine the wall time is not."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            ts.append((time.perf_counter() - t0, time.process_time() - c0))
    if cpu:
        return [(statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts))
                for ts in times]
    return [statistics.median(t[0] for t in ts) for ts in times]


def verdict(ok: bool, name: str) -> str:
    if not ok:
        missed.append(name)
    return "ok" if ok else "MISSED"


def saxpy2():
    return from_dict(json.loads((ROOT / "resources/kernels/saxpy2-maxwell.json").read_text()))


def million_launches():
    """The sweep's axes, flattened (first slowest): 10 × 10 × 5 × 20 × 100 launches."""
    return cartesian(block=np.array([32, 64, 96, 128, 192, 256, 384, 512, 768, 1024]),
                     regs=np.arange(16, 64, 5), smem=np.array([0, 1024, 2048, 4096, 8192]),
                     n=np.logspace(5, 9, 20).astype(np.int64), a=np.arange(1, 101, dtype=float))


def engine(gpu, arch_cc, grid, inputs):
    """What a sweep runs: the occupancy calculator's arrays path, then predict."""
    occ = occupancy_array(arch_cc, grid["block"], grid["regs"], grid["smem"])
    return predict(gpu, inputs, grid_size=grid_for(grid["n"], grid["block"]),
                   block_size=grid["block"], occupancy=occ.active_warps_per_sm,
                   lam=LAM).kernel.time_s


def fused_comparator(gpu, arch, block, regs, smem, n, lat, cuda, issued, gmem):
    """The same arithmetic as one straight numpy expression, written for the rules that
    apply here (per-warp register allocation, no partitioned caching, one fixed shared-memory
    size per SM, as on compute capability 5.2; asserted by the caller): occupancy
    (calculator rules 1-5), throughput bound (eq. 4.5-4.6), warps launched (eq. 4.2),
    warp throughput (eq. 4.3) and time (eq. 4.1)."""
    W, ru, su, g = (arch.warp_size, arch.register_allocation_unit,
                    arch.shared_mem_allocation_unit_bytes, arch.warp_allocation_granularity)
    wpb = (block + W - 1) // W
    alloc = (smem + arch.reserved_shared_mem_per_block_bytes + su - 1) // su * su
    active = np.minimum(
        np.minimum(arch.max_warps_per_sm // wpb,
                   arch.registers_per_sm // g // ((regs * W + ru - 1) // ru * ru) * g // wpb),
        np.minimum(np.where(alloc == 0, UNLIMITED,
                            arch.shared_mem_per_sm_bytes // np.maximum(alloc, 1)),
                   arch.max_blocks_per_sm))
    return ((((n + block - 1) // block) * wpb)
            / (np.minimum((active * wpb) / lat,
                          1.0 / np.maximum(np.maximum(W * cuda / gpu.cuda_cores_per_sm,
                                                      issued / (gpu.schedulers_per_sm
                                                                * gpu.issue_per_scheduler_per_cycle)),
                                           gmem / gpu.gmem_bytes_per_cycle_per_sm))
               * gpu.sms * LAM) / gpu.sm_clock_hz)


def sweep_million():
    graph = saxpy2()
    bound, counts = analyze(graph), count(graph)
    grid = million_launches()
    points = grid["block"].size
    arch = architecture(GTX970.compute_capability)
    assert (arch.register_allocation == "warp" and not arch.double_unit_register_counts
            and not arch.has_carveout and arch.shared_mem_configs_bytes == (arch.shared_mem_per_sm_bytes,)), \
        "the fused comparator is written for compute capability 5.2's rules"
    assert bool(occupancy_array(arch.compute_capability, grid["block"], grid["regs"], grid["smem"]).valid.all())

    def graph_inputs():
        c = counts.evaluate({"a": grid["a"]})
        return KernelInputs(latency_bound=bound.evaluate({"a": grid["a"]}),
                            issued_instructions=c["issued_instructions"],
                            cuda_core_instructions=c["cuda_core_instructions"], gmem_bytes=c["gmem_bytes"])

    (t_inputs,) = medians(graph_inputs, repeat=3)
    inputs = graph_inputs()
    cc = arch.compute_capability

    def run_engine():
        return engine(GTX970, cc, grid, inputs)

    def run_fused():
        return fused_comparator(GTX970, arch, grid["block"], grid["regs"], grid["smem"], grid["n"],
                                inputs.latency_bound, inputs.cuda_core_instructions,
                                inputs.issued_instructions, inputs.gmem_bytes)

    times, fused = run_engine(), run_fused()
    np.testing.assert_allclose(times, fused, rtol=1e-12, atol=0)
    (w_engine, c_engine), (w_fused, c_fused) = medians(run_engine, run_fused, repeat=9, cpu=True)
    rate, ratio = points / c_engine, c_engine / c_fused
    print(f"sweep: {points} launches, occupancy + bounds + time: engine {c_engine * 1e3:.1f} ms "
          f"CPU ({rate:.2e} launches/s/core; target >= {SWEEP_RATE_TARGET:.0e}: "
          f"{verdict(rate >= SWEEP_RATE_TARGET, 'sweep rate')}), hand-fused numpy "
          f"{c_fused * 1e3:.1f} ms CPU: ratio {ratio:.2f}x (target <= {FUSED_RATIO_TARGET:g}x: "
          f"{verdict(ratio <= FUSED_RATIO_TARGET, 'sweep vs fused')}); equal to 1e-12")
    print(f"sweep: wall time (this machine shared) engine {w_engine * 1e3:.1f} ms, fused "
          f"{w_fused * 1e3:.1f} ms: ratio {w_engine / w_fused:.2f}x")
    print(f"sweep: the graph's per-warp inputs at {points} points (latency bound and counts, "
          f"not in the row above) {t_inputs * 1e3:.1f} ms")
    return grid, bound, counts, inputs, times


def scalar_predict(grid, bound, counts, inputs, times):
    graph = saxpy2()
    one = kernel_inputs_from_graph(graph, {"a": 10.0})
    transfers = [("htod", 8e6), ("htod", 8e6), ("dtoh", 8e6)]

    def per_call(fn, calls=2000, repeat=7):
        fn()
        wall, cpu = medians(lambda: [fn() for _ in range(calls)], repeat=repeat, cpu=True)[0]
        return wall / calls * 1e6, cpu / calls * 1e6

    w_kernel, kernel_only = per_call(lambda: predict(GTX970, one, grid_size=4096, block_size=256,
                                                     occupancy=64, lam=LAM))
    w_transfers, with_transfers = per_call(lambda: predict(
        GTX970, one, grid_size=4096, block_size=256, occupancy=64, lam=LAM, link=PCIE3,
        transfers=transfers))
    print(f"scalar predict(): {kernel_only:.1f} µs CPU a call (target <= {SCALAR_TARGET_US:g} µs: "
          f"{verdict(kernel_only <= SCALAR_TARGET_US, 'scalar predict')}); with a link and 3 "
          f"transfers {with_transfers:.1f} µs "
          f"({verdict(with_transfers <= SCALAR_TARGET_US, 'scalar predict with transfers')}); "
          f"wall {w_kernel:.1f} / {w_transfers:.1f} µs")

    # A Python loop over the scalar API (with the occupancy calculator's scalar path) on a
    # sample of the sweep's launches, against the vectorised engine.
    from gpumodeler.core.occupancy.calculator import occupancy
    sample = 3000
    idx = np.random.default_rng(1).choice(grid["block"].size, sample, replace=False)

    def loop():
        out = []
        for i in idx:
            a, block = float(grid["a"][i]), int(grid["block"][i])
            c = counts.evaluate({"a": a})
            inp = KernelInputs(latency_bound=float(bound.evaluate({"a": a})),
                               issued_instructions=c["issued_instructions"],
                               cuda_core_instructions=c["cuda_core_instructions"],
                               gmem_bytes=c["gmem_bytes"])
            occ = occupancy("5.2", block, int(grid["regs"][i]), int(grid["smem"][i]))
            out.append(predict(GTX970, inp, grid_size=grid_for(int(grid["n"][i]), block),
                               block_size=block, occupancy=occ.active_warps_per_sm,
                               lam=LAM).kernel.time_s)
        return np.array(out)

    t_loop, looped = best_of(loop, 1)
    np.testing.assert_allclose(looped, times[idx], rtol=1e-12, atol=0)
    print(f"sweep: a Python loop over the scalar API (graph, occupancy, predict) "
          f"{t_loop / sample * 1e6:.1f} µs a launch (timed on {sample}), equal to the "
          f"vectorised engine to 1e-12")


def big_graph(n_nodes=100_000, loop_every=200, loop_len=20, seed=7):
    """A synthetic warp program: ILP chain, random register dependencies, a loop (with its
    taken back edge and `a`/`b` iterations) in every block of ``loop_every`` instructions."""
    rng = random.Random(seed)
    ops = ["FADD", "FFMA", "IADD", "LDG", "MOV", "ISETP", "SHL", "MUFU", "LDS"]
    g = KernelGraph(name="synthetic", latency_table="maxwell-volkov")
    ids = [f"n{i}" for i in range(n_nodes)]
    for nid in ids:
        g.instructions[nid] = Instruction.make(nid, rng.choice(ops))
    e = 0
    for i in range(1, n_nodes):
        g.edges[f"e{e}"] = Edge(f"e{e}", ids[i - 1], ids[i], "ilp"); e += 1
        for _ in range(rng.randint(0, 2)):
            j = i - rng.randint(1, min(i, 12))
            kind = "memory" if g.instructions[ids[j]].is_load else "dependency"
            g.edges[f"e{e}"] = Edge(f"e{e}", ids[j], ids[i], kind); e += 1
    for k, start in enumerate(range(50, n_nodes - loop_len, loop_every)):
        members = ids[start:start + loop_len]
        g.edges[f"e{e}"] = Edge(f"e{e}", members[-1], members[0], "branch", latency=12); e += 1
        g.loops[f"L{k}"] = Loop.make(f"L{k}", members, "a" if k % 2 else "b")
    return g


def critical_path_100k():
    t0 = time.perf_counter()
    g = big_graph()
    t_build = time.perf_counter() - t0
    t_an, bound = best_of(lambda: analyze(g), 3)
    t_cp, path = best_of(lambda: bound.critical_path({"a": 10, "b": 3}), 3)
    print(f"graph: {len(g.instructions)} instructions, {len(g.edges)} edges, {len(g.loops)} loops "
          f"(built in {t_build:.2f} s)")
    print(f"graph: symbolic latency bound in {t_an:.2f} s -> {len(bound.forms)} form(s); "
          f"critical path for a=10, b=3 in {t_cp * 1e3:.1f} ms ({len(path.edge_ids)} edges)")


if __name__ == "__main__":
    scalar_predict(*sweep_million())
    critical_path_100k()
    if missed:
        print(f"missed: {', '.join(missed)}")
        sys.exit(1)
