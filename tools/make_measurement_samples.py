"""Write the sample measurement files of resources/measurements/ (docs/measurements.md).

The files follow the layouts of nvprof --csv and Nsight Compute --csv as their manuals and
published outputs show them. Numbers are synthetic but self-consistent: copy throughputs are
size / duration in nvprof's binary units, and the saxpy2 kernels' durations and counts are
what gpumodeler's model gives for known per-warp inputs, so `predict --profile` on these
files reproduces the model (tests/cli/test_measure_cli.py). Run from the repository root:

    python tools/make_measurement_samples.py
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from gpumodeler.core.measurements.units import ncu_unit
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.db.catalog import Catalog

OUT = Path("resources/measurements")
SAXPY2 = "saxpy2(int, float, float const *, float*, int)"
#: per-warp inputs of the sample saxpy2 (Gajger §5.2 with a = 8: latency 942 + 24a)
SAXPY2_WARP = dict(latency_bound=1134.0, issued=58, fp32=20, integer=30, control=5, ldst=3,
                   dram_read=256, dram_write=128)
SAXPY2_LAUNCH = dict(grid=4096, block=256, registers=64)
KIB, MIB, GIB = 2 ** 10, 2 ** 20, 2 ** 30


def model_time(gpu_name: str, occupancy: float, **w) -> float:
    gpu = Catalog().get(gpu_name).to_gpu_spec()
    inputs = KernelInputs(latency_bound=w["latency_bound"], issued_instructions=w["issued"],
                          cuda_core_instructions=w["fp32"] + w["integer"] + w["control"],
                          gmem_bytes=w["dram_read"] + w["dram_write"])
    return predict(gpu, inputs, grid_size=SAXPY2_LAUNCH["grid"], block_size=SAXPY2_LAUNCH["block"],
                   occupancy=occupancy).kernel.time_s


def line(*cells) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="").writerow(cells)
    return out.getvalue()


def q(*cells) -> str:
    return ",".join(f'"{c}"' for c in cells)


TRACE_HEADER = ["Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y",
                "Block Z", "Registers Per Thread", "Static SMem", "Dynamic SMem", "Size",
                "Throughput", "SrcMemType", "DstMemType", "Device", "Context", "Stream", "Name",
                "Correlation_ID"]


def copy_row(header, units, start, size_b, bw_bytes_per_s, name, device, src, dst, corr, **extra):
    tu = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[units["Duration"]]
    su = {"B": 1, "KB": KIB, "MB": MIB, "GB": GIB}[units["Size"]]
    ru = {"B/s": 1, "KB/s": KIB, "MB/s": MIB, "GB/s": GIB}[units["Throughput"]]
    dur = size_b / bw_bytes_per_s
    dur_p = f"{dur / tu:.6f}"
    thr = size_b / (float(dur_p) * tu) / ru
    cells = {"Start": f"{start:.6f}", "Duration": dur_p, "Size": f"{size_b / su:.6f}",
             "Throughput": f"{thr:.6f}", "SrcMemType": src, "DstMemType": dst, "Device": device,
             "Context": "1", "Stream": "7", "Name": name, "Correlation_ID": str(corr), **extra}
    return [cells.get(h, "") for h in header]


def kernel_row(header, units, start, time_s, device, corr, grid=None, block=None, regs=None,
               name=SAXPY2, **extra):
    tu = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[units["Duration"]]
    grid = grid or (SAXPY2_LAUNCH["grid"], 1, 1)
    block = block or (SAXPY2_LAUNCH["block"], 1, 1)
    cells = {"Start": f"{start:.6f}", "Duration": f"{time_s / tu:.6f}",
             "Grid X": grid[0], "Grid Y": grid[1], "Grid Z": grid[2], "Block X": block[0],
             "Block Y": block[1], "Block Z": block[2],
             "Registers Per Thread": regs or SAXPY2_LAUNCH["registers"], "Static SMem": "0.000000",
             "Dynamic SMem": "0.000000", "Device": device, "Context": "1", "Stream": "7",
             "Name": name, "Correlation_ID": str(corr), **extra}
    return [str(cells.get(h, "")) for h in header]


def block(header, units_map, rows):
    units = [units_map.get(h, "") for h in header]
    return [q(*header), ",".join(units)] + [line(*r) for r in rows]


def nvprof_trace() -> str:
    t970 = model_time("GeForce GTX 970", 32, **SAXPY2_WARP)
    ttx = model_time("GeForce GTX TITAN X", 32, **SAXPY2_WARP)
    out = ["==4101== NVPROF is profiling process 4101, command: ./saxpy2 1048576 8",
           "==4101== Profiling application: ./saxpy2 1048576 8",
           "==4101== Profiling result:"]
    u1 = {"Start": "us", "Duration": "us", "Static SMem": "KB", "Dynamic SMem": "KB",
          "Size": "KB", "Throughput": "GB/s"}
    d0 = "GeForce GTX 970 (0)"
    rows = [copy_row(TRACE_HEADER, u1, 0.0, 4 * MIB, 6.1e9, "[CUDA memcpy HtoD]", d0, "Pageable", "Device", 112),
            copy_row(TRACE_HEADER, u1, 712.5, 4 * MIB, 6.0e9, "[CUDA memcpy HtoD]", d0, "Pageable", "Device", 113),
            kernel_row(TRACE_HEADER, u1, 1450.25, t970, d0, 120),
            kernel_row(TRACE_HEADER, u1, 1530.75, t970, d0, 121),
            copy_row(TRACE_HEADER, u1, 1610.0, 4 * MIB, 2.6e9, "[CUDA memcpy DtoH]", d0, "Device", "Pageable", 125)]
    memset = [""] * len(TRACE_HEADER)
    for h, v in {"Start": "1440.000000", "Duration": "1.888000", "Size": "1.003906",
                 "Throughput": "0.507097", "SrcMemType": "Device", "Device": d0, "Context": "1",
                 "Stream": "7", "Name": "[CUDA memset]", "Correlation_ID": "118"}.items():
        memset[TRACE_HEADER.index(h)] = v
    rows.insert(2, memset)
    out += block(TRACE_HEADER, u1, rows)
    # run 2: two GPUs, peer copies (Src/Dst Dev columns), larger copies in ms / MB
    out += ["==4188== NVPROF is profiling process 4188, command: ./saxpy2 --multi-gpu",
            "==4188== Warning: Some profiling data are not recorded.",
            "==4188== Profiling application: ./saxpy2 --multi-gpu",
            "==4188== Profiling result:"]
    h2 = TRACE_HEADER[:18] + ["Src Dev", "Src Ctx", "Dst Dev", "Dst Ctx"] + TRACE_HEADER[18:]
    u2 = {"Start": "ms", "Duration": "ms", "Static SMem": "B", "Dynamic SMem": "B",
          "Size": "MB", "Throughput": "GB/s"}
    d1 = "GeForce GTX TITAN X (1)"
    rows = [copy_row(h2, u2, 10.5, 32 * MIB, 11.8e9, "[CUDA memcpy HtoD]", d0, "Pinned", "Device", 201),
            copy_row(h2, u2, 14.0, 32 * MIB, 11.9e9, "[CUDA memcpy HtoD]", d1, "Pinned", "Device", 202),
            kernel_row(h2, u2, 18.0, t970, d0, 210),
            kernel_row(h2, u2, 18.1, ttx, d1, 211),
            copy_row(h2, u2, 19.0, 16 * MIB, 150e9, "[CUDA memcpy DtoD]", d0, "Device", "Device", 214),
            copy_row(h2, u2, 20.0, 16 * MIB, 9.5e9, "[CUDA memcpy PtoP]", d0, "Device", "Device", 215,
                     **{"Src Dev": d0, "Src Ctx": "1", "Dst Dev": d1, "Dst Ctx": "2"}),
            copy_row(h2, u2, 25.0, 32 * MIB, 12.1e9, "[CUDA memcpy DtoH]", d0, "Device", "Pinned", 220),
            copy_row(h2, u2, 28.5, 32 * MIB, 12.0e9, "[CUDA memcpy DtoH]", d1, "Device", "Pinned", 221)]
    out += block(h2, u2, rows)
    out += ["==4250== NVPROF is profiling process 4250, command: ./saxpy2 0 8",
            "======== Error: application returned an error code (1)",
            "==4250== Profiling application: ./saxpy2 0 8",
            "==4250== Profiling result:",
            "No kernels were profiled."]
    # run 4: an older nvprof (no SrcMemType/DstMemType), small copies in B, ns, MB/s
    out += ["==4302== NVPROF is profiling process 4302, command: ./saxpy2 --small",
            "==4302== Profiling application: ./saxpy2 --small",
            "==4302== Profiling result:"]
    h4 = [h for h in TRACE_HEADER if h not in ("SrcMemType", "DstMemType", "Correlation_ID")]
    u4 = {"Start": "ns", "Duration": "ns", "Static SMem": "B", "Dynamic SMem": "B", "Size": "B",
          "Throughput": "MB/s"}
    rows = [copy_row(h4, u4, 1000.0, 4096, 1.2e9, "[CUDA memcpy HtoD]", d0, "", "", 0),
            copy_row(h4, u4, 9000.0, 65536, 4.1e9, "[CUDA memcpy HtoD]", d0, "", "", 0),
            copy_row(h4, u4, 40000.0, 4096, 1.1e9, "[CUDA memcpy DtoH]", d0, "", "", 0)]
    out += block(h4, u4, rows)
    out.append("==4302== API calls: No API activities were profiled.")
    return "\n".join(out) + "\n"


def nvprof_metrics() -> str:
    w = SAXPY2_WARP
    warps = SAXPY2_LAUNCH["grid"] * SAXPY2_LAUNCH["block"] // 32
    dev = "GeForce GTX 970 (0)"
    metrics = [
        ("inst_issued", "Instructions Issued", w["issued"] * warps),
        ("inst_executed", "Instructions Executed", w["issued"] * warps),
        ("inst_fp_32", "FP Instructions(Single)", w["fp32"] * 32 * warps),
        ("inst_integer", "Integer Instructions", w["integer"] * 32 * warps),
        ("cf_executed", "Executed Control-Flow Instructions", w["control"] * warps),
        ("inst_compute_ld_st", "Load/Store Instructions", w["ldst"] * 32 * warps),
        ("flop_count_sp", "Floating Point Operations(Single Precision)", 2 * 8 * 32 * warps),
        ("dram_read_bytes", "Total bytes read from DRAM to L2 cache", w["dram_read"] * warps),
        ("dram_write_bytes", "Total bytes written from L2 cache to DRAM", w["dram_write"] * warps),
        ("dram_read_transactions", "Device Memory Read Transactions", w["dram_read"] // 32 * warps),
        ("dram_write_transactions", "Device Memory Write Transactions", w["dram_write"] // 32 * warps),
        ("l2_read_transactions", "L2 Read Transactions", w["dram_read"] // 32 * warps),
        ("l2_write_transactions", "L2 Write Transactions", w["dram_write"] // 32 * warps),
        ("gld_transactions", "Global Load Transactions", w["dram_read"] // 32 * warps),
        ("gst_transactions", "Global Store Transactions", w["dram_write"] // 32 * warps),
        ("shared_load_transactions", "Shared Load Transactions", 0),
        ("shared_store_transactions", "Shared Store Transactions", 0),
        ("achieved_occupancy", "Achieved Occupancy", "0.500000"),
        ("warp_execution_efficiency", "Warp Execution Efficiency", "100.000000%"),
        ("warp_nonpred_execution_efficiency", "Warp Non-Predicated Execution Efficiency", "100.000000%"),
        ("dram_read_throughput", "Device Memory Read Throughput", "117.718450GB/s"),
        ("dram_utilization", "Device Memory Utilization", "Mid (6)"),
        ("stall_memory_dependency", "Issue Stall Reasons (Data Request)", "61.032504%"),
    ]
    out = ["==4420== NVPROF is profiling process 4420, command: ./saxpy2 1048576 8",
           "==4420== Some kernel(s) will be replayed on device 0 in order to collect all events/metrics.",
           "==4420== Profiling application: ./saxpy2 1048576 8",
           "==4420== Profiling result:",
           "==4420== Event result:",
           q("Device", "Kernel", "Invocations", "Event Name", "Min", "Max", "Avg", "Total")]
    for name, value in (("shared_ld_bank_conflict", 0), ("shared_st_bank_conflict", 0),
                        ("warps_launched", warps)):
        out.append(line(dev, SAXPY2, 2, name, value, value, value, 2 * value))
    out += ["", "==4420== Metric result:",
            q("Device", "Kernel", "Invocations", "Metric Name", "Metric Description", "Min", "Max", "Avg")]
    for name, desc, value in metrics:
        out.append(line(dev, SAXPY2, 2, name, desc, value, value, value))
    return "\n".join(out) + "\n"


NCU_META = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC"]


def ncu_profiles():
    """(kernel, metrics {name: (value text, unit)}) per launch on an RTX 2080 Ti."""
    w = SAXPY2_WARP
    warps = SAXPY2_LAUNCH["grid"] * SAXPY2_LAUNCH["block"] // 32
    t = model_time("GeForce RTX 2080 Ti", 24, **w)
    sax = {
        "device__attribute_display_name": ("NVIDIA GeForce RTX 2080 Ti", ""),
        "gpu__time_duration.sum": (f"{t * 1e6:.2f}", "usecond"),
        "launch__block_size": ("256", ""), "launch__grid_size": ("4,096", ""),
        "launch__registers_per_thread": ("32", "register/thread"),
        "launch__shared_mem_per_block_static": ("0", "byte/block"),
        "launch__shared_mem_per_block_dynamic": ("0", "byte/block"),
        "smsp__inst_issued.sum": (f"{w['issued'] * warps:,}", "inst"),
        "smsp__inst_executed.sum": (f"{w['issued'] * warps:,}", "inst"),
        "smsp__sass_thread_inst_executed_op_fp32_pred_on.sum": (f"{w['fp32'] * 32 * warps:,}", "inst"),
        "smsp__sass_thread_inst_executed_op_integer_pred_on.sum": (f"{w['integer'] * 32 * warps:,}", "inst"),
        "smsp__sass_thread_inst_executed_op_control_pred_on.sum": (f"{w['control'] * 32 * warps:,}", "inst"),
        "smsp__inst_executed_pipe_tensor.sum": ("0", "inst"),
        "dram__bytes_read.sum": (f"{w['dram_read'] * warps / 1e6:.6f}", "Mbyte"),
        "dram__bytes_write.sum": (f"{w['dram_write'] * warps / 1e6:.6f}", "Mbyte"),
        "lts__t_bytes.sum": (f"{(w['dram_read'] + w['dram_write']) * warps / 1e6:.6f}", "Mbyte"),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": ("0", ""),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": ("0", ""),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": ("0", ""),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": ("0", ""),
        "sm__warps_active.avg.pct_of_peak_sustained_active": ("75.00", "%"),
        "sm__cycles_elapsed.avg.per_second": ("1.55", "cycle/nsecond"),
    }
    trn = dict(sax)
    trn.update({
        "gpu__time_duration.sum": ("412.35", "usecond"),
        "launch__block_size": ("1,024", ""), "launch__grid_size": ("16,384", ""),
        "launch__registers_per_thread": ("24", "register/thread"),
        "launch__shared_mem_per_block_static": ("4.22", "Kbyte/block"),
        "smsp__inst_issued.sum": ("14,680,064", "inst"),
        "smsp__inst_executed.sum": ("14,155,776", "inst"),
        "dram__bytes_read.sum": ("67.11", "Mbyte"), "dram__bytes_write.sum": ("67.11", "Mbyte"),
        "lts__t_bytes.sum": ("134.22", "Mbyte"),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": ("1,048,576", ""),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": ("1,048,576", ""),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": ("0", ""),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": ("0", ""),
        "sm__warps_active.avg.pct_of_peak_sustained_active": ("88.41", "%"),
    })
    kern = "transpose_smem(float*, float const*, int, int)"
    return [("1", SAXPY2, "(256, 1, 1)", "(4096, 1, 1)", sax),
            ("2", SAXPY2, "(256, 1, 1)", "(4096, 1, 1)", sax),
            ("3", kern, "(32, 32, 1)", "(128, 128, 1)", trn)]


def ncu_raw() -> str:
    profiles = ncu_profiles()
    names = list(profiles[0][4])
    out = ["==PROF== Connected to process 5120 (/home/user/saxpy2)",
           "==PROF== Profiling \"saxpy2\" - 0: 0%....50%....100% - 12 passes",
           "==PROF== Profiling \"saxpy2\" - 1: 0%....50%....100% - 12 passes",
           "==PROF== Profiling \"transpose_smem\" - 2: 0%....50%....100% - 12 passes",
           "==PROF== Disconnected from process 5120",
           q(*NCU_META, *names),
           q(*([""] * len(NCU_META)), *(profiles[0][4][n][1] for n in names))]
    units = {n: profiles[0][4][n][1] for n in names}

    def in_column_unit(name, value, unit):
        # the raw page has one unit per column: convert a launch's value to it
        if unit == units[name] or not unit:
            return value
        v = float(value.replace(",", "")) * ncu_unit(unit)[0] / ncu_unit(units[name])[0]
        return f"{v:.6g}"
    for pid, kern, blk, grd, m in profiles:
        out.append(q(pid, "5120", "saxpy2", "127.0.0.1", kern, "1", "7", blk, grd,
                     "NVIDIA GeForce RTX 2080 Ti", "7.5",
                     *(in_column_unit(n, *m[n]) for n in names)))
    return "\n".join(out) + "\n"


def ncu_details() -> str:
    out = ["==PROF== Connected to process 5188 (/home/user/saxpy2)",
           "==PROF== Disconnected from process 5188",
           q(*NCU_META, "Section Name", "Metric Name", "Metric Unit", "Metric Value")]
    human = {"gpu__time_duration.sum": ("GPU Speed Of Light Throughput", "Duration"),
             "launch__registers_per_thread": ("Launch Statistics", "Registers Per Thread"),
             "launch__grid_size": ("Launch Statistics", "Grid Size"),
             "launch__block_size": ("Launch Statistics", "Block Size"),
             "launch__shared_mem_per_block_static": ("Launch Statistics", "Static Shared Memory Per Block"),
             "launch__shared_mem_per_block_dynamic": ("Launch Statistics", "Dynamic Shared Memory Per Block"),
             "sm__warps_active.avg.pct_of_peak_sustained_active": ("Occupancy", "Achieved Occupancy"),
             "smsp__inst_executed.sum": ("Instruction Statistics", "Executed Instructions"),
             "smsp__inst_issued.sum": ("Instruction Statistics", "Issued Instructions")}
    for pid, kern, blk, grd, m in ncu_profiles()[:3:2]:
        for name, (value, unit) in m.items():
            if name == "device__attribute_display_name":
                continue
            section, shown = human.get(name, ("Command line profiler metrics", name))
            out.append(q(pid, "5188", "saxpy2", "127.0.0.1", kern, "1", "7", blk, grd,
                         "NVIDIA GeForce RTX 2080 Ti", "7.5", section, shown, unit, value))
    return "\n".join(out) + "\n"


def timings() -> str:
    t970 = model_time("GeForce GTX 970", 32, **SAXPY2_WARP)
    return "\n".join([
        "# gpumodeler timings CSV (docs/measurements.md): one row per kernel launch or copy",
        "kind,name,direction,size,size_unit,grid,block,time,unit,gpu,memory_kind,registers,energy [J]",
        f"kernel,saxpy2,,,,4096,256,{t970 * 1e6:.4f},us,GeForce GTX 970,,64,0.0121",
        "transfer,h2d 1 MiB,htod,1,MiB,,,0.1018,ms,GeForce GTX 970,pageable,,",
        "transfer,h2d 4 MiB,htod,4,MiB,,,0.699,ms,GeForce GTX 970,pageable,,",
        "transfer,d2h 4 MiB,dtoh,4,MiB,,,1.613,ms,GeForce GTX 970,pageable,,",
        "transfer,h2d 64 MB,htod,64,MB,,,5.42,ms,GeForce GTX 970,pinned,,",
        "transfer,d2h 64 MB,dtoh,64,MB,,,5.51,ms,GeForce GTX 970,pinned,,",
        f"kernel,saxpy2,,,,4096,256,{model_time('GeForce GTX TITAN X', 32, **SAXPY2_WARP) * 1e3:.6f},ms,GeForce GTX TITAN X,,64,",
    ]) + "\n"


def synthetic_pageable_copies() -> str:
    """SYNTHETIC pageable copies with the size-dependent bandwidth of docs/calibration.md (4 KiB to 1 GiB,
    both directions, 8 µs startup, 2 % multiplicative noise with a fixed seed): the input of
    the README's `calibrate link --measurements` example. Not a measurement."""
    import random
    rnd = random.Random(2026)
    lines = ["# gpumodeler timings CSV (docs/measurements.md). SYNTHETIC copies, not a measurement: pageable",
             "# copies generated with the size-dependent bandwidth of docs/calibration.md (host->device 10.3 GB/s up to",
             "# 1 MiB, 6 GB/s from 4 MiB; device->host 6 GB/s at 1-2 MiB, 2.5 GB/s from 4 MiB), 8 us startup",
             "# and 2 % multiplicative noise (seed 2026), to show `calibrate link --measurements`.",
             "kind,name,direction,size,size_unit,grid,block,time,unit,gpu,memory_kind,registers,energy [J]"]
    kib = 1024
    for d in ("htod", "dtoh"):
        for n in (4 * kib * 2 ** k for k in range(19)):
            if d == "htod":
                bw = 10.3e9 if n <= 2 ** 20 else (6.0e9 if n >= 4 * 2 ** 20 else 8.0e9)
            else:
                bw = 6.0e9 if n <= 2 * 2 ** 20 else 2.5e9
            t = (8e-6 + n / bw) * (1 + rnd.gauss(0, 0.02))
            lines.append(f"transfer,{d} {n // kib} KiB,{d},{n // kib},KiB,,,{t * 1e6:.3f},us,"
                         f"GeForce GTX 970,pageable,,")
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    files = {"nvprof-gpu-trace-multirun.csv": nvprof_trace(),
             "nvprof-metrics-saxpy2.csv": nvprof_metrics(),
             "ncu-raw.csv": ncu_raw(), "ncu-details.csv": ncu_details(),
             "timings.csv": timings(), "synthetic-pageable-copies.csv": synthetic_pageable_copies()}
    for name, text in files.items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
