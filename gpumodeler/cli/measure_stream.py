"""``measure import`` as a stream: a measurement file read a block at a time, and its records
written as they are read, as the text table or as ``--json``, so that neither the file, nor
its records, nor the output is ever held whole (memory does not grow with the file).

Choices, documented in docs/measurements.md:

* Nothing is written before the first :data:`HEAD` records are read (or the file ends): a
  bad row among them, or a file without records, gives one error line and no output, as
  when the whole file was read first. A bad row further on stops the command with the same
  error line (exit status 2) after the records before it were written.
* The text table's column widths are those of the header and the first :data:`HEAD` rows
  (all of them, for a file of at most that many records: the table is then the one the
  whole file gave). A later, wider cell widens its column from that row on.
* The ``stream`` and ``start`` columns are shown when one of the first :data:`HEAD`
  records has a stream (Nsight Systems exports: all of them).
"""
from __future__ import annotations

import codecs
import json
import sys
from itertools import chain, islice
from operator import itemgetter

from . import common
from gpumodeler.core.measurements.parsing import Remembered

from .main import CLIError

#: records read before anything is written (see the module docstring)
HEAD = 2000
#: bytes read from the file at a time
CHUNK_BYTES = 1 << 18
#: lines written at a time
WRITE_LINES = 200


def file_chunks(path: str, what: str = "a measurement file"):
    """The text of ``path`` (``-``: standard input) a block at a time, decoded as UTF-8 (a
    byte-order mark dropped); CLIError when it cannot be read, is not text (a NUL byte or
    bytes that are no UTF-8) or holds more than :data:`common.MAX_INPUT_BYTES` (an endless
    input such as ``/dev/zero`` ends there, with the message of a file read whole)."""
    cap = common.MAX_INPUT_BYTES
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    try:
        if path == "-":
            binary = getattr(sys.stdin, "buffer", None)
            if binary is not None:
                read = binary.read
            else:
                def read(n, text=sys.stdin):
                    return text.read(n).encode("utf-8")
            yield from _decoded(read, path, what, cap, decoder)
        else:
            with open(path, "rb") as fh:
                yield from _decoded(fh.read, path, what, cap, decoder)
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None


def _decoded(read, path, what, cap, decoder):
    total = 0
    while True:
        data = read(CHUNK_BYTES)
        total += len(data)
        if total > cap:
            raise CLIError(f"{path} holds more than {cap >> 20} MiB: not {what}")
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError:
            text = "\x00"
        if "\x00" in text:
            while data:   # the whole input is judged as when it was read whole: size first
                data = read(CHUNK_BYTES)
                total += len(data)
                if total > cap:
                    raise CLIError(f"{path} holds more than {cap >> 20} MiB: not {what}")
            raise CLIError(f"{path} is not a text file (expected a CSV measurement file)")
        if text:
            yield text
        if not data:
            return


# --- JSON ------------------------------------------------------------------------------

_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_string = json.encoder.encode_basestring   # (what that encoder writes for a str)
#: the fields of a record, in the order of ``Measurement.to_json``'s keys (its ``registers``
#: is ``registers_per_thread`` again, written after ``compute_capability``)
_FIELDS = ("kind", "direction", "name", "gpu", "grid", "block", "registers_per_thread",
           "shared_mem_bytes", "size_bytes", "time_s", "memory_kind", "metrics", "source",
           "row", "compute_capability", "stream", "device", "start_s", "end_s")
_VALUES = itemgetter(*_FIELDS)
#: the fields ``to_json`` writes as null when they are empty (``value or None``)
_OR_NULL = frozenset({"direction", "gpu", "memory_kind", "compute_capability"})
#: texts, launches and line formats remembered at most (each memory cleared when full)
_TEMPLATES = 4096
#: the types of a tuple of k ints
_INTS = [(int,) * k for k in range(8)]


def _number(value) -> str:
    """A number (or None) as the standard library's encoder writes it."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is float:
        if value - value != 0:    # inf or nan: refused like the encoder (allow_nan=False)
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        return float.__repr__(value)
    if kind is int:
        return int.__repr__(value)
    return _encode(value)


class _Strings(dict):
    """str -> its JSON text (``empty``'s text for ""), each encoded once (bounded). Only
    exact ``str`` values are looked up (the line format is chosen by the fields' types), so
    two equal keys have the same JSON text."""

    def __init__(self, empty: str):
        super().__init__()
        self.empty = empty

    def __missing__(self, text: str) -> str:
        encoded = self.empty if text == "" else _string(text)
        if len(self) >= _TEMPLATES:
            self.clear()
        self[text] = encoded
        return encoded


#: the metrics' text ``m`` of a line's format, from its metrics dict ``METRICS``: one entry
#: of a str name, a finite float value and a str unit (an nvprof copy's throughput) written
#: in the line's function, any other through :meth:`JsonLines.metrics` (a function call
#: and a list less for the common case)
_METRICS_STATEMENTS = """\
    if not METRICS:
        m = "{}"
    elif len(METRICS) == 1:
        (mk, (mv, mu)), = METRICS.items()
        if type(mv) is float and mv - mv == 0 and type(mk) is str and type(mu) is str:
            m = f'{{{S[mk]}: {{"value": {mv!r}, "unit": {S[mu]}}}}}'
        else:
            m = M(METRICS)
    else:
        m = M(METRICS)
"""


#: the launch text ``gLAUNCH`` of a line's format from its grid or block tuple ``LAUNCH``:
#: three exact ints written in the line's function (an int's JSON is its digits; a launch's
#: numbers differ from launch to launch in a real trace), any other through
#: :meth:`JsonLines.launch`
_LAUNCH_STATEMENTS = """\
    if len(LAUNCH) == 3:
        a, b, c = LAUNCH
        if type(a) is int and type(b) is int and type(c) is int:
            gLAUNCH = "[%d, %d, %d]" % LAUNCH
        else:
            gLAUNCH = L(LAUNCH)
    else:
        gLAUNCH = L(LAUNCH)
"""


#: the text ``gl`` of a line's grid and block (``[x, y, z], "block": [x, y, z]``) from its
#: two tuples ``v4`` and ``v5``: six exact ints, or two (a timings CSV's one-number grid and
#: block), written by one f-string (an int's JSON is its digits), any other through
#: :meth:`JsonLines.launch`
_GRID_BLOCK_STATEMENTS = """\
    if len(v4) == 3 and len(v5) == 3:
        a, b, c = v4
        d, e, f = v5
        if type(a) is int and type(b) is int and type(c) is int and type(d) is int and \\
                type(e) is int and type(f) is int:
            gl = f'[{a}, {b}, {c}], "block": [{d}, {e}, {f}]'
        else:
            gl = L(v4) + ', "block": ' + L(v5)
    elif len(v4) == 1 and len(v5) == 1:
        a, = v4
        d, = v5
        if type(a) is int and type(d) is int:
            gl = f'[{a}], "block": [{d}]'
        else:
            gl = L(v4) + ', "block": ' + L(v5)
    else:
        gl = L(v4) + ', "block": ' + L(v5)
"""


class _Heads(dict):
    """(kind, direction, name, gpu) of exact ``str`` values -> the text of those four fields
    in a line (``"kind": ..., "direction": ..., "name": ..., "gpu": ...``), each distinct
    combination written once (bounded): one look-up per record instead of four (the four
    repeat down a file: a handful of kernels and copy directions per device)."""

    def __init__(self, plain: _Strings, or_null: _Strings):
        super().__init__()
        self.plain, self.or_null = plain, or_null

    def __missing__(self, key: tuple) -> str:
        kind, direction, name, gpu = key
        plain, or_null = self.plain, self.or_null
        text = (f'"kind": {plain[kind]}, "direction": {or_null[direction]}, '
                f'"name": {plain[name]}, "gpu": {or_null[gpu]}')
        if len(self) >= _TEMPLATES:
            self.clear()
        self[key] = text
        return text


class JsonLines:
    """Each record's ``to_json()`` as one line of JSON, the same text the standard
    library's encoder gives (``ensure_ascii=False, allow_nan=False``; tests compare them),
    at a fraction of the cost and without building the record's dict.

    The line is written by a format chosen by the exact types of the record's fields (a
    handful per file: the importers give str, int, float, tuple, dict or None), compiled
    once per combination of types (:meth:`format`) and never per value, so a file whose
    values all differ costs what a file of repeated rows costs. Per field of the format:
    None is ``null``; an int or a float is its ``repr`` (what the encoder writes for a
    finite one: ``int.__repr__``, ``float.__repr__``); a str its encoder's text, each
    distinct text encoded once; a grid or block tuple the encoder's list (a tuple of ints
    as its digits, remembered per distinct value: launch shapes repeat); the metrics dict per entry as :meth:`metrics`. A record with a field of any other type
    (a bool, a list, a str subclass...) or a float field that is not finite is encoded whole
    by the standard encoder (which refuses inf and nan with its own error)."""

    def __init__(self):
        self.formats: dict = {}     # the fields' types -> the line's format (or None)
        self.plain = _Strings('""')
        self.or_null = _Strings("null")
        self.by_value: dict = {}    # a launch tuple of ints -> its JSON
        self.heads = _Heads(self.plain, self.or_null)
        self.sources: dict = {}     # a table's source -> its JSON text
        self.made: dict = {}        # lines made by kernels() and copies(), per kind

    def source(self, source) -> str:
        """The JSON text of a table's ``source`` (as the encoder writes it)."""
        text = self.sources.get(source)
        if text is None:
            text = self.sources[source] = _encode(source)
        return text

    def kernels(self, source, names, gpus, launches, times, rows) -> list[str]:
        """The lines of a chunk's kernel rows from their columns (the reader's
        ``nvprof_chunks.Formatter``: exact types, checked values); one f-string per line."""
        self.made["kernel"] = self.made.get("kernel", 0) + len(rows)
        src = self.source(source)
        heads = self.heads
        return [f'{{{heads["kernel", "", n, g]}, "grid": [{a}, {b}, {c}], "block": [{d}, {e}, '
                f'{f}], "registers_per_thread": {"null" if r is None else r}, '
                f'"shared_mem_bytes": {"null" if m is None else m}, "size_bytes": null, '
                f'"time_s": {t!r}, "memory_kind": null, "metrics": {{}}, "source": {src}, '
                f'"row": {row}, "compute_capability": null, "registers": '
                f'{"null" if r is None else r}, "stream": null, "device": null, "start_s": '
                f'null, "end_s": null}}'
                for n, g, ((a, b, c), (d, e, f), r, m), t, row in zip(names, gpus, launches,
                                                                         times, rows)]

    def copies(self, source, names, directions, gpus, sizes, times, memory_kinds, rates,
               rows) -> list[str]:
        """The lines of a chunk's copy rows from their columns (as :meth:`kernels`)."""
        self.made["transfer"] = self.made.get("transfer", 0) + len(rows)
        src = self.source(source)
        heads, or_null = self.heads, self.or_null
        out = []
        append = out.append
        for n, w, g, (_exact, size, u, _text), t, kind, thr, row in zip(
                names, directions, gpus, sizes, times, memory_kinds, rates, rows):
            if thr is None:
                m = f'{{"size_uncertainty": {{"value": {u!r}, "unit": "B"}}}}' if u > 0 else "{}"
            elif u > 0:
                m = f'{{"size_uncertainty": {{"value": {u!r}, "unit": "B"}}, "throughput": ' \
                    f'{{"value": {thr!r}, "unit": "B/s"}}}}'
            else:
                m = f'{{"throughput": {{"value": {thr!r}, "unit": "B/s"}}}}'
            append(f'{{{heads["transfer", w, n, g]}, "grid": null, "block": null, '
                   f'"registers_per_thread": null, "shared_mem_bytes": null, "size_bytes": '
                   f'{size!r}, "time_s": {t!r}, "memory_kind": {or_null[kind]}, "metrics": {m}, '
                   f'"source": {src}, "row": {row}, "compute_capability": null, "registers": '
                   f'null, "stream": null, "device": null, "start_s": null, "end_s": null}}')
        return out

    def launch(self, cells: tuple) -> str:
        """A grid or block tuple's JSON (``null`` when empty, as ``to_json``). One of ints is
        remembered by its value (:attr:`by_value`): only tuples of exact ints are looked up
        and kept, and equal tuples of ints have the same digits (an equal tuple of other
        items, (True, 1, 1) == (1, 1, 1), is never looked up)."""
        if len(cells) == 3 and type(cells[0]) is int and type(cells[1]) is int and \
                type(cells[2]) is int:
            text = self.by_value.get(cells)
            if text is None:
                text = "[%d, %d, %d]" % cells     # (an int's JSON is its digits)
            else:
                return text
        elif len(cells) < 8 and tuple(map(type, cells)) == _INTS[len(cells)]:
            text = self.by_value.get(cells)
            if text is None:
                text = "[" + ", ".join(map(int.__repr__, cells)) + "]" if cells else "null"
            else:
                return text
        else:
            return _encode(list(cells)) if cells else "null"
        if len(self.by_value) >= _TEMPLATES:
            self.by_value.clear()
        self.by_value[cells] = text
        return text

    def metrics(self, metrics: dict) -> str:
        """The JSON of a record's metrics ({name: {"value", "unit"}}): a finite float value
        as its repr, an int as its digits; any other entry by the encoder (which refuses a
        float that is not finite)."""
        plain = self.plain
        if len(metrics) == 1:       # (a copy's throughput: the common case, without a list)
            for k, (v, u) in metrics.items():
                if type(v) is float and v - v == 0 and type(k) is str and type(u) is str:
                    return f'{{{plain[k]}: {{"value": {float.__repr__(v)}, "unit": {plain[u]}}}}}'
        parts = []
        for k, (v, u) in metrics.items():
            if type(k) is str and type(u) is str:
                kind = type(v)
                if kind is float and v - v == 0:
                    value = float.__repr__(v)
                elif kind is int:
                    value = int.__repr__(v)
                elif v is None:
                    value = "null"
                else:
                    value = _encode(v)
                parts.append(f'{plain[k]}: {{"value": {value}, "unit": {plain[u]}}}')
            else:
                parts.append(_encode({k: {"value": v, "unit": u}})[1:-1])
        return "{" + ", ".join(parts) + "}"

    def format(self, types: tuple):
        """The function of the tuple of a record's field values (:data:`_FIELDS`' order) giving its line
        for fields of these ``types``, or None when one has a type the format leaves to the
        encoder. An f-string compiled once per combination of types."""
        slots = []
        floats = []
        pre: list[str] = []
        grid_block = types[4] is tuple and types[5] is tuple    # (one text for both)
        for k, (name, kind) in enumerate(zip(_FIELDS, types)):
            v = f"v{k}"
            if kind is type(None):
                slot = "null"
            elif kind is str:
                slot = "{%s[%s]}" % ("N" if name in _OR_NULL else "S", v)
            elif kind is int or kind is float:
                if name in _OR_NULL or name in ("grid", "block", "metrics"):
                    return None
                slot = "{%s!r}" % v
                if kind is float:
                    floats.append(v)
            elif kind is tuple and name in ("grid", "block"):
                if grid_block:
                    slot = "{gl}"
                    if name == "grid":
                        pre.append(_GRID_BLOCK_STATEMENTS)
                else:
                    slot = "{g%s}" % v
                    pre.append(_LAUNCH_STATEMENTS.replace("LAUNCH", v))
            elif kind is dict and name == "metrics":
                slot = "{m}"
                pre.append(_METRICS_STATEMENTS.replace("METRICS", v))
            else:
                return None
            slots.append(slot)
        if slots[6] == "{v6!r}":     # (registers, written twice: its repr made once)
            pre.append("    r6 = repr(v6)\n")
            slots[6] = "{r6}"
        keys = list(_FIELDS)
        keys.insert(15, "registers")
        slots.insert(15, slots[6])
        parts = [f'"{key}": {slot}' for key, slot in zip(keys, slots)]
        if grid_block:
            del parts[5]      # ("block" is written in the grid's text)
        if types[:4] == (str, str, str, str):     # (kind, direction, name, gpu: one look-up)
            parts[:4] = ["{H[v0, v1, v2, v3]}"]
        body = ", ".join(parts)
        space = {"S": self.plain, "N": self.or_null, "L": self.launch, "M": self.metrics,
                 "H": self.heads}
        names = ", ".join(f"v{k}" for k in range(len(_FIELDS)))
        # (x - x is 0.0 for a finite float, nan for inf or nan: then None, the encoder judges)
        check = f"    if {' or '.join(f'{v} - {v}' for v in floats)}:\n        return None\n" \
            if floats else ""
        exec(f"def line(values):\n    {names} = values\n{check}{''.join(pre)}"
             f"    return f'{{{{{body}}}}}'\n", space)
        return space["line"]

    def __call__(self, record) -> tuple[str, str]:
        """(the record's line, its kind)."""
        values = _VALUES(record.__dict__)
        line = self.formats.get(tuple(map(type, values)), "")
        if line == "":
            line = self.learn(values)
        text = line(values) if line is not None else None
        if text is None:        # (rare: the encoder judges)
            text = _encode(record.to_json())
        return text, values[0]

    def learn(self, values: tuple):
        """The line format of records with the types of ``values`` (remembered)."""
        types = tuple(map(type, values))
        line = self.format(types)
        if len(self.formats) >= _TEMPLATES:
            self.formats.clear()
        self.formats[types] = line
        return line


def write_json(records, out=None, batch: int | None = None,
               lines: JsonLines | None = None) -> dict:
    """The records as a JSON list on ``out`` (stdout), one record per line (``[`` and ``]``
    on lines of their own), written ``batch`` lines at a time; the count of records per
    kind. A ``str`` among ``records`` is a line made by ``lines`` (given to the reader as
    its formatter: :meth:`JsonLines.kernels`, :meth:`JsonLines.copies`), written as it is
    and counted where it was made. (:meth:`JsonLines.__call__` inlined: the loop is the hot
    path of an import.)"""
    out = out or sys.stdout
    batch = batch or WRITE_LINES
    lines = JsonLines() if lines is None else lines
    formats, learn = lines.formats, lines.learn
    get_values, encode = _VALUES, _encode
    chunk: list = []
    append = chunk.append
    counts: dict = {}
    written = False
    for r in records:
        if type(r) is str:      # (made from the reader's columns, counted there)
            append(r)
            if len(chunk) >= batch:
                out.write((",\n" if written else "[\n") + ",\n".join(chunk))
                written = True
                chunk.clear()
            continue
        values = get_values(r.__dict__)
        line = formats.get(tuple(map(type, values)), learn)
        if line is learn:      # (types not met yet)
            line = learn(values)
        text = line(values) if line is not None else None
        if text is None:
            text = encode(r.to_json())
        append(text)
        try:
            counts[values[0]] += 1
        except KeyError:
            counts[values[0]] = 1
        if len(chunk) >= batch:
            out.write((",\n" if written else "[\n") + ",\n".join(chunk))
            written = True
            chunk.clear()
    if chunk:
        out.write((",\n" if written else "[\n") + ",\n".join(chunk) + "\n]\n")
    else:
        out.write("\n]\n" if written else "[]\n")
    for kind, n in lines.made.items():
        counts[kind] = counts.get(kind, 0) + n
    return counts


def read_ahead(records, n: int | None = None) -> tuple[list, object]:
    """(the first ``n`` (:data:`HEAD`) records, an iterator over them all): a bad row among
    the first ``n`` raises before anything is written."""
    records = iter(records)
    head = list(islice(records, HEAD if n is None else n))
    return head, chain(head, records)


# --- the text table --------------------------------------------------------------------

def _size(n) -> str:
    """A copy's size cell: 4 significant digits in GiB, MiB or KiB (binary), else B."""
    if n is None:
        return ""
    if n >= 1048576:
        return f"{n / 1073741824:.4g} GiB" if n >= 1073741824 else f"{n / 1048576:.4g} MiB"
    if n >= 1024:
        return f"{n / 1024:.4g} KiB"
    return f"{n:g} B"


HEADER = ("row", "kind", "dir", "name", "gpu", "launch / size", "time", "memory", "metrics")
STREAM_HEADER = ("stream", "start")


def _time(seconds: float) -> str:
    """common.fmt_time(seconds) (a test compares them) without its general unit rule: 6
    significant digits in s, ms or µs."""
    size = abs(seconds)
    if size >= 1.0:
        return f"{seconds / 1.0:.6g} s"
    if size >= 1e-3:
        return f"{seconds / 1e-3:.6g} ms"
    return f"{seconds / 1e-6:.6g} µs"


#: the cells that repeat down a file, read once per distinct combination
_SHOWN = itemgetter("kind", "direction", "name", "gpu", "memory_kind")
#: the metrics cell of a record with k metrics
_COUNTS = [""] + [str(k) for k in range(1, 100)]


def _launch(grid, block) -> str:
    """A kernel's launch cell (``4096x1x1 x 256x1x1``; "" without a grid or a block)."""
    if not grid or not block:
        return ""
    if len(grid) == 3 and len(block) == 3:     # ("%s" is str(): the join's text)
        return "%sx%sx%s x %sx%sx%s" % (*grid, *block)
    return f"{'x'.join(map(str, grid))} x {'x'.join(map(str, block))}"


class TableCells:
    """A record's cells in the text table. The cells that repeat (kind, direction, name,
    gpu, memory) are built once per distinct combination; a launch's or size's cell is
    remembered by its value while that pays (parsing.Remembered: given up when they all
    differ), the time written per record."""

    def __init__(self, streams: bool):
        self.streams = streams
        self.shown: dict = {}
        self.launches = Remembered(_TEMPLATES)   # (grid, block) -> its cell, while it pays
        self.sizes = Remembered(_TEMPLATES)      # a copy's size -> its cell, idem

    def static(self, key) -> tuple:
        kind, direction, name, gpu, memory = key
        if len(name) > 40:
            name = name[:37] + "..."
        cells = (kind, direction, name, gpu, memory, kind == "kernel")
        if len(self.shown) >= _TEMPLATES:
            self.shown.clear()
        self.shown[key] = cells
        return cells

    def __call__(self, r) -> tuple:
        d = r.__dict__
        key = _SHOWN(d)
        static = self.shown.get(key)
        if static is None:
            static = self.static(key)
        kind, direction, name, gpu, memory, kernel = static
        metrics = len(d["metrics"])
        count = _COUNTS[metrics] if metrics < 100 else str(metrics)
        if kernel:
            launches = self.launches
            key = (d["grid"], d["block"]) if launches.use else None
            launch = launches.get(key) if key is not None else None
            if launch is None:
                launch = _launch(*key) if key is not None else _launch(d["grid"], d["block"])
                if key is not None:
                    launches.keep(key, launch)
            else:
                launches.hits += 1
        else:
            sizes = self.sizes
            size = d["size_bytes"]
            launch = sizes.get(size) if sizes.use else None
            if launch is None:
                launch = _size(size)
                if sizes.use:
                    sizes.keep(size, launch)
            else:
                sizes.hits += 1
        time_s = d["time_s"]
        cells = (str(d["row"]), kind, direction, name, gpu, launch,
                 "" if time_s is None else _time(time_s), memory, count)
        if self.streams:
            stream, start = d["stream"], d["start_s"]
            cells += ("" if stream is None else str(stream),
                      "" if start is None else f"{start:.9f} s")
        return cells


def _line_format(widths) -> str:
    """The ``%`` format of a table line of these column widths (``%-8s`` pads a str as
    ``ljust(8)`` does)."""
    return "  ".join(f"%-{w}s" for w in widths)


def write_table(head: list, records, out=None) -> dict:
    """The records as the text table (the header line, then one line per record), written
    as they come; widths and the stream columns from ``head`` (the first records, which
    ``records`` yields again first; the module docstring). The count of records per kind."""
    out = out or sys.stdout
    streams = any(r.stream is not None for r in head)
    header = HEADER + (STREAM_HEADER if streams else ())
    widths = [len(h) for h in header]
    cells_of = TableCells(streams)
    for r in head:
        for k, c in enumerate(cells_of(r)):
            if len(c) > widths[k]:
                widths[k] = len(c)

    full = sum(widths) + 2 * (len(widths) - 1)
    fmt = _line_format(widths)
    lines = [(fmt % header).rstrip()]
    append = lines.append
    counts: dict = {}
    for r in records:
        cells = cells_of(r)
        kind = cells[1]
        try:
            counts[kind] += 1
        except KeyError:
            counts[kind] = 1
        line = fmt % cells
        if len(line) != full:    # a cell wider than its column: the column widens
            widths = [max(w, len(c)) for w, c in zip(widths, cells)]
            full = sum(widths) + 2 * (len(widths) - 1)
            fmt = _line_format(widths)
            line = fmt % cells
        append(line.rstrip())
        if len(lines) >= WRITE_LINES:
            append("")
            out.write("\n".join(lines))
            lines = []
            append = lines.append
    append("")
    out.write("\n".join(lines))
    return counts
