"""`measure import` written as it is read: the --json lines are the standard library's
encoding of each record, the text table is the table the whole file gave (for a file of at
most HEAD records), the file is read in blocks as a whole read would read it, and a bad row
past the first HEAD records still ends the command with one error line."""
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpumodeler.cli import common, measure_stream
from gpumodeler.cli.cmd_measure import read_file
from gpumodeler.cli.main import main
from gpumodeler.cli.measure_stream import JsonLines, file_chunks, write_json
from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.records import Measurement

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "core"))
from measurement_samples import distinct_timings, distinct_trace  # noqa: E402
SAMPLES = ROOT / "resources" / "measurements"
ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _old_table(records, result) -> str:
    """The text output as measure import printed it when it read the whole file first."""
    def size(n):
        if n is None:
            return ""
        for unit, f in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
            if n >= f:
                return f"{n / f:.4g} {unit}"
        return f"{n:g} B"
    streams = any(r.stream is not None for r in records)
    rows = [("row", "kind", "dir", "name", "gpu", "launch / size", "time", "memory", "metrics")
            + (("stream", "start") if streams else ())]
    for r in records:
        launch = ((f"{'x'.join(map(str, r.grid))} x {'x'.join(map(str, r.block))}"
                   if r.grid and r.block else "") if r.kind == "kernel" else size(r.size_bytes))
        name = r.name if len(r.name) <= 40 else r.name[:37] + "..."
        rows.append((str(r.row), r.kind, r.direction, name, r.gpu, launch,
                     "" if r.time_s is None else common.fmt_time(r.time_s), r.memory_kind,
                     str(len(r.metrics)) if r.metrics else "")
                    + ((("" if r.stream is None else str(r.stream)),
                        "" if r.start_s is None else f"{r.start_s:.9f} s") if streams else ()))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    counts = ", ".join(f"{n} {k}{'s' if n != 1 else ''}"
                       for k, n in sorted(result.counts().items()))
    out.append(f"{result.source} ({result.format}): {counts}; {result.noise_lines} noise "
               f"line(s) skipped; {result.other_rows} row(s) of other kinds skipped; "
               f"{len(result.disagreements)} unit disagreement(s)")
    out += [f"  row {d.row}, column {d.column}: {d.message}" for d in result.disagreements]
    return "\n".join(out) + "\n"


def _nsys(tmp_path):
    from nsys_exports import A100, SAXPY, copy, kernel, write_export
    return write_export(tmp_path / "r.sqlite",
                        kernels=[kernel(100, 900, SAXPY), kernel(2000, 2600, SAXPY, stream=9)],
                        copies=[copy(10, 90, 4096, 1), copy(1000, 1500, 8192, 2),
                                copy(3000, 3100, 3 * 2 ** 20, 11)],
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])


CSV = sorted(p.name for p in SAMPLES.glob("*.csv"))


@pytest.mark.parametrize("name", CSV)
def test_the_text_table_is_the_whole_file_s_table(capsys, name):
    path = str(SAMPLES / name)
    assert main(["measure", "import", path]) == 0
    out = capsys.readouterr().out
    result = read_file(path)
    assert out == _old_table(result.records, result)


@pytest.mark.parametrize("name", CSV)
def test_json_lines_are_the_encoder_s(capsys, name):
    path = str(SAMPLES / name)
    assert main(["measure", "import", path, "--json"]) == 0
    out = capsys.readouterr().out
    records = read_file(path).records
    assert out == "[\n" + ",\n".join(ENCODE(r.to_json()) for r in records) + "\n]\n"


def test_nsys_records_and_odd_values_are_encoded_as_the_encoder_does(tmp_path):
    records = list(read_file(str(_nsys(tmp_path))).records)
    base = records[0]
    odd = [Measurement(kind="kernel", time_s=None, name='100% "quoted" \\ %s %r {p0} {v0!r}\n', gpu="é",
                       metrics={"a%": (1.5, "%"), "b": (2, "1"), "c": (None, "x")},
                       source="s%d", row=None),
           Measurement(kind="transfer", time_s=1e-300, size_bytes=1e16, direction="dtoh",
                       memory_kind="pinned", stream="7", device=1.5, start_s=0.0, end_s=5e-324,
                       source="f", row=3),
           Measurement(kind="transfer", time_s=2.5e-6, size_bytes=4096.0, direction="htod",
                       stream=True, source="f", row=4),
           Measurement(kind="kernel", time_s=1.0, name="\x00varying\x00", grid=(), block=(1,),
                       registers_per_thread=0, shared_mem_bytes=0, source="f", row=0)]
    line = JsonLines()
    for r in records + odd + records:      # the second pass: the templates are reused
        text, kind = line(r)
        assert text == ENCODE(r.to_json()) and kind == r.kind
    assert base.stream is not None


def test_a_number_beyond_a_float_is_refused_as_the_encoder_refuses_it():
    line = JsonLines()
    for value in (math.inf, -math.inf, math.nan):
        r = Measurement(kind="kernel", time_s=value, source="f", row=1)
        with pytest.raises(ValueError):
            ENCODE(r.to_json())
        with pytest.raises(ValueError):
            line(r)
    ok = Measurement(kind="transfer", time_s=1e308, size_bytes=1e308, source="f", row=1)
    assert line(ok)[0] == ENCODE(ok.to_json())     # their sum is beyond a float, each is not


def test_the_times_are_common_fmt_time():
    values = [0.0, -0.0, 1e-9, 9.999995e-4, 1e-3, 0.999999, 0.9999996, 1.0, 12.5, 1e6,
              -2e-3, math.inf, -math.inf, math.nan, 5e-324, 71.288354e-6]
    values += [10.0 ** (k / 7) for k in range(-70, 20)]
    for v in values:
        assert measure_stream._time(v) == common.fmt_time(v), v


def test_nsys_text_and_json_match_the_whole_export(capsys, tmp_path):
    path = str(_nsys(tmp_path))
    assert main(["measure", "import", path]) == 0
    out = capsys.readouterr().out
    result = read_file(path)
    table = _old_table(result.records, result).splitlines()
    assert out.splitlines()[:len(table) - 1] == table[:-1]     # the rows; then counts, GPUs
    assert main(["measure", "import", path, "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == [r.to_json() for r in result.records]


def _trace(rows: int) -> str:
    lines = (SAMPLES / "nvprof-gpu-trace-multirun.csv").read_text().splitlines()
    body = [line for line in lines[5:11] if "memset" not in line]
    return "\n".join(lines[:5] + (body * (rows // len(body) + 1))[:rows]) + "\n"


def test_past_the_first_records_a_wider_cell_widens_its_column(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(measure_stream, "HEAD", 1)
    path = tmp_path / "t.csv"
    path.write_text(_trace(5))       # copy, copy, kernel (a longer name), kernel, copy
    assert main(["measure", "import", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = [line.index("GeForce") for line in lines[1:6]]
    assert at[0] == at[1] < at[2] == at[3] == at[4], lines
    assert lines[0].index("gpu") == at[0]


def test_a_bad_row_after_the_first_records_is_one_error_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(measure_stream, "HEAD", 4)
    monkeypatch.setattr(measure_stream, "WRITE_LINES", 2)
    lines = _trace(20).splitlines()
    lines[15] = lines[15].replace(",", ",x", 1)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    for extra in ([], ["--json"]):
        assert main(["measure", "import", str(path), *extra]) == 2
        out, err = capsys.readouterr()
        assert err.count("\n") == 1 and "t.csv row 16, column Duration" in err, err
        assert out.count("\n") >= 4, (out, err)   # what was read before it was written
    monkeypatch.setattr(measure_stream, "HEAD", 2000)
    assert main(["measure", "import", str(path), "--json"]) == 2
    assert capsys.readouterr().out == ""       # within the first records: nothing written


def _chunks(data: bytes, monkeypatch, size: int):
    monkeypatch.setattr(measure_stream, "CHUNK_BYTES", size)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return "".join(file_chunks("-"))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_the_file_read_in_blocks_is_the_file(monkeypatch, size):
    data = "\ufeffkind,time,unit,name\nkernel,1,us,µ-é-€-𝄞\r\nkernel,2,us,x\r".encode()
    assert _chunks(data, monkeypatch, size) == data.decode("utf-8-sig")


@pytest.mark.parametrize("data, cap, message", [
    (b"kind,time\n" + b"\xff\xfe" + b"x" * 50, 1000, "not a text file"),
    (b"kind,time\n\x00", 1000, "not a text file"),
    (b"\x00" * 5000, 1000, "more than"),
    (b"x" * 100 + b"\xff" + b"y" * 5000, 1000, "more than"),     # size first, as a whole read
    (b"kind,time\n\xe2\x82", 1000, "not a text file"),          # cut in a character
])
def test_what_is_not_a_measurement_file_is_one_error(monkeypatch, data, cap, message):
    from gpumodeler.cli.main import CLIError
    monkeypatch.setattr(common, "MAX_INPUT_BYTES", cap)
    with pytest.raises(CLIError, match=message):
        _chunks(data, monkeypatch, 64)


def test_infinite_shared_memory_is_one_error_line(capsys, tmp_path):
    lines = _trace(4).splitlines()
    k = next(i for i, line in enumerate(lines) if '"saxpy2' in line)
    lines[k] = lines[k].replace(",64,0.000000,", ",64,1e999,", 1)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    assert main(["measure", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"row {k + 1}, column Static SMem" in err, err
    out = io.StringIO()
    assert write_json([], out) == {} and out.getvalue() == "[]\n"


def test_measure_import_loads_neither_numpy_nor_the_database_layer(tmp_path):
    """Start-up is a tenth of the CPU time of a 10^5-row import: reading a CSV file or an
    Nsight Systems export (with no log beside it) loads no numpy and no sqlite-utils."""
    export = _nsys(tmp_path)
    probe = ("import sys; from gpumodeler.cli.main import main; "
             f"assert main(['measure', 'import', {str(SAMPLES / 'timings.csv')!r}]) == 0; "
             f"assert main(['measure', 'import', {str(export)!r}, '--json']) == 0; "
             "sys.stderr.write(repr(sorted({'numpy', 'sqlite_utils'} & set(sys.modules))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stderr.splitlines()[-1] == "[]", done.stderr


class _Text(str):
    """A str subclass: the line's formats leave it to the encoder."""


_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.1 + 0.2, 1 / 3, 5e-324, 2.2250738585072014e-308, 1e-300,
           1e-7, 1e-5, 7.1288354e-05, 123456789.0, 4294967296.0, 1e15, 9999999999999998.0,
           1e16, 1.0000000000000002e16, 2.0 ** 53 + 2, 1e22, 1.7976931348623157e308, -2.5e-6]


@pytest.mark.parametrize("value", _FLOATS)
def test_floats_are_written_as_the_encoder_writes_them(value):
    """Negative zero, exponents either way, 17 significant digits, whole floats below and
    above 10^16: each float field, and a metric's value, as the encoder writes it."""
    line = JsonLines()
    records = [Measurement(kind="transfer", time_s=value, size_bytes=value, direction="htod",
                           source="f", row=1, start_s=value, end_s=-value,
                           metrics={"throughput": (value, "B/s")}),
               Measurement(kind="kernel", time_s=value, grid=(1, 2, 3), block=(4, 5, 6),
                           registers_per_thread=32, shared_mem_bytes=0, source="f", row=2,
                           stream=7, device=0, start_s=value, end_s=value)]
    for r in records * 2:
        assert line(r)[0] == ENCODE(r.to_json())


@pytest.mark.parametrize("grid", [(), (1,), (7, 8), (1, 2, 3), (1, 2, 3, 4), tuple(range(1, 10)),
                                  (True, 1, 1), (1.0, 1, 1), (2 ** 70, 1, 1), (-1, 0, 1),
                                  [1, 2, 3], (1, "2", 3), (1, None, 3), ((1, 2), 3, 4),
                                  (True,), (1.0,), (2 ** 70,), (-1,), ("2",), (None,), [1]])
def test_launches_of_any_shape_are_written_as_the_encoder_writes_them(grid):
    """Three ints, one int (a timings CSV's grid and block) or any other launch, with a
    block of either shape."""
    line = JsonLines()
    for grid, block in ((grid, (256, 1, 1)), (grid, grid), ((256, 1, 1), grid),
                        (grid, (256,)), ((256,), grid)):
        r = Measurement(kind="kernel", time_s=1e-6, grid=grid, block=block, source="f", row=1,
                        registers_per_thread=2 ** 65, shared_mem_bytes=True)
        assert line(r)[0] == ENCODE(r.to_json())
        assert line(r)[0] == ENCODE(r.to_json())     # (remembered)


def test_remembered_launches_are_those_of_tuples_of_ints(monkeypatch):
    """A launch remembered by its value is never the text of an equal tuple of other items
    ((True, 1, 1) == (1, 1, 1) == (1.0, 1, 1)); the memory stays bounded."""
    monkeypatch.setattr(measure_stream, "_TEMPLATES", 3)
    line = JsonLines()
    grids = [(k, 1, 1) for k in range(1, 20)] + [(True, 1, 1), (1, True, 1), (1.0, 1, 1)]
    for grid in grids + grids[::-1]:
        r = Measurement(kind="kernel", time_s=1e-6, grid=grid, block=tuple(grid),
                        source="f", row=1)
        assert line(r)[0] == ENCODE(r.to_json())
    assert len(line.by_value) <= 3


def test_remembered_heads_are_those_of_their_texts(monkeypatch):
    """A line's kind, direction, name and gpu are written from one memory of their texts:
    kept bounded, looked up only for exact strs (a str subclass equal to a remembered name
    goes to the encoder), empty direction and gpu as null; registers of any type written
    twice as the encoder writes them."""
    monkeypatch.setattr(measure_stream, "_TEMPLATES", 3)
    line = JsonLines()
    records = [Measurement(kind=kind, time_s=1e-6 * k, name=f"k{k % 5}\u00e9\"", gpu=gpu,
                           direction=direction, registers_per_thread=regs, source="f", row=k)
               for k in range(1, 30)
               for kind, direction, gpu in (("kernel", "", "GPU"), ("transfer", "htod", ""))
               for regs in (k, None, float(k), 2 ** 70)]
    records += [Measurement(kind="kernel", time_s=1e-6, name=_Text("k1\u00e9\""), source="f",
                            row=1)]
    for r in records + records[::-1]:
        assert line(r)[0] == ENCODE(r.to_json())
    assert 0 < len(line.heads) <= 3


def test_odd_types_and_metrics_are_written_as_the_encoder_writes_them():
    line = JsonLines()
    records = [
        Measurement(kind="kernel", time_s=1e-6, name=_Text("k"), source="f", row=1),
        Measurement(kind="kernel", time_s=1e-6, name="k", direction=0, gpu=1, source="f",
                    row=True),
        Measurement(kind="kernel", time_s=1, name="", source="", row=2 ** 64, device=-1),
        Measurement(kind="kernel", time_s=1e-6, name="inf nan Infinity", source="nan.csv",
                    row=1, metrics={"inf": (1, "1"), "nan": (None, "x"), "b": (True, "1"),
                                    "s": ("text", "1"), "f": (-0.0, "s"), 5: (1.5, "s"),
                                    "u": (2.5, None), "é\n\"": (1e300, "é")}),
        Measurement(kind="transfer", time_s=2e-6, size_bytes=2, direction="ptop", gpu="",
                    memory_kind="", compute_capability="8.0", source="f", row=3,
                    metrics={"size_uncertainty": (0.5, "B"), "throughput": (1e9, "B/s")}),
    ]
    for r in records + records:
        assert line(r)[0] == ENCODE(r.to_json())


@pytest.mark.parametrize("field", ["time_s", "size_bytes", "start_s", "end_s", "metric"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_value_beyond_a_float_anywhere_is_refused(field, value):
    line = JsonLines()
    fine = Measurement(kind="transfer", time_s=1e-6, size_bytes=8.0, source="f", row=1,
                       start_s=0.0, end_s=1.0, metrics={"throughput": (1.0, "B/s")})
    line(fine)
    bad = Measurement(**{**fine.__dict__, **({"metrics": {"throughput": (value, "B/s")}}
                                              if field == "metric" else {field: value})})
    with pytest.raises(ValueError):
        ENCODE(bad.to_json())
    with pytest.raises(ValueError):
        line(bad)
    assert line(fine)[0] == ENCODE(fine.to_json())


def test_distinct_values_share_one_line_format():
    """Formats are compiled per combination of the fields' types, never per value: 500
    kernels of distinct names, launches, registers and times use one."""
    line = JsonLines()
    for k in range(1, 501):
        r = Measurement(kind="kernel", time_s=k * 1.1e-6, name=f"kernel_{k}", gpu="GPU",
                        grid=(k, 1, 1), block=(32 * (k % 32 + 1), 1, 1),
                        registers_per_thread=k % 255, shared_mem_bytes=k * 16, source="f",
                        row=k)
        assert line(r)[0] == ENCODE(r.to_json())
    assert len(line.formats) == 1


def test_written_in_chunks_the_list_is_the_encoder_s():
    records = list(read_file(str(SAMPLES / "nvprof-gpu-trace-multirun.csv")).records)
    whole = "[\n" + ",\n".join(ENCODE(r.to_json()) for r in records) + "\n]\n"
    for batch in (1, 2, 3, len(records), len(records) + 1):
        out = io.StringIO()
        counts = write_json(records, out, batch)
        assert out.getvalue() == whole, batch
        assert counts == {k: sum(r.kind == k for r in records) for k in {r.kind for r in records}}


@pytest.mark.parametrize("metrics", [{}, {"throughput": (2.5e9, "B/s")}, {"t": (-0.0, "")},
                                     {"": (1e-300, "s")}, {"n": (3, "1")}, {"n": (None, "1")},
                                     {"n": (True, "1")}, {"n": ("ab", "1")}, {"n": "ab"},
                                     {7: (1.5, "s")}, {"n": (1.5, None)}, {_Text("n"): (1.5, "s")},
                                     {"a": (1.5, "s"), "b": (2.5, "s")}])
def test_a_single_metric_is_written_as_the_encoder_writes_it(metrics):
    """One metric (an nvprof copy's throughput) is written in the line's own function, any
    other through the general path: both as the encoder writes them."""
    line = JsonLines()
    r = Measurement(kind="transfer", time_s=1e-6, size_bytes=8.0, direction="htod",
                    source="f", row=1, metrics=metrics)
    for _ in range(2):
        assert line(r)[0] == ENCODE(r.to_json())


@pytest.mark.parametrize("make", [distinct_trace, distinct_timings])
def test_distinct_values_are_written_as_the_whole_file_and_the_encoder_write_them(
        capsys, tmp_path, make):
    """Files whose numbers all differ from row to row (and, in some, negative zero,
    exponents, many digits, whole numbers with and without a point, one size in several
    units): the text table is the whole file's, the --json lines the encoder's."""
    path = tmp_path / "d.csv"
    written = 0
    for content in [make(600, 3, odd=False)] + [make(7, seed) for seed in range(40)]:
        path.write_text(content)
        try:
            result = read_file(str(path))
        except FormatError:
            continue
        written += 1
        assert main(["measure", "import", str(path)]) == 0
        assert capsys.readouterr().out == _old_table(result.records, result)
        assert main(["measure", "import", str(path), "--json"]) == 0
        assert capsys.readouterr().out == "[\n" + ",\n".join(
            ENCODE(r.to_json()) for r in result.records) + "\n]\n"
    assert written > 10


@pytest.mark.parametrize("make, column, cell", [(distinct_trace, "Duration", 1),
                                                (distinct_timings, "time", 7)])
def test_a_bad_distinct_row_after_the_first_chunk_is_one_error_line(monkeypatch, capsys,
                                                                    tmp_path, make, column,
                                                                    cell):
    """Past the first records and the first written chunk, a row the fast reader leaves to
    the reference reader (negative zero) still ends the command with one error line and
    exit status 2, text and --json."""
    monkeypatch.setattr(measure_stream, "HEAD", 4)
    monkeypatch.setattr(measure_stream, "WRITE_LINES", 3)
    lines = make(40, 8, odd=False).splitlines()
    cells = lines[-1].split(",")
    cells[cell] = "-0.000000"
    lines[-1] = ",".join(cells)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    for extra in ([], ["--json"]):
        assert main(["measure", "import", str(path), *extra]) == 2
        out, err = capsys.readouterr()
        assert err.count("\n") == 1 and f"t.csv row {len(lines)}, column {column}" in err, err
        assert out.count("\n") >= 30, (out, err)   # what was read before it was written


@pytest.mark.parametrize("make", [distinct_trace, distinct_timings])
def test_repeated_then_distinct_rows_are_the_whole_file_s_table(monkeypatch, capsys, tmp_path,
                                                                make):
    """Launch and size cells remembered while rows repeat, then given up when they all
    differ (small memories here): the table is still the whole file's."""
    monkeypatch.setattr(measure_stream, "_TEMPLATES", 8)
    lines = make(120, 4, odd=False).splitlines()
    head = 5 if make is distinct_trace else 1
    rows = [line for line in lines[head:]
            if line[:1].isdigit() or line.startswith(("kernel", "transfer"))]
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines[:head] + rows[:6] * 5 + rows + rows[:6] * 5) + "\n")
    result = read_file(str(path))
    assert main(["measure", "import", str(path)]) == 0
    assert capsys.readouterr().out == _old_table(result.records, result)
    cells = measure_stream.TableCells(False)        # one reader of cells, remembering
    assert [cells(r) for r in result.records] == [
        measure_stream.TableCells(False)(r) for r in result.records]
    assert not cells.sizes.use       # (given up once the rows all differ)
