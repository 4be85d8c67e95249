"""CLI cold start (speed targets): a command line imports the module of the command it names and no
other; ``--help`` imports none. The table of commands in ``cli/main.py`` must agree with what
the modules register, and the parser built lazily must parse and print as the full one does."""
from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpumodeler.cli import main as cli_main
from gpumodeler.cli.main import COMMANDS, build_parser, command_in

ROOT = Path(__file__).resolve().parents[2]
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]
PREDICT = ["predict", *GTX970, "--grid-size", "1562500", "--block-size", "256", "--occupancy",
           "64", "--latency-bound", "4014", "--issued-instructions", "538"]


def _commands(parser: argparse.ArgumentParser) -> dict:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help for a in sub._choices_actions}


def test_the_command_table_is_what_the_modules_register():
    registered = {}
    for module in cli_main._command_modules():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(f"gpumodeler.cli.{module}").register(sub)
        for name, text in _commands(parser).items():
            registered[name] = (module, text)
    assert registered == COMMANDS
    # in the order the full parser lists them (by module name, then as registered)
    assert list(_commands(build_parser())) == list(COMMANDS)


def _help(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_a_lazy_parser_prints_the_full_parsers_help(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    argv = [command, "--help"] if command else ["--help"]
    assert _help(build_parser(command_in(argv)), argv) == _help(build_parser(), argv)


@pytest.mark.parametrize("argv", [
    ["occupancy", "--cc", "5.2", "--block-size", "256", "--registers", "32", "--json"],
    PREDICT,
    ["sweep", *GTX970, "--block-size", "64:256:64", "--occupancy", "32", "--latency-bound",
     "4014", "--issued-instructions", "538", "--grid-size", "100"],
    ["gui", "--help-not-a-flag"],
    ["no-such-command"],
    [],
])
def test_a_lazy_parser_parses_as_the_full_one(argv, capsys):
    def parsed(parser):
        try:
            ns = vars(parser.parse_args(argv))
        except SystemExit as exc:
            return exc.code, capsys.readouterr().err
        return {k: repr(v) for k, v in ns.items()}
    assert parsed(build_parser(command_in(argv))) == parsed(build_parser())


def test_the_command_is_the_first_word_not_an_option():
    assert command_in(["--version"]) == "" and command_in([]) == ""
    assert command_in(["-h", "occupancy", "--cc", "5.2"]) == "occupancy"
    assert command_in(["predict", "--grid-size", "8"]) == "predict"
    assert command_in(["--", "predict"]) is None  # cannot tell: everything is built


def test_a_command_only_listed_is_never_run(monkeypatch, capsys):
    """Were a command line misread, the command would still run from the full parser."""
    monkeypatch.setattr(cli_main, "command_in", lambda argv: "graph")
    assert cli_main.main(["occupancy", "--cc", "5.2", "--block-size", "256", "--registers",
                          "32", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["active_warps_per_sm"] == 64


def _modules_after(argv: list[str]) -> list[str]:
    code = ("import sys, json\n"
            "from gpumodeler.cli.main import main\n"
            "try:\n"
            f"    main({argv!r})\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def _other_commands(loaded: list[str], own: set[str]) -> list[str]:
    return [m for m in loaded if m.startswith("gpumodeler.cli.cmd_") and m not in own]


HEAVY = ("networkx", "sqlite3", "sqlite_utils", "PySide6", "pyqtgraph", "csv", "subprocess",
         "hashlib", "gpumodeler.db")


def test_predict_with_flags_imports_only_what_it_uses():
    """predict from explicit flags: no database (sqlite3, sqlite_utils, gpumodeler.db), no
    graph library, no Qt, no other command's module nor what those need (csv, hashlib,
    subprocess)."""
    loaded = _modules_after(PREDICT)
    assert "gpumodeler.cli.cmd_predict" in loaded
    assert not _other_commands(loaded, {"gpumodeler.cli.cmd_predict"})
    assert [m for m in HEAVY if m in loaded] == []


def test_predict_help_and_top_level_help_import_no_model():
    loaded = _modules_after(["predict", "--help"])
    assert not [m for m in loaded if m.startswith("gpumodeler.core.models")]
    assert [m for m in HEAVY + ("numpy",) if m in loaded] == []
    loaded = _modules_after(["--help"])
    assert not _other_commands(loaded, set())
    assert [m for m in loaded if m.startswith("gpumodeler.core.")] == ["gpumodeler.core.errors"]


def test_occupancy_imports_no_other_command():
    """Without site-packages (so that no .pth file loads anything first): one occupancy
    answer needs neither numpy nor pathlib, nor another command's module."""
    code = ("import sys, json\n"
            "from gpumodeler.cli.main import main\n"
            "main(['occupancy', '--cc', '5.2', '--block-size', '256', '--registers', '32'])\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                       check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    assert "gpumodeler.cli.cmd_occupancy" in loaded
    assert not _other_commands(loaded, {"gpumodeler.cli.cmd_occupancy"})
    assert [m for m in HEAVY + ("numpy", "pathlib") if m in loaded] == []


def test_a_command_missing_from_the_table_still_runs(monkeypatch, capsys):
    """A new cmd_* module whose command is not in COMMANDS yet: the full parser is built."""
    monkeypatch.delitem(COMMANDS, "occupancy")
    assert cli_main.main(["occupancy", "--cc", "5.2", "--block-size", "256", "--registers",
                          "32", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["active_warps_per_sm"] == 64


def test_commands_that_only_read_databases_do_not_import_sqlite_utils(gpumodeler_env,
                                                                      devices_db):
    """Reading the device database (the shipped one and the user's) or a project goes
    through the standard library's sqlite3 (db/sqlite_read.py): sqlite-utils, about 60 ms
    of start-up, is imported by the commands that write. All of these run in one process
    and must succeed, so a read path that falls back to sqlite-utils fails here."""
    from gpumodeler.db.catalog import Catalog
    with Catalog(user_db=gpumodeler_env, shipped_db=devices_db) as catalog:
        catalog.add_device("gpu", "My GPU", values={"sms": 4})    # a user layer to read too
    example = str(ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm")
    runs = [["predict", "--device", "GTX 980", "--occupancy", "32", "--block-size", "256",
             "--grid-size", "64", "--cuda-core-instructions", "10", "--issued-instructions",
             "10", "--latency-bound", "100"],
            ["devices", "show", "My GPU", "--json"],
            ["devices", "list"],
            ["project", "predict", example, "--json"],
            ["timeline", example]]
    code = ("import sys, json, io, contextlib\n"
            "from gpumodeler.cli.main import main\n"
            "codes = []\n"
            f"for argv in {runs!r}:\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        codes.append(main(argv))\n"
            "print(json.dumps([codes, 'sqlite_utils' in sys.modules]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [[0] * len(runs), False], r.stderr
