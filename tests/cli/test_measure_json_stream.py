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
