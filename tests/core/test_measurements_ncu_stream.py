"""The Nsight Compute reader streams: records come as lines are read (a raw page's row by
row, a details page's launch when its rows are done, at most HELD_LAUNCHES launches held),
and they, the counts and the error messages are what the whole-file reader gave
(ncu_whole_file) on the sample files, on generated pages and on edited copies of them."""
import json
import random

import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements import ncu
from gpumodeler.core.measurements.importer import import_text, stream_lines
from gpumodeler.core.measurements.parsing import ImportResult

from measurement_samples import NCU_DETAILS, NCU_RAW, text
from ncu_whole_file import import_whole

KERNELS = ("saxpy2(int, float, float const *, float*, int)",
           "transpose_smem(float*, float const*, int, int)", "k, \"quoted\"")
#: (section, metric, unit) of a generated details page's launch
METRICS = (("SOL", "Duration", "usecond"), ("Launch Statistics", "Block Size", ""),
           ("Launch Statistics", "Grid Size", ""),
           ("Launch Statistics", "Registers Per Thread", "register/thread"),
           ("Launch Statistics", "Static Shared Memory Per Block", "Kbyte/block"),
           ("Command line profiler metrics", "dram__bytes_read.sum", "Mbyte"),
           ("Occupancy", "Achieved Occupancy", "%"),
           ("Command line profiler metrics", "sm__cycles_elapsed.avg.per_second",
            "cycle/nsecond"))
DETAILS_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context",'
                  '"Stream","Block Size","Grid Size","Device","CC","Section Name",'
                  '"Metric Name","Metric Unit","Metric Value"')


def _q(cell) -> str:
    return '"' + str(cell).replace('"', '""') + '"'


def details_page(launches: int, seed: int = 0, order=None) -> str:
    """A details page of ``launches`` launches of distinct numbers, METRICS rows each (the
    launches' rows in the order ``order`` gives, a list of launch indices per row group:
    by default each launch's rows together)."""
    rng = random.Random(seed)
    rows = []
    for k in range(launches):
        block, grid = rng.choice((64, 256, 1024)), rng.randint(1, 70000)
        cells = [k + 1, 5188, "app", "127.0.0.1", rng.choice(KERNELS), 1, 7,
                 f"({block}, 1, 1)", f"({grid}, 1, 1)", "NVIDIA GeForce RTX 2080 Ti", "7.5"]
        values = [f"{rng.uniform(1, 900):.2f}", f"{block:,}", f"{grid:,}",
                  rng.randint(8, 255), f"{rng.uniform(0, 48):.2f}",
                  f"{rng.uniform(0.01, 900):.6f}", f"{rng.uniform(5, 100):.2f}",
                  f"{rng.uniform(0.5, 2):.2f}"]
        rows.append([",".join(map(_q, cells + [s, m, u, v]))
                     for (s, m, u), v in zip(METRICS, values)])
    lines = ["==PROF== Connected to process 5188 (/home/user/app)", DETAILS_HEADER]
    if order is None:
        order = [(k, slice(None)) for k in range(launches)]
    for k, part in order:
        lines += rows[k][part]
    return "\n".join(lines) + "\n"


def raw_page(launches: int, seed: int = 0) -> str:
    """The raw sample's header and units over ``launches`` rows of distinct numbers."""
    rng = random.Random(seed)
    lines = text(NCU_RAW).splitlines()
    head, body = lines[:7], lines[7:]
    out = []
    for k in range(launches):
        cells = body[k % len(body)].split('","')
        cells[0] = f'"{k + 1}'
        cells[12] = f"{rng.uniform(1, 900):.2f}"
        cells[24] = f"{rng.uniform(0.01, 99):.6f}"
        out.append('","'.join(cells))
    return "\n".join(head + out) + "\n"


def _outcome(read, content: str):
    try:
        r = read(content, "f.csv")
    except FormatError as exc:
        return "error", str(exc)
    return (json.dumps([x.to_json() for x in r.records]), r.noise_lines, r.other_rows,
            r.disagreements)


def _streamed(content, source):
    return import_text(content, source, "ncu")


MIXED = text(NCU_RAW) + "application output\n\n" + text(NCU_DETAILS) + text(NCU_RAW)
NO_ID = "".join(line.split(",", 1)[1] + "\n" if line.startswith('"') else line + "\n"
                for line in text(NCU_DETAILS).splitlines())
#: the second launch's first rows between the first launch's (a file edited by hand)
INTERLEAVED = details_page(3, 5, [(0, slice(0, 3)), (1, slice(0, 2)), (0, slice(3, None)),
                                  (2, slice(None)), (1, slice(2, None))])
def _body(content: str) -> str:
    """``content`` without its noise lines (tables back to back)."""
    return "".join(line + "\n" for line in content.splitlines() if line.startswith('"'))


#: tables that end at the next one's header, of the same width or not
BACK_TO_BACK = (_body(text(NCU_RAW)) + _body(text(NCU_DETAILS)) + _body(details_page(4, 1))
                + _body(text(NCU_RAW)) + _body(text(NCU_RAW)))
CONTENTS = {"back to back": BACK_TO_BACK, "raw": text(NCU_RAW), "details": text(NCU_DETAILS), "mixed": MIXED,
            "no ID": NO_ID, "interleaved": INTERLEAVED, "details page": details_page(150),
            "raw page": raw_page(300), "crlf": text(NCU_RAW).replace("\n", "\r\n"),
            "bom": "\ufeff" + text(NCU_DETAILS)}


@pytest.mark.parametrize("name", list(CONTENTS))
def test_the_streamed_records_are_the_whole_file_s(name):
    content = CONTENTS[name]
    streamed, whole = _outcome(_streamed, content), _outcome(import_whole, content)
    assert streamed[0] != "error", streamed
    assert streamed == whole


#: what an edit puts in place of a cell
EDITS = ["", " ", "0", "-5", "1_0", "inf", "nan", "1e999", "12us", "٣", "+7", " 64 ", "4,096",
         "1,2345", "n/a", "abc", "usecond", "Mbyte", "inst", "(1, 2)", "(0, 1, 1)", "x\"y",
         "Kernel Name", "Metric Value", "ID", "7.5", "1e-300", "%"]


def _edited_copies(content: str, count: int, seed: int):
    """Copies of ``content`` with one edit each: a cell of a quoted row replaced, a row cut
    short, a row dropped, a blank or noise line put in, a row given a stray quote."""
    lines = content.splitlines()
    rng = random.Random(seed)
    quoted = [k for k, line in enumerate(lines) if line.startswith('"')]
    for _ in range(count):
        k = rng.choice(quoted)
        edit = rng.randrange(6)
        new = list(lines)
        if edit <= 1:
            cells = new[k][1:-1].split('","')
            cells[rng.randrange(len(cells))] = rng.choice(EDITS).replace('"', '""')
            new[k] = '"' + '","'.join(cells) + '"'
        elif edit == 2:
            new[k] = new[k][:rng.randrange(len(new[k]))]
        elif edit == 3:
            del new[k]
        elif edit == 4:
            new.insert(k, rng.choice(["", "==PROF== done", "output"]))
        else:
            at = rng.randrange(len(new[k]))
            new[k] = new[k][:at] + '"' + new[k][at:]
        yield "\n".join(new) + "\n"


@pytest.mark.parametrize("name, seed", [("raw", 1), ("details", 2), ("mixed", 3),
                                        ("no ID", 4), ("details page", 5), ("raw page", 6),
                                        ("back to back", 7)])
def test_edited_copies_give_the_whole_file_s_records_or_error(name, seed):
    contents = list(_edited_copies(CONTENTS[name], 60, seed))
    outcomes = [(_outcome(_streamed, c), _outcome(import_whole, c)) for c in contents]
    for content, (streamed, whole) in zip(contents, outcomes):
        assert streamed == whole, content
    assert sum(s[0] == "error" for s, _w in outcomes) >= 5     # the edits reach the errors
    assert sum(s[0] != "error" for s, _w in outcomes) >= 5


@pytest.mark.parametrize("name", ["raw", "details", "back to back"])
def test_an_open_quote_is_the_error_of_its_row(name):
    lines = CONTENTS[name].splitlines()
    quoted = [k for k, line in enumerate(lines) if line.startswith('"')]
    for k in quoted[1:-1]:
        content = "\n".join(lines[:k] + [lines[k][:-1]] + lines[k + 1:]) + "\n"
        assert _outcome(_streamed, content) == _outcome(import_whole, content) == (
            "error", f"f.csv row {k + 1}: not a valid CSV line (unexpected end of data)")


@pytest.mark.parametrize("seed", range(3))
def test_a_plain_number_is_read_as_the_cell_reader_reads_it(seed):
    rng = random.Random(seed)
    texts = [t.strip() for t in EDITS if t.strip()] + [
        "1,900,544", "12,582.912", "1,2,3", ",5", "5,", "1e5", "1E-3", ".5", "5.", "-0", "+.5e+3",
        "1e400", "١٢", "0x10", "1_000", "infinity", "NaN", "12 %", "3.5e", "--1", "-inf",
        "+nan", "-Infinity", "+1,000,000.5", "-999,999"]
    texts += [f"{rng.uniform(-1e6, 1e6):,.{rng.randrange(0, 7)}f}" for _ in range(200)]
    texts += [format(rng.uniform(-1e300, 1e300), rng.choice(("g", "e", ".17g"))) for _ in range(200)]
    plain = 0
    for t in texts:
        try:
            value = ncu._value(t, "f.csv", 1, "c")
        except FormatError:
            value = "error"
        got = ncu._plain(t)
        assert got is None or (got == value and type(got) is type(value)), t
        plain += got is not None
    assert plain > 300


def _pulled(lines, counter):
    for line in lines:
        counter[0] += 1
        yield line


def test_a_raw_page_s_records_come_row_by_row():
    lines = raw_page(50).splitlines()
    pulled = [0]
    records = ncu.stream(_pulled(lines, pulled), "f.csv", ImportResult("ncu", "f.csv"))
    for k, record in enumerate(records):
        assert record.row == 8 + k and pulled[0] == record.row   # no line read ahead
    assert k == 49


def test_a_details_page_holds_at_most_held_launches():
    per = len(METRICS)
    launches = 3 * ncu.HELD_LAUNCHES
    lines = details_page(launches, 7).splitlines()
    pulled = [0]
    result = ImportResult("ncu", "f.csv")
    records = list(_records_with_pulled(ncu.stream(_pulled(lines, pulled), "f.csv", result),
                                        pulled))
    assert len(records) == launches
    for k, (record, at) in enumerate(records):
        assert record.row == 3 + k * per
        # (the record of launch k is made when launch k + HELD_LAUNCHES begins, or at the end)
        assert at == min(len(lines), 2 + (k + ncu.HELD_LAUNCHES) * per + 1)
    assert result.noise_lines == 1


def _records_with_pulled(records, pulled):
    for record in records:
        yield record, pulled[0]


def test_rows_of_a_launch_after_the_held_launches_are_a_record_of_their_own(monkeypatch):
    monkeypatch.setattr(ncu, "HELD_LAUNCHES", 2)
    # launch 1's last rows after launches 2 and 3 began: launch 1 was given already
    late = details_page(3, 9, [(0, slice(0, 4)), (1, slice(None)), (2, slice(None)),
                               (0, slice(4, None))])
    records = import_text(late, "f.csv").records
    assert [r.row for r in records] == [3, 7, 15, 23]
    assert records[0].time_s is not None and records[3].time_s is None
    assert set(records[0].metrics).isdisjoint(records[3].metrics)
    # within the held launches: one record, as the whole file gave
    near = details_page(3, 9, [(0, slice(0, 4)), (1, slice(None)), (0, slice(4, None)),
                               (2, slice(None))])
    assert _outcome(_streamed, near) == _outcome(import_whole, near)
    assert len(import_text(near, "f.csv").records) == 3


def test_a_raw_row_of_another_width_names_the_header_s_row():
    cut = "\n".join(text(NCU_RAW).splitlines()[:8]) + '\n"3","5120","saxpy2"\n'
    header = next(k for k, line in enumerate(cut.splitlines(), 1) if line.startswith('"ID"'))
    with pytest.raises(FormatError, match=rf"f.csv row 9: 3 fields for the 33 columns of the "
                                          rf"header at row {header} \("):
        import_text(cut, "f.csv")


def test_records_before_a_late_bad_row_are_given_then_its_error():
    launches = ncu.HELD_LAUNCHES + 36
    lines = details_page(launches, 3).splitlines()
    lines[-3] = lines[-3][:30]
    _result, records = stream_lines(lines, "f.csv")
    got = []
    with pytest.raises(FormatError, match=rf"f.csv row {len(lines) - 2}: \d+ fields for the 15 "):
        for record in records:
            got.append(record)
    # the launches whose records were due before the bad row (in the last launch)
    assert len(got) == launches - ncu.HELD_LAUNCHES
    assert [r.row for r in got] == [3 + k * len(METRICS) for k in range(len(got))]


def test_a_non_finite_metric_is_refused_when_its_record_is_given():
    lines = raw_page(5).splitlines()
    units = lines[6].split(",")
    units[24] = '"Tbyte"'                      # dram__bytes_read.sum
    cells = lines[9].split('","')
    cells[24] = "1e297"                        # x 1e12: beyond a float
    lines[6], lines[9] = ",".join(units), '","'.join(cells)
    content = "\n".join(lines) + "\n"
    assert _outcome(_streamed, content) == _outcome(import_whole, content) == (
        "error", "f.csv row 10: metrics.dram__bytes_read.sum.value is not a finite number (it "
        "overflowed: the value times its unit is beyond about 1.8e308); give the measured "
        "value in a unit that keeps it finite")
    result, records = stream_lines(lines, "f.csv")
    assert [r.row for r in (next(records), next(records))] == [8, 9]   # the rows before it
    with pytest.raises(FormatError, match="row 10: metrics"):
        next(records)
