"""The reuse across the trips of a loop: the import finds how far a global load's address
moves per trip of its innermost loop (core.kernel.sass.addresses.trip_steps, the address's
"advances … B per trip of loopN" note), a launch works out the share of its sectors the
earlier trips read (launch_shape.trip_reuse) and the reuse rule counts it as a near repeat
(core.kernel.sass.reuse), on real listings: the validation set's 1-D convolution
(resources/validation/kernels/nvbench/conv1d.cu) and a column walk
(resources/kernels/src/stencil_loop.cu)."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.graph import Instruction
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.sass.launch_shape import trip_reuse, trip_step_of, trip_step_text
from gpumodeler.core.kernel.sass.reuse import reuse_graph
from gpumodeler.core.kernel.warp_counts import count

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
CONV = ROOT / "resources" / "validation" / "kernels" / "nvbench"
ARCHS = ("sm_75", "sm_80")
CONV_ARCHS = ("sm_75", "sm_86")


def _global_loads(g):
    return {nid: ins for nid, ins in g.instructions.items()
            if ins.unit == "ldst" and ins.space == "global" and ins.is_load}


@pytest.mark.parametrize("arch", CONV_ARCHS)
def test_a_rolled_stencils_loads_advance_by_the_unroll_step_and_the_remainders_by_one(arch):
    g = import_kernel(CONV / f"conv1d.{arch}.sass", "conv_basic")
    loops = {lp.id: nid for nid in g.instructions for lp in g.loops_containing(nid)}
    assert set(loops) == {"loop1", "loop2"}  # the unrolled body and its remainder
    steps = {}
    for nid, ins in _global_loads(g).items():
        found = trip_step_of(ins.address)
        assert found is not None, ins.address
        steps.setdefault(found, []).append(nid)
    # four neighbours of the input and four mask words a trip of the body, one of each in
    # the remainder
    assert set(steps) == {(16, "loop1"), (4, "loop2")}
    assert len(steps[(16, "loop1")]) == 8 and len(steps[(4, "loop2")]) == 2


@pytest.mark.parametrize("arch", ARCHS)
def test_a_column_walk_moves_a_row_a_trip_and_has_no_fixed_step(arch):
    g = import_kernel(SASS / f"stencil_loop.{arch}.sass", "column_sums")
    loads = _global_loads(g)
    assert loads and all(trip_step_of(ins.address) is None for ins in loads.values())


def _load(address, width=4):
    return Instruction.make("i0", "LDG.E", address=address, width_bytes=width)


@pytest.mark.parametrize("address, block, expected", [
    # a warp's 128 contiguous bytes moving 4 a trip: 4 new bytes of 128 (in sectors: one new
    # sector every 8 trips, of the 4 a request touches)
    ("4·tid.x", (256, 1, 1), 1 - (4 / 32) / 4),
    # one word every lane reads (A[row·n + k] over k): a new sector every 8 trips
    ("c[0x0][0x168]", (256, 1, 1), 1 - 4 / 32),
    # lanes a row apart (a parameter), each moving 4 bytes: each lane's sector 8 trips
    ("4·c[0x0][0x178]·tid.x", (256, 1, 1), 1 - 4 / 32),
    # a 16×16 block's warp: two rows of 64 bytes, each moving 4 bytes a trip
    ("4·tid.x + 4·c[0x0][0x178]·tid.y", (16, 16, 1), 1 - (2 * 4 / 32) / 4),
])
def test_the_share_an_earlier_trip_read_follows_the_lanes_footprint(address, block, expected):
    for step in (4, -4):
        ins = _load(f"{address}; {trip_step_text(step, 'loop1')}")
        assert trip_reuse(ins, block) == pytest.approx(expected)


@pytest.mark.parametrize("step", [128, 4096, -256])
def test_a_step_of_a_line_or_more_re_reads_nothing(step):
    ins = _load(f"4·tid.x; {trip_step_text(step, 'loop1')}")
    assert trip_reuse(ins, (256, 1, 1)) == 0.0


@pytest.mark.parametrize("address", [
    "4·tid.x",                                   # no step: not in a loop, or none found
    "not affine (data-dependent (indirect)): data@0120; advances 4 B per trip of loop1",
    "",
])
def test_no_reuse_across_trips_without_a_step_or_an_affine_address(address):
    assert trip_reuse(_load(address), (256, 1, 1)) == 0.0


def test_a_step_of_zero_re_reads_all_of_it():
    ins = _load(f"4·tid.x; {trip_step_text(0, 'loop1')}")
    assert trip_reuse(ins, (256, 1, 1)) == 1.0


def _remainder_load(g):
    return next(nid for nid, ins in _global_loads(g).items()
                if trip_step_of(ins.address) == (4, "loop2")
                and "c[0x0][0x160]" in ins.address)


LAUNCH = dict(grid_size=1 << 17, warps_per_block=16, blocks_per_sm=2, sms=30,
              l2_bytes=3 * 2 ** 20, block=(512, 1, 1))


@pytest.mark.parametrize("mask, remainder_trips", [(9, 1), (10, 2), (11, 3)])
def test_the_first_trip_reads_fresh_so_a_loop_of_t_trips_keeps_t_minus_1_of_t(mask,
                                                                             remainder_trips):
    g = import_kernel(CONV / "conv1d.sm_75.sass", "conv_basic")
    nid = _remainder_load(g)
    steady = trip_reuse(g.instructions[nid], (512, 1, 1))
    _, report = reuse_graph(g, values=dict(g.variables, loop1=mask),
                            compute_capability="7.5", l1_bytes_per_sm=64 * 1024, **LAUNCH)
    got = next(ld for ld in report.loads if ld.id == nid)
    t = remainder_trips
    assert got.trip_reuse == pytest.approx(steady * (t - 1) / t)
    if t > 1:
        assert got.l1_hit > 0  # Turing's L1 caches the load and holds the re-read sectors
        assert any(n.startswith(f"{nid}: ") and "re-read of its loop's earlier trips" in n
                   for n in report.notes())
    else:
        assert not any("earlier trips" in n for n in report.notes() if n.startswith(nid))


def test_the_remainder_loops_dram_bytes_shrink_where_a_cache_keeps_the_earlier_trips():
    """A mask of 11: two trips of the unrolled body and three of the remainder. Where the L1
    caches the loads (Turing) the remainder's re-reads stay on the SM; on Maxwell, whose L1
    does not cache these loads and whose L2 bandwidth is unknown here, they stay DRAM traffic
    (an L2 hit with no ceiling would cost nothing), as the reuse within a block does."""
    g = import_kernel(CONV / "conv1d.sm_75.sass", "conv_basic")
    values = dict(g.variables, loop1=11)
    nid = _remainder_load(g)
    turing, rep = reuse_graph(g, values=values, compute_capability="7.5",
                              l1_bytes_per_sm=64 * 1024, **LAUNCH)
    maxwell, rep52 = reuse_graph(g, values=values, compute_capability="5.2",
                                 l1_bytes_per_sm=24 * 1024, l2_bounded=False, **LAUNCH)
    assert next(ld for ld in rep52.loads if ld.id == nid).trip_reuse == 0.0
    assert turing.instructions[nid].hit_ratio > maxwell.instructions[nid].hit_ratio
    dram = {name: count(x).evaluate(values)["gmem_bytes"]
            for name, x in (("turing", turing), ("maxwell", maxwell))}
    assert dram["turing"] < dram["maxwell"]
