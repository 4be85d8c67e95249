"""The answer lines of ``occupancy --batch`` for a group of launches, formatted in bulk.

A group shares (cc, opt_in, carveout, configuration), so its answers share their keys, their
order and every value that does not vary. The line is a ``%`` template in the scalar answer's
key order (the scalar answer of the group's first launch gives both, see
:func:`answer_lines`); a value the same on every line is written into the template.

Each varying value is a *cell*: a column of small integer codes and the text of each code
(the JSON text of each distinct value, formatted once: ``str`` of an integer, ``repr`` of a
float, as :func:`json.dumps` writes them). Neighbouring cells whose joint values take few
distinct combinations (warps per block, active blocks, warps and threads, which all follow
from the block size and the active blocks; the limits and the limiting resources) are merged
into one cell with the constant text between them, so that a line takes about half as many
``%`` substitutions as it has varying fields; each combination is formatted once.

An error line is ``{"line": N, "error": "message"}`` with the message's own template
(:func:`gpumodeler.core.occupancy.array_messages.reason_parts`) inside the line's, so each
takes one ``%`` (:func:`error_lines`), as long as no message needs escaping in JSON.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii

import numpy as np

from gpumodeler.core.occupancy.array_messages import reason_parts

#: a merged cell may have at most this share of the group's lines as distinct texts
MERGE_SHARE = 8
#: a cell's codes: a table of every value between the least and the largest is used when the
#: range is at most this many times the number of lines (else np.unique)
_DENSE_RANGE = 16


class _Cell:
    """A varying field (or several merged): ``codes[i]`` indexes ``texts`` for line i."""

    __slots__ = ("codes", "texts")

    def __init__(self, codes: np.ndarray, texts: list):
        self.codes, self.texts = codes, texts


def _dense_codes(values: np.ndarray, lo: int, hi: int):
    """(codes, distinct values) of an integer column by a table over [lo, hi]."""
    shifted = values - lo if lo else values
    present = np.zeros(hi - lo + 1, dtype=bool)
    present[shifted] = True
    distinct = np.flatnonzero(present)
    remap = np.zeros(hi - lo + 1, dtype=np.int64)
    remap[distinct] = np.arange(distinct.size)
    return remap[shifted], distinct + lo if lo else distinct


def int_cell(values: np.ndarray) -> _Cell | str:
    """The cell of an integer column, or its text if every value is the same."""
    lo, hi = int(values.min()), int(values.max())
    if lo == hi:
        return str(lo)
    if hi - lo <= _DENSE_RANGE * values.size:
        codes, distinct = _dense_codes(values, lo, hi)
    else:
        distinct, codes = np.unique(values, return_inverse=True)
    return _Cell(codes.ravel(), list(map(str, distinct.tolist())))


def float_cell(values: np.ndarray) -> _Cell | str:
    """The cell of a float column (JSON writes ``repr`` of a finite float), or its text."""
    if np.signbit(values).any() or not np.isfinite(values).all():
        # -0.0 would merge with 0.0 in np.unique; NaN and infinities are json.dumps' own
        return _Cell(np.arange(values.size), list(map(json.dumps, values.tolist())))
    distinct, codes = np.unique(values, return_inverse=True)
    texts = list(map(repr, distinct.tolist()))
    return texts[0] if len(texts) == 1 else _Cell(codes.ravel(), texts)


def bool_cell(values: np.ndarray) -> _Cell | str:
    if values.all():
        return "true"
    if not values.any():
        return "false"
    return _Cell(values.astype(np.int64), ["false", "true"])


def names_cell(flags: dict, names: tuple) -> _Cell | str:
    """The cell of a JSON list of the names whose flag holds on each line (``limited_by``)."""
    code = np.zeros(len(flags[names[0]]), dtype=np.int64)
    for k, name in enumerate(names):
        code |= flags[name].astype(np.int64) << k
    cell = int_cell(code)
    as_list = {c: json.dumps([n for k, n in enumerate(names) if c >> k & 1])
               for c in range(1 << len(names))}
    if isinstance(cell, str):
        return as_list[int(cell)]
    cell.texts = [as_list[int(t)] for t in cell.texts]
    return cell


def _merged(a: _Cell, between: str, b: _Cell, limit: int) -> _Cell | None:
    """``a``, the constant text ``between``, ``b`` as one cell, if their combinations on the
    lines are at most ``limit``; else None."""
    width = len(b.texts)
    span = len(a.texts) * width
    if span > _DENSE_RANGE * a.codes.size + 4096:
        return None
    key = a.codes * width + b.codes
    present = np.zeros(span, dtype=bool)
    present[key] = True
    distinct = np.flatnonzero(present)
    if distinct.size > limit:
        return None
    remap = np.zeros(span, dtype=np.int64)
    remap[distinct] = np.arange(distinct.size)
    first, second = np.divmod(distinct, width)
    ta, tb = a.texts, b.texts
    return _Cell(remap[key], [ta[i] + between + tb[j]
                              for i, j in zip(first.tolist(), second.tolist())])


class Lines:
    """The answer lines of a group, formatted when asked for, a range of them at a time (so
    that a chunk's lines are written a few thousand at a time and not all held as text)."""

    __slots__ = ("template", "columns", "size")

    def __init__(self, template: str, columns: list, size: int):
        self.template, self.columns, self.size = template, columns, size

    def texts(self, start: int = 0, stop: int | None = None) -> list[str]:
        """Lines ``start`` to ``stop`` (all by default)."""
        stop = self.size if stop is None else stop
        if not self.columns:  # the template is the line: nothing varies
            return [self.template] * (stop - start)
        return list(map(self.template.__mod__, zip(*[c[start:stop] for c in self.columns])))


def fill(parts: list, n: int) -> Lines:
    """The ``n`` lines of ``parts``: texts (the same on every line) and cells, in order.

    Neighbouring cells are merged where that leaves few distinct texts (module docstring);
    the rest fill a ``%`` template, one substitution per cell."""
    limit = max(16, n // MERGE_SHARE)
    merged: list = []  # texts and cells, with no two texts in a row
    for part in parts:
        if isinstance(part, str):
            if merged and isinstance(merged[-1], str):
                merged[-1] += part
            else:
                merged.append(part)
            continue
        if merged and isinstance(merged[-1], _Cell):
            joined = _merged(merged[-1], "", part, limit)
            if joined is not None:
                merged[-1] = joined
                continue
        elif len(merged) >= 2 and isinstance(merged[-2], _Cell):
            joined = _merged(merged[-2], merged[-1], part, limit)
            if joined is not None:
                merged[-2:] = [joined]
                continue
        merged.append(part)
    template, columns = [], []
    for part in merged:
        if isinstance(part, str):
            template.append(part.replace("%", "%%"))
        else:
            template.append("%s")
            texts = np.empty(len(part.texts), dtype=object)
            texts[:] = part.texts
            columns.append(texts[part.codes].tolist())
    if not columns:
        return Lines("".join(merged), [], n)
    return Lines("".join(template), columns, n)


def answer_lines(reference: dict, arrays, ok: np.ndarray, limit_names: tuple) -> Lines:
    """The answer lines of the launches ``ok`` of a vectorised result ``arrays`` (all valid),
    whose first launch's scalar answer is ``reference`` (the keys, their order, and the
    values that :class:`OccupancyArrays` holds as one number for the whole group)."""
    parts: list = ["{"]
    for k, (name, value) in enumerate(reference.items()):
        parts.append(("" if k == 0 else ", ") + json.dumps(name) + ": ")
        if name == "block_limits":
            for j, limit in enumerate(value):
                parts.append(("{" if j == 0 else ", ") + json.dumps(limit) + ": ")
                parts.append(int_cell(arrays.block_limits[limit][ok]))
            parts.append("}")
            continue
        if name == "limited_by":
            parts.append(names_cell({n: arrays.limited_by[n][ok] for n in limit_names},
                                    limit_names))
            continue
        values = getattr(arrays, name)
        if np.ndim(values) == 0:  # the same for every launch of the group
            parts.append(json.dumps(value))
            continue
        values = np.asarray(values)[ok]
        kind = values.dtype.kind
        parts.append(bool_cell(values) if kind == "b" else float_cell(values) if kind == "f"
                     else int_cell(values))
    parts.append("}")
    return fill(parts, ok.size)


#: the characters json.dumps writes as they are (printable ASCII but a quote and a backslash)
_PLAIN = bytes(c for c in range(0x20, 0x7f) if chr(c) not in '"\\')


def error_lines(arrays, bad: np.ndarray, numbers: np.ndarray) -> list:
    """The error lines of the launches ``bad`` of a vectorised result, numbered ``numbers``:
    each message's template (:func:`~gpumodeler.core.occupancy.array_messages.reason_parts`)
    inside the line's, one ``%`` per line, when neither the templates nor the texts put in
    them need escaping; else :func:`_error_lines` of the messages."""
    parts = reason_parts(arrays, bad)
    for _, template, columns in parts:
        texts = [template] + [" ".join(set(c)) for c in columns if c and type(c[0]) is str]
        if not _plain(" ".join(texts)):
            return _error_lines(arrays.reasons[bad].tolist(), numbers.tolist())
    out = np.empty(bad.size, dtype=object)
    for rows, template, columns in parts:
        line = '{"line": %d, "error": "' + template + '"}'
        texts = list(map(line.__mod__, zip(numbers[rows].tolist(), *columns)))
        if len(parts) == 1:
            return texts  # one part holds every line, in order
        texts_array = np.empty(len(texts), dtype=object)
        texts_array[:] = texts
        out[rows] = texts_array
    return out.tolist()


def _plain(text: str) -> bool:
    """Whether json.dumps writes ``text`` as it is (printable ASCII, no quote or backslash)."""
    return text.isascii() and not text.encode("ascii").translate(None, _PLAIN)


def _error_lines(reasons: list, numbers: list) -> list:
    """``json.dumps({"line": number, "error": reason})`` of each pair: the reasons are put
    in the line as they are when no character of them needs escaping (checked once over
    all of them: printable ASCII but for a quote or a backslash), else each distinct reason
    is escaped once."""
    if _plain(" ".join(reasons)):
        return list(map('{"line": %d, "error": "%s"}'.__mod__, zip(numbers, reasons)))
    distinct = list(set(reasons))
    quoted = dict(zip(distinct, map(encode_basestring_ascii, distinct)))  # json.dumps(r)
    return list(map('{"line": %d, "error": %s}'.__mod__,
                    zip(numbers, map(quoted.__getitem__, reasons))))
