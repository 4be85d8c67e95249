"""Regressions of what fuzzing every command found (tests/cli/test_fuzz_commands.py)."""
import os

import pytest

from gpumodeler.cli.main import build_parser, main


def test_a_double_dash_as_an_option_value_is_that_value(capsys):
    """Python 3.11's argparse turned ``--user-db=--`` into an empty list, and the command
    died with a TypeError (exit 1): the value is the text "--" like any other."""
    assert build_parser().parse_args(["devices", "show", "x", "--user-db=--"]).user_db == "--"
    assert build_parser().parse_args(["devices", "list", "--devices-db=--"]).devices_db == "--"


@pytest.mark.usefixtures("gpumodeler_env")
@pytest.mark.parametrize("argv", [["devices", "show", "GTX 970", "--user-db=--"],
                                  ["devices", "search", "970", "--devices-db=--"],
                                  ["predict", "--sms=--", "--device", "GTX 970"]])
def test_a_double_dash_value_ends_in_0_or_2(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses the value
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 2), err
    assert "internal error" not in err


def test_merging_the_same_file_twice_changes_nothing_the_second_time(tmp_path, monkeypatch,
                                                                    capsys):
    """Their source cited differently from mine was renamed to a fresh key at every merge,
    so a file merged before came back as conflicts on every record citing it, and merging
    it again with --keep-both added the same records a second time."""
    import json

    from gpumodeler.db.build_devices import build
    from test_hardening import DEVICES
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "maxwell.json").write_text(json.dumps(DEVICES), encoding="utf-8")
    build(tmp_path / "src", tmp_path / "theirs.db")
    other = json.loads(json.dumps(DEVICES))
    other["sources"]["gajger2017"] = "another citation of the thesis"
    (tmp_path / "src2").mkdir()
    (tmp_path / "src2" / "maxwell.json").write_text(json.dumps(other), encoding="utf-8")
    build(tmp_path / "src2", tmp_path / "shipped.db")
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(tmp_path / "shipped.db"))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(tmp_path / "user" / "user.db"))
    theirs = str(tmp_path / "theirs.db")
    assert main(["devices", "merge", theirs, "--keep-both"]) == 0
    capsys.readouterr()
    assert main(["devices", "import", theirs, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["conflicting"] == 0, report
    # theirs are all held here already: nothing to take (each field "keep mine")
    assert {f["status"] for d in report["devices"] for f in d["fields"]} <= {"mine"}, report


def test_a_report_named_with_bytes_that_are_not_utf8_is_written(tmp_path, gpumodeler_env):
    """A file name that is not UTF-8 reaches Python as lone surrogates: the report quotes
    its command line, and encoding it failed (internal error, exit 1); so did printing
    "wrote NAME" to a standard output with strict errors (a UTF-8 locale)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    example = root / "resources" / "examples" / "saxpy2-gtx970.gpm"
    out = os.fsencode(tmp_path) + b"/r\xff.html"
    done = subprocess.run(
        [sys.executable, "-m", "gpumodeler", "report", str(example), "--output", out],
        env={**os.environ, "PYTHONPATH": str(root), "PYTHONIOENCODING": "utf-8"},
        capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"wrote " + out + b"\n"
    assert "r?.html" in Path(os.fsdecode(out)).read_text(encoding="utf-8")


@pytest.mark.parametrize("table, column", [("calibrations", "measurements_sha256"),
                                           ("declined_conflicts", "theirs_digest")])
def test_a_user_database_whose_later_table_lost_a_column_is_refused(gpumodeler_env, capsys,
                                                                    table, column):
    """A damaged schema text (a byte of a column name flipped) passes SQLite's checks;
    reading calibrations then failed with "no such column" as an internal error."""
    import sqlite3

    from gpumodeler.db.catalog import Catalog
    with Catalog(user_db=gpumodeler_env) as catalog:
        catalog.set_value("GeForce GTX 970", "sms", 12, source_text="mine")
    conn = sqlite3.connect(gpumodeler_env)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = ?",
                  [column, column[:-1] + "x", table])
    conn.commit()
    conn.close()
    before = gpumodeler_env.read_bytes()
    for argv in (["calibrate", "list"], ["devices", "list"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "damaged" in err and column in err, err
    assert gpumodeler_env.read_bytes() == before


ENDLESS = [["measure", "import", "/dev/zero"], ["calibrate", "link", "--csv", "/dev/zero"],
           ["calibrate", "lambda", "--csv", "/dev/zero"], ["graph", "/dev/zero"],
           ["occupancy", "--batch", "/dev/zero"],
           ["calibrate", "link", "--measurements", "/dev/zero", "--gpu", "GTX 970"],
           ["calibrate", "kernel", "--measurements", "/dev/zero", "--kernel", "k",
            "--device", "GTX 970"],
           ["predict", "--profile", "/dev/zero", "--kernel", "k", "--device", "GTX 970"],
           ["devices", "merge", "--resolutions", "/dev/zero", "theirs.db"]]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.usefixtures("gpumodeler_env")
@pytest.mark.parametrize("argv", ENDLESS, ids=lambda a: " ".join(a[:2]))
def test_an_endless_input_is_refused_not_read_until_memory_is_full(argv, capsys, monkeypatch,
                                                                   devices_db):
    """/dev/zero (or any file far larger than an input can be) was read whole, or line by
    line with no end of line: the command never ended. Now at most a bound is read (set
    small here so the test is quick) and the command says the file is no such input."""
    from gpumodeler.cli import common, occupancy_batch
    from gpumodeler.core.measurements import from_json
    monkeypatch.setattr(common, "MAX_INPUT_BYTES", 2**20)
    monkeypatch.setattr(from_json, "MAX_FILE_BYTES", 2**20)
    monkeypatch.setattr(occupancy_batch, "MAX_LINE_CHARS", 2**16)
    argv = [str(devices_db) if a == "theirs.db" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/dev/zero" in err or "line 1" in err, err
    assert "MiB" in err or "Mi characters" in err, err


@pytest.mark.usefixtures("gpumodeler_env")
def test_kernel_import_refuses_a_latency_table_no_database_has(tmp_path, capsys):
    """--latency-table took any key: a typo made a graph every later command refused."""
    from pathlib import Path
    listing = (Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"
               / "vecadd.sm_80.sass")
    out = tmp_path / "k.json"
    assert main(["kernel", "import", str(listing), "--latency-table", "amper-published",
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'amper-published'" in err and "ampere-published" in err
    assert not out.exists()
    assert main(["kernel", "import", str(listing), "--latency-table", "ampere-published",
                 "-o", str(out)]) == 0
