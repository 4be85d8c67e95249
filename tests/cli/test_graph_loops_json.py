"""`graph --json` lists each loop with its name, which says what its variable counts, its
iterations and their value at the given variables (core.kernel.sass.build: an unrolled loop's
variable is the source loop's trip count)."""
from pathlib import Path

from gpumodeler.cli.main import main
from in_process import cli_json

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def test_graph_json_gives_each_loops_note_and_trips(capsys, tmp_path):
    path = tmp_path / "row_dot.json"
    assert main(["kernel", "import", str(SASS / "unroll_nested.sm_52.sass"), "-o",
                 str(path)]) == 0
    capsys.readouterr()
    n = 1003
    out = cli_json(capsys, "graph", path, "--set", f"loop1={n}")
    loops = {lp["id"]: lp for lp in out["loops"]}
    assert [loops[k]["trips"] for k in ("loop1", "loop2", "loop3")] == [n // 16, n % 16 // 4 % 2, n % 4]
    assert all("loop1 = the source loop's trip count" in lp["name"] for lp in loops.values())
    assert out["variables"]["loop1"] == n and "loop3" not in out["variables"]


def test_graph_json_says_a_loop_counts_trips_as_compiled(capsys, tmp_path):
    path = tmp_path / "window_rows.json"
    assert main(["kernel", "import", str(SASS / "unroll_inner.sm_75.sass"), "-o",
                 str(path)]) == 0
    capsys.readouterr()
    out = cli_json(capsys, "graph", path, "--set", "loop2=3")
    (inner,) = [lp for lp in out["loops"] if "counts trips as compiled" in lp["name"]]
    assert inner["id"] == "loop2" and inner["trips"] == 3
