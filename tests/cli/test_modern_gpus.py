"""`predict --graph` on a Volta-or-later GPU: a graph without a latency table of its own
takes the GPU's (latency-published.json), the worksheet splits the pipes, and a latency no
source gives is one exit-2 line naming the edge."""
import json

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph, to_dict


@pytest.fixture
def graph_file(tmp_path):
    g = KernelGraph(name="ldg-ffma")
    g.add_instruction(Instruction.make("ld", "LDG.E"))
    for i in range(3):
        g.add_instruction(Instruction.make(f"f{i}", "FFMA"))
    g.add_edge(Edge("mem", "ld", "f0", "memory"))
    g.add_edge(Edge("d1", "f0", "f1", "dependency"))
    g.add_edge(Edge("d2", "f1", "f2", "dependency"))
    path = tmp_path / "g.json"
    path.write_text(json.dumps(to_dict(g)), encoding="utf-8")
    return path


def _predict(path, device, *extra):
    return main(["predict", "--device", device, "--graph", str(path), "--grid-size", "1000",
                 "--block-size", "256", "--occupancy", "32", "--json", *extra])


def test_a_graph_without_a_table_takes_the_gpus(graph_file, capsys):
    assert _predict(graph_file, "TITAN V") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cycles_per_warp"]["fp32"] == pytest.approx(32 * 3 / 64)
    assert out["cycles_per_warp"]["cuda_cores"] == 0
    assert _predict(graph_file, "H100 SXM5") == 0
    h100 = json.loads(capsys.readouterr().out)
    assert h100["cycles_per_warp"]["fp32"] == pytest.approx(32 * 3 / 128)
    # the explicit CUDA-core count replaces the graph's mix
    assert _predict(graph_file, "TITAN V", "--cuda-core-instructions", "6") == 0
    over = json.loads(capsys.readouterr().out)
    assert over["cycles_per_warp"]["cuda_cores"] == pytest.approx(32 * 6 / 64)
    assert over["cycles_per_warp"]["fp32"] == 0


def test_a_latency_no_source_gives_names_the_edge(graph_file, capsys):
    assert _predict(graph_file, "RTX 4090") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "edge d1, FFMA (f0) -> f1" in err and "'fp32_mad'" in err and "ada-published" in err


def test_graph_command_uses_the_devices_table_and_names_each_pipe(graph_file, capsys):
    assert main(["graph", str(graph_file), "--device", "TITAN RTX"]) == 0
    out = capsys.readouterr().out
    assert "latency table turing-published" in out
    # LDG on DRAM (434 cycles, the secondary default) + 2 dependent FFMAs of 4 cycles
    assert "= 442 cycles" in out
    for pipe in ("fp32", "int32", "fp32_int32", "fp16", "issue"):
        assert any(line.split()[:1] == [pipe] for line in out.splitlines()), pipe


def test_sweep_takes_each_devices_table(graph_file, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", "--device", "TITAN V", "--device", "A100 SXM4 80 GB", "--graph",
                 str(graph_file), "--block-size", "128,256", "--grid-size", "1000",
                 "--occupancy", "32", "-o", str(out)]) == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "321.463" in text and "574.3" in text        # 313.4630 + 8, 566.3 + 8
