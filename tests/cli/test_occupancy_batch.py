"""``occupancy --batch`` read in chunks with one ``json.loads`` per chunk (speed targets): the
answers are the per-line path's, byte for byte, for any mix of good and bad lines, including
lines built to make the joined array parse differently from the lines one by one."""
from __future__ import annotations

import io
import json
import random

import pytest

import gpumodeler.cli.occupancy_line as occupancy_line
import gpumodeler.cli.occupancy_batch as occupancy_batch
from gpumodeler.cli.main import main
from repetitions import repetitions

GOOD = {"cc": "8.0", "block_size": 256, "registers": 32}

#: lines the one-array parse could misread: items spanning lines, two items on a line,
#: braces inside strings, nesting, numbers JSON refuses, whitespace and CR around objects
TRICKY = [
    '{"cc": "5.2", "bogus": [{}',            # with the next line, one object holding a list
    '{}]}',
    '{"cc": "5.2", "block_size": 32, "registers": 8}, {"cc": "5.2", "block_size": 32, "registers": 8}',
    '{"cc": "5.2", "block_size": 64, "registers": 8, "bogus": {"x": 1}}',
    '{"cc": "5.2}", "block_size": 64, "registers": 8}',
    '{"cc": "{", "block_size": 64, "registers": 8}',
    '{"cc": "[", "block_size": 64, "registers": 8}',
    '{"cc": "5.2", "block_size": 0064, "registers": 8}',
    '{"cc": "5.2", "block_size": 64, "registers": 8,}',
    '{"cc": "5.2", "block_size": 64, "registers": NaN}',
    '{"cc": "5.2", "block_size": 64, "registers": 1e400}',
    '{"cc": "5.2", "block_size": 64, "registers": 99999999999999999999999}',
    ' {"cc": "5.2", "block_size": 64, "registers": 8}',
    '{"cc": "5.2", "block_size": 64, "registers": 8} ',
    '{"cc": "5.2", "block_size": 64, "registers": 8}\r',
    '{"cc": "5.2", "block_size": 64, "registers": 8, "cc": "8.0"}',
    '{"registers": 8, "block_size": 64, "cc": "8.6"}',
    '{"cc": 7.5, "block_size": 64, "registers": 8}',
    '{"cc": 7, "block_size": 64, "registers": 8}',
    '{"cc": null, "block_size": 64, "registers": 8}',
    '{"cc": "5.2", "block_size": true, "registers": 8}',
    '{"cc": "5.2", "block_size": 64, "registers": 8, "opt_in": 1}',
    '{"cc": "8.0", "block_size": 64, "registers": 8, "opt_in": true, "shared_mem": 100000}',
    '{"cc": "8.0", "block_size": 64, "registers": 8, "carveout_percent": 50.0}',
    '{"cc": "8.0", "block_size": 64, "registers": 8, "shared_mem_config": null}',
    '{"cc": "8.0", "block_size": 64, "registers": 8, "carveout_percent": 101}',
    '{"cc": "8.0", "block_size": 64, "registers": 8, "shared_mem": -1}',
    '{"cc": "8.0", "block_size": 4611686018427387904, "registers": 8}',
    '{"cc": "8.0", "block_size": 64}',
    '{}',
    '{"cc": "8.0", "block_size": 64, "registers": 8, "note": "µs ∞ \\u2028"}',
    '{"cc": "8.0", "block_size": 64, "registers": 8}\u2028',
    '"just a string"',
    '[{"cc": "8.0", "block_size": 64, "registers": 8}]',
    'null', '', '   ', '\t', 'garbage', '{"cc": ', '}{', '{"a": "\\"}"}',
]


def _launch(rng: random.Random) -> dict:
    obj = {"cc": rng.choice(["5.2", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "3.0"]),
           "block_size": rng.choice([32, 64, 96, 256, 1000, 1024, 2048, 0]),
           "registers": rng.choice([0, 8, 16, 32, 63, 64, 128, 255, 256])}
    if rng.random() < 0.6:
        obj["shared_mem"] = rng.choice([0, 1024, 12345, 40 * 1024, 99 * 1024, 200 * 1024])
    if rng.random() < 0.2:
        obj["static_shared_mem"] = rng.choice([0, 4096, 60000])
    if rng.random() < 0.2:
        obj["opt_in"] = rng.choice([True, False])
    if rng.random() < 0.1:
        obj["carveout_percent"] = rng.choice([0, 50, 100])
    elif rng.random() < 0.1:
        obj["shared_mem_config"] = rng.choice([16384, 65536, 102400, 12])
    if rng.random() < 0.3:  # another key order: another group of lines
        obj = dict(reversed(list(obj.items())))
    return obj


def _text(seed: int, n: int, tricky: float) -> str:
    rng = random.Random(seed)
    lines = [rng.choice(TRICKY) if rng.random() < tricky else json.dumps(_launch(rng))
             for _ in range(n)]
    return "\n".join(lines) + rng.choice(["\n", "", "\n\n"])


def _per_line(text: str) -> str:
    """The reference: each line read and answered on its own, as a file iterates."""
    out = []
    for lineno, line in enumerate(io.StringIO(text, newline=None), 1):
        if line.strip():
            out.append(occupancy_line.line_output(lineno, occupancy_line.parsed_line(line)) + "\n")
    return "".join(out)


def _batch(text: str, tmp_path, chunk: int) -> str:
    path = tmp_path / "launches.jsonl"
    path.write_text(text, encoding="utf-8", newline="")
    out = io.StringIO()
    with open(path, encoding="utf-8") as stream:
        occupancy_batch.answer_stream(stream, chunk, out.write)
    return out.getvalue()


@pytest.mark.parametrize("seed, n, tricky, chunk", [
    (0, 300, 0.0, 64), (1, 300, 0.05, 64), (2, 500, 0.2, 97), (3, 200, 0.6, 13),
    (4, 1000, 0.01, 65536), (5, 40, 1.0, 7), (6, 1, 0.0, 1), (7, 0, 0.0, 5)])
def test_the_batch_answers_as_line_by_line(tmp_path, seed, n, tricky, chunk):
    text = _text(seed, n, tricky)
    assert _batch(text, tmp_path, chunk) == _per_line(text)


def test_every_tricky_line_alone_and_among_good_ones(tmp_path):
    good = json.dumps(GOOD)
    for tricky in TRICKY:
        for text in (tricky + "\n", f"{good}\n{tricky}\n{good}\n", f"{good}\n{tricky}"):
            assert _batch(text, tmp_path, 4096) == _per_line(text), tricky


#: Three lines that, joined as an array, parse to three objects, but not one a line: the
#: first two make one object holding a list, the third holds two objects.
MISALIGNED = ['{"cc": "5.2", "block_size": 32, "registers": 8, "x": [{}',
              '{}]}',
              '{"cc": "5.2", "block_size": 64, "registers": 8}, {"cc": "8.0", "block_size": 64, "registers": 8}']


@pytest.mark.parametrize("where", [0, 1, 5])
def test_lines_that_parse_together_into_other_objects(tmp_path, where):
    lines = [json.dumps(GOOD)] * 6
    lines[where:where] = MISALIGNED
    text = "\n".join(lines) + "\n"
    expected = _per_line(text)
    assert expected.count('"error"') == 3
    for chunk in (3, 9, 4096):
        assert _batch(text, tmp_path, chunk) == expected


def test_the_one_array_parse_is_used(tmp_path, monkeypatch):
    """Good lines are not answered one by one (the fast path is taken), and a chunk with a
    bad line keeps the fast path for the rest of its lines."""
    calls = []
    real = occupancy_batch.line_output
    monkeypatch.setattr(occupancy_batch, "line_output",
                        lambda n, obj: calls.append(n) or real(n, obj))
    rng = random.Random(9)
    lines = [json.dumps({"cc": rng.choice(["5.2", "8.0"]), "block_size": 32 * rng.randint(1, 32),
                         "registers": rng.randint(8, 64)}) for _ in range(2000)]
    lines[1234] = "garbage"
    text = "\n".join(lines) + "\n"
    assert _batch(text, tmp_path, 4096) == _per_line(text)
    assert calls == [1235]


def test_standard_input_splits_lines_at_newlines_only(monkeypatch, capsys):
    """Standard input is not read with universal newlines: a CR stays in its line."""
    text = json.dumps(GOOD) + "\r\n" + json.dumps(GOOD) + "\rgarbage\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode()), newline="\n"))
    assert main(["occupancy", "--batch", "-"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "error" not in out[0] and json.loads(out[1])["line"] == 2


def test_long_lines_across_reads(tmp_path, monkeypatch):
    """Lines longer than one read, and a last line without its newline."""
    monkeypatch.setattr(occupancy_batch, "READ_CHARS", 7)
    text = _text(11, 60, 0.2)
    assert _batch(text, tmp_path, 8) == _per_line(text)


def test_lines_with_blanks_around_still_take_the_fast_path(tmp_path, monkeypatch):
    """CR LF lines of standard input, indented lines: answered together, as line by line."""
    calls = []
    real = occupancy_batch.line_output
    monkeypatch.setattr(occupancy_batch, "line_output",
                        lambda n, obj: calls.append(n) or real(n, obj))
    lines = [json.dumps({**GOOD, "block_size": 32 * k}) + "\r" for k in range(1, 40)]
    lines[3] = "  \t" + lines[3]
    text = "\n".join(lines) + "\n"
    out = io.StringIO()
    occupancy_batch.answer_stream(io.StringIO(text, newline="\n"), 4096, out.write)
    expected = "".join(occupancy_line.line_output(i, occupancy_line.parsed_line(line + "\n")) + "\n"
                       for i, line in enumerate(lines, 1))
    assert out.getvalue() == expected
    assert calls == [] and expected.count('"error"') == 7  # block sizes above 1024


def test_bad_lines_cost_a_few_short_parses(tmp_path, monkeypatch):
    """Scattered bad lines: only they are answered one by one, and the number of array
    parses grows with the number of bad lines, not with the chunk's length."""
    answered, parses = [], []
    real_line, real_parse = occupancy_batch.line_output, occupancy_batch._parse
    monkeypatch.setattr(occupancy_batch, "line_output",
                        lambda n, obj: answered.append(n) or real_line(n, obj))
    monkeypatch.setattr(occupancy_batch, "_parse",
                        lambda *a: parses.append(len(a[1])) or real_parse(*a))
    rng = random.Random(4)
    # the count of lines is a repetition: 60 bad ones scattered among them either way
    lines = [json.dumps({**GOOD, "block_size": 32 * rng.randint(1, 32)})
             for _ in range(repetitions(8000, 20000))]
    bad = sorted(rng.sample(range(len(lines)), 60))
    for k, i in enumerate(bad):
        lines[i] = ["garbage", '{"cc": ', '{"cc": "8.0", "block_size": [64], "registers": 8}',
                    '{"cc": "8.0", "block_size": 64, "registers": 8,}'][k % 4]
    text = "\n".join(lines) + "\n"
    assert _batch(text, tmp_path, 65536) == _per_line(text)
    assert answered == [i + 1 for i in bad]
    assert len(parses) < 12 * len(bad) and sum(parses) < 4 * len(lines)
