"""What a kernel's memory accesses cost, from the addresses the SASS import followed: the
same copy read along rows and along columns, a shared-memory transpose with and without
padding, constant-bank loads (resources/kernels/src/access_patterns.cu)."""
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.models.graph_inputs import graph_counts

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
ARCHS = ("sm_75", "sm_80", "sm_90")
DEVICE = {"sm_75": "RTX 2080 Ti", "sm_80": "A100", "sm_90": "H100"}


def run_json(capsys, *argv):
    code = main([str(a) for a in argv] + ["--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def imported(tmp_path, capsys, arch, function):
    path = tmp_path / f"{function}.{arch}.json"
    code = main(["kernel", "import", str(SASS / f"access_patterns.{arch}.sass"),
                 "--function", function, "-o", str(path)])
    capsys.readouterr()
    assert code == 0
    return path


def accesses(capsys, graph_file, space):
    out = run_json(capsys, "graph", graph_file)
    return [a for a in out["memory_accesses"] if a["space"] == space], out


@pytest.mark.parametrize("arch", ARCHS)
def test_column_reads_cost_more_sectors_and_more_time_than_row_reads(tmp_path, capsys, arch):
    rows = imported(tmp_path, capsys, arch, "copy_rows")
    cols = imported(tmp_path, capsys, arch, "copy_cols")
    row_acc, row_out = accesses(capsys, rows, "global")
    col_acc, col_out = accesses(capsys, cols, "global")
    assert len(row_acc) == len(col_acc) == 2
    for r, c in zip(row_acc, col_acc):
        assert r["sectors_per_request"] == 4 and r["bytes_per_warp"] == 128
        assert c["sectors_per_request"] >= 4 * r["sectors_per_request"]
        assert "tid.x" in r["address"] and "tid.x" in c["address"]
    assert col_out["per_warp"]["gmem_bytes"] >= 4 * row_out["per_warp"]["gmem_bytes"]
    launch = ["--device", DEVICE[arch], "--grid-size", 4096, "--block-size", 1024,
              "--registers", 16]
    t_rows = run_json(capsys, "predict", "--graph", rows, *launch)["kernel_time_s"]
    t_cols = run_json(capsys, "predict", "--graph", cols, *launch)["kernel_time_s"]
    assert t_cols > t_rows


@pytest.mark.parametrize("arch", ARCHS)
def test_shared_transpose_conflicts_32_way_unpadded_and_not_with_padding(tmp_path, capsys, arch):
    plain, _ = accesses(capsys, imported(tmp_path, capsys, arch, "transpose_shared"), "shared")
    padded, _ = accesses(capsys, imported(tmp_path, capsys, arch, "transpose_padded"), "shared")
    assert sorted(a["bank_conflict_degree"] for a in plain) == [1, 32]
    assert [a["bank_conflict_degree"] for a in padded] == [1, 1]
    assert all(a["bytes_per_warp"] == 0 for a in plain + padded)  # no DRAM traffic


@pytest.mark.parametrize("arch", ARCHS)
def test_the_conflicted_transpose_costs_more_shared_memory_cycles(tmp_path, capsys, arch):
    """The worksheet's shared-memory row grows with the conflict; where it binds (A100,
    H100) the time does too. On the RTX 2080 Ti DRAM binds both versions (the worksheet
    takes the slowest resource, Volkov 2016 §3.6), and the times are equal."""
    launch = ["--device", DEVICE[arch], "--grid-size", 4096, "--block-size", 1024,
              "--registers", 16, "--shared-mem", 4224]
    out = [run_json(capsys, "predict", "--graph", imported(tmp_path, capsys, arch, f), *launch)
           for f in ("transpose_shared", "transpose_padded")]
    smem = [o["cycles_per_warp"]["shared_memory"] for o in out]
    assert smem[0] >= 16 * smem[1]
    if arch != "sm_75":
        assert out[0]["binding_resource"] == "shared_memory"
        assert out[0]["kernel_time_s"] > out[1]["kernel_time_s"]


@pytest.mark.parametrize("arch", ARCHS)
def test_constant_loads_are_not_global_memory_traffic(arch):
    g = import_kernel(SASS / f"access_patterns.{arch}.sass", "scale_const")
    constant = [i for i in g.instructions.values() if i.space == "constant"]
    global_ = [i for i in g.instructions.values() if i.space == "global"]
    assert len(global_) == 2
    assert constant or arch == "sm_75"  # Turing reads coeff[3] as an operand of MOV
    counts = graph_counts(g)
    assert counts["memory_instructions"] == 2  # one LDG, one STG: no LDC/ULDC
    from gpumodeler.core.kernel.warp_counts import access_cost, count
    assert count(g).evaluate()["gmem_bytes"] == 2 * 128
    assert all(access_cost(i)["bytes_per_warp"] == 0 for i in constant)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("points", [3, 5])
def test_a_stencil_moves_about_the_dram_bytes_of_a_copy(arch, points):
    stencil = import_kernel(SASS / f"access_patterns.{arch}.sass", f"stencil{points}")
    copy = import_kernel(SASS / f"access_patterns.{arch}.sass", "copy_rows")
    from gpumodeler.core.kernel.warp_counts import count
    s_bytes = count(stencil).evaluate()["gmem_bytes"]
    c_bytes = count(copy).evaluate()["gmem_bytes"]
    loads = [i for i in stencil.instructions.values() if i.space == "global" and i.is_load]
    assert len(loads) == points
    assert sum(i.hit_ratio > 0 for i in loads) == points - 1  # the neighbours, not the first
    assert all("served by L2" in i.address for i in loads if i.hit_ratio > 0)
    assert c_bytes <= s_bytes <= 1.15 * c_bytes
    # without the reuse the reads would move `points` times a copy's load bytes
    assert s_bytes < (points + 1) / 2 * c_bytes


def test_loads_of_different_arrays_or_rows_do_not_share_their_bytes():
    """The strided loop's sixteen unrolled loads are rows apart (a parameter's multiple),
    the copy reads one array and writes another: no reuse."""
    for function in ("strided_loop", "copy_rows", "gather"):
        g = import_kernel(SASS / "access_patterns.sm_90.sass", function)
        assert all(i.hit_ratio == 0 for i in g.instructions.values()), function
