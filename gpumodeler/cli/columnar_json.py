"""Indented JSON written column by column: the text of ``json.dumps(obj, indent=...,
ensure_ascii=False)``, byte for byte, for big documents of many similar records (a 10^5-step
timeline: 124 000 step objects of the same keys).

The standard library writes an indented document in Python, one call per value; without an
indent, in C, but indenting that text afterwards costs as much again. Here every value of the
document is written together with the values at the same depth of the same kind: all the
strings of a depth in one ``map`` of the C string encoder, all the floats in one pass (each
distinct float formatted once: a timeline repeats its bandwidths, zeros and shares), every
object with the same keys joined from the same pieces, every list by joining its items'
texts. The per-value work is then done in C, and Python only loops over containers.

The caller (:func:`gpumodeler.cli.common.indented_json`) falls back to the standard
library's own route for anything unusual — keys that are not strings, a cycle, deep nesting,
a value it cannot write (its error is then the standard library's, raised in the same
order) — so this module only has to be right on what it accepts; it raises
:class:`Unsupported` for the rest.
"""
from __future__ import annotations

from array import array as doubles_of
from itertools import chain, compress, filterfalse, islice, repeat
from json.encoder import encode_basestring  # the C encoder of ensure_ascii=False
import math
from operator import is_

#: From how many floats at one depth they are formatted once per distinct value (numpy).
_DEDUPLICATE_FROM = 256


#: How many rows of :class:`Records` are written at a time.
_ROWS = 1024

#: Up to how many lengths a long column of lists is written a length at a time.
_SIZES = 16


def _one_sign(values: list) -> bool:
    """Whether the zeros among the floats ``values`` are all 0.0 or all -0.0: the zeros
    picked out (the only false floats), their bits laid out by ``array``, and -0.0 is the
    only one with a byte 0x80 (all in C; numpy's array of every value cost twice as much)."""
    zeros = list(filterfalse(None, values))
    negative = doubles_of("d", zeros).tobytes().count(0x80)
    return negative == 0 or negative == len(zeros)


def interleaved(between: list, columns: list) -> list:
    """Row after row, ``between[0]``, the row's item of ``columns[0]``, ``between[1]``,
    ..., the row's item of the last column, ``between[-1]``: the pieces that ``"".join``
    makes the rows' text from (``len(between) == len(columns) + 1``, the columns of one
    length). Laid out in C: the constant pieces by repeating one row, each column put in
    its place by a slice assignment (at 10^5 timeline steps, half the time of joining
    ``zip`` of the columns and of ``repeat``s of the constants: 0.13 -> 0.07 s)."""
    width = len(between) + len(columns)
    row: list = [None] * width
    row[0::2] = between
    pieces = row * len(columns[0]) if columns else list(between)
    for k, column in enumerate(columns):
        pieces[2 * k + 1::width] = column
    return pieces


class Unsupported(Exception):
    """Something the columnar writer leaves to the standard library."""


class Records:
    """A list of objects that all have the keys ``keys`` (in that order), given as columns:
    ``columns[k][i]`` is the value of ``keys[k]`` in object ``i``. Written as the list of
    those objects would be (:meth:`rows`), without making the objects: a 10^5-step
    timeline's steps, whose values are computed a column at a time. Only this writer knows
    it: the standard library is given :meth:`rows`."""

    __slots__ = ("keys", "columns")

    def __init__(self, keys, columns):
        self.keys = tuple(keys)
        self.columns = tuple(columns)
        if len(self.columns) != len(self.keys) or len(set(map(len, self.columns))) > 1:
            raise ValueError("Records: one column per key, all of one length")

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def rows(self) -> list:
        """The objects, one dict per row."""
        if not self.keys:
            return []
        keys = self.keys
        return [dict(zip(keys, row)) for row in zip(*self.columns)]


def dumps(obj, default=None, indent: int = 2, allow_nan: bool = True) -> str:
    """``json.dumps(obj, indent=indent, default=default, ensure_ascii=False,
    allow_nan=allow_nan)``; :class:`Unsupported`, ValueError, TypeError or RecursionError
    where the caller must ask the standard library (module docstring)."""
    return "".join(dump_parts(obj, default, indent, allow_nan))


def dump_parts(obj, default=None, indent: int = 2, allow_nan: bool = True) -> list[str]:
    """The text of :func:`dumps` in pieces, in order (their concatenation is that text,
    raising what it raises, before any piece is given): a :class:`Records`' rows are a
    piece per slice of :data:`_ROWS` rows, never joined into one string, so that a caller
    writing a 10^5-step document encodes and writes it a slice at a time (the one string
    of 10^8 characters, and its copies on the way out, cost a third of a second); and an
    object's keys and values are pieces of their own."""
    writer = _Writer(default, indent, allow_nan)
    if obj.__class__ is dict and obj:
        # an object: its text left in the pieces it is joined from (a key, a value, ...), so
        # that a value of plain ASCII is written out as such (a 10^5-instruction graph's
        # document: encoded in a fifth of the time when the few non-ASCII characters do not
        # make all of it one text of wider characters)
        texts = [next(p) if p.__class__ is repeat else p[0]
                 for p in writer.shaped_pieces(tuple(obj), [obj], 0)]
    else:
        texts = writer.many([obj], 0)
    if not writer.parts:
        return texts
    # each Records' text stands in the texts as a mark (_MARK, its number, _MARK): a
    # character the encoder never writes raw (it escapes every control character)
    out: list[str] = []
    for text in texts:
        for n, piece in enumerate(text.split(_MARK)):
            if n % 2:
                out += writer.parts[int(piece)]
            elif piece:
                out.append(piece)
    return out


#: What marks where a :class:`Records`' slices go (:func:`dump_parts`).
_MARK = "\x00"


class _Writer:
    def __init__(self, default, indent: int, allow_nan: bool):
        self.default = default
        self.indent = indent
        self.allow_nan = allow_nan
        self.breaks: dict = {}   # depth -> a line break and its indentation
        self.parts: list = []    # the slices of each Records written, by number (its mark)

    def line(self, level: int) -> str:
        text = self.breaks.get(level)
        if text is None:
            text = self.breaks[level] = "\n" + " " * (self.indent * level)
        return text

    def many(self, values: list, level: int) -> list:
        """The texts of ``values``, all at depth ``level``, in order."""
        types = list(map(type, values))
        kinds = dict.fromkeys(types)
        if len(kinds) == 1:
            return self.same(types[0], values, level)
        # each kind written apart, then the texts taken back in order (all in C)
        texts = {t: iter(self.same(t, list(compress(values, map(is_, types, repeat(t)))), level))
                 for t in kinds}
        return list(map(next, map(texts.__getitem__, types)))

    def same(self, kind, values: list, level: int) -> list:
        """The texts of ``values``, all of type ``kind``."""
        if kind is str:
            # names, engines and kinds repeat (each written once); ids do not (a sample says)
            if len(values) > _DEDUPLICATE_FROM and \
                    2 * len(set(values[:_DEDUPLICATE_FROM])) < _DEDUPLICATE_FROM:
                table = {v: encode_basestring(v) for v in set(values)}
                return list(map(table.__getitem__, values))
            return list(map(encode_basestring, values))
        if kind is float:
            return self.floats(values)
        if kind is type(None):
            return ["null"] * len(values)
        if kind is bool:
            return ["true" if v else "false" for v in values]
        if kind is int:
            return list(map(int.__repr__, values))
        if kind is dict:
            return self.objects(values, level)
        if kind is list or kind is tuple:
            return self.lists(values, level)
        if kind is Records:
            return [self.records(r, level) for r in values]
        # subclasses, in the standard library's order of tests; then ``default``
        if issubclass(kind, str):
            return list(map(encode_basestring, values))
        if issubclass(kind, int):
            return list(map(int.__repr__, values))
        if issubclass(kind, float):
            return self.floats(list(map(float, values)))
        if issubclass(kind, (list, tuple)):
            return self.lists(values, level)
        if issubclass(kind, dict):
            return self.objects(values, level)
        if self.default is None:
            raise TypeError(f"Object of type {kind.__name__} is not JSON serializable")
        return self.many(list(map(self.default, values)), level)

    def floats(self, values: list) -> list:
        if len(values) < _DEDUPLICATE_FROM:
            if not all(map(math.isfinite, values)):
                return [self.float_text(v) for v in values]
            return list(map(float.__repr__, values))
        # Each distinct number found by a dict (hashing in C) when equal numbers have one
        # text: all finite, and the zeros of one sign (0.0 == -0.0); else by bit pattern,
        # which sorts (a graph's 10^5 access costs: 5 ms instead of 14).
        table = dict.fromkeys(values)
        if all(map(math.isfinite, table)) and (0.0 not in table or _one_sign(values)):
            if 2 * len(table) > len(values):   # mostly distinct: no table
                return list(map(float.__repr__, values))
            text_of = dict(zip(table, map(float.__repr__, table)))
            return list(map(text_of.__getitem__, values))
        import numpy as np
        array = np.array(values, dtype=np.float64)
        # one text per distinct bit pattern (so -0.0 keeps its sign and NaN is NaN)
        distinct, where = np.unique(array.view(np.int64), return_inverse=True)
        numbers = distinct.view(np.float64)
        finite = bool(np.isfinite(numbers).all())
        if finite and 2 * len(distinct) > len(values):   # mostly distinct: no table
            return list(map(float.__repr__, values))
        texts = list(map(float.__repr__ if finite else self.float_text, numbers.tolist()))
        return list(map(texts.__getitem__, where.ravel().tolist()))

    def float_text(self, v: float) -> str:
        if math.isfinite(v):
            return float.__repr__(v)
        if not self.allow_nan:
            raise ValueError("Out of range float values are not JSON compliant")
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")

    def lists(self, values: list, level: int) -> list:
        if len(values) > _DEDUPLICATE_FROM:
            # lists of text repeat (a step's engines, its links): each distinct one written
            # once (of text only: equal lists of other things may be written differently,
            # [1] and [1.0] and [True])
            if set(map(type, chain.from_iterable(values))) == {str}:
                table = dict.fromkeys(map(tuple, values))
                if 2 * len(table) < len(values):
                    distinct = list(table)
                    table = dict(zip(distinct, self.lists(list(map(list, distinct)), level)))
                    return list(map(table.__getitem__, map(tuple, values)))
        lengths = list(map(len, values))
        if not any(lengths):
            return ["[]"] * len(values)
        sizes = dict.fromkeys(lengths)
        if len(values) > _DEDUPLICATE_FROM and 1 < len(sizes) <= _SIZES:
            # lists of a few lengths (a sync's waits): each length written apart, by its
            # template, then the texts taken back in order (all in C)
            texts = {n: iter(self.lists(list(compress(values, map(n.__eq__, lengths))), level))
                     for n in sizes}
            return list(map(next, map(texts.__getitem__, lengths)))
        items = self.many(list(chain.from_iterable(values)), level + 1)
        inner = self.line(level + 1)
        sep = "," + inner
        close = self.line(level) + "]"
        first = lengths[0] if lengths else 0
        if first and first <= len(lengths) and lengths.count(first) == len(lengths):
            # many short lists of one length (a step's engines, a copy's route): one
            # template, a column per place. (Not for a few long lists, such as a critical
            # path's 10^5 ids: a column per place is then a list per item, and joining each
            # list's items below is four times faster.)
            columns = [items[k::first] for k in range(first)]
            pieces = [repeat("[" + inner), columns[0]]
            for column in columns[1:]:
                pieces += [repeat(sep), column]
            pieces.append(repeat(close))
            return list(map("".join, zip(*pieces)))
        out = []
        at = 0
        for n in lengths:
            if n:   # (one copy of the text: a document's long list is most of it)
                out.append(f"[{inner}{sep.join(items[at:at + n])}{close}")
                at += n
            else:
                out.append("[]")
        return out

    def objects(self, values: list, level: int) -> list:
        keys = list(map(tuple, values))
        shapes = dict.fromkeys(keys)
        if len(shapes) == 1:
            return self.shaped(keys[0], values, level)
        # each shape written apart, then the texts taken back in order (all in C)
        texts = {k: iter(self.shaped(k, list(compress(values, map(k.__eq__, keys))), level))
                 for k in shapes}
        return list(map(next, map(texts.__getitem__, keys)))

    def shaped(self, keys: tuple, values: list, level: int) -> list:
        """Objects that all have the keys ``keys``, in that order."""
        if not keys:
            return ["{}"] * len(values)
        return list(map("".join, zip(*self.shaped_pieces(keys, values, level))))

    def shaped_pieces(self, keys: tuple, values: list, level: int) -> list:
        """The pieces :meth:`shaped` joins (``keys`` not empty): the constant ones repeated,
        the values' texts a list each."""
        if not all(type(k) is str for k in keys):
            raise Unsupported("a key that is not a string")
        texts = self.columns(list(map(list, zip(*map(dict.values, values)))), level + 1)
        inner = self.line(level + 1)
        # each object's text joined from its pieces: the constant ones (a key and what comes
        # before it) repeated, and the values' texts, a column each
        pieces: list = []
        for n, (key, column) in enumerate(zip(keys, texts)):
            pieces.append(repeat(("{" if n == 0 else ",") + inner + encode_basestring(key) + ": "))
            pieces.append(column)
        pieces.append(repeat(self.line(level) + "}"))
        return pieces

    def records(self, records: Records, level: int) -> str:
        """The text of ``records`` (:class:`Records`) as the list of its rows at depth
        ``level``: what :meth:`lists` of :meth:`objects` writes, built from the columns
        directly — the floats of every column formatted together (a timeline's starts, ends
        and ready times are mostly the same numbers), the whole list joined at once."""
        n = len(records)
        if n == 0:
            return "[]"
        keys = records.keys
        if not keys:
            return "[" + self.line(level + 1) + ("," + self.line(level + 1)).join(["{}"] * n) \
                + self.line(level) + "]"
        if not all(type(k) is str for k in keys):
            raise Unsupported("a key that is not a string")
        outer = self.line(level + 1)
        inner = self.line(level + 2)
        first_key = "{" + inner + encode_basestring(keys[0]) + ": "
        # what comes before each value (a key and what precedes it) and after the last
        between = ["," + outer + first_key]
        between += ["," + inner + encode_basestring(key) + ": " for key in keys[1:]]
        between.append(outer + "}")
        parts = []
        # a slice of rows at a time: the texts of a slice stay in the processor's caches (10^5
        # rows at once: a third slower)
        for start in range(0, n, _ROWS):
            texts = self.columns([list(c[start:start + _ROWS]) for c in records.columns],
                                 level + 2)
            pieces = interleaved(between, texts)
            if not start:
                pieces[0] = "[" + outer + first_key
            parts.append("".join(pieces))
        parts.append(self.line(level) + "]")
        # (the slices kept apart: their place in the text marked, see dump_parts)
        self.parts.append(parts)
        return f"{_MARK}{len(self.parts) - 1}{_MARK}"

    def columns(self, columns: list, level: int) -> list:
        """The texts of each of ``columns`` (lists of values at depth ``level``); the
        floats of the columns of floats and None all formatted in one :meth:`floats` call
        (each distinct number once)."""
        kinds = [set(map(type, c)) for c in columns]
        # (each value's type only where a column mixes types)
        types = [list(map(type, c)) if len(k) > 1 else None for c, k in zip(columns, kinds)]
        none = type(None)
        pooled = [float in k and all(t is float or t is none for t in k) for k in kinds]
        numbers: list = []
        for column, pool, t, k in zip(columns, pooled, types, kinds):
            if pool:
                numbers += column if len(k) == 1 else compress(column, map(is_, t, repeat(float)))
        if numbers:
            formatted = iter(self.floats(numbers))
        out = []
        for column, pool, t, k in zip(columns, pooled, types, kinds):
            if not pool:
                out.append(self.same(next(iter(k)), column, level) if len(k) == 1
                           else self.many(column, level))
            elif len(k) == 1:
                out.append(list(islice(formatted, len(column))))
            else:   # floats and None: each text taken back in order (in C)
                texts = {float: formatted, none: repeat("null")}
                out.append(list(map(next, map(texts.__getitem__, t))))
        return out
