"""The streaming measurement readers: lines from a file read in pieces are the lines of the
whole text, records come as lines are read (nothing held whole), and each reader's fast row
path gives what its reference row reader gives (the same records, counts and disagreements,
or the same error) on the sample files and on edited copies of them."""
import random
from dataclasses import fields

import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements import nvprof, nvprof_chunks, timings
from gpumodeler.core.measurements.importer import import_text, stream_lines
from gpumodeler.core.measurements.parsing import SPACES, Remembered, text_lines
from gpumodeler.core.measurements.records import FIELD_DEFAULTS, Measurement, from_fields

from measurement_samples import SAMPLES, TIMINGS, TRACE, distinct_timings, distinct_trace, text

PIECES = ["a,b\n", "\r\n", "x\r", "\ny", "\u2028", "z\x85", "", "\n\n", "\r", "é,1", "\x0c",
          "\ufeff", " ,\t"]


@pytest.mark.parametrize("seed", range(40))
def test_lines_of_pieces_are_the_lines_of_the_whole(seed):
    rng = random.Random(seed)
    whole = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 30)))
    cuts = sorted(rng.sample(range(len(whole) + 1), min(len(whole) + 1, rng.randrange(0, 8))))
    chunks = [whole[a:b] for a, b in zip([0] + cuts, cuts + [len(whole)])]
    assert "".join(chunks) == whole
    assert list(text_lines(chunks)) == whole.splitlines()


def test_a_record_from_its_fields_is_the_dataclass_record():
    assert list(FIELD_DEFAULTS) == [f.name for f in fields(Measurement)]
    values = dict(FIELD_DEFAULTS, kind="transfer", time_s=1e-3, name="[CUDA memcpy HtoD]",
                  direction="htod", size_bytes=4096.0, metrics={"throughput": (1e9, "B/s")},
                  source="t.csv", row=7, stream=3)
    made = from_fields(dict(values))
    assert made == Measurement(**values) and made.to_json() == Measurement(**values).to_json()
    with pytest.raises(AttributeError):   # still frozen
        made.time_s = 2.0


def _pulled(lines, counter):
    for line in lines:
        counter[0] += 1
        yield line


@pytest.mark.parametrize("path, head", [(TRACE, 0), (TIMINGS, 2)])
def test_records_come_as_lines_are_read(path, head):
    lines = text(path).splitlines()
    lines = lines[:head] + lines[head:] * 200
    pulled = [0]
    result, records = stream_lines(_pulled(lines, pulled), "f.csv")
    first = next(records)
    assert first.row is not None and pulled[0] < 450      # the format's look-ahead, no more
    rest = list(records)
    assert pulled[0] == len(lines)
    whole = import_text("\n".join(lines), "f.csv")
    assert [first] + rest == whole.records
    assert (result.noise_lines, result.other_rows, result.disagreements) == (
        whole.noise_lines, whole.other_rows, whole.disagreements)


def _outcome(content: str):
    try:
        r = import_text(content, "f.csv")
    except FormatError as exc:
        return "error", str(exc)
    return ([x.to_json() for x in r.records], r.records, r.noise_lines, r.other_rows,
            r.disagreements)


def _reference(monkeypatch):
    """Every row read by the reference row readers."""
    monkeypatch.setattr(nvprof_chunks.TraceTable, "_row_reader", lambda self: lambda f, n: nvprof_chunks.SLOW)
    monkeypatch.setattr(timings._Table, "_row_reader", lambda self: lambda f, n: timings.SLOW)


#: cell texts an edit puts in place of a number, a word or a name
EDITS = ["", " ", "0", "-5", "1_0", "inf", "nan", "1e999", "-1e999", "4096.0", "12us", "٣",
         "+7", " 64 ", "0.5", "1e-300", "abc", "[CUDA memset]", "[CUDA memcpy PtoP]",
         "[CUDA memcpy XtoY]", "Pinned", "device", "PINNED", "16x16", "2x0", "migration",
         "TRANSFER", "dtod", "µs", "KiB", "GB", "%", "3.2ms", "4MiB", "2.441406e-03", "1e5",
         "1.000000", "Pageable", "Unknown", "managed", "ptop", "HtoD"]


def _edited_copies(content, per_column, seed):
    """Copies of ``content`` with ``per_column`` edits of each column (of a random data row,
    with a second cell of that row edited in half of them)."""
    lines = content.splitlines()
    rng = random.Random(seed)
    data = [k for k, line in enumerate(lines) if "," in line and not line.startswith(('"', "#"))
            and not line.startswith(("kind", "us", "ms", "ns,"))]
    columns = max(len(lines[k].split(",")) for k in data)
    for column in range(columns):
        for _ in range(per_column):
            k = rng.choice(data)
            cells = lines[k].split(",")
            cells[column % len(cells)] = rng.choice(EDITS)
            if rng.random() < 0.5:
                cells[rng.randrange(len(cells))] = rng.choice(EDITS)
            yield "\n".join(lines[:k] + [",".join(cells)] + lines[k + 1:]) + "\n"


def _timings_with_a_metric_column() -> str:
    """The timings sample with a metric column whose name gives no unit."""
    lines = text(TIMINGS).splitlines()
    return "\n".join(lines[:2]) + ",occupancy\n" + "".join(
        f"{line},{k * 7}%\n" for k, line in enumerate(lines[2:]))


def _trace_with_an_extra_column() -> str:
    """The trace sample with a column nvprof writes in some versions only, in us (a metric
    of each row)."""
    out, header = [], False
    for line in text(TRACE).splitlines():
        if line.startswith('"Start"'):
            line, header = line + ',"Queued"', True
        elif header:
            line, header = line + ",us", False
        elif line[:1].isdigit():
            line += f",{len(out) % 7}.25"
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("content, seed", [
    (text(TRACE), 1), (text(TIMINGS), 2), (text(SAMPLES / "synthetic-pageable-copies.csv"), 3),
    (_timings_with_a_metric_column(), 4), (_trace_with_an_extra_column(), 5)],
    ids=["trace", "timings", "copies", "metrics", "extra"])
def test_the_fast_rows_are_the_reference_rows(monkeypatch, content, seed):
    contents = [content] + list(_edited_copies(content, 8, seed))
    fast = [_outcome(c) for c in contents]
    _reference(monkeypatch)
    slow = [_outcome(c) for c in contents]
    for content, a, b in zip(contents, fast, slow):
        assert a == b, content
    assert sum(a[0] == "error" for a in fast) > 10          # the edits reach the error paths
    assert sum(a[0] != "error" for a in fast) > 10
    if "Queued" in content:      # the extra column is read, in seconds
        assert fast[0][1][0].metrics["Queued"] == (pytest.approx(0.25e-6, abs=7e-6), "s")


def test_a_repeated_size_text_in_another_table_takes_that_table_s_unit():
    """The fast copy reader remembers a size's text per table: 4096.000000 is 4 MiB under
    KB and 4 GiB under MB."""
    head = ('"Start","Duration","Size","Throughput","Device","Name"\n{u},us,{s},GB/s,,\n'
            '1.0,100.0,4096.000000,,GPU (0),[CUDA memcpy HtoD]\n')
    r = import_text(head.format(u="us", s="KB") + "\n" + head.format(u="us", s="MB"), "f.csv")
    assert [x.size_bytes for x in r.records] == [4 * 2 ** 20, 4 * 2 ** 30]


def test_the_spaces_are_every_character_strip_strips():
    """The trace reader's quick test of a table's end relies on SPACES holding every
    character str.strip strips."""
    assert SPACES == {c for c in map(chr, range(0x110000)) if ("x" + c).strip() == "x"}


@pytest.mark.parametrize("make", [distinct_trace, distinct_timings])
def test_the_fast_rows_of_distinct_values_are_the_reference_rows(monkeypatch, make):
    """Every number differs from row to row (nothing a reader remembers helps), one size is
    written in several units, and odd numbers (negative zero, exponents, many digits, whole
    numbers with and without a point) take rows off the common path or onto its edges."""
    contents = [make(7, seed) for seed in range(80)] + [make(300, 99, odd=False)]
    fast = [_outcome(c) for c in contents]
    _reference(monkeypatch)
    slow = [_outcome(c) for c in contents]
    for content, a, b in zip(contents, fast, slow):
        assert a == b, content
    assert sum(a[0] == "error" for a in fast) > 10
    assert sum(a[0] != "error" for a in fast) > 10


@pytest.mark.parametrize("make", [distinct_trace, distinct_timings])
def test_plain_distinct_rows_never_reach_the_reference_reader(monkeypatch, make):
    """The common case stays on the fast path: no row of plain decimals is read by the
    reference row reader (which would cost several times as much)."""
    def refused(*args):
        raise AssertionError("a plain row was read by the reference reader")
    monkeypatch.setattr(nvprof, "trace_row", refused)
    monkeypatch.setattr(timings, "_row", refused)
    assert len(import_text(make(400, 5, odd=False), "f.csv").records) == 400


def test_a_memory_of_parsed_texts_is_given_up_when_it_does_not_pay():
    """parsing.Remembered: kept while it has at least as many hits as misses between two
    clearings, given up (never consulted again) otherwise; never larger than its size."""
    memory = Remembered(4)
    for k in range(4):                # four misses, then four hits: it pays
        memory.keep(k, str(k))
    memory.hits += 4
    memory.keep(4, "4")
    assert memory.use and dict(memory) == {4: "4"} and memory.hits == 0
    for k in range(5, 8):             # four misses since the clearing, no hit
        memory.keep(k, str(k))
    memory.keep(8, "8")
    assert not memory.use and len(memory) == 0
    memory.keep(9, "9")
    assert len(memory) == 0


def test_repeated_and_distinct_launches_and_sizes_read_alike(monkeypatch):
    """A trace whose launches and sizes repeat, then all differ, then repeat again (the
    memories of launch and size texts kept, then given up) reads as the reference reader
    reads it."""
    monkeypatch.setattr(nvprof_chunks, "CACHE", 8)
    lines = distinct_trace(200, 11, odd=False).splitlines()
    head, rows = lines[:5], [line for line in lines[5:] if line[:1].isdigit()]
    content = "\n".join(head + rows[:10] * 6 + rows + rows[:10] * 6) + "\n"
    fast = _outcome(content)
    _reference(monkeypatch)
    assert fast == _outcome(content) and fast[0] != "error"


#: lines put among a trace's rows: a quoted line break, a header with no blank line before
#: it, a bad CSV line, a row of another width, a row of another kind, a noise line
INSERTS = ['1.0,2.0,4096,1,1,256,1,1,64,0.000000,0.000000,,,,,GeForce GTX 970 (0),1,7,'
           '"saxpy2(int,\nfloat)",9',
           None,      # (the trace's header and a unit row)
           '1.0,2.0,,,,,,,,,,4.0,0.1,Pageable,Device,"GPU"x,1,7,[CUDA memcpy HtoD],9',
           '1.0,2.0,,,,,,,,,,4.0,0.1,Pageable,Device,GPU,1,7,[CUDA memcpy HtoD]',
           '1.0,2.0,,,,,,,,,,4.0,,,,GPU,1,7,[CUDA memset],9',
           '==4101== Warning: something',
           '1.0,2.0,,,,,,,,,,4.0e3,0.1,Pageable,Device,GPU,1,7,[CUDA memcpy HtoD],9',
           '1.0,2.0,4096,1,1,256,1,1,,0.000000,0.000000,,,,,GPU,1,7,k(),9']


@pytest.mark.parametrize("insert", range(len(INSERTS)))
def test_rows_read_a_chunk_at_a_time_are_the_rows_read_one_by_one(monkeypatch, insert):
    """The trace reader reads plain rows a chunk at a time (nvprof.FIRST_ROWS, doubling up
    to ROWS_AT_ONCE): a line anywhere in a chunk, at its edges or across two, that is off
    the common case gives the records, counts, disagreements or error that reading every
    row by the reference reader gives."""
    lines = distinct_trace(300, 7, odd=False).splitlines()
    header, units = lines[3], lines[4]
    contents = []
    for at in (5, 6, 20, 21, 36, 52, 53, 100, 180, 181, 299):
        added = [header, units] if INSERTS[insert] is None else [INSERTS[insert]]
        contents.append("\n".join(lines[:at] + added + lines[at:]) + "\n")
    fast = [_outcome(c) for c in contents]
    _reference(monkeypatch)
    slow = [_outcome(c) for c in contents]
    for content, a, b in zip(contents, fast, slow):
        assert a == b, content


def test_plain_rows_are_read_a_chunk_at_a_time(monkeypatch):
    """No plain row of a trace of distinct values is read one at a time (by the fast row
    reader, nor the reference reader)."""
    made = nvprof_chunks.TraceTable._row_reader
    calls = [0]

    def counted(self):
        row = made(self)

        def one(f, n):
            calls[0] += 1
            return row(f, n)
        one.rows = row.rows
        return one
    monkeypatch.setattr(nvprof_chunks.TraceTable, "_row_reader", counted)
    # (sizes with an exponent are read one at a time: a half unit of their own)
    lines = [line for line in distinct_trace(400, 5, odd=False).splitlines()
             if not ("[CUDA memcpy" in line and "e" in line.split(",")[11])]
    rows = sum(line[:1].isdigit() for line in lines)
    assert rows > 250
    assert len(import_text("\n".join(lines) + "\n", "f.csv").records) == rows
    assert calls[0] == 0


#: texts put in one launch column of every kernel row (a column of one text: converted once)
ONE_TEXT = ["1", "7", "0", "-3", "1.0", "1_0", " 2", "abc", "", "0.000000", "-0.000000",
            "1e999", "12.500000", "nan", "99999999999999999999"]


@pytest.mark.parametrize("column", [3, 4, 5, 7, 8, 9, 10])
def test_a_launch_column_of_one_text_is_read_as_the_reference_reads_it(monkeypatch, column):
    """A grid, block, registers or shared memory column holding one text in every kernel row
    (a launch's y and z, dynamic shared memory: most traces) is converted once per chunk
    and gives the records, or the error, of the reference reader; so does a text int() or
    float() refuses, or one out of range."""
    lines = distinct_trace(300, 7, odd=False).splitlines()
    contents = []
    for one in ONE_TEXT:
        edited = []
        for line in lines:
            cells = line.split(",")
            if line[:1].isdigit() and cells[2]:       # (a kernel row)
                cells[column] = one
            edited.append(",".join(cells))
        contents.append("\n".join(edited) + "\n")
    fast = [_outcome(c) for c in contents]
    _reference(monkeypatch)
    slow = [_outcome(c) for c in contents]
    for content, a, b in zip(contents, fast, slow):
        assert a == b, content
    assert sum(a[0] != "error" for a in fast) >= 2


#: texts put in a timings kernel row's grid, block, registers or shared memory cell
LAUNCH_TEXTS = ["0", "1", "-1", "+4", " 64 ", "4096.0", "1_0", "\u0663", "\u00b2", "16x16", "2x0",
                "(8, 8)", "abc", "", "1e3", "99999999999999999999",
                "123456789012345678901234567890"]


@pytest.mark.parametrize("column", [5, 6, 11, 13])
def test_a_timings_launch_cell_is_read_as_the_reference_reads_it(monkeypatch, column):
    """Each odd text in a kernel's grid, block, registers or shared memory cell (a column
    added to the sample's) gives the record, or the error, of the reference reader."""
    lines = distinct_timings(12, 3, odd=False).splitlines()
    lines = [lines[0] + ",shared_mem"] + [line + ",1024" for line in lines[1:]]
    kernels = [k for k, line in enumerate(lines) if line.startswith("kernel")]
    contents = []
    for one in LAUNCH_TEXTS:
        for at in kernels[:2]:
            cells = lines[at].split(",")
            cells[column] = one
            contents.append("\n".join(lines[:at] + [",".join(cells)] + lines[at + 1:]) + "\n")
    fast = [_outcome(c) for c in contents]
    _reference(monkeypatch)
    slow = [_outcome(c) for c in contents]
    for content, a, b in zip(contents, fast, slow):
        assert a == b, content
    assert sum(a[0] == "error" for a in fast) >= 4
    assert sum(a[0] != "error" for a in fast) >= 4
