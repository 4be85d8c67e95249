"""`predict` on the public set's matrix products (their sm_86 listing, imported): the
load/store units bind on GA10x (16 a SM, 2 cycles a warp instruction) and the times land
near nvbench's (resources/validation/nvbench-pmpp.csv cites each); `--ldst-units` overrides
the count; the device database has it for Volta, Turing, GA10x and (assumed) Ada."""
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from in_process import cli_json

MATMUL = (Path(__file__).resolve().parents[2] / "resources" / "validation" / "kernels"
          / "nvbench" / "matmul.sm_86.sass")
#: (device, n, measured s) of nvbench's cold GPU times, 16 x 16 blocks
NAIVE = [("GeForce RTX 3080", 1024, 1.0630686e-3), ("GeForce RTX 3060", 2048, 19.929049e-3),
         ("GeForce RTX 3060 Ti", 2048, 14.906097e-3)]
TILED = [("GeForce RTX 3080", 1024, 1.2094992e-3), ("GeForce RTX 3060", 2048, 22.501109e-3),
         ("GeForce RTX 3060 Ti", 2048, 16.724412e-3)]


@pytest.fixture
def imported(gpumodeler_env, tmp_path, capsys):
    def one(function, listing=MATMUL):
        path = tmp_path / f"{function}.{listing.stem}.json"
        assert main(["kernel", "import", str(listing), "--function", function, "-o", str(path)]) == 0
        capsys.readouterr()
        return path
    return one


def run(capsys, graph, device, n, *sets, extra=()):
    args = ["predict", "--graph", graph, "--device", device, "--grid-size", f"{n // 16}x{n // 16}",
            "--block-size", "16x16", *extra]
    for s in sets:
        args += ["--set", s]
    return cli_json(capsys, *args)


@pytest.mark.parametrize("device, n, measured", NAIVE, ids=[d for d, *_ in NAIVE])
def test_the_naive_product_is_two_load_instructions_a_step(imported, capsys, device, n, measured):
    out = run(capsys, imported("matmul_naive"), device, n, f"loop1={n}", "guard5=0")
    assert out["binding_resource"] == "lsu"
    assert out["cycles_per_warp"]["lsu"] == pytest.approx(2 * 2 * n, rel=0.01)
    assert 0.9 < out["kernel_time_s"] / measured < 1.25


@pytest.mark.parametrize("device, n, measured", TILED, ids=[d for d, *_ in TILED])
def test_the_tiled_product_is_36_instructions_a_phase(imported, capsys, device, n, measured):
    # the inner loop's count and its remainder's guards come from the 16x16 block
    out = run(capsys, imported("matmul_tiled"), device, n, f"loop1={n // 16}",
              extra=["--shared-mem", "2048"])
    assert out["binding_resource"] == "lsu"
    assert out["cycles_per_warp"]["lsu"] == pytest.approx(72 * n // 16, rel=0.01)
    assert 0.9 < out["kernel_time_s"] / measured < 1.25


def test_the_flag_sets_the_units(imported, capsys):
    graph = imported("matmul_naive")
    out = run(capsys, graph, "GeForce RTX 3080", 1024, "loop1=1024", "guard5=0",
              extra=["--ldst-units", "32"])
    assert out["cycles_per_warp"]["lsu"] == pytest.approx(2 * 1024, rel=0.01)
    assert out["binding_resource"] == "l1"       # then the lines: 3 a step
    with pytest.raises(SystemExit) as exc:
        main(["predict", "--graph", str(graph), "--device", "RTX 3080", "--grid-size", "4",
              "--block-size", "256", "--ldst-units", "many"])
    assert exc.value.code == 2
    assert "--ldst-units: 'many' is not a whole number" in capsys.readouterr().err


@pytest.mark.parametrize("name, units, provenance", [
    ("Tesla V100 SXM2 16 GB", 32, "secondary"), ("NVIDIA TITAN V", 32, "secondary"),
    ("Tesla T4", 16, "secondary"), ("GeForce RTX 2060", 16, "secondary"),
    ("GeForce RTX 3080", 16, "secondary"), ("NVIDIA A10", 16, "secondary"),
    ("GeForce RTX 4090", 16, "document"),
    ("A100 SXM4 40 GB", None, None), ("H100 SXM5 80 GB", None, None),
])
def test_the_database_has_the_units_with_their_grade(catalog, name, units, provenance):
    device = catalog.get(name)
    (record,) = device.values["ldst_units_per_sm"] if units else [None]
    assert device.to_gpu_spec().ldst_units_per_sm == units
    if units:
        assert record.provenance == provenance
        assert record.source.startswith("assumed-") == (provenance == "document")


def test_on_turing_a_line_takes_the_data_stage_two_cycles(imported, capsys):
    """Turing's L1 data array gives 64 bytes a clock (Jia et al.'s T4 figure, restated): the
    naive product's three lines a step take 6 cycles, above its loads' 4 at the units, where
    nvbench's RTX 2060 runs take about 6 (n = 2048: 31.8 ms)."""
    graph = imported("matmul_naive", MATMUL.with_name("matmul.sm_75.sass"))
    out = run(capsys, graph, "GeForce RTX 2060", 2048, "loop1=2048", "guard5=0")
    assert out["binding_resource"] == "l1"
    assert out["cycles_per_warp"]["l1"] == pytest.approx(2 * 3 * 2048, rel=0.01)
    assert out["cycles_per_warp"]["lsu"] == pytest.approx(2 * 2 * 2048, rel=0.01)
    assert 0.9 < out["kernel_time_s"] / 31.828112e-3 < 1.25
