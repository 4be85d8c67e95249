"""Temporary files of interrupted saves are removed by the next save of the same file; a
save still running in another process keeps its own (speed targets)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from gpumodeler.core.project import Project
from gpumodeler.db.atomic_files import create_temp, release, remove_stale_temps
from gpumodeler.db.project_file import load_project, save_project

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks (flock)")

SAVER = """
import sys, time
from pathlib import Path
from gpumodeler.db.atomic_files import create_temp
tmp, fd = create_temp(Path(sys.argv[1]))
print(tmp, flush=True)
time.sleep(float(sys.argv[2]))
"""


def _start_saver(target, seconds):
    """A process in the middle of a save of ``target``: its temporary file, locked."""
    proc = subprocess.Popen([sys.executable, "-c", SAVER, str(target), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    tmp = proc.stdout.readline().strip()
    assert tmp, "the saver did not start"
    return proc, tmp


def test_the_next_save_removes_what_a_killed_save_left(tmp_path):
    target = tmp_path / "work.gpm"
    save_project(Project("first"), target)
    proc, tmp = _start_saver(target, 60)
    proc.send_signal(signal.SIGKILL)  # killed before its rename: the finally never ran
    proc.wait()
    proc.stdout.close()
    open(tmp + "-journal", "w").close()
    other = tmp_path / ".other.gpm.0123abcd.tmp"  # another file's temporary: not ours
    other.write_text("x")
    assert os.path.exists(tmp)
    save_project(Project("second"), target)
    assert sorted(os.listdir(tmp_path)) == [".other.gpm.0123abcd.tmp", "work.gpm"]
    assert load_project(target).name == "second"


def test_a_save_running_elsewhere_keeps_its_temporary_file(tmp_path):
    target = tmp_path / "work.gpm"
    proc, tmp = _start_saver(target, 30)
    try:
        save_project(Project("mine"), target)
        assert os.path.exists(tmp)
        assert remove_stale_temps(target) == []
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert [p.name for p in remove_stale_temps(target)] == [os.path.basename(tmp)]
    assert os.listdir(tmp_path) == ["work.gpm"]


def test_a_temporary_file_is_locked_until_released(tmp_path):
    target = tmp_path / "t.gpm"
    tmp, fd = create_temp(target)
    assert tmp.name.startswith(".t.gpm.") and tmp.name.endswith(".tmp")
    # our own lock: another open file description cannot take it either
    assert remove_stale_temps(target) == []
    release(fd)
    assert remove_stale_temps(target) == [tmp] and not tmp.exists()
