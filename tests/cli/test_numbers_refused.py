"""No wrong number goes unflagged: inputs whose results would be infinite, undefined or
impossible, launches beyond CUDA's limits and project values of the wrong type end with
exit status 2 and one line naming the input; nothing that is not finite is printed, in
text or JSON; a message names only flags that exist; the JSON says one kernel time."""
import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.core.project import SweepDef
from gpumodeler.db.project_file import load_project, save_project
from in_process import cli

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = str(ROOT / "resources" / "kernels" / "saxpy2-maxwell.json")
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]
KERNEL = ["--latency-bound", "4014", "--issued-instructions", "538"]
NON_FINITE = re.compile(r"\binf\b|\bnan\b|infinity|∞|not a number", re.IGNORECASE)

pytestmark = pytest.mark.usefixtures("gpumodeler_env")




def refused(capsys, *argv, expect: str):
    """Exit 2, one line on stderr holding ``expect``, nothing on stdout."""
    code, out, err = cli(capsys, *argv)
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert expect in err, err
    assert out == "", out
    return err


def both(capsys, *argv, expect: str):
    """Refused alike in text and JSON output."""
    for extra in ((), ("--json",)):
        refused(capsys, *argv, *extra, expect=expect)


# -- measurements and calibration ---------------------------------------------------------

def test_measure_import_refuses_values_beyond_a_float_in_text_and_json(capsys, tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("kind,name,direction,size,size_unit,grid,block,time,unit,gpu\n"
                 "transfer,x,htod,1e308,GiB,,,1,ms,G\n", encoding="utf-8")
    both(capsys, "measure", "import", f, expect="m.csv row 2, column size: a copy size of 1e308")
    f.write_text("kind,name,direction,size,size_unit,grid,block,time,unit,gpu\n"
                 "kernel,k,,,,4096,256,1e400,us,G\n", encoding="utf-8")
    both(capsys, "measure", "import", f, expect="m.csv row 2, column time: a duration of 1e400")


@pytest.mark.parametrize("sizes, times, expect", [
    ("1,2", "1e-300,2e-300", "a measured copy time of 1e-300 s is below 1 ns"),
    ("1,2", "1ms,1ms", "the measured times do not grow with size (1 B: 0.001 s, 2 B: 0.001 s): "
                       "the bandwidth would be infinite"),
    ("1e6,2e6,3e6", "1ms,1ms,1ms", "do not grow with size"),
])
def test_calibrate_link_refuses_times_that_give_no_bandwidth(capsys, sizes, times, expect):
    both(capsys, "calibrate", "link", "--sizes", sizes, "--times", times, expect=expect)


def test_calibrate_link_still_fits_real_copies(capsys):
    code, out, err = cli(capsys, "calibrate", "link", "--sizes", "4,1024,1e6,1.6e9",
                         "--times", "3.97us,4.06us,96us,0.147", "--json")
    assert code == 0, err
    fit = json.loads(out)
    assert fit["effective_bandwidth_bytes_per_s"] == pytest.approx(1.08757e10, rel=1e-5)


# -- CUDA's launch limits -----------------------------------------------------------------

def test_predict_refuses_a_grid_beyond_cudas_limit(capsys):
    both(capsys, "predict", *GTX970, *KERNEL, "--grid-size", "3000000000", "--block-size", "256",
         "--occupancy", "64", expect="grid size x = 3000000000 blocks exceeds CUDA's limit of "
                                     "2147483647 (2^31 - 1)")
    # a data size needing more blocks than that
    both(capsys, "predict", *GTX970, *KERNEL, "--data-size", str(2**31 * 256), "--block-size",
         "256", "--occupancy", "64", expect="grid size x = 2147483648 blocks")
    # compute capability 2.x: 65535 blocks
    both(capsys, "predict", *GTX970, *KERNEL, "--cc", "2.0", "--grid-size", "65536",
         "--block-size", "256", "--occupancy", "48",
         expect="grid size x = 65536 blocks exceeds CUDA's limit of 65535 for compute capability 2.0")
    both(capsys, "predict", *GTX970, *KERNEL, "--grid-size", "10x70000", "--block-size", "256",
         "--occupancy", "48", expect="grid size y = 70000 blocks exceeds CUDA's limit of 65535")
    both(capsys, "predict", *GTX970, *KERNEL, "--grid-size", "10", "--block-size", "1x1x128",
         "--occupancy", "48", expect="block size z = 128 threads exceeds CUDA's limit of 64")
    code, _, err = cli(capsys, "predict", *GTX970, *KERNEL, "--grid-size", str(2**31 - 1),
                       "--block-size", "1024", "--occupancy", "64")
    assert code == 0, err


def test_occupancy_refuses_a_block_beyond_the_limit(capsys):
    refused(capsys, "occupancy", "--cc", "8.0", "--block-size", "1100", "--registers", "32",
            expect="block size 1100 exceeds the 1024-thread limit by 76")
    refused(capsys, "occupancy", "--cc", "1.3", "--block-size", "513", "--registers", "8",
            expect="block size 513 exceeds the 512-thread limit by 1")


def test_sweep_rows_beyond_the_limit_say_why_and_give_no_time(capsys):
    code, out, err = cli(capsys, "sweep", *GTX970, *KERNEL, "--grid-size", "100,3000000000",
                         "--block-size", "256,2048", "--occupancy", "48")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 4
    fine = [r for r in rows if r["grid_size"] == "100" and r["block_size"] == "256"]
    assert len(fine) == 1 and float(fine[0]["kernel_time_s"]) > 0 and fine[0]["error"] == ""
    for r in rows:
        if r is fine[0]:
            continue
        assert r["kernel_time_s"] == "" and r["total_time_s"] == ""
        assert "exceeds" in r["error"]
        if r["block_size"] == "2048":
            assert r["error"] == "block size 2048 exceeds the 1024-thread limit by 1024"
        else:
            assert "grid size x = 3000000000 blocks" in r["error"]
    assert not NON_FINITE.search(out)


def test_a_project_sweep_row_beyond_the_limit_says_why(capsys):
    code, out, err = cli(capsys, "project", "sweep", EXAMPLE, "--variable", "data_size",
                         "--values", "1e6,1e15")
    assert code == 0, err
    small, huge = csv.DictReader(io.StringIO(out))
    assert float(small["kernel_time_s"]) > 0 and small["error"] == ""
    assert huge["kernel_time_s"] == "" and huge["total_time_s"] == ""
    assert huge["error"].startswith("grid size x = 3906250000000 blocks exceeds CUDA's limit of "
                                    "2147483647 (2^31 - 1) for compute capability 5.2")


# -- a message names a flag that exists ---------------------------------------------------

def test_a_missing_device_value_is_asked_for_by_a_flag_that_exists(capsys):
    argv = ["predict", *GTX970, "--cc", "8.0", "--graph", SAXPY2, "--set", "a=128",
            "--grid-size", "300", "--block-size", "256", "--occupancy", "32"]
    _, help_text, _ = cli(capsys, "predict", "--help")
    _, sweep_help, _ = cli(capsys, "sweep", "--help")
    err = refused(capsys, *argv, expect="int32_units_per_sm is unknown")
    asked = []
    for _ in range(5):   # give each value a message asks for, by the flag it names
        flags = re.findall(r"--[a-z0-9][a-z0-9-]+", err)
        assert len(flags) == 1, err
        assert flags[0] in help_text and flags[0] in sweep_help
        asked.append(flags[0])
        argv += [flags[0], "0" if "shared-lanes" in flags[0] else "64"]
        code, out, err = cli(capsys, *argv, "--json")
        if code == 0:
            break
        assert code == 2 and err.count("\n") == 1
    assert code == 0, err
    assert asked[0] == "--int32-units"
    assert json.loads(out)["cycles_per_warp"]["int32"] > 0
    # the same flags in a sweep
    code, out, err = cli(capsys, "sweep", *argv[1:])
    assert code == 0, err


# -- one kernel time ----------------------------------------------------------------------

@pytest.mark.parametrize("extra", [(), ("--launch-overhead", "5us"), ("--tail",)])
def test_predict_json_gives_one_kernel_time_in_seconds_and_cycles(capsys, extra):
    # 20 blocks of 256 threads on 13 SMs: under one wave, the under-filled term applies
    argv = ["predict", *GTX970, *KERNEL, "--grid-size", "20", "--block-size", "256",
            "--occupancy", "64", *extra]
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    s = json.loads(out)
    assert any(t.startswith("under-filled GPU: +") for t in s["terms"])
    clock = 1253e6
    assert s["kernel_time_s"] == pytest.approx(s["kernel_time_cycles"] / clock
                                               + s["launch_overhead_s"], rel=1e-12)
    assert s["launch_overhead_s"] == pytest.approx(
        5e-6 if extra[:1] == ("--launch-overhead",) else 0.0, rel=1e-12, abs=0)
    assert s["kernel_time_cycles"] / clock != pytest.approx(s["eq_4_1_time_s"], rel=1e-6)
    assert s["total_time_s"] == pytest.approx(s["kernel_time_s"], rel=1e-12)  # no transfers
    # the text prints the same kernel time
    code, text, err = cli(capsys, *argv)
    assert code == 0
    shown = re.search(r"^kernel\s+([\d.]+) (s|ms|µs)", text, re.M)
    factor = {"s": 1, "ms": 1e-3, "µs": 1e-6}[shown.group(2)]
    assert float(shown.group(1)) * factor == pytest.approx(s["kernel_time_s"], rel=1e-5)
    # and the sweep's row of the same launch
    code, table, err = cli(capsys, "sweep", *GTX970, *KERNEL, "--grid-size", "20",
                           "--block-size", "256", "--occupancy", "64", *extra)
    assert code == 0, err
    (row,) = csv.DictReader(io.StringIO(table))
    assert float(row["kernel_time_s"]) == pytest.approx(s["kernel_time_s"], rel=1e-12)


def test_project_predict_json_gives_the_same_relation(capsys):
    code, out, err = cli(capsys, "project", "predict", EXAMPLE, "--json", "--launch-overhead", "5us")
    assert code == 0, err
    (s,) = json.loads(out)["launches"]
    assert s["launch_overhead_s"] == pytest.approx(5e-6, rel=1e-12, abs=0)
    assert s["kernel_time_s"] == pytest.approx(s["kernel_time_cycles"] / 1253e6
                                               + s["launch_overhead_s"], rel=1e-12)


def test_an_edge_latency_that_overflows_the_bound_is_refused(capsys, tmp_path):
    doc = json.loads(Path(SAXPY2).read_text(encoding="utf-8"))
    doc["edges"][0]["latency"] = 1e308
    f = tmp_path / "k.json"
    f.write_text(json.dumps(doc), encoding="utf-8")
    both(capsys, "graph", f, expect="a latency of 1e+308 cycles is beyond any instruction's")
    both(capsys, "predict", *GTX970, "--graph", f, "--grid-size", "10", "--block-size", "256",
         "--occupancy", "8", expect="give at most 1e+09 cycles")


# -- projects -----------------------------------------------------------------------------

def _variant(tmp_path, name, change):
    project = load_project(EXAMPLE)
    change(project)
    return save_project(project, tmp_path / f"{name}.gpm")


def _gpu(**overrides):
    def change(p):
        d = p.gpus()[0]
        p.devices[d.id] = replace(d, overrides=dict(d.overrides, **overrides))
    return change


def _link(**overrides):
    def change(p):
        c = next(iter(p.connections.values()))
        p.connections[c.id] = replace(c, overrides=dict(c.overrides, **overrides))
    return change


def _launch(**values):
    def change(p):
        la = next(iter(p.launches.values()))
        p.launches[la.id] = replace(la, **values)
    return change


@pytest.mark.parametrize("name, change, expect", [
    ("sms", _gpu(sms="132"), "device GTX 970: override sms is text ('132'); expected a whole number"),
    ("engines", _gpu(copy_engines="two"), "override copy_engines is text ('two'); expected a whole number"),
    ("nan", _gpu(sm_clock_hz=float("nan")), "override sm_clock_hz is a number that is not finite (nan)"),
    ("inf", _gpu(l2_bytes=float("inf")), "override l2_bytes is a number that is not finite (inf)"),
    ("power", _gpu(board_power_w=-300.0), "override board_power_w is -300.0; expected a number >= 0"),
    ("linkkey", _link(bandwith=1e9), "unknown override 'bandwith'; valid: bandwidth_bytes_per_s"),
    ("occupancy", _launch(occupancy_override="32"), "occupancy_override is text ('32'); expected a number"),
])
def test_project_values_of_the_wrong_type_are_refused_at_load(capsys, tmp_path, name, change,
                                                              expect):
    path = _variant(tmp_path, name, change)
    for argv in (("project", "predict", path), ("project", "predict", path, "--json"),
                 ("project", "show", path), ("timeline", path), ("timeline", path, "--json"),
                 ("project", "sweep", path, "--variable", "a", "--values", "1,2")):
        err = refused(capsys, *argv, expect=expect)
        assert f"{path}: " in err
    out = tmp_path / "r.html"
    refused(capsys, "report", path, "-o", out, expect=expect)
    assert not out.exists()


def test_a_report_over_a_sweep_of_a_missing_launch_flags_it(capsys, tmp_path):
    path = _variant(tmp_path, "dangling", lambda p: p.sweeps.__setitem__(
        "s9", SweepDef("s9", "gone", "a", (1.0, 2.0), name="lost sweep")))
    out = tmp_path / "r.html"
    code, _, err = cli(capsys, "report", path, "-o", out)
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    assert "s9: lost sweep" in html
    assert "class='err'>the project has no launch &#x27;gone&#x27;" in html
    assert not NON_FINITE.search(html)
    refused(capsys, "project", "sweep", path, "--saved", "s9",
            expect="the project has no launch 'gone' (launches: launch1)")


def test_the_report_flags_a_number_that_is_not_finite():
    from gpumodeler.report.html import _num
    assert _num(1.5) == "1.5" and _num(3) == "3"
    for v in (float("inf"), float("-inf"), float("nan")):
        text = _num(v)
        assert "class='err'" in text and "refused: not a finite number" in text
        assert "∞" not in text
