"""`occupancy --batch`: JSON Lines of launches answered a chunk at a time (speed targets).

The answers are those of the scalar path (:func:`gpumodeler.cli.occupancy_line.line_output`,
one ``json.loads`` and one :func:`~gpumodeler.core.occupancy.calculator.occupancy` call per
line), byte for byte; only the work is grouped:

1. **Reading.** The input is read in blocks of characters and cut at ``"\\n"`` (what iterating
   the stream did: universal newlines for a file, ``"\\n"`` for standard input). Each chunk of
   lines is parsed with *one* ``json.loads`` of the array ``[line, line, ...]`` when that
   array provably holds one object per line: every line (without blanks around it) begins
   with ``{``, ends with ``}`` and holds no other ``{`` and no ``[`` (so no item can hold a
   list or an object), and the array has exactly as many items as lines.
   (No string crosses a line, since JSON forbids a raw newline in a string; so an item that
   crossed a line would have to end that line inside an object, where its final ``}`` would
   close a nested object, which the last condition excludes. Hence each line is one item, and
   the item is what ``json.loads`` of the line gives.) Where the parser stops at a bad line,
   the lines before it are parsed again, that line goes through the scalar path, and reading
   goes on after it; lines of other shapes go through the scalar path too.
2. **Columns.** Lines with the same keys (the usual case, found by one ``len`` per line and
   one ``operator.itemgetter`` per key, which fails on a missing key) are turned into
   columns (``map(type, ...)`` checks that sizes are plain non-negative integers, options
   booleans or integers); lines with anything else go through the scalar path, which gives
   the message.
3. **Evaluation.** Lines sharing (cc, opt_in, carveout_percent, shared_mem_config) go to the
   vectorised calculator, :func:`~gpumodeler.core.occupancy.arrays.occupancy_array`, in one
   call; its ``reasons`` are the scalar LaunchError messages, formatted a column at a time
   (:mod:`gpumodeler.core.occupancy.array_messages`).
4. **Writing.** The answer lines of a group are formatted in bulk by
   :mod:`gpumodeler.cli.occupancy_lines` (a ``%`` template in the scalar answer's key order,
   fields as integer codes, neighbouring fields with few joint values merged). The first
   line of each group is compared with the scalar answer as a guard. Error lines are one
   ``%`` each, the messages escaped only if one of them needs it.
"""
from __future__ import annotations

import json
from bisect import bisect_right
from itertools import accumulate
from operator import itemgetter

import numpy as np

from gpumodeler.core.errors import ModelError

from .occupancy_line import BATCH_KEYS, INT_LIMIT, line_output, one_launch, parsed_line
from .occupancy_lines import answer_lines, error_lines
from .occupancy_scan import scan

#: characters read at a time
READ_CHARS = 1 << 20
#: The longest line read: a launch is a line of some 60 characters; a "line" of megabytes
#: is no JSON Lines file (/dev/zero has no newline at all), and would fill the memory.
MAX_LINE_CHARS = 1 << 20
#: a piece of a chunk this small that does not parse as an array goes line by line
_SMALLEST = 8
_SIZES = ("block_size", "registers", "shared_mem", "static_shared_mem")
_REQUIRED = ("cc", "block_size", "registers")


def answer_stream(stream, chunk_lines: int, write) -> None:
    """Answer every non-blank line of ``stream``, in order, ``chunk_lines`` lines at a time,
    passing the answer lines to ``write`` (a few thousand at a time, each ending in a
    newline)."""
    first = 1  # the number of the first line in `lines`
    lines: list[str] = []
    tail: list[str] = []  # the pieces of a line not ended yet
    while True:
        block = stream.read(READ_CHARS)
        if not block:
            break
        if "\n" not in block:
            tail.append(block)
            if sum(map(len, tail)) > MAX_LINE_CHARS:
                raise ModelError(f"line {first + len(lines)} is longer than "
                                 f"{MAX_LINE_CHARS >> 20} Mi characters: not JSON Lines "
                                 f"(one launch per line)")
            continue
        parts = block.split("\n")
        if tail:
            parts[0] = "".join(tail) + parts[0]
        tail = [parts.pop()]
        lines.extend(parts)
        while len(lines) >= chunk_lines:
            _answer_chunk(lines[:chunk_lines], first).write(write)
            del lines[:chunk_lines]
            first += chunk_lines
    last = "".join(tail)
    if last:  # a last line without its newline
        lines.append(last)
    while lines:
        _answer_chunk(lines[:chunk_lines], first,
                      ended=not last or len(lines) > chunk_lines).write(write)
        del lines[:chunk_lines]
        first += chunk_lines


#: a line whose answer a group formats when its lines are written
_LATER = object()


class _Answers:
    """The answers of a chunk's lines: ``texts[i]`` is line i's answer, None for a blank
    line, or :data:`_LATER` for a line of a group (``later``: its lines' positions, in
    order, and its :class:`~gpumodeler.cli.occupancy_lines.Lines`) formatted as the lines
    are written."""

    def __init__(self, n: int):
        self.texts = np.empty(n, dtype=object)
        self.later: list = []

    def __setitem__(self, index, value) -> None:
        self.texts[index] = value

    def defer(self, positions: np.ndarray, lines) -> None:
        """Lines ``positions`` (ascending) are ``lines``, formatted when written."""
        if positions.size > 1 and (np.diff(positions) <= 0).any():  # (groups are in order)
            self.texts[positions] = _objects_array(lines.texts())
            return
        self.texts[positions] = _LATER
        self.later.append((positions, lines, [0]))

    def write(self, write, block: int = 4096) -> None:
        """Write the answers ``block`` lines at a time, each ended by a newline (the
        formatted lines of a block are dropped once written: a chunk's text is never held
        whole)."""
        texts, n = self.texts, len(self.texts)
        blanks = None in texts.tolist()
        for start in range(0, n, block):
            stop = min(n, start + block)
            for positions, lines, done in self.later:
                end = int(np.searchsorted(positions, stop))
                if end > done[0]:
                    texts[positions[done[0]:end]] = _objects_array(lines.texts(done[0], end))
                    done[0] = end
            piece = texts[start:stop].tolist()
            if blanks:
                piece = [t for t in piece if t is not None]
            if piece:
                piece.append("")  # the last line's newline, without copying the text again
                write("\n".join(piece))
            texts[start:stop] = None


def answers(lines: list[str], first: int, ended: bool = True) -> list[str]:
    """The answer of each non-blank line of ``lines`` (numbered from ``first``; each ended by
    a newline, but for the last when ``ended`` is False), in order."""
    out: list[str] = []
    _answer_chunk(lines, first, ended).write(out.append)
    return "".join(out).split("\n")[:-1]


def _answer_chunk(lines: list[str], first: int, ended: bool = True) -> _Answers:
    """The answers of ``lines`` (see :func:`answers`), ready to be written."""
    n = len(lines)
    out = _Answers(n)  # None: not answered yet
    scanned = scan(lines)
    if scanned is not None:  # every line has the first line's shape (the usual case)
        _by_scan(scanned, lines, first, out)
        return out
    body = ",\n".join(lines)
    if n and body[:1] == "{" and body[-1:] == "}" and body.count("},\n{") == n - 1 \
            and body.count("{") == n and "[" not in body:
        idx = np.arange(n)  # every line looks like one flat object (the usual case)
        trimmed = lines
    else:  # the lines that do, once stripped of JSON's blanks (a CR of standard input)
        trimmed = [line.strip(" \t\r") for line in lines]
        idx = np.array([i for i, t in enumerate(trimmed) if t[:1] == "{" and t[-1:] == "}"
                        and t.count("{") == 1 and "[" not in t], dtype=np.int64)
        body = None
    objects = _objects(trimmed, idx.tolist(), body) if idx.size else []
    if None in objects:  # lines the scalar path reads
        keep = [k for k, obj in enumerate(objects) if obj is not None]
        idx, objects = idx[keep], [objects[k] for k in keep]
    if objects:
        _by_keys(idx, objects, first, out)
    texts = out.texts.tolist()
    if None in texts:
        for i in [i for i, t in enumerate(texts) if t is None]:
            line = lines[i]
            if line.strip():  # blank lines get no answer
                out[i] = line_output(first + i, parsed_line(line + "\n" if ended or i < n - 1
                                                         else line))
    return out


class _Parsed:
    """``json.loads`` of line ``i`` of a scanned chunk, when asked for (the scalar path for a
    group the calculator refuses as a whole)."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def __getitem__(self, i: int):
        return json.loads(self.lines[i])


def _by_scan(scanned, lines: list[str], first: int, out: _Answers) -> None:
    """Answers for a chunk read by :func:`~gpumodeler.cli.occupancy_scan.scan`: one
    vectorised call per compute capability."""
    n = len(lines)
    zero = np.zeros(n, dtype=np.int64)
    sizes = np.stack([scanned.numbers.get(name, zero) for name in _SIZES], axis=1)
    objs = _Parsed(lines)
    huge = np.flatnonzero(sizes.max(axis=1) >= INT_LIMIT)
    for i in huge.tolist():  # the scalar path, as for the JSON reader's columns
        out[i] = line_output(first + i, objs[i])
    constants = scanned.constants
    options = (constants.get("opt_in", False), constants.get("carveout_percent"),
               constants.get("shared_mem_config"))
    codes = scanned.cc
    chosen = np.arange(n) if not huge.size else np.setdiff1d(np.arange(n), huge)
    if not chosen.size:
        return
    if codes.min() == codes.max():
        parts = [chosen]
    else:
        order = chosen[np.argsort(codes[chosen], kind="stable")]
        parts = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1)
    for members in parts:
        cc = scanned.cc_text(int(codes[members[0]]))
        _group((cc, *options), sizes[members], members, objs, members, first, out)


def _objects(lines: list[str], idx: list[int], body: str | None = None) -> list:
    """``json.loads`` of each line in ``idx`` (``body``: those lines joined, if at hand),
    parsed many at a time (see the module docstring for why the items are the lines'
    objects); None for a line the scalar path must read.

    A piece that does not parse is cut where the parser stopped: the lines before that line
    are parsed again (:func:`_halving`), that line goes to the scalar path, and reading
    goes on after it with pieces growing from :data:`_SMALLEST` lines, so that a bad line
    costs a few short parses, not a parse of the whole chunk."""
    n = len(idx)
    out: list = [None] * n
    start, size = 0, n
    while start < n:
        stop = min(n, start + size)
        items, stopped = _parse(lines, idx[start:stop], body if stop - start == n else None)
        if items is not None:
            out[start:stop] = items
            start, size = stop, 2 * size
            continue
        if stopped is None:  # no position to cut at (a number of 5000 digits): halve it
            out[start:stop] = _halving(lines, idx[start:stop])
            start, size = stop, _SMALLEST
            continue
        if stopped:
            out[start:start + stopped] = _halving(lines, idx[start:start + stopped])
        start, size = start + stopped + 1, _SMALLEST
    return out


def _parse(lines: list[str], idx: list[int], body: str | None = None):
    """(the objects of lines ``idx``, None) when one ``json.loads`` of them as an array is
    one flat object per line; else (None, the index in ``idx`` of the line where a
    JSONDecodeError stopped the parser, or None)."""
    if body is None:
        body = ",\n".join([lines[i] for i in idx])
    try:
        items = json.loads("[" + body + "]")
    except json.JSONDecodeError as exc:
        ends = list(accumulate(len(lines[i]) + 2 for i in idx))  # each line and its ",\n"
        return None, min(bisect_right(ends, exc.pos - 1), len(idx) - 1)
    except (ValueError, RecursionError):  # a number of 5000 digits, a nesting too deep
        return None, None
    # the lines hold no "{" but their first and no "[": no item can hold a list or an object
    return (items, None) if len(items) == len(idx) else (None, None)


def _halving(lines: list[str], idx: list[int]) -> list:
    """The objects of lines ``idx`` parsed together, or each half of them so (recursively,
    down to :data:`_SMALLEST` lines, which the scalar path reads: None)."""
    items, _ = _parse(lines, idx)
    if items is not None:
        return items
    if len(idx) <= _SMALLEST:
        return [None] * len(idx)
    half = len(idx) // 2
    return _halving(lines, idx[:half]) + _halving(lines, idx[half:])


def _by_keys(pos: np.ndarray, objs: list, first: int, out: _Answers) -> None:
    """Answers for the parsed lines (at ``pos`` in the chunk), grouped by their keys."""
    names = tuple(objs[0])
    if set(map(len, objs)) == {len(names)}:  # the usual case: the same keys on every line
        try:
            column = {k: list(map(itemgetter(k), objs)) for k in names}
        except KeyError:  # the same number of keys, not the same keys
            column = None
        if column is not None:
            _keyed(names, pos, objs, first, out, column)
            return
    groups: dict = {}
    for k, key in enumerate(map(frozenset, objs)):
        members = groups.get(key)
        if members is None:
            members = groups[key] = []
        members.append(k)
    for key, members in groups.items():
        _keyed(tuple(key), pos[members], [objs[m] for m in members], first, out)


def _keyed(keys: tuple, pos: np.ndarray, objs: list, first: int, out: _Answers,
           column: dict | None = None) -> None:
    """Lines with the same keys (``column``: their values by key, if at hand)."""
    if set(keys) <= BATCH_KEYS and all(name in keys for name in _REQUIRED):
        _columns(keys, pos, objs, first, out, column)
    else:  # unknown or missing keys: the scalar path's message
        for i, obj in zip(pos.tolist(), objs):
            out[i] = line_output(first + i, obj)


def _int_column(values: list) -> tuple[np.ndarray, np.ndarray | None]:
    """The values as int64 and which of them are plain integers in [0, 2^62) (None: all)."""
    if set(map(type, values)) == {int}:
        try:
            a = np.array(values, dtype=np.int64)
        except OverflowError:
            a = None
        if a is not None and a.min() >= 0 and a.max() < INT_LIMIT:
            return a, None
    good = np.array([type(v) is int and 0 <= v < INT_LIMIT for v in values], dtype=bool)
    return np.array([v if g else 0 for v, g in zip(values, good.tolist())], dtype=np.int64), good


def _option(values: list, kinds: tuple) -> np.ndarray | None:
    """Which option values are of the types the vectorised call takes (None: all)."""
    if set(map(type, values)) <= set(kinds):
        return None
    return np.array([type(v) in kinds for v in values], dtype=bool)


def _columns(keys: tuple, pos: np.ndarray, objs: list, first: int, out: _Answers,
             column: dict | None = None) -> None:
    """Lines with the same valid keys: columns, then one vectorised call per option group;
    a line whose values the vectorised call does not take gets the scalar answer."""
    n = len(objs)
    if column is None:
        column = {k: list(map(itemgetter(k), objs)) for k in keys}
    good = np.ones(n, dtype=bool)
    sizes = []
    for name in _SIZES:
        if name in column:
            values, ok = _int_column(column[name])
            if ok is not None:
                good &= ok
        else:
            values = np.zeros(n, dtype=np.int64)
        sizes.append(values)
    ccs = column["cc"]
    if set(map(type, ccs)) != {str}:
        ccs = [c if type(c) is str else str(c) for c in ccs]
    options = [ccs]
    for name, kinds in (("opt_in", (bool,)), ("carveout_percent", (int, type(None))),
                        ("shared_mem_config", (int, type(None)))):
        values = column.get(name)
        if values is not None:
            ok = _option(values, kinds)
            if ok is not None:
                good &= ok
        options.append(values)
    present = [v for v in options if v is not None]
    table: dict = {}  # option key -> its first line (the group's number)
    group = np.array(list(map(table.setdefault,
                              present[0] if len(present) == 1 else zip(*present), range(n))),
                     dtype=np.int64)
    for k in np.flatnonzero(~good).tolist():
        out[pos[k]] = line_output(first + int(pos[k]), objs[k])
    chosen = np.flatnonzero(good)
    if not chosen.size:
        return
    if len(table) == 1:
        parts = [chosen]
    else:
        order = chosen[np.argsort(group[chosen], kind="stable")]
        parts = np.split(order, np.flatnonzero(np.diff(group[order])) + 1)
    size_table = np.stack(sizes, axis=1)
    for members in parts:
        m = int(members[0])
        option = tuple(v[m] if v is not None else d for v, d in
                       zip(options, (None, False, None, None)))
        _group(option, size_table[members], pos[members], objs, members, first, out)


def _group(option: tuple, sizes: np.ndarray, pos: np.ndarray, objs: list, members: np.ndarray,
           first: int, out: _Answers) -> None:
    """Lines sharing (cc, opt_in, carveout, config): one vectorised call. A group the
    calculator refuses as a whole (an unknown cc, a bad carveout) goes line by line."""
    from gpumodeler.core.occupancy.calculator import LIMIT_NAMES, occupancy_array

    cc, opt_in, carveout, config = option
    try:
        arrays = occupancy_array(cc, sizes[:, 0], sizes[:, 1], sizes[:, 2],
                                 static_shared_mem_bytes=sizes[:, 3], opt_in=opt_in,
                                 carveout_percent=carveout, shared_mem_config_bytes=config)
    except (ValueError, ModelError):
        for i, m in zip(pos.tolist(), members.tolist()):
            out[i] = line_output(first + i, objs[m])
        return
    valid = arrays.valid
    bad = np.flatnonzero(~valid)
    if bad.size:  # the scalar calculator's LaunchError messages
        out[pos[bad]] = _objects_array(error_lines(arrays, bad, pos[bad] + first))
    ok = np.flatnonzero(valid)
    if not ok.size:
        return
    b, r, d, s = (int(v) for v in sizes[ok[0]])
    reference = json.dumps(one_launch(cc, b, r, d, s, opt_in, carveout, config))
    lines = answer_lines(json.loads(reference), arrays, ok, LIMIT_NAMES)
    if lines.texts(0, 1)[0] == reference:
        out.defer(pos[ok], lines)
    else:  # pragma: no cover - a guard, never seen
        out[pos[ok]] = _objects_array([line_output(first + i, objs[m]) for i, m in
                                       zip(pos[ok].tolist(), members[ok].tolist())])


def _objects_array(texts: list) -> np.ndarray:
    """``texts`` as a 1-D object array (the same str objects; numpy would make a str array)."""
    a = np.empty(len(texts), dtype=object)
    a[:] = texts
    return a
