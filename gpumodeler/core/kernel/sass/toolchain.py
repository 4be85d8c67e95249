"""The CUDA tools a SASS import runs: nvcc (compile a ``.cu`` to a cubin), cuobjdump or
nvdisasm (disassemble it) and a C++ demangler.

Where a tool is looked for, in order: ``PATH``; ``$CUDA_HOME/bin`` / ``$CUDA_PATH/bin``;
``/usr/local/cuda/bin``; and the ``bin`` folders the NVIDIA pip wheels install under
``site-packages/nvidia/`` (``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm`` put their
binaries in ``nvidia/cu13/bin`` or, for older releases, ``nvidia/cuda_nvdisasm/bin``).
A missing tool raises :class:`ToolMissing` saying what to install.
"""
from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from gpumodeler.core.errors import ModelError

#: What to install for each tool (shown when it is missing).
INSTALL_HINT = {
    "nvcc": "install the CUDA Toolkit (nvcc) and put it on PATH, or import a cuobjdump -sass "
            "listing instead of the .cu",
    "cuobjdump": "pip install nvidia-cuda-cuobjdump (or pip install 'gpumodeler[sass]'), or "
                 "the CUDA Toolkit",
    "nvdisasm": "pip install nvidia-cuda-nvdisasm (or pip install 'gpumodeler[sass]'), or "
                "the CUDA Toolkit",
}
#: Seconds a tool may run before the import gives up on it.
TOOL_TIMEOUT_S = 300
#: Lines of a compiler's error message kept in the one-line error.
ERROR_LINES = 3


class ToolMissing(ModelError):
    """A CUDA tool the import needs is not installed."""


class ToolFailed(ModelError):
    """A CUDA tool ran and failed (e.g. nvcc could not compile the source)."""


def _search_dirs() -> list[Path]:
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "bin")
    dirs.append(Path("/usr/local/cuda/bin"))
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # some embedded interpreters lack these
        pass
    roots.update(p for p in sys.path if p.endswith("site-packages"))
    for root in sorted(roots):
        nv = Path(root) / "nvidia"
        if nv.is_dir():
            dirs.extend(sorted(nv.glob("*/bin")))
    return dirs


def find_tool(name: str, required: bool = True) -> str | None:
    """Path of the CUDA tool ``name``; raises ToolMissing (with what to install) when
    ``required``, else returns None."""
    found = shutil.which(name)
    if found:
        return found
    for d in _search_dirs():
        candidate = d / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
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


def _run(argv: list[str], what: str) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                              errors="replace")
    except subprocess.TimeoutExpired:
        raise ToolFailed(f"{what} took longer than {TOOL_TIMEOUT_S} s and was stopped") from None
    except OSError as exc:
        raise ToolFailed(f"{what} could not be started: {exc.strerror}") from None
    if proc.returncode != 0:
        raise ToolFailed(f"{what} failed: {trim_message(proc.stderr or proc.stdout)}")
    return proc.stdout


def compile_to_sass(source: str | Path, arch: str) -> str:
    """Compile a ``.cu`` with ``nvcc -cubin -arch=ARCH`` in a temporary folder and return
    the disassembly (cuobjdump -sass, else nvdisasm -hex). Raises ToolMissing/ToolFailed."""
    nvcc = find_tool("nvcc")
    kind, disasm = find_disassembler()
    with tempfile.TemporaryDirectory(prefix="gpumodeler-sass-") as tmp:
        cubin = Path(tmp) / "kernel.cubin"
        _run([nvcc, "-cubin", "-O3", f"-arch={arch}", "-o", str(cubin), str(source)],
             f"nvcc -arch={arch} {Path(source).name}")
        if kind == "cuobjdump":
            return _run([disasm, "-sass", str(cubin)], "cuobjdump -sass")
        return _run([disasm, "-c", "-hex", str(cubin)], "nvdisasm -hex")


def demangle(names: list[str]) -> dict[str, str]:
    """Demangled form of each C++-mangled name (``_Z...``), by cu++filt or c++filt when one
    is installed; names it cannot demangle (or no demangler) are left out."""
    mangled = [n for n in names if n.startswith("_Z")]
    tool = find_tool("cu++filt", required=False) or shutil.which("c++filt")
    if not mangled or not tool:
        return {}
    try:
        proc = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out = proc.stdout.splitlines()
    if proc.returncode != 0 or len(out) != len(mangled):
        return {}
    return {m: d.strip() for m, d in zip(mangled, out) if d.strip() and d.strip() != m}


def disassemble_cubin(path: str | Path) -> str:
    """The SASS listing of a cubin (or an executable with embedded cubins)."""
    kind, disasm = find_disassembler()
    if kind == "cuobjdump":
        return _run([disasm, "-sass", str(path)], "cuobjdump -sass")
    return _run([disasm, "-c", "-hex", str(path)], "nvdisasm -hex")
