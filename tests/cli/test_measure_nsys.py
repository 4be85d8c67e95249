"""`gpumodeler measure import` and `calibrate link` of Nsight Systems SQLite exports written
here in each documented layout: listing with streams and the GPU's facts, the --json keys,
detection by content, and refused files as one exit-2 line."""
import json

import pytest
from nsys_exports import (A100, DEVICE, LONG, PAGEABLE, PINNED, SAXPY, copy, kernel, pending_log,
                          sqlite_file, write_export)

from gpumodeler.cli.main import main

JSON_KEYS = {"kind", "name", "stream", "start_s", "end_s", "time_s", "size_bytes", "grid",
             "block", "registers", "gpu"}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def export(tmp_path):
    return write_export(
        tmp_path / "report.sqlite", "modern",
        kernels=[kernel(1_000, 4_000, SAXPY, regs=24, stream=7),
                 kernel(5_000, 25_000, LONG, grid=(64, 2, 1), block=(128, 1, 1), regs=128,
                        static=8192, stream=21)],
        copies=[copy(0, 900, 1 << 20, 1, src=PINNED, dst=DEVICE, stream=14),
                copy(26_000, 30_000, 4 << 20, 2, src=DEVICE, dst=PAGEABLE, stream=15),
                copy(31_000, 32_000, 4096, 11)],
        memsets=1, gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])


def test_text_lists_kernels_copies_streams_and_gpu_facts(capsys, export):
    code, out, err = run(capsys, "measure", "import", export)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[-2:] == ["stream", "start"]
    saxpy = next(line for line in lines if line.split()[1:2] == ["kernel"] and "saxpy" in line)
    assert saxpy.split()[-3:] == ["7", "0.000001000", "s"]
    htod = next(line for line in lines if "[CUDA memcpy HtoD]" in line)
    assert "pinned" in htod and "1 MiB" in htod and " 14 " in htod
    assert any("[Unified Memory HtoD]" in line and "migration" in line for line in lines)
    assert "report.sqlite (nsys): 2 kernels, 1 migration, 2 transfers;" in out
    assert "2 row(s) of other kinds skipped" not in out and "1 row(s) of other kinds" in out
    assert lines[-1] == ("GPU 0: NVIDIA A100-SXM4-40GB: 108 SMs, clock 1410 MHz, memory "
                         "1555.2 GB/s, L2 40 MiB, 3 copy engines, CC 8.0")


def test_json_records_with_the_documented_keys(capsys, export):
    code, out, err = run(capsys, "measure", "import", export, "--json")
    assert code == 0, err
    records = json.loads(out)
    assert [r["kind"] for r in records] == ["transfer", "kernel", "kernel", "transfer",
                                           "migration"]
    for r in records:
        assert JSON_KEYS <= set(r)
        assert r["time_s"] == pytest.approx(r["end_s"] - r["start_s"])
    gemm = records[2]
    assert gemm == {**gemm, "name": LONG, "stream": 21, "grid": [64, 2, 1],
                    "block": [128, 1, 1], "registers": 128, "shared_mem_bytes": 8192,
                    "gpu": "NVIDIA A100-SXM4-40GB (0)", "size_bytes": None}
    assert gemm["start_s"] == pytest.approx(5e-6) and gemm["time_s"] == pytest.approx(20e-6)
    dtoh = records[3]
    assert (dtoh["size_bytes"], dtoh["stream"], dtoh["memory_kind"], dtoh["grid"]) == \
        (4 << 20, 15, "pageable", None)
    assert "GPU 0: NVIDIA A100-SXM4-40GB: 108 SMs" in err


@pytest.mark.parametrize("layout", ["modern", "mid", "old"])
def test_every_layout_imports(capsys, tmp_path, layout):
    name = SAXPY if layout != "old" else SAXPY[:20] + "..."
    gpus = [(0, "Tesla V100-SXM2-16GB", dict(coreClockRate=1530000, numMultiprocessors=80))] \
        if layout == "old" else [(0, "NVIDIA A100-PCIE-40GB", A100)]
    path = write_export(tmp_path / "r.sqlite", layout, kernels=[kernel(0, 100, name)],
                        copies=[copy(200, 300, 64, 1, src=PAGEABLE)], gpus=gpus)
    code, out, err = run(capsys, "measure", "import", path, "--json")
    assert code == 0, err
    assert [(r["kind"], r["name"]) for r in json.loads(out)] == [
        ("kernel", name), ("transfer", "[CUDA memcpy HtoD]")]
    assert ("cut with" in err) == (layout == "old")


def test_detected_by_content_whatever_the_suffix(capsys, tmp_path):
    path = write_export(tmp_path / "trace.csv", "modern", kernels=[kernel(0, 10, SAXPY)])
    code, out, _ = run(capsys, "measure", "import", path)
    assert code == 0 and "trace.csv (nsys): 1 kernel;" in out
    code, _, err = run(capsys, "measure", "import", path, "--format", "nvprof")
    assert code == 2 and "SQLite file" in err and err.count("\n") == 1


def test_wal_export_leaves_the_folder_unchanged(capsys, tmp_path):
    path = write_export(tmp_path / "r.sqlite", "modern", journal="WAL",
                        kernels=[kernel(0, 10, SAXPY)])
    writer = pending_log(path, 'INSERT INTO "CUPTI_ACTIVITY_KIND_MEMSET" (start, end, bytes) '
                               'VALUES (1, 2, 3)')
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert "r.sqlite-wal" in before
    try:
        code, out, err = run(capsys, "measure", "import", path)
        after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    finally:
        writer.close()
    assert code == 0, err
    assert "1 row(s) of other kinds" in out      # the memset the log holds
    assert after == before


@pytest.mark.parametrize("content, words", [
    (b"SQLite format 3\x00" + b"\x01" * 300, "not a readable SQLite file"),
    (None, "without Nsight Systems tables"),
])
def test_damaged_or_foreign_sqlite_is_exit_2_with_one_line(capsys, tmp_path, content, words):
    path = tmp_path / "r.sqlite"
    if content is None:
        sqlite_file(path, "CREATE TABLE devices (name TEXT)")
    else:
        path.write_bytes(content)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, "measure", "import", path)
    assert code == 2 and words in err and err.count("\n") == 1 and out == ""
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_calibrate_link_fits_explicit_copies_not_migrations(capsys, tmp_path, gpumodeler_env):
    """Copies of 4 kB .. 1 GiB at 5 µs + n / 6 GB/s; migrations (10x slower) are not fitted."""
    sizes = [4096 * 2 ** k for k in range(19)]
    copies, t = [], 0
    for n in sizes:
        duration = round(5_000 + n / 6e9 * 1e9)
        copies.append(copy(t, t + duration, n, 1, src=PAGEABLE))
        copies.append(copy(t + duration, t + 11 * duration, n, 11))
        t += 20 * duration
    path = write_export(tmp_path / "copies.sqlite", "modern", copies=copies,
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    code, out, err = run(capsys, "calibrate", "link", "--measurements", path, "--direction",
                         "htod", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["copies"] == len(sizes) and r["memory_kind"] == "pageable"
    assert r["parameters"]["regimes"][-1]["bandwidth_bytes_per_s"] == pytest.approx(6e9,
                                                                                    rel=0.02)


def test_calibrate_kernel_reads_the_launches_of_an_export(capsys, tmp_path, gpumodeler_env):
    """The saxpy2 launches of the JSON calibration test, as an nsys export: same λ."""
    from test_calibrate_cli import GPU, KERNEL, launches
    records = json.loads(launches(tmp_path / "runs.json", 0.7).read_text())
    kernels, t = [], 1_000
    for r in records:
        duration = round(r["time_s"] * 1e9)
        kernels.append(kernel(t, t + duration, r["name"], grid=tuple(r["grid"]),
                              block=tuple(r["block"]), regs=r["registers_per_thread"]))
        t += 2 * duration
    path = write_export(tmp_path / "runs.sqlite", "modern", kernels=kernels,
                        gpus=[(0, GPU, dict(smCount=13, clockRate=1_050_000_000))])
    code, out, err = run(capsys, "calibrate", "kernel", "--measurements", path, *KERNEL,
                         "--json")
    assert code == 0, err
    fitted = json.loads(out)
    code, out, _ = run(capsys, "calibrate", "kernel", "--measurements",
                       tmp_path / "runs.json", *KERNEL, "--json")
    assert fitted["launches"] == len(records) == 11
    assert fitted["lambda"] == pytest.approx(json.loads(out)["lambda"], rel=1e-3)
