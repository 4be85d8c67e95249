"""Rebuild the Maxwell and Pascal listings resources/kernels/sass/<kernel>.sm_5x|sm_6x.sass
from resources/kernels/src/*.cu.

nvcc 13 no longer targets sm_5x/sm_6x, so the sources go through PTX and an older ``ptxas``:

1. ``nvcc -ptx -O3 -arch=compute_75 K.cu -o K.ptx`` (the PTX of the kernel, nvcc 13);
2. the PTX header is rewritten to ``.version 8.4`` and ``.target sm_XX`` (nothing in these
   kernels' PTX needs a newer ISA or sm_75: PTX ISA, "Release Notes" / per-instruction
   "Target ISA notes");
3. ``ptxas -O3 -arch=sm_XX K.ptx -o K.cubin`` with a CUDA 12.x ``ptxas`` (CUDA 12 still
   targets sm_50 to sm_62);
4. ``cuobjdump -sass K.cubin`` -> ``K.sm_XX.sass``; for the pairs in :data:`NVDISASM`
   also ``nvdisasm -c -hex`` (``.nvdisasm.sass``) and ``nvdisasm -c`` (``.nvdisasm-nohex.sass``).

The CUDA 12 tools: give their folder with ``--bin DIR``. One way to get them without a CUDA 12
installation is the Triton 3.1.0 wheel, which bundles CUDA 12.4's ``ptxas``, ``cuobjdump``
and ``nvdisasm``: ``pip download triton==3.1.0 --no-deps -d DIR``, unzip the wheel in DIR, and
pass ``--bin DIR/triton/backends/nvidia/bin``.

Tensor-core sources (``mma``, ``wmma``, ``wgmma``, ``tcgen05``: sm_70 and later only) are
skipped. The listings are committed as text; the tests need none of these tools.

Run: python tools/make_sass_fixtures_legacy.py --bin DIR [KERNEL ...]
"""
import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from gpumodeler.core.kernel.sass.toolchain import find_tool
from make_sass_fixtures import write_listings  # this folder (run as a script)

ARCHS = ("sm_52", "sm_60", "sm_61")
#: Sources that need tensor cores (sm_70+): not built for Maxwell/Pascal.
SKIP = {"mma_shapes", "wmma_gemm", "wgmma_shapes", "tcgen05_mma"}
#: Also kept as nvdisasm listings (with and without encoding words), to test that format
#: (Maxwell/Pascal nvdisasm marks dual-issued pairs with braces).
NVDISASM = {("saxpy2", "sm_52"), ("reduce", "sm_60"), ("matmul_tiled", "sm_52")}
PTX_VERSION = "8.4"
ROOT = Path(__file__).resolve().parent.parent / "resources" / "kernels"


def retarget(ptx: str, arch: str) -> str:
    """The PTX with its ``.version`` and ``.target`` lines set for ``arch``."""
    ptx = re.sub(r"^\.version\s+\S+", f".version {PTX_VERSION}", ptx, count=1, flags=re.M)
    return re.sub(r"^\.target\s+\S+", f".target {arch}", ptx, count=1, flags=re.M)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, type=Path,
                        help="folder with a CUDA 12.x ptxas, cuobjdump and nvdisasm")
    parser.add_argument("kernels", nargs="*")
    args = parser.parse_args(argv)
    nvcc = find_tool("nvcc")
    ptxas, cuobjdump, nvdisasm = (str(args.bin / t) for t in ("ptxas", "cuobjdump", "nvdisasm"))
    sources = [s for s in sorted((ROOT / "src").glob("*.cu")) if s.stem not in SKIP]
    if args.kernels:
        sources = [s for s in sources if s.stem in args.kernels]
    out_dir = ROOT / "sass"
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources:
            ptx_file = Path(tmp) / f"{src.stem}.ptx"
            subprocess.run([nvcc, "-ptx", "-O3", "-arch=compute_75", "-o", str(ptx_file),
                            str(src)], check=True)
            ptx = ptx_file.read_text()
            for arch in ARCHS:
                legacy = Path(tmp) / f"{src.stem}.{arch}.ptx"
                legacy.write_text(retarget(ptx, arch))
                cubin = Path(tmp) / f"{src.stem}.{arch}.cubin"
                subprocess.run([ptxas, "-O3", f"-arch={arch}", "-o", str(cubin), str(legacy)],
                               check=True)
                write_listings(cubin, out_dir / f"{src.stem}.{arch}", cuobjdump,
                               nvdisasm if (src.stem, arch) in NVDISASM else None)


if __name__ == "__main__":
    main()
