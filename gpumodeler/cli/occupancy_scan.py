"""``occupancy --batch``: the columns of a chunk of lines that all have one shape, read by
numpy from the bytes, without a Python object per value.

A script writes its launches with one ``json.dumps`` (or ``JSON.stringify``) per line, so
the lines of a chunk usually differ only in their digits:
``{"cc": "8.6", "block_size": 256, "registers": 40}``. :func:`scan` takes the first line as
the pattern and checks that every line is that pattern with other digits, then reads the
numbers. The checks, each over the whole chunk at once:

* the first line is exactly what ``json.dumps`` writes for its object, with its default
  separators or the compact ones (``jq -c``, JavaScript's ``JSON.stringify``), so where each
  value's digits go is known from its keys; its keys are launch keys with ``cc``,
  ``block_size`` and ``registers`` among them, the sizes are integers >= 0, ``opt_in`` (if
  given) is a boolean, ``carveout_percent`` and ``shared_mem_config`` (if given) are null,
  and ``cc`` is a string of the form ``"M.m"`` or ``"MM.m"`` (other lines go to the JSON
  reader);
* every line, with its digits (``0``-``9``) taken out, is byte for byte the first line with
  its digits taken out: the same keys in the same order, the same separators, the same
  booleans and nulls; since no key holds a digit, a digit can only be inside a value;
* the digits of each line fall at the places of the first line's numbers, one run of digits
  at each place, none elsewhere (the number of non-digit bytes before each digit tells
  where it is); no run starts with ``0`` unless it is ``0`` (JSON has no leading zeros),
  none is longer than 18 digits (so it fits int64), and a cc has one or two digits before
  its point and one after.

A line that passes is a JSON object (RFC 8259: an object of strings, non-negative integers
without leading zeros, booleans and nulls) whose values are the numbers read, so the
columns are what ``json.loads`` of each line gives. If any line fails, the whole chunk is
left to the JSON reader (:mod:`gpumodeler.cli.occupancy_batch`), which answers every line,
odd ones included, exactly.
"""
from __future__ import annotations

import json
import re
from itertools import chain

import numpy as np

from .occupancy_line import BATCH_KEYS

_CC = re.compile(r"[1-9]?[0-9]\.[0-9]")
_DIGITS = re.compile(r"[0-9]+")
_MAX_DIGITS = 18
#: lines read at a time
SCAN_LINES = 8192
_POW10 = 10 ** np.arange(_MAX_DIGITS, dtype=np.int64)
_REQUIRED = ("cc", "block_size", "registers")


class Scanned:
    """The columns of a chunk: ``numbers`` (key -> int64 array, one per line), ``cc`` (an
    integer per line, 10 * major + minor; :meth:`cc_text` gives its text) and ``constants``
    (the keys whose value is the same on every line: booleans and nulls)."""

    __slots__ = ("numbers", "cc", "constants")

    def __init__(self, numbers: dict, cc: np.ndarray, constants: dict):
        self.numbers, self.cc, self.constants = numbers, cc, constants

    @staticmethod
    def cc_text(code: int) -> str:
        return f"{code // 10}.{code % 10}"


def _layout(head: str) -> tuple[list, dict] | None:
    """The places of the first line's numbers, as (key, part) in order, and its constants;
    None if the line is not of the shape :func:`scan` reads."""
    try:
        obj = json.loads(head)
    except (ValueError, RecursionError):  # not JSON, a number of 5000 digits, deep nesting
        return None
    if type(obj) is not dict or not obj.keys() <= BATCH_KEYS or any(
            k not in obj for k in _REQUIRED):
        return None
    if head != json.dumps(obj) and head != json.dumps(obj, separators=(",", ":")):
        return None  # other blanks, escapes, a duplicate key...
    places, constants = [], {}
    for key, value in obj.items():
        if key == "cc":
            if type(value) is not str or not _CC.fullmatch(value):
                return None
            places += [("cc", "major"), ("cc", "minor")]
        elif type(value) is int and value >= 0 and key not in ("opt_in",):
            if key in ("carveout_percent", "shared_mem_config"):
                return None  # an option that may differ per line: the JSON reader groups it
            places.append((key, "number"))
        elif (value is None and key in ("carveout_percent", "shared_mem_config")) or (
                type(value) is bool and key == "opt_in"):
            constants[key] = value
        else:
            return None
    return places, constants


def scan(lines: list[str]) -> Scanned | None:
    """The columns of ``lines`` (a chunk, without newlines) if every line has the first
    line's shape (module docstring), else None. The lines are read :data:`SCAN_LINES` at a
    time, so that the temporary arrays stay small and their memory is reused."""
    if len(lines) < 2:
        return None
    found = _layout(lines[0])
    if found is None:
        return None
    places, constants = found
    head = lines[0]
    pattern = np.frombuffer((_DIGITS.sub("", head) + "\n").encode("ascii"), dtype=np.uint8)
    # where the first line's numbers go: the count of non-digit bytes before each
    spots = np.array([m.start() - sum(len(d) for d in _DIGITS.findall(head[:m.start()]))
                      for m in _DIGITS.finditer(head)], dtype=np.int64)
    if spots.size != len(places):  # (cannot be: its runs of digits are its numbers)
        return None
    blocks = []
    for start in range(0, len(lines), SCAN_LINES):
        block = _numbers(lines[start:start + SCAN_LINES], pattern, spots)
        if block is None:
            return None
        blocks.append(block)
    values = np.concatenate([v for v, _ in blocks])
    lengths = np.concatenate([length for _, length in blocks])
    numbers, cc = {}, None
    for j, (key, part) in enumerate(places):
        if part == "number":
            numbers[key] = values[:, j]
        elif part == "major":
            if lengths[:, j].max() > 2 or lengths[:, j + 1].max() > 1:
                return None
            cc = values[:, j] * 10 + values[:, j + 1]
    return Scanned(numbers, cc, constants)


def _numbers(lines: list[str], pattern: np.ndarray, spots: np.ndarray):
    """(the numbers of each line, their lengths in digits), a row per line and a column per
    place, if every line is ``pattern`` (the first line without its digits) with one run of
    digits at each of the ``spots`` and none elsewhere, no leading zero and at most 18
    digits in a run; else None."""
    runs = _runs(lines, pattern, spots)
    if runs is None:
        return None
    digits, starts, lengths = runs
    if lengths.max() > _MAX_DIGITS or ((digits[starts] == 48) & (lengths > 1)).any():
        return None
    # each digit's weight: 10 ** (the digits after it in its run)
    weight = np.repeat(starts + lengths, lengths)
    weight -= np.arange(1, digits.size + 1)
    weight = _POW10[weight]
    weight *= digits - np.uint8(48)
    shape = (len(lines), spots.size)
    return np.add.reduceat(weight, starts).reshape(shape), lengths.reshape(shape)


def _runs(lines: list[str], pattern: np.ndarray, spots: np.ndarray):
    """(the digit bytes of ``lines``, where each run of digits starts among them, its
    length) if every line is ``pattern`` but for its digits, with one run of digits at each
    of the ``spots`` and none elsewhere; else None. Temporary arrays are reused or dropped
    as soon as possible."""
    text = "\n".join(chain(lines, ("",)))  # each line ended by a newline
    if not text.isascii():
        return None
    buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    del text
    digit = buf - np.uint8(48)  # '0'..'9' -> 0..9; below '0' wraps round to large values
    digit = np.less(digit, 10, out=digit.view(np.bool_))
    at = np.flatnonzero(digit)
    width, n = pattern.size, len(lines)
    rest = buf[np.logical_not(digit, out=digit)]
    del digit
    if rest.size != n * width or (rest.reshape(n, width) != pattern).any():
        return None
    del rest
    if not at.size:
        return None
    digits = buf[at]
    del buf
    before = at
    before -= np.arange(at.size)  # non-digit bytes before each digit
    starts = np.flatnonzero(np.diff(before))
    starts += 1
    starts = np.concatenate([np.zeros(1, dtype=starts.dtype), starts])
    expected = np.arange(0, n * width, width, dtype=np.int64)[:, None] + spots
    if starts.size != expected.size or not np.array_equal(before[starts], expected.ravel()):
        return None
    lengths = np.diff(np.append(starts, digits.size))
    return digits, starts, lengths
