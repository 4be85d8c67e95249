"""`measure import --json` of an nvprof trace writes the rows of the chunk path straight from
their columns (JsonLines.kernels and copies, the reader's formatter), without their records:
on awkward input those lines, the counts, the disagreements and the errors are what the
reference row reader and the standard library's encoder give."""
import io
import json
import random
import sys
from pathlib import Path

from gpumodeler.cli import measure_stream
from gpumodeler.cli.main import main
from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements import nvprof_chunks
from gpumodeler.core.measurements.importer import import_text, stream_lines, text_lines

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "core"))
from measurement_samples import distinct_trace, text, TRACE  # noqa: E402
ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _command(path) -> tuple:
    """(exit status, stdout, stderr) of ``measure import PATH --json``."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = main(["measure", "import", str(path), "--json"])
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def _reference(monkeypatch):
    """Every trace row read by the reference row reader (no chunk path, no formatter)."""
    monkeypatch.setattr(nvprof_chunks.TraceTable, "_row_reader",
                        lambda self: lambda f, n: nvprof_chunks.SLOW)


def _made(content: str) -> int:
    """How many rows the formatter wrote (the rest came as records)."""
    lines = measure_stream.JsonLines()
    _result, items = stream_lines(text_lines([content]), "f.csv", formatter=lines)
    try:
        items = list(items)
    except FormatError:
        return 0
    assert sum(type(x) is str for x in items) == sum(lines.made.values())
    return sum(lines.made.values())


#: kernel names and GPUs as CSV cells: quotes, backslashes, control characters, non-ASCII
#: and non-BMP text, an empty GPU (null in JSON)
NAMES = ['"k\\e""r<n>\x07el\t(\u00e9, \U0001d6fc)"', '"\u044f\u0434\u0440\u043e"',
         '"a""b"', "x", '"[CUDA memcpy"']
GPUS = ["GeForce GTX 970 (0)", "", '"\u00e9\u00e8 \U0001f600"', '"G\\PU\x07 ""0"""']
#: 17 digits and more, huge, whole: plain decimals the chunk path takes
DIGITS = ["0.30000000000000004", "1234567.8901234567", "123456789012345678.5",
          "1.0000000000000002", "9" * 40 + ".5", "1.000000", "4096", "0.1", "12.000001"]
#: the columns of floats in the trace (Duration, shared memory, Size, Throughput)
FLOATS = [1, 9, 10, 11, 12]
SAXPY = '"saxpy2(int, float, float const *, float*, int)"'


def _awkward(seed: int) -> str:
    """A distinct trace (two tables, the second in ms and MB) with odd names and GPUs, many
    digits, in some files odd numbers (exponents, negative zero, beyond a float) or a cell
    float() reads and the reader refuses (inf, nan, 1_0), or a column left out."""
    rng = random.Random(seed)
    out = []
    for line in distinct_trace(80, seed, odd=seed % 4 == 0).splitlines():
        if line[:1].isdigit():
            cells = line.split(",")       # (the numbers come before the name's commas)
            if "e" in cells[11] and seed % 4:     # (a size with an exponent: row by row)
                cells[11] = f"{float(cells[11]):.6f}"
            for k in FLOATS:
                if cells[k] and rng.random() < 0.1:
                    cells[k] = rng.choice(DIGITS)
            line = ",".join(cells)
            if rng.random() < 0.3:
                line = line.replace(SAXPY, rng.choice(NAMES))
            if rng.random() < 0.3:
                line = line.replace("GeForce GTX 970 (0)", rng.choice(GPUS))
        out.append(line)
    if seed % 5 == 2:
        k = rng.choice([k for k, line in enumerate(out) if line[:1].isdigit()])
        cells = out[k].split(",")
        cells[rng.choice(FLOATS[:1] + FLOATS[3:])] = rng.choice(["inf", "nan", "1_0", "-0.0"])
        out[k] = ",".join(cells)
    if seed % 3 == 1:       # (a column left out: older nvprof, one GPU, no registers...)
        out = _without(out, rng.choice(["SrcMemType", "DstMemType", "Device", "Throughput",
                                        "Registers Per Thread", "Static SMem"]))
    return "\n".join(out) + "\n"


def _plain(rows: int, seed: int) -> str:
    """A distinct trace of plain decimals (a size with an exponent is read row by row: a half
    unit of its own)."""
    out = []
    for line in distinct_trace(rows, seed, odd=False).splitlines():
        cells = line.split(",")
        if line[:1].isdigit() and "e" in cells[11]:
            cells[11] = f"{float(cells[11]):.6f}"
        out.append(",".join(cells))
    return "\n".join(out) + "\n"


def _without(lines: list, column: str) -> list:
    """The trace's lines with ``column`` left out of every table (by CSV, names quoted)."""
    import csv
    out, at = [], None
    for line in lines:
        if line.startswith('"Start"'):
            header = next(csv.reader([line]))
            at = header.index(column)
        if at is None or not line or line.startswith("="):
            out.append(line)
            continue
        cells = next(csv.reader([line]))
        del cells[at]
        buffer = io.StringIO()
        csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="").writerow(cells)
        out.append(buffer.getvalue())
    return out


def _compared(monkeypatch, tmp_path, contents) -> list:
    """The command's (status, stdout, stderr) for each content, checked equal to the
    reference reader's; the reference's stdout checked to be the encoder's list."""
    path = tmp_path / "t.csv"
    fast = []
    for content in contents:
        path.write_text(content, encoding="utf-8")
        fast.append(_command(path))
    with monkeypatch.context() as m:
        _reference(m)
        for content, got in zip(contents, fast):
            path.write_text(content, encoding="utf-8")
            assert got == _command(path), content
            if got[0] == 0:
                records = import_text(content, "t.csv").records
                assert got[1] == "[\n" + ",\n".join(
                    ENCODE(r.to_json()) for r in records) + "\n]\n"
    return fast


def test_lines_from_columns_are_the_reference_s(monkeypatch, tmp_path):
    contents = [_awkward(seed) for seed in range(36)]
    fast = _compared(monkeypatch, tmp_path, contents)
    assert sum(code == 0 for code, _o, _e in fast) > 10
    assert sum(code == 2 for code, _o, _e in fast) > 5          # (inf, nan, 1_0...)
    made = [_made(c) for c in contents]
    assert sum(m > 20 for m in made) > 10, made                  # the formatter wrote most rows


def test_a_plain_trace_is_written_from_its_columns(monkeypatch, tmp_path):
    """Every row of a plain distinct trace (two tables of other units) is written by the
    formatter, and the document, counts and disagreements are the reference's."""
    content = _plain(500, 2)
    rows = sum(line[:1].isdigit() for line in content.splitlines())
    assert _made(content) == rows
    edited = content.replace("GeForce GTX 970 (0)", "\u00e9\U0001f600 \"GPU\"\\")
    # (columns left out: older nvprof, no device, registers, shared memory or throughput)
    fewer = [_without(content.splitlines(), c) for c in (
        "SrcMemType", "DstMemType", "Device", "Registers Per Thread", "Static SMem",
        "Throughput")]
    fewer.append(_without(_without(fewer[-2], "Dynamic SMem"), "Registers Per Thread"))
    fewer = ["\n".join(lines) + "\n" for lines in fewer]
    for c in fewer:
        assert _made(c) == rows
    fast = _compared(monkeypatch, tmp_path, [content, edited, content.replace(",1,7,", ",,,")]
                     + fewer)
    assert all(code == 0 for code, _o, _e in fast)
    # (the generator's throughputs disagree with size / duration: reported by the chunk path)
    assert fast[0][2].count("column Throughput") > 300


def test_repeated_rows_are_written_from_remembered_cells(monkeypatch, tmp_path):
    """Launches and sizes taken from the readers' memories (repeated rows, the sample's
    tables with rows of every kind) are written as the reference writes them."""
    sample = text(TRACE)
    lines = _plain(40, 4).splitlines()
    rows = [line for line in lines[5:] if line[:1].isdigit()]
    repeated = "\n".join(lines[:5] + rows[:7] * 40) + "\n"
    fast = _compared(monkeypatch, tmp_path, [sample, repeated])
    assert [code for code, _o, _e in fast] == [0, 0]
    assert _made(repeated) == 280


def test_a_bad_row_past_the_first_records_ends_the_list_there(monkeypatch, tmp_path):
    """Rows written from their columns, then a bad row: the lines before it, then one error
    line, as the reference gives them."""
    monkeypatch.setattr(measure_stream, "HEAD", 20)
    monkeypatch.setattr(measure_stream, "WRITE_LINES", 7)
    lines = _plain(300, 9).splitlines()
    for at in (150, 160, 290):
        cells = lines[at].split(",")
        cells[1] = "nan"
        bad = lines[:at] + [",".join(cells)] + lines[at + 1:]
        code, out, err = _compared(monkeypatch, tmp_path, ["\n".join(bad) + "\n"])[0]
        assert code == 2 and err.count("\n") == 1 and f"row {at + 1}" in err
        assert out.count("\n") > 100
