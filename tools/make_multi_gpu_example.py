"""Rebuild resources/examples/four-h100-nvlink.gpm: a data-parallel saxpy2 on four H100 SXM5
GPUs joined by NVLink, with a server host over PCIe 5.0 x16.

The kernel is imported from the committed sm_90 listing of resources/kernels/src/saxpy2.cu
(resources/kernels/sass/saxpy2.sm_90.sass) with the device database's Hopper table; what
that table lacks takes the compiler's schedule (docs/sass-import.md). The application
scatters x and y (8·N bytes) evenly over the four GPUs, runs a quarter of the launch on each
and gathers y (4·N bytes), then copies GPU 2's part to GPU 1 over NVLink (a peer copy).
The NVLink links form a ring (a drawing of four GPUs; a real HGX board connects them through
NVSwitch). Copy engines and idle power are not in the device database: they stay unknown
and the timeline says so (one copy engine assumed per GPU; energy unknown).

Run: GPUMODELER_USER_DB=/nonexistent python tools/make_multi_gpu_example.py [OUT.gpm]
(needs the built devices.db; point the user database away so that only shipped values count)
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpumodeler.core.application.app import Application, Step, data_parallel_steps  # noqa: E402
from gpumodeler.core.commands import AddConnection, AddItem, AddKernel, UndoStack  # noqa: E402
from gpumodeler.core.kernel.sass import import_kernel  # noqa: E402
from gpumodeler.core.kernel.sass.latencies import fill_latencies_from_schedule  # noqa: E402
from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice, Project, SweepDef  # noqa: E402

OUT = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"
LISTING = ROOT / "resources" / "kernels" / "sass" / "saxpy2.sm_90.sass"
GPU = "H100 SXM5 80 GB"
HOST = "Server: Intel Xeon Platinum 8480+ (PCIe 5.0)"
PCIE = "PCIe 5.0 x16"
NVLINK = "NVLink 4.0 (H100 SXM5, 18 links)"
TABLE = "hopper-published"


def build_project(catalog) -> Project:
    project = Project("saxpy2 on four H100 SXM5 over NVLink")
    project.description = (
        "Data-parallel saxpy2 (Gajger's kernel, compiled for sm_90 and imported from its "
        "SASS) on four H100 SXM5 GPUs: x and y scattered from the host over PCIe 5.0 x16, "
        "a quarter of the launch on each GPU, y gathered back, and GPU 2's part copied to "
        "GPU 1 over NVLink. N = 4·10^8, block 256, 32 registers, loop1 = 128.")
    stack = UndoStack(project)
    stack.push(AddItem("devices", PlacedDevice("host1", "host", HOST, label="server", x=0.0, y=260.0)))
    for i in range(4):
        stack.push(AddItem("devices", PlacedDevice(f"gpu{i + 1}", "gpu", GPU, label=f"H100 #{i + 1}",
                                                   x=360.0 * i - 180.0, y=0.0)))
        stack.push(AddConnection(Connection(f"pcie{i + 1}", PCIE, "host1", f"gpu{i + 1}", "pcie",
                                            label=f"PCIe 5.0 x16 #{i + 1}")))
    for i in range(4):
        a, b = f"gpu{i + 1}", f"gpu{(i + 1) % 4 + 1}"
        stack.push(AddConnection(Connection(f"nvlink{i + 1}", NVLINK, a, b, "nvlink",
                                            label=f"NVLink {i + 1}")))
    graph = import_kernel(LISTING)
    graph.name = "saxpy2"
    graph.latency_table = TABLE
    fill_latencies_from_schedule(graph, catalog.latency_table(TABLE))
    graph.variables["loop1"] = 128
    stack.push(AddKernel("saxpy2", graph))
    stack.push(AddItem("launches", LaunchConfig(
        "launch1", name="saxpy2, whole problem", gpu="gpu1", kernel="saxpy2", block_size=256,
        data_size=400_000_000, registers=32, lam=1.0, variables={"loop1": 128})))
    stack.push(AddItem("sweeps", SweepDef(
        "sweep1", "launch1", "data_size", (1e6, 1e7, 1e8, 4e8, 1e9), name="data size N")))
    lookups = {"gpu_lookup": lambda n: catalog.get(n).to_gpu_spec(),
               "link_lookup": lambda n: catalog.get(n).to_link_spec(),
               "table_lookup": catalog.latency_table}
    steps = data_parallel_steps(project, "launch1", ["gpu1", "gpu2", "gpu3", "gpu4"], host="host1",
                                split="even", scatter_size="8*N", gather_size="4*N", **lookups)
    steps = steps + (Step("peer", "copy", "GPU 2's part to GPU 1 (NVLink)", "peer",
                          after=("dp2-kernel",), src="gpu2", dst="gpu1", size="N"),)
    stack.push(AddItem("applications", Application(
        "app1", "data-parallel saxpy2 on 4 × H100", steps, variables={"N": 400_000_000})))
    return project


def main(argv: list[str]) -> int:
    from gpumodeler.db.catalog import Catalog
    from gpumodeler.db.project_file import load_project, save_project
    out = Path(argv[0]) if argv else OUT
    with Catalog() as catalog:
        project = build_project(catalog)
    save_project(project, out)
    assert load_project(out) == project
    print(f"wrote {out}: {len(project.devices)} devices, {len(project.connections)} links, "
          f"{sum(len(a.steps) for a in project.applications.values())} steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
