"""Trip counts the listing decides (core.kernel.sass.trip_counts): a loop that runs
blockDim.x times gets a formula each launch's block sets; a fixed count the compiler kept a
loop gets that number; a count of the thread index, a parameter or data keeps its variable."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.errors import FormatError, GraphError
from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.graph_items import block_set_variables, launch_guard_values
from gpumodeler.core.kernel.kernel_format import graph_extras, read_graph_extras
from gpumodeler.core.kernel.sass import block_tests, block_values, count_forms
from gpumodeler.core.kernel.sass.parameters import parameter_base, parameter_variable
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.warp_counts import count

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
NVBENCH = ROOT / "resources" / "validation" / "kernels" / "nvbench"
ARCHS = ("sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
         "sm_120")


def imported(path, function):
    graph, report = import_kernel_with_report(str(path), function, None)
    return graph, report


@pytest.mark.parametrize("arch", ARCHS)
def test_a_loop_over_the_block_width_is_set_by_each_launch(arch):
    graph, report = imported(SASS / f"block_trips.{arch}.sass", "tile_column_sum")
    assert graph.block_trips == {"loop1": "block_x"}
    assert graph.variables["loop1"] == 256  # the formula at the default 256-thread block
    assert "loop1 = block_x from each launch's block" in report.summary()
    assert "loop1" in block_set_variables(graph)
    for block in ((16, 16, 1), (96, 1, 1), (1024, 1, 1)):
        assert launch_guard_values(graph, {}, block, 32)["loop1"] == block[0]
    # the user's value wins
    assert "loop1" not in launch_guard_values(graph, {"loop1": 3}, (64, 1, 1), 32)


@pytest.mark.parametrize("arch", ARCHS)
def test_a_fixed_count_kept_a_loop_is_the_variables_default(arch):
    graph, report = imported(SASS / f"block_trips.{arch}.sass", "fixed_steps")
    assert graph.block_trips == {}
    assert graph.variables["loop1"] == 100
    assert "loop1 = 100 (the listing's count)" in report.summary()


@pytest.mark.parametrize("arch", ARCHS)
def test_a_count_from_the_thread_index_stays_a_variable(arch):
    """per_thread: each thread counts from its threadIdx.x; the block does not decide it."""
    graph, _ = imported(SASS / f"block_trips.{arch}.sass", "per_thread")
    assert graph.block_trips == {}
    assert all(graph.variables[v] == 1 for v in graph.variables if v.startswith("loop"))


#: where half_rows' remainder is counted in a way the rules do not follow: sm_80 copies
#: its counter into another register before the loop; Blackwell keeps one loop of 16 copies
NOT_FOLLOWED = ("sm_80", "sm_100", "sm_120")


@pytest.mark.parametrize("arch", ARCHS)
def test_an_unrolled_loop_counting_up_with_a_remainder_loop(arch):
    """half_rows: nvcc unrolls blockDim.y / 2 steps by 4, the unrolled loop counting up
    against n - n % 4 and a remainder loop counting n % 4 down, its first trip peeled
    before it: loop1 = 4 trips of the first + the remainder on entry = floor(block_y / 2).
    Global accesses per warp: one load a step and the store, exact but where the remainder
    is empty (n % 4 == 0, n > 0): the peeled copy's check, blockDim.y / 2 % 4 != 0, is a
    field of a field the guards do not follow (a variable, default 1: one load more)."""
    graph, _ = imported(SASS / f"block_trips.{arch}.sass", "half_rows")
    if arch in NOT_FOLLOWED:
        assert graph.block_trips == {}
        return
    assert graph.block_trips == {"loop1": "floor(block_y / 2)"}
    counts = count(graph)
    for height in range(1, 33):
        values = dict(graph.variables)
        values.update(launch_guard_values(graph, {}, (32, height, 1), 32))
        n = height // 2
        extra = 1 if n and n % 4 == 0 else 0
        assert counts.evaluate(values)["gmem_accesses"] == n + 1 + extra, height


@pytest.mark.parametrize("arch", ARCHS)
def test_a_tile_as_wide_as_the_block_sets_the_inner_loop_on_every_architecture(arch):
    """tile_product: the inner loop of blockDim.x steps, unrolled by nvcc by 4 (and by
    ptxas by 16, counting blockDim.x - blockDim.x % 4 down): loop2, the 4-step bodies, is
    floor(block_x / 4); Blackwell's compiler keeps one loop of 8 steps a trip over
    blockDim.x & ~7 (its variable counts those trips: floor(block_x / 8))."""
    graph, _ = imported(SASS / f"block_trips.{arch}.sass", "tile_product")
    steps = 8 if arch in ("sm_100", "sm_120") else 4
    assert graph.block_trips["loop2"] == f"floor(block_x / {steps})"
    for width in (4, 8, 13, 16, 32):
        assert launch_guard_values(graph, {}, (width, width, 1), 32)["loop2"] == width // steps


@pytest.mark.parametrize("arch", [a for a in ARCHS if a not in ("sm_52", "sm_60", "sm_61")])
def test_the_phases_of_a_tile_as_wide_as_the_block_are_n_over_the_block(arch):
    """tile_product's phase loop, for (p = 0; p < n / w; ++p) with w = blockDim.x: nvcc's
    division by a run-time value (a reciprocal and its guarded fixes) read as n / w, a
    count of the parameter n and the block, equal to the source's trips at every launch
    tried (where n < w the loop is not entered; the count is then 1 on sm_75 … sm_90, as
    every loop's, and 0 on Blackwell, whose listing counts no trip there). Maxwell's and
    Pascal's division (XMAD products, no IMAD.HI) is not read."""
    graph, _ = imported(SASS / f"block_trips.{arch}.sass", "tile_product")
    n = parameter_variable(parameter_base(int(arch[3:])) + 0x18)
    low = 0 if arch in ("sm_100", "sm_120") else 1
    assert graph.block_trips["loop1"] in (f"max(1, floor({n} / block_x))",
                                          f"floor({n} / block_x)")
    for width, size in ((16, 256), (16, 1000), (32, 4096), (8, 7), (13, 100), (32, 31)):
        got = launch_guard_values(graph, {n: size}, (width, width, 1), 32)["loop1"]
        assert got == max(low, size // width), (width, size)


@pytest.mark.parametrize("arch", ["sm_75", "sm_86"])
def test_the_tiled_products_inner_loop_is_a_quarter_of_the_tile_width(arch):
    """matmul_tiled: the inner loop of blockDim.x steps unrolled by 4 (and 16 by ptxas)
    counts blockDim.x - blockDim.x % 4 down: loop2, the 4-step bodies, is floor(block_x/4)."""
    graph, _ = imported(NVBENCH / f"matmul.{arch}.sass", "matmul_tiled")
    assert graph.block_trips == {"loop2": "floor(block_x / 4)",
                                 "loop1": "ceil(param_0x17c / block_x)"}
    for width in (4, 8, 13, 16, 32):
        assert launch_guard_values(graph, {}, (width, width, 1), 32)["loop2"] == width // 4
    # the phases, (cols1 + w - 1) / w with w = blockDim.x (an int division, signed)
    for width, cols in ((16, 256), (16, 1000), (13, 100), (32, 4096), (32, 1)):
        assert launch_guard_values(graph, {"param_0x17c": cols}, (width, width, 1),
                                   32)["loop1"] == (cols + width - 1) // width


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_takes_the_count_from_the_block_unless_set(capsys, tmp_path):
    out = tmp_path / "tiled.json"
    code, _, err = run(capsys, "kernel", "import", NVBENCH / "matmul.sm_86.sass", "--function",
                       "matmul_tiled", "-o", out)
    assert code == 0, err

    def time(block, *sets):
        argv = ["predict", "--device", "RTX 3080", "--graph", out, "--grid-size", "32x32",
                "--block-size", block, "--shared-mem", "8192", "--set", "loop1=32",
                *sets, "--json"]
        code, text, err = run(capsys, *argv)
        assert code == 0, err
        return json.loads(text)["kernel_time_s"]

    for width in (16, 32):
        block = f"{width}x{width}"
        assert time(block) == time(block, "--set", f"loop2={width // 4}")
    assert time("32x32") != time("32x32", "--set", "loop2=4")
    # graph --json names what the block set
    code, text, err = run(capsys, "graph", out, "--block-size", "16x16", "--set", "loop1=2",
                          "--json")
    assert code == 0, err
    shown = json.loads(text)
    assert "loop2" in shown["variables_from_block"] and shown["variables"]["loop2"] == 4
    assert shown["variables"]["loop1"] == 2  # set: the phases' formula does not apply
    # kernel import --set fixes the count at every launch
    fixed = tmp_path / "fixed.json"
    code, _, err = run(capsys, "kernel", "import", NVBENCH / "matmul.sm_86.sass", "--function",
                       "matmul_tiled", "--set", "loop2=2", "-o", fixed)
    assert code == 0, err
    data = json.loads(fixed.read_text())
    assert data["block_trips"] == {"loop1": "ceil(param_0x17c / block_x)"}
    assert data["variables"]["loop2"] == 2
    fixed_tree = tmp_path / "tree.json"
    code, _, err = run(capsys, "kernel", "import", SASS / "reduce.sm_86.sass", "--set",
                       "guard2=0.5", "-o", fixed_tree)
    assert code == 0, err
    data = json.loads(fixed_tree.read_text())
    assert "trip_tests" not in data and data["variables"]["guard2"] == 0.5


def test_block_trips_round_trip_in_kernel_files_and_project_extras():
    graph, _ = imported(NVBENCH / "matmul.sm_86.sass", "matmul_tiled")
    data = to_dict(graph)
    assert data["block_trips"] == {"loop2": "floor(block_x / 4)",
                                   "loop1": "ceil(param_0x17c / block_x)"}
    assert from_dict(json.loads(json.dumps(data))).block_trips == graph.block_trips
    copy = from_dict({k: v for k, v in data.items() if k not in ("block_trips", "guards")})
    assert copy.block_trips == {}
    read_graph_extras(copy, graph_extras(graph))
    assert copy.block_trips == graph.block_trips
    assert graph.copy().block_trips == graph.block_trips


@pytest.mark.parametrize("bad, says", [
    ({"loop2": "floor(n / 4)"}, "block_x"),
    ({"loop2": "floor(block_x / "}, "loop2"),
    ({"loop2": True}, "block_x"),
    (["loop2"], "block_trips must map"),
])
def test_a_bad_block_trips_entry_says_what_is_valid(bad, says):
    graph, _ = imported(SASS / "block_trips.sm_86.sass", "tile_column_sum")
    data = to_dict(graph)
    data["block_trips"] = bad
    with pytest.raises((FormatError, GraphError)) as info:
        from_dict(data)
    assert says in str(info.value)


@pytest.mark.parametrize("values, text", [
    (lambda w: w, "block_x"),
    (lambda w: 2 * w - 1, "2 * block_x - 1"),
    (lambda w: w // 4, "floor(block_x / 4)"),
    (lambda w: (w + 3) // 4, "floor((block_x + 3) / 4)"),
    (lambda w: w // 2 + 1, "floor(block_x / 2) + 1"),
    (lambda w: np.maximum(1, w // 2), "max(1, floor(block_x / 2))"),
    (lambda w: np.floor(np.log2(w)).astype(np.int64) + 1, "floor(log2(block_x)) + 1"),
    (lambda w: np.maximum(1, np.floor(np.log2(w)).astype(np.int64) - 5),
     "max(1, floor(log2(block_x)) - 5)"),
    # a remainder loop's (b + k) % m
    (lambda w: (w + 2) % 4, "block_x + 2 - 4 * floor((block_x + 2) / 4)"),
    # w - 2 trips, the first two values (where the source loop runs none) what a compiled
    # do-while's counters would give, not counts
    (lambda w: np.where(w > 2, w - 2, 3 - w), "max(1, block_x - 2)"),
])
def test_the_count_is_written_as_the_first_form_that_fits_every_block(values, text):
    w = np.arange(1, 1025, dtype=np.int64)
    assert count_forms.formula(0, w, values(w)) == text


def test_a_count_no_form_fits_is_not_derived():
    w = np.arange(1, 1025, dtype=np.int64)
    assert count_forms.formula(0, w, w * w) is None
    assert count_forms.formula(0, w, np.sqrt(w).astype(np.int64)) is None
    # first values left out only where the form fitted on the rest gives no trips there
    assert count_forms.formula(0, w, np.where(w > 2, w + 5, 0)) is None


@pytest.mark.parametrize("arch", ARCHS)
def test_a_reduction_tree_halving_from_the_block_counts_its_levels(arch):
    """reduce_sum: for (s = blockDim.x / 2; s >= 32; s >>= 1), compiled as a copy of the
    halved counter each trip (R4 = R5, R5 = R4 >> 1) tested before it is halved: one trip
    a level, log2 of the block less 5 (at least one: the loop is entered only from 64
    threads, a guard of the block)."""
    graph, _ = imported(SASS / f"reduce.{arch}.sass", None)
    others = dict(graph.block_trips)
    assert others.pop("loop2") == "max(1, floor(log2(block_x)) - 5)"
    # its first loop sums the input a grid apart (core.kernel.sass.grid_stride)
    n = parameter_variable(parameter_base(int(arch[3:])) + 0x10)
    assert others == {"loop1": f"max(1, ceil({n} / 32) * 32 / (block_x * grid_x))"}
    for threads, levels in ((64, 1), (128, 2), (256, 3), (1024, 5)):
        assert launch_guard_values(graph, {}, (threads, 1, 1), 32)["loop2"] == levels


def test_a_project_file_keeps_the_block_trips(tmp_path):
    from gpumodeler.core.project import Project
    from gpumodeler.db.project_file import load_project, save_project
    graph, _ = imported(NVBENCH / "matmul.sm_86.sass", "matmul_tiled")
    project = Project()
    project.put_kernel("tiled", graph)
    save_project(project, tmp_path / "p.gpm")
    again = load_project(tmp_path / "p.gpm").kernels["tiled"]
    assert again.block_trips == {"loop2": "floor(block_x / 4)",
                                 "loop1": "ceil(param_0x17c / block_x)"}
    assert again == graph


@pytest.mark.parametrize("arch", [a for a in ARCHS if a not in ("sm_100", "sm_120")])
def test_the_block_sets_every_count_of_a_tile_as_wide_as_the_block(arch):
    """tile_product at every tile width 1..32, nothing set but the phases: the inner loop's
    count and the checks around it (blockDim.x >= 4, blockDim.x % 4 != 0, != 1, != 2: the
    remainder's steps) come from the block, and a phase stores 2 shared words and reads 2
    a step. (Blackwell tests its remainder with a LOP3 that writes a predicate, which the
    guards do not follow: those stay variables.)"""
    graph, _ = imported(SASS / f"block_trips.{arch}.sass", "tile_product")
    tests = {g.test for g in graph.guards.values() if g.test}
    assert {"ntid.x%4 != 0", "ntid.x%4 != 1", "ntid.x%4 != 2", "ntid.x >= 4"} <= tests
    counts = count(graph)
    for width in range(1, 33):
        values = dict(graph.variables, loop1=1)
        values.update(launch_guard_values(graph, {"loop1": 1}, (width, width, 1), 32))
        assert counts.evaluate(values)["smem_accesses"] == 2 + 2 * width, width


def test_a_compare_the_block_decides_is_kept_only_where_its_test_is_exact():
    """The compares block_compares writes hold exactly where the listing's compare does;
    a value that wraps as unsigned (blockDim.x % 8 - 1 >= 3 reads true at a width of 8)
    is left to a variable rather than written as blockDim.x % 8 >= 4."""
    from gpumodeler.core.kernel.sass.addresses import Poly
    from gpumodeler.core.kernel.sass.thread_tests import test_holds, warp_share
    w = np.arange(1, 1025)
    assert np.array_equal(test_holds("ntid.x%4 != 0", (w, 1, 1)), w % 4 != 0)
    assert np.array_equal(test_holds("4·ntid.x/4 >= 13", (w, 1, 1)), 4 * (w // 4) >= 13)
    assert warp_share("ntid.x%4 != 0", (16, 16, 1)) == 0.0
    assert warp_share("ntid.x%4 != 0", (18, 16, 1)) == 1.0
    field = block_values.op_node("lut", 0xC0, block_values.dim(0), block_values.const(7),
                                  block_values.const(0))
    assert block_values.poly_of(field).terms == Poly.symbol("ntid.x%8").terms
    with pytest.raises(ValueError):
        test_holds("tid.x < 3", (w, 1, 1))
    # Blackwell's remainder: R2 = blockDim.x % 8 - 1, then R2 >= 3 unsigned (true at 8, where
    # R2 wraps) and R2 != 1 (R2 = blockDim.x % 2 there): the first is not written
    found = _block_compares(SASS / "block_trips.sm_120.sass", "tile_product")
    assert 0x7B0 not in found
    assert [(a.text(), b.text()) for a, b in [found[0x970]]] == [("ntid.x%2", "1")]


def _block_compares(path, function):
    from gpumodeler.core.kernel.opcodes import classify
    from gpumodeler.core.kernel.sass import addresses, cfg
    from gpumodeler.core.kernel.sass.listing import arch_number, parse_listing
    from gpumodeler.core.kernel.sass.operands import n_destinations, reg_access
    func = next(f for f in parse_listing(path.read_text()).functions if function in f.name)
    ins = list(func.instructions)
    ranges = cfg.find_loops(ins, {i.address: k for k, i in enumerate(ins)})
    infos = [classify(i.opcode) for i in ins]
    access = [reg_access(i, f.unit if f else None) for i, f in zip(ins, infos)]
    follower = block_values.Follower(
        ins, access, lambda j: n_destinations(ins[j].mnemonic, getattr(infos[j], "unit", None),
                                              ins[j].operands),
        ranges, addresses.block_dim_offsets(arch_number(func.arch)))
    found = block_tests.block_compares(
        follower, [k for k, i in enumerate(ins) if i.mnemonic == "ISETP"])
    return {ins[k].address: v for k, v in found.items()}


@pytest.mark.parametrize("branch, derived", [
    ("NOP", {"loop1": "2 * block_x"}),
    ("@P0 BRA 0x50", {}),  # the doubling may be jumped over: n is blockDim.x on one path
])
def test_a_value_one_path_may_skip_is_not_followed(branch, derived):
    from gpumodeler.core.kernel.sass.build import build_graph
    from gpumodeler.core.kernel.sass.listing import parse_listing
    from tests.core.sass_listings import listing_of
    text = listing_of([
        "S2R R0, SR_TID.X", "ISETP.NE.AND P0, PT, R0, RZ, PT", "MOV R4, c[0x0][0x0]", branch,
        "IMAD.SHL.U32 R4, R4, 0x2, RZ", "MOV R5, RZ",
        "IADD3 R5, R5, 0x1, RZ", "ISETP.GE.AND P1, PT, R5, R4, PT", "@!P1 BRA 0x60", "EXIT"])
    graph, _ = build_graph(parse_listing(text).functions[0])
    assert graph.block_trips == derived


@pytest.mark.parametrize("arch", ARCHS)
def test_a_reduction_trees_thread_test_is_averaged_over_its_levels(arch):
    """reduce_sum's if (tid < s), s halved each level: the guard's share is the mean over
    the tree's levels of the warps with tid < s (4, 2, 1 of 8 at 256 threads: 7/24). Per
    warp, the shared accesses are then exactly the kernel's: one store of the partial sum,
    2 loads and a store in each warp a level keeps, and warp 0's load after the tree:
    1 + (3·(W − 1) + 1) / W = 4 − 2/W for W warps."""
    graph, _ = imported(SASS / f"reduce.{arch}.sass", None)
    (name,) = graph.trip_tests
    assert graph.trip_tests[name] == {"value": "tid.x", "op": "<", "first": "floor(block_x / 2)",
                                      "shift": 1, "trips": "loop2"}
    assert name in block_set_variables(graph)
    counts = count(graph)
    for threads in (64, 128, 256, 512, 1024):
        warps = threads // 32
        values = dict(graph.variables, loop1=1)
        values.update(launch_guard_values(graph, {"loop1": 1}, (threads, 1, 1), 32))
        assert values[name] == pytest.approx((warps - 1) / warps / values["loop2"])
        assert counts.evaluate(values)["smem_accesses"] == pytest.approx(4 - 2 / warps)
    # the user's value wins; so does a given trip count
    assert name not in launch_guard_values(graph, {name: 1}, (256, 1, 1), 32)
    assert launch_guard_values(graph, {"loop2": 1}, (256, 1, 1), 32)[name] == 0.5
    # more trips than the bound has bits: 128, 64, 32 keep 4, 2, 1 warps, 16 … 1 keep warp
    # 0, and the rest test tid.x < 0, which no warp passes
    many = launch_guard_values(graph, {"loop2": 1000}, (256, 1, 1), 32)[name]
    assert many == pytest.approx((4 + 2 + 1 + 5 * 1) / 8 / 1000)


def test_trip_tests_round_trip_and_a_bad_one_says_what_is_valid(tmp_path):
    from gpumodeler.core.project import Project
    from gpumodeler.db.project_file import load_project, save_project
    graph, _ = imported(SASS / "reduce.sm_86.sass", None)
    data = to_dict(graph)
    assert from_dict(json.loads(json.dumps(data))).trip_tests == graph.trip_tests
    project = Project()
    project.put_kernel("r", graph)
    save_project(project, tmp_path / "p.gpm")
    assert load_project(tmp_path / "p.gpm").kernels["r"].trip_tests == graph.trip_tests
    for bad, says in (({"value": "tid.x", "op": "<"}, "keys"),
                      ({"value": "n", "op": "<", "first": "1", "shift": 1, "trips": "loop2"},
                       "value of the thread index"),
                      ({"value": "tid.x", "op": "<", "first": "1", "shift": 0,
                        "trips": "loop2"}, "shift"),
                      ({"value": "tid.x", "op": "<", "first": "1", "shift": -32,
                        "trips": "loop2"}, "from -31 to -1"),
                      ({"value": "tid.x", "op": "<", "first": "n / 2", "shift": 1,
                        "trips": "loop2"}, "block_x")):
        broken = dict(data, trip_tests={"guard2": bad})
        with pytest.raises((FormatError, GraphError)) as info:
            from_dict(broken)
        assert says in str(info.value)
    doubled = {"value": "tid.x", "op": ">=", "first": "1", "shift": -1, "trips": "loop2"}
    assert from_dict(dict(data, trip_tests={"guard2": doubled})).trip_tests["guard2"] == doubled


def test_nvccs_division_is_read_as_the_quotient_truncated_toward_zero():
    """The values the division idiom is read as: unsigned n / d, and int n / d truncated
    toward zero (C's rule); a zero divisor gives all ones, the sequence's ~0."""
    n, d = block_values.dim(0), block_values.dim(1)
    a = np.array([7, 7, 2 ** 32 - 7, 2 ** 32 - 7, 5, 0], dtype=np.int64)
    b = np.array([2, 2 ** 32 - 2, 2, 2 ** 32 - 2, 0, 3], dtype=np.int64)
    div = block_values.evaluate(block_values.op_node("div", n, d), (a, b, 1))
    sdiv = block_values.evaluate(block_values.op_node("sdiv", n, d), (a, b, 1))
    assert list(div) == [3, 0, (2 ** 32 - 7) // 2, 0, 2 ** 32 - 1, 0]
    assert list(block_values.signed(sdiv)) == [3, -3, -3, 3, -1, 0]


@pytest.mark.parametrize("values, text", [
    (lambda n, b: n // b, "floor(n / block_x)"),
    (lambda n, b: -(-n // b), "ceil(n / block_x)"),
    (lambda n, b: np.maximum(1, n // b), "max(1, floor(n / block_x))"),
    (lambda n, b: -(-n // b) + 1, "ceil(n / block_x) + 1"),
    (lambda n, b: n // b + b, None),  # no form: not derived
])
def test_a_count_of_a_parameter_and_the_block_is_written_as_the_first_form_that_fits(
        values, text):
    axes = dict(block_values.BLOCK_AXES)
    axes[3] = ("n", 4096)

    def count(dims):
        return values(np.asarray(dims[3]), np.asarray(dims[0]))
    got = count_forms.describe((count, frozenset({0, 3})), axes=axes)
    assert (got.formula if got else None) == text
