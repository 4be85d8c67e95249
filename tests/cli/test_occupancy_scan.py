"""``occupancy --batch``: chunks whose lines all have one shape are read by numpy from the
bytes (cli/occupancy_scan.py); the columns are what json.loads gives, the answers those of
the per-line path, and a line that differs in anything but its digits sends the chunk back
to the JSON reader."""
from __future__ import annotations

import io
import json
import random

import pytest

import gpumodeler.cli.occupancy_line as occupancy_line
import gpumodeler.cli.occupancy_batch as occupancy_batch
from gpumodeler.cli.occupancy_scan import scan
from gpumodeler.core.occupancy.compute_capability import SUPPORTED_COMPUTE_CAPABILITIES

_CCS = list(SUPPORTED_COMPUTE_CAPABILITIES) + ["9.9", "0.5", "12.0", "10.1"]


def _number(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.02:
        return rng.choice([0, 10**17, 10**18 - 1, 2**40])
    return rng.randrange(0, 2000) if r < 0.5 else rng.randrange(0, 40) * 1024


def _shape(rng: random.Random) -> list[tuple[str, object]]:
    """Keys in some order, with the constants the shape fixes (booleans, nulls)."""
    keys = ["cc", "block_size", "registers"] + rng.sample(["shared_mem", "static_shared_mem"],
                                                          rng.randrange(3))
    rng.shuffle(keys)
    shape = [(k, None) for k in keys]
    if rng.random() < 0.5:
        shape.insert(rng.randrange(len(shape) + 1), ("opt_in", rng.choice([True, False])))
    if rng.random() < 0.3:
        shape.append((rng.choice(["carveout_percent", "shared_mem_config"]), "null"))
    return shape


def _lines(rng: random.Random, shape, n: int, compact: bool = False) -> list[str]:
    out = []
    separators = (",", ":") if compact else (", ", ": ")
    for _ in range(n):
        obj = {}
        for key, fixed in shape:
            if key == "cc":
                obj[key] = rng.choice(_CCS)
            elif fixed is None:
                obj[key] = _number(rng) if key != "block_size" else rng.randrange(0, 40) * 32
            else:
                obj[key] = None if fixed == "null" else fixed
        out.append(json.dumps(obj, separators=separators))
    return out


def _per_line(lines: list[str], first: int = 1) -> list[str]:
    return [occupancy_line.line_output(first + i, occupancy_line.parsed_line(line + "\n"))
            for i, line in enumerate(lines)]


@pytest.mark.parametrize("seed", range(6))
def test_a_scanned_chunk_answers_as_line_by_line(seed, monkeypatch):
    """Lines as json.dumps writes them, with its default or compact separators."""
    rng = random.Random(seed)
    lines = _lines(rng, _shape(rng), 1500, compact=seed % 2 == 1)
    parses = []
    real = occupancy_batch._parse
    monkeypatch.setattr(occupancy_batch, "_parse", lambda *a: parses.append(1) or real(*a))
    assert occupancy_batch.answers(lines, 7) == _per_line(lines, 7)
    assert not parses  # the JSON reader was not needed


@pytest.mark.parametrize("seed", range(3))
def test_the_columns_are_those_json_gives(seed):
    rng = random.Random(10 + seed)
    shape = _shape(rng)
    lines = _lines(rng, shape, 500)
    scanned = scan(lines)
    objs = [json.loads(line) for line in lines]
    for key, values in scanned.numbers.items():
        assert values.tolist() == [o[key] for o in objs]
    assert [scanned.cc_text(c) for c in scanned.cc.tolist()] == [o["cc"] for o in objs]
    assert scanned.constants == {k: objs[0][k] for k, v in shape if v is not None}


GOOD = '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": 4096}'
#: lines that differ from GOOD in more than their digits, or whose digits are not numbers
#: JSON allows at their places; each sends its chunk back to the JSON reader
DIFFERENT = [
    '{"cc": "8.6", "block_size": 0256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": 00, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": 1234567890123456789, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": , "registers": 40, "shared_mem": 4096}',
    '{"cc": "86.", "block_size": 256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "08.6", "block_size": 256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.60", "block_size": 256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "123.6", "block_size": 256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size1": 256, "registers": 40, "shared_mem": 4096}',
    '{"c8c": "8.6", "block_size": 256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": -256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": 256.0, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": 2e2, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": 4096} ',
    '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": 4096}\r',
    '{"cc": "8.6", "block_size":256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "registers": 40, "block_size": 256, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": "4096"}',
    '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": 4096, "x": 1}',
    '{"cc": "8.6", "block_size": 256, "registers": 40}',
    '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": 4096}{}',
    '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": 4096',
    '{"cc": "８.6", "block_size": 256, "registers": 40, "shared_mem": 4096}',
    '{"cc": "8.6", "block_size": 2\u0665, "registers": 40, "shared_mem": 4096}',
    '', '   ', '42', '[1, 2, 3, 4]', 'garbage',
]


@pytest.mark.parametrize("odd", DIFFERENT)
def test_a_line_of_another_shape_sends_the_chunk_to_the_json_reader(odd):
    for where in (0, 1, 5):
        lines = [GOOD.replace("256", str(32 * (k + 1))) for k in range(8)]
        lines[where] = odd
        assert scan(lines) is None
        expected = "".join(occupancy_line.line_output(i, occupancy_line.parsed_line(line + "\n"))
                           + "\n" for i, line in enumerate(lines, 1) if line.strip())
        out = io.StringIO()
        occupancy_batch.answer_stream(io.StringIO("\n".join(lines) + "\n", newline="\n"),
                                      64, out.write)
        assert out.getvalue() == expected


def test_first_lines_the_scan_does_not_take():
    """A first line not as json.dumps writes it, or with values of other kinds."""
    for head in ['{"cc":"8.6", "block_size":256, "registers":40}',
                 '{"cc": "8.6","block_size": 256,"registers": 40}',
                 '{"cc": "sm_86", "block_size": 256, "registers": 40}',
                 '{"cc": 8.6, "block_size": 256, "registers": 40}',
                 '{"cc": "8.6", "block_size": 256, "registers": 40, "opt_in": 1}',
                 '{"cc": "8.6", "block_size": 256, "registers": 40, "carveout_percent": 50}',
                 '{"cc": "8.6", "block_size": 256, "registers": 40, "shared_mem": null}',
                 '{"cc": "8.6", "block_size": 256}', '{"block_size": 256, "registers": 40}',
                 '{"cc": "8.6", "block_size": 256, "registers": 40, "cc": "8.0"}',
                 "[" * 100_000 + "]" * 100_000, '{"cc": "8.6", "block_size": 1' + "0" * 5000]:
        assert scan([head, head]) is None, head[:80]
        text = f"{head}\n{head}\n{GOOD}\n"
        out = io.StringIO()
        if "0" * 5000 in head:  # Python refuses the number: an error for that line alone
            assert all("more than 4300 digits" in t for t in _per_line([head, head]))
        occupancy_batch.answer_stream(io.StringIO(text), 64, out.write)
        assert out.getvalue() == "".join(t + "\n" for t in _per_line([head, head, GOOD]))
    assert scan([GOOD]) is None  # a single line is not worth it
    assert scan([GOOD, GOOD]) is not None


def test_through_the_reader_in_chunks(tmp_path):
    """Many chunks, some scanned and some not (a chunk with a bad line), in order."""
    rng = random.Random(99)
    lines = _lines(rng, [("cc", None), ("block_size", None), ("registers", None)], 5000)
    lines[2345] = "garbage"
    text = "\n".join(lines) + "\n"
    out = io.StringIO()
    occupancy_batch.answer_stream(io.StringIO(text), 700, out.write)
    expected = "".join(t + "\n" for t in _per_line(lines))
    assert out.getvalue() == expected


@pytest.mark.parametrize("block", [1, 7, 100, 1499, 1500, 10_000])
def test_read_in_blocks_of_lines(monkeypatch, block):
    """A chunk read SCAN_LINES at a time gives the same columns, and a line of another
    shape in any block sends the chunk back to the JSON reader."""
    import gpumodeler.cli.occupancy_scan as occupancy_scan
    monkeypatch.setattr(occupancy_scan, "SCAN_LINES", block)
    rng = random.Random(21)
    lines = _lines(rng, _shape(rng), 1500)
    assert occupancy_batch.answers(lines, 1) == _per_line(lines)
    for bad in (1, 733, 1499):
        odd = list(lines)
        odd[bad] = odd[bad].replace(": ", ":", 1)
        assert scan(odd) is None
