"""What the models read from a kernel graph beyond Gajger's per-warp values."""
import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.latency_tables import get_table
from gpumodeler.core.models.graph_inputs import graph_counts

SAXPY2 = json.loads((Path(__file__).resolve().parents[2] / "resources/kernels/saxpy2-maxwell.json").read_text())


@pytest.mark.parametrize("a", [1, 128])
def test_saxpy2_counts(a):
    g = from_dict(SAXPY2)
    c = graph_counts(g, {"a": a})
    assert c["memory_instructions"] == 3  # two LDG, one STG
    assert c["shared_instructions"] == 0 and c["synch_instructions"] == 0
    assert c["instructions"] == 26 + 4 * a  # Gajger INS_CUDA 23 + 4a, plus the 3 memory instructions
    # the DRAM accesses on the critical path are the bound's slope in the DRAM latency
    table = get_table("maxwell-gajger")
    slower = replace(table, memory_cycles=dict(table.memory_cycles, dram=table.memory_cycles["dram"] + 100))
    rise = float(analyze(g, slower).evaluate({"a": a})) - float(analyze(g, table).evaluate({"a": a}))
    assert c["critical_dram_accesses"] == pytest.approx(rise / 100) and c["critical_dram_accesses"] == 2
    # and the DRAM latency the bound used, for a model that puts another in its place
    assert c["bound_dram_latency_cycles"] == table.memory_cycles["dram"]


def test_barriers_are_counted_per_loop_iteration():
    data = copy.deepcopy(SAXPY2)
    data["instructions"] += [{"id": "b1", "opcode": "BAR", "label": "BAR.SYNC 0x0", "x": 0.0, "y": 0.0},
                             {"id": "b2", "opcode": "BAR", "label": "BAR.SYNC 0x0", "x": 0.0, "y": 0.0}]
    data["loops"][0]["members"].append("b1")
    c = graph_counts(from_dict(data), {"a": 7})
    assert c["synch_instructions"] == 7 + 1
