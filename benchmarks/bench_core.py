"""Core speed benchmarks (issue: modeling engine).

1. A sweep of one million launch points (block size × occupancy × data size × loop
   variable) for the saxpy2 graph on a GTX 970, as one vectorised call, against a Python
   loop calling the same scalar API (timed on a sample and scaled to one million).
2. The critical path of a 100 000-node kernel graph with loops (symbolic latency bound).

Run: python benchmarks/bench_core.py   (prints one line per measurement)
"""
from __future__ import annotations

import json
import random
import time
from pathlib import Path

import numpy as np

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop, from_dict
from gpumodeler.core.models.kernel_time import grid_for
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.models.gajger import KernelInputs, cartesian, predict
from gpumodeler.core.kernel.warp_counts import count

ROOT = Path(__file__).resolve().parents[1]
GTX970 = GPUSpec("GeForce GTX 970", compute_capability="5.2", sms=13, sm_clock_hz=1253e6,
                 cuda_cores_per_sm=128, schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=13.78)


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def sweep_million():
    graph = from_dict(json.loads((ROOT / "resources/kernels/saxpy2-maxwell.json").read_text()))
    bound, counts = analyze(graph), count(graph)
    axes = dict(block=np.array([32, 64, 128, 256, 512, 1024] * 1 + [96, 192, 384, 768]),
                occ=np.arange(1, 65, dtype=float)[::2][:25],
                n=np.logspace(5, 9, 40).astype(np.int64),
                a=np.arange(1, 101, dtype=float))
    grid = cartesian(**axes)
    points = grid["block"].size

    def vectorised():
        lat = bound.evaluate({"a": grid["a"]})
        c = counts.evaluate({"a": grid["a"]})
        inputs = KernelInputs(latency_bound=lat, issued_instructions=c["issued_instructions"],
                              cuda_core_instructions=c["cuda_core_instructions"], gmem_bytes=c["gmem_bytes"])
        return predict(GTX970, inputs, grid_size=grid_for(grid["n"], grid["block"]),
                       block_size=grid["block"], occupancy=grid["occ"], lam=0.703787).kernel.time_s

    t_vec, times = best_of(vectorised, 3)
    sample = 5000
    idx = np.random.default_rng(1).choice(points, sample, replace=False)

    def loop():
        out = []
        for i in idx:
            a = float(grid["a"][i])
            c = counts.evaluate({"a": a})
            inputs = KernelInputs(latency_bound=float(bound.evaluate({"a": a})),
                                  issued_instructions=c["issued_instructions"],
                                  cuda_core_instructions=c["cuda_core_instructions"],
                                  gmem_bytes=c["gmem_bytes"])
            out.append(predict(GTX970, inputs, grid_size=int(grid_for(int(grid["n"][i]), int(grid["block"][i]))),
                               block_size=int(grid["block"][i]), occupancy=float(grid["occ"][i]),
                               lam=0.703787).kernel.time_s)
        return np.array(out)

    t_loop, looped = best_of(loop, 1)
    assert np.allclose(looped, times[idx], rtol=1e-12)
    per_million_loop = t_loop / sample * 1e6
    print(f"sweep: {points} launch points vectorised in {t_vec * 1e3:.1f} ms "
          f"({t_vec / points * 1e9:.0f} ns/point)")
    print(f"sweep: Python loop over the same scalar API {t_loop / sample * 1e6:.1f} µs/point "
          f"-> {per_million_loop:.1f} s per million (timed on {sample} points); "
          f"speed-up {per_million_loop / (t_vec / points * 1e6):.0f}x")


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
    sweep_million()
    critical_path_100k()
