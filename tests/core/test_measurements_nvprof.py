"""nvprof --csv import: multi-run GPU traces with their own unit rows, noise lines, binary
units checked against throughput, metric and event tables, and bad input."""
import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.importer import detect_format, import_text
from gpumodeler.core.measurements.nvprof import parse

from measurement_samples import METRICS, TRACE, edited, text

MIB = 2 ** 20


@pytest.fixture(scope="module")
def trace():
    return import_text(text(TRACE), "trace.csv")


def test_every_run_is_read_with_its_own_units_and_noise_is_counted(trace):
    assert detect_format(text(TRACE)) == "nvprof"
    assert trace.counts() == {"transfer": 12, "kernel": 4}
    assert trace.noise_lines == 16  # ==PID== lines, the error line, "No kernels were profiled."
    assert trace.other_rows == 1  # the [CUDA memset] row
    assert trace.disagreements == []
    kernels = [r for r in trace.records if r.kind == "kernel"]
    # run 1 in us, run 2 in ms: the same kernel, the same duration in seconds
    assert kernels[0].time_s == pytest.approx(71.288354e-6, rel=1e-9)
    assert kernels[2].time_s == pytest.approx(0.071288e-3, rel=1e-9)
    assert kernels[0].grid == (4096, 1, 1) and kernels[0].block == (256, 1, 1)
    assert kernels[0].registers_per_thread == 64 and kernels[0].shared_mem_bytes == 0


def test_sizes_are_binary_in_every_block(trace):
    by_row = {r.row: r for r in trace.records}
    assert by_row[6].size_bytes == 4 * MIB  # 4096.000000 KB
    assert by_row[18].size_bytes == 32 * MIB  # 32.000000 MB
    assert by_row[36].size_bytes == 4096  # 4096.000000 B
    # throughput (GB/s = 2^30 B/s) agrees with size / duration
    r = by_row[6]
    assert r.metrics["throughput"][1] == "B/s"
    assert r.metrics["throughput"][0] == pytest.approx(r.size_bytes / r.time_s, rel=1e-5)


def test_directions_memory_kinds_and_several_gpus(trace):
    transfers = [r for r in trace.records if r.kind == "transfer"]
    assert {r.direction for r in transfers} == {"htod", "dtoh", "dtod", "ptop"}
    kinds = {(r.row, r.memory_kind) for r in transfers}
    assert (6, "pageable") in kinds and (11, "pageable") in kinds
    assert (18, "pinned") in kinds and (24, "pinned") in kinds and (22, "device") in kinds
    # run 4 comes from an older nvprof without SrcMemType/DstMemType: kind unknown, not guessed
    assert all(r.memory_kind == "" for r in transfers if r.row >= 36)
    assert {r.gpu for r in trace.records} == {"GeForce GTX 970 (0)", "GeForce GTX TITAN X (1)"}


def test_extra_numeric_columns_become_metrics_and_text_ones_are_ignored(trace):
    text_trace = edited(TRACE, 4, '"Correlation_ID"', '"Correlation_ID","ipc"')
    lines = text_trace.splitlines()
    lines[4] += ","
    for k in range(5, 11):
        lines[k] += ",1.75"
    r = parse("\n".join(lines), "t.csv")
    kernel = next(x for x in r.records if x.kind == "kernel")
    assert kernel.metrics["ipc"] == (1.75, "1")
    assert "Correlation_ID" not in kernel.metrics


def test_decimal_throughput_is_reported_not_guessed():
    row = text(TRACE).splitlines()[5].split(",")
    size, dur = float(row[11]) * 1024, float(row[1]) * 1e-6
    decimal = f"{size / dur / 1e9:.6f}"
    r = parse(edited(TRACE, 6, row[12], decimal), "t.csv")
    assert len(r.disagreements) == 1
    d = r.disagreements[0]
    assert d.row == 6 and d.column == "Throughput"
    assert "2^30/10^9" in d.message
    assert r.records[0].size_bytes == 4 * MIB  # the unit row still decides


def test_metric_and_event_tables_make_one_record_per_kernel():
    r = import_text(text(METRICS), "m.csv")
    assert r.counts() == {"kernel": 1}
    k = r.records[0]
    assert k.time_s is None and k.gpu == "GeForce GTX 970 (0)"
    assert k.metrics["inst_issued"] == (58 * 32768, "1")
    assert k.metrics["achieved_occupancy"] == (0.5, "1")
    assert k.metrics["warp_execution_efficiency"] == (100.0, "%")
    assert k.metrics["dram_read_throughput"] == (117.71845, "GB/s")
    assert k.metrics["dram_utilization"] == (6.0, "level 0-10")
    assert k.metrics["warps_launched"] == (32768.0, "1")  # from the event table
    assert k.metrics["invocations"] == (2.0, "1")
    assert r.noise_lines == 7


@pytest.mark.parametrize("row, old, new, expected", [
    (10, "71.288354", "71.288354us", "row 10, column Duration: '71.288354us' carries its own unit"),
    (10, "71.288354", "-71.288354", "row 10, column Duration: a duration must be > 0, got -71.288354 us"),
    (10, "71.288354", "0.000000", "row 10, column Duration: a duration must be > 0"),
    (6, "4096.000000", "0.000000", "row 6, column Size: a copy size must be > 0"),
    (5, "us,us", "us,fortnights", "row 5: expected nvprof's unit row"),
    (5, "KB,GB/s", "kB,GB/s", "row 5: expected nvprof's unit row"),
    (5, "GB/s", "GB", "row 5, column Throughput: unit 'GB' is not a unit of Throughput"),
    (10, ",4096,1,1,", ",,1,1,", "row 10, column Grid X: '' is not a whole number"),
])
def test_bad_cells_name_the_row_and_column(row, old, new, expected):
    with pytest.raises(FormatError) as err:
        parse(edited(TRACE, row, old, new), "t.csv")
    assert expected in str(err.value)


def test_mixed_units_between_blocks_are_fine_but_a_block_without_unit_row_is_refused():
    lines = text(TRACE).splitlines()
    del lines[4]  # the unit row of run 1
    with pytest.raises(FormatError, match=r"t.csv row 5: expected nvprof's unit row.*never guessed"):
        parse("\n".join(lines), "t.csv")


def test_truncated_file_names_the_cut_row():
    lines = text(TRACE).splitlines()
    cut = "\n".join(lines[:9]) + "\n" + lines[9][:40]
    with pytest.raises(FormatError, match=r"t.csv row 10: \d+ fields for the 20 columns .*truncated"):
        parse(cut, "t.csv")
    headless = "\n".join(lines[:3] + lines[5:])
    with pytest.raises(FormatError, match=r"t.csv row 4: a data row outside any table"):
        parse(headless, "t.csv")
    header_only = "\n".join(lines[:4])
    with pytest.raises(FormatError, match="row 5: the header at row 4 has no unit row"):
        parse(header_only, "t.csv")


def test_missing_columns_are_named():
    head = '==1== Profiling result:\n"Start","Duration","Device","Name"\nus,us,,\n'
    with pytest.raises(FormatError, match="t.csv row 4, column Size: a copy row needs the Size"):
        parse(head + '0.5,12.0,"GTX 970 (0)","[CUDA memcpy HtoD]"\n', "t.csv")
    with pytest.raises(FormatError, match="t.csv row 4, column Grid X: a kernel row needs"):
        parse(head + '0.5,12.0,"GTX 970 (0)","saxpy(float*)"\n', "t.csv")
    # without Throughput a copy is read; nothing to check it against
    r = parse('"Start","Duration","Size","Device","Name"\nus,us,KB,,\n'
              '0.5,12.0,64.0,"GTX 970 (0)","[CUDA memcpy DtoH]"\n', "t.csv")
    assert r.records[0].size_bytes == 65536 and r.records[0].direction == "dtoh"
    assert r.disagreements == [] and r.records[0].memory_kind == ""


def test_another_tools_csv_and_a_file_with_no_known_rows():
    other = "time,value\n1,2\n"
    with pytest.raises(FormatError, match=r"x.csv row 1: cannot tell the format"):
        import_text(other, "x.csv")
    with pytest.raises(FormatError, match=r"x.csv row 1: a CSV header nvprof does not write"):
        import_text('"ID","Process ID","Kernel Name"\n', "x.csv", "nvprof")
    only_noise = "\n".join(text(TRACE).splitlines()[:5] + [text(TRACE).splitlines()[7]]) + "\n"
    with pytest.raises(FormatError, match=r"x.csv: no rows of a known kind .*1 row\(s\) of other"):
        import_text(only_noise, "x.csv")


from hypothesis import given, settings, strategies as st  # noqa: E402

BINARY = {"B": 1, "KB": 2 ** 10, "MB": 2 ** 20, "GB": 2 ** 30}
TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _copy_block(time_unit, size_unit, rate_unit, size, seconds, rate_factor):
    thr = size / seconds / rate_factor
    return ('==7== Profiling result:\n"Start","Duration","Size","Throughput","Device","Name"\n'
            f'{time_unit},{time_unit},{size_unit},{rate_unit},,\n'
            f'0,{seconds / TIME[time_unit]:.12e},{size / BINARY[size_unit]:.12e},{thr:.12e},'
            f'"GPU (0)","[CUDA memcpy HtoD]"\n')


@settings(max_examples=80, deadline=None)
@given(time_unit=st.sampled_from(sorted(TIME)), size_unit=st.sampled_from(sorted(BINARY)),
       rate_prefix=st.sampled_from(sorted(BINARY)), size=st.integers(1, 2 ** 34),
       bandwidth=st.floats(1e6, 1e12))
def test_any_unit_row_reads_back_the_same_copy(time_unit, size_unit, rate_prefix, size, bandwidth):
    seconds = size / bandwidth
    rate_unit = rate_prefix + "/s"
    r = parse(_copy_block(time_unit, size_unit, rate_unit, size, seconds, BINARY[rate_prefix]), "p.csv")
    rec = r.records[0]
    assert rec.size_bytes == pytest.approx(size, rel=1e-9)
    assert rec.time_s == pytest.approx(seconds, rel=1e-9)
    assert r.disagreements == []
    if rate_prefix != "B":  # the same throughput written with a decimal prefix is caught
        decimal = {"KB": 1e3, "MB": 1e6, "GB": 1e9}[rate_prefix]
        r = parse(_copy_block(time_unit, size_unit, rate_unit, size, seconds, decimal), "p.csv")
        assert [d.row for d in r.disagreements] == [4]
