"""The textbook's thread-coarsened 3-D stencils (resources/kernels/src/plane_stencils.cu):
each block walks 30 planes from blockIdx.z * 30. nvcc unrolls the walk by 2 (the counter
stepped through a copy, IADD3 R10, R6, 0x2 … MOV R6, R10) and peels a first plane on the
path where the plane index would overflow, so the counter enters the loop as the block's
first plane or the next one: the value followed is a choice on the compare that picks the
path, the block index cancels, and the loop runs 15 trips of 2 planes in every block."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.block_values import Node, const, dim, evaluate, op_node
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.warp_counts import count

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
#: where the walk's count is read off the listing (Maxwell and Pascal compare against a
#: constant of bank 2, whose value the listing does not show)
DERIVED = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


@pytest.mark.parametrize("function", ["march_shared", "march_registers"])
@pytest.mark.parametrize("arch", DERIVED)
def test_a_walk_of_30_planes_unrolled_by_2_runs_15_trips(arch, function):
    graph, report = import_kernel_with_report(str(SASS / f"plane_stencils.{arch}.sass"),
                                              function, None)
    (loop,) = graph.loops.values()
    assert graph.variables[loop.id] == 15 and loop.id not in graph.block_trips
    assert f"{loop.id} = 15 (the listing's count" in report.summary()
    stores = [i for i in graph.instructions.values() if i.opcode.startswith("STG")]
    assert sum(1 for i in stores if i.id in loop.members) == 2  # two planes a trip
    # the plane peeled on the overflow path (30 * blockIdx.z >= 0x7fffffe3, which no grid
    # reaches) never runs: a warp's global accesses are the two planes it loads first and
    # a load and a store for each of the 30 planes (every guard of the bounds at 1)
    values = {v: 1 for v in graph.variables if v.startswith("guard")}
    assert count(graph).evaluate(dict(graph.variables, **values))["gmem_accesses"] == 62


@pytest.mark.parametrize("function", ["march_shared", "march_registers"])
@pytest.mark.parametrize("arch", ["sm_52", "sm_60", "sm_61"])
def test_maxwell_and_pascal_leave_the_walk_a_variable(arch, function):
    graph, _ = import_kernel_with_report(str(SASS / f"plane_stencils.{arch}.sass"), function,
                                         None)
    (loop,) = graph.loops.values()
    assert graph.variables[loop.id] == 1


def test_a_choice_evaluates_its_compare_per_value():
    """The value of a register a guarded branch may jump past: select(op, unsigned, a, b,
    taken, written) is taken where a op b holds, signed or unsigned as the compare reads."""
    x = dim(0)
    node = op_node("select", ">=", False, x, const(10), x, op_node("add", x, const(1)))
    assert list(evaluate(node, ([3, 10, 11], 1, 1))) == [4, 10, 11]
    unsigned = Node("select", ("<", True, x, const(5), const(1), const(0)), x.dims)
    assert list(evaluate(unsigned, ([2 ** 32 - 1, 4], 1, 1))) == [0, 1]
