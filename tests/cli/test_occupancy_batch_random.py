"""``occupancy --batch``: the bulk path (one parse per chunk, one vectorised call per group,
answer lines and error messages formatted a column at a time) against the exact per-line
path, on thousands of random lines of every kind: launches that run and launches that fail
each check on every compute capability, unknown ccs, missing and extra keys, unicode, blank
lines, huge numbers, floats and strings where integers belong, JSON that is not an object,
text that is not JSON."""
from __future__ import annotations

import io
import json
import random

import pytest

import gpumodeler.cli.occupancy_line as occupancy_line
import gpumodeler.cli.occupancy_batch as occupancy_batch
import gpumodeler.cli.occupancy_lines as occupancy_lines
from gpumodeler.cli.main import main
from gpumodeler.core.occupancy.compute_capability import SUPPORTED_COMPUTE_CAPABILITIES
from repetitions import repetitions
from test_occupancy_batch import _per_line  # the reference: one line at a time

_CCS = list(SUPPORTED_COMPUTE_CAPABILITIES)
#: Random lines per comparison (the grouping variants take two thirds): the same draw of
#: kinds of line whatever the count; 1500 lines still span several chunks of every size
#: below but the largest.
LINES = repetitions(1500, 3000)
_ODD_CCS = ["9.9", "sm_86", "SM_90", 8.6, 7, "8.6 ", "", "banana", None, [8, 6], "１.０"]
_ODD_NUMBERS = [-1, 10**30, 2**62, 2**63, 256.0, 1e3, 0.5, "256", True, False, None, [32], {}]


def _size(rng: random.Random, usual: int, top: int, step: int = 1):
    """Mostly a multiple of ``step`` below ``usual``; sometimes anything below ``top``;
    rarely not a plain non-negative integer at all."""
    r = rng.random()
    if r < 0.01:
        return rng.choice(_ODD_NUMBERS)
    if r < 0.2:
        return rng.randrange(0, top)
    return rng.randrange(0, usual // step + 1) * step


def _launch(rng: random.Random) -> dict:
    obj = {"cc": rng.choice(_CCS) if rng.random() > 0.03 else rng.choice(_ODD_CCS),
           "block_size": _size(rng, 512, 1100, 32), "registers": _size(rng, 64, 270)}
    if rng.random() < 0.8:
        obj["shared_mem"] = _size(rng, 32 * 1024, 240 * 1024, 1024)
    if rng.random() < 0.2:
        obj["static_shared_mem"] = _size(rng, 8 * 1024, 64 * 1024, 512)
    if rng.random() < 0.25:
        obj["opt_in"] = rng.choice([True, False, True, 1, "yes"])
    if rng.random() < 0.08:
        obj["carveout_percent"] = rng.choice([0, 25, 50, 100, 101, None, 50.0])
    elif rng.random() < 0.08:
        obj["shared_mem_config"] = rng.choice([16384, 32768, 65536, 102400, 233472, 12, None])
    if rng.random() < 0.03:
        obj[rng.choice(["bogus", "note", "µs", "Block_Size"])] = rng.choice([1, "∞", None])
    if rng.random() < 0.03:
        del obj[rng.choice(["cc", "block_size", "registers"])]
    if rng.random() < 0.2:
        keys = list(obj)
        rng.shuffle(keys)
        obj = {k: obj[k] for k in keys}
    return obj


def _line(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.03:
        return rng.choice(["", " ", "\t", "   \r"])
    if r < 0.06:
        return rng.choice(["[1, 2]", "42", '"text"', "null", "true", "[]", "{}",
                           '[{"cc": "8.0", "block_size": 64, "registers": 8}]'])
    if r < 0.09:
        return rng.choice(["garbage", "{", '{"cc": "8.0",', '{"cc": "8.0", "block_size": 01}',
                           "{'cc': '8.0'}", '{"cc": "8.0"}}', '{"a": NaN}', "\u2028", "é"])
    text = json.dumps(_launch(rng), ensure_ascii=rng.random() < 0.9)
    if rng.random() < 0.03:
        text = rng.choice([" ", "\t", ""]) + text + rng.choice([" ", "\r", ""])
    if rng.random() < 0.02:
        text = text.replace(", ", ",").replace(": ", ":")
    return text


def _text(seed: int, n: int) -> str:
    rng = random.Random(seed)
    return "\n".join(_line(rng) for _ in range(n)) + rng.choice(["\n", "", "\n\n"])


def _bulk(text: str, chunk: int) -> str:
    out = io.StringIO()
    occupancy_batch.answer_stream(io.StringIO(text, newline=None), chunk, out.write)
    return out.getvalue()


@pytest.mark.parametrize("seed, chunk", [(1, 65536), (2, 1000), (3, 257)])
def test_random_lines_answer_as_line_by_line(seed, chunk):
    text = _text(seed, LINES)
    expected = _per_line(text)
    assert expected.count('"error"') > LINES // 10 and expected.count('"occupancy"') > LINES // 3
    assert _bulk(text, chunk) == expected


def _plain(line: str) -> bool:
    """A launch of a supported cc with its block size and registers and no option, each
    size a non-negative integer below 2^62."""
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    sizes = {"block_size", "registers", "shared_mem", "static_shared_mem"}
    return (isinstance(obj, dict) and obj.get("cc") in _CCS and set(obj) - {"cc"} <= sizes
            and "block_size" in obj and "registers" in obj
            and all(type(obj[k]) is int and 0 <= obj[k] < 2**62 for k in set(obj) - {"cc"}))


def test_plain_launches_take_the_bulk_path(monkeypatch):
    """The comparison above is not between two per-line paths: the plain launches, half
    the lines, are never answered one by one (only odd lines are, and groups the
    calculator refuses as a whole, such as a carveout before cc 7.0)."""
    calls = []
    real = occupancy_batch.line_output
    monkeypatch.setattr(occupancy_batch, "line_output",
                        lambda n, obj: calls.append(n) or real(n, obj))
    text = _text(4, LINES)
    assert _bulk(text, 65536) == _per_line(text)
    plain = {n for n, line in enumerate(text.split("\n"), 1) if _plain(line)}
    assert len(plain) > LINES * 7 // 15 and calls and not plain & set(calls)


@pytest.mark.parametrize("share, dense", [(1, 16), (10**9, 16), (8, 0)])
def test_every_way_of_grouping_the_cells_gives_the_same_lines(monkeypatch, share, dense):
    """Merging every pair of cells, none, and codes by np.unique instead of a table."""
    monkeypatch.setattr(occupancy_lines, "MERGE_SHARE", share)
    monkeypatch.setattr(occupancy_lines, "_DENSE_RANGE", dense)
    text = _text(5, LINES * 2 // 3)
    assert _bulk(text, 65536) == _per_line(text)


def test_error_messages_that_need_escaping(monkeypatch):
    """A message with a quote, a backslash, a control or non-ASCII character is written as
    json.dumps writes it (the messages of today need none; the check keeps it so)."""
    for odd in ['quote " here', "back \\ slash", "tab \t", "µ", "\u2028"]:
        lines = occupancy_lines._error_lines([odd, "plain"], [3, 4])  # the fallback
        assert lines == [json.dumps({"line": 3, "error": odd}),
                         json.dumps({"line": 4, "error": "plain"})]


def test_through_the_command_line(monkeypatch, capsys):
    text = _text(6, 1500)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode()), newline="\n"))
    assert main(["occupancy", "--batch", "-"]) == 0
    expected = []
    for lineno, line in enumerate(io.StringIO(text, newline="\n"), 1):  # CR stays in a line
        if line.strip():
            expected.append(occupancy_line.line_output(lineno, occupancy_line.parsed_line(line)))
    assert capsys.readouterr().out.splitlines() == expected


def test_a_message_template_that_needs_escaping(monkeypatch):
    """Were a message worded with a quote or non-ASCII, the error lines would still be
    json.dumps' (the templates go through the per-message escaping instead)."""
    import gpumodeler.core.occupancy.messages as messages
    monkeypatch.setattr(messages, "REGISTERS_PER_THREAD_TEXT",
                        '%d "registers" per thread exceed the %d-register limit by %d µ')
    text = "\n".join(json.dumps({"cc": "8.0", "block_size": 64, "registers": r})
                     for r in range(200, 320)) + "\n"
    expected = _per_line(text)
    assert expected.count('\\"registers\\"') == 64 and "\\u00b5" in expected
    assert _bulk(text, 65536) == expected


@pytest.mark.parametrize("shape", ["json.dumps", "compact"])
def test_a_huge_size_does_not_change_the_other_answers(shape):
    """A launch with 10^18 - 1 registers among others of its cc: int64 arithmetic on it
    overflowed in the vectorised calculator and turned a launch without registers on
    cc 2.1 into "no block fits" (the batch before this test said so; one launch alone did
    not). Sizes of 2^40 and more now go to the scalar calculator."""
    launches = [{"cc": "2.1", "block_size": 608, "registers": 0, "shared_mem": 112},
                {"cc": "2.1", "block_size": 64, "registers": 10**18 - 1, "shared_mem": 32768},
                {"cc": "2.1", "block_size": 64, "registers": 2**40, "shared_mem": 0},
                {"cc": "2.1", "block_size": 64, "registers": 2**40 - 1, "shared_mem": 0},
                {"cc": "2.1", "block_size": 2**41, "registers": 8, "shared_mem": 0},
                {"cc": "2.1", "block_size": 64, "registers": 8, "shared_mem": 2**50}]
    separators = (", ", ": ") if shape == "json.dumps" else (",", ":")
    text = "\n".join(json.dumps(o, separators=separators) for o in launches) + "\n"
    expected = _per_line(text)
    assert '"occupancy"' in expected.splitlines()[0]
    assert _bulk(text, 65536) == expected


def test_answers_written_in_blocks_in_line_order():
    """Deferred lines are formatted block by block in line order, blanks skipped; positions
    not in order are formatted at once."""
    import numpy as np

    out = occupancy_batch._Answers(7)
    out.defer(np.array([0, 2, 5]), occupancy_lines.Lines("a%s", [["0", "2", "5"]], 3))
    out.defer(np.array([6, 3]), occupancy_lines.Lines("b%s", [["6", "3"]], 2))
    out[1] = "e1"
    written = []
    out.write(written.append, block=2)
    assert "".join(written) == "a0\ne1\na2\nb3\na5\nb6\n"  # line 4 is blank
    assert all(len(w.split("\n")) <= 3 for w in written)
