"""Run every benchmark script in this folder (make bench); a script that reports a missed
target (exit status 1) does not stop the others, and the run ends with status 1."""
import runpy
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
missed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"== {script.name}", flush=True)
    sys.argv = [str(script)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            missed.append(script.name)
if missed:
    print(f"== missed a target: {', '.join(missed)}")
    sys.exit(1)
