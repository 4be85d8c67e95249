"""Small Nsight Systems SQLite exports in each layout docs/measurements.md documents,
written with sqlite3 by the tests (no real export is shipped).

Layouts: ``modern`` (2023.1 on: StringIds names, ENUM_* tables, TARGET_INFO_GPU with
smCount and asyncEngines, 38 kernel columns with cluster, graph and green-context ones);
``mid`` (2021.2 to 2022.x: StringIds names, no ENUM_* tables, TARGET_INFO_GPU without
smCount, 27 kernel columns); ``old`` (2020.x to 2021.1: names as text cut with "...",
TARGET_INFO_CUDA_GPU with the clock in kHz and the bandwidth in kB/s or 0, 25 kernel columns).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

KERNEL_OLD = ["start", "end", "deviceId", "contextId", "streamId", "correlationId",
              "globalPid", "demangledName", "shortName", "mangledName", "launchType",
              "cacheConfig", "registersPerThread", "gridX", "gridY", "gridZ", "blockX",
              "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory",
              "localMemoryPerThread", "localMemoryTotal", "gridId", "sharedMemoryExecuted"]
KERNEL_MID = KERNEL_OLD + ["graphNodeId", "sharedMemoryLimitConfig"]
KERNEL_MODERN = (KERNEL_OLD[:4] + ["greenContextId"] + KERNEL_OLD[4:] + KERNEL_MID[25:]
                 + ["qmdBulkReleaseDone", "qmdPreexitDone", "qmdLastCtaDone", "graphId",
                    "clusterX", "clusterY", "clusterZ", "clusterSchedulingPolicy",
                    "maxPotentialClusterSize", "maxActiveClusters"])
MEMCPY_OLD = ["start", "end", "deviceId", "contextId", "streamId", "correlationId",
              "globalPid", "bytes", "copyKind", "deprecatedSrcId", "srcKind", "dstKind",
              "srcDeviceId", "srcContextId", "dstDeviceId", "dstContextId", "migrationCause",
              "graphNodeId"]
MEMCPY_MODERN = MEMCPY_OLD[:4] + ["greenContextId"] + MEMCPY_OLD[4:] + ["virtualAddress"]
MEMSET = ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
          "value", "bytes", "graphNodeId", "memKind"]
GPU_MODERN = ["id", "name", "busLocation", "isDiscrete", "l2CacheSize", "totalMemory",
              "memoryBandwidth", "clockRate", "smCount", "pciDeviceId", "uuid", "chipName",
              "computeMajor", "computeMinor", "asyncEngines", "maxShmemPerBlock"]
GPU_MID = [c for c in GPU_MODERN if c != "smCount"]
GPU_CUDA = ["id", "name", "globalMemoryBandwidth", "globalMemorySize", "constantMemorySize",
            "l2CacheSize", "numThreadsPerWarp", "coreClockRate", "numMemcpyEngines",
            "numMultiprocessors", "maxIPC", "maxWarpsPerMultiprocessor",
            "computeCapabilityMajor", "computeCapabilityMinor"]

MEMCPY_OPER = [(0, "CUDA_MEMCPY_OPER_UNKNOWN", "Unknown"),
               (1, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device"),
               (2, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host"),
               (3, "CUDA_MEMCPY_OPER_HTOA", "Host-to-Array"),
               (8, "CUDA_MEMCPY_OPER_DTOD", "Device-to-Device"),
               (9, "CUDA_MEMCPY_OPER_HTOH", "Host-to-Host"),
               (10, "CUDA_MEMCPY_OPER_PTOP", "Peer-to-Peer"),
               (11, "CUDA_MEMCPY_OPER_UNIFIED_HTOD", "Unified Host-to-Device"),
               (12, "CUDA_MEMCPY_OPER_UNIFIED_DTOH", "Unified Device-to-Host")]
MEM_KIND = [(0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"),
            (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
            (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"),
            (3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"),
            (4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"),
            (5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"),
            (6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"),
            (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown")]

#: nsys's numbering of memory kinds (the layout without ENUM tables relies on it)
PAGEABLE, PINNED, DEVICE = 0, 1, 2

SAXPY = "saxpy(int, float, float const*, float*)"
LONG = "void gemm_kernel<float, 128, 128, 8>(int, int, int, float const*, float const*, float*)"


def kernel(start, end, name, grid=(4096, 1, 1), block=(256, 1, 1), regs=32, static=0,
           dynamic=0, stream=7, device=0, corr=0):
    return dict(start=start, end=end, name=name, grid=grid, block=block, regs=regs,
                static=static, dynamic=dynamic, stream=stream, device=device, corr=corr)


def copy(start, end, nbytes, copy_kind, src=PAGEABLE, dst=DEVICE, stream=7, device=0, corr=0):
    return dict(start=start, end=end, bytes=nbytes, copyKind=copy_kind, srcKind=src,
                dstKind=dst, stream=stream, device=device, correlationId=corr)


#: CUPTI_ACTIVITY_KIND_RUNTIME as nsys exports it (2021.2 on)
RUNTIME = ["start", "end", "eventClass", "globalTid", "correlationId", "nameId",
           "returnValue", "callchainId"]
#: CUPTI_ACTIVITY_KIND_SYNCHRONIZATION as nsys exports it (eventSyncId from CUDA 12.8)
SYNC = ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
        "syncType", "eventId", "eventSyncId"]
#: CUPTI_ACTIVITY_KIND_CUDA_EVENT (CUPTI's cudaEventRecord record)
CUDA_EVENT = ["deviceId", "contextId", "streamId", "correlationId", "eventId",
              "globalPid", "eventSyncId"]
#: CUPTI's CUpti_ActivitySynchronizationType
SYNC_TYPES = [(0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"),
              (1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"),
              (2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait event"),
              (3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"),
              (4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync")]
EVENT_SYNC, STREAM_WAIT, STREAM_SYNC, CONTEXT_SYNC = 1, 2, 3, 4
#: TARGET_INFO_CUDA_CONTEXT_INFO and TARGET_INFO_CUDA_STREAM as nsys exports them
CONTEXT_INFO = ["nullStreamId", "hwId", "vmId", "processId", "deviceId", "contextId",
                "parentContextId", "isGreenContext"]
STREAM_INFO = ["streamId", "hwId", "vmId", "processId", "contextId", "priority", "flag"]
#: CUPTI's CUpti_ActivityStreamFlag
STREAM_TYPES = [(0, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN", "Unknown"),
                (1, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default"),
                (2, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking"),
                (3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null")]
BLOCKING, NON_BLOCKING, NULL_STREAM = 1, 2, 3
#: the host thread of the tests' runtime calls (a serialized globalTid)
THREAD = 281475000000001


def call(start, end, name, corr, thread=THREAD):
    """A CUDA runtime call (ns), with nsys's version suffix on its name."""
    return dict(start=start, end=end, name=name + "_v3020", corr=corr, thread=thread)


def sync(start, end, sync_type, corr, stream=0xFFFFFFFF, event=0xFFFFFFFF, device=0):
    """A synchronisation record (ns); CUPTI's invalid value where a field does not apply."""
    return dict(start=start, end=end, syncType=sync_type, correlationId=corr,
                streamId=stream, eventId=event, deviceId=device)


def _create(conn, table, columns):
    conn.execute(f'CREATE TABLE "{table}" ({", ".join(c + " INTEGER" for c in columns)})')


def _insert(conn, table, columns, values: dict):
    row = [values.get(c, 0) for c in columns]
    conn.execute(f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES '
                 f'({", ".join("?" * len(columns))})', row)


def write_export(path: Path, layout="modern", kernels=(), copies=(), memsets=0, gpus=None,
                 enums=None, journal="DELETE", calls=None, syncs=None, events=None,
                 calls_table="CUPTI_ACTIVITY_KIND_RUNTIME", streams=None,
                 contexts=None) -> Path:
    """An export at ``path`` in ``layout`` (modern, mid, old). ``gpus``: (id, name, extra
    column values) rows for the layout's GPU table. ``enums``: whether to ship the ENUM
    tables (default: only the modern layout does), or a dict of replacement rows.
    ``calls`` (:func:`call`), ``syncs`` (:func:`sync`) and ``events`` (dicts of
    CUDA_EVENT columns): the CUDA API tables, written when given (``calls_table``: the
    runtime's, or CUPTI_ACTIVITY_KIND_DRIVER for driver calls, which have its columns).
    ``contexts``: (context, device, null stream) rows of TARGET_INFO_CUDA_CONTEXT_INFO;
    ``streams``: (stream, context, flag) rows of TARGET_INFO_CUDA_STREAM (``flag``: CUPTI's
    :data:`STREAM_TYPES`), written when given."""
    kcols = {"modern": KERNEL_MODERN, "mid": KERNEL_MID, "old": KERNEL_OLD}[layout]
    mcols = MEMCPY_MODERN if layout == "modern" else MEMCPY_OLD
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"PRAGMA journal_mode = {journal}")
        conn.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
        _create(conn, "CUPTI_ACTIVITY_KIND_KERNEL", kcols)
        if layout == "old":     # names as text in this layout
            conn.execute('DROP TABLE "CUPTI_ACTIVITY_KIND_KERNEL"')
            conn.execute('CREATE TABLE "CUPTI_ACTIVITY_KIND_KERNEL" ('
                         + ", ".join(c + (" TEXT" if c.endswith("Name") else " INTEGER")
                                     for c in kcols) + ")")
        _create(conn, "CUPTI_ACTIVITY_KIND_MEMCPY", mcols)
        _create(conn, "CUPTI_ACTIVITY_KIND_MEMSET", MEMSET)
        ids: dict[str, int] = {}

        def string_id(text):
            if text not in ids:
                ids[text] = len(ids) + 1
                conn.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[text], text))
            return ids[text]

        for k in kernels:
            name = k["name"]
            if layout == "old":
                names = dict(demangledName=name, shortName=name.split("(")[0],
                             mangledName="")
            else:
                names = dict(demangledName=string_id(name),
                             shortName=string_id(name.split("(")[0]),
                             mangledName=string_id("_Z" + name.split("(")[0]))
            _insert(conn, "CUPTI_ACTIVITY_KIND_KERNEL", kcols, dict(
                start=k["start"], end=k["end"], deviceId=k["device"], streamId=k["stream"],
                gridX=k["grid"][0], gridY=k["grid"][1], gridZ=k["grid"][2],
                blockX=k["block"][0], blockY=k["block"][1], blockZ=k["block"][2],
                registersPerThread=k["regs"], staticSharedMemory=k["static"],
                dynamicSharedMemory=k["dynamic"], clusterX=1, clusterY=1, clusterZ=1,
                correlationId=k.get("corr", 0), **names))
        for c in copies:
            _insert(conn, "CUPTI_ACTIVITY_KIND_MEMCPY", mcols, dict(
                c, deviceId=c["device"], streamId=c["stream"]))
        if calls is not None:
            _create(conn, calls_table, RUNTIME)
            for c in calls:
                _insert(conn, calls_table, RUNTIME, dict(
                    start=c["start"], end=c["end"], globalTid=c["thread"],
                    correlationId=c["corr"], nameId=string_id(c["name"])))
        if syncs is not None:
            _create(conn, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", SYNC)
            for row in syncs:
                _insert(conn, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", SYNC, row)
        if events is not None:
            _create(conn, "CUPTI_ACTIVITY_KIND_CUDA_EVENT", CUDA_EVENT)
            for row in events:
                _insert(conn, "CUPTI_ACTIVITY_KIND_CUDA_EVENT", CUDA_EVENT, row)
        if contexts is not None:
            _create(conn, "TARGET_INFO_CUDA_CONTEXT_INFO", CONTEXT_INFO)
            for ctx, device, null in contexts:
                _insert(conn, "TARGET_INFO_CUDA_CONTEXT_INFO", CONTEXT_INFO, dict(
                    nullStreamId=null, deviceId=device, contextId=ctx))
        if streams is not None:
            _create(conn, "TARGET_INFO_CUDA_STREAM", STREAM_INFO)
            for stream, ctx, flag in streams:
                _insert(conn, "TARGET_INFO_CUDA_STREAM", STREAM_INFO, dict(
                    streamId=stream, contextId=ctx, flag=flag))
        for i in range(memsets):
            _insert(conn, "CUPTI_ACTIVITY_KIND_MEMSET", MEMSET,
                    dict(start=10 + i, end=20 + i, bytes=1024, memKind=DEVICE))
        gcols = {"modern": GPU_MODERN, "mid": GPU_MID, "old": GPU_CUDA}[layout]
        gtable = "TARGET_INFO_CUDA_GPU" if layout == "old" else "TARGET_INFO_GPU"
        conn.execute(f'CREATE TABLE "{gtable}" ('
                     + ", ".join(c + (" TEXT" if c in ("name", "busLocation", "uuid",
                                                       "chipName") else " INTEGER")
                                 for c in gcols) + ")")
        for gid, gname, extra in (gpus or []):
            _insert(conn, gtable, gcols, dict(extra, id=gid, name=gname))
        if enums is None:
            enums = layout == "modern"
        if enums:
            rows = enums if isinstance(enums, dict) else {
                "ENUM_CUDA_MEMCPY_OPER": MEMCPY_OPER, "ENUM_CUDA_MEM_KIND": MEM_KIND,
                "ENUM_CUPTI_SYNC_TYPE": SYNC_TYPES, "ENUM_CUPTI_STREAM_TYPE": STREAM_TYPES}
            for table, values in rows.items():
                conn.execute(f'CREATE TABLE "{table}" (id INTEGER PRIMARY KEY, name TEXT, '
                             f'label TEXT)')
                conn.executemany(f'INSERT INTO "{table}" VALUES (?, ?, ?)', values)
        conn.commit()
    finally:
        conn.close()
    return path


#: an A100's facts as TARGET_INFO_GPU gives them (Hz, B/s, bytes)
A100 = dict(isDiscrete=1, l2CacheSize=41943040, totalMemory=42505273344,
            memoryBandwidth=1555200000000, clockRate=1410000000, smCount=108,
            computeMajor=8, computeMinor=0, asyncEngines=3, chipName="GA100")


def sqlite_file(path: Path, *statements) -> Path:
    """A SQLite file at ``path`` made by ``statements`` (not an nsys export, or half one)."""
    conn = sqlite3.connect(path)
    try:
        for sql in statements:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()
    return path


def pending_log(path: Path, insert: str) -> sqlite3.Connection:
    """A connection that committed ``insert`` into the WAL-mode export at ``path`` and
    keeps it in the ``-wal`` log beside it (no checkpoint) until it is closed."""
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute(insert)
    writer.commit()
    return writer


def streamed_trace(path: Path, n: int, *, seed, delays=(0, 0, 0, 20_000),
                   kernel_name=lambda rng: f"k{rng.randrange(20)}(float*)",
                   api: bool = False) -> Path:
    """An export of ``n`` kernels and copies (ns times) on three streams of one A100: each
    record waits for its stream and its engine (compute, host-to-device, device-to-host),
    plus one of ``delays`` (host delays); kernels named by ``kernel_name(rng)``. ``api``:
    with the runtime table (each record's launch call, issued as late as it could be) and
    a device synchronize every 1000 records (the synchronisation table)."""
    import random
    rng = random.Random(seed)
    ends = {7: 0, 8: 0, 9: 0}
    engines = {"kernel": 0, "htod": 0, "dtoh": 0}
    kernels, copies, calls, syncs = [], [], [], []
    host = 0
    for i in range(n):
        if api and i and i % 1000 == 0:     # the host waits for everything, then goes on
            done = max(ends.values())
            calls.append(call(host, done + 1_000, "cudaDeviceSynchronize", 10 * n + i))
            syncs.append(sync(host, done + 1_000, CONTEXT_SYNC, 10 * n + i))
            host = done + 5_000
            ends = {s: host + 2_000 for s in ends}
        stream, what = rng.choice(list(ends)), rng.choice(list(engines))
        start = max(ends[stream], engines[what], host + 2_000) + rng.choice(delays)
        end = start + rng.randint(5_000, 50_000)
        ends[stream] = engines[what] = end
        if api:
            calls.append(call(host, host + 1_000, "cudaLaunchKernel" if what == "kernel"
                              else "cudaMemcpyAsync", i + 1))
            host += 1_500
        if what == "kernel":
            kernels.append(kernel(start, end, kernel_name(rng), stream=stream, corr=i + 1))
        else:
            htod = what == "htod"
            copies.append(copy(start, end, (end - start) * 10, 1 if htod else 2,
                               src=PINNED if htod else DEVICE, dst=DEVICE if htod else PINNED,
                               stream=stream, corr=i + 1))
    return write_export(path, kernels=kernels, copies=copies,
                        gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)],
                        calls=calls if api else None, syncs=syncs if api else None)
