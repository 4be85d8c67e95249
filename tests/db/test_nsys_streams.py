"""Reading which streams of an Nsight Systems export are the legacy default stream and which
are non-blocking (gpumodeler.db.nsys_streams)."""
import sqlite3
import sys
from pathlib import Path

from gpumodeler.db.nsys_streams import read_stream_kinds

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import (A100, BLOCKING, NON_BLOCKING, NULL_STREAM, SAXPY,  # noqa: E402
                          kernel, write_export)

GPUS = [(0, "NVIDIA A100-SXM4-40GB", A100), (1, "NVIDIA A100-SXM4-40GB", A100)]


def export(path, **kw):
    return write_export(path, kernels=[kernel(0, 10, SAXPY)], gpus=GPUS, **kw)


def test_the_context_and_stream_tables_name_the_streams(tmp_path):
    path = export(tmp_path / "a.sqlite", contexts=[(1, 0, 7), (2, 1, 30)],
                  streams=[(7, 1, NULL_STREAM), (13, 1, BLOCKING), (14, 1, NON_BLOCKING),
                           (30, 2, NULL_STREAM), (31, 2, NON_BLOCKING), (40, 9, NON_BLOCKING)])
    kinds = read_stream_kinds(path)
    assert kinds.legacy == {(0, 7), (1, 30)}
    assert kinds.non_blocking == {(0, 14), (1, 31)}     # (context 9 is on no known device)
    assert kinds.context[(0, 13)] == 1 and kinds.context[(1, 31)] == 2


def test_the_export_s_own_enum_numbering_wins(tmp_path):
    """An export whose ENUM_CUPTI_STREAM_TYPE numbers the flags otherwise."""
    renumbered = {"ENUM_CUPTI_STREAM_TYPE": [
        (5, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null"),
        (6, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking"),
        (3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default")]}
    path = export(tmp_path / "a.sqlite", enums=renumbered,
                  streams=[(7, 0, 5), (8, 0, 6), (9, 0, 3)])
    kinds = read_stream_kinds(path)     # (the context's device from the kernel table)
    assert kinds.legacy == {(0, 7)} and kinds.non_blocking == {(0, 8)}


def test_without_a_legacy_stream_or_the_tables_it_reads_none(tmp_path):
    assert read_stream_kinds(export(tmp_path / "a.sqlite")) is None
    assert read_stream_kinds(export(tmp_path / "b.sqlite", contexts=[(1, 0, 0xFFFFFFFF)],
                                    streams=[(13, 1, BLOCKING)])) is None


def test_rows_with_ids_that_are_not_whole_numbers_are_left_out(tmp_path):
    path = export(tmp_path / "a.sqlite", contexts=[(1, 0, 7)],
                  streams=[(14, 1, NON_BLOCKING), (15, 1, NON_BLOCKING)])
    conn = sqlite3.connect(path)
    conn.execute("UPDATE TARGET_INFO_CUDA_STREAM SET streamId = 'x' WHERE streamId = 15")
    conn.commit()
    conn.close()
    assert read_stream_kinds(path).non_blocking == {(0, 14)}


def test_a_damaged_file_reads_as_none(tmp_path):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\x07" * 300)
    assert read_stream_kinds(path) is None


def test_one_legacy_stream_per_context(tmp_path):
    """The context table's null stream wins over a stream flagged NULL; without it, a
    context with two streams flagged NULL has no known legacy stream, one with one has."""
    path = export(tmp_path / "a.sqlite", contexts=[(1, 0, 7), (2, 1, 0xFFFFFFFF),
                                                   (3, 1, 0xFFFFFFFF)],
                  streams=[(7, 1, NULL_STREAM), (8, 1, NULL_STREAM), (20, 2, NULL_STREAM),
                           (21, 2, NULL_STREAM), (30, 3, NULL_STREAM), (31, 3, BLOCKING)])
    kinds = read_stream_kinds(path)
    assert kinds.legacy == {(0, 7), (1, 30)}
