"""Project document and commands: edits, refusals, undo/redo, launch evaluation."""
import json
from pathlib import Path

import pytest

from gpumodeler.core.commands import (AddConnection, AddEdge, AddInstruction, AddItem, AddKernel,
                                      AddLoop, Macro, MoveDevices, RemoveDevice, RemoveInstruction,
                                      SetKernelProperties, SetOverride, UndoStack, UpdateItem)
from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import GraphError, InvalidParameter
from gpumodeler.core.kernel.graph import Edge, Instruction, Loop, from_dict
from gpumodeler.core.pipeline import evaluate_launch
from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice, Project, Transfer

ROOT = Path(__file__).resolve().parents[2]
SPECS = {"GeForce GTX 970": GPUSpec("GeForce GTX 970", compute_capability="5.2", sms=13,
                                    sm_clock_hz=1253e6, cuda_cores_per_sm=128, schedulers_per_sm=4,
                                    gmem_bytes_per_cycle_per_sm=13.78)}
LINKS = {"PCIe 3.0 x16 (Gajger)": LinkSpec("PCIe 3.0 x16 (Gajger)", 15.8e9, 3.96868e-6, 5.15692e-6, 0.689, 0.653)}


def saxpy2_project():
    p = Project("saxpy2")
    s = UndoStack(p)
    s.push(AddItem("devices", PlacedDevice("gpu1", "gpu", "GeForce GTX 970", x=300, y=0)))
    s.push(AddItem("devices", PlacedDevice("host1", "host", "Intel Core i7-4790K")))
    s.push(AddConnection(Connection("c1", "PCIe 3.0 x16 (Gajger)", "host1", "gpu1", "pcie")))
    graph = from_dict(json.loads((ROOT / "resources/kernels/saxpy2-maxwell.json").read_text()))
    s.push(AddKernel("k1", graph))
    s.push(AddItem("launches", LaunchConfig(
        "l1", gpu="gpu1", kernel="k1", block_size=256, data_size=400_000_000, registers=8,
        lam=0.703787, variables={"a": 128},
        transfers=(Transfer("htod", "4*N"), Transfer("htod", "4*N"), Transfer("dtoh", "4*N")))))
    return p, s


def test_launch_evaluates_like_the_cli():
    p, _ = saxpy2_project()
    r = evaluate_launch(p, "l1", SPECS.__getitem__, LINKS.__getitem__)
    assert r.occupancy_warps_per_sm == 64 and r.latency_bound_formula == "942 + 24·a"
    assert r.grid_size == 1_562_500
    assert r.prediction.kernel.time_s == pytest.approx(0.1466549 * 133.75 / 134.5, rel=1e-6)
    assert len(r.prediction.transfer_times_s) == 3


def test_kernel_overrides_reproduce_merpsys_expert_inputs():
    p, s = saxpy2_project()
    s.push(UpdateItem("launches", "l1", occupancy_override=64.0,
                      kernel_overrides={"issued_instructions": "26 + 4*a"}))
    r = evaluate_launch(p, "l1", SPECS.__getitem__, LINKS.__getitem__)
    assert r.prediction.kernel.time_s == pytest.approx(0.1466549, rel=1e-6)
    assert r.prediction.total_time_s == pytest.approx(0.5956960, rel=1e-6)


def test_refused_connection_has_a_reason_and_changes_nothing():
    p, s = saxpy2_project()
    s.push(AddItem("devices", PlacedDevice("host2", "host", "Other host")))
    with pytest.raises(InvalidParameter, match="two hosts need a network link"):
        s.push(AddConnection(Connection("c2", "PCIe 3.0 x16", "host1", "host2", "pcie")))
    with pytest.raises(InvalidParameter, match="already joined"):
        s.push(AddConnection(Connection("c3", "PCIe 3.0 x16", "gpu1", "host1", "pcie")))
    assert set(p.connections) == {"c1"}


def test_remove_device_takes_links_and_undo_restores_everything():
    p, s = saxpy2_project()
    before = {k: dict(getattr(p, k)) for k in ("devices", "connections", "launches")}
    s.push(RemoveDevice("gpu1"))
    assert "gpu1" not in p.devices and not p.connections and p.launches["l1"].gpu is None
    s.undo()
    assert {k: dict(getattr(p, k)) for k in ("devices", "connections", "launches")} == before
    s.redo()
    assert "gpu1" not in p.devices


def test_a_drag_is_one_undo_step():
    p, s = saxpy2_project()
    depth = s.index
    for i in range(10):
        s.push(MoveDevices({"gpu1": (300 + i, 5 * i)}, merge_key="drag-1"))
    assert s.index == depth + 1 and (p.devices["gpu1"].x, p.devices["gpu1"].y) == (309, 45)
    s.undo()
    assert (p.devices["gpu1"].x, p.devices["gpu1"].y) == (300, 0)


def test_override_and_revert():
    p, s = saxpy2_project()
    s.push(SetOverride("devices", "gpu1", "sms", 26))
    r = evaluate_launch(p, "l1", SPECS.__getitem__, LINKS.__getitem__)
    assert r.gpu.sms == 26
    s.push(SetOverride("devices", "gpu1", "sms", None))
    assert p.devices["gpu1"].overrides == {}
    s.undo()
    assert p.devices["gpu1"].overrides == {"sms": 26}


def test_kernel_edits_undo_and_events():
    p, s = saxpy2_project()
    events = []
    p.listeners.append(lambda e, payload: events.append(e))
    g = p.kernels["k1"]
    n_edges = len(g.edges)
    s.push(RemoveInstruction("k1", "i21"))
    assert "i21" not in g.instructions and len(g.edges) < n_edges
    s.undo()
    assert "i21" in g.instructions and len(g.edges) == n_edges and "i21" in g.loops["loop1"].members
    s.push(AddInstruction("k1", Instruction.make("x1", "FFMA")))
    s.push(AddEdge("k1", Edge("ex", "i30", "x1", "ilp")))
    s.push(AddLoop("k1", Loop.make("L2", ["x1"], "b")))
    assert events.count("kernel_edited") >= 4
    for _ in range(3):
        s.undo()
    assert "x1" not in g.instructions


def test_a_kernel_names_only_a_table_it_is_told_of():
    """Core knows the built-in tables; a caller with a device database names its own."""
    p, s = saxpy2_project()
    with pytest.raises(GraphError, match="unknown latency table 'pascal-mine'.*maxwell-gajger"):
        s.push(SetKernelProperties("k1", latency_table="pascal-mine"))
    assert p.kernels["k1"].latency_table == "maxwell-gajger"
    s.push(SetKernelProperties("k1", latency_table="pascal-mine",
                               known_tables={"pascal-mine", "maxwell-gajger"}))
    assert p.kernels["k1"].latency_table == "pascal-mine"
    s.undo()
    assert p.kernels["k1"].latency_table == "maxwell-gajger"


def test_invalid_launch_field_is_refused():
    p, s = saxpy2_project()
    with pytest.raises(InvalidParameter, match="1024-thread limit by 76"):
        s.push(UpdateItem("launches", "l1", block_size=1100))
    assert p.launches["l1"].block_size == 256


def test_macro_rolls_back_on_failure():
    p, s = saxpy2_project()
    with pytest.raises(InvalidParameter):
        s.push(Macro("paste", [AddItem("devices", PlacedDevice("g2", "gpu", "GeForce GTX 970")),
                               AddItem("devices", PlacedDevice("g3", "gpu", "GeForce GTX 970", count=0))]))
    assert "g2" not in p.devices
