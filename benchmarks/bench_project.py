"""Speed of project files: save and load a project of K kernels × N instructions.

    python benchmarks/bench_project.py [--kernels 10] [--instructions 1000] [--repeat 5]

Each kernel is a chain of instructions with ILP edges, a register dependency every fourth
instruction, a memory edge from each load and a loop over the middle half (about 2.25 N
edges per kernel), plus a system, a launch per kernel and a sweep. One line per measurement
(best of --repeat runs); the goal is well under a second each, so saving on every edit
stays invisible.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, Loop  # noqa: E402
from gpumodeler.core.project import (Connection, LaunchConfig, PlacedDevice, Project,  # noqa: E402
                                     SweepDef, Transfer)
from gpumodeler.db.project_file import load_project, read_project_file, save_project  # noqa: E402

OPCODES = ["MOV", "IADD", "FFMA", "LDG", "ISETP", "SHL", "FADD", "STG"]


def make_kernel(k: int, n: int) -> KernelGraph:
    g = KernelGraph(name=f"kernel {k}", latency_table="maxwell-gajger", variables={"a": 8})
    ids = [f"i{j}" for j in range(n)]
    for j, nid in enumerate(ids):
        g.add_instruction(Instruction.make(nid, OPCODES[j % len(OPCODES)], label=f"line {j}",
                                           x=float(j % 40) * 120.0, y=float(j // 40) * 56.0))
    e = 0
    for j in range(1, n):
        g.add_edge(Edge(f"e{e}", ids[j - 1], ids[j], "ilp", latency=3))
        e += 1
        if j % 4 == 0 and j >= 3:
            g.add_edge(Edge(f"e{e}", ids[j - 3], ids[j], "dependency"))
            e += 1
        if OPCODES[(j - 2) % len(OPCODES)] == "LDG" and j >= 2:
            g.add_edge(Edge(f"e{e}", ids[j - 2], ids[j], "memory", latency=350))
            e += 1
    lo, hi = n // 4, 3 * n // 4
    g.add_edge(Edge(f"e{e}", ids[hi - 1], ids[lo], "branch", latency=12, taken=True))
    g.add_loop(Loop.make("loop", ids[lo:hi], "a"))
    return g


def make_project(kernels: int, instructions: int) -> Project:
    p = Project("benchmark")
    p.put("devices", PlacedDevice("host1", "host", "Gajger GTX 970 testbed host"))
    p.put("devices", PlacedDevice("gpu1", "gpu", "GeForce GTX 970", x=360))
    p.put("connections", Connection("link1", "PCIe 3.0 x16 (Gajger GTX 970 testbed)",
                                    "host1", "gpu1"))
    for k in range(kernels):
        p.put_kernel(f"k{k}", make_kernel(k, instructions))
        p.put("launches", LaunchConfig(f"l{k}", gpu="gpu1", kernel=f"k{k}",
                                       data_size=10**8, transfers=(Transfer("htod", "4*N"),)))
    p.put("sweeps", SweepDef("s1", "l0", "a", tuple(2 ** i for i in range(13))))
    return p


def best(fn, repeat: int) -> tuple[float, float]:
    """Best wall-clock and best CPU time of ``repeat`` runs (CPU time is steadier on a
    busy machine; wall time includes the fsyncs)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def ms(t: tuple[float, float]) -> str:
    return f"{t[0] * 1e3:8.1f} ms ({t[1] * 1e3:.1f} ms CPU)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=10)
    ap.add_argument("--instructions", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    project = make_project(args.kernels, args.instructions)
    edges = sum(len(g.edges) for g in project.kernels.values())
    label = f"{args.kernels} kernels × {args.instructions} instructions, {edges} edges"
    with tempfile.TemporaryDirectory() as tmp:
        fresh = iter(range(args.repeat))
        t = best(lambda: save_project(project, Path(tmp) / f"new{next(fresh)}.gpm"), args.repeat)
        print(f"save (new file)          {ms(t)}  {label}")
        path = Path(tmp) / "new0.gpm"
        t = best(lambda: save_project(project, path), args.repeat)
        print(f"save (replace previous)  {ms(t)}  {path.stat().st_size / 1e6:.2f} MB")
        t = best(lambda: load_project(path), args.repeat)
        print(f"load                     {ms(t)}")
        loaded, _ = read_project_file(path)
        assert loaded == project
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
