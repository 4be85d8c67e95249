"""Temporary files of interrupted saves are removed by the next save of the same file; a
save still running in another process keeps its own (speed targets)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from gpumodeler.core.project import Project
from gpumodeler.db.atomic_files import (OutputError, create_temp, output_file, release,
                                        remove_stale_temps, write_output)
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


# -- output_file -------------------------------------------------------------------------------


def test_an_output_is_written_whole_and_replaces_the_file(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with output_file(target, mode="wb") as fh:
        fh.write(b"new " * 100_000)  # several buffers
        assert target.read_bytes() == b"old"  # not before the block ends
    assert target.read_bytes() == b"new " * 100_000
    assert os.listdir(tmp_path) == ["out.bin"]


@pytest.mark.parametrize("error", [RuntimeError("a bug"), KeyboardInterrupt()])
def test_an_interrupted_output_leaves_the_file_and_no_temporary(tmp_path, error):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(type(error)):
        with output_file(target) as fh:
            fh.write("half")
            raise error
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]


def test_a_database_output_names_the_file_when_the_disk_is_full(tmp_path):
    import sqlite3
    target = tmp_path / "out.db"
    with pytest.raises(OutputError, match=r"cannot write .*out\.db: database or disk is full"):
        with output_file(target, mode="path") as tmp:
            assert tmp.parent == tmp_path and tmp.exists()
            sqlite3.connect(tmp).close()
            open(f"{tmp}-journal", "w").close()
            raise sqlite3.OperationalError("database or disk is full")
    assert os.listdir(tmp_path) == []
    with pytest.raises(sqlite3.OperationalError, match="no such table"):  # not the disk's
        with output_file(target, mode="path"):
            raise sqlite3.OperationalError("no such table: x")
    assert os.listdir(tmp_path) == []


def test_an_output_over_an_input_is_refused_before_anything_is_written(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("input")
    os.symlink(source, tmp_path / "link.txt")
    for out in (source, tmp_path / "link.txt", tmp_path / "sub" / ".." / "in.txt"):
        with pytest.raises(OutputError, match="refusing to write .*it is the kernel file"):
            write_output(out, "x", inputs=[(str(source), "the kernel file")])
    assert source.read_text() == "input"
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "link.txt"]


def test_a_symbolic_link_output_replaces_what_it_points_to(tmp_path):
    (tmp_path / "real.txt").write_text("old")
    os.symlink("real.txt", tmp_path / "link.txt")
    write_output(tmp_path / "link.txt", "new")
    assert os.readlink(tmp_path / "link.txt") == "real.txt"
    assert (tmp_path / "real.txt").read_text() == "new"


def test_a_mode_is_checked(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of w, wb, path"):
        with output_file(tmp_path / "x", mode="a"):
            pass
