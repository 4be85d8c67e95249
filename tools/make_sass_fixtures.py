"""Rebuild resources/kernels/sass/<kernel>.sm_XX.sass from resources/kernels/src/*.cu.

Each source is compiled with ``nvcc -cubin -O3 -arch=sm_XX`` and disassembled with
``cuobjdump -sass``; the listing is committed as text so the parsing tests need no CUDA
toolkit. The tools are found as ``gpumodeler kernel import`` finds them (PATH, then the
pip packages nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm).

A source that needs an architecture-specific target (``wgmma`` on sm_90a, ``tcgen05`` on
sm_100a) names its architectures in a line ``// fixture archs: sm_90a ...``; it is built
for those only.

Run: python tools/make_sass_fixtures.py [KERNEL ...]
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from gpumodeler.core.kernel.sass.toolchain import find_tool

ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
#: Also kept as nvdisasm listings (with and without encoding words), to test that format.
NVDISASM = {("saxpy2", "sm_90"), ("reduce", "sm_86")}
ROOT = Path(__file__).resolve().parent.parent / "resources" / "kernels"
_ARCHS_LINE = re.compile(r"^//\s*fixture archs:\s*((?:sm_\w+\s*)+)", re.MULTILINE)


def write_listings(cubin: Path, stem: Path, cuobjdump: str, nvdisasm: str | None) -> None:
    """``STEM.sass`` (cuobjdump -sass) of ``cubin`` and, with ``nvdisasm``, ``STEM.nvdisasm.sass``
    (-c -hex) and ``STEM.nvdisasm-nohex.sass`` (-c); prints each file written."""
    text = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True,
                          capture_output=True, text=True).stdout
    Path(f"{stem}.sass").write_text(text)
    print(f"{stem}.sass")
    if nvdisasm:
        for flags, suffix in ((["-c", "-hex"], "nvdisasm"), (["-c"], "nvdisasm-nohex")):
            text = subprocess.run([nvdisasm, *flags, str(cubin)], check=True,
                                  capture_output=True, text=True).stdout
            Path(f"{stem}.{suffix}.sass").write_text(text)


def archs_of(source: Path) -> tuple:
    """The architectures a source is built for: its ``// fixture archs:`` line, else ARCHS."""
    m = _ARCHS_LINE.search(source.read_text())
    return tuple(m.group(1).split()) if m else ARCHS


def main(names):
    nvcc, cuobjdump = find_tool("nvcc"), find_tool("cuobjdump")
    nvdisasm = find_tool("nvdisasm")
    sources = sorted((ROOT / "src").glob("*.cu"))
    if names:
        sources = [s for s in sources if s.stem in names]
    out_dir = ROOT / "sass"
    out_dir.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources:
            for arch in archs_of(src):
                cubin = Path(tmp) / f"{src.stem}.{arch}.cubin"
                subprocess.run([nvcc, "-cubin", "-O3", f"-arch={arch}", "-o", str(cubin), str(src)],
                               check=True)
                write_listings(cubin, out_dir / f"{src.stem}.{arch}", cuobjdump,
                               nvdisasm if (src.stem, arch) in NVDISASM else None)


if __name__ == "__main__":
    main(sys.argv[1:])
