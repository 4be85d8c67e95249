"""`gpumodeler kernel import` runs nvcc and the disassemblers safely: a hostile file name is
never run by nvcc's shell nor read as an option, a bad architecture never reaches nvcc, and
a tool that hangs is stopped with every process it started and its temporary files removed.

The fake ``nvcc`` and ``cuobjdump`` put first on PATH record their argument lists and, like
the real nvcc, paste each input file name into an ``sh -c`` command in double quotes, and
read ``--options-file`` and run the ``-ccbin`` program."""
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.sass import toolchain

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "resources" / "kernels" / "src"
LISTING = ROOT / "resources" / "kernels" / "sass" / "vecadd.sm_80.sass"

FAKE_NVCC = """\
import json, os, shlex, subprocess, sys
args = sys.argv[1:]
words = []
for arg in args:
    if arg.startswith("--options-file="):
        with open(arg.split("=", 1)[1]) as fh:
            words += shlex.split(fh.read())
    else:
        words.append(arg)
inputs, output, i = [], None, 0
while i < len(words):
    word = words[i]
    if word in ("-o", "-I", "-ccbin"):
        if word == "-o":
            output = words[i + 1]
        if word == "-ccbin":  # nvcc runs its host compiler
            subprocess.run([words[i + 1]])
        i += 2
        continue
    if not word.startswith("-"):
        inputs.append(word)
    i += 1
status = 0
for name in inputs:  # nvcc's sub-steps: the name pasted into a shell command
    status |= subprocess.run(["sh", "-c", 'test -f "' + name + '"']).returncode
with open(os.environ["FAKE_TOOL_LOG"], "a") as log:
    log.write(json.dumps({"tool": "nvcc", "argv": args, "cwd": os.getcwd(),
                          "tmpdir": os.environ.get("TMPDIR"),
                          "pwned": sorted(n for n in os.listdir(".") if "PWNED" in n)}) + "\\n")
if status or not inputs or output is None:
    print("nvcc fatal   : cannot find the input file", file=sys.stderr)
    sys.exit(1)
with open(output, "wb") as fh:
    fh.write(b"\\x7fELF fake cubin")
"""

FAKE_CUOBJDUMP = """\
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_TOOL_LOG"], "a") as log:
    log.write(json.dumps({"tool": "cuobjdump", "argv": args, "cwd": os.getcwd()}) + "\\n")
for arg in args:
    if arg.startswith("-") and arg not in ("-sass", "-res-usage"):
        print(f"cuobjdump fatal : Unknown option '{arg}'", file=sys.stderr)
        sys.exit(1)
    if not arg.startswith("-"):
        with open(arg, "rb") as fh:
            if not fh.read(4) == b"\\x7fELF":
                print(f"cuobjdump fatal : {arg} is not an ELF file", file=sys.stderr)
                sys.exit(1)
with open(os.environ["FAKE_LISTING"]) as fh:
    sys.stdout.write(fh.read())
"""

#: Forks a child that ignores SIGTERM (only SIGKILL stops it), leaves a file in its TMPDIR
#: and hangs; the child keeps the output pipes open, as a compiler's children do.
HANGING_NVCC = """\
#!/bin/sh
echo $$ > "$FAKE_DIR/leader"
( trap '' TERM; exec sleep 30 ) &
echo $! > "$FAKE_DIR/child"
touch "$TMPDIR/tmpxft_fake_cpp1.ii"
sleep 30
"""


def _script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    if not body.startswith("#!"):
        body = f"#!{sys.executable}\n{body}"
    path.write_text(body)
    path.chmod(0o755)
    return path


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    """Fake nvcc and cuobjdump first on PATH, the working folder a fresh one; returns the
    function that reads what the fakes recorded."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    _script(bin_dir, "nvcc", FAKE_NVCC)
    _script(bin_dir, "cuobjdump", FAKE_CUOBJDUMP)
    log = tmp_path / "tools.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_TOOL_LOG", str(log))
    monkeypatch.setenv("FAKE_LISTING", str(LISTING))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def calls(tool=None):
        if not log.exists():
            return []
        found = [json.loads(line) for line in log.read_text().splitlines()]
        return [c for c in found if tool is None or c["tool"] == tool]
    return calls


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """The folder the import's private folders are made in (and TMPDIR), to see them go."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _evil_program(tmp_path) -> tuple[Path, Path]:
    """A program that leaves a mark when it runs, and the mark."""
    mark = tmp_path / "EVIL-RAN"
    evil = _script(tmp_path, "evil", f"#!/bin/sh\ntouch '{mark}'\n")
    return evil, mark


HOSTILE_SOURCES = ["$(touch PWNED).cu", "`touch PWNED`.cu", 'say "hi.cu', 'a"; touch PWNED; ".cu',
                   "--options-file=o.cu", "-ccbin.cu", "-o.cu"]


@pytest.mark.parametrize("name", HOSTILE_SOURCES)
def test_a_hostile_cu_name_is_compiled_as_a_plain_file(name, capsys, tmp_path, fakes,
                                                       private_tmp):
    evil, mark = _evil_program(tmp_path)
    Path("o.cu").write_text(f"-ccbin {evil}\n")
    Path(name).write_text((SRC / "vecadd.cu").read_text())
    code, out, err = run(capsys, "kernel", "import", f"./{name}", "--arch", "sm_80")
    assert code == 0, err
    assert len(from_dict(json.loads(out)).instructions) > 5
    assert not mark.exists(), "the -ccbin program of o.cu ran"
    assert Path("o.cu").read_text() == f"-ccbin {evil}\n"
    assert not list(tmp_path.rglob("PWNED"))
    (nvcc,) = fakes("nvcc")
    assert nvcc["pwned"] == []
    assert not any(name in arg or "options-file" in arg or "ccbin" in arg
                   for arg in nvcc["argv"]), nvcc["argv"]
    assert Path(nvcc["cwd"]).parent == private_tmp and nvcc["tmpdir"] == nvcc["cwd"]
    assert list(private_tmp.iterdir()) == []  # the private folder is gone
    assert Path(name).read_text() == (SRC / "vecadd.cu").read_text()  # the source untouched


@pytest.mark.parametrize("name", ["-x.cubin", "--options-file=o.cubin", "$(touch PWNED).cubin",
                                  'q"uote.cubin'])
def test_a_hostile_cubin_name_is_disassembled_as_a_plain_file(name, capsys, tmp_path, fakes,
                                                              private_tmp):
    Path(name).write_bytes(b"\x7fELF fake cubin")
    code, out, err = run(capsys, "kernel", "import", f"./{name}")
    assert code == 0, err
    assert len(from_dict(json.loads(out)).instructions) > 5
    (dump,) = fakes("cuobjdump")
    assert [a for a in dump["argv"] if a.startswith("-")] == ["-sass", "-res-usage"]
    assert not any(name in a for a in dump["argv"])
    assert Path(dump["cwd"]).parent == private_tmp and list(private_tmp.iterdir()) == []
    assert not list(tmp_path.rglob("PWNED"))
    assert fakes("nvcc") == []


@pytest.mark.parametrize("arch", ["sm_80\n", "sm_80 -ccbin evil", "sm_\u0668\u0660", "-ccbin",
                                  "sm_80;touch PWNED", "$(touch PWNED)"])
def test_an_architecture_that_is_not_sm_xx_never_reaches_nvcc(arch, capsys, tmp_path, fakes):
    Path("k.cu").write_text((SRC / "vecadd.cu").read_text())
    code, out, err = run(capsys, "kernel", "import", "k.cu", f"--arch={arch}")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "not of the form sm_XX" in err
    assert fakes() == [] and not list(tmp_path.rglob("PWNED"))


def test_a_failing_compile_names_the_users_file_not_the_copy(capsys, tmp_path, fakes,
                                                              monkeypatch):
    _script(tmp_path / "fake-bin", "nvcc", "#!/bin/sh\necho 'kernel.cu(3): error: "
            "identifier \"x\" is undefined' >&2\nexit 1\n")
    Path("$(touch PWNED) mine.cu").write_text("__global__ void k() { x; }\n")
    code, out, err = run(capsys, "kernel", "import", "$(touch PWNED) mine.cu", "--arch", "sm_80")
    assert code == 2 and err.count("\n") == 1
    assert "$(touch PWNED) mine.cu(3): error: identifier" in err and "kernel.cu" not in err


def test_includes_beside_the_source_are_found_through_a_link(capsys, tmp_path, fakes,
                                                              private_tmp, monkeypatch):
    """nvcc gets -I with the link's fixed name; removing the private folder removes the
    link only, never the user's folder it points to."""
    folder = tmp_path / "my $(touch PWNED) kernels"
    folder.mkdir()
    (folder / "k.cu").write_text('#include "helper.h"\n')
    (folder / "helper.h").write_text("// helper\n")
    code, _, err = run(capsys, "kernel", "import", folder / "k.cu", "--arch", "sm_80")
    assert code == 0, err
    (nvcc,) = fakes("nvcc")
    link = nvcc["argv"][nvcc["argv"].index("-I") + 1]
    assert not link.startswith("-") and "PWNED" not in link and "/" not in link
    assert sorted(p.name for p in folder.iterdir()) == ["helper.h", "k.cu"]
    assert (folder / "helper.h").read_text() == "// helper\n"
    assert list(private_tmp.iterdir()) == []


def _no_symlinks(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(toolchain.os, "symlink", refuse)


def test_without_links_a_plain_folder_is_given_by_its_path(capsys, tmp_path, fakes,
                                                            monkeypatch):
    _no_symlinks(monkeypatch)
    folder = tmp_path / "plain_folder-1.0"
    folder.mkdir()
    (folder / "$(touch PWNED).cu").write_text("// k\n")
    code, _, err = run(capsys, "kernel", "import", folder / "$(touch PWNED).cu", "--arch", "sm_80")
    assert code == 0, err
    (nvcc,) = fakes("nvcc")
    assert nvcc["argv"][nvcc["argv"].index("-I") + 1] == str(folder)
    assert nvcc["pwned"] == [] and not list(tmp_path.rglob("PWNED"))


def test_without_links_a_folder_a_shell_would_read_is_refused(capsys, tmp_path, fakes,
                                                               private_tmp, monkeypatch):
    _no_symlinks(monkeypatch)
    folder = tmp_path / "x $(touch PWNED)"
    folder.mkdir()
    (folder / "k.cu").write_text("// k\n")
    code, out, err = run(capsys, "kernel", "import", folder / "k.cu", "--arch", "sm_80")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "cannot compile k.cu" in err and "move it to a folder" in err
    assert fakes() == [] and list(private_tmp.iterdir()) == []


def _group_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (read from /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists() or not hasattr(os, "killpg"),
                    reason="needs process groups and /proc")
def test_a_hanging_nvcc_is_stopped_with_its_children_and_its_files(capsys, tmp_path, fakes,
                                                                     private_tmp, monkeypatch):
    fake_dir = tmp_path / "fake-bin"
    _script(fake_dir, "nvcc", HANGING_NVCC)
    monkeypatch.setenv("FAKE_DIR", str(fake_dir))
    monkeypatch.setattr(toolchain, "TOOL_TIMEOUT_S", 3)
    monkeypatch.setattr(toolchain, "STOP_GRACE_S", 0.5)
    Path("slow.cu").write_text("// hangs\n")
    started = time.monotonic()
    try:
        code, out, err = run(capsys, "kernel", "import", "slow.cu", "--arch", "sm_80")
        took = time.monotonic() - started
        leader = int((fake_dir / "leader").read_text())
        child = int((fake_dir / "child").read_text())
        assert code == 2 and out == "" and err.count("\n") == 1
        assert "nvcc -arch=sm_80 slow.cu took longer than 3 s and was stopped" in err
        assert took < 20
        deadline = time.monotonic() + 5
        while (_group_members(leader) or _alive(child)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _group_members(leader) == [] and not _alive(child)
        assert list(private_tmp.iterdir()) == []  # the private folder and nvcc's file in it
    finally:  # a failed test must not leave its sleeping child behind
        for pid_file in ("child", "leader"):
            try:
                os.kill(int((fake_dir / pid_file).read_text()), signal.SIGKILL)
            except (OSError, ValueError):
                pass


@pytest.mark.skipif(not Path("/proc/self/stat").exists() or not hasattr(os, "killpg"),
                    reason="needs process groups and /proc")
def test_an_interrupted_import_stops_the_tool(tmp_path, fakes, private_tmp, monkeypatch):
    """Ctrl+C reaches gpumodeler, not the tool in its own session: the tool is stopped too."""
    fake_dir = tmp_path / "fake-bin"
    _script(fake_dir, "nvcc", HANGING_NVCC)
    monkeypatch.setenv("FAKE_DIR", str(fake_dir))
    monkeypatch.setattr(toolchain, "STOP_GRACE_S", 0.2)
    monkeypatch.setattr(toolchain, "TOOL_TIMEOUT_S", 999)
    real = toolchain.subprocess.Popen.communicate

    def communicate(self, input=None, timeout=None):
        if timeout != 999:  # stop() reading what is left
            return real(self, input, timeout)
        for _ in range(400):  # the tool runs until its child is there; then Ctrl+C
            if (fake_dir / "child").exists():
                raise KeyboardInterrupt
            try:
                return real(self, input, 0.05)
            except toolchain.subprocess.TimeoutExpired:
                continue
        raise AssertionError("the fake nvcc never started its child")
    monkeypatch.setattr(toolchain.subprocess.Popen, "communicate", communicate)
    Path("k.cu").write_text("// k\n")
    try:
        with pytest.raises(KeyboardInterrupt):
            toolchain.compile_to_sass(Path("k.cu"), "sm_80")
        child = int((fake_dir / "child").read_text())
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child) and list(private_tmp.iterdir()) == []
    finally:
        for pid_file in ("child", "leader"):
            try:
                os.kill(int((fake_dir / pid_file).read_text()), signal.SIGKILL)
            except (OSError, ValueError):
                pass


@pytest.mark.skipif(not (toolchain.find_tool("nvcc", required=False)
                         and any(toolchain.find_tool(t, required=False)
                                 for t in ("cuobjdump", "nvdisasm"))),
                    reason="nvcc and a disassembler are not installed")
def test_the_real_nvcc_compiles_a_hostile_copy_of_a_bundled_kernel(capsys, tmp_path,
                                                                   monkeypatch, private_tmp):
    evil, mark = _evil_program(tmp_path)
    folder = tmp_path / 'src $(touch PWNED1) `touch PWNED2` "q'
    folder.mkdir()
    (folder / "o.cu").write_text(f"-ccbin {evil}\n")
    (folder / "helper.h").write_text("#define HELPER_SCALE 1\n")
    name = '--options-file=o.cu $(touch PWNED3) `touch PWNED4` "q.cu'
    (folder / name).write_text('#include "helper.h"\n' + (SRC / "vecadd.cu").read_text())
    monkeypatch.chdir(folder)
    code, out, err = run(capsys, "kernel", "import", f"./{name}", "--arch", "sm_80")
    assert code == 0, err
    graph = from_dict(json.loads(out))
    assert graph.name == "vecadd" and len(graph.instructions) > 5
    assert not mark.exists()
    assert [p.name for p in tmp_path.rglob("PWNED*")] == []
    assert sorted(p.name for p in folder.iterdir()) == sorted(["o.cu", "helper.h", name])
    assert list(private_tmp.iterdir()) == []
