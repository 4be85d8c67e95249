"""Maxwell and Pascal listings through the CLI: `kernel import` names the architecture's
latency table, and `predict` evaluates every bundled kernel's sm_52 listing on the GTX 970,
GTX 980 and GTX TITAN X, its sm_60 listing on the Tesla P100 and its sm_61 listing on the
GTX 1080 and GTX 1080 Ti with no hand-set value; bad branch targets are one exit-2 line. Gajger's saxpy2 compiled for sm_52 is compared with his
942 + 24·a (the difference is explained in docs/sass-import.md)."""
import json
import re
from pathlib import Path

import pytest

from gpumodeler.cli.main import main

pytestmark = pytest.mark.usefixtures("gpumodeler_env")  # the built devices.db, a private user db

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
#: (file stem, function or None): every bundled kernel built for sm_5x/sm_6x
KERNELS = [("saxpy2", None), ("vecadd", None), ("matmul_tiled", None), ("reduce", None),
           ("sfu_heavy", None), ("fp64_axpy", None), ("datadep_loop", None),
           ("nested_loops", None), ("vector_ops", "vecadd4"), ("vector_ops", "scale")]
GPUS = {"GeForce GTX 970": "sm_52", "GeForce GTX 980": "sm_52",
        "GeForce GTX TITAN X (Maxwell)": "sm_52", "Tesla P100 SXM2": "sm_60",
        "GeForce GTX 1080": "sm_61", "GeForce GTX 1080 Ti": "sm_61"}
TABLES = {"sm_52": "maxwell-published", "sm_60": "pascal-published",
          "sm_61": "pascal-gp10x-published"}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    base = tmp_path_factory.mktemp("imported")
    cache = {}

    def get(kernel, function, arch):
        key = (kernel, function, arch)
        if key not in cache:
            out = base / f"{kernel}.{function}.{arch}.json"
            argv = ["kernel", "import", str(SASS / f"{kernel}.{arch}.sass"), "-o", str(out)]
            if function:
                argv += ["--function", function]
            assert main(argv) == 0, key
            cache[key] = out
        return cache[key]
    return get


@pytest.mark.parametrize("arch", sorted(TABLES))
def test_the_import_names_the_architectures_table(arch, imported, capsys):
    for kernel, function in KERNELS:
        graph = json.loads(imported(kernel, function, arch).read_text())
        assert graph["latency_table"] == TABLES[arch], (kernel, arch)
        assert "?" not in "".join(i["label"][:1] for i in graph["instructions"])  # no unknown opcode


@pytest.mark.parametrize("gpu", sorted(GPUS))
def test_every_kernel_predicts_with_no_value_given(gpu, imported, capsys):
    arch = GPUS[gpu]
    times = {}
    for kernel, function in KERNELS:
        graph = imported(kernel, function, arch)
        capsys.readouterr()
        code, out, err = run(capsys, "predict", "--device", gpu, "--graph", graph,
                             "--set", "loop1=64", "--data-size", "1e7", "--block-size", "256",
                             "--registers", "32", "--json")
        assert code == 0 and err == "", (gpu, kernel, function, err)
        result = json.loads(out)
        assert result["kernel_time_s"] > 0 and result["latency_bound_cycles"] > 0
        assert result["mode"] in ("latency", "throughput") and result["limiting_resource"]
        times[(kernel, function)] = result["kernel_time_s"]
    # the loops count: 64 trips of saxpy2's loop take longer than one
    graph = imported("saxpy2", None, arch)
    code, out, _ = run(capsys, "predict", "--device", gpu, "--graph", graph, "--set", "loop1=1",
                       "--data-size", "1e7", "--block-size", "256", "--registers", "32", "--json")
    assert code == 0 and json.loads(out)["kernel_time_s"] < times[("saxpy2", None)]


def test_saxpy2_sm52_latency_bound_next_to_gajgers(imported, capsys, tmp_path):
    """Gajger's hand-made graph gives 942 + 24·a (eq. 5.1, with the END node); the sm_52
    listing of the same source from CUDA 12.4's ptxas gives 642 + 31·a with the same
    latency values: one DRAM access on the path, not two (ptxas loads y[i] before the loop),
    and 13 cycles, the stall count ptxas gives the compare before the loop branch, where
    Gajger takes the 6-cycle setp latency (docs/sass-import.md)."""
    out = tmp_path / "s.json"
    for table in ("maxwell-gajger", "maxwell-published"):
        code, text, err = run(capsys, "kernel", "import", SASS / "saxpy2.sm_52.sass", "-o", out,
                              "--end-node", "--latency-table", table)
        assert code == 0, err
        bounds = []
        for a in (0, 1, 128):
            code, text, err = run(capsys, "graph", out, "--set", f"loop1={a}", "--json")
            assert code == 0, err
            bounds.append(json.loads(text)["latency_bound_cycles"])
        assert bounds == [642, 642 + 31, 642 + 31 * 128], table
    code, text, _ = run(capsys, "graph", ROOT / "resources" / "kernels" / "saxpy2-maxwell.json",
                        "--set", "a=128", "--json")
    assert code == 0 and json.loads(text)["latency_bound_cycles"] == 942 + 24 * 128


def test_branch_to_no_instruction_is_one_exit_2_line(capsys, tmp_path):
    text = (SASS / "saxpy2.sm_52.sass").read_text().replace("@!P0 BRA 0x100", "@!P0 BRA 0x104")
    path = tmp_path / "bad.sass"
    path.write_text(text)
    code, out, err = run(capsys, "kernel", "import", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert re.search(r"branch '@!P0 BRA 0x104' at 0x0128 goes to 0x0104, which is not the "
                     r"address of an instruction", err)


@pytest.mark.parametrize("name", ["saxpy2.sm_52.nvdisasm.sass", "saxpy2.sm_52.nvdisasm-nohex.sass",
                                  "matmul_tiled.sm_52.nvdisasm.sass", "reduce.sm_60.nvdisasm.sass"])
def test_nvdisasm_listings_with_braces_import(name, capsys, tmp_path):
    out = tmp_path / "n.json"
    code, text, err = run(capsys, "kernel", "import", SASS / name, "-o", out)
    assert code == 0 and err == "", err
    graph = json.loads(out.read_text())
    assert any(e["kind"] == "dual" for e in graph["edges"])
    assert graph["latency_table"] == TABLES[name.split(".")[1]]


def test_an_unknown_opcode_is_a_warning_on_stderr_with_its_edges(capsys, tmp_path):
    text = (SASS / "saxpy2.sm_52.sass").read_text().replace("FADD R0, R5, R0", "FROB R0, R5, R0")
    path = tmp_path / "u.sass"
    path.write_text(text)
    code, out, err = run(capsys, "kernel", "import", path)
    assert code == 0 and json.loads(out)["instructions"]
    (line,) = err.splitlines()
    assert line.startswith("gpumodeler kernel import: warning: unknown opcodes kept and "
                           "flagged: FROB; their result edges carry the listing's stall count")
    assert re.search(r"e\d+ FROB \d+", line)
