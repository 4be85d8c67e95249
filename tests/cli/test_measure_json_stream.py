"""`measure import --json` writes the records one at a time, one per line: the same list as
one `json.dumps` of the whole, for every sample file."""
import io
import json
from pathlib import Path

import pytest

from gpumodeler.cli.cmd_measure import read_file, write_records_json

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "measurements"


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.csv")))
def test_streamed_json_is_the_whole_document(name):
    records = read_file(str(SAMPLES / name)).records
    out = io.StringIO()
    write_records_json(records, out, batch=2)   # small batches: the joins are exercised
    text = out.getvalue()
    assert json.loads(text) == [r.to_json() for r in records]
    lines = text.splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and len(lines) == len(records) + 2
    assert all(json.loads(line.rstrip(",")) == r.to_json() for line, r in zip(lines[1:], records))


def test_an_empty_list_is_valid_json():
    out = io.StringIO()
    write_records_json([], out)
    assert json.loads(out.getvalue()) == []


def test_nsys_json_is_streamed_with_the_same_records_and_counts(capsys, tmp_path):
    """An Nsight Systems export's --json is written as it is read: the same records, in start
    order, and the same counts line as the text mode's."""
    from nsys_exports import A100, SAXPY, copy, kernel, write_export
    from gpumodeler.cli.main import main
    path = write_export(tmp_path / "r.sqlite", kernels=[kernel(100, 900, SAXPY),
                                                       kernel(2000, 2600, SAXPY, stream=9)],
                        copies=[copy(10, 90, 4096, 1), copy(1000, 1500, 8192, 2)], memsets=1,
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    assert main(["measure", "import", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    want = [r.to_json() for r in read_file(str(path)).records]
    assert json.loads(out) == want and [r["start_s"] for r in want] == sorted(
        r["start_s"] for r in want)
    assert main(["measure", "import", str(path)]) == 0
    text, _ = capsys.readouterr()
    counts = err.splitlines()[0]
    assert counts in text and "2 kernels, 2 transfers" in counts and "1 row(s) of other" in counts
    # GPUs only: an empty list; nothing at all: exit 2 with one line
    only = write_export(tmp_path / "gpus.sqlite", gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    assert main(["measure", "import", str(only), "--json"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out) == []
    empty = write_export(tmp_path / "empty.sqlite")
    assert main(["measure", "import", str(empty), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "no kernels, copies" in err
