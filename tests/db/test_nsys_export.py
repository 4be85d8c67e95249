"""Nsight Systems SQLite exports read as measurement records: each documented layout
(written here with sqlite3), read-only opening, streaming, and refused files."""
import tracemalloc

import pytest
from nsys_exports import (A100, DEVICE, LONG, PAGEABLE, PINNED, SAXPY, copy, kernel, pending_log,
                          sqlite_file, write_export)

from gpumodeler.core.errors import FormatError
from gpumodeler.db import nsys_export
from gpumodeler.db.nsys_export import read_export

V100_CUDA = dict(coreClockRate=1530000, globalMemoryBandwidth=898048000,
                 globalMemorySize=17179869184, l2CacheSize=6291456, numMemcpyEngines=7,
                 numMultiprocessors=80, computeCapabilityMajor=7, computeCapabilityMinor=0)


def _by_kind(result, kind):
    return [r for r in result.records if r.kind == kind]


def test_modern_layout_kernels_copies_streams_and_gpu(tmp_path):
    path = write_export(
        tmp_path / "report.sqlite", "modern",
        kernels=[kernel(3_000, 9_500, LONG, grid=(8, 4, 2), block=(16, 16, 1), regs=96,
                        static=4096, dynamic=1024, stream=13),
                 kernel(100, 2_100, SAXPY, regs=32, stream=7)],
        copies=[copy(10, 90, 1 << 20, 1, src=PINNED, dst=DEVICE, stream=14),
                copy(9_600, 9_900, 4096, 2, src=DEVICE, dst=PAGEABLE),
                copy(9_950, 9_990, 8192, 8, src=DEVICE, dst=DEVICE),
                copy(9_991, 9_999, 64, 3)],
        memsets=2, gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    result = read_export(path)
    assert result.format == "nsys" and result.counts() == {"kernel": 2, "transfer": 3}
    assert result.other_rows == 3          # one HtoA copy and two memsets
    starts = [r.start_s for r in result.records]
    assert starts == sorted(starts)        # kernels and copies merged in time order
    gemm = next(r for r in result.records if r.name == LONG)
    assert (gemm.grid, gemm.block, gemm.registers_per_thread) == ((8, 4, 2), (16, 16, 1), 96)
    assert gemm.shared_mem_bytes == 4096 + 1024
    assert (gemm.stream, gemm.device) == (13, 0)
    assert gemm.start_s == pytest.approx(3e-6) and gemm.end_s == pytest.approx(9.5e-6)
    assert gemm.time_s == pytest.approx(6.5e-6)
    assert gemm.gpu == "NVIDIA A100-SXM4-40GB (0)"
    htod, dtoh, dtod = _by_kind(result, "transfer")
    assert (htod.direction, htod.memory_kind, htod.size_bytes, htod.stream) == \
        ("htod", "pinned", 1 << 20, 14)
    assert (dtoh.direction, dtoh.memory_kind) == ("dtoh", "pageable")
    assert (dtod.direction, dtod.memory_kind) == ("dtod", "device")
    assert htod.time_s == pytest.approx(80e-9)
    (gpu,) = result.devices
    assert gpu == {**gpu, "sm_count": 108, "clock_hz": 1.41e9,
                   "memory_bandwidth_bps": 1.5552e12, "l2_bytes": 40 * 2 ** 20,
                   "async_engines": 3, "compute_capability": "8.0", "mig": False,
                   "integrated": False, "table": "TARGET_INFO_GPU"}


def test_the_enum_tables_numbering_wins_over_the_default(tmp_path):
    """An export's own ENUM tables decide (here pageable and pinned swapped)."""
    enums = {"ENUM_CUDA_MEMCPY_OPER": [(1, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host"),
                                       (2, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device")],
             "ENUM_CUDA_MEM_KIND": [(0, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
                                    (1, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable")]}
    path = write_export(tmp_path / "r.sqlite", "modern", enums=enums,
                        copies=[copy(0, 10, 100, 2, src=0, dst=0),
                                copy(20, 30, 100, 1, src=1, dst=1)])
    default = write_export(tmp_path / "d.sqlite", "modern", enums=False,
                           copies=[copy(0, 10, 100, 2, src=0, dst=0),
                                copy(20, 30, 100, 1, src=1, dst=1)])
    got = [(r.direction, r.memory_kind) for r in read_export(path).records]
    assert got == [("htod", "pinned"), ("dtoh", "pageable")]
    assert [(r.direction, r.memory_kind) for r in read_export(default).records] == \
        [("dtoh", "pageable"), ("htod", "pinned")]


def test_mid_layout_without_enum_tables_and_without_sm_count(tmp_path):
    facts = {k: v for k, v in A100.items() if k != "smCount"}
    path = write_export(tmp_path / "r.sqlite", "mid",
                        kernels=[kernel(0, 1000, SAXPY)],
                        copies=[copy(5, 15, 256, 1, src=PAGEABLE), copy(20, 40, 256, 2,
                                                                         dst=PINNED)],
                        gpus=[(0, "NVIDIA A100-PCIE-40GB", facts)])
    result = read_export(path)
    assert [(r.direction, r.memory_kind) for r in _by_kind(result, "transfer")] == \
        [("htod", "pageable"), ("dtoh", "pinned")]
    (gpu,) = result.devices
    assert gpu["sm_count"] is None and gpu["clock_hz"] == 1.41e9
    assert result.records[0].name == SAXPY


def test_old_layout_text_names_cut_and_cuda_gpu_in_khz(tmp_path):
    cut = LONG[:40] + "..."
    path = write_export(tmp_path / "r.sqlite", "old", kernels=[kernel(0, 5000, cut)],
                        copies=[copy(6000, 7000, 512, 1, src=PINNED)],
                        gpus=[(0, "Tesla V100-SXM2-16GB", V100_CUDA),
                              (1, "Tesla V100-SXM2-16GB",
                               dict(V100_CUDA, globalMemoryBandwidth=0))])
    result = read_export(path)
    assert result.records[0].name == cut and result.cut_names == 1
    first, second = result.devices
    assert first["table"] == "TARGET_INFO_CUDA_GPU"
    assert first["clock_hz"] == pytest.approx(1.53e9)                   # kHz
    assert first["memory_bandwidth_bps"] == pytest.approx(898.048e9)    # kB/s
    assert second["memory_bandwidth_bps"] is None                       # 0: not given
    assert (first["sm_count"], first["async_engines"], first["compute_capability"]) == \
        (80, 7, "7.0")
    assert result.records[1].memory_kind == "pinned"


def test_unified_memory_migrations_kept_apart(tmp_path):
    path = write_export(tmp_path / "r.sqlite", "modern",
                        copies=[copy(0, 10, 4096, 11), copy(20, 30, 65536, 12),
                                copy(40, 50, 100, 1, src=PINNED)])
    result = read_export(path)
    assert result.counts() == {"migration": 2, "transfer": 1}
    assert [(r.direction, r.memory_kind) for r in _by_kind(result, "migration")] == \
        [("htod", "managed"), ("dtoh", "managed")]


def test_mig_slice_and_jetson_are_their_own_devices(tmp_path):
    mig = dict(A100, smCount=14, memoryBandwidth=0, l2CacheSize=5242880)
    orin = dict(isDiscrete=0, clockRate=1300000000, smCount=16, computeMajor=8,
                computeMinor=7, asyncEngines=2)
    path = write_export(tmp_path / "r.sqlite", "modern",
                        kernels=[kernel(0, 10, SAXPY, device=0), kernel(5, 20, SAXPY, device=1),
                                 kernel(30, 40, SAXPY, device=2)],
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", A100),
                              (1, "NVIDIA A100-SXM4-40GB MIG 1g.5gb", mig),
                              (2, "Orin", orin)])
    result = read_export(path)
    full, slice_, jetson = result.devices
    assert (full["mig"], slice_["mig"], jetson["mig"]) == (False, True, False)
    assert (full["sm_count"], slice_["sm_count"]) == (108, 14)
    assert jetson["integrated"] and not full["integrated"]
    assert [r.gpu for r in result.records] == [
        "NVIDIA A100-SXM4-40GB (0)", "NVIDIA A100-SXM4-40GB MIG 1g.5gb (1)", "Orin (2)"]


def test_wal_export_with_log_beside_it_leaves_the_folder_unchanged(tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    path = write_export(folder / "r.sqlite", "modern", journal="WAL",
                        kernels=[kernel(0, 10, SAXPY)])
    writer = pending_log(path, 'INSERT INTO "CUPTI_ACTIVITY_KIND_MEMCPY" (start, end, '
                                'deviceId, streamId, bytes, copyKind, srcKind, dstKind) '
                                'VALUES (20, 30, 0, 7, 64, 1, 0, 2)')
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert "r.sqlite-wal" in before
    try:
        result = read_export(path)
    finally:
        after = {p.name: p.read_bytes() for p in folder.iterdir()}
        writer.close()
    assert after == before
    assert result.counts() == {"kernel": 1, "transfer": 1}   # the log's row is read too


def test_rollback_export_is_opened_without_creating_files(tmp_path):
    path = write_export(tmp_path / "r.sqlite", "mid", kernels=[kernel(0, 10, SAXPY)])
    before = sorted(p.name for p in tmp_path.iterdir())
    read_export(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_rows_are_streamed_in_batches(tmp_path, monkeypatch):
    """Peak Python memory does not grow with the number of rows read per batch."""
    n = 3000
    path = write_export(tmp_path / "r.sqlite", "modern",
                        kernels=[kernel(i * 10, i * 10 + 5, SAXPY) for i in range(n)])
    monkeypatch.setattr(nsys_export, "BATCH", 16)
    from gpumodeler.db.schema import read_only_connection
    db = read_only_connection(path)
    try:
        records = nsys_export.iter_records(db.conn, "r.sqlite")
        next(records)
        tracemalloc.start()
        count = 1 + sum(1 for _ in records)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        db.close()
    assert count == n
    assert peak < 200_000          # far below n records held at once (~n x 1 kB)


@pytest.mark.parametrize("content, words", [
    (b"SQLite format 3\x00" + b"\x00" * 200, "SQLite"),
    (b"not a database at all", "no SQLite header"),
])
def test_damaged_files_are_refused_in_one_line(tmp_path, content, words):
    path = tmp_path / "r.sqlite"
    path.write_bytes(content)
    with pytest.raises(FormatError) as err:
        read_export(path)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_sqlite_file_without_nsys_tables_is_refused(tmp_path):
    path = sqlite_file(tmp_path / "other.sqlite", "CREATE TABLE notes (x)")
    with pytest.raises(FormatError, match="without Nsight Systems tables"):
        read_export(path)


def test_kernel_table_without_a_needed_column_names_it(tmp_path):
    path = sqlite_file(tmp_path / "r.sqlite",
                       'CREATE TABLE "CUPTI_ACTIVITY_KIND_KERNEL" (start, end, deviceId)')
    with pytest.raises(FormatError, match="no column streamId"):
        read_export(path)


def test_cuda_gpu_table_keyed_by_device_id(tmp_path):
    """Some 2020-2021 exports key TARGET_INFO_CUDA_GPU by deviceId instead of id."""
    path = write_export(tmp_path / "r.sqlite", "old", kernels=[kernel(0, 10, SAXPY, device=1)],
                        gpus=[(1, "Tesla T4", dict(V100_CUDA, numMultiprocessors=40))])
    sqlite_file(path, 'ALTER TABLE "TARGET_INFO_CUDA_GPU" RENAME COLUMN id TO deviceId')
    result = read_export(path)
    assert [(g["id"], g["sm_count"]) for g in result.devices] == [(1, 40)]
    assert result.records[0].gpu == "Tesla T4 (1)"
