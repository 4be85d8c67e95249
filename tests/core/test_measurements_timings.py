"""The gpumodeler timings CSV: documented columns, explicit units, refusal of bad rows."""
import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.importer import detect_format, import_text
from gpumodeler.core.measurements.timings import parse

from measurement_samples import TIMINGS, text

HEAD = "kind,name,direction,size,size_unit,grid,block,time,unit,gpu,memory_kind\n"


def test_sample_file():
    assert detect_format(text(TIMINGS)) == "timings"
    r = import_text(text(TIMINGS), "t.csv")
    assert r.counts() == {"kernel": 2, "transfer": 5} and r.noise_lines == 1
    k = r.records[0]
    assert k.grid == (4096,) and k.block == (256,) and k.registers_per_thread == 64
    assert k.metrics == {"energy": (0.0121, "J")}
    by_name = {x.name: x for x in r.records}
    assert by_name["h2d 4 MiB"].size_bytes == 4 * 2 ** 20  # binary IEC prefix
    assert by_name["h2d 64 MB"].size_bytes == 64e6  # decimal SI prefix
    assert by_name["h2d 64 MB"].memory_kind == "pinned"
    assert by_name["d2h 4 MiB"].time_s == pytest.approx(1.613e-3)
    assert {x.gpu for x in r.records} == {"GeForce GTX 970", "GeForce GTX TITAN X"}


def test_unit_suffixes_and_extra_columns():
    r = parse("kind,time,direction,size,note\ntransfer,3.5ms,htod,2GiB,first run\n", "t.csv")
    assert r.records[0].time_s == pytest.approx(3.5e-3)
    assert r.records[0].size_bytes == 2 * 2 ** 30
    assert r.records[0].metrics == {}  # a text column is not a metric


@pytest.mark.parametrize("row, expected", [
    ("kernel,k,,,,1,1,3,,g,", "t.csv row 2, column unit: no unit for time"),
    ("kernel,k,,,,1,1,3ms,us,g,", "t.csv row 2, column time: '3ms' says ms but column unit says "
                                  "us; mixed units are refused"),
    ("kernel,k,,,,1,1,0,ms,g,", "t.csv row 2, column time: a duration must be > 0, got 0"),
    ("kernel,k,,,,1,1,-2,ms,g,", "t.csv row 2, column time: a duration must be > 0, got -2"),
    ("transfer,c,htod,-4,MB,,,2,ms,g,", "t.csv row 2, column size: a copy size must be > 0"),
    ("transfer,c,htod,4,mb,,,2,ms,g,", "t.csv row 2, column size_unit: unknown unit 'mb'"),
    ("transfer,c,sideways,4,MB,,,2,ms,g,", "t.csv row 2, column direction: 'sideways' is not a "
                                           "direction (valid: htod, dtoh, dtod, ptop)"),
    ("launch,k,,,,1,1,2,ms,g,", "t.csv row 2, column kind: 'launch' is not a kind"),
    ("kernel,k,,,,1,0x2,2,ms,g,", "t.csv row 2, column block: '0x2' is not a size"),
    ("transfer,c,htod,4,MB,,,2,ms,g,cached", "t.csv row 2, column memory_kind: 'cached'"),
    ("kernel,k,,,,1,1,2,ms", "t.csv row 2: 9 fields for the 11 columns"),
])
def test_bad_rows(row, expected):
    with pytest.raises(FormatError) as err:
        parse(HEAD + row + "\n", "t.csv")
    assert expected in str(err.value)


def test_header_needs_kind_and_time():
    with pytest.raises(FormatError, match="t.csv row 1: the timings header has no time column"):
        parse("kind,name,seconds\nkernel,k,1\n", "t.csv")


def test_byte_order_mark_and_windows_line_ends():
    text_ = "\ufeffkind,time,unit\r\nkernel,2.5,ms\r\n\r\n"
    r = import_text(text_, "w.csv")
    assert detect_format(text_) == "timings"
    assert r.records[0].time_s == pytest.approx(2.5e-3) and r.noise_lines == 1
