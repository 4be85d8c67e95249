"""A command of main.LEFT_TO_EXIT run as the process's own command line leaves its big
results to the system at the end of the process instead of freeing them one object at a time
(speed targets: ``timeline --json`` at 10^5 steps, ``graph --json`` at 10^5 instructions); run as a function it keeps nothing."""
from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from gpumodeler.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm")
KERNEL = str(ROOT / "resources" / "kernels" / "saxpy2-maxwell.json")

pytestmark = pytest.mark.usefixtures("gpumodeler_env")

#: runs main() as the entry point does (argv from sys.argv), then says what was kept
PROBE = """
import gc, sys
sys.argv = ["gpumodeler", *sys.argv[1:]]
import gpumodeler.cli.main as m
code = m.main()
left = m._left
names = {"Project", "BuiltApplication", "Timeline", "KernelGraph"}
kept = None if left is None else \
    "+".join(sorted(names & {type(x).__name__ for x in left if x is not left})) or False
print("PROBE", code, left is None or any(x is left for x in left), kept,
      gc.get_freeze_count() > 0, file=sys.stderr)
raise SystemExit(code)
"""


def _probe(*argv: str) -> tuple[int, str, str, str]:
    """(exit status, stdout, stderr without the probe's line, the probe's line)."""
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True)
    lines = r.stderr.splitlines()
    probe = [x for x in lines if x.startswith("PROBE ")]
    assert len(probe) == 1, r.stderr
    rest = "".join(x + "\n" for x in lines if not x.startswith("PROBE "))
    return r.returncode, r.stdout, rest, probe[0]


def test_timeline_as_the_command_line_keeps_the_project_and_prints_what_a_call_prints(capsys):
    code, out, err, probe = _probe("timeline", EXAMPLE, "--json")
    assert code == 0 and err == "", err
    # the list holds itself (module teardown leaves it), the project read, the build and the
    # timeline are in it, and every object alive went to the collector's permanent generation
    assert probe == "PROBE 0 True BuiltApplication+Project+Timeline True"
    assert cli_main.main(["timeline", EXAMPLE, "--json"]) == 0
    assert capsys.readouterr().out == out


def test_timeline_text_and_bad_input_as_the_command_line(capsys):
    code, out, err, probe = _probe("timeline", EXAMPLE)
    assert code == 0 and err == "" and probe == "PROBE 0 True BuiltApplication+Project+Timeline True"
    assert cli_main.main(["timeline", EXAMPLE]) == 0
    assert capsys.readouterr().out == out
    code, out, err, probe = _probe("timeline", EXAMPLE, "--application", "nope")
    assert code == 2 and out == "" and probe == "PROBE 2 True Project True"
    assert err.count("\n") == 1 and "no application 'nope'" in err


@pytest.mark.parametrize("json_flag", [["--json"], []])
def test_graph_as_the_command_line_keeps_the_graph_and_prints_what_a_call_prints(capsys, json_flag):
    code, out, err, probe = _probe("graph", KERNEL, "--set", "a=100", *json_flag)
    assert code == 0 and err == "", err
    assert probe == "PROBE 0 True KernelGraph True"
    assert cli_main.main(["graph", KERNEL, "--set", "a=100", *json_flag]) == 0
    assert capsys.readouterr().out == out
    code, out, err, probe = _probe("graph", KERNEL + ".missing")
    assert code == 2 and out == "" and probe == "PROBE 2 True False True"
    assert err.count("\n") == 1 and "missing" in err


def test_other_commands_keep_nothing():
    code, out, err, probe = _probe("project", "show", EXAMPLE)
    assert code == 0 and out and err == ""
    assert probe == "PROBE 0 True None False"


def test_main_called_as_a_function_keeps_nothing(capsys):
    assert cli_main._left is None
    assert cli_main.main(["timeline", EXAMPLE, "--json"]) == 0
    capsys.readouterr()
    assert cli_main._left is None

    class Data:
        pass

    data = Data()
    gone = weakref.ref(data)
    cli_main.leave_to_exit(data)
    del data
    gc.collect()
    assert gone() is None
