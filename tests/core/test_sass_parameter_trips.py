"""Trip counts a kernel parameter decides (core.kernel.sass.parameter_trips): a loop to n
gets the formula n; until n is given the loop keeps its own value."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.graph_items import launch_guard_values, launch_set_text
from gpumodeler.core.kernel.sass.parameters import parameter_base, parameter_variable
from gpumodeler.core.kernel.warp_counts import count
from gpumodeler.core.kernel.sass.importer import (import_from_listing,
                                                  import_kernel_with_report, read_listing)

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
SRC = ROOT / "resources" / "kernels" / "src"
ARCHS = ("sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
         "sm_120")


def loop_formulas(graph) -> dict:
    """The graph's formulas of its loop variables (its guards' are left out)."""
    return {k: v for k, v in graph.block_trips.items() if k.startswith("loop")}


def param(arch: str, offset: int) -> str:
    base = parameter_base(int(arch[3:]))
    assert base is not None
    return parameter_variable(base + offset)


@pytest.mark.parametrize("arch", ARCHS)
def test_saxpy2s_loop_runs_to_its_parameter_a(arch):
    """Gajger's saxpy2 (Fig. 5.1): for (cnt = 0; cnt < a; ++cnt), a the second int."""
    graph, report = import_kernel_with_report(str(SASS / f"saxpy2.{arch}.sass"), None, None)
    a = param(arch, 4)
    assert graph.block_trips == {"loop1": a}
    assert graph.variables[a] == 0 and graph.variables["loop1"] == 1
    assert f"loop1 = {a}, {a} the kernel parameter at" in report.summary()
    assert launch_guard_values(graph, {a: 128}, (256, 1, 1), 32) == {"loop1": 128}
    assert launch_guard_values(graph, {}, (256, 1, 1), 32) == {}  # not given: loop1 stays
    assert launch_guard_values(graph, {a: 128, "loop1": 3}, (256, 1, 1), 32) == {}
    assert launch_set_text(graph, "loop1") == f"from {a}; {a} not given: 1"


@pytest.mark.parametrize("arch", ["sm_52", "sm_75", "sm_86", "sm_89"])
def test_nested_loops_run_to_their_own_parameters(arch):
    """window_sum(m, out, pitch, rows, cols): the outer loop to rows, the inner to cols."""
    graph, _ = import_kernel_with_report(str(SASS / f"nested_loops.{arch}.sass"), None, None)
    assert graph.block_trips == {"loop1": param(arch, 0x14), "loop2": param(arch, 0x18)}


def test_an_unrolled_inner_loop_counts_its_unrolled_trips():
    """unroll_inner's #pragma unroll 4 window (its remainder left as straight code): the
    loop runs floor(cols / 4) trips of 4 bodies."""
    graph, _ = import_kernel_with_report(str(SASS / "unroll_inner.sm_75.sass"), None, None)
    assert graph.block_trips["loop2"] == "floor(param_0x178 / 4)"


NVBENCH = ROOT / "resources" / "validation" / "kernels" / "nvbench"


@pytest.mark.parametrize("listing, function, offset", [
    (SASS / "matmul_naive.sm_75.sass", None, 0x178),
    (SASS / "matmul_naive.sm_90.sass", None, 0x228),
    (SASS / "unroll_nested.sm_52.sass", None, 0x158),
    (SASS / "unroll_nested.sm_90.sass", None, 0x228),
    (NVBENCH / "matmul.sm_86.sass", "matmul_naive", 0x17c),
    (NVBENCH / "matvec.sm_75.sass", "matvec_rows", 0x17c)])
def test_nvccs_unrolled_loop_to_a_parameter_runs_to_it(listing, function, offset):
    """for (k = 0; k < n; ++k), unrolled by nvcc (4) and ptxas (4 again): n − n % 4 counted
    down by 16 and then by 4, and a remainder loop of n % 4 steps; the group's variable, the
    source loop's iterations, is n."""
    graph, _ = import_kernel_with_report(str(listing), function, None)
    n = parameter_variable(offset)
    assert loop_formulas(graph) == {"loop1": n}
    assert launch_guard_values(graph, {n: 1000}, (256, 1, 1), 32)["loop1"] == 1000


def test_a_count_of_the_block_alone_reads_no_parameter():
    """tile_column_sum runs blockDim.x trips: the block's count, no parameter made."""
    graph, _ = import_kernel_with_report(str(SASS / "block_trips.sm_86.sass"),
                                         "tile_column_sum", None)
    assert graph.block_trips == {"loop1": "block_x"}
    assert not any(v.startswith("param_") for v in graph.variables)


def test_the_cu_names_saxpy2s_parameter_a_as_the_thesis_does():
    listing = read_listing(SASS / "saxpy2.sm_86.sass")
    listing.source = (SRC / "saxpy2.cu").read_text()
    graph, report = import_from_listing(listing)
    assert graph.block_trips == {"loop1": "a"} and graph.variables["a"] == 0
    assert "set it with --set a=N" in report.summary()


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_with_the_parameter_is_predict_with_the_loop(capsys, tmp_path):
    out = tmp_path / "saxpy2.json"
    code, _, err = run(capsys, "kernel", "import", SASS / "saxpy2.sm_86.sass", "-o", out)
    assert code == 0, err

    def time(*sets):
        code, text, err = run(capsys, "predict", "--device", "RTX 3080", "--graph", out,
                              "--data-size", 10 ** 6, "--block-size", 256, "--registers", 32,
                              *sets, "--json")
        assert code == 0, err
        return json.loads(text)["kernel_time_s"]

    assert time("--set", "param_0x164=128") == time("--set", "loop1=128")
    assert time("--set", "param_0x164=128") != time()
    assert time() == time("--set", "loop1=1")  # not given: the loop's own value
    # a sweep over the parameter moves the loop
    code, text, err = run(capsys, "sweep", "--device", "RTX 3080", "--graph", out,
                          "--data-size", 10 ** 6, "--block-size", 256, "--registers", 32,
                          "--set", "param_0x164=1,64,1024", "--format", "json")
    assert code == 0, err
    times = [row["kernel_time_s"] for row in json.loads(text)]
    assert times[0] < times[1] < times[2]


#: param_loops.cu: each function's parameter of the count (its offset past the first
#: parameter) and the trips the source loop makes, one thread at a time
PARAM_LOOPS = {"phase_product": 0x18, "tile_walk_product": 0x18, "z_march_stencil": 0x18}


def source_trips(function: str, value: int) -> int:
    """The trips of the source loop of ``function`` for its parameter ``value`` (counted)."""
    if function == "phase_product":  # for (ph = 0; ph < Width / 16; ++ph)
        return sum(1 for _ in range(0, int(value / 16)))
    if function == "tile_walk_product":  # a from wA*32*by to wA*32*by + wA - 1 by 32
        begin = value * 32 * 7
        return sum(1 for _ in range(begin, begin + value, 32))
    return sum(1 for _ in range(1, value - 1))  # for (k = 1; k < nz - 1; k++)


@pytest.mark.parametrize("function", sorted(PARAM_LOOPS))
@pytest.mark.parametrize("arch", ["sm_52", "sm_60", "sm_61", "sm_75", "sm_86", "sm_89",
                                  "sm_90"])
def test_textbook_loops_to_a_parameter_count_the_source_loops_trips(arch, function):
    """A signed division by the tile (LEA.HI), a walk from the block's first tile to its last
    (the block index cancels), a march along z from 1 to nz - 2 (nvcc's unroll by 4 reusing
    the register it compares): each loop is the source's count of its parameter."""
    graph, _ = import_kernel_with_report(str(SASS / f"param_loops.{arch}.sass"), function,
                                         None)
    p = param(arch, PARAM_LOOPS[function])
    (var, text), = loop_formulas(graph).items()
    assert var == "loop1" and graph.variables[p] == 0
    for value in (3, 16, 17, 31, 32, 33, 100, 1000, 4096):
        got = launch_guard_values(graph, {p: value}, (16, 16, 1), 32)["loop1"]
        # the source loop's trips; a loop that runs none counts one, as every loop does
        assert got == max(1, source_trips(function, value)), (value, text)


def test_ampere_s_march_along_z_is_its_unrolled_loop_and_its_remainder():
    """sm_80's listing keeps the two loops apart: the unrolled one runs floor((nz − 2) / 4)
    trips and the remainder (nz − 2) % 4; together the source's nz − 2."""
    graph, _ = import_kernel_with_report(str(SASS / "param_loops.sm_80.sass"),
                                         "z_march_stencil", None)
    p = param("sm_80", 0x18)
    for nz in (3, 6, 7, 100, 1027):
        got = launch_guard_values(graph, {p: nz}, (16, 16, 1), 32)
        assert 4 * got["loop1"] + got["loop2"] == nz - 2 or (nz < 6 and got["loop1"] == 1)
        assert got["loop2"] == (nz - 2) % 4


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_blackwells_unrolled_tile_loops_count_their_trips_of_four(arch):
    """Blackwell's listings unroll the tile loop by 4 and leave the remainder to guarded
    code: the loop makes floor(Width / 16 / 4) trips."""
    graph, _ = import_kernel_with_report(str(SASS / f"param_loops.{arch}.sass"),
                                         "phase_product", None)
    p = param(arch, 0x18)
    for width in (64, 100, 4096):
        assert launch_guard_values(graph, {p: width}, (16, 16, 1), 32)["loop1"] == \
            width // 16 // 4
    graph, _ = import_kernel_with_report(str(SASS / f"param_loops.{arch}.sass"),
                                         "tile_walk_product", None)
    assert launch_guard_values(graph, {p: 1000}, (32, 32, 1), 32)["loop1"] == 32


@pytest.mark.parametrize("arch", ["sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86",
                                  "sm_89", "sm_90"])
def test_a_mask_of_a_run_time_radius_runs_its_rows_and_its_unrolled_columns(arch):
    """radius_convolution: for (i = 0; i < 2r + 1; i++) with its counter in a uniform
    register copied before each compare (IMAD.U32 R, RZ, RZ, UR), and the column loop
    unrolled by 4 (the remainder as guarded code): 2r + 1 rows, floor((2r + 1) / 4) trips."""
    graph, _ = import_kernel_with_report(str(SASS / f"param_loops.{arch}.sass"),
                                         "radius_convolution", None)
    r = param(arch, 0x18)
    for radius in (1, 2, 3, 7, 40):
        got = launch_guard_values(graph, {r: radius}, (16, 16, 1), 32)
        assert got["loop1"] == 2 * radius + 1
        assert got["loop2"] == (2 * radius + 1) // 4
    # the columns' remainder is straight code under checks of (2r + 1) % 4, which the
    # radius decides: a guard each launch that gives r sets (an odd r runs 3 copies, an
    # even one 1), so a thread loads the mask's and the image's (2r + 1)^2 words each
    for radius in range(1, 9):
        values = dict(graph.variables, **{r: radius})
        values.update(launch_guard_values(graph, {r: radius}, (16, 16, 1), 32))
        loads = count(graph).evaluate(values)["gmem_accesses"] - 1  # less the one store
        assert loads == 2 * (2 * radius + 1) ** 2, radius


def test_a_loop_left_by_a_guarded_call_runs_to_its_parameter():
    """The A6000 set's register-tiled product: nvcc ends its k0 loop (k0 += 8 up to K) with
    an unconditional back branch and leaves it by @P0 CALL.REL.NOINC to the code after it:
    the loop goes on while P0 is false, floor((K + 7) / 8) trips."""
    listing = ROOT / "resources" / "validation" / "kernels" / "a6000" / "sgemm_steps.sm_86.sass"
    graph, _ = import_kernel_with_report(str(listing), "sgemm_register_tiles", None)
    assert graph.block_trips == {"loop1": "floor((param_0x168 + 7) / 8)"}
    for k in (8, 9, 4092, 4096):
        assert launch_guard_values(graph, {"param_0x168": k}, (256, 1, 1), 32)["loop1"] == \
            -(-k // 8)


def test_graph_json_names_the_loops_a_parameter_set_apart_from_the_blocks(capsys, tmp_path):
    """saxpy2's loop runs to its parameter a: with a given, graph --json lists loop1 under
    variables_from_parameters, not variables_from_block (the block set no count of it)."""
    out = str(tmp_path / "saxpy2.json")
    code, _, err = run(capsys, "kernel", "import", str(SASS / "saxpy2.sm_75.sass"), "-o", out)
    assert code == 0, err
    code, text, err = run(capsys, "graph", out, "--block-size", "256", "--set",
                          "param_0x164=128", "--json")
    assert code == 0, err
    shown = json.loads(text)
    assert shown["variables_from_parameters"] == ["loop1"]
    assert "loop1" not in shown["variables_from_block"]
    assert shown["variables"]["loop1"] == 128
