"""`gpumodeler kernel import`: listings, .cu sources, function choice, bad input."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES, MEMORY_LEVELS, LatencyTable
from gpumodeler.core.kernel.sass import toolchain

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
SRC = ROOT / "resources" / "kernels" / "src"
HAVE_TOOLS = bool(toolchain.find_tool("nvcc", required=False)) and any(
    toolchain.find_tool(t, required=False) for t in ("cuobjdump", "nvdisasm"))
needs_cuda = pytest.mark.skipif(not HAVE_TOOLS, reason="nvcc and a disassembler are not installed")
#: a complete table in the user database, standing in for the architecture tables
TABLE = LatencyTable(
    key="test-complete", name="test", architecture="test", source="tests",
    instruction_cycles={c: 4.0 for c in INSTRUCTION_CLASSES} | {"sfu": 20.0, "fp64": 8.0, "tensor": 32.0},
    memory_cycles={m: 30.0 for m in MEMORY_LEVELS} | {"dram": 400.0},
    ilp_cycles=1, branch_taken_cycles=12, branch_not_taken_cycles=6, barrier_cycles=20,
    block_replacement_cycles=200)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def user_table(catalog):
    from gpumodeler.db.mapping import latency_table_fields
    values = {k: v for k, v in latency_table_fields(TABLE).items() if v is not None}
    catalog.add_device("latency_table", TABLE.key, values=values)
    return TABLE.key


def test_listing_to_file_then_graph(capsys, tmp_path, user_table):
    out = tmp_path / "s.json"
    code, text, err = run(capsys, "kernel", "import", SASS / "saxpy2.sm_90.sass", "-o", out,
                          "--latency-table", user_table)
    assert code == 0 and err == ""
    assert text.startswith(f"{out}: saxpy2") and "loop1" in text
    data = json.loads(out.read_text())
    graph = from_dict(data)
    assert len(graph.instructions) == 30 and graph.latency_table == user_table
    code, text, err = run(capsys, "graph", out, "--set", "loop1=128", "--json")
    assert code == 0, err
    r = json.loads(text)
    # guard1: the branch around the loop; param_0x214: the kernel parameter a, loop1's count
    assert r["variables"] == {"loop1": 128, "guard1": 1, "param_0x214": 0}
    assert r["latency_bound_cycles"] > 128 * 20  # the loop recurrence counts 128 times


def test_stdout_when_no_output_file(capsys):
    code, text, err = run(capsys, "kernel", "import", SASS / "vecadd.sm_80.sass", "--set", "x=1")
    assert code == 2 and "no variable 'x'" in err and text == ""
    code, text, err = run(capsys, "kernel", "import", SASS / "fp64_axpy.sm_80.sass",
                          "--set", "loop1=64")
    # the graph goes to stdout; what the table lacks and the schedule filled is a note on stderr
    assert code == 0 and (err == "" or (err.startswith("gpumodeler kernel import: note: ")
                                        and len(err.splitlines()) == 1))
    graph = from_dict(json.loads(text))
    assert graph.variables["loop1"] == 64
    code, text, err = run(capsys, "kernel", "import", SASS / "fp64_axpy.sm_80.sass", "--table-only")
    assert code == 0 and err == ""


def test_several_functions_need_a_choice(capsys, tmp_path):
    out = tmp_path / "v.json"
    code, text, err = run(capsys, "kernel", "import", SASS / "vector_ops.sm_86.sass", "-o", out)
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and "choose one with --function" in err
    assert "_Z5scaleIfEvPT_S0_i" in err and "_Z7vecadd4P6float4PKS_S2_" in err
    for name in ("_Z7vecadd4P6float4PKS_S2_", "vecadd4"):
        code, _, err = run(capsys, "kernel", "import", SASS / "vector_ops.sm_86.sass",
                           "--function", name, "-o", out)
        if name == "vecadd4" and not toolchain.demangle(["_Z7vecadd4P6float4PKS_S2_"]):
            assert code == 2  # no demangler installed: only the mangled name selects
            continue
        assert code == 0, err
        assert sum(i["opcode"].startswith("LDG.E.128") for i in
                   json.loads(out.read_text())["instructions"]) == 2


def test_demangled_names_shown_and_selecting():
    if not toolchain.demangle(["_Z5scaleIfEvPT_S0_i"]):
        pytest.skip("no C++ demangler (c++filt / cu++filt) installed")
    from gpumodeler.core.kernel.sass.importer import FunctionChoiceError, read_listing, select_function
    lst = read_listing(SASS / "vector_ops.sm_86.sass")
    with pytest.raises(FunctionChoiceError) as exc:
        select_function(lst)
    assert "void scale<float>(float*, float, int) [_Z5scaleIfEvPT_S0_i]" in str(exc.value)
    for name in ("scale<float>", "scale", "void scale<float>(float*, float, int)",
                 "_Z5scaleIfEvPT_S0_i"):
        assert select_function(lst, name).name == "_Z5scaleIfEvPT_S0_i"


def _bad(capsys, tmp_path, path, *extra):
    out = tmp_path / "out.json"
    out.write_text("previous contents")
    code, text, err = run(capsys, "kernel", "import", path, "-o", out, *extra)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("gpumodeler kernel: ")
    assert "Traceback" not in err
    assert out.read_text() == "previous contents"  # nothing written, nothing lost
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]
    return err


def test_truncated_listing(capsys, tmp_path):
    text = (SASS / "saxpy2.sm_90.sass").read_text()
    bad = tmp_path / "cut.sass"
    bad.write_text(text[:text.index("FADD R0, R3, R0") + 6])
    assert "truncated" in _bad(capsys, tmp_path, bad)


def test_another_tools_listing(capsys, tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n")
    assert "looks like PTX" in _bad(capsys, tmp_path, ptx)


def test_binary_garbage(capsys, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 8)
    assert "binary data" in _bad(capsys, tmp_path, junk)


def test_empty_function(capsys, tmp_path):
    empty = tmp_path / "empty.sass"
    empty.write_text("\tcode for sm_90\n\t\tFunction : nothing\n\t.headerflags\t@\"EF_CUDA_SM90\"\n"
                     "\t\t..........\n")
    assert "function nothing" in _bad(capsys, tmp_path, empty)


def test_empty_file_and_missing_file(capsys, tmp_path):
    empty = tmp_path / "nothing.sass"
    empty.write_text("")
    assert "is empty" in _bad(capsys, tmp_path, empty)
    assert "cannot read" in _bad(capsys, tmp_path, tmp_path / "absent.sass")


def test_cu_needs_an_architecture(capsys, tmp_path):
    err = _bad(capsys, tmp_path, SRC / "saxpy2.cu")
    assert "--arch sm_90" in err
    assert "not of the form sm_XX" in _bad(capsys, tmp_path, SRC / "saxpy2.cu", "--arch", "90")


def test_arch_not_in_listing(capsys, tmp_path):
    assert "has code for sm_86, not sm_90" in _bad(
        capsys, tmp_path, SASS / "reduce.sm_86.sass", "--arch", "sm_90")


def test_missing_nvcc_says_what_to_install(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    monkeypatch.setattr(toolchain, "_search_dirs", lambda: [])
    err = _bad(capsys, tmp_path, SRC / "saxpy2.cu", "--arch", "sm_90")
    assert "nvcc not found" in err and "CUDA Toolkit" in err


def test_missing_disassembler_names_the_pip_packages(capsys, tmp_path, monkeypatch):
    def fake(name, required=True):
        if name == "nvcc":
            return "/bin/true"
        if required:
            raise toolchain.ToolMissing(f"{name} not found")
        return None
    monkeypatch.setattr(toolchain, "find_tool", fake)
    err = _bad(capsys, tmp_path, SRC / "saxpy2.cu", "--arch", "sm_90")
    assert "nvidia-cuda-cuobjdump" in err and "nvidia-cuda-nvdisasm" in err


@needs_cuda
def test_cu_that_does_not_compile(capsys, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text("__global__ void k(float *x) { x[0] = undefined_name; }\n")
    err = _bad(capsys, tmp_path, src, "--arch", "sm_90")
    assert "nvcc -arch=sm_90 broken.cu failed" in err and "undefined_name" in err
    assert len(err) < 600  # trimmed


def test_the_architectures_table_is_found_in_the_database(capsys, tmp_path, catalog):
    from gpumodeler.db.mapping import latency_table_fields
    out = tmp_path / "s.json"
    code, text, _ = run(capsys, "kernel", "import", SASS / "saxpy2.sm_90.sass", "-o", out)
    assert code == 0 and "latency table hopper-published (Hopper)" in text
    assert json.loads(out.read_text())["latency_table"] == "hopper-published"
    values = {k: v for k, v in latency_table_fields(TABLE).items() if v is not None}
    catalog.add_device("latency_table", "test-hopper", values=values | {"architecture": "Hopper"})
    code, text, _ = run(capsys, "kernel", "import", SASS / "saxpy2.sm_90.sass", "-o", out)
    assert code == 0 and "choose with --latency-table" in text and "test-hopper" in text
    code, text, _ = run(capsys, "kernel", "import", SASS / "saxpy2.sm_90.sass", "-o", out,
                        "--latency-table", "test-hopper")
    assert code == 0 and json.loads(out.read_text())["latency_table"] == "test-hopper"


@needs_cuda
@pytest.mark.usefixtures("compiled_once")   # the README's own test compiles the same line
def test_cu_import_then_predict_on_h100(capsys, tmp_path, catalog):
    """README, as written: import saxpy2.cu for sm_90, then predict on the H100 SXM5 with the
    published Hopper table of devices.db (what it lacks comes from the schedule, noted)."""
    user_table = "hopper-published"
    out = tmp_path / "s.json"
    code, text, err = run(capsys, "kernel", "import", SRC / "saxpy2.cu", "--arch", "sm_90",
                          "-o", out)
    assert code == 0, err
    assert "from the compiler's schedule (a lower bound)" in text
    listing = from_dict(json.loads(out.read_text()))
    assert listing.latency_table == user_table and "lower bound" in listing.description
    committed = from_dict(json.loads(_import_json(capsys, SASS / "saxpy2.sm_90.sass", user_table)))
    assert listing.instructions.keys() == committed.instructions.keys()
    code, text, err = run(capsys, "predict", "--device", "H100 SXM5", "--graph", out,
                          "--set", "loop1=128", "--data-size", "4e8", "--block-size", "256",
                          "--registers", "32")
    assert code == 0, err
    assert "limited by" in text and "-bound" in text


def _import_json(capsys, path, table):
    code, text, err = run(capsys, "kernel", "import", path, "--latency-table", table)
    assert code == 0, err
    return text


@needs_cuda
def test_cubin_is_disassembled(capsys, tmp_path):
    import subprocess
    cubin = tmp_path / "v.cubin"
    subprocess.run([toolchain.find_tool("nvcc"), "-cubin", "-arch=sm_80", "-o", str(cubin),
                    str(SRC / "vecadd.cu")], check=True, capture_output=True)
    code, text, err = run(capsys, "kernel", "import", cubin)
    assert code == 0, err
    assert len(from_dict(json.loads(text)).instructions) > 5


def test_listing_with_several_architectures(capsys, tmp_path):
    both = tmp_path / "both.sass"
    both.write_text((SASS / "vecadd.sm_80.sass").read_text() + (SASS / "vecadd.sm_90.sass").read_text())
    out = tmp_path / "o.json"
    code, _, err = run(capsys, "kernel", "import", both, "-o", out)
    assert code == 2 and "several architectures (sm_80, sm_90); choose one with --arch" in err
    assert not out.exists()
    code, _, err = run(capsys, "kernel", "import", both, "--arch", "sm_80", "-o", out)
    assert code == 0, err
    assert "for sm_80" in json.loads(out.read_text())["description"]


def test_written_graph_is_laid_out_in_columns_not_one_tall_column(tmp_path):
    """The CLI lays the imported graph out as the GUI's import does (core.kernel.layout):
    program order wrapped into columns of about 16:9, loops' members kept together."""
    from gpumodeler.core.kernel.layout import NODE_H, layout_extent
    out = tmp_path / "m.json"
    assert main(["kernel", "import", str(SASS / "matmul_tiled.sm_90.sass"), "-o", str(out)]) == 0
    graph = from_dict(json.loads(out.read_text()))
    positions = {i.id: (i.x, i.y) for i in graph.instructions.values()}
    width, height = layout_extent(positions)
    assert len({x for x, _ in positions.values()}) > 1
    assert 1.0 <= width / height <= 16 / 9 + 0.35
    boxes = sorted(positions.values())
    for (x0, y0), (x1, y1) in zip(boxes, boxes[1:]):  # no two boxes overlap in a column
        assert x0 != x1 or y1 - y0 >= NODE_H, ((x0, y0), (x1, y1))


#: What ``cuobjdump -sass -res-usage`` prints before a cubin's code (matmul_tiled, sm_90).
RES_USAGE = """
Resource usage:
 Common:
  GLOBAL:0
 Function _Z12matmul_tiledPKfS0_Pfi:
  REG:{regs} STACK:0 SHARED:{shared} LOCAL:0 CONSTANT[0]:556 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def _predict_warps(capsys, graph_path, *flags):
    code, text, err = run(capsys, "predict", "--device", "H100 SXM5", "--graph", graph_path,
                          "--data-size", "1e8", "--block-size", "256", "--json", *flags)
    return code, (json.loads(text) if code == 0 else None), err


@pytest.mark.parametrize("regs,shared", [(32, 3072), (128, 3072), (64, 41984)])
def test_listing_registers_and_shared_memory_give_predicts_occupancy(capsys, tmp_path, catalog,
                                                                    regs, shared):
    """A -res-usage listing's REG and SHARED are stored in the graph and are the occupancy's
    inputs when predict gives none; --registers and --occupancy still win."""
    from gpumodeler.core.occupancy.calculator import occupancy
    listing = tmp_path / "m.sass"
    listing.write_text(RES_USAGE.format(regs=regs, shared=shared)
                       + (SASS / "matmul_tiled.sm_90.sass").read_text())
    out = tmp_path / "m.json"
    code, text, err = run(capsys, "kernel", "import", listing, "-o", out)
    assert code == 0, err
    # sm_90's SHARED includes the block's 1 KB system reservation, which the occupancy
    # calculator adds itself: the graph keeps the kernel's own
    shared -= 1024
    assert f"{regs} registers per thread, {shared} B static shared" in text
    data = json.loads(out.read_text())
    assert data["registers_per_thread"] == regs and data["static_shared_bytes"] == shared
    code, r, err = _predict_warps(capsys, out)
    assert code == 0, err
    assert r["occupancy_warps_per_sm"] == occupancy("9.0", 256, regs, shared).active_warps_per_sm
    code, r, err = _predict_warps(capsys, out, "--registers", "255")
    assert code == 0 and r["occupancy_warps_per_sm"] == occupancy("9.0", 256, 255, 0).active_warps_per_sm
    code, r, err = _predict_warps(capsys, out, "--occupancy", "16")
    assert code == 0 and r["occupancy_warps_per_sm"] == 16


def test_listing_without_registers_still_asks_for_them(capsys, tmp_path, catalog):
    out = tmp_path / "m.json"
    code, text, err = run(capsys, "kernel", "import", SASS / "matmul_tiled.sm_90.sass", "-o", out)
    assert code == 0 and "registers per thread not in the listing" in text
    assert "registers_per_thread" not in json.loads(out.read_text())
    code, _, err = _predict_warps(capsys, out)
    assert code == 2 and "--registers" in err


def test_nvdisasm_section_registers(capsys):
    code, text, err = run(capsys, "kernel", "import", SASS / "matmul_tiled.sm_52.nvdisasm.sass")
    assert code == 0, err
    assert json.loads(text)["registers_per_thread"] == 28


def test_sweep_takes_the_graphs_registers(capsys, tmp_path, catalog):
    listing = tmp_path / "m.sass"
    listing.write_text(RES_USAGE.format(regs=128, shared=3072)
                       + (SASS / "matmul_tiled.sm_90.sass").read_text())
    out = tmp_path / "m.json"
    assert run(capsys, "kernel", "import", listing, "-o", out)[0] == 0
    code, text, err = run(capsys, "sweep", "--device", "H100 SXM5", "--graph", out,
                          "--data-size", "1e8", "--block-size", "128,256", "--format", "csv")
    assert code == 0, err
    assert len(text.strip().splitlines()) == 3


@needs_cuda
def test_cu_import_then_predict_without_registers(capsys, tmp_path, catalog):
    """A .cu import asks cuobjdump for the registers: predict --graph needs no --registers."""
    from gpumodeler.core.occupancy.calculator import occupancy
    out = tmp_path / "m.json"
    code, text, err = run(capsys, "kernel", "import", SRC / "matmul_tiled.cu", "--arch", "sm_90",
                          "-o", out)
    assert code == 0, err
    data = json.loads(out.read_text())
    regs, shared = data["registers_per_thread"], data["static_shared_bytes"]
    assert regs >= 8 and shared == 2 * 16 * 16 * 4  # two 16x16 float tiles (reported + 1 KB)
    code, r, err = _predict_warps(capsys, out)
    assert code == 0, err
    assert r["occupancy_warps_per_sm"] == occupancy("9.0", 256, regs, shared).active_warps_per_sm


#: A load predicated on a kernel parameter (P0 = param != 0), then a store (sm_90).
PARAM_GUARDED = ["LDC R4, c[0x0][0x21c]", "LDC.64 R2, c[0x0][0x210]",
                 "ISETP.NE.AND P0, PT, R4, RZ, PT", "@P0 LDG.E R5, desc[UR4][R2.64]",
                 "STG.E desc[UR4][R2.64+0x80], R5", "EXIT"]


@pytest.mark.parametrize("value,requests", [("1", 2.0), ("0", 1.0), ("0.5", 1.5)])
def test_guard_variable_set_at_import_and_in_graph(capsys, tmp_path, value, requests):
    """The parameter-guarded load is counted times guard1: --set guard1=... at import or
    in `graph` changes its bytes (load and store move the same bytes per request: both
    address one parameter's word, so the store alone is one request and the load adds
    guard1 requests)."""
    listing = tmp_path / "g.sass"
    lines = ["\tcode for sm_90", "\t\tFunction : k"]
    for k, text in enumerate(PARAM_GUARDED):
        lines += [f"        /*{k * 16:04x}*/                   {text} ;   /* 0x0000000000007802 */",
                  "                                                     /* 0x000fe20000000f00 */"]
    listing.write_text("\n".join(lines) + "\n")
    out = tmp_path / "g.json"
    code, _, err = run(capsys, "kernel", "import", listing, "-o", out, "--set", f"guard1={value}")
    assert code == 0, err
    assert json.loads(out.read_text())["variables"]["guard1"] == float(value)
    code, text, err = run(capsys, "graph", out, "--json")
    assert code == 0, err
    imported = json.loads(text)["per_warp"]["gmem_bytes"]
    code, text, err = run(capsys, "graph", out, "--json", "--set", "guard1=0")
    assert code == 0, err
    one = json.loads(text)["per_warp"]["gmem_bytes"]         # the store alone
    assert one > 0 and imported == pytest.approx(requests * one)
    code, text, err = run(capsys, "graph", out, "--json", "--set", "guard1=1")
    assert code == 0 and json.loads(text)["per_warp"]["gmem_bytes"] == pytest.approx(2 * one)


def test_a_thread_test_guard_follows_the_block_unless_set(capsys, tmp_path):
    """The halo loads of a 1-D stencil (``if (threadIdx.x < 3)``): `graph --block-size`
    gives their variable the share of the block's warps that hold a halo thread; --set in
    `graph` overrides it for one run, --set at import for good."""
    listing = SASS / "thread_guards.sm_86.sass"
    out = tmp_path / "h.json"
    code, _, err = run(capsys, "kernel", "import", listing, "--function", "halo_stencil",
                       "-o", out)
    assert code == 0, err
    assert json.loads(out.read_text())["guards"][0]["test"] == "tid.x < 3"
    shares = {}
    for block in ("256", "64", "16x16"):
        code, text, err = run(capsys, "graph", out, "--block-size", block, "--json")
        assert code == 0, err
        shares[block] = json.loads(text)["variables"]["guard1"]
    assert shares == {"256": 0.125, "64": 0.5, "16x16": 1.0}
    code, text, err = run(capsys, "graph", out, "--block-size", "16x16", "--set", "guard1=0.25",
                          "--json")
    assert code == 0 and json.loads(text)["variables"]["guard1"] == 0.25
    fixed = tmp_path / "f.json"
    code, _, err = run(capsys, "kernel", "import", listing, "--function", "halo_stencil",
                       "-o", fixed, "--set", "guard1=0.25")
    assert code == 0, err
    assert all("test" not in g for g in json.loads(fixed.read_text())["guards"])
    code, text, err = run(capsys, "graph", fixed, "--block-size", "16x16", "--json")
    assert code == 0 and json.loads(text)["variables"]["guard1"] == 0.25


def test_a_kernel_file_with_a_bad_thread_test_is_refused_in_one_line(capsys, tmp_path):
    listing = SASS / "thread_guards.sm_86.sass"
    out = tmp_path / "h.json"
    assert run(capsys, "kernel", "import", listing, "--function", "halo_stencil", "-o", out)[0] == 0
    data = json.loads(out.read_text())
    data["guards"][0]["test"] = "ctaid.x < 3"
    out.write_text(json.dumps(data))
    code, text, err = run(capsys, "graph", out, "--json")
    assert code == 2 and text == ""
    assert err.count("\n") == 1 and "test must be a thread test" in err and "Traceback" not in err


def test_sweep_over_block_sizes_sets_the_thread_tests_share_per_block(capsys, tmp_path):
    """The CLI sweep gives each block size the guard value its block decides: a row equals
    the one-block sweep with that share set by hand; a --set value stands for every row."""
    out = tmp_path / "h.json"
    assert run(capsys, "kernel", "import", SASS / "thread_guards.sm_86.sass", "--function",
               "halo_stencil", "-o", out)[0] == 0
    common = ["sweep", "--device", "RTX 3080", "--graph", out, "--data-size", "1e7",
              "--registers", "16", "--format", "csv"]

    def times(*extra):
        code, text, err = run(capsys, *common, *extra)
        assert code == 0, err
        rows = text.strip().splitlines()
        col = rows[0].split(",").index("kernel_time_s")
        return [float(r.split(",")[col]) for r in rows[1:]]

    swept = times("--block-size", "32,64,256")
    by_hand = [times("--block-size", b, "--set", f"guard1={share}")[0]
               for b, share in (("32", 1), ("64", 0.5), ("256", 0.125))]
    assert swept == pytest.approx(by_hand) and swept[0] > swept[1] > swept[2]
    fixed = times("--block-size", "32,64,256", "--set", "guard1=1")
    assert fixed == pytest.approx([times("--block-size", b, "--set", "guard1=1")[0]
                                   for b in ("32", "64", "256")])
    assert fixed[1:] > swept[1:]  # the halo loads in every warp: slower than the shares


def test_the_import_summary_names_the_guard_variables_and_who_sets_them(capsys, tmp_path):
    """A thread test's variable comes from each launch's block; a parameter's is for --set."""
    out = tmp_path / "r.json"
    code, text, err = run(capsys, "kernel", "import", SASS / "reduce.sm_90.sass", "-o", out)
    assert code == 0, err
    # blockDim.x >= 64: a block test; the tree's tid < s: a test against its halving s
    assert ("guards: guard1 (ntid.x >= 64), guard2 (tid.x < s, s = floor(block_x / 2) halved "
            "each trip of loop2), guard3 (tid.x < 32), guard4 (tid.x == 0) from each launch's "
            "block; latency table") in text
    code, text, err = run(capsys, "kernel", "import", SASS / "saxpy2.sm_90.sass", "-o", out)
    assert code == 0, err
    assert "guards: guard1 default 1 (a parameter or data decides: --set)" in text
    code, text, err = run(capsys, "kernel", "import", SASS / "vecadd.sm_90.sass", "-o", out)
    assert code == 0 and "guards:" not in text
