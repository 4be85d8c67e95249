"""GUI replot benchmark (the desktop application's target): a 1000-point sweep of the saxpy2
launch on the GTX 970, computed (snapshot + vectorised run), pushed into the plot with
setData and painted (processEvents on a shown widget, offscreen). Target: < 100 ms.

Also timed: the same replot through the launch panel's background worker (click Run to
curves on screen), and four GPUs × 1000 points.

Run: python benchmarks/bench_gui_replot.py   (prints one line per measurement)
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 100.0


def _catalog(tmp: Path):
    from gpumodeler.db.build_devices import build
    from gpumodeler.db.catalog import Catalog

    shipped = ROOT / "devices.db"
    if not shipped.exists():
        shipped = tmp / "devices.db"
        build(ROOT / "resources" / "devices", shipped)
    return Catalog(user_db=tmp / "user-devices.db", shipped_db=shipped)


def _project():
    example = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
    if example.exists():
        from gpumodeler.db.project_file import load_project
        return load_project(example)
    from gpumodeler.core.commands import AddConnection, AddItem, AddKernel, UndoStack
    from gpumodeler.core.kernel.graph import from_dict
    from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice, Project, Transfer
    p = Project("saxpy2")
    s = UndoStack(p)
    s.push(AddItem("devices", PlacedDevice("gpu1", "gpu", "GeForce GTX 970")))
    s.push(AddItem("devices", PlacedDevice("host1", "host", "Gajger GTX 970 testbed host")))
    s.push(AddConnection(Connection("link1", "PCIe 3.0 x16 (Gajger GTX 970 testbed)", "host1", "gpu1")))
    s.push(AddKernel("saxpy2", from_dict(json.loads((ROOT / "resources/kernels/saxpy2-maxwell.json").read_text()))))
    s.push(AddItem("launches", LaunchConfig(
        "launch1", gpu="gpu1", kernel="saxpy2", block_size=256, data_size=400_000_000, registers=8,
        lam=0.703787, variables={"a": 128}, transfers=tuple(Transfer(d, "4*N") for d in ("htod", "htod", "dtoh")))))
    return p


def main() -> int:
    import numpy as np
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from gpumodeler.ui.document import Document
    from gpumodeler.ui.launch_panel.panel import LaunchPanel
    from gpumodeler.core.launch_sweep import make_snapshot, run_sweep, variable_label
    from gpumodeler.ui.plots.sweep_plot import SweepPlot

    with tempfile.TemporaryDirectory() as tmpdir:
        catalog = _catalog(Path(tmpdir))
        project = _project()
        lid = next(iter(project.launches))
        gpu = lambda n: catalog.get(n).to_gpu_spec()
        link = lambda n: catalog.get(n).to_link_spec()
        plot = SweepPlot()
        plot.resize(900, 500)
        plot.show()
        app.processEvents()

        def replot(variable, values, devices=(), log_x=False):
            t0 = time.perf_counter()
            result = run_sweep(make_snapshot(project, lid, gpu, link, variable, values, devices=devices))
            t1 = time.perf_counter()
            plot.show_result(result, variable_label(variable), "bench", log_x=log_x)
            app.processEvents()  # lays out and paints the new frame
            t2 = time.perf_counter()
            return (t2 - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3

        cases = [
            ("loop variable a, 1000 points", "a", np.linspace(0, 999, 1000), (), False),
            ("block size 1..1000, 1000 points", "block_size", np.arange(1, 1001), (), False),
            ("data size N log, 1000 points", "data_size", np.unique(np.round(np.geomspace(1e3, 4e8, 1000))), (), True),
            ("a, 4 GPUs x 1000 points", "a", np.linspace(0, 999, 1000),
             ("GeForce GTX 970", "Tesla K40", "GeForce GTX 680", "GeForce GTX TITAN X (Maxwell)"), False),
        ]
        worst = 0.0
        for name, variable, values, devices, log_x in cases:
            replot(variable, values, devices, log_x)  # warm-up
            runs = [replot(variable, values, devices, log_x) for _ in range(15)]
            total = statistics.median(r[0] for r in runs)
            compute = statistics.median(r[1] for r in runs)
            draw = statistics.median(r[2] for r in runs)
            worst = max(worst, total)
            print(f"replot {name}: {total:.1f} ms median (compute {compute:.1f} ms, setData + paint "
                  f"{draw:.1f} ms); target < {TARGET_MS:.0f} ms")

        # the whole gesture: Run sweep -> worker -> curves on screen
        panel = LaunchPanel(Document(project, catalog))
        panel.resize(1300, 850)
        panel.show()
        app.processEvents()
        sweep = panel.sweep
        sweep.set_variable("a")
        sweep.from_edit.setText("0")
        sweep.to_edit.setText("999")
        sweep.points_spin.setValue(1000)
        times = []
        for _ in range(10):
            previous = sweep.result
            t0 = time.perf_counter()
            sweep.run()
            while sweep.job is not None or sweep.result is previous:
                app.processEvents()
                time.sleep(0.0005)
            panel.repaint()
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"panel Run sweep -> worker -> plot, 1000 points: {statistics.median(times):.1f} ms median")
        panel.close()
        plot.close()
        catalog.close()
    print(f"worst replot {worst:.1f} ms: {'OK' if worst < TARGET_MS else 'SLOWER THAN TARGET'}")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
