"""Hardening of the CLI and files: inputs that ended in exit 1 ("internal error"), a blocked
window, a multi-line or 3 KB message, or -wal/-shm files next to a file only read. Each now
ends with exit status 2 and one line saying what is wrong and what is valid; the input
files stay byte for byte as they were and nothing appears next to them."""
import copy
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.build_devices import build
from gpumodeler.db.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = ROOT / "resources" / "kernels" / "saxpy2-maxwell.json"
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]
KERNEL = json.loads(SAXPY2.read_text(encoding="utf-8"))
LOAD = next(i for i, d in enumerate(KERNEL["instructions"]) if d["opcode"] == "LDG")

# A small device source: the GTX 970 has two clock records, the document's the default.
DEVICES = {
    "format": "gpumodeler-devices", "version": 1, "family": "Maxwell",
    "sources": {"gajger2017": "T. Gajger, Modeling parallel processing with GPU, MSc thesis",
                "nvidia-gtx970-spec": "NVIDIA GeForce GTX 970 product specifications"},
    "devices": [
        {"kind": "gpu", "name": "GeForce GTX 970", "aliases": ["GTX 970"], "values": {
            "compute_capability": {"value": "5.2", "unit": "text", "source": "gajger2017",
                                   "where": "Table 6.1"},
            "sms": {"value": 13, "unit": "count", "source": "gajger2017", "where": "Table 6.1"},
            "sm_clock_hz": [
                {"value": 1253000000, "unit": "Hz", "source": "gajger2017",
                 "where": "Table 6.1", "default": True},
                {"value": 1178000000, "unit": "Hz", "source": "nvidia-gtx970-spec",
                 "where": "boost clock"}]}},
        {"kind": "gpu", "name": "GeForce GTX 980", "aliases": [], "values": {
            "sms": {"value": 16, "unit": "count", "source": "gajger2017", "where": "p. 9"}}},
    ],
}


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A shipped database built from DEVICES, a private user database, and a folder
    ``inputs`` for the files the commands read."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "maxwell.json").write_text(json.dumps(DEVICES), encoding="utf-8")
    build(tmp_path / "src", tmp_path / "devices.db")
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(tmp_path / "devices.db"))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(tmp_path / "user" / "user.db"))
    (tmp_path / "inputs").mkdir()
    return tmp_path


def snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def cli(*argv) -> int:
    """The CLI in-process; argparse's usage errors end in SystemExit."""
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return exc.code


def refused(capsys, folder: Path, *argv, expect: str = ""):
    """Run the CLI in-process on files in ``folder``: exit 2, one line on stderr, no
    traceback, and ``folder`` exactly as it was (same names, same bytes)."""
    before = snapshot(folder)
    code = cli(*argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err) <= 401, err
    assert expect in err, err
    assert snapshot(folder) == before
    return err


def kernel_file(folder: Path, data=None, text=None) -> Path:
    path = folder / "kernel.json"
    path.write_text(text if text is not None else json.dumps(data), encoding="utf-8")
    return path


# -- kernel JSON -----------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["instructions", "edges", "loops"])
def test_a_null_list_in_a_kernel_file(env, capsys, key):
    data = copy.deepcopy(KERNEL)
    data[key] = None
    path = kernel_file(env / "inputs", data)
    refused(capsys, env / "inputs", "graph", path, expect=f"'{key}' must be a list")


# Every numeric key of a kernel file, with where it lives in the example.
NUMERIC_KEYS = {
    "stride": lambda d, v: d["instructions"][LOAD].__setitem__("stride", v),
    "hit_ratio": lambda d, v: d["instructions"][LOAD].__setitem__("hit_ratio", v),
    "x": lambda d, v: d["instructions"][0].__setitem__("x", v),
    "y": lambda d, v: d["instructions"][0].__setitem__("y", v),
    "width_bytes": lambda d, v: d["instructions"][LOAD].__setitem__("width_bytes", v),
    "segment_bytes": lambda d, v: d["instructions"][LOAD].__setitem__("segment_bytes", v),
    "bank_conflict_degree": lambda d, v: d["instructions"][LOAD].__setitem__(
        "bank_conflict_degree", v),
    "latency": lambda d, v: d["edges"][0].__setitem__("latency", v),
    "variables": lambda d, v: d["variables"].__setitem__("a", v),
    "version": lambda d, v: d.__setitem__("version", v),
}


@pytest.mark.parametrize("value", ["12", {"n": 1}, [1]], ids=["string", "object", "list"])
@pytest.mark.parametrize("key", sorted(NUMERIC_KEYS))
def test_a_non_number_where_a_number_belongs(env, capsys, key, value):
    data = copy.deepcopy(KERNEL)
    NUMERIC_KEYS[key](data, value)
    path = kernel_file(env / "inputs", data)
    err = refused(capsys, env / "inputs", "graph", path)
    assert key.replace("_", " ") in err or key in err or "access width" in err \
        or "transaction size" in err, err


@pytest.mark.parametrize("key", ["x", "stride", "latency", "variables"])
def test_a_number_beyond_a_float_where_a_number_belongs(env, capsys, key):
    data = copy.deepcopy(KERNEL)
    NUMERIC_KEYS[key](data, 10 ** 400)     # a valid JSON integer no float holds
    path = kernel_file(env / "inputs", data)
    err = refused(capsys, env / "inputs", "graph", path)
    assert err.count("0") < 90, err     # the 401-digit number is echoed cut to 80 characters


def test_an_expression_a_times_a_999_times(env, capsys):
    data = copy.deepcopy(KERNEL)
    data["loops"][0]["iterations"] = "a*" * 999 + "a"
    path = kernel_file(env / "inputs", data)
    err = refused(capsys, env / "inputs", "graph", path, expect="nested 1000 deep; at most 200")
    assert "a*a" in err and err.count("a*") < 50       # echoed, but cut to ~80 characters


def test_json_nested_100000_deep(env, capsys):
    path = kernel_file(env / "inputs", text="[" * 100_000 + "]" * 100_000)
    refused(capsys, env / "inputs", "graph", path, expect="nested too deeply")


def test_a_5000_digit_number(env, capsys):
    text = json.dumps(KERNEL).replace('"a": 128', '"a": ' + "9" * 5000)
    path = kernel_file(env / "inputs", text=text)
    refused(capsys, env / "inputs", "graph", path, expect="thousands of digits")


def test_an_error_does_not_echo_a_huge_expression(env, capsys):
    text = "a+" * 900 + "$"
    err = refused(capsys, env / "inputs", "sweep", *GTX970, "--grid-size", "10",
                  "--block-size", "256", "--occupancy", "8", "--latency-bound", "100",
                  "--issued-instructions", "10", "--htod", text,
                  expect="unexpected character '$'")
    assert len(err) < 300 and "…" in err


def test_a_huge_flag_value_is_not_echoed(env, capsys):
    err = refused(capsys, env / "inputs", "predict", "--sms", "x" * 3600, "--block-size", "1",
                  expect="is not a whole number")
    assert len(err) < 300


# -- device databases ------------------------------------------------------------------------

def edited_device_file(env, sql: str) -> Path:
    path = env / "inputs" / "theirs.db"
    path.write_bytes((env / "devices.db").read_bytes())
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = 1")   # aliases has a json_valid CHECK
    conn.execute(sql)
    conn.commit()
    conn.close()
    return path


def device_commands(path: Path, env: Path):
    return [["devices", "import", path], ["devices", "merge", path, "--keep-both"],
            ["devices", "diff", path, env / "devices.db"],
            ["devices", "show", "GTX 970", "--devices-db", path]]


@pytest.mark.parametrize("column, sql", [
    ("name", "UPDATE devices SET name = CAST(x'ff41' AS TEXT) WHERE name = 'GeForce GTX 980'"),
    ("unit", "UPDATE device_values SET unit = CAST(x'ff41' AS TEXT) WHERE field = 'sms'"),
    ("citation", "UPDATE sources SET citation = CAST(x'c328' AS TEXT)"),
])
def test_text_that_is_not_utf8_in_a_device_database(env, capsys, column, sql):
    path = edited_device_file(env, sql)
    for argv in device_commands(path, env):
        refused(capsys, env / "inputs", *argv,
                expect=f"{path}: the database holds text that is not valid UTF-8 in column "
                       f"{column}")


@pytest.mark.parametrize("aliases", ["[not json", '{"a": 1}', "[1, 2]"])
def test_aliases_that_are_not_a_json_list(env, capsys, aliases):
    path = edited_device_file(env, f"UPDATE devices SET aliases = '{aliases}'")
    for argv in device_commands(path, env):
        refused(capsys, env / "inputs", *argv, expect="not a JSON list of names")


@pytest.mark.parametrize("version", ["0", "-1"])
def test_a_device_file_of_meta_version_0_is_refused(env, capsys, version):
    path = edited_device_file(env, f"UPDATE meta SET value = '{version}' WHERE key = 'version'")
    for argv in device_commands(path, env):
        refused(capsys, env / "inputs", *argv,
                expect=f"unreadable schema version '{version}' (expected a whole number 1..")


def corrupt_page_2(source: Path, target: Path) -> Path:
    """A copy whose second page has a damaged cell-pointer area: SQLite's quick_check then
    reports over several lines."""
    data = bytearray(source.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for i in range(page + 8, page + 40):
        data[i] ^= 0x5A
    target.write_bytes(bytes(data))
    conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
    report = conn.execute("PRAGMA quick_check").fetchall()
    conn.close()
    assert "\n" in report[0][0]          # the case this test is about
    return target


def test_a_multi_line_integrity_report_is_one_line(env, capsys):
    path = corrupt_page_2(env / "devices.db", env / "inputs" / "damaged.db")
    refused(capsys, env / "inputs", "devices", "import", path, expect="corrupted")
    project = corrupt_page_2(EXAMPLE, env / "inputs" / "damaged.gpm")
    refused(capsys, env / "inputs", "project", "show", project, expect="corrupted")


def wal_copy(source: Path, target: Path) -> Path:
    """A copy switched to WAL journaling (as another SQLite tool may leave it)."""
    target.write_bytes(source.read_bytes())
    conn = sqlite3.connect(target)
    assert conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    conn.close()
    assert not target.with_name(target.name + "-wal").exists()
    assert not target.with_name(target.name + "-shm").exists()
    return target


def test_reading_a_wal_file_leaves_nothing_next_to_it(env, capsys):
    folder = env / "inputs"
    wal_copy(EXAMPLE, folder / "project.gpm")
    wal_copy(env / "devices.db", folder / "theirs.db")
    before = snapshot(folder)
    for argv in (["project", "show", folder / "project.gpm"],
                 ["project", "predict", folder / "project.gpm", "--json"],
                 ["devices", "import", folder / "theirs.db"],
                 ["devices", "diff", folder / "theirs.db", env / "devices.db"],
                 ["devices", "merge", folder / "theirs.db", "--keep-both"],
                 ["devices", "show", "GTX 970", "--devices-db", folder / "theirs.db"]):
        code = cli(*argv)
        _, err = capsys.readouterr()
        assert code in (0, 2) and "internal error" not in err, (argv, err)
        assert snapshot(folder) == before, argv


def test_a_binary_file_given_to_occupancy_batch(env, capsys):
    path = env / "inputs" / "launches.jsonl"
    path.write_bytes(bytes(range(256)) * 8)
    refused(capsys, env / "inputs", "occupancy", "--batch", path,
            expect="is not a text file (expected JSON Lines")


def test_sweep_grid_size_1e308(env, capsys):
    refused(capsys, env / "inputs", "sweep", *GTX970, "--grid-size", "1e308", "--block-size",
            "256", "--occupancy", "64", "--latency-bound", "4014", "--issued-instructions",
            "538", expect="whole numbers go up to 2^53")


# -- projects --------------------------------------------------------------------------------

def edited_project(env, sql: str) -> Path:
    path = env / "inputs" / "project.gpm"
    path.write_bytes(EXAMPLE.read_bytes())
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()
    return path


def test_a_project_whose_lambda_is_a_blob(env, capsys):
    path = edited_project(env, "UPDATE launches SET lam = x'0102'")
    for command in ("show", "predict", "sweep"):
        refused(capsys, env / "inputs", "project", command, path,
                expect="table launches, column lam holds binary data")


def test_a_project_with_block_size_minus_256(env, capsys):
    path = edited_project(env, "UPDATE launches SET block_size = -256")
    refused(capsys, env / "inputs", "project", "show", path,
            expect="launch launch1 (Fig. 5.24): block_size must be a whole number >= 1, got -256")


def test_gui_screenshot_empty_path_does_not_open_the_window(env):
    """In a subprocess: before the fix the interactive window opened and blocked."""
    project = env / "inputs" / "p.gpm"
    project.write_bytes(EXAMPLE.read_bytes())
    before = snapshot(env / "inputs")
    r = subprocess.run([sys.executable, "-m", "gpumodeler", "gui", str(project),
                        "--screenshot", ""], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "--screenshot needs a file name ending in .png, got an empty path" in r.stderr
    assert snapshot(env / "inputs") == before


# -- results that are not numbers ------------------------------------------------------------

def test_a_non_finite_result_is_refused_naming_it(env, capsys):
    for extra in ([], ["--json"]):
        refused(capsys, env / "inputs", "predict", *GTX970, "--grid-size", "100",
                "--block-size", "256", "--occupancy", "8", "--latency-bound", "4014",
                "--issued-instructions", "538", "--lambda", "1e-320", *extra,
                expect="the kernel time would be beyond any finite number, which is not a finite positive time")
    # the CLI's own guard (core's one rule) names the quantity when a result overflows past
    # the model's check
    from gpumodeler.cli import common
    from gpumodeler.core.errors import UnphysicalResult
    with pytest.raises(UnphysicalResult, match="kernel_time_s is not a finite number"):
        common.require_finite({"kernel_time_s": float("inf")})


# -- merge: a default chosen by the user ----------------------------------------------------

def test_a_merge_never_changes_a_default_the_user_chose(env, capsys):
    """A picks the vendor clock as the default of a shipped GPU; B's export adds B's own
    measurement, marked default. A plain merge is refused naming the conflict; only an
    explicit choice resolves it."""
    user_db = env / "user" / "user.db"
    with Catalog() as a:
        a.set_default("gtx 970", "sm_clock_hz", 1)
        assert a.get("gtx 970").value("sm_clock_hz") == 1178000000
    with Catalog(user_db=env / "b.db") as b:
        b.set_value("gtx 970", "sm_clock_hz", 1.3e9, provenance="measurement",
                    source_text="B's bench")
        b.export(["gtx 970"], env / "inputs" / "b-share.db")
    share = env / "inputs" / "b-share.db"
    mine_before = user_db.read_bytes()

    code = main(["devices", "import", str(share), "--json"])
    report = json.loads(capsys.readouterr()[0])
    assert code == 0
    [change] = report["devices"][0]["fields"]
    assert (change["field"], change["status"]) == ("sm_clock_hz", "conflict")
    assert "you chose it" in change["reason"]

    refused(capsys, env / "inputs", "devices", "merge", share,
            expect="GeForce GTX 970.sm_clock_hz")
    assert user_db.read_bytes() == mine_before
    with Catalog() as a:
        assert a.get("gtx 970").value("sm_clock_hz") == 1178000000

    assert main(["devices", "merge", str(share), "--keep-both"]) == 0
    capsys.readouterr()
    with Catalog() as a:
        clock = a.get("gtx 970").values["sm_clock_hz"]
        assert a.get("gtx 970").value("sm_clock_hz") == 1178000000      # A's choice stays
        assert 1.3e9 in [r.value for r in clock]                         # B's record added
    assert main(["devices", "merge", str(share), "--take-theirs", "sm_clock_hz"]) == 0
    capsys.readouterr()
    with Catalog() as a:
        assert a.get("gtx 970").value("sm_clock_hz") == 1.3e9


def test_an_edit_on_their_side_only_is_still_taken(env, capsys):
    """The documented rule stands where the user chose nothing: A never touched the
    clock, so B's new default is B's edit and is taken."""
    with Catalog() as a:
        a.set_value("gtx 970", "sms", 13, provenance="measurement", source_text="A")
    with Catalog(user_db=env / "b.db") as b:
        b.set_value("gtx 970", "sm_clock_hz", 1.3e9, provenance="measurement",
                    source_text="B's bench")
        b.export(["gtx 970"], env / "inputs" / "b-share.db")
    assert main(["devices", "merge", str(env / "inputs" / "b-share.db")]) == 0
    out, err = capsys.readouterr()
    assert "sm_clock_hz: took theirs" in out and err == ""
    with Catalog() as a:
        assert a.get("gtx 970").value("sm_clock_hz") == 1.3e9
