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
from .main import CLIError

#: records read before anything is written (see the module docstring)
HEAD = 2000
#: bytes read from the file at a time
CHUNK_BYTES = 1 << 18
#: lines written at a time
WRITE_LINES = 1000


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
#: the fields of a record's JSON that vary from record to record, in the JSON's order (the
#: others, name, kind, launch, source..., repeat and are encoded once per distinct value)
_BEFORE = ("size_bytes", "time_s")
_AFTER = ("row", "stream", "device", "start_s", "end_s")
_VARYING = itemgetter(*_BEFORE, *_AFTER)
_STATIC = itemgetter("kind", "direction", "name", "gpu", "grid", "block",
                     "registers_per_thread", "shared_mem_bytes", "memory_kind", "source",
                     "compute_capability")
_MARK = "\x00varying\x00"
#: encoded templates kept at most
_TEMPLATES = 4096


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


def _formatter(parts: list[str], slots: list[str]):
    """A function of the varying values giving the text: the template's literal ``parts``
    with the values between them, each ``repr`` (slot ``r``) or a whole float without its
    fraction then ``.0`` (slot ``w``: repr's text below 10^16). An f-string compiled once
    per template (the parts are in its namespace, never in its source): %-formatting a
    400-character template scans it character by character for each record, an f-string
    copies its parts whole, at a third of the cost."""
    names = [f"v{k}" for k in range(len(slots))]
    body = "{p0}" + "".join(("{%s!r}" % n if slot == "r" else "{%s:.0f}.0" % n) + "{p%d}" % (k + 1)
                            for k, (n, slot) in enumerate(zip(names, slots)))
    space = {f"p{k}": part for k, part in enumerate(parts)}
    exec(f"def text({', '.join(names)}):\n    return f'{body}'\n", space)
    return space["text"]


def _getter(names):
    """A function of a record's field dict giving the tuple of ``names``' values."""
    if len(names) > 1:
        return itemgetter(*names)
    if names:
        name = names[0]
        return lambda d: (d[name],)
    return lambda d: ()


class JsonLines:
    """Each record's ``to_json()`` as one line of JSON, the same text the standard
    library's encoder gives (``ensure_ascii=False, allow_nan=False``; a test compares them),
    at a fraction of the cost: for each distinct combination of the fields that repeat
    (and of which varying fields are None), the line is encoded once as a template into
    which the varying numbers are written by ``repr`` (as the encoder writes a float or an
    int; a whole number of bytes below 10^16 as its digits and ``.0``, the same text). The
    importers make those numbers floats or ints (whole bytes, times, row numbers); the
    stream and device ids an export gives are checked, and a record with one of another
    type is encoded whole."""

    def __init__(self):
        self.templates: dict = {}    # (static fields, metrics?, whole size?) -> template
        self.exact: dict = {}        # the same and the None-ness of each varying field

    def template(self, d: dict, nones: tuple, whole: bool):
        """(head, head fields, tail, tail fields, null fields, their None tuple): the line
        is head(*head values), then the metrics' JSON (when there are metrics; else it is
        in head), then tail(*tail values) (:func:`_formatter`). None in the unlikely case
        that a text of the record holds the marker."""
        obj = {"kind": d["kind"], "direction": d["direction"] or None, "name": d["name"],
               "gpu": d["gpu"] or None,
               "grid": list(d["grid"]) if d["grid"] else None,
               "block": list(d["block"]) if d["block"] else None,
               "registers_per_thread": d["registers_per_thread"],
               "shared_mem_bytes": d["shared_mem_bytes"],
               "size_bytes": None, "time_s": None, "memory_kind": d["memory_kind"] or None,
               "metrics": _MARK if d["metrics"] else {}, "source": d["source"], "row": None,
               "compute_capability": d["compute_capability"] or None,
               "registers": d["registers_per_thread"],
               "stream": None, "device": None, "start_s": None, "end_s": None}
        names = _BEFORE + _AFTER
        varying = [n for n, none in zip(names, nones) if not none]
        nulls = [n for n, none in zip(names, nones) if none]
        for n in varying:
            obj[n] = _MARK
        parts = _encode(obj).split(_string(_MARK))
        metrics = 1 if d["metrics"] else 0
        if len(parts) != len(varying) + metrics + 1:
            return None
        slots = ["w" if n == "size_bytes" and whole else "r" for n in varying]
        null_get = _getter(nulls)
        if metrics:
            cut = len([n for n in varying if n in _BEFORE])
            return (_formatter(parts[:cut + 1], slots[:cut]), _getter(varying[:cut]),
                    _formatter(parts[cut + 1:], slots[cut:]), _getter(varying[cut:]),
                    null_get, (None,) * len(nulls))
        return (_formatter(parts, slots), _getter(varying), None, None, null_get,
                (None,) * len(nulls))

    def entry(self, d: dict, key, whole: bool):
        """The template of a record whose None-ness differs from its key's first one."""
        nones = tuple(v is None for v in _VARYING(d))
        exact = self.exact.get((key, nones), "")
        if exact == "":
            exact = self.template(d, nones, whole)
            if len(self.exact) >= _TEMPLATES:
                self.exact.clear()
            self.exact[key, nones] = exact
        return exact

    def metrics(self, metrics: dict) -> str:
        """The JSON of a record's metrics ({name: {"value", "unit"}})."""
        return "{" + ", ".join(
            f'{_string(k)}: {{"value": {_number(v)}, "unit": {_string(u)}}}'
            if type(k) is str and type(u) is str else _encode({k: {"value": v, "unit": u}})[1:-1]
            for k, (v, u) in metrics.items()) + "}"

    def __call__(self, record) -> tuple[str, str]:
        """(the record's line, its kind)."""
        d = record.__dict__
        metrics = d["metrics"]
        kind = d["kind"]
        stream, device, size = d["stream"], d["device"], d["size_bytes"]
        if (stream is not None and type(stream) is not int) or \
                (device is not None and type(device) is not int):
            return _encode(record.to_json()), kind
        whole = type(size) is float and 0 < size < 1e16 and size.is_integer()
        key = (_STATIC(d), not metrics, whole)
        entry = self.templates.get(key, "")
        if entry == "":
            entry = self.entry(d, key, whole)
            if len(self.templates) >= _TEMPLATES:
                self.templates.clear()
            self.templates[key] = entry
        if entry is None:
            return _encode(record.to_json()), kind
        head, head_get, tail, tail_get, null_get, nulls = entry
        first = head_get(d)
        second = tail_get(d) if tail_get is not None else ()
        if None in first or None in second or null_get(d) != nulls:
            # (the None-ness of the varying fields is not the key's first one)
            entry = self.entry(d, key, whole)
            if entry is None:
                return _encode(record.to_json()), kind
            head, head_get, tail, tail_get, null_get, nulls = entry
            first = head_get(d)
            second = tail_get(d) if tail_get is not None else ()
        if tail_get is None:
            line = head(*first)
        else:
            line = head(*first) + self.metrics(metrics) + tail(*second)
        values = first + second
        try:
            total = sum(values)
        except TypeError:        # not numbers as the importers make them: encoded whole
            return _encode(record.to_json()), kind
        if total - total != 0:      # inf or nan (or a sum beyond a float): each one checked
            for v in values:
                _number(v)
        return line, kind


def write_json(records, out=None, batch: int | None = None) -> dict:
    """The records as a JSON list on ``out`` (stdout), one record per line (``[`` and ``]``
    on lines of their own), written ``batch`` lines at a time; the count of records per
    kind."""
    out = out or sys.stdout
    batch = batch or WRITE_LINES
    line = JsonLines()
    chunk = ["["]
    sep = "\n"
    counts: dict = {}
    for r in records:
        text, kind = line(r)
        counts[kind] = counts.get(kind, 0) + 1
        chunk.append(sep + text)
        sep = ",\n"
        if len(chunk) >= batch:
            out.write("".join(chunk))
            chunk = []
    chunk.append("\n]\n" if sep != "\n" else "]\n")
    out.write("".join(chunk))
    return counts


def read_ahead(records, n: int | None = None) -> tuple[list, object]:
    """(the first ``n`` (:data:`HEAD`) records, an iterator over them all): a bad row among
    the first ``n`` raises before anything is written."""
    records = iter(records)
    head = list(islice(records, HEAD if n is None else n))
    return head, chain(head, records)


# --- the text table --------------------------------------------------------------------

def _size(n) -> str:
    if n is None:
        return ""
    for unit, f in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= f:
            return f"{n / f:.4g} {unit}"
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


_SHOWN = itemgetter("kind", "direction", "name", "gpu", "grid", "block", "memory_kind")
#: the metrics cell of a record with k metrics
_COUNTS = [""] + [str(k) for k in range(1, 100)]


class TableCells:
    """A record's cells in the text table; the cells that repeat (kind, name, launch...)
    are built once per distinct combination, a copy's size once per distinct size."""

    def __init__(self, streams: bool):
        self.streams = streams
        self.shown: dict = {}
        self.sizes: dict = {}

    def static(self, key) -> tuple:
        kind, direction, name, gpu, grid, block, memory = key
        launch = None    # (a copy's: its size)
        if kind == "kernel":
            launch = (f"{'x'.join(map(str, grid))} x {'x'.join(map(str, block))}"
                      if grid and block else "")
        if len(name) > 40:
            name = name[:37] + "..."
        cells = (kind, direction, name, gpu, launch, memory)
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
        kind, direction, name, gpu, launch, memory = static
        metrics = len(d["metrics"])
        count = _COUNTS[metrics] if metrics < 100 else str(metrics)
        if launch is None:
            size = d["size_bytes"]
            launch = self.sizes.get(size)
            if launch is None:
                if len(self.sizes) >= _TEMPLATES:
                    self.sizes.clear()
                launch = self.sizes[size] = _size(size)
        time_s = d["time_s"]
        cells = (str(d["row"]), kind, direction, name, gpu, launch,
                 "" if time_s is None else _time(time_s), memory, count)
        if self.streams:
            stream, start = d["stream"], d["start_s"]
            cells += ("" if stream is None else str(stream),
                      "" if start is None else f"{start:.9f} s")
        return cells


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
    ljust = str.ljust
    lines = ["  ".join(map(ljust, header, widths)).rstrip()]
    counts: dict = {}
    for r in records:
        cells = cells_of(r)
        kind = cells[1]
        counts[kind] = counts.get(kind, 0) + 1
        line = "  ".join(map(ljust, cells, widths))
        if len(line) != full:    # a cell wider than its column: the column widens
            widths = [max(w, len(c)) for w, c in zip(widths, cells)]
            full = sum(widths) + 2 * (len(widths) - 1)
            line = "  ".join(map(ljust, cells, widths))
        lines.append(line.rstrip())
        if len(lines) >= WRITE_LINES:
            lines.append("")
            out.write("\n".join(lines))
            lines = []
    lines.append("")
    out.write("\n".join(lines))
    return counts
