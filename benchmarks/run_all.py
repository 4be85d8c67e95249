"""Run every benchmark script in this folder (make bench), each in a process of its own: a
benchmark run after others in one process inherits their heap (10^5-instruction graphs,
10 000-device reports), which slows its allocations and skews its growth figures. A script
that reports a missed target (exit status 1) does not stop the others, and the run ends with
status 1.

Before each script and after the last, a fixed workload is timed (:func:`machine_speed`):
on a shared machine the same code measures ±30 % apart within minutes, and these lines tell a
slow spell of the machine from a slower program, script by script.

A script that misses a target is run a second time after the others (with its own
machine-speed line), and both runs stay in the output. The summary says which targets were
missed in both runs (the run ends with status 1) and which in one run only: a row that close
to its target on a shared machine, reported as such rather than hidden."""
import subprocess
import sys
import time
from pathlib import Path


def machine_speed(rounds: int = 5) -> tuple:
    """Best-of-``rounds`` CPU milliseconds of two fixed workloads: pure Python (dict and list
    work over 2·10^5 strings, as a graph read does) and numpy (sorting 10^6 numbers)."""
    import numpy as np

    keys = [f"n{i}" for i in range(200_000)]
    data = np.random.default_rng(1).random(1_000_000)
    python = numpy = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        index = dict(zip(keys, range(len(keys))))
        sum(map(index.__getitem__, reversed(keys)))
        python = min(python, time.process_time() - t0)
        t0 = time.process_time()
        np.sort(data)
        numpy = min(numpy, time.process_time() - t0)
    return python * 1e3, numpy * 1e3


def report_speed(when: str, rounds: int = 5) -> None:
    python, numpy = machine_speed(rounds)
    print(f"== machine speed {when}: fixed Python workload {python:.1f} ms CPU, fixed numpy "
          f"workload {numpy:.1f} ms CPU (compare runs by these: the same code is slower on a "
          f"busy machine)", flush=True)


def run(script: Path, rounds: int = 5) -> bool:
    """Run one benchmark script in a process of its own; True when it met its targets."""
    print(f"== {script.name}", flush=True)
    report_speed(f"before {script.name}", rounds)
    return subprocess.run([sys.executable, str(script)]).returncode == 0


def main(folder: Path | None = None, rounds: int = 5) -> int:
    """Run every bench_*.py of ``folder`` (this one); ``rounds`` of each machine-speed line."""
    folder = folder or Path(__file__).resolve().parent
    missed = [s for s in sorted(folder.glob("bench_*.py")) if not run(s, rounds)]
    again = [s for s in missed if not run(s, rounds)]
    report_speed("after", rounds)
    flapping = [s.name for s in missed if s not in again]
    if flapping:
        print(f"== missed a target in one of two runs (close to its target on this "
              f"machine; see both runs above): {', '.join(flapping)}")
    if again:
        print(f"== missed a target in both runs: {', '.join(s.name for s in again)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
