"""``gpumodeler --verbose COMMAND``: the log on stderr at DEBUG and the traceback of an
error; exit statuses as without it; without it, an error is one line and never a traceback."""
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from gpumodeler.cli import cmd_occupancy
from gpumodeler.cli.main import main
from gpumodeler.cli.verbose import requested

ROOT = Path(__file__).resolve().parents[2]
OCCUPANCY = ["occupancy", "--cc", "8.6", "--block-size", "256", "--registers", "32"]


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def a_bug(monkeypatch):
    """The occupancy command hits a bug (an exception no input explains)."""
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug deep inside")
    monkeypatch.setattr(cmd_occupancy, "one_launch", broken)


def test_a_command_runs_the_same_with_the_log_on_stderr(capsys):
    code, out, err = run(capsys, *OCCUPANCY)
    assert code == 0 and err == ""
    v_code, v_out, v_err = run(capsys, "--verbose", *OCCUPANCY)
    assert (v_code, v_out) == (code, out)
    assert "DEBUG" in v_err and "command line: gpumodeler --verbose occupancy --cc 8.6" in v_err
    assert "finished in" in v_err and "Traceback" not in v_err


def test_an_unexpected_error_is_one_line_and_a_traceback_only_with_verbose(capsys, a_bug):
    code, out, err = run(capsys, *OCCUPANCY)
    assert code == 1 and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "internal error (ZeroDivisionError: a bug deep inside)" in err
    assert "gpumodeler --verbose occupancy" in err  # how to see more
    v_code, v_out, v_err = run(capsys, "--verbose", *OCCUPANCY)
    assert (v_code, v_out) == (1, "")
    assert "Traceback (most recent call last)" in v_err
    assert "in broken" in v_err and "ZeroDivisionError: a bug deep inside" in v_err
    assert "ERROR gpumodeler.cli: gpumodeler occupancy failed unexpectedly" in v_err
    assert err.rstrip() in v_err.splitlines()  # the same line, and the log around it


def test_bad_input_keeps_exit_2_and_shows_where_only_with_verbose(capsys):
    bad = ["occupancy", "--cc", "8.6", "--block-size", "256"]  # no --registers
    code, out, err = run(capsys, *bad)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    v_code, _, v_err = run(capsys, "--verbose", *bad)
    assert v_code == 2
    assert "Traceback" in v_err and "refused the input" in v_err
    assert err.rstrip() in v_err.splitlines()


def test_the_log_handler_is_removed_after_the_command(capsys, a_bug):
    logger = logging.getLogger("gpumodeler")
    handlers, level = list(logger.handlers), logger.level
    run(capsys, "--verbose", *OCCUPANCY)
    assert (logger.handlers, logger.level) == (handlers, level)
    code, _, err = run(capsys, *OCCUPANCY)
    assert code == 1 and "Traceback" not in err and "DEBUG" not in err


@pytest.mark.parametrize("argv, verbose", [
    (["--verbose", "predict"], True),
    (["--verbose"], True),
    (["predict", "--verbose"], False),  # after the command: the command's words
    (["--", "--verbose"], False),
    ([], False),
])
def test_verbose_is_a_top_level_option(argv, verbose):
    assert requested(argv) is verbose


def test_verbose_after_the_command_is_refused_with_exit_2(capsys):
    code, _, err = run(capsys, *OCCUPANCY, "--verbose")
    assert code == 2 and "unrecognized arguments: --verbose" in err


def test_the_installed_command_takes_verbose():
    r = subprocess.run([sys.executable, "-m", "gpumodeler", "--verbose", *OCCUPANCY[:1], "--cc", "8.6",
                        "--block-size", "256", "--registers", "32", "--json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.lstrip().startswith("{") and "DEBUG" in r.stderr
