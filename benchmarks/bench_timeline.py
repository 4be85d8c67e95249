"""Application timeline speed and growth (speed targets, docs/contributing.md).

A generated application of n steps over 4 GPUs and 2 streams per GPU, as an application of
the project format becomes once built (``gpumodeler.core.application.app.build``): every
stream repeats host-to-device copy, kernel, device-to-host copy; each step waits for the
previous step of its stream, and one kernel in 16 also waits for the last kernel of another
GPU (a cross-GPU dependency). Copies hold their GPU's copy engine of their direction and share
the bandwidth of their direction of the GPU's PCIe link and of the host's PCIe root (max-min
sharing); kernels hold their GPU's compute engine. Durations and sizes are random floats (a
fixed seed): every duration and rate has a full mantissa, so the picosecond grid and the
integer rates (docs/timeline.md) work on real values, and copies keep sharing the root.

Timed: :func:`gpumodeler.core.application.timeline.simulate` (best CPU time of a few rounds)
at 10^3, 10^4 and 10^5 steps under both engine policies; the exponent of time against size
is fitted by least squares on log-log. Target: 10^5 steps in under 2 s, exponent <= 1.2
(O(n log n)).

Run: python benchmarks/bench_timeline.py [--quick]   (--quick stops at 10^4 steps)
"""
from __future__ import annotations

import gc
import math
import random
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_graph import fit_exponent  # noqa: E402

from gpumodeler.core.application.timeline import Activity, simulate  # noqa: E402

TARGET_S = 2.0
MAX_EXPONENT = 1.2
GPUS = 4
STREAMS = 2
BUDGET_S = 60.0  # CPU seconds after which a row is stopped and reported as not finished


def generated_application(n: int, seed: int = 11) -> tuple:
    """(activities, capacities) of an application of ``n`` steps (see the module docstring)."""
    rng = random.Random(seed)
    capacities = {"host/pcie-root": 24e9}
    for g in range(GPUS):
        capacities[f"gpu{g}/pcie-in"] = 12e9
        capacities[f"gpu{g}/pcie-out"] = 12e9
    last = {}  # stream -> id of its last step
    last_kernel = {}  # gpu -> id of its last kernel
    acts = []
    for i in range(n):
        g, s = (i // 3) % GPUS, (i // (3 * GPUS)) % STREAMS
        stream = (g, s)
        kind = i % 3
        after = (last[stream],) if stream in last else ()
        sid = f"s{i}"
        if kind == 1:
            other = last_kernel.get((g + 1) % GPUS)
            if other is not None and rng.random() < 1 / 16:
                after += (other,)
            acts.append(Activity(sid, engines=(f"gpu{g}/compute",), after=after,
                                 fixed_s=rng.uniform(20e-6, 2e-3)))
            last_kernel[g] = sid
        else:
            inbound = kind == 0
            acts.append(Activity(
                sid, engines=(f"gpu{g}/copy-{'htod' if inbound else 'dtoh'}",), after=after,
                fixed_s=rng.uniform(5e-6, 12e-6), bytes=float(rng.randint(1 << 16, 1 << 26)),
                links=(f"gpu{g}/pcie-{'in' if inbound else 'out'}", "host/pcie-root"),
                rate_cap=rng.uniform(9e9, 11e9)))
        last[stream] = sid
    return acts, capacities


def _out_of_time(signum, frame):
    raise TimeoutError


def timed(n: int, policy: str, rounds: int, budget_s: float = BUDGET_S) -> float:
    """Best CPU seconds of ``rounds`` simulations; ``inf`` when one exceeds ``budget_s`` CPU
    seconds (it is stopped: a row far past its target need not hold ``make bench`` up)."""
    acts, caps = generated_application(n)
    best = float("inf")
    previous = signal.signal(signal.SIGPROF, _out_of_time)
    try:
        for _ in range(rounds):
            gc.collect()
            t0 = time.process_time()
            signal.setitimer(signal.ITIMER_PROF, budget_s)
            try:
                simulate(acts, caps, policy=policy)
            except TimeoutError:
                return float("inf")
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            best = min(best, time.process_time() - t0)
    finally:
        signal.signal(signal.SIGPROF, previous)
    return best


def main(argv) -> int:
    sizes = [1_000, 10_000] if "--quick" in argv else [1_000, 10_000, 100_000]
    failed = []
    for policy in ("in-order", "greedy"):
        times = [timed(n, policy, rounds=3 if n < 100_000 else 1) for n in sizes]
        done = [(n, s) for n, s in zip(sizes, times) if s != float("inf")]
        k = fit_exponent(*zip(*done)) if len(done) > 1 else float("inf")
        cells = ", ".join(f"10^{round(math.log10(n))}: " + (f"{s:.3f} s" if s != float("inf") else
                                                           f"not finished in {BUDGET_S:.0f} s")
                          for n, s in zip(sizes, times))
        verdict = "ok"
        if sizes[-1] == 100_000 and times[-1] >= TARGET_S:
            verdict = "MISSED"
        if k > MAX_EXPONENT or len(done) < len(sizes):
            verdict = "MISSED"
        if verdict != "ok":
            failed.append(policy)
        target = (f"10^5 steps target < {TARGET_S} s" if sizes[-1] == 100_000
                  else "10^5 steps not run (--quick)")
        print(f"timeline {policy}, {GPUS} GPUs x {STREAMS} streams: {cells} CPU; exponent {k:.2f} over "
              f"the finished sizes (must be <= {MAX_EXPONENT}); {target} -> {verdict}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
