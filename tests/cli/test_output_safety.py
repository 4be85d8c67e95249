"""Every command that writes a file: never over one of its inputs (by the same path, ``./``,
a hard link or a symbolic link), atomically (a previous file stays whole and no temporary
file is left, whatever fails), and every file-system failure is exit 2 with one line
naming the file and the reason."""
from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db import atomic_files

ROOT = Path(__file__).resolve().parents[2]
SAXPY2_PROJECT = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
H100_PROJECT = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"
SAXPY2_KERNEL = ROOT / "resources" / "kernels" / "saxpy2-maxwell.json"
SASS = ROOT / "resources" / "kernels" / "sass" / "saxpy2.sm_90.sass"
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78", "--cc", "5.2"]

pytestmark = [pytest.mark.usefixtures("gpumodeler_env"),
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and locks")]

# Each command that writes a file: (the input it reads, its name in the folder, the command
# line with INPUT and OUTPUT in place of the two file names).
COMMANDS = {
    "report": (SAXPY2_PROJECT, "p.gpm", ["report", "INPUT", "-o", "OUTPUT"]),
    "timeline --svg": (H100_PROJECT, "app.gpm", ["timeline", "INPUT", "--svg", "OUTPUT"]),
    "project sweep": (SAXPY2_PROJECT, "p.gpm", ["project", "sweep", "INPUT", "--variable",
                                                 "block_size", "--values", "64,128", "-o",
                                                 "OUTPUT"]),
    "sweep --graph": (SAXPY2_KERNEL, "k.json", ["sweep", *GTX970, "--graph", "INPUT",
                                                "--block-size", "128,256", "--data-size", "1e6",
                                                "--registers", "32", "-o", "OUTPUT"]),
    "kernel import": (SASS, "s.sass", ["kernel", "import", "INPUT", "-o", "OUTPUT"]),
    "gui --screenshot": (SAXPY2_PROJECT, "p.png", ["gui", "INPUT", "--screenshot", "OUTPUT"]),
}
#: the commands whose output is cheap to make (the GUI's screenshot renders every tab)
WRITERS = [name for name in COMMANDS if name != "gui --screenshot"]


def argv_for(name: str, inp: str, out: str) -> list[str]:
    return [inp if a == "INPUT" else out if a == "OUTPUT" else a for a in COMMANDS[name][2]]


def cli(*argv) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        return exc.code


def snapshot(folder: Path) -> dict:
    """Every name in ``folder`` with its bytes (a link: where it points, and the bytes)."""
    out = {}
    for p in sorted(folder.iterdir()):
        link = os.readlink(p) if p.is_symlink() else None
        out[p.name] = (link, p.read_bytes() if p.is_file() else None)
    return out


def one_line_exit_2(capsys, code) -> str:
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """An empty working folder, the current one."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


# -- an output that is an input ---------------------------------------------------------------

def _alias(folder: Path, name: str, how: str) -> str:
    if how == "same path":
        return name
    if how == "./name":
        return f"./{name}"
    if how == "absolute":
        return str(folder / name)
    alias = f"{how.replace(' ', '-')}-{name}"
    if how == "hard link":
        os.link(name, alias)
    else:
        os.symlink(name, alias)
    return alias


@pytest.mark.parametrize("how", ["same path", "./name", "absolute", "hard link", "symlink"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_output_that_is_the_input_is_refused(folder, capsys, command, how):
    source, name, _ = COMMANDS[command]
    shutil.copyfile(source, name)
    out = _alias(folder, name, how)
    before = snapshot(folder)
    err = one_line_exit_2(capsys, cli(*argv_for(command, name, out)))
    assert f"refusing to write {out}:" in err and name in err, err
    assert snapshot(folder) == before
    assert Path(name).read_bytes() == source.read_bytes()


@pytest.mark.parametrize("command", WRITERS)
def test_the_same_commands_write_another_file(folder, capsys, command):
    source, name, _ = COMMANDS[command]
    shutil.copyfile(source, name)
    assert cli(*argv_for(command, name, "out.file")) == 0, capsys.readouterr().err
    assert sorted(os.listdir(folder)) == sorted([name, "out.file"])
    assert Path("out.file").stat().st_size > 0


@pytest.mark.parametrize("command", WRITERS)
def test_an_output_over_the_device_database_is_refused(folder, capsys, command, gpumodeler_env):
    source, name, _ = COMMANDS[command]
    shutil.copyfile(source, name)
    user_db = gpumodeler_env
    user_db.parent.mkdir(parents=True, exist_ok=True)
    _user_database(user_db)
    kept = user_db.read_bytes()
    os.link(user_db, "devices-link.db")
    err = one_line_exit_2(capsys, cli(*argv_for(command, name, "devices-link.db")))
    assert "your device database" in err and str(user_db) in err
    assert user_db.read_bytes() == kept


def _user_database(path: Path) -> None:
    from gpumodeler.db.catalog import Catalog
    catalog = Catalog(user_db=path)
    try:
        catalog.add_device("gpu", "My GPU", values={"sms": 4})
    finally:
        catalog.close()


@pytest.mark.parametrize("how", ["same path", "./name", "hard link", "symlink"])
def test_devices_export_never_replaces_the_database_it_reads(folder, capsys, how):
    _user_database(folder / "mine.db")
    out = _alias(folder, "mine.db", how)
    before = snapshot(folder)
    err = one_line_exit_2(capsys, cli("devices", "export", "My GPU", "-o", out, "--force",
                                      "--user-db", "mine.db"))
    assert f"refusing to write {out}:" in err and "mine.db" in err, err
    assert snapshot(folder) == before


# -- a full disk, a long name, a read-only folder -----------------------------------------------

def _in(folder: Path, fd: int) -> bool:
    """Whether descriptor ``fd`` is a file in ``folder`` (not a pipe to a child process)."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}")).parent == folder
    except OSError:  # no /proc: every file but the standard streams
        return fd > 2


def _failing_writes(monkeypatch, folder: Path, error):
    """Every os.write to a file in ``folder`` raises ``error`` (an exception instance)."""
    write = os.write

    def failing(fd, data):
        if _in(folder, fd):
            raise error
        return write(fd, data)
    monkeypatch.setattr(os, "write", failing)


def _failing_syncs(monkeypatch, folder: Path, error):
    """Every os.fsync raises ``error``: delayed allocation finds the disk full at the sync."""
    def failing(fd):
        raise error
    monkeypatch.setattr(os, "fsync", failing)


FULL = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("fail, error, code", [
    (_failing_writes, FULL, 2), (_failing_syncs, FULL, 2), (_failing_writes, KeyboardInterrupt(), 130),
], ids=["a full disk", "a full disk at the sync", "Ctrl+C"])
@pytest.mark.parametrize("command", WRITERS)
def test_a_failed_write_keeps_the_previous_file(folder, capsys, monkeypatch, command, fail,
                                                 error, code):
    source, name, _ = COMMANDS[command]
    shutil.copyfile(source, name)
    Path("out.file").write_text("previous\n")
    before = snapshot(folder)
    fail(monkeypatch, folder, error)
    if code == 2:
        err = one_line_exit_2(capsys, cli(*argv_for(command, name, "out.file")))
        assert "cannot write out.file: No space left on device" in err, err
    else:
        assert cli(*argv_for(command, name, "out.file")) == code
    assert snapshot(folder) == before


def test_a_full_disk_during_a_device_export(folder, capsys, monkeypatch):
    """SQLite's own "database or disk is full" (it writes through its own calls, not
    Python's) while the export fills its temporary database."""
    from gpumodeler.db import sharing
    _user_database(folder / "mine.db")
    Path("out.db").write_text("previous\n")
    before = snapshot(folder)

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(sharing, "write_sources", full)
    err = one_line_exit_2(capsys, cli("devices", "export", "My GPU", "-o", "out.db", "--force",
                                      "--user-db", "mine.db"))
    assert "cannot write out.db: database or disk is full" in err, err
    assert snapshot(folder) == before


def _limited_file_size(limit: int):
    def start():  # in the child: files may not grow beyond ``limit`` bytes (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return start


@pytest.mark.parametrize("argv", [
    ["sweep", *GTX970, "--graph", str(SAXPY2_KERNEL), "--block-size", "32:1024:32",
     "--data-size", "1e6:1e8:1e6", "--registers", "32", "-o", "out.file"],
    ["report", str(SAXPY2_PROJECT), "-o", "out.file"],
    ["devices", "export", "GTX 970", "-o", "out.file", "--force"],
], ids=["sweep", "report", "devices export"])
def test_a_real_write_failure_in_another_process(folder, argv):
    """No monkeypatching: the system refuses to let a file grow past 8 KiB (as a full disk
    would), through the real write calls of Python and of SQLite."""
    Path("out.file").write_text("previous\n")
    before = snapshot(folder)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "gpumodeler", *argv], capture_output=True,
                         text=True, env=env, preexec_fn=_limited_file_size(8192), timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "out.file" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    assert snapshot(folder) == before


LONG = "x" * 300 + ".out"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_name_over_255_bytes(folder, capsys, command):
    source, name, _ = COMMANDS[command]
    shutil.copyfile(source, name)
    out = LONG + (".png" if command.startswith("gui") else "")
    before = snapshot(folder)
    err = one_line_exit_2(capsys, cli(*argv_for(command, name, out)))
    assert "File name too long" in err and "cannot write xxxxxxxx" in err, err
    assert snapshot(folder) == before


def test_a_name_of_250_bytes_is_written(folder, capsys):
    """A temporary name repeats the target's name, cut so that it stays a valid name."""
    name = "y" * 245 + ".html"
    assert cli("report", SAXPY2_PROJECT, "-o", name) == 0, capsys.readouterr().err
    assert os.listdir(folder) == [name]


def test_devices_export_of_a_name_over_255_bytes(folder, capsys):
    err = one_line_exit_2(capsys, cli("devices", "export", "GTX 970", "-o", LONG))
    assert "File name too long" in err, err
    assert os.listdir(folder) == []


@pytest.mark.parametrize("command", WRITERS)
@pytest.mark.parametrize("case, out, reason", [
    ("a missing folder", "missing/out.file", "does not exist"),
    ("a file as folder", "file/out.file", "Not a directory"),
    ("a folder", "folder", "it is a folder"),
])
def test_a_place_where_no_file_can_be(folder, capsys, command, case, out, reason):
    source, name, _ = COMMANDS[command]
    shutil.copyfile(source, name)
    Path("file").write_text("a file\n")
    Path("folder").mkdir()
    before = snapshot(folder)
    err = one_line_exit_2(capsys, cli(*argv_for(command, name, out)))
    assert f"cannot write {out}: " in err and reason in err, err
    assert snapshot(folder) == before


@pytest.mark.parametrize("error", [errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("command", [*WRITERS, "devices export"])
def test_a_folder_that_takes_no_new_file(folder, capsys, monkeypatch, command, error):
    """A read-only file system or a folder without write permission (root ignores
    permissions, so the system's answer is simulated: creating the temporary file fails)."""
    if command == "devices export":
        argv = ["devices", "export", "GTX 970", "-o", "out.file", "--force"]
    else:
        source, name, _ = COMMANDS[command]
        shutil.copyfile(source, name)
        argv = argv_for(command, name, "out.file")
    Path("out.file").write_text("previous\n")
    before = snapshot(folder)
    real_open = os.open

    def refusing(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and Path(path).parent == folder:
            raise OSError(error, os.strerror(error), str(path))
        return real_open(path, flags, *args, **kwargs)
    monkeypatch.setattr(os, "open", refusing)
    err = one_line_exit_2(capsys, cli(*argv))
    assert f"cannot write out.file: {os.strerror(error)}" in err, err
    assert snapshot(folder) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write in a read-only folder")
def test_a_read_only_folder(folder, capsys):
    Path("out").mkdir()
    os.chmod("out", 0o555)
    try:
        err = one_line_exit_2(capsys, cli("report", SAXPY2_PROJECT, "-o", "out/r.html"))
    finally:
        os.chmod("out", 0o755)
    assert "cannot write out/r.html: Permission denied" in err
    assert os.listdir("out") == []


def _device(folder: Path, name: str, minor: int) -> Path:
    """A character device in ``folder`` (null is 1,3, full 1,7): never the system's own, so
    a writer that wrongly replaced it would replace only this copy."""
    path = folder / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except (PermissionError, AttributeError):
        pytest.skip("making a device file needs root")
    return path


def test_special_files_are_written_directly(folder, capsys):
    """A null device takes the output as is (it cannot be replaced); a full one is a full
    disk, through the real write call."""
    null, full = _device(folder, "null", 3), _device(folder, "full", 7)
    assert cli("report", SAXPY2_PROJECT, "-o", "null") == 0
    capsys.readouterr()
    err = one_line_exit_2(capsys, cli("report", SAXPY2_PROJECT, "-o", "full"))
    assert "cannot write full: No space left on device" in err
    assert all(stat.S_ISCHR(os.stat(p).st_mode) for p in (null, full))
    assert sorted(os.listdir(folder)) == ["full", "null"]


# -- the permissions of a replaced file, and concurrent writers ----------------------------------

def test_a_replaced_file_keeps_its_permissions(folder, capsys):
    Path("r.html").write_text("old")
    os.chmod("r.html", 0o640)
    assert cli("report", SAXPY2_PROJECT, "-o", "r.html") == 0
    assert (os.stat("r.html").st_mode & 0o777) == 0o640
    assert Path("r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_two_concurrent_device_exports_both_succeed(folder, capsys):
    from gpumodeler.db.schema import open_database
    for _ in range(10):
        codes = []

        def export():
            codes.append(cli("devices", "export", "GTX 970", "-o", "same.db", "--force"))
        threads = [threading.Thread(target=export) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert codes == [0, 0], capsys.readouterr().err
        assert os.listdir(folder) == ["same.db"]
        db = open_database(folder / "same.db", integrity="full")
        try:
            names = [r[0] for r in db.execute("SELECT name FROM devices")]
        finally:
            db.close()
        assert names == ["GeForce GTX 970"]


# -- the general mapping of file-system errors ------------------------------------------------

@pytest.mark.parametrize("error", [errno.EACCES, errno.ENOSPC, errno.EROFS, errno.ENAMETOOLONG])
def test_an_os_error_on_any_file_is_one_line(folder, capsys, monkeypatch, error):
    from gpumodeler.report import html

    def failing(*args, **kwargs):
        raise OSError(error, os.strerror(error), "/some/where/file.db")
    monkeypatch.setattr(html, "build_report", failing)
    err = one_line_exit_2(capsys, cli("report", SAXPY2_PROJECT, "-o", "r.html"))
    assert err == f"gpumodeler report: /some/where/file.db: {os.strerror(error)}\n"


def test_check_output_says_what_output_file_would(tmp_path):
    (tmp_path / "in.txt").write_text("input")
    with pytest.raises(atomic_files.OutputError, match="it is the input file"):
        atomic_files.check_output(tmp_path / "." / "in.txt", [tmp_path / "in.txt"])
    with pytest.raises(atomic_files.OutputError, match="an output needs a file name"):
        atomic_files.check_output(" ")
    atomic_files.check_output(tmp_path / "new.txt", [tmp_path / "in.txt", None, "-"])
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]


def test_install_desktop_entry_never_writes_over_its_sources(folder, capsys, monkeypatch):
    """A share folder whose entries link back to the files installed from."""
    from gpumodeler.cli import cmd_gui
    sources = {}
    for name, _ in cmd_gui.DESKTOP_FILES:
        sources[name] = folder / "sources" / name
        sources[name].parent.mkdir(exist_ok=True)
        sources[name].write_text(f"Exec=old {name}\n", encoding="utf-8")
    monkeypatch.setattr(cmd_gui, "desktop_sources", lambda: sources)
    name, where = cmd_gui.DESKTOP_FILES[0]
    (folder / "share" / where).mkdir(parents=True)
    os.symlink(sources[name], folder / "share" / where / name)
    before = snapshot(folder / "sources")
    err = one_line_exit_2(capsys, cli("install-desktop-entry", "--prefix", folder / "share"))
    assert "refusing to write" in err and str(sources[name]) in err, err
    assert snapshot(folder / "sources") == before


def test_a_sweep_from_flags_to_a_new_file_does_not_load_the_database_layer(folder):
    """No device database is read, and a new file cannot be one: nothing to check there."""
    argv = ["sweep", *GTX970, "--latency-bound", "900", "--issued-instructions", "120",
            "--block-size", "128,256", "--grid-size", "100", "--registers", "32", "-o", "new.csv"]
    code = ("import sys\n"
            "from gpumodeler.cli.main import main\n"
            f"status = main({argv!r})\n"
            "print(status, 'sqlite_utils' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True, timeout=120)
    assert run.stdout.split() == ["0", "False"], run.stderr
    assert os.listdir(folder) == ["new.csv"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_file_is_not_replaced(folder, capsys):
    """A rename would replace it (the folder is writable): its permission is asked first."""
    Path("r.html").write_text("protected")
    os.chmod("r.html", 0o444)
    err = one_line_exit_2(capsys, cli("report", SAXPY2_PROJECT, "-o", "r.html"))
    assert "cannot write r.html: Permission denied" in err
    assert Path("r.html").read_text() == "protected" and os.listdir(folder) == ["r.html"]


def test_a_file_we_may_not_write_is_not_replaced(folder, capsys, monkeypatch):
    """The same for root, with the system's answer simulated."""
    Path("r.html").write_text("protected")
    access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if m == os.W_OK and
                        Path(p).name == "r.html" else access(p, m, **kw))
    err = one_line_exit_2(capsys, cli("report", SAXPY2_PROJECT, "-o", "r.html"))
    assert "cannot write r.html: Permission denied" in err
    assert Path("r.html").read_text() == "protected" and os.listdir(folder) == ["r.html"]


def test_dev_stdout_as_the_output_of_a_piped_command(folder):
    """/dev/stdout links to the pipe the command writes to: written directly."""
    argv = ["sweep", *GTX970, "--latency-bound", "900", "--issued-instructions", "120",
            "--block-size", "128,256", "--grid-size", "100", "--registers", "32"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [subprocess.run([sys.executable, "-m", "gpumodeler", *argv, *out], env=env,
                           capture_output=True, text=True, timeout=120)
            for out in (["-o", "/dev/stdout"], [])]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.startswith("device,")
    assert os.listdir(folder) == []
