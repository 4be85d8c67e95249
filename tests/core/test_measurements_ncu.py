"""Nsight Compute --csv import: raw and details pages, SI unit words, thousands separators."""
import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.importer import detect_format, import_text
from gpumodeler.core.measurements.ncu import parse
from gpumodeler.core.measurements.units import ncu_unit

from measurement_samples import NCU_DETAILS, NCU_RAW, edited, text


def test_unit_words_are_si_scaled():
    assert ncu_unit("Mbyte") == (1e6, "B")
    assert ncu_unit("Kbyte/block") == (1e3, "B/block")
    assert ncu_unit("usecond") == (1e-6, "s")
    assert ncu_unit("Gbyte/second") == (1e9, "B/s")
    assert ncu_unit("cycle/nsecond") == (1e9, "Hz")
    assert ncu_unit("%") == (1.0, "%")
    assert ncu_unit("inst") == (1.0, "inst")


def test_raw_page_one_record_per_launch():
    assert detect_format(text(NCU_RAW)) == "ncu"
    r = import_text(text(NCU_RAW), "raw.csv")
    assert r.counts() == {"kernel": 3} and r.noise_lines == 5
    sax, _, trn = r.records
    assert sax.gpu == "NVIDIA GeForce RTX 2080 Ti" and sax.compute_capability == "7.5"
    assert sax.grid == (4096, 1, 1) and sax.block == (256, 1, 1)
    assert sax.time_s == pytest.approx(24.03e-6)
    assert sax.registers_per_thread == 32 and sax.shared_mem_bytes == 0
    assert sax.metrics["smsp__inst_issued.sum"] == (58 * 32768, "inst")  # "1,900,544"
    assert sax.metrics["dram__bytes_read.sum"] == (pytest.approx(256 * 32768), "B")  # Mbyte
    assert sax.metrics["sm__cycles_elapsed.avg.per_second"] == (pytest.approx(1.55e9), "Hz")
    assert trn.block == (32, 32, 1) and trn.grid == (128, 128, 1)
    assert trn.shared_mem_bytes == 4220  # 4.22 Kbyte/block
    assert trn.time_s == pytest.approx(412.35e-6)


def test_details_page_groups_rows_by_launch():
    r = import_text(text(NCU_DETAILS), "details.csv")
    assert r.counts() == {"kernel": 2}
    sax, trn = r.records
    assert sax.time_s == pytest.approx(24.03e-6)  # "Duration" in usecond
    assert sax.registers_per_thread == 32
    assert sax.metrics["Achieved Occupancy"] == (75.0, "%")
    assert sax.metrics["Executed Instructions"] == (58 * 32768, "inst")
    assert trn.shared_mem_bytes == 4220 and trn.block == (32, 32, 1)


def test_bad_input_names_row_and_column():
    with pytest.raises(FormatError, match=r"raw.csv row 8, column gpu__time_duration.sum: "
                                          r"gpu__time_duration.sum \(a duration\) must be > 0"):
        parse(edited(NCU_RAW, 8, '"24.03"', '"0"'), "raw.csv")
    with pytest.raises(FormatError, match=r"raw.csv row 7: expected the unit row"):
        parse(edited(NCU_RAW, 7, '"","",', '"1","5120",'), "raw.csv")
    rows = text(NCU_DETAILS).splitlines()
    dur = next(i for i, l in enumerate(rows) if '"Duration"' in l) + 1
    with pytest.raises(FormatError, match=rf"d.csv row {dur}, column Metric Value: '24.03us' "
                                          r"carries its own unit"):
        parse(edited(NCU_DETAILS, dur, '"24.03"', '"24.03us"'), "d.csv")
    with pytest.raises(FormatError, match=rf"d.csv row {dur}, column Metric Value: Duration "
                                          r"\(a duration\) must be > 0"):
        parse(edited(NCU_DETAILS, dur, '"24.03"', '"-3"'), "d.csv")
    cut = "\n".join(text(NCU_RAW).splitlines()[:8]) + '\n"3","5120","saxpy2"\n'
    with pytest.raises(FormatError, match=r"raw.csv row 9: 3 fields for the \d+ columns .*truncated"):
        parse(cut, "raw.csv")
