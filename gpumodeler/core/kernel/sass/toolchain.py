"""The CUDA tools a SASS import runs: nvcc (compile a ``.cu`` to a cubin), cuobjdump or
nvdisasm (disassemble it) and a C++ demangler.

Where a tool is looked for, in order: ``PATH``; ``$CUDA_HOME/bin`` / ``$CUDA_PATH/bin``;
``/usr/local/cuda/bin``; and the ``bin`` folders the NVIDIA pip wheels install under
``site-packages/nvidia/`` (``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm`` put their
binaries in ``nvidia/cu13/bin`` or, for older releases, ``nvidia/cuda_nvdisasm/bin``).
A missing tool raises :class:`ToolMissing` saying what to install.

**Older architectures.** CUDA 13's nvcc, cuobjdump and nvdisasm no longer target Maxwell,
Pascal and Volta (sm_50 to sm_72). Where nvcc says an architecture is unsupported, the
source goes through PTX and a CUDA 11 or 12 ``ptxas``, as NVIDIA's toolchain itself splits
the work (CUDA C++ Programming Guide, "Compilation Workflow": the PTX of a virtual
architecture, then ``ptxas`` for the real one):

1. ``nvcc -ptx -O3 -arch=compute_XX``, the oldest virtual architecture nvcc lists
   (``--list-gpu-arch``; compute_75 for CUDA 13);
2. the PTX's ``.version`` set to the PTX ISA of that ``ptxas``'s release (CUDA 12.4: 8.4;
   PTX ISA, "Release Notes") and its ``.target`` to the architecture;
3. ``ptxas -O3 -arch=sm_XX``, and a disassembler of a CUDA 11 or 12 release.

The older tools are looked for in ``$GPUMODELER_LEGACY_CUDA_BIN``, ``/usr/local/cuda-12*``
and ``cuda-11*`` (newest first), the ``bin`` folder of the ``triton`` wheel (its 3.x
releases bundle CUDA 12's ``ptxas``, ``cuobjdump`` and ``nvdisasm``) and, for ``ptxas``,
``nvidia/cuda_nvcc/bin`` (the ``nvidia-cuda-nvcc-cu12`` wheel). A cubin or listing of such
an architecture is disassembled by the older tools too when CUDA 13's refuse it. PTX a
CUDA 12 ``ptxas`` cannot assemble for the architecture (an instruction it lacks) fails
with ptxas's message.

How the tools are run, and why:

* Never through a shell, always with an argument list; but nvcc itself runs its sub-steps
  (gcc, cicc, ptxas) through ``sh -c`` with the file names pasted in, so a name such as
  ``$(touch X).cu`` or one with a ``"`` would be run or break the quoting, and a name such as
  ``--options-file=o.cu`` would be read as an option. So no text of the user's reaches a
  tool's command line: the input is copied into a private folder (``tempfile.mkdtemp``,
  mode 0700) under a fixed name (:data:`SOURCE_NAME`, :data:`CUBIN_NAME`) and the tool runs
  in that folder on that name. ``#include "x.h"`` relative to the source keeps working
  through a link with a fixed name (:data:`SOURCE_FOLDER_LINK`) to the source's folder,
  given with ``-I``; where no link can be made, the folder's own path is given only when
  it holds no character a shell reads, else the import is refused (:class:`UnsafeInput`).
  The architecture must match :data:`ARCH_PATTERN` (ASCII, nothing after it) before it
  reaches nvcc's argument list. nvcc's own messages name the copy; they are shown with the
  user's file name.
* The tool gets the private folder as its working folder and as ``TMPDIR``, so its
  intermediate files (nvcc's ``tmpxft_*``) are made there and removed with it.
* Each tool starts in a new session (its own process group). After :data:`TOOL_TIMEOUT_S`
  seconds (or when the caller is interrupted) the whole group is stopped, SIGTERM then,
  :data:`STOP_GRACE_S` seconds later, SIGKILL, so nvcc's children (gcc, cc1plus, cicc) stop
  with it; then the private folder is removed and :class:`ToolStopped` says so.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from gpumodeler.core.errors import InvalidParameter, ModelError, shown

#: What to install for each tool (shown when it is missing).
INSTALL_HINT = {
    "nvcc": "install the CUDA Toolkit (nvcc) and put it on PATH, or import a cuobjdump -sass "
            "listing instead of the .cu",
    "cuobjdump": "pip install nvidia-cuda-cuobjdump (or pip install 'gpumodeler[sass]'), or "
                 "the CUDA Toolkit",
    "nvdisasm": "pip install nvidia-cuda-nvdisasm (or pip install 'gpumodeler[sass]'), or "
                "the CUDA Toolkit",
}
#: What to install for an architecture the installed CUDA no longer targets (module doc).
LEGACY_HINT = ("a CUDA 11 or 12 ptxas and cuobjdump (or nvdisasm): pip install triton==3.1.0 "
               "(its bin folder holds CUDA 12.4's), or install a CUDA 12 toolkit in "
               "/usr/local/cuda-12.x, or set GPUMODELER_LEGACY_CUDA_BIN to a folder that "
               "holds them")
#: The PTX ISA version of each CUDA release's ptxas (PTX ISA, "Release Notes"); a release
#: not listed takes the one of the release below it.
PTX_ISA = {(11, 0): "7.0", (11, 1): "7.1", (11, 2): "7.2", (11, 3): "7.3", (11, 4): "7.4",
           (11, 5): "7.5", (11, 6): "7.6", (11, 7): "7.7", (11, 8): "7.8", (12, 0): "8.0",
           (12, 1): "8.1", (12, 2): "8.2", (12, 3): "8.3", (12, 4): "8.4", (12, 5): "8.5",
           (12, 6): "8.5", (12, 8): "8.7", (12, 9): "8.8"}
#: The file names of the PTX route in the private folder.
PTX_NAME = "kernel.ptx"
LEGACY_PTX_NAME = "kernel.legacy.ptx"
#: Seconds a tool may run before the import stops it (its whole process group).
TOOL_TIMEOUT_S = 300
#: Seconds the demangler may run (it only reads names; without it names stay mangled).
DEMANGLE_TIMEOUT_S = 30
#: Seconds a stopped tool's process group has between SIGTERM and SIGKILL.
STOP_GRACE_S = 2
#: Lines of a compiler's error message kept in the one-line error.
ERROR_LINES = 3
#: The fixed names the tools see in their private folder.
SOURCE_NAME = "kernel.cu"
CUBIN_NAME = "kernel.cubin"
SOURCE_FOLDER_LINK = "gpumodeler-source-folder"
#: An architecture nvcc may be given: sm_ and two or three ASCII digits, a letter suffix.
ARCH_PATTERN = re.compile(r"sm_[0-9]{2,3}[a-z]?", re.ASCII)
#: Characters a folder path may hold to reach nvcc's shell as itself (only without a link).
PLAIN_PATH = re.compile(r"[A-Za-z0-9_./+,@%=:-]+", re.ASCII)


class ToolMissing(ModelError):
    """A CUDA tool the import needs is not installed."""


class ToolFailed(ModelError):
    """A CUDA tool ran and failed (e.g. nvcc could not compile the source)."""


class ToolStopped(ToolFailed):
    """A CUDA tool ran longer than :data:`TOOL_TIMEOUT_S` and was stopped."""


class UnsafeInput(ModelError):
    """A file cannot be given to a tool without its name reaching a shell."""


def check_arch(arch: str) -> str:
    """``arch`` when it is an architecture of the form sm_XX; else InvalidParameter."""
    if not isinstance(arch, str) or not ARCH_PATTERN.fullmatch(arch):
        raise InvalidParameter(f"architecture {shown(arch)} is not of the form sm_XX "
                               f"(e.g. sm_75, sm_90, sm_120)")
    return arch


def _site_roots() -> list[str]:
    """The folders Python installs packages in (where the NVIDIA and triton wheels go)."""
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # some embedded interpreters lack these
        pass
    roots.update(p for p in sys.path if p.endswith("site-packages"))
    return sorted(roots)


def _search_dirs() -> list[Path]:
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "bin")
    dirs.append(Path("/usr/local/cuda/bin"))
    for root in _site_roots():
        nv = Path(root) / "nvidia"
        if nv.is_dir():
            dirs.extend(sorted(nv.glob("*/bin")))
    return dirs


def find_tool(name: str, required: bool = True) -> str | None:
    """Path of the CUDA tool ``name``; raises ToolMissing (with what to install) when
    ``required``, else returns None."""
    found = shutil.which(name)
    if found:
        return os.path.abspath(found)  # tools run in their own folder: "." on PATH stays valid
    for d in _search_dirs():
        candidate = d / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    if not required:
        return None
    raise ToolMissing(f"{name} not found: {INSTALL_HINT.get(name, 'install the CUDA Toolkit')}")


def find_disassembler() -> tuple[str, str]:
    """``('cuobjdump' | 'nvdisasm', path)``: cuobjdump preferred (its listing always carries
    the encoding words); raises ToolMissing naming both pip packages when neither exists."""
    for name in ("cuobjdump", "nvdisasm"):
        path = find_tool(name, required=False)
        if path:
            return name, path
    raise ToolMissing("no SASS disassembler found (cuobjdump or nvdisasm): pip install "
                      "nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm (or pip install "
                      "'gpumodeler[sass]'), or install the CUDA Toolkit")


def trim_message(text: str, lines: int = ERROR_LINES) -> str:
    """The first meaningful lines of a tool's stderr, joined into one line."""
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in kept if "error" in ln.lower()] or kept
    out = " | ".join(errors[:lines])
    more = len(errors) - lines
    if more > 0:
        out += f" (+{more} more)"
    return out or "no message"


@contextmanager
def private_folder():
    """A new folder only this user can read (``tempfile.mkdtemp``), removed afterwards."""
    folder = tempfile.mkdtemp(prefix="gpumodeler-sass-")
    try:
        yield Path(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone (a PermissionError: only zombies are left, on some systems)


def _leader_exited(proc: subprocess.Popen) -> bool:
    """Whether the group's leader has exited, without reaping it: while it is not reaped its
    id cannot be reused, so signalling the group never reaches another process."""
    if not hasattr(os, "waitid"):
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def stop(proc: subprocess.Popen) -> None:
    """Stop ``proc`` and every process of its group (it was started in a new session):
    SIGTERM, up to :data:`STOP_GRACE_S` s for the leader to exit, then SIGKILL; reaped."""
    if not hasattr(os, "killpg"):  # no process groups here: the tool alone
        proc.kill()
    else:
        _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while not _leader_exited(proc) and time.monotonic() < deadline:
            time.sleep(0.02)
        _signal_group(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:  # a process that left the group holds the pipes
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()


def _spawn(argv: list[str], what: str, *, cwd: Path | None = None, input: str | None = None,
           timeout: float) -> subprocess.CompletedProcess:
    """Run ``argv`` (never through a shell) in a new session, in ``cwd`` (also its TMPDIR);
    raises ToolStopped after ``timeout`` s and ToolFailed when it cannot start."""
    env = None
    if cwd is not None:
        env = dict(os.environ, TMPDIR=str(cwd), TMP=str(cwd), TEMP=str(cwd))
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, text=True, errors="replace",
                                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        raise ToolFailed(f"{what} could not be started: {exc.strerror}") from None
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc)
        raise ToolStopped(f"{what} took longer than {timeout:g} s and was stopped, with the "
                          f"processes it started") from None
    except BaseException:  # interrupted (Ctrl+C no longer reaches the tool's own session)
        stop(proc)
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _run(argv: list[str], what: str, cwd: Path, shown_as: dict[str, str] | None = None) -> str:
    """The tool's stdout; ToolFailed with its trimmed message (the fixed names in it
    replaced by the user's, ``shown_as``) when it fails."""
    proc = _spawn(argv, what, cwd=cwd, timeout=TOOL_TIMEOUT_S)
    if proc.returncode != 0:
        message = proc.stderr or proc.stdout
        for fixed, name in (shown_as or {}).items():
            message = re.sub(rf"(?<![\w./-]){re.escape(fixed)}(?![\w.])",
                             lambda _m: name, message)
        raise ToolFailed(f"{what} failed: {trim_message(message)}")
    return proc.stdout


def _copy_input(path: Path, folder: Path, name: str) -> Path:
    """``path`` copied to ``folder/name``; ModelError when it cannot be read."""
    target = folder / name
    try:
        shutil.copyfile(path, target)
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    return target


def _include_option(source: Path, folder: Path) -> list[str]:
    """``-I`` for the source's own folder, so ``#include "x.h"`` finds what it found next
    to the original: a link with a fixed name in ``folder``; where links cannot be made,
    the folder's path when no shell would read anything in it; else UnsafeInput."""
    # the folder as named, not resolved: gcc looks beside the path it was given
    named = os.fspath(source)
    source_folder = os.path.dirname(named if os.path.isabs(named)
                                    else os.path.join(os.getcwd(), named))
    try:
        os.symlink(source_folder, folder / SOURCE_FOLDER_LINK, target_is_directory=True)
        return ["-I", SOURCE_FOLDER_LINK]
    except (OSError, NotImplementedError):
        pass
    if PLAIN_PATH.fullmatch(source_folder) and not source_folder.startswith("-"):
        return ["-I", source_folder]
    raise UnsafeInput(f"cannot compile {source.name}: the path of its folder holds characters "
                      f"nvcc's shell would read ({shown(source_folder)}) and no link to it can "
                      f"be made here; move it to a folder whose path has only letters, digits "
                      f"and . _ - / +")


def _disassemble_with(kind: str, disasm: str, cubin_name: str, folder: Path) -> str:
    if kind == "cuobjdump":  # -res-usage: each function's registers and shared memory too
        return _run([disasm, "-sass", "-res-usage", cubin_name], "cuobjdump -sass", folder)
    return _run([disasm, "-c", "-hex", cubin_name], "nvdisasm -hex", folder)


def _disassemble(cubin_name: str, folder: Path, older_first: bool = False) -> str:
    """The listing of the cubin: by the installed disassembler, or, where it refuses the
    cubin (an architecture its release no longer reads), by an older one (module doc);
    ``older_first``: by an older one where there is one (a cubin of the PTX route)."""
    kind, disasm = find_disassembler()
    if older_first:
        older = _legacy_tool(("cuobjdump", "nvdisasm"))
        if older is not None:
            return _disassemble_with(*older[:2], cubin_name, folder)
    try:
        return _disassemble_with(kind, disasm, cubin_name, folder)
    except ToolStopped:
        raise
    except ToolFailed as failed:
        older = _legacy_tool(("cuobjdump", "nvdisasm"))
        if older is None or older[1] == disasm:
            raise
        try:
            return _disassemble_with(*older[:2], cubin_name, folder)
        except ToolFailed:
            raise failed from None


def _release(tool: str) -> tuple[int, int] | None:
    """``(major, minor)`` of the CUDA release a tool prints with ``--version``, or None."""
    try:
        proc = _spawn([tool, "--version"], f"{Path(tool).name} --version",
                      timeout=DEMANGLE_TIMEOUT_S)
    except ToolFailed:
        return None
    m = re.search(r"release (\d+)\.(\d+)", proc.stdout or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _legacy_dirs() -> list[Path]:
    """Where a CUDA 11 or 12 toolchain is looked for (module doc), in that order."""
    dirs: list[Path] = []
    if os.environ.get("GPUMODELER_LEGACY_CUDA_BIN"):
        dirs.append(Path(os.environ["GPUMODELER_LEGACY_CUDA_BIN"]))
    return dirs + _installed_legacy_dirs()


def _installed_legacy_dirs() -> list[Path]:
    """The CUDA 12 and 11 toolkits in /usr/local (newest first), the nvidia-cuda-nvcc-cu12
    wheel's ``bin`` and the triton wheel's, where they exist."""
    dirs: list[Path] = []
    for major in ("12", "11"):
        found = sorted(Path("/usr/local").glob(f"cuda-{major}.*"),
                       key=lambda p: [int(x) if x.isdigit() else 0
                                      for x in p.name[5:].split(".")], reverse=True)
        dirs.extend(p / "bin" for p in found)
    for root in _site_roots():
        dirs.append(Path(root) / "nvidia" / "cuda_nvcc" / "bin")
        dirs.append(Path(root) / "triton" / "backends" / "nvidia" / "bin")
    return [d for d in dirs if d.is_dir()]


def _legacy_tool(names: tuple[str, ...]) -> tuple[str, str, tuple[int, int]] | None:
    """``(name, path, release)`` of the first of ``names`` from a CUDA 11 or 12 release
    found where :func:`_legacy_dirs` looks, or None."""
    for d in _legacy_dirs():
        for name in names:
            candidate = d / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                release = _release(str(candidate))
                if release is not None and release[0] in (11, 12):
                    return name, os.path.abspath(candidate), release
    return None


def ptx_isa(release: tuple[int, int]) -> str:
    """The PTX ISA version a ``ptxas`` of CUDA ``release`` reads (:data:`PTX_ISA`)."""
    return PTX_ISA.get(release) or PTX_ISA[max(k for k in PTX_ISA if k <= release)]


def _oldest_virtual_arch(nvcc: str) -> str:
    """The oldest ``compute_XX`` the installed nvcc lists (``--list-gpu-arch``); compute_75
    (CUDA 13's) where it lists none."""
    try:
        proc = _spawn([nvcc, "--list-gpu-arch"], "nvcc --list-gpu-arch",
                      timeout=DEMANGLE_TIMEOUT_S)
    except ToolFailed:
        return "compute_75"
    found = sorted(int(x) for x in re.findall(r"\bcompute_(\d+)\b", proc.stdout or ""))
    return f"compute_{found[0]}" if proc.returncode == 0 and found else "compute_75"


def retarget(ptx: str, arch: str, isa: str) -> str:
    """The PTX with its ``.version`` set to ``isa`` and its ``.target`` to ``arch``."""
    ptx = re.sub(r"^\s*\.version\s+\S+", f".version {isa}", ptx, count=1, flags=re.M)
    return re.sub(r"^\s*\.target\s+[^\n]+", f".target {arch}", ptx, count=1, flags=re.M)


def _compile_through_ptx(nvcc: str, arch: str, include: list[str], folder: Path,
                         source: Path) -> None:
    """The cubin of an architecture nvcc no longer targets, through PTX and an older
    ptxas (module doc), in ``folder/CUBIN_NAME``; ToolMissing when there is no older
    ptxas."""
    found = _legacy_tool(("ptxas",))
    if found is None:
        raise ToolMissing(f"the installed nvcc no longer targets {arch}; compiling for it "
                          f"needs {LEGACY_HINT}")
    _, ptxas, release = found
    isa = ptx_isa(release)
    virtual = _oldest_virtual_arch(nvcc)
    _run([nvcc, "-ptx", "-O3", f"-arch={virtual}", *include, "-o", PTX_NAME, SOURCE_NAME],
         f"nvcc -ptx -arch={virtual} {source.name}", folder, {SOURCE_NAME: source.name})
    ptx = (folder / PTX_NAME).read_text(errors="replace")
    (folder / LEGACY_PTX_NAME).write_text(retarget(ptx, arch, isa))
    _run([ptxas, "-O3", f"-arch={arch}", "-o", CUBIN_NAME, LEGACY_PTX_NAME],
         f"ptxas {release[0]}.{release[1]} -arch={arch} (the PTX of {source.name})", folder,
         {LEGACY_PTX_NAME: source.name})


def compile_to_sass(source: str | Path, arch: str) -> str:
    """Compile a ``.cu`` with ``nvcc -cubin -arch=ARCH`` in a private folder (an architecture
    nvcc no longer targets: through PTX and an older ptxas) and return the disassembly
    (cuobjdump -sass, else nvdisasm -hex); see the module for how the tools are run. Raises ToolMissing/ToolFailed/ToolStopped, UnsafeInput, InvalidParameter."""
    check_arch(arch)
    source = Path(source)
    nvcc = find_tool("nvcc", required=True)
    assert nvcc is not None  # required: ToolMissing otherwise
    find_disassembler()  # missing: say so before compiling
    with private_folder() as folder:
        _copy_input(source, folder, SOURCE_NAME)
        include = _include_option(source, folder)
        try:
            _run([nvcc, "-cubin", "-O3", f"-arch={arch}", *include, "-o", CUBIN_NAME,
                  SOURCE_NAME], f"nvcc -arch={arch} {source.name}", folder,
                 {SOURCE_NAME: source.name})
        except ToolStopped:
            raise
        except ToolFailed as failed:
            if "unsupported gpu architecture" not in str(failed).lower():
                raise
            _compile_through_ptx(nvcc, arch, include, folder, source)
            return _disassemble(CUBIN_NAME, folder, older_first=True)
        return _disassemble(CUBIN_NAME, folder)


def demangle(names: list[str]) -> dict[str, str]:
    """Demangled form of each C++-mangled name (``_Z...``), by cu++filt or c++filt when one
    is installed; names it cannot demangle (or no demangler) are left out. The names go to
    the demangler's standard input, never its command line."""
    mangled = [n for n in names if n.startswith("_Z")]
    tool = find_tool("cu++filt", required=False) or shutil.which("c++filt")
    if not mangled or not tool:
        return {}
    try:
        proc = _spawn([tool], "demangler", input="\n".join(mangled) + "\n",
                      timeout=DEMANGLE_TIMEOUT_S)
    except ToolFailed:  # not started, or stopped
        return {}
    out = proc.stdout.splitlines()
    if proc.returncode != 0 or len(out) != len(mangled):
        return {}
    return {m: d.strip() for m, d in zip(mangled, out) if d.strip() and d.strip() != m}


def disassemble_cubin(path: str | Path) -> str:
    """The SASS listing of a cubin (or an executable with embedded cubins), copied into a
    private folder under a fixed name first, so its name is never read as an option."""
    find_disassembler()
    with private_folder() as folder:
        _copy_input(Path(path), folder, CUBIN_NAME)
        return _disassemble(CUBIN_NAME, folder)
