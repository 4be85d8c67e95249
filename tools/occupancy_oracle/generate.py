"""Build the occupancy oracle fixture from NVIDIA's cuda_occupancy.h.

    .venv/bin/python tools/occupancy_oracle/generate.py            # rewrite the fixture
    .venv/bin/python tools/occupancy_oracle/generate.py --dense    # big grid, compare, no file

Compiles oracle.cpp against the CUDA toolkit's header (g++, or nvcc, with
-I$CUDA_HOME/include), samples launch configurations per compute capability with a fixed
seed (weighted to the edges: warp multiples +-1, register counts around allocation-unit
steps, shared memory around every configuration / k boundary and the per-block limits), runs
them through cudaOccMaxActiveBlocksPerMultiprocessor and writes JSON Lines to
tests/fixtures/occupancy_oracle.jsonl: a header line, one line per device description the
oracle used, then one array per case (columns named in the header).

The header is a test oracle only; gpumodeler's calculator is written from the documented
rules and never includes or copies it. Only the sampled inputs come from gpumodeler (the
configuration lists, to put cases on their boundaries).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gpumodeler.core.occupancy.compute_capability import (  # noqa: E402
    ARCHITECTURES as _ALL, LEGACY_ARCHITECTURES)

# CUDA 13's cuda_occupancy.h knows 3.x and later; 1.0-3.0 are tested without it
# (tests/core/test_occupancy_legacy.py).
ARCHITECTURES = {cc: a for cc, a in _ALL.items() if cc not in LEGACY_ARCHITECTURES}
from gpumodeler.core.occupancy.calculator import occupancy_array  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "occupancy_oracle.jsonl"
CASES_PER_CC = 1150
SEED = 20240611

INPUT_COLUMNS = ["cc", "block_size", "registers_per_thread", "shared_mem_bytes",
                 "static_shared_mem_bytes", "opt_in", "carveout_percent",
                 "shared_mem_config_bytes", "partitioned_global_caching"]
OUTPUT_COLUMNS = ["active_blocks", "limiting_factors", "limit_warps", "limit_registers",
                  "limit_shared_memory", "limit_blocks", "allocated_registers_per_block",
                  "allocated_shared_mem_per_block_bytes", "caching_used"]

CACHE_PREFER_NONE, CACHE_PREFER_SHARED, CACHE_PREFER_L1, CACHE_PREFER_EQUAL = 0, 1, 2, 3

BLOCK_SIZES = [1, 2, 16, 31, 32, 33, 48, 63, 64, 65, 96, 97, 128, 160, 192, 224, 256, 288, 320,
               352, 384, 416, 448, 480, 512, 544, 576, 608, 640, 672, 704, 736, 768, 800, 832,
               864, 896, 928, 960, 992, 1000, 1023, 1024, 1025, 1056, 2048]
REGISTERS = [0, 1, 2, 7, 8, 9, 15, 16, 17, 20, 24, 25, 31, 32, 33, 37, 40, 41, 48, 49, 56, 57,
             63, 64, 65, 72, 73, 80, 84, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168,
             176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 255]
CARVEOUT_PERCENTS = [0, 1, 5, 10, 20, 25, 33, 40, 50, 60, 66, 75, 80, 90, 99, 100]


def shared_sizes(arch) -> list[int]:
    """Per-block shared-memory totals on the boundaries that matter for ``arch``."""
    unit = arch.shared_mem_allocation_unit_bytes
    reserved = arch.reserved_shared_mem_per_block_bytes
    top = arch.shared_mem_per_block_optin_bytes + 2 * unit
    sizes = {0, 1, unit - 1, unit, unit + 1, 1000, 1024, 1025, 2048, 3000, 4096, 6144, 8192,
             12288, 16384, 20000, 24576, 32768, 40960, 49151, 49152, 49153,
             arch.shared_mem_per_block_optin_bytes - 1, arch.shared_mem_per_block_optin_bytes,
             arch.shared_mem_per_block_optin_bytes + 1}
    for config in arch.shared_mem_configs_bytes:
        for k in range(1, 33):
            edge = config // k - reserved
            sizes.update({edge - 1, edge, edge + 1})
    return sorted(s for s in sizes if 0 <= s <= top)


def oracle_options(arch, rng) -> tuple[int | None, int | None, int, int]:
    """(carveout_percent, shared_mem_config_bytes, oracle carveout, oracle cache config)."""
    if rng.random() < 0.5:
        return None, None, -1, CACHE_PREFER_NONE
    configs = arch.shared_mem_configs_bytes
    if arch.has_carveout:
        if rng.random() < 0.7:
            pct = int(rng.choice(CARVEOUT_PERCENTS))
            return pct, None, pct, CACHE_PREFER_NONE
        config = int(rng.choice(configs))
        return None, config, percent_for(arch, config), CACHE_PREFER_NONE
    if len(configs) == 3:  # Kepler: prefer L1 / equal / shared
        index = int(rng.integers(3))
        cache = (CACHE_PREFER_L1, CACHE_PREFER_EQUAL, CACHE_PREFER_SHARED)[index]
        return None, configs[index], -1, cache
    return None, configs[0], -1, CACHE_PREFER_NONE


def percent_for(arch, config: int) -> int:
    """The smallest carveout percentage that selects ``config`` (for the oracle's state)."""
    for pct in range(101):
        if arch.config_at_least(pct * arch.shared_mem_per_sm_bytes // 100) == config:
            return pct
    raise AssertionError(f"no carveout selects {config} on {arch.compute_capability}")


def sample_cases(rng, per_cc: int) -> list[tuple]:
    """Rows of INPUT_COLUMNS plus the oracle's (carveout, cache) pair."""
    rows = []
    for cc, arch in ARCHITECTURES.items():
        sizes = shared_sizes(arch)
        for _ in range(per_cc):
            total = int(rng.choice(sizes))
            cap = min(total, arch.shared_mem_per_block_bytes)
            r = rng.random()
            static = 0 if r < 0.5 else cap if r < 0.7 else int(rng.integers(0, cap + 1))
            caching = bool(arch.supports_partitioned_global_caching and rng.random() < 0.5)
            pct, config, carveout, cache = oracle_options(arch, rng)
            rows.append((cc, int(rng.choice(BLOCK_SIZES)), int(rng.choice(REGISTERS)),
                         total - static, static, bool(rng.random() < 0.5), pct, config,
                         caching, carveout, cache))
    return rows


def dense_cases(stride: int) -> list[tuple]:
    """Every block size x register count x every ``stride``-th edge shared size, per option
    set (stride 3 gives about 45 million cases and takes some minutes)."""
    rows = []
    for cc, arch in ARCHITECTURES.items():
        options = [(None, None, -1, CACHE_PREFER_NONE)]
        if arch.has_carveout:
            options += [(p, None, p, CACHE_PREFER_NONE) for p in (0, 25, 50, 100)]
        elif len(arch.shared_mem_configs_bytes) == 3:
            options += [(None, c, -1, cache) for c, cache in zip(
                arch.shared_mem_configs_bytes,
                (CACHE_PREFER_L1, CACHE_PREFER_EQUAL, CACHE_PREFER_SHARED))]
        cachings = (False, True) if arch.supports_partitioned_global_caching else (False,)
        sizes = shared_sizes(arch)[::stride]
        for pct, config, carveout, cache in options:
            for opt_in in (False, True):
                for caching in cachings:
                    for total in sizes:
                        static = min(total, 1024)
                        for b in BLOCK_SIZES:
                            for r in REGISTERS:
                                rows.append((cc, b, r, total - static, static, opt_in, pct,
                                             config, caching, carveout, cache))
    return rows


def build_oracle(workdir: Path) -> Path:
    include = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
    if not (include / "cuda_occupancy.h").exists():
        sys.exit(f"no cuda_occupancy.h under {include}; set CUDA_HOME")
    compiler = shutil.which("g++") or shutil.which("nvcc")
    exe = workdir / "oracle"
    subprocess.run([compiler, "-O2", f"-I{include}", str(Path(__file__).with_name("oracle.cpp")),
                    "-o", str(exe)], check=True)
    return exe


def run_oracle(exe: Path, rows: list[tuple]) -> np.ndarray:
    record = np.array([[int(cc.split(".")[0]), int(cc.split(".")[1]), b, r, d, s, int(o), co,
                        ca, int(gc)]
                       for cc, b, r, d, s, o, _p, _c, gc, co, ca in rows], dtype=np.int64)
    out = subprocess.run([str(exe)], input=record.tobytes(), capture_output=True, check=True)
    result = np.frombuffer(out.stdout, dtype=np.int64).reshape(-1, 10)
    if len(result) != len(rows) or (result[:, 0] != 0).any():
        sys.exit("the oracle failed on some cases (status != CUDA_OCC_SUCCESS)")
    return result[:, 1:]


def device_lines(exe: Path) -> list[dict]:
    out = subprocess.run([str(exe), "props"], capture_output=True, text=True, check=True).stdout
    keys = ["max_threads_per_sm", "registers_per_sm", "max_registers_per_block",
            "shared_mem_per_sm_bytes", "shared_mem_per_block_bytes",
            "shared_mem_per_block_optin_bytes", "reserved_shared_mem_per_block_bytes"]
    return [{"device": line.split()[0], **dict(zip(keys, map(int, line.split()[1:])))}
            for line in out.splitlines()]


def compare(rows: list[tuple], results: np.ndarray) -> int:
    """Count cases where occupancy_array disagrees with the oracle (dense check)."""
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault((row[0], row[5], row[6], row[7], row[8]), []).append(i)
    bad = 0
    for (cc, opt_in, pct, config, caching), index in groups.items():
        inputs = np.array([rows[i][1:5] for i in index], dtype=np.int64)
        expect = results[index]
        got = occupancy_array(cc, inputs[:, 0], inputs[:, 1], inputs[:, 2],
                              static_shared_mem_bytes=inputs[:, 3], opt_in=opt_in,
                              carveout_percent=pct, shared_mem_config_bytes=config,
                              partitioned_global_caching=caching)
        ok = got.valid == (expect[:, 0] > 0)
        v = got.valid
        ok[v] &= got.active_blocks_per_sm[v] == expect[v, 0]
        for k, name in enumerate(("warps", "registers", "shared_memory", "blocks")):
            ok[v] &= got.block_limits[name][v] == expect[v, 2 + k]
            ok[v] &= got.limited_by[name][v] == ((expect[v, 1] >> k) & 1).astype(bool)
        ok[v] &= got.allocated_registers_per_block[v] == expect[v, 6]
        ok[v] &= got.allocated_shared_mem_per_block_bytes[v] == expect[v, 7]
        ok[v] &= got.partitioned_global_caching[v] == expect[v, 8].astype(bool)
        if not ok.all():
            first = index[int(np.argmin(ok))]
            print(f"{cc} opt_in={opt_in} carveout={pct} config={config} caching={caching}: "
                  f"{int((~ok).sum())} mismatches, e.g. {rows[first][:9]} -> oracle "
                  f"{results[first].tolist()}")
            bad += int((~ok).sum())
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dense", action="store_true",
                        help="compare a large grid in-process instead of writing the fixture")
    parser.add_argument("--stride", type=int, default=25,
                        help="with --dense, use every STRIDE-th shared-memory edge size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_oracle(Path(tmp))
        if args.dense:
            rows = dense_cases(args.stride)
            results = run_oracle(exe, rows)
            bad = compare(rows, results)
            print(f"{len(rows)} cases compared, {bad} mismatches")
            sys.exit(1 if bad else 0)
        rows = sample_cases(np.random.default_rng(SEED), CASES_PER_CC)
        results = run_oracle(exe, rows)
        devices = device_lines(exe)
    header = {"format": "gpumodeler occupancy oracle v1",
              "oracle": "cudaOccMaxActiveBlocksPerMultiprocessor, cuda_occupancy.h "
                        "(CUDA toolkit), via tools/occupancy_oracle/oracle.cpp",
              "limiting_factors": "bits: 1 warps, 2 registers, 4 shared memory, 8 blocks",
              "columns": INPUT_COLUMNS + OUTPUT_COLUMNS}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    with FIXTURE.open("w") as f:
        f.write(json.dumps(header) + "\n")
        for device in devices:
            f.write(json.dumps(device) + "\n")
        for row, result in zip(rows, results):
            values = list(row[:9]) + [int(v) for v in result]
            f.write(json.dumps(values, separators=(",", ":")) + "\n")
    print(f"wrote {len(rows)} cases to {FIXTURE.relative_to(ROOT)} "
          f"({FIXTURE.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
