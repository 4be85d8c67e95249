"""Which latency table a kernel graph is evaluated with: the target GPU's own unless the user
pins one (``--table``), else the graph's; every prediction says which (text and
``latency_table`` in --json). Gajger's Table 4.1 gives Kepler and Maxwell different
CUDA-core latencies (9 and 6 cycles), so saxpy2 drawn with Maxwell's table must not keep
them on a Kepler K40."""
import json
from pathlib import Path

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.latency_tables import TABLES, choose_table

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = str(ROOT / "resources/kernels/saxpy2-maxwell.json")
K40 = ["--device", "Tesla K40", "--graph", SAXPY2, "--set", "a=128", "--data-size", "4e8",
       "--block-size", "256", "--registers", "8"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_choose_table_order():
    assert choose_table("fermi-gajger", "kepler-gajger", "maxwell-gajger") == ("fermi-gajger", "pinned")
    assert choose_table(None, "kepler-gajger", "maxwell-gajger") == ("kepler-gajger", "gpu")
    assert choose_table(None, None, "maxwell-gajger") == ("maxwell-gajger", "graph")
    assert choose_table(None, None, None) == (None, "none")
    # a graph's table of the GPU's own architecture is kept (chosen for its instruction set)
    arch = {"maxwell-gajger": "Maxwell", "maxwell-published": "Maxwell", "kepler-gajger": "Kepler"}.get
    assert choose_table(None, "maxwell-gajger", "maxwell-published", arch) == (
        "maxwell-published", "graph-same-architecture")
    assert choose_table(None, "kepler-gajger", "maxwell-gajger", arch) == ("kepler-gajger", "gpu")
    assert choose_table("kepler-gajger", "maxwell-gajger", "maxwell-published", arch)[1] == "pinned"


def test_predict_uses_the_gpus_table_and_says_so(capsys):
    code, out, _ = run(capsys, "predict", *K40, "--json")
    assert code == 0
    r = json.loads(out)
    assert r["latency_table"] == "kepler-gajger" and r["latency_table_origin"] == "the GPU's"
    code, out, _ = run(capsys, "predict", *K40, "--table", "maxwell-gajger", "--json")
    pinned = json.loads(out)
    assert pinned["latency_table"] == "maxwell-gajger" and pinned["latency_table_origin"] == "--table"
    # Gajger eq. 5.1 with Maxwell's table: 942 + 24·a; Kepler's CUDA-core latency is 9, not 6
    assert pinned["latency_bound_cycles"] == 942 + 24 * 128
    kepler, maxwell = TABLES["kepler-gajger"], TABLES["maxwell-gajger"]
    assert kepler.instruction_cycles["fp32_mad"] > maxwell.instruction_cycles["fp32_mad"]
    assert r["latency_bound_cycles"] > pinned["latency_bound_cycles"]
    code, out, _ = run(capsys, "predict", *K40)
    assert "latency table kepler-gajger (the GPU's)" in out


def test_model_all_and_graph_say_the_table(capsys):
    code, out, _ = run(capsys, "predict", *K40, "--model", "all", "--json")
    assert code == 0 and json.loads(out)["latency_table"] == "kepler-gajger"
    code, out, _ = run(capsys, "predict", *K40, "--model", "all")
    assert "latency table kepler-gajger (the GPU's)" in out
    code, out, _ = run(capsys, "graph", SAXPY2, "--set", "a=128", "--device", "Tesla K40", "--json")
    assert json.loads(out)["latency_table"] == "kepler-gajger"
    code, out, _ = run(capsys, "graph", SAXPY2, "--set", "a=128", "--json")
    g = json.loads(out)
    assert g["latency_table"] == "maxwell-gajger" and g["latency_table_origin"] == "the graph's own"


def test_sweep_uses_each_devices_table(capsys):
    base = ["sweep", "--graph", SAXPY2, "--set", "a=128", "--block-size", "256",
            "--occupancy", "64", "--grid-size", "1000", "--format", "json"]
    code, out, _ = run(capsys, *base, "--device", "Tesla K40")
    own = json.loads(out)
    code, out, _ = run(capsys, *base, "--device", "Tesla K40", "--table", "maxwell-gajger")
    pinned = json.loads(out)
    assert own[0]["latency_bound"] > pinned[0]["latency_bound"] == 942 + 24 * 128


def test_kepler_branch_latencies_are_labelled_assumptions():
    """Table 4.1 has N/A for Kepler's branches; Gajger's §4.4.2 rule (taken = 2 × CUDA-core
    latency; not taken 28/32 of it, as on Fermi) reproduces his Maxwell 12/10 and Fermi 32/28
    and gives Kepler 18/15, noted as an assumption."""
    rule = lambda add: (2 * add, (2 * add * 28) // 32)
    for key in ("fermi-gajger", "maxwell-gajger", "kepler-gajger"):
        t = TABLES[key]
        assert (t.branch_taken_cycles, t.branch_not_taken_cycles) == rule(t.instruction_cycles["fp32_add"])
    assert any(n.startswith("ASSUMPTION") for n in TABLES["kepler-gajger"].notes)
