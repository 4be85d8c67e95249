"""Which streams of an Nsight Systems export are the legacy default stream and which are
non-blocking (docs/timeline.md, "The legacy default stream";
:mod:`gpumodeler.core.application.trace_streams`).

Nsight Systems writes, from CUPTI's stream and context records (NVIDIA, "Nsight Systems
SQLite export schema reference"; CUPTI API, ``CUpti_ActivityStream``):

* ``TARGET_INFO_CUDA_CONTEXT_INFO`` (``nullStreamId``, ``deviceId``, ``contextId``): each
  context's NULL stream — the legacy default stream;
* ``TARGET_INFO_CUDA_STREAM`` (``streamId``, ``contextId``, ``flag``): every stream with
  CUPTI's ``CUpti_ActivityStreamFlag`` (1 default, 2 non-blocking, 3 NULL; the export's
  ``ENUM_CUPTI_STREAM_TYPE`` table wins when it has one). The device of a stream is its
  context's (from the context table, else from the kernels and copies that ran in it).

A context has one legacy stream: the one the context table names; where it names none, the
one stream of the context flagged NULL (several flagged NULL: none is taken, not knowing
which — a per-thread default stream is a blocking stream, not the legacy one).

The runtime table records neither a call's stream nor ``cudaStreamCreateWithFlags``'s
flags, so these two tables are all the export says. Only read, never changed.
"""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from gpumodeler.core.application.trace_streams import STREAM_FLAG, StreamKinds

from .sqlite_files import BUSY_TIMEOUT_S, pending_log, read_only_uri

CONTEXT_TABLE = "TARGET_INFO_CUDA_CONTEXT_INFO"
STREAM_TABLE = "TARGET_INFO_CUDA_STREAM"
FLAG_ENUM = "ENUM_CUPTI_STREAM_TYPE"
#: where a context's device is read when the export has no context table
ACTIVITY_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY")


def _flag_from_label(text) -> str | None:
    """What an ENUM_CUPTI_STREAM_TYPE name or label means (``..._NON_BLOCKING``,
    ``Null``, ``Default``)."""
    w = re.sub(r"[^a-z]", "", str(text or "").lower())
    for key, meaning in (("nonblocking", "non-blocking"), ("null", "legacy"),
                         ("default", "blocking"), ("unknown", "unknown")):
        if w.endswith(key) or w == key:
            return meaning
    return None


def _ids(value) -> int | None:
    """A stream, device or context id (a whole number >= 0 below CUPTI's invalid
    0xFFFFFFFF), else None."""
    return value if type(value) is int and 0 <= value < 0xFFFFFFFF else None


def _columns(conn, table: str) -> set:
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def read_stream_kinds(path) -> StreamKinds | None:
    """The legacy and non-blocking streams of the export at ``path`` (module docstring),
    or None when it names no legacy stream (no such tables, or no usable row). Rows whose
    ids are not whole numbers are left out; a damaged file reads as None (the trace's
    own reading reports it)."""
    path = Path(path)
    try:
        if pending_log(path) is None:
            conn = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT_S)
            close = conn.close
        else:
            from .schema import read_only_connection    # (a private copy of the file)
            db = read_only_connection(path)
            conn, close = db.conn, db.close
    except sqlite3.DatabaseError:
        return None
    try:
        return _read(conn)
    except sqlite3.DatabaseError:
        return None
    finally:
        close()


def _read(conn) -> StreamKinds | None:
    tables = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table'")}
    device_of: dict = {}     # context -> device
    legacy: set = set()
    named: set = set()       # contexts whose null stream the context table names
    flagged: dict = {}       # context -> the streams flagged NULL in the stream table
    non_blocking: set = set()
    context: dict = {}
    if CONTEXT_TABLE in tables and {"nullStreamId", "deviceId", "contextId"} <= \
            _columns(conn, CONTEXT_TABLE):
        for stream, device, ctx in conn.execute(
                f'SELECT nullStreamId, deviceId, contextId FROM "{CONTEXT_TABLE}"'):
            stream, device, ctx = _ids(stream), _ids(device), _ids(ctx)
            if device is None or ctx is None:
                continue
            device_of[ctx] = device
            if stream is not None:
                legacy.add((device, stream))
                context[(device, stream)] = ctx
                named.add(ctx)
    if not device_of:   # (no context table: the contexts the kernels and copies ran in)
        for table in ACTIVITY_TABLES:
            if table in tables and {"contextId", "deviceId"} <= _columns(conn, table):
                for ctx, device in conn.execute(
                        f'SELECT DISTINCT contextId, deviceId FROM "{table}"'):
                    if _ids(ctx) is not None and _ids(device) is not None:
                        device_of.setdefault(ctx, device)
    if STREAM_TABLE in tables and {"streamId", "contextId", "flag"} <= \
            _columns(conn, STREAM_TABLE):
        meaning = dict(STREAM_FLAG)
        enum_cols = _columns(conn, FLAG_ENUM) if FLAG_ENUM in tables else set()
        if {"id", "name"} <= enum_cols:
            own = {}
            label = "label" if "label" in enum_cols else "NULL"
            for flag, *texts in conn.execute(f'SELECT id, name, {label} FROM "{FLAG_ENUM}"'):
                found = next((m for m in map(_flag_from_label, texts) if m), None)
                if found is not None and _ids(flag) is not None:
                    own[flag] = found
            if own:
                meaning = own
        for stream, ctx, flag in conn.execute(
                f'SELECT streamId, contextId, flag FROM "{STREAM_TABLE}"'):
            stream, ctx = _ids(stream), _ids(ctx)
            device = device_of.get(ctx)
            if stream is None or device is None:
                continue
            context[(device, stream)] = ctx
            kind = meaning.get(flag, "unknown")
            if kind == "legacy":
                flagged.setdefault(ctx, set()).add((device, stream))
            elif kind == "non-blocking":
                non_blocking.add((device, stream))
    for ctx, streams in flagged.items():
        if ctx not in named and len(streams) == 1:  # (several: which one is not known)
            legacy |= streams
    if not legacy:
        return None
    return StreamKinds(frozenset(legacy), frozenset(non_blocking - legacy), context)


__all__ = ["CONTEXT_TABLE", "FLAG_ENUM", "STREAM_TABLE", "read_stream_kinds"]
