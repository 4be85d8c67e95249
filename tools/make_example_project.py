"""Rebuild resources/examples/saxpy2-gtx970.gpm: Gajger's saxpy2 testbed as a project.

Gajger (MSc 2017, §5.2, Fig. 5.24) models saxpy2 on a GeForce GTX 970 in a PC with a
PCIe 3.0 x16 link: block 256, N = 400 000 000 elements, 8 registers per thread (the
occupancy calculator gives 64 warps per SM on compute capability 5.2), λ = 0.703787, the
loop variable a = 128, and three copies of 4·N bytes (x and y to the device, y back).

The project is built through the same undoable commands the editors use, from the device
names of resources/devices and the kernel graph resources/kernels/saxpy2-maxwell.json, so a
change to either is one rerun away. The build is deterministic: the same project content on
every run (the file's bytes differ only in the time its migrations were recorded).

Run: python tools/make_example_project.py [OUT.gpm]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpumodeler.core.application.app import Application, Step  # noqa: E402
from gpumodeler.core.commands import AddConnection, AddItem, AddKernel, UndoStack  # noqa: E402
from gpumodeler.core.kernel.graph import from_dict  # noqa: E402
from gpumodeler.core.project import (Connection, LaunchConfig, PlacedDevice, Project,  # noqa: E402
                                     SweepDef, Transfer)

OUT = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
KERNEL = ROOT / "resources" / "kernels" / "saxpy2-maxwell.json"

GPU = "GeForce GTX 970"
HOST = "Gajger GTX 970 testbed host"
LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"


def build_project() -> Project:
    """The example project, built with commands (as a user would in the editors)."""
    project = Project("saxpy2 on GeForce GTX 970 (Gajger 2017)")
    project.description = (
        "Gajger's saxpy2 testbed (MSc thesis 2017, §5.2): the kernel graph reconstructed "
        "from the SASS of Fig. 5.2 (latency bound 942 + 24·a cycles) on a GeForce GTX 970 "
        "behind PCIe 3.0 x16. The launch 'Fig. 5.24' is the thesis' worked example: "
        "N = 4·10^8, block 256, 8 registers, λ = 0.703787, a = 128, 3 × 1.6 GB copies.")
    stack = UndoStack(project)
    stack.push(AddItem("devices", PlacedDevice("host1", "host", HOST, label="testbed host",
                                               x=0.0, y=0.0)))
    stack.push(AddItem("devices", PlacedDevice("gpu1", "gpu", GPU, label="GTX 970",
                                               x=360.0, y=0.0)))
    stack.push(AddConnection(Connection("link1", LINK, "host1", "gpu1", "pcie",
                                        label="PCIe 3.0 x16")))
    graph = from_dict(json.loads(KERNEL.read_text(encoding="utf-8")))
    stack.push(AddKernel("saxpy2", graph))
    copies = (Transfer("htod", "4*N", "link1"), Transfer("htod", "4*N", "link1"),
              Transfer("dtoh", "4*N", "link1"))
    stack.push(AddItem("launches", LaunchConfig(
        "launch1", name="Fig. 5.24", gpu="gpu1", kernel="saxpy2", block_size=256,
        data_size=400_000_000, registers=8, occupancy_override=None, lam=0.703787,
        variables={"a": 128}, transfers=copies)))
    stack.push(AddItem("sweeps", SweepDef(
        "sweep1", "launch1", "a", tuple(2 ** k for k in range(13)),
        name="loop iterations a = 1..4096")))
    # Fig. 5.23's program as an application: x and y up, the kernel, y back, on one stream
    # (cudaMemcpy is blocking), so its makespan is the launch's total time.
    stack.push(AddItem("applications", Application(
        "app1", "saxpy2 program (Fig. 5.23)", (
            Step("copy_x", "copy", "x to GPU", src="host1", dst="gpu1", size="4*N"),
            Step("copy_y", "copy", "y to GPU", src="host1", dst="gpu1", size="4*N"),
            Step("saxpy2", "kernel", "saxpy2", launch="launch1"),
            Step("copy_back", "copy", "y to host", src="gpu1", dst="host1", size="4*N")),
        variables={"N": 400_000_000})))
    return project


def main(argv: list[str]) -> int:
    from gpumodeler.db.project_file import load_project, save_project
    out = Path(argv[0]) if argv else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    project = build_project()
    save_project(project, out)
    assert load_project(out) == project
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: "
          f"{len(project.devices)} devices, {len(project.kernels)} kernel, "
          f"{len(project.launches)} launch, {len(project.sweeps)} sweep")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
