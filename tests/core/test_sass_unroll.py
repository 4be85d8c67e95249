"""Loop variables of unrolled loops (core.kernel.sass.build, docs/sass-import.md "Unrolled loop
and remainder"), on real listings: a loop's variable is the source loop's trip count where the
listing shows the unroll structure, also when nvcc and then ptxas each unrolled it by 4
(resources/kernels/src/unroll_nested.cu and unroll_inner.cu, the Amarís MMGU/MMGC listings, matmul_naive.cu), and
the loop says what its variable counts where the listing cannot show it."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph_items import launch_guard_values
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.warp_counts import count

ROOT = Path(__file__).resolve().parents[2] / "resources"
SASS = ROOT / "kernels" / "sass"
AMARIS = ROOT / "validation" / "kernels" / "amaris"
MATMUL = ROOT / "validation" / "kernels" / "nvbench" / "matmul.sm_86.sass"

#: (listing, function): a k loop unrolled 4 times by nvcc and its 4-copy loop 4 times again by
#: ptxas, one FFMA and two global loads per source iteration.
DOUBLY = [(SASS / f"unroll_nested.{arch}.sass", None)
          for arch in ("sm_52", "sm_60", "sm_61", "sm_75", "sm_90")] + [
    (AMARIS / "mmgu.sm_52.sass", None), (AMARIS / "mmgc.sm_52.sass", None),
    (SASS / "matmul_naive.sm_75.sass", None), (SASS / "matmul_naive.sm_80.sass", None),
    (SASS / "matmul_naive.sm_90.sass", None)]


def _ids(case):
    return f"{case[0].name}:{case[1] or ''}"


def ffma_and_loads(graph, n):
    values = dict(graph.variables, loop1=n)
    c = count(graph).evaluate(values)
    return c["fp32_instructions"], c["gmem_accesses"]


@pytest.mark.parametrize("case", DOUBLY, ids=_ids)
def test_a_doubly_unrolled_loop_has_one_variable_the_source_trip_count(case):
    path, function = case
    g = import_kernel(path, function=function)
    loops = sorted(g.loops.values(), key=lambda lp: lp.id)
    assert [lp.id for lp in loops] == ["loop1", "loop2", "loop3"]
    # every loop's iterations are written in the one variable, none of its own
    assert {v for lp in loops for v in lp.iterations.variables} == {"loop1"}
    assert "loop2" not in g.variables and "loop3" not in g.variables
    # the three loops run 16, 4 and 1 source iterations a trip
    copies = [16, 4, 1]
    for n in (0, 1, 3, 4, 5, 15, 16, 17, 63, 64, 100, 2048, 2051):
        trips = [lp.iterations.evaluate({"loop1": n}) for lp in loops]
        # ptxas peels two 4-copy bodies before its remainder loop: that loop runs R mod 2
        assert trips == [n // 16, (n % 16) // 4 % 2, n % 4]
    for lp, c in zip(loops, copies):
        assert f"{c} source iteration" in lp.name and "loop1 = the source loop's trip count" in lp.name


@pytest.mark.parametrize("case", DOUBLY, ids=_ids)
def test_each_source_iteration_adds_its_body_to_the_per_warp_counts(case):
    """The per-warp count at n is that of n source iterations (one FFMA, two loads each):
    the copies ptxas peels before its 4-copy remainder loop (straight code under a trip-count
    check) run floor(R/2) times and that loop R mod 2, R = floor(n/4) mod 4."""
    path, function = case
    g = import_kernel(path, function=function)
    base = ffma_and_loads(g, 0)
    assert base[0] == 0
    for n in range(1, 80):
        ffma, loads = ffma_and_loads(g, n)
        assert ffma == n
        assert loads - base[1] == 2 * n
    (peeled,) = [gd for gd in g.guards.values() if "peeled" in gd.name]
    outside = {i.id for i in g.instructions.values()
               if i.opcode == "FFMA" and not g.loops_containing(i.id)}
    assert outside and outside <= peeled.members
    for n in (0, 4, 8, 12, 16, 24, 28, 31):
        assert peeled.fraction.evaluate({"loop1": n}) == (n // 4 % 4) // 2


def test_an_inner_loop_unrolled_without_a_remainder_loop_says_what_its_variable_counts():
    """window_rows' inner `#pragma unroll 4` loop: nvcc leaves the n mod 4 tail as straight
    code, so no remainder loop shows the unrolling; the loop's variable counts its trips as
    compiled and its name says so (4 loads and adds a trip)."""
    g = import_kernel(SASS / "unroll_inner.sm_75.sass")
    outer, inner = sorted(g.loops.values(), key=lambda lp: len(lp.members), reverse=True)
    assert inner.iterations.text == inner.id and inner.id in g.variables
    assert "counts trips as compiled" in inner.name and "unrolled 4x" in inner.name
    assert outer.iterations.text == outer.id


def test_a_loop_whose_body_cannot_be_unrolled_copies_keeps_a_plain_name():
    """A body with an instruction that occurs once is one source iteration: no unrolling
    note (the name says only where its count comes from: the kernel parameter a)."""
    g = import_kernel(SASS / "saxpy2.sm_75.sass")
    (lp,) = g.loops.values()
    assert lp.name.startswith("loop at 0x0130: loop1 = param_0x164, param_0x164 the kernel")
    assert "unrolled" not in lp.name and "as compiled" not in lp.name
    assert lp.iterations.text == lp.id


def test_copies_peeled_inside_an_enclosing_loop_run_as_the_trip_count_says():
    """matmul_tiled: ptxas peels 2 of the 4-copy inner loop's bodies before its remainder
    loop, all inside the phase loop. At tile width 16 (loop2 = 4 groups of 4 steps) they
    never run, and a phase reads 2 shared words a step, whatever the width."""
    tiled = import_kernel(MATMUL, function="matmul_tiled")
    (peeled,) = [g for g in tiled.guards.values() if "peeled" in g.name]
    for width in range(1, 33):  # the block sets loop2 and the remainder's guards
        values = dict(tiled.variables, loop1=1)
        values.update(launch_guard_values(tiled, {"loop1": 1}, (width, width, 1), 32))
        loop2 = width // 4
        assert values["loop2"] == loop2
        c = count(tiled).evaluate(values)
        assert peeled.fraction.evaluate({"loop2": loop2}) == (loop2 % 4) // 2
        assert c["smem_accesses"] == 2 + 2 * width, width   # the tiles' 2 stores, 2 loads a step
