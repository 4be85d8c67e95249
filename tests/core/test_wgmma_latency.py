"""Hopper's warpgroup MMA latency by shape: Luo et al. 2025 (Table 9, H800) measured wgmma
m64nNk16 at 18, 20, 24, 32, 64 and 128 cycles for N = 8 … 256; the 128 once applied to
every MMA is the N = 256 row only."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.edge_latency import resolve_edge_latency
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.latency_tables import LatencyTable
from gpumodeler.db.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
LUO_TABLE_9 = {8: 18, 16: 20, 32: 24, 64: 32, 128: 64, 256: 128}


@pytest.fixture(scope="module")
def hopper(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db",
                 shipped_db=ROOT / "devices.db") as c:
        yield c.latency_table("hopper-published")


def test_rows_are_luo_table_9(hopper):
    for n, cycles in LUO_TABLE_9.items():
        assert hopper.wgmma(n) == cycles
    # between rows: linear in N (N = 96 between 64 and 128; 192 between 128 and 256)
    assert hopper.wgmma(96) == 48 and hopper.wgmma(192) == 96 and hopper.wgmma(24) == 22
    # an MMA without a shape row has no Hopper latency any source gives
    assert hopper.instruction_cycles.get("tensor") is None


def test_a_table_without_rows_keeps_its_single_figure():
    t = LatencyTable("x", "x", "Ampere", "s", instruction_cycles={"tensor": 8})
    assert t.wgmma(64) is None and t.instruction("tensor") == 8


def _graph(opcode):
    return from_dict({"format": "gpumodeler-kernel", "version": 1, "name": "k",
                      "instructions": [{"id": "a", "opcode": opcode}, {"id": "b", "opcode": "FADD"}],
                      "edges": [{"id": "e", "from": "a", "to": "b", "kind": "dependency"}]})


@pytest.mark.parametrize("opcode, cycles", [
    ("HGMMA.64x8x16.F32", 18), ("HGMMA.64x64x16.F32.BF16", 32), ("QGMMA.64x128x32.F32.E4M3.E4M3", 64),
    ("IGMMA.64x256x32.S8.S8", 128),
])
def test_an_edge_from_a_wgmma_takes_its_shapes_latency(hopper, opcode, cycles):
    g = _graph(opcode)
    assert resolve_edge_latency(g, g.edges["e"], hopper) == cycles


def test_imported_wgmma_kernel_uses_n64(tmp_path, capsys, hopper):
    out = tmp_path / "wg.json"
    assert main(["kernel", "import", str(ROOT / "resources/kernels/sass/wgmma_shapes.sm_90a.sass"),
                 "-o", str(out)]) == 0
    graph = from_dict(json.loads(out.read_text()))
    gmma = {i for i, ins in graph.instructions.items() if "GMMA" in ins.opcode}
    deps = [e for e in graph.edges.values() if e.src in gmma and e.kind == "dependency" and e.latency is None]
    assert len(gmma) == 5 and deps
    # every wgmma of this kernel is m64n64: 32 cycles (Luo et al. Table 9), not N = 256's 128
    assert {resolve_edge_latency(graph, e, hopper) for e in deps} == {32.0}
