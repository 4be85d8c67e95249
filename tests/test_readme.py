"""The README's command-line examples run as written (exit 0) and print what it claims."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```console\n(.*?)```", text, flags=re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def test_readme_starts_with_the_two_commands():
    first = [l.strip() for l in (ROOT / "README.md").read_text().splitlines()[:2]]
    assert first[0].startswith("make run") and first[1].startswith("make test")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = dict(os.environ)
    e["GPUMODELER_USER_DB"] = str(tmp_path_factory.mktemp("home") / "user.db")
    e.pop("GPUMODELER_DEVICES_DB", None)  # the README uses the shipped devices.db
    return e


@pytest.fixture(scope="module")
def shared_tmp(tmp_path_factory):
    """One folder for the whole README, in order: export writes what import then reads."""
    return tmp_path_factory.mktemp("readme")


#: Shell syntax beyond words and quotes: such a command runs in bash.
SHELL_SYNTAX = re.compile(r"[|;&<>`$()]")


@pytest.mark.parametrize("command", readme_commands())
@pytest.mark.usefixtures("compiled_once")   # a .cu the CLI tests compiled is not compiled again
def test_readme_example_runs(command, env, shared_tmp, monkeypatch, capsys):
    """A plain ``gpumodeler ...`` line runs in this process, its words split as the shell
    splits them (a new interpreter per line would mostly time Python's start-up; the first
    example's test below and any line with a pipe or other shell syntax run in bash)."""
    tmp_path = shared_tmp
    shell = command.replace("/tmp/", f"{tmp_path}/")  # before the interpreter path goes in
    words = shlex.split(shell)
    if words[0] == "gpumodeler" and not SHELL_SYNTAX.search(shell):
        from gpumodeler.cli.main import main
        for key in set(os.environ) - set(env):
            monkeypatch.delenv(key)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.chdir(ROOT)
        try:
            code = main(words[1:])
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        assert code == 0, err
        assert out.strip() or "-o " in command
        return
    gm = f"{shlex.quote(sys.executable)} -m gpumodeler"
    shell = re.sub(r"(^|\| )gpumodeler ", lambda m: f"{m.group(1)}{gm} ", shell)
    r = subprocess.run(["bash", "-c", shell], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() or "-o " in command


def test_readme_numbers_are_what_the_first_example_prints(env):
    command = readme_commands()[0].replace("gpumodeler ", f"{shlex.quote(sys.executable)} -m gpumodeler ", 1)
    out = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True).stdout
    assert "146.655 ms" in out and "595.696 ms" in out
    assert "146.655 ms" in (ROOT / "README.md").read_text() and "595.696 ms" in (ROOT / "README.md").read_text()
