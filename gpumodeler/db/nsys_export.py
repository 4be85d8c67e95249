"""Nsight Systems SQLite exports (``nsys export --type sqlite``) read as measurement records.

The file is opened read-only and nothing is created beside it (``sqlite_files.
read_only_uri``; a file with a ``-wal`` log beside it is read from a private copy, through
:func:`gpumodeler.db.schema.read_only_connection`). Rows are streamed with ``fetchmany``, and kernel names are looked up in ``StringIds``
one id at a time with a bounded cache, so memory stays flat in the size of the file.

Exports differ across nsys versions (docs/measurements.md, "Nsight Systems"); columns are
selected by name, never by position, so columns that come and go (cluster, graph, green
context) do not matter. What is read:

* ``CUPTI_ACTIVITY_KIND_KERNEL``: one ``kernel`` record per row.
* ``CUPTI_ACTIVITY_KIND_MEMCPY``: copy kinds HtoD, DtoH, DtoD, PtoP are ``transfer``
  records; unified-memory migrations (kinds 11 and 12) are ``migration`` records; other
  kinds (arrays, host to host) are counted as rows of other kinds.
* ``CUPTI_ACTIVITY_KIND_MEMSET``: counted as rows of other kinds (gpumodeler models no memset).
* ``TARGET_INFO_GPU`` (2021.2 on) or ``TARGET_INFO_CUDA_GPU`` (2020.x to 2021.1): one
  :class:`NsysGpu` per row; every row is its own device (a MIG slice or a Jetson GPU too).
"""
from __future__ import annotations

import re
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gpumodeler.core.errors import FormatError
from gpumodeler.core.measurements.importer import ImportResult
from gpumodeler.core.measurements.records import FIELD_DEFAULTS, from_fields

from .sqlite_files import BUSY_TIMEOUT_S, is_sqlite, pending_log, read_only_uri

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
GPU_TABLES = ("TARGET_INFO_GPU", "TARGET_INFO_CUDA_GPU")
#: Any of these makes a SQLite file an Nsight Systems export.
NSYS_TABLES = (KERNEL_TABLE, MEMCPY_TABLE, MEMSET_TABLE) + GPU_TABLES

#: Rows fetched at a time.
BATCH = 4096
#: StringIds values kept in memory at most (names repeat: a trace has few distinct kernels).
NAME_CACHE = 4096

#: nsys's own numbering of copy kinds (ENUM_CUDA_MEMCPY_OPER; CUPTI's
#: CUpti_ActivityMemcpyKind plus 11/12 for unified memory), used when the export ships no
#: enum table: id -> (kind, direction).
MEMCPY_OPER = {1: ("transfer", "htod"), 2: ("transfer", "dtoh"), 8: ("transfer", "dtod"),
               10: ("transfer", "ptop"), 11: ("migration", "htod"),
               12: ("migration", "dtoh")}
#: nsys's own numbering of memory kinds (ENUM_CUDA_MEM_KIND; not CUPTI's, which starts at
#: 1 = pageable), used when the export ships no enum table.
MEM_KIND = {0: "pageable", 1: "pinned", 2: "device", 3: "device", 4: "managed", 5: "device",
            6: "managed", 7: ""}
#: copy labels as nvprof writes them
_LABELS = {"htod": "HtoD", "dtoh": "DtoH", "dtod": "DtoD", "ptop": "PtoP"}


@dataclass(frozen=True)
class NsysGpu:
    """A GPU as the export describes it, in SI units (None where the export does not say).

    ``clock_hz``: the SM clock. ``memory_bandwidth_bps``: bytes per second (None when the
    export gives 0). ``async_engines``: copy engines. ``mig``: a MIG slice (its own device,
    with its own SM count). ``integrated``: a GPU sharing the host's memory (Jetson)."""

    id: int
    name: str
    table: str
    sm_count: int | None = None
    clock_hz: float | None = None
    memory_bandwidth_bps: float | None = None
    l2_bytes: int | None = None
    async_engines: int | None = None
    total_memory_bytes: int | None = None
    compute_capability: str = ""
    mig: bool = False
    integrated: bool = False

    @property
    def label(self) -> str:
        """The name records carry, ``NVIDIA A100 (0)`` like nvprof's Device column."""
        return f"{self.name} ({self.id})"

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "table": self.table,
                "sm_count": self.sm_count, "clock_hz": self.clock_hz,
                "memory_bandwidth_bps": self.memory_bandwidth_bps, "l2_bytes": self.l2_bytes,
                "async_engines": self.async_engines,
                "total_memory_bytes": self.total_memory_bytes,
                "compute_capability": self.compute_capability or None,
                "mig": self.mig, "integrated": self.integrated}


def _size(n: int) -> str:
    for unit, f in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= f:
            return f"{n / f:.4g} {unit}"
    return f"{n} B"


def describe_gpu(g: dict) -> str:
    """One line of a GPU's facts (``NsysGpu.to_json()``), saying which are not given."""
    facts = [f"{g['sm_count']} SMs" if g["sm_count"] else "SMs not given",
             f"clock {g['clock_hz'] / 1e6:.0f} MHz" if g["clock_hz"] else "clock not given",
             f"memory {g['memory_bandwidth_bps'] / 1e9:.1f} GB/s"
             if g["memory_bandwidth_bps"] else "bandwidth not given",
             f"L2 {_size(g['l2_bytes'])}" if g["l2_bytes"] else "L2 not given",
             f"{g['async_engines']} copy engines" if g["async_engines"] is not None
             else "copy engines not given"]
    if g["compute_capability"]:
        facts.append(f"CC {g['compute_capability']}")
    tags = [t for t, on in (("MIG slice", g["mig"]), ("integrated", g["integrated"])) if on]
    return (f"GPU {g['id']}: {g['name']}{' [' + ', '.join(tags) + ']' if tags else ''}: "
            f"{', '.join(facts)}")


def _columns(conn, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def _tables(conn) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _words(text) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text or "").lower())


def _oper_from_label(text: str):
    w = _words(text)
    unified = "unified" in w or w.startswith("um") or "managed" in w
    for keys, direction in ((("htod", "hosttodevice"), "htod"), (("dtoh", "devicetohost"), "dtoh"),
                            (("dtod", "devicetodevice"), "dtod"), (("ptop", "peertopeer"), "ptop")):
        if any(k in w for k in keys):
            if unified:
                return ("migration", direction) if direction in ("htod", "dtoh") else None
            return "transfer", direction
    return None


def _mem_kind_from_label(text: str):
    w = _words(text)
    for key, kind in (("pageable", "pageable"), ("pinned", "pinned"), ("managed", "managed"),
                      ("device", "device"), ("array", "device"), ("unknown", "")):
        if key in w:
            return kind
    return None


def _enum(conn, tables, table, classify, default) -> dict:
    """id -> meaning from the export's own enum table when it has one (its numbering
    wins: nsys has renumbered enums before), else nsys's numbering (``default``)."""
    if table not in tables:
        return dict(default)
    cols = _columns(conn, table)
    if "id" not in cols:
        return dict(default)
    text_cols = [c for c in ("name", "label") if c in cols]
    out = {}
    for row in conn.execute(f'SELECT id, {", ".join(text_cols) or "NULL"} FROM "{table}"'):
        found = None
        for text in row[1:]:
            found = classify(text)
            if found is not None:
                break
        if found is not None:
            out[row[0]] = found
    return out


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _positive(value):
    v = _number(value)
    return v if v is not None and v > 0 else None


def read_gpus(conn, tables) -> dict[int, NsysGpu]:
    """The export's GPUs by device id, from TARGET_INFO_GPU (clock in Hz, bandwidth in
    B/s) or the older TARGET_INFO_CUDA_GPU (CUPTI's device record: clock in kHz, bandwidth
    in kB/s, 0 when unknown)."""
    gpus: dict[int, NsysGpu] = {}
    for table in GPU_TABLES:
        if table not in tables:
            continue
        cur = conn.execute(f'SELECT * FROM "{table}"')
        names = [d[0] for d in cur.description]
        for values in cur.fetchall():       # (one row per GPU: small)
            row = dict(zip(names, values))
            key = row.get("id", row.get("deviceId"))
            if not isinstance(key, int) or key in gpus:
                continue
            name = str(row.get("name") or f"GPU {key}")
            if table == "TARGET_INFO_GPU":
                clock = _positive(row.get("clockRate"))
                bandwidth = _positive(row.get("memoryBandwidth"))
                sms = _positive(row.get("smCount"))
                l2 = _positive(row.get("l2CacheSize"))
                engines = _number(row.get("asyncEngines"))
                memory = _positive(row.get("totalMemory"))
                major, minor = row.get("computeMajor"), row.get("computeMinor")
            else:
                clock = _positive(row.get("coreClockRate", row.get("clockRate")))
                clock = clock * 1e3 if clock is not None else None
                bandwidth = _positive(row.get("globalMemoryBandwidth"))
                bandwidth = bandwidth * 1e3 if bandwidth is not None else None
                sms = _positive(row.get("numMultiprocessors"))
                l2 = _positive(row.get("l2CacheSize"))
                engines = _number(row.get("numMemcpyEngines"))
                memory = _positive(row.get("globalMemorySize"))
                major = row.get("computeCapabilityMajor")
                minor = row.get("computeCapabilityMinor")
            cc = f"{major}.{minor}" if isinstance(major, int) and isinstance(minor, int) \
                and major > 0 else ""
            # (nsys names a MIG slice "<GPU> MIG <profile>": its own device, its own SMs)
            mig = bool(re.search(r"\bMIG\b", name)) or bool(row.get("migId"))
            integrated = row.get("isDiscrete") == 0 or row.get("isIntegrated") == 1 \
                or "tegra" in name.lower() or "orin" in name.lower() or "xavier" in name.lower()
            gpus[key] = NsysGpu(
                id=key, name=name, table=table, sm_count=int(sms) if sms else None,
                clock_hz=float(clock) if clock else None,
                memory_bandwidth_bps=float(bandwidth) if bandwidth else None,
                l2_bytes=int(l2) if l2 else None,
                async_engines=int(engines) if engines is not None else None,
                total_memory_bytes=int(memory) if memory else None,
                compute_capability=cc, mig=mig, integrated=integrated)
    return gpus


class _Names:
    """Kernel names: a StringIds id looked up (bounded cache), or text kept as it is."""

    def __init__(self, conn, tables):
        self.conn = conn
        self.has_ids = "StringIds" in tables
        self.cache: dict[int, str] = {}

    def __call__(self, value) -> str:
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if not isinstance(value, int) or not self.has_ids:
            return ""
        name = self.cache.get(value)
        if name is None:
            row = self.conn.execute("SELECT value FROM StringIds WHERE id = ?",
                                    (value,)).fetchone()
            name = str(row[0]) if row and row[0] is not None else ""
            if len(self.cache) >= NAME_CACHE:
                self.cache.clear()
            self.cache[value] = name
        return name


def _rows(conn, table: str, columns: list[str]):
    """(rowid, *columns) of ``table`` in start order, fetched BATCH rows at a time."""
    cur = conn.execute(f'SELECT rowid, {", ".join(f"{c!s}" for c in columns)} '
                       f'FROM "{table}" ORDER BY start, rowid')
    while True:
        batch = cur.fetchmany(BATCH)
        if not batch:
            return
        yield from batch


def _require(conn, source, table, needed) -> set[str]:
    cols = _columns(conn, table)
    missing = [c for c in needed if c not in cols]
    if missing:
        raise FormatError(f"{source}: table {table} has no column {', '.join(missing)}; an "
                          f"Nsight Systems export from 2020.1 on has it (see "
                          f"docs/measurements.md)")
    return cols


def _times(source, table, rowid, row):
    start, end = row["start"], row["end"]
    if not isinstance(start, int) or not isinstance(end, int) or end < start:
        raise FormatError(f"{source}#{table} row {rowid}: start {start!r} and end {end!r} "
                          f"must be whole nanoseconds with end >= start")
    return start / 1e9, end / 1e9, (end - start) / 1e9


class _Reader:
    def __init__(self, conn, source: str):
        self.conn = conn
        self.source = source
        self.tables = _tables(conn)
        self.gpus = read_gpus(conn, self.tables)
        self.names = _Names(conn, self.tables)
        self.other_rows = 0
        self.cut_names = 0
        self.labels: dict = {}    # device id -> gpu_label (asked once per device)

    def fields(self, template: dict, rowid, start: int, end: int, stream, device) -> dict:
        """A record's fields: its table's ``template`` with what every row has (times from
        whole nanoseconds, stream, device and its GPU's label, row id); a fresh metrics
        dict."""
        d = template.copy()
        d["time_s"] = (end - start) / 1e9
        gpu = self.labels.get(device)
        if gpu is None:
            gpu = self.labels[device] = self.gpu_label(device)
        d["gpu"] = gpu
        d["metrics"] = {}
        d["row"] = rowid
        d["stream"] = stream
        d["device"] = device
        d["start_s"] = start / 1e9
        d["end_s"] = end / 1e9
        return d

    def gpu_label(self, device) -> str:
        gpu = self.gpus.get(device)
        if gpu is not None:
            return gpu.label
        return f"GPU ({device})" if isinstance(device, int) else ""

    def kernels(self):
        """(start, rowid, 0, record) of each kernel row in start order."""
        table = KERNEL_TABLE
        if table not in self.tables:
            return
        needed = ["start", "end", "deviceId", "streamId", "gridX", "gridY", "gridZ",
                  "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
                  "dynamicSharedMemory"]
        cols = _require(self.conn, self.source, table, needed)
        name_cols = [c for c in ("demangledName", "shortName", "mangledName") if c in cols]
        if not name_cols:
            raise FormatError(f"{self.source}: table {table} has no demangledName, shortName "
                              f"or mangledName column; expected one of them")
        where = f"{self.source}#{table}"
        template = dict(FIELD_DEFAULTS, kind="kernel", source=where)
        names = self.names
        first_name = 14    # (the row's columns: rowid, then needed, then name_cols)
        for values in _rows(self.conn, table, needed + name_cols):
            (rowid, start, end, device, stream, gx, gy, gz, bx, by, bz, regs, static,
             dynamic) = values[:first_name]
            if type(start) is not int or type(end) is not int or end < start:
                _times(self.source, table, rowid, {"start": start, "end": end})
            name = ""
            for value in values[first_name:]:
                name = names(value)
                if name:
                    break
            if name.endswith("..."):
                self.cut_names += 1
            grid = (gx, gy, gz)
            block = (bx, by, bz)
            # (the common case, six ints > 0, without a call; launch shapes differ from
            # launch to launch in a real trace)
            if not (type(gx) is int and type(gy) is int and type(gz) is int and
                    type(bx) is int and type(by) is int and type(bz) is int and
                    gx > 0 and gy > 0 and gz > 0 and bx > 0 and by > 0 and bz > 0):
                for what, dims in (("grid", grid), ("block", block)):
                    if not all(isinstance(v, int) and v > 0 for v in dims):
                        raise FormatError(f"{where} row {rowid}: {what} {dims!r} must be "
                                          f"whole numbers > 0")
            d = self.fields(template, rowid, start, end, stream, device)
            d["name"] = name
            d["grid"] = grid
            d["block"] = block
            d["registers_per_thread"] = regs if isinstance(regs, int) else None
            d["shared_mem_bytes"] = (static if isinstance(static, int) else 0) + \
                (dynamic if isinstance(dynamic, int) else 0)
            yield d["start_s"], rowid, 0, from_fields(d)

    def copies(self):
        """(start, rowid, 1, record) of each copy or migration row in start order."""
        table = MEMCPY_TABLE
        if table not in self.tables:
            return
        needed = ["start", "end", "deviceId", "streamId", "bytes", "copyKind"]
        cols = _require(self.conn, self.source, table, needed)
        kinds = [c for c in ("srcKind", "dstKind") if c in cols]
        opers = _enum(self.conn, self.tables, "ENUM_CUDA_MEMCPY_OPER", _oper_from_label,
                      MEMCPY_OPER)
        mem = _enum(self.conn, self.tables, "ENUM_CUDA_MEM_KIND", _mem_kind_from_label,
                    MEM_KIND)
        where = f"{self.source}#{table}"
        templates = {}
        for oper, (kind, direction) in opers.items():
            templates[oper] = dict(
                FIELD_DEFAULTS, kind=kind, direction=direction, source=where,
                name=f"[CUDA memcpy {_LABELS[direction]}]" if kind == "transfer"
                else f"[Unified Memory {_LABELS[direction]}]")
        src_at = 7 if "srcKind" in kinds else None
        dst_at = 7 + kinds.index("dstKind") if "dstKind" in kinds else None
        for values in _rows(self.conn, table, needed + kinds):
            rowid, start, end, device, stream, size, oper = values[:7]
            template = templates.get(oper)
            if template is None:
                self.other_rows += 1
                continue
            if type(start) is not int or type(end) is not int or end < start:
                _times(self.source, table, rowid, {"start": start, "end": end})
            if not isinstance(size, int) or size < 0:
                raise FormatError(f"{where} row {rowid}: bytes {size!r} must be a whole "
                                  f"number >= 0")
            kind, direction = template["kind"], template["direction"]
            if kind == "migration":
                memory = "managed"
            elif direction == "htod":
                memory = mem.get(values[src_at], "") if src_at is not None else ""
            elif direction == "dtoh":
                memory = mem.get(values[dst_at], "") if dst_at is not None else ""
            else:
                memory = "device"
            d = self.fields(template, rowid, start, end, stream, device)
            d["size_bytes"] = float(size)
            d["memory_kind"] = memory
            yield d["start_s"], rowid, 1, from_fields(d)

    def count_memsets(self) -> None:
        if MEMSET_TABLE in self.tables:
            self.other_rows += self.conn.execute(
                f'SELECT count(*) FROM "{MEMSET_TABLE}"').fetchone()[0]


def iter_records(conn, source: str, reader: _Reader | None = None):
    """Kernel, copy and migration records of an open export in start order (streamed)."""
    reader = reader or _Reader(conn, source)
    return _merged(reader.kernels(), reader.copies())


def _merged(kernels, copies):
    """The records of two (start, rowid, table, record) streams, each in (start, rowid)
    order, in that order; a kernel before a copy of the same start and rowid."""
    kernels, copies = iter(kernels), iter(copies)
    k, c = next(kernels, None), next(copies, None)
    while k is not None and c is not None:
        if c[0] < k[0] or (c[0] == k[0] and c[1] < k[1]):
            yield c[3]
            c = next(copies, None)
        else:
            yield k[3]
            k = next(kernels, None)
    if k is not None:
        yield k[3]
        for k in kernels:
            yield k[3]
    if c is not None:
        yield c[3]
        for c in copies:
            yield c[3]


class _Connection:
    """An export opened read-only: ``conn``, and ``close()``. A file with no log beside it
    is opened straight (sqlite_files.read_only_uri: the common case, without loading the
    database layer); one with a -wal or -journal beside it through
    :func:`gpumodeler.db.schema.read_only_connection`, which reads a private copy."""

    def __init__(self, path: Path):
        if pending_log(path) is None:
            self.conn = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT_S)
            self.close = self.conn.close
        else:
            from .schema import read_only_connection   # lazy: sqlite-utils, only here
            db = read_only_connection(path)
            self.conn, self.close = db.conn, db.close


def _open(path: Path):
    try:
        db = _Connection(path)
        tables = _tables(db.conn)
    except sqlite3.DatabaseError as exc:
        raise FormatError(f"{path.name}: not a readable SQLite file ({exc}); expected an "
                          f"Nsight Systems export (nsys export --type sqlite)") from None
    if not tables & set(NSYS_TABLES):
        db.close()
        raise FormatError(f"{path.name}: a SQLite file without Nsight Systems tables; expected "
                          f"an nsys export with {KERNEL_TABLE}, {MEMCPY_TABLE} or "
                          f"TARGET_INFO_GPU (nsys export --type sqlite)")
    return db


@contextmanager
def streamed_export(path, need_kernel_table: bool = False, tick=None):
    """``(records, summary)`` of the export at ``path``: ``records`` yields its kernel, copy
    and migration records in start order as it is iterated (memory does not grow with the
    file: ``measure import --json`` writes each as it comes), ``summary()`` then gives the
    :class:`ImportResult` without the records (other rows, GPUs, cut names). FormatError with
    one line for a damaged or non-nsys file, or, with ``need_kernel_table``, for an export
    without a kernel table; the file is closed on leaving. ``tick(fraction)``, when given,
    is called with the share of the kernel and copy rows read so far, every BATCH records
    (a caller's progress bar; it may raise to stop the reading)."""
    path = Path(path)
    if not is_sqlite(path):
        raise FormatError(f"{path.name}: not a SQLite file (no SQLite header); expected an "
                          f"Nsight Systems export (nsys export --type sqlite)")
    db = _open(path)
    damaged = (f"{path.name}: damaged SQLite file ({{}}); export it again with nsys export "
               f"--type sqlite")
    try:
        try:
            reader = _Reader(db.conn, path.name)
        except sqlite3.DatabaseError as exc:
            raise FormatError(damaged.format(exc)) from None
        if need_kernel_table and KERNEL_TABLE not in reader.tables:
            raise FormatError(f"{path.name}: an Nsight Systems export without a kernel table "
                              f"({KERNEL_TABLE}); profile with nsys profile --trace=cuda and "
                              f"export with nsys export --type sqlite")

        def records():
            try:
                if tick is None:
                    yield from iter_records(db.conn, path.name, reader)
                else:
                    total = max(1, _count_rows(db.conn, reader.tables))
                    for n, record in enumerate(iter_records(db.conn, path.name, reader), 1):
                        if n % BATCH == 0:
                            tick(min(1.0, n / total))
                        yield record
                    tick(1.0)
                reader.count_memsets()
            except sqlite3.DatabaseError as exc:
                raise FormatError(damaged.format(exc)) from None

        def summary() -> ImportResult:
            return ImportResult("nsys", path.name, other_rows=reader.other_rows,
                                devices=[g.to_json() for g in reader.gpus.values()],
                                cut_names=reader.cut_names)
        yield records(), summary
    finally:
        db.close()


RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
DRIVER_TABLE = "CUPTI_ACTIVITY_KIND_DRIVER"
SYNC_TABLE = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
EVENT_TABLE = "CUPTI_ACTIVITY_KIND_CUDA_EVENT"
#: CUPTI's CUpti_ActivitySynchronizationType, the ``syncType`` numbering when the export
#: ships no ENUM_CUPTI_SYNC_TYPE table: id -> what :mod:`gpumodeler.core.application.trace_api`
#: calls it ("wait": cudaStreamWaitEvent, which does not block the host)
SYNC_TYPE = {1: "event", 2: "wait", 3: "stream", 4: "device"}
#: runtime calls that block the host until the GPU work they name is done, by name
_SYNC_CALLS = {"cudaDeviceSynchronize": "device", "cudaThreadSynchronize": "device",
               "cudaStreamSynchronize": "stream", "cudaEventSynchronize": "event",
               "cuCtxSynchronize": "device", "cuStreamSynchronize": "stream",
               "cuEventSynchronize": "event"}
_RECORD_CALLS = ("cudaEventRecord", "cuEventRecord")
_WAIT_CALLS = ("cudaStreamWaitEvent", "cuStreamWaitEvent")
#: CUPTI_SYNCHRONIZATION_INVALID_VALUE (a uint32 -1): "not applicable to this record"
_INVALID = 0xFFFFFFFF


def _sync_type_from_label(text: str):
    w = _words(text)
    for key, kind in (("streamwait", "wait"), ("eventsynchronize", "event"),
                      ("eventsync", "event"), ("streamsynchronize", "stream"),
                      ("streamsync", "stream"), ("contextsynchronize", "device"),
                      ("contextsync", "device"), ("ctxsync", "device")):
        if key in w:
            return kind
    return None


def _id(value):
    """A stream, device or event id, or None for a missing or not-applicable one."""
    return value if isinstance(value, int) and not isinstance(value, bool) \
        and 0 <= value < _INVALID else None


def _api_name(text: str) -> str:
    """A runtime call's name without nsys's version suffix (``cudaMemcpy_v3020``)."""
    return re.sub(r"_v\d+$", "", text or "")


def read_api(path, tick=None):
    """The host side of the export at ``path`` (:class:`~gpumodeler.core.application.
    trace_api.TraceApi`: which runtime or driver call launched each kernel and copy, and
    the synchronisations, event records and event waits; docs/timeline.md, "Ordering read
    from the CUDA API"), or None when the export has neither a runtime nor a driver table,
    or none of their calls launched a kernel or copy of the export (it then imports as
    before, with inferred waits). A call in both tables is the runtime's. Rows whose times
    or ids are not whole numbers are left out. ``tick(fraction)``: as in
    :func:`streamed_export`, after each table read."""
    from gpumodeler.core.application.trace_api import (EventRecord, HostWait, StreamWait,
                                                       TraceApi)
    path = Path(path)
    db = _open(path)
    try:
        conn = db.conn
        tables = _tables(conn)
        api_tables = [t for t in (DRIVER_TABLE, RUNTIME_TABLE) if t in tables
                      and {"start", "end", "correlationId"} <= _columns(conn, t)]
        if not api_tables:
            return None
        correlation_of, ops = {}, {}     # ops: correlation -> (table, end ns)
        for table in (KERNEL_TABLE, MEMCPY_TABLE):
            if table not in tables or "correlationId" not in _columns(conn, table):
                continue
            source = f"{path.name}#{table}"
            for rowid, corr, end in conn.execute(
                    f'SELECT rowid, correlationId, "end" FROM "{table}"'):
                if isinstance(corr, int) and corr > 0:
                    correlation_of[(source, rowid)] = corr
                    ops[corr] = (table, end)
        if not ops:
            return None
        done = [1]
        steps = 2 + len(api_tables)

        def step() -> None:
            if tick is not None:
                done[0] += 1
                tick(done[0] / steps)
        if tick is not None:
            tick(1 / steps)
        names = _Names(conn, tables)
        launches, calls = {}, {}    # calls: correlation -> (thread, start, end, name)
        blocking = {}               # correlation -> the synchronous copy's call
        records, stream_waits = [], []
        for table in api_tables:    # (the driver's first: the runtime's call wins)
            cols = _columns(conn, table)
            name_col = "nameId" if "nameId" in cols else "name" if "name" in cols else None
            thread_col = "globalTid" if "globalTid" in cols else None
            cur = conn.execute(f'SELECT start, "end", correlationId, '
                               f'{thread_col or "NULL"}, {name_col or "NULL"} '
                               f'FROM "{table}"')
            short: dict = {}    # name id -> the name without its suffix (few distinct)
            for start, end, corr, thread, name_value in _flat(cur):
                if not (isinstance(start, int) and isinstance(end, int) and end >= start):
                    continue
                name = short.get(name_value)
                if name is None:
                    name = short[name_value] = _api_name(names(name_value))
                t = (thread, start / 1e9, end / 1e9)
                op = ops.get(corr) if isinstance(corr, int) and corr > 0 else None
                if op is not None:
                    launches[corr] = t
                    blocking.pop(corr, None)
                    if op[0] == MEMCPY_TABLE and "Async" not in name and \
                            isinstance(op[1], int) and end >= op[1]:
                        # a synchronous copy: the host waited for it
                        blocking[corr] = HostWait("call", thread, t[1], t[2], name,
                                                  correlation=corr)
                elif name in _SYNC_CALLS or name.startswith(_RECORD_CALLS + _WAIT_CALLS):
                    calls[corr] = (thread, t[1], t[2], name)
            step()
        if not launches:
            return None
        waits = list(blocking.values())
        described = set()
        if SYNC_TABLE in tables and {"start", "end", "syncType"} <= _columns(conn, SYNC_TABLE):
            scols = _columns(conn, SYNC_TABLE)
            kinds = _enum(conn, tables, "ENUM_CUPTI_SYNC_TYPE", _sync_type_from_label, SYNC_TYPE)
            pick = [c if c in scols else "NULL" for c in
                    ("correlationId", "streamId", "eventId", "deviceId")]
            for start, end, kind, corr, stream, event, device in conn.execute(
                    f'SELECT start, "end", syncType, {", ".join(pick)} FROM "{SYNC_TABLE}"'):
                kind = kinds.get(kind)
                if kind is None or not (isinstance(start, int) and isinstance(end, int)):
                    continue
                call = calls.get(corr)
                described.add(corr)
                thread = call[0] if call else None
                name = call[3] if call else ""
                if kind == "wait":
                    stream_waits.append(StreamWait(thread, start / 1e9, _id(stream), _id(event)))
                else:
                    waits.append(HostWait(kind, thread, start / 1e9, end / 1e9, name,
                                          device=_id(device), stream=_id(stream),
                                          event=_id(event)))
        recorded = set()
        if EVENT_TABLE in tables and {"correlationId", "streamId", "eventId"} <= \
                _columns(conn, EVENT_TABLE):
            for corr, stream, event in conn.execute(
                    f'SELECT correlationId, streamId, eventId FROM "{EVENT_TABLE}"'):
                call = calls.get(corr)
                if call is not None:
                    recorded.add(corr)
                    records.append(EventRecord(call[0], call[1], _id(stream), _id(event)))
        for corr, (thread, start, end, name) in calls.items():
            if corr in described or corr in recorded:
                continue
            if name in _SYNC_CALLS:     # known by name only
                kind = _SYNC_CALLS[name]
                waits.append(HostWait(kind if kind == "device" else "named", thread, start,
                                      end, name))
            elif name.startswith(_RECORD_CALLS):
                records.append(EventRecord(thread, start))
            elif name.startswith(_WAIT_CALLS):
                stream_waits.append(StreamWait(thread, start))
        step()
        return TraceApi(launches, correlation_of, tuple(waits), tuple(records),
                        tuple(stream_waits))
    except sqlite3.DatabaseError as exc:
        raise FormatError(f"{path.name}: damaged SQLite file ({exc}); export it again with "
                          f"nsys export --type sqlite") from None
    finally:
        db.close()


def _flat(cur):
    """The rows of ``cur``, fetched BATCH at a time."""
    while True:
        batch = cur.fetchmany(BATCH)
        if not batch:
            return
        yield from batch


def _count_rows(conn, tables) -> int:
    """Rows of the kernel and copy tables (the records a reading goes through)."""
    return sum(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
               for t in (KERNEL_TABLE, MEMCPY_TABLE) if t in tables)


def require_content(result: ImportResult, records: int) -> None:
    """FormatError for an export with no kernels, copies or GPUs."""
    if not records and not result.devices:
        raise FormatError(f"{result.source}: an Nsight Systems export with no kernels, copies "
                          f"or GPUs; profile with --trace=cuda")


def read_export(path, need_kernel_table: bool = False, tick=None) -> ImportResult:
    """All records of the export at ``path`` (format ``nsys``) with its GPUs in
    ``devices``. FormatError with one line for a damaged or non-nsys file, or, with
    ``need_kernel_table``, for an export without a kernel table. ``tick``: as in
    :func:`streamed_export`."""
    with streamed_export(path, need_kernel_table, tick) as (records, summary):
        found = list(records)
        result = summary()
    result.records = found
    require_content(result, len(found))
    return result


def read_trace(path, tick=None) -> ImportResult:
    """:func:`read_export` for an application import: the export must have a kernel table
    (``CUPTI_ACTIVITY_KIND_KERNEL``) and at least one kernel or copy. FormatError (one line)
    otherwise. ``tick``: as in :func:`streamed_export`."""
    path = Path(path)
    result = read_export(path, need_kernel_table=True, tick=tick)
    if not any(r.kind in ("kernel", "transfer") for r in result.records):
        raise FormatError(f"{path.name}: an empty trace (no kernel and no copy between host "
                          f"and GPU); profile a run that launches kernels, with --trace=cuda")
    return result


__all__ = ["NsysGpu", "describe_gpu", "is_sqlite", "iter_records", "read_api", "read_export",
           "read_gpus", "read_trace", "require_content", "streamed_export"]
