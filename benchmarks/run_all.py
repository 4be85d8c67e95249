"""Run every benchmark script in this folder (make bench), each in a process of its own: a
benchmark run after others in one process inherits their heap (10^5-instruction graphs,
10 000-device reports), which slows its allocations and skews its growth figures. A script
that reports a missed target (exit status 1) does not stop the others, and the run ends with
status 1."""
import subprocess
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
missed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"== {script.name}", flush=True)
    if subprocess.run([sys.executable, str(script)]).returncode != 0:
        missed.append(script.name)
if missed:
    print(f"== missed a target: {', '.join(missed)}")
    sys.exit(1)
