"""SASS import speed (modern GPUs): import a generated 20 000-instruction sm_90 listing (a
loop unrolled the way ptxas unrolls one: loads, FP32 math, address arithmetic, with
scoreboards and stall counts) into a kernel graph, in under a second.

Run: python benchmarks/bench_sass_import.py   (prints the time; exits 1 above the limit)
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from gpumodeler.core.kernel.opcodes import classify
from gpumodeler.core.kernel.sass import listing, operands
from gpumodeler.core.kernel.sass.control import decode_control, encode_control
from gpumodeler.core.kernel.sass.importer import import_kernel_with_report

LIMIT_S = 1.0
N_INSTRUCTIONS = 20_000


def unrolled_listing(n: int = N_INSTRUCTIONS) -> str:
    """A cuobjdump -sass style listing of one function with ``n`` instructions."""
    lines = ["", "\tcode for sm_90", "\t.target\tsm_90", "",
             "\t\tFunction : _Z8unrolledPfPKfi",
             '\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"']
    addr = 0

    def emit(text, stall=1, wr=None, wait=0):
        nonlocal addr
        lines.append(f"        /*{addr:04x}*/                   {text} ;"
                     f"   /* 0x{0x0000000000007919 + addr:016x} */")
        lines.append(f"                                                  "
                     f"/* 0x{encode_control(stall, 1, wr, None, wait):016x} */")
        addr += 16

    emit("S2R R0, SR_TID.X", 1, wr=0)
    emit("LDC.64 R2, c[0x0][0x210]", 1, wr=1)
    emit("IMAD.WIDE R2, R0, 0x4, R2", 4, wait=0b11)
    body_start = addr
    body = n - 3 - 4
    for j in range(body):
        sb = 2 + j % 4  # loads rotate over scoreboards 2..5
        kind = j % 4
        r = 8 + (j // 4) % 48
        if kind == 0:
            emit(f"LDG.E R{r}, desc[UR4][R2.64+0x{(j * 4) & 0xfff:x}]", 1, wr=sb)
        elif kind == 1:
            emit(f"FFMA R{r + 1}, R{r}, R{r}, R{r + 1}", 4, wait=1 << (2 + (j - 1) % 4))
        elif kind == 2:
            emit(f"FMUL R{r + 2}, R{r + 1}, 0.5", 4)
        else:
            emit("IADD3 R2, P0, R2, 0x10, RZ", 1)
    target = body_start
    emit("ISETP.NE.AND P0, PT, R0, 0x100, PT", 13)
    emit(f"@P0 BRA 0x{target:x}", 5)
    emit("STG.E desc[UR4][R2.64], R9", 1)
    emit("EXIT", 5)
    lines.append(f"        /*{addr:04x}*/                   BRA 0x{addr:x};"
                 f"   /* 0xfffffffc00fc7947 */")
    lines.append("                                                  /* 0x000fc0000383ffff */")
    lines.append("\t\t..........")
    return "\n".join(lines) + "\n"


def main() -> int:
    text = unrolled_listing()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "unrolled.sm_90.sass"
        path.write_text(text)
        times, cpu = [], []
        for _ in range(3):
            for cached in (classify, decode_control, operands._access, operands._regs_in,
                           operands._is_pred, listing._split_operands, listing._valid_opcode,
                           listing._parse_text):
                cached.cache_clear()  # time a cold import, as a user's first one is
            t0, c0 = time.perf_counter(), time.process_time()
            graph, report = import_kernel_with_report(path)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    best = min(times)
    print(f"sass import: {report.instructions} instructions, {len(graph.edges)} edges, "
          f"{len(graph.loops)} loop(s) in {best:.3f} s wall, {min(cpu):.3f} s CPU "
          f"(limit {LIMIT_S:g} s)")
    # CPU time decides: wall time on a shared machine measures the other processes too
    return 0 if min(cpu) < LIMIT_S else 1


if __name__ == "__main__":
    sys.exit(main())
