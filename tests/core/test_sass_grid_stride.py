"""Grid-stride loops (core.kernel.sass.grid_stride): the import reads a loop that walks the
data a grid apart and writes its trips as a formula of a kernel parameter and each launch's
block and grid, on every architecture from Maxwell (its XMAD products and carry compares
followed) to Blackwell; other strides and counts of y keep their variable."""
import json
import math
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.errors import FormatError, GraphError
from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.graph_items import (block_set_variables, launch_guard_values,
                                                launch_set_text)
from gpumodeler.core.kernel.sass.parameters import parameter_base, parameter_variable
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
from gpumodeler.core.kernel.warp_counts import count

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
V100 = ROOT / "resources" / "validation" / "kernels" / "v100" / "stream_grid.sm_70.sass"
ARCHS = ("sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
         "sm_120")
#: the kernel parameter n of each function: its index among the parameters' 8-byte slots
#: (stride_int: y, x, n; stride_size: a, b, c, s, n)
N_SLOT = {"stride_int": 2, "stride_size": 4}


def imported(path, function):
    return import_kernel_with_report(str(path), function, None)


def n_variable(arch: str, function: str) -> str:
    base = parameter_base(int(arch[3:]))
    assert base is not None
    return parameter_variable(base + 8 * N_SLOT[function])


def warp_trips(n: int, block: int, grid: int) -> float:
    """The mean over the grid's warps of the trips of their first lane, counted one thread
    at a time: for (i = index; i < n; i += block * grid)."""
    stride = block * grid
    total = 0
    for start in range(0, stride, 32):
        total += max(0, -(-(n - start) // stride))
    return total / (stride // 32)


@pytest.mark.parametrize("function", sorted(N_SLOT))
@pytest.mark.parametrize("arch", ARCHS)
def test_a_grid_stride_loop_counts_from_the_parameter_and_the_grid(arch, function):
    graph, report = imported(SASS / f"grid_stride.{arch}.sass", function)
    n = n_variable(arch, function)
    assert graph.block_trips == {"loop1": f"max(1, ceil({n} / 32) * 32 / (block_x * grid_x))"}
    assert graph.variables[n] == 0 and graph.variables["loop1"] == 1  # not given: one trip
    assert f"the kernel parameter at c[0x0][{n[6:]}]" in report.summary()
    assert "loop1" in block_set_variables(graph)
    assert launch_set_text(graph, "loop1") == \
        f"from {n} and the launch's block and grid; {n} not given: 1"
    for threads, blocks, elements in ((128, 80, 2 ** 25), (256, 7, 1000), (64, 3, 64 * 3),
                                      (32, 1, 33), (1024, 2, 5 * 2048 + 17)):
        got = launch_guard_values(graph, {n: elements}, (threads, 1, 1), 32, (blocks,))
        assert got["loop1"] == pytest.approx(max(1, warp_trips(elements, threads, blocks)))
    # no grid: the count is left alone; the user's count stands; n not given: one trip
    assert "loop1" not in launch_guard_values(graph, {n: 1000}, (128, 1, 1), 32)
    assert "loop1" not in launch_guard_values(graph, {n: 1000, "loop1": 3}, (128, 1, 1), 32,
                                              (8,))
    assert "loop1" not in launch_guard_values(graph, {}, (128, 1, 1), 32, (8,))
    assert "loop1" not in launch_guard_values(graph, {n: 0}, (128, 1, 1), 32, (8,))


def test_the_loads_counted_over_a_launch_are_the_elements():
    """The warps' trips add up to the array: ceil(n / 32) warp loads of each array."""
    graph, _ = imported(SASS / "grid_stride.sm_86.sass", "stride_int")
    counts = count(graph, 32)
    for threads, blocks, elements in ((256, 40, 10 ** 6), (128, 1, 4096), (512, 300, 153600)):
        given = {"param_0x170": elements}
        values = dict(graph.variables, **given)
        values.update(launch_guard_values(graph, given, (threads, 1, 1), 32, (blocks,)))
        warps = blocks * threads // 32
        loads = counts.evaluate(values)["gmem_accesses"] * warps
        # one load and one store a trip
        assert loads == pytest.approx(2 * math.ceil(elements / 32))


@pytest.mark.parametrize("arch", ARCHS[3:])
def test_an_unrolled_grid_stride_loop_and_its_remainder_are_one_grid_stride_loop(arch):
    """for (; i + 3 * S < n; i += 4 * S) {4 copies}, then for (; i < n; i += S): the pair
    the import groups as an unrolled loop counts the elements a thread takes, the
    grid-stride formula over n (a size_t after y, x and the float a: 24 bytes in)."""
    graph, _ = imported(SASS / f"grid_stride.{arch}.sass", "stride_unrolled")
    n = parameter_variable(parameter_base(int(arch[3:])) + 24)
    assert graph.block_trips == {"loop1": f"max(1, ceil({n} / 32) * 32 / (block_x * grid_x))"}
    assert [lp.iterations.text for lp in graph.loops.values()] == \
        ["floor(loop1 / 4)", "loop1 - 4 * floor(loop1 / 4)"]


@pytest.mark.parametrize("arch", ARCHS[:3])
def test_maxwell_and_pascal_leave_the_unrolled_grid_stride_loop_a_variable(arch):
    """Their 64-bit strides are IADD.CC/.X chains of three terms the values are not
    followed through."""
    graph, _ = imported(SASS / f"grid_stride.{arch}.sass", "stride_unrolled")
    assert graph.block_trips == {}


@pytest.mark.parametrize("arch", ARCHS)
def test_other_strides_keep_their_variable(arch):
    graph, _ = imported(SASS / f"grid_stride.{arch}.sass", "stride_twice")
    assert graph.block_trips == {}
    assert not any(v.startswith("param_") for v in graph.variables)


def row_warp_trips(rows: int, block: tuple, grid_y: int) -> float:
    """The mean over a column of blocks' warps of the trips of their first lane's row,
    counted one thread at a time: for (r = blockIdx.y * blockDim.y + threadIdx.y; r < rows;
    r += blockDim.y * gridDim.y), a warp running while any of its lanes does."""
    bx, by = block
    stride, total, warps = by * grid_y, 0, 0
    for b in range(grid_y):
        threads = [(t % bx, t // bx) for t in range(bx * by)]
        for w in range(0, len(threads), 32):
            total += max(max(0, -(-(rows - (b * by + ty)) // stride))
                         for _, ty in threads[w:w + 32])
            warps += 1
    return total / warps


@pytest.mark.parametrize("arch", ARCHS)
def test_a_grid_stride_loop_along_y_counts_its_warps_trips(arch):
    """stride_rows: rows a grid apart along y. A warp holds 32 / block_x rows of its block
    (one where block_x is 32 or more) and makes the trips of its first: the formula equals
    the trips counted one thread at a time at every launch tried."""
    graph, report = imported(SASS / f"grid_stride.{arch}.sass", "stride_rows")
    base = parameter_base(int(arch[3:]))
    assert base is not None
    rows = parameter_variable(base + 0x10)  # after y and x
    ((var, text),) = graph.block_trips.items()
    assert var == "loop1" and rows in text and "grid_y" in text
    assert "from each launch's block and grid" in report.summary()
    for block, grid_y, n in [((16, 16), 4, 1000), ((32, 8), 16, 4096), ((8, 32), 3, 777),
                             ((64, 4), 7, 100), ((256, 1), 40, 10 ** 4), ((16, 2), 1, 5)]:
        got = launch_guard_values(graph, {rows: n}, (*block, 1), 32, (3, grid_y))
        assert got["loop1"] == pytest.approx(max(1, row_warp_trips(n, block, grid_y))), \
            (block, grid_y, n)


@pytest.mark.parametrize("function, offset", [
    ("gs_init", 0x168), ("gs_sum", 0x170), ("gs_dot", 0x178), ("gs_scale", 0x170),
    ("gs_triad", 0x178), ("gs_sch_triad", 0x180)])
def test_the_volta_stream_kernels_are_grid_stride_loops(function, offset):
    """The validation set's V100 kernels (a size_t index, ptxas 12.4 for sm_70)."""
    graph, _ = imported(V100, function)
    assert graph.block_trips["loop1"] == \
        f"max(1, ceil(param_{offset:#x} / 32) * 32 / (block_x * grid_x))"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_and_sweep_take_the_trips_from_the_parameter(capsys, tmp_path):
    out = tmp_path / "triad.json"
    code, _, err = run(capsys, "kernel", "import", V100, "--function", "gs_triad", "-o", out)
    assert code == 0, err

    def time(grid, *sets):
        code, text, err = run(capsys, "predict", "--device", "V100 PCIe", "--graph", out,
                              "--grid-size", grid, "--block-size", 128, "--registers", 16,
                              *sets, "--json")
        assert code == 0, err
        return json.loads(text)["kernel_time_s"]

    n = 2 ** 25
    for grid in (8, 80, 640):
        assert time(grid, "--set", f"param_0x178={n}") == \
            time(grid, "--set", f"loop1={n / (128 * grid)}")
    # the same array on more blocks: more blocks, fewer trips each
    assert time(640, "--set", f"param_0x178={n}") < time(8, "--set", f"param_0x178={n}")
    code, text, err = run(capsys, "sweep", "--device", "V100 PCIe", "--graph", out,
                          "--grid-size", "320,640,1280", "--block-size", 128, "--registers", 16,
                          "--set", f"param_0x178={n}", "--format", "json")
    assert code == 0, err
    times = [row["kernel_time_s"] for row in json.loads(text)]
    assert max(times) / min(times) < 1.05  # a memory-bound copy of one array: the same time
    # kernel import --set of the parameter keeps the formula
    fixed = tmp_path / "fixed.json"
    code, _, err = run(capsys, "kernel", "import", V100, "--function", "gs_triad", "--set",
                       f"param_0x178={n}", "-o", fixed)
    assert code == 0, err
    data = json.loads(fixed.read_text())
    assert data["variables"]["param_0x178"] == n and "loop1" in data["block_trips"]


def test_the_formula_round_trips_and_a_bad_one_says_what_is_valid():
    graph, _ = imported(SASS / "grid_stride.sm_86.sass", "stride_int")
    data = to_dict(graph)
    assert from_dict(json.loads(json.dumps(data))).block_trips == graph.block_trips
    for bad, says in (("ceil(m / 32)", "unknown: m"), ("loop1 + 1", "unknown: loop1")):
        data["block_trips"] = {"loop1": bad}
        with pytest.raises((FormatError, GraphError)) as info:
            from_dict(data)
        assert says in str(info.value) and "grid_x" in str(info.value)


def block_warp_trips(n: int, block: int) -> float:
    """The mean over a block's warps of the trips of their first lane, counted one thread
    at a time: for (c = threadIdx.x; c < n; c += blockDim.x)."""
    total = sum(max(0, -(-(n - start) // block)) for start in range(0, block, 32))
    return total / (block // 32)


@pytest.mark.parametrize("arch", ARCHS)
def test_a_block_stride_loop_counts_from_the_parameter_and_the_block(arch):
    """param_loops.cu's row_sum: each thread of a block walks a row blockDim.x apart."""
    graph, report = imported(SASS / f"param_loops.{arch}.sass", "row_sum")
    base = parameter_base(int(arch[3:]))
    assert base is not None
    cols = parameter_variable(base + 0x10)
    assert graph.block_trips == {"loop1": f"max(1, ceil({cols} / 32) * 32 / block_x)"}
    assert "from each launch's block, " in report.summary()
    for threads, elements in ((128, 10 ** 5), (256, 1000), (64, 64), (32, 33), (1024, 17)):
        got = launch_guard_values(graph, {cols: elements}, (threads, 1, 1), 32, (5,))
        assert got["loop1"] == pytest.approx(max(1, block_warp_trips(elements, threads)))
    # the grid does not enter it
    assert launch_guard_values(graph, {cols: 4096}, (256, 1, 1), 32, (1,)) == \
        launch_guard_values(graph, {cols: 4096}, (256, 1, 1), 32, (999,))


def chunk_warp_trips(n: int, chunk: int, block: int, grid: int) -> float:
    """The mean over the grid's warps of the trips of their first lane, counted one thread
    at a time: for (i = blockIdx.x * chunk + threadIdx.x; i < n; i += chunk * gridDim.x)."""
    total = 0
    for b in range(grid):
        for start in range(b * chunk, b * chunk + block, 32):
            total += max(0, -(-(n - start) // (chunk * grid)))
    return total / (grid * block // 32)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("function", ["chunk_sum", "pair_sum"])
def test_a_grid_stride_loop_of_chunks_counts_its_warps_trips(arch, function):
    """A reduction's first pass, each block taking a chunk of 512 elements (256 threads, i
    and i + 256) or of two blocks' threads (2 * blockDim.x) a trip, the chunks a grid apart:
    the pairs (chunk, warp) below n over the grid's warps, equal to the trips counted one
    thread at a time at every launch tried."""
    graph, report = imported(SASS / f"grid_stride.{arch}.sass", function)
    base = parameter_base(int(arch[3:]))
    assert base is not None
    n = parameter_variable(base + 0x10)
    ((var, text),) = graph.block_trips.items()
    assert var == "loop1" and n in text and "grid_x" in text
    assert "from each launch's block and grid" in report.summary()
    launches = [(256, 80, 2 ** 22), (256, 7, 1000), (256, 3, 512 * 3 + 31), (256, 1, 100)]
    if function == "pair_sum":
        launches += [(128, 40, 10 ** 5), (64, 5, 64 * 10 + 1), (1024, 2, 5000)]
    for threads, blocks, elements in launches:
        chunk = 512 if function == "chunk_sum" else 2 * threads
        got = launch_guard_values(graph, {n: elements}, (threads, 1, 1), 32, (blocks,))
        want = chunk_warp_trips(elements, chunk, threads, blocks)
        assert got["loop1"] == pytest.approx(max(1, want)), (threads, blocks, elements)
