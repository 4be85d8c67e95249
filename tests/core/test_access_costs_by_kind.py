"""``warp_counts.access_costs`` (``graph --json``'s ``memory_accesses``), worked out once per
kind of instruction from columns, lists what :func:`access_cost` of each instruction in turn
gives, on imported kernels read back from their file and on plain graphs."""
import json
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_shape import shaped_graph
from gpumodeler.core.kernel.warp_counts import access_cost, access_costs

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
AMARIS = ROOT / "resources" / "validation" / "kernels" / "amaris"
LISTINGS = [(SASS / "access_patterns.sm_80.sass", "transpose_shared"),
            (AMARIS / "mmsu.sm_52.sass", None), (SASS / "matmul_tiled.sm_100.sass", None),
            (SASS / "block2d.sm_75.sass", "copy2d_rows")]


def one_by_one(graph, warp_size=32):
    out = []
    for ins in graph.instructions.values():
        cost = access_cost(ins, warp_size)
        if cost is not None:
            out.append({"id": ins.id, "opcode": ins.opcode, "space": ins.space,
                        "address": ins.address, **cost})
    return out


@pytest.mark.parametrize("listing", LISTINGS, ids=lambda x: getattr(x, "name", x))
@pytest.mark.parametrize("warp_size", [32, 16])
def test_access_costs_by_kind_are_each_instructions_own(listing, warp_size):
    graph = import_kernel(*listing)
    read = from_dict(json.loads(json.dumps(to_dict(graph))))  # columns, no item made
    expected = one_by_one(graph, warp_size)
    assert expected and access_costs(read, warp_size) == expected
    assert list(map(list, map(dict.keys, access_costs(read, warp_size)))) == \
        list(map(list, map(dict.keys, expected)))
    assert access_costs(graph, warp_size) == expected  # a plain graph's items


def test_instructions_of_one_opcode_with_different_costs_are_told_apart():
    graph = import_kernel(*LISTINGS[1])
    shaped, notes = shaped_graph(graph, (16, 16))
    assert notes  # some accesses cost differently in a 16x16 block
    assert access_costs(shaped) == one_by_one(shaped)
    assert access_costs(shaped) != access_costs(graph)
