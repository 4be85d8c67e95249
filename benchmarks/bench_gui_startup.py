"""Time from process start to the main window shown with the example project (offscreen).

    python benchmarks/bench_gui_startup.py [--runs 5] [--project FILE.gpm]

Each run is a fresh Python process (imports, QApplication, device catalog, project file,
the three editors, the first paint); the parent measures from spawning it to the child's
"shown" line, printed once the window has been shown and its events processed. Prints every
run and the median. Target: under 2 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 2.0

CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from gpumodeler.ui.app import create_application, open_catalog
app = create_application()
from gpumodeler.db.project_file import load_project
from gpumodeler.ui.document import Document
from gpumodeler.ui.main_window import MainWindow
catalog, error = open_catalog()
assert error is None, error
window = MainWindow(catalog, Document(load_project(sys.argv[2]), catalog, path=sys.argv[2]),
                    remember=False)
window.show()
app.processEvents()
assert window.isVisible() and window.document.project.devices
print("shown", time.process_time(), flush=True)
"""


def one_run(project: Path) -> tuple[float, float]:
    """(wall seconds until the window was shown, CPU seconds of the child)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               GPUMODELER_USER_DB=str(Path(tempfile.mkdtemp()) / "user.db"),
               GPUMODELER_SETTINGS_DIR=tempfile.mkdtemp())
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT), str(project)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = child.stdout.readline()
    wall = time.perf_counter() - start
    child.wait()
    if not line.startswith("shown"):
        raise SystemExit(f"the window did not show: {child.stderr.read().strip()}")
    return wall, float(line.split()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--project", type=Path,
                        default=ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm")
    args = parser.parse_args()
    one_run(args.project)  # warm the file-system cache: measure start-up, not the disk
    walls, cpus = [], []
    for i in range(args.runs):
        wall, cpu = one_run(args.project)
        walls.append(wall)
        cpus.append(cpu)
        print(f"run {i + 1}: window shown after {wall:.3f} s (CPU {cpu:.3f} s)")
    median = statistics.median(walls)
    verdict = "ok" if median < TARGET_S else "SLOWER than the target"
    print(f"gui startup: median {median:.3f} s wall, {statistics.median(cpus):.3f} s CPU "
          f"over {args.runs} runs (target < {TARGET_S:.0f} s: {verdict})")
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
