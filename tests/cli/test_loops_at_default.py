"""A loop whose count the listing does not give runs one trip, its variable's default: predict
and validate say so, naming the loop and how to set it, and list it in their JSON
(`loops_at_default`); a loop a launch sets (a kernel parameter given, a formula of the block)
is not listed."""
import json
from pathlib import Path

from in_process import cli

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def test_predict_names_a_loop_left_at_one_trip(gpumodeler_env, capsys, tmp_path):
    """saxpy2's loop runs to its parameter a: not given, the loop keeps its one trip."""
    graph = tmp_path / "s.json"
    assert cli(capsys, "kernel", "import", SASS / "saxpy2.sm_75.sass", "-o", graph)[0] == 0
    launch = ["predict", "--device", "RTX 2060", "--graph", graph, "--grid-size", "1024",
              "--block-size", "256", "--registers", "16"]
    code, out, err = cli(capsys, *launch)
    assert code == 0, err
    assert "note: loop1 runs 1 trip, its default" in err and "--set loop1=N" in err
    code, out, err = cli(capsys, *launch, "--json")
    assert code == 0, err
    assert json.loads(out)["loops_at_default"] == ["loop1"]
    code, out, err = cli(capsys, *launch, "--set", "param_0x164=128", "--json")
    assert code == 0, err
    assert json.loads(out)["loops_at_default"] == [] and "runs 1 trip" not in err
    code, out, err = cli(capsys, *launch, "--set", "loop1=8", "--json")
    assert json.loads(out)["loops_at_default"] == []


def test_validate_names_a_rows_loop_left_at_one_trip(gpumodeler_env, capsys, tmp_path):
    listing = SASS / "saxpy2.sm_75.sass"
    (tmp_path / listing.name).write_text(listing.read_text(encoding="utf-8"), encoding="utf-8")
    f = tmp_path / "v.csv"
    f.write_text("kernel,device,grid,block,registers,set,measured,unit,family,source\n"
                 f"{listing.name},GeForce RTX 2060,1024,256,16,,1,ms,streaming,test\n"
                 f"{listing.name},GeForce RTX 2060,1024,256,16,param_0x164=64,1,ms,streaming,"
                 "test\n", encoding="utf-8")
    code, out, err = cli(capsys, "validate", f, "--json")
    assert code == 0, err
    first, second = json.loads(out)["rows"]
    assert first["loops_at_default"] == ["loop1"] and second["loops_at_default"] == []
    code, out, err = cli(capsys, "validate", f)
    assert code == 0, err
    assert "line 2: loop1 runs 1 trip, its default" in out and "set column (loop1=N)" in out
    assert "line 3: loop1" not in out
