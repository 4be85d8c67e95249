"""gpumodeler's occupancy calculator against NVIDIA's own, case by case.

tests/fixtures/occupancy_oracle.jsonl holds launch configurations for every supported
compute capability with the answers of ``cudaOccMaxActiveBlocksPerMultiprocessor`` from the
CUDA toolkit's cuda_occupancy.h, produced by tools/occupancy_oracle/generate.py. Each case
must give the same active blocks, per-resource block limits, limiting factors, allocated
registers and shared memory, and caching mode; where NVIDIA's calculator answers 0 blocks we
must refuse the launch with a LaunchError naming one of the resources it found at 0.

The oracle's device descriptions were typed in separately (oracle.cpp) from the same
programming-guide tables as gpumodeler/core/occupancy/compute_capability.py; the first test checks the
two transcriptions agree.
"""
import json
from pathlib import Path

import numpy as np
import pytest

from gpumodeler.core.occupancy.compute_capability import ARCHITECTURES, LEGACY_ARCHITECTURES
from gpumodeler.core.errors import LaunchError
from gpumodeler.core.occupancy.calculator import LIMIT_NAMES, occupancy, occupancy_array

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "occupancy_oracle.jsonl"


def _load():
    header, devices, rows = None, [], []
    with FIXTURE.open() as f:
        for line in f:
            item = json.loads(line)
            if isinstance(item, list):
                rows.append(item)
            elif "device" in item:
                devices.append(item)
            else:
                header = item
    return header, devices, rows


HEADER, DEVICES, ROWS = _load()
COL = {name: i for i, name in enumerate(HEADER["columns"])}
LIMIT_COLUMNS = dict(zip(LIMIT_NAMES, ("limit_warps", "limit_registers", "limit_shared_memory",
                                       "limit_blocks")))


def _options(row) -> dict:
    return {"static_shared_mem_bytes": row[COL["static_shared_mem_bytes"]],
            "opt_in": row[COL["opt_in"]],
            "carveout_percent": row[COL["carveout_percent"]],
            "shared_mem_config_bytes": row[COL["shared_mem_config_bytes"]],
            "partitioned_global_caching": row[COL["partitioned_global_caching"]]}


def _zero_resources(row) -> set[str]:
    return {name for name, col in LIMIT_COLUMNS.items() if row[COL[col]] == 0}


def _resource_named(message: str) -> str:
    """Which resource a LaunchError message blames."""
    if message.startswith("block size"):
        return "warps"
    if "registers" in message:
        return "registers"
    if "shared memory" in message:
        return "shared_memory"
    return "other"


# cuda_occupancy.h of CUDA 13 knows compute capability 3.x and later only; 1.0-3.0 are checked
# by hand-worked cases and the documents in tests/core/test_occupancy_legacy.py.
ORACLE_ARCHITECTURES = set(ARCHITECTURES) - set(LEGACY_ARCHITECTURES)


def test_fixture_covers_every_architecture():
    assert {row[COL["cc"]] for row in ROWS} == ORACLE_ARCHITECTURES
    assert len(ROWS) > 20000


def test_oracle_device_descriptions_match_our_table():
    assert {d["device"] for d in DEVICES} == ORACLE_ARCHITECTURES
    for d in DEVICES:
        arch = ARCHITECTURES[d["device"]]
        for key, value in d.items():
            if key != "device":
                assert getattr(arch, key) == value, (d["device"], key)


def test_scalar_agrees_with_nvidia_on_every_case():
    refused = 0
    for row in ROWS:
        cc, block, regs, dynamic = row[:4]
        expected_blocks = row[COL["active_blocks"]]
        if expected_blocks == 0:
            with pytest.raises(LaunchError) as e:
                occupancy(cc, block, regs, dynamic, **_options(row))
            assert _resource_named(str(e.value)) in _zero_resources(row), (row, str(e.value))
            refused += 1
            continue
        r = occupancy(cc, block, regs, dynamic, **_options(row))
        assert r.active_blocks_per_sm == expected_blocks, row
        assert dict(r.block_limits) == {n: row[COL[c]] for n, c in LIMIT_COLUMNS.items()}, row
        factors = row[COL["limiting_factors"]]
        assert r.limited_by == tuple(n for k, n in enumerate(LIMIT_NAMES) if factors >> k & 1), row
        assert r.allocated_registers_per_block == row[COL["allocated_registers_per_block"]], row
        assert (r.allocated_shared_mem_per_block_bytes
                == row[COL["allocated_shared_mem_per_block_bytes"]]), row
        assert r.partitioned_global_caching == bool(row[COL["caching_used"]]), row
    # Both outcomes are well represented.
    assert 0.15 < refused / len(ROWS) < 0.6


def test_arrays_agree_with_nvidia_on_every_case():
    groups: dict[tuple, list[list]] = {}
    for row in ROWS:
        key = (row[0],) + tuple(_options(row).items())[1:]
        groups.setdefault(key, []).append(row)
    compared = 0
    for (cc, *options), rows in groups.items():
        a = np.array([r[:5] for r in rows], dtype=object)
        got = occupancy_array(cc, a[:, 1].astype(np.int64), a[:, 2].astype(np.int64),
                              a[:, 3].astype(np.int64),
                              static_shared_mem_bytes=a[:, 4].astype(np.int64), **dict(options))
        expect = np.array([r[COL["active_blocks"]:] for r in rows], dtype=np.int64)
        v = got.valid
        ok = (v == (expect[:, 0] > 0)) & (got.active_blocks_per_sm == expect[:, 0])
        ok &= (got.reasons != "") == ~v
        for k, name in enumerate(LIMIT_NAMES):
            ok &= ~v | (got.block_limits[name] == expect[:, 2 + k])
            ok &= ~v | (got.limited_by[name] == ((expect[:, 1] >> k & 1) == 1))
        ok &= ~v | (got.allocated_registers_per_block == expect[:, 6])
        ok &= ~v | (got.allocated_shared_mem_per_block_bytes == expect[:, 7])
        ok &= ~v | (got.partitioned_global_caching == (expect[:, 8] == 1))
        assert ok.all(), rows[int(np.argmin(ok))]
        compared += len(rows)
    assert compared == len(ROWS)
