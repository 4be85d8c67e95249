"""Throughput bound: Gajger eq. 4.5–4.7 generalised to Volkov's per-resource worksheet, with
the issue pipes of Volta and later architectures.

Volkov 2016 §3.6: for each SM resource r, the exclusive-use time of a warp is
``T_r = Σ_k N_k · c_{r,k}`` cycles (instruction mix N_k per warp, c the cycles instruction
kind k holds resource r); the throughput bound is ``1 / max_r T_r`` warps per cycle per SM.
Gajger eq. 4.5 keeps three resources:

    CPW_bound = max(warp size × INS_CUDA / CUDA cores, INS_issued / schedulers,
                    GMem_bytes / GMem_bandwidth)                     (4.5)
    throughput bound = 1 / CPW_bound                                   (4.6)
    GMem_bandwidth = GMem_clock × bus width/8 × data rate / (SMs × SM_clock)   (4.7)

Here, per warp and per SM, in cycles (W = warp size):

* ``cuda_cores``  = W × INS_CUDA / CUDA cores per SM (GPUs before Volta, and any GPU when
  only the total CUDA-core count is known)
* ``issue``       = INS_issued / (schedulers × issues per scheduler per cycle); on a GPU
  without dual issue (one dispatch per scheduler: Volta and later) a dual-issued pair of the
  graph costs two issue slots
* ``memory``      = GMem_bytes / GMem bytes per cycle per SM, at the GPU's *sustained*
  DRAM bandwidth where it is known (Volkov 2016 §6.3, Table 6.4), the pin bandwidth of eq.
  4.7 as its ceiling and where it is not (:func:`dram_bandwidth_choice`)
* ``sfu``         = W × INS_SFU / SFUs per SM
* ``fp64``        = W × INS_FP64 / FP64 units per SM
* ``shared_memory`` = Σ (conflict degree) / warp-wide shared accesses per cycle per SM
* ``l2`` = L2_bytes / (L2 bandwidth / (SMs × SM clock)): the global-memory bytes per warp
  the L2 serves instead of DRAM (cache hits: reuse between neighbouring loads and across
  blocks, core.kernel.sass.reuse), beside the DRAM row ``memory`` that carries the
  compulsory bytes (Williams, Waterman & Patterson 2009's Roofline has a ceiling per
  memory level the same way). 0 where the GPU's L2 bandwidth is unknown (the hits are then
  not bounded; the prediction says so)
* ``l1`` = max(L1_bytes / L1 bytes per cycle per SM, L1 wavefronts): the L1's data stage.
  Every global and local request of a warp passes through it, hit or miss (from Volta on
  the SM's L1TEX unit: a warp's load or store is one request to it, which the unit splits
  into *wavefronts*, "the maximum unit of work that can pass through that pipeline stage
  per cycle", more than one where the request touches more cache lines than one wavefront
  can reach: NVIDIA's Nsight Compute team on the NVIDIA Developer Forums, "What's the
  difference between wavefronts and sectors/req", 2021, and "How does the LSU execute
  load/store instructions in the Ampere architecture", 2023). Choice: one wavefront per
  128-byte line a request touches (``l1_wavefronts``, the lines of
  core.kernel.warp_counts.lines_touched), 128 / ``l1_bytes_per_cycle_per_sm`` cycles each:
  the L1 is one data array with the shared memory (NVIDIA Volta Tuning Guide, "Unified
  Shared Memory/L1/Texture Cache"), 32 banks × 4 bytes = 128 bytes per clock on Volta and
  Ampere (CUDA C++ Programming Guide, "Shared Memory" of compute capability 7.x and later),
  one cycle a line; 64 on Turing (Jia et al. 2019's T4 figure, docs/device-sources.md), two;
  and the sectors a strided warp reads from different lines sit at the same place in each
  line, so in the same banks. A coalesced 32-bit request is one line, which the bytes term
  already gave; a warp whose lanes each walk their own row (32 lines) takes 32 lines' time.
  The bytes term, ``L1_bytes`` (the hits the L1 serves: reuse
  within a block on a GPU whose L1 caches the loads, core.kernel.sass.reuse) at
  ``l1_bytes_per_cycle_per_sm`` in devices.db, stays as the floor. Measured on public
  nvbench runs of a row-per-thread matrix-vector product (docs/validation.md): on 16 blocks
  of 512 threads the product of a 8192 × 8192 matrix takes 2.23–2.27 ms on an RTX 3080,
  3060 and 3060 Ti alike, whose DRAM rates differ 2×, where 16 SMs × 4.19 M lines at one a
  cycle give 2.36–2.52 ms. 0 where the GPU's L1 data rate is unknown (before Volta, where
  each extra line is a reissue: the ``issue`` row)
* ``lsu`` = W × INS_LSU / LD/ST units per SM: the SM's load/store units, which execute the
  global, local and shared-memory instructions (the Volkov §3.6 worksheet with these units
  as one more resource, c = W / units cycles per instruction: one thread's access per unit
  per cycle). A Turing or GA10x SM has 16 (4 per processing block), a Volta SM 32, so
  there every such warp instruction holds them 2 cycles, however few lines it touches.
  Measured on a GA106 (RTX 3060, compute capability 8.6; YKTian-x2b/
  AmpereArchViaMicroBenchMark, cache_Size_Bandwidth_Latency/L1_DataCache_Bandwidth, commits
  12fbe07 and ff09a76): coalesced L1 hits of 32-bit loads return 63.8–65.4 bytes per clock
  per SM (16 threads' words), of 64-bit loads 124.7 (16 threads' double words), so the
  rate is in accesses, not bytes. On the public nvbench runs of docs/validation.md a naive
  matrix multiply (two loads a step) takes ~4 cycles a step per SM on GA10x, the textbook's
  tiled one (36 load/store instructions a tile phase) 63–67 cycles a phase on GA10x and 76
  on Turing, against 72 here. Volta and later only (``issues_separate_pipes``): 0 before,
  and where ``ldst_units_per_sm`` is unknown

On Volta and later (compute capability >= 7, :meth:`GPUSpec.issues_separate_pipes`), when
the per-pipe instruction mix is known (``pipe_instructions``, from a kernel graph), the
CUDA cores split into pipes (docs/pipes.md has the rules and their sources):

* ``fp32``  = W × INS_FP32 / FP32 lanes per SM (``cuda_cores_per_sm``)
* ``int32`` = W × INS_INT32 / INT32 lanes per SM (``int32_units_per_sm``)
* ``fp32_int32`` = W × (INS_FP32 + INS_INT32) / (FP32 lanes + INT32 lanes − shared lanes),
  only where INT32 runs on lanes that also execute FP32 (GA10x and Ada: 64 of the 128 FP32
  lanes, ``int32_fp32_shared_lanes_per_sm``); with separate lanes (Volta, Turing, GA100,
  Hopper) the two pipes are independent and this resource does not exist (0)
* ``fp16``  = W × INS_FP16 / (FP16 results per cycle per SM / 2): every FP16 instruction is
  counted as a packed HADD2/HMUL2/HFMA2, two results per thread (SASS has no other form).
  Where FP16x2 runs on the FP32 lanes (GA10x and GH100 by NVIDIA's statement, later
  architectures by assumption: :func:`fp16_shares_fp32_lanes`) the two share those lanes'
  time: ``fp16`` += ``fp32`` and ``fp32_int32`` += the FP16 time; on Volta, Turing and GA100
  FP16 is a pipe of its own
* ``tensor`` = Σ_c MACs_c / (dense tensor MACs per clock per SM of class c): the tensor-core
  multiply-adds per warp of each data-type class c (``tensor_macs``, decoded from the MMA
  shapes by core.kernel.mma) over the GPU's rate for that class (NVIDIA architecture
  whitepapers, docs/pipes.md); on any GPU, since the rate is what says whether it has them

A resource the kernel does not use costs 0 cycles and needs no device parameter; one it
uses whose hardware count is unknown is an error naming the missing parameter. All inputs
broadcast (numpy), so a sweep is one call.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from gpumodeler.core.array_types import Label, Real
from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.lazy_fields import LazyFields, build

# Gajger/Volkov's resources first (ties keep their historical order), then the pipes of
# Volta and later; a resource a GPU does not have reads 0.
RESOURCES = ("cuda_cores", "issue", "memory", "sfu", "fp64", "shared_memory",
             "fp32", "int32", "fp32_int32", "fp16", "tensor", "l2", "l1", "lsu")
#: Pipes a kernel graph's per-pipe counts may name (core.kernel.opcodes.PIPES that run
#: arithmetic on CUDA-core lanes or tensor cores; sfu and fp64 have their own arguments).
PIPE_COUNTS = ("fp32", "int32", "fp16", "tensor")


@dataclass(frozen=True)
class ThroughputBound(LazyFields):
    """Cycles per warp per SM for each resource, the binding one, and the bound.

    From a vectorised worksheet ``binding`` (an object array of resource names, only ever
    reported) is computed on first read."""

    cycles_per_warp: dict  # resource -> cycles (array or float)
    binding: Label  # resource name (str) or array of names
    cycles_per_warp_bound: Real  # max over resources
    warps_per_cycle: Real  # 1 / cycles_per_warp_bound
    pipes: bool = False  # True when the CUDA cores were split into Volta+ pipes


FLOAT_SCALARS = (float, int)


def _number_check(zero_ok: bool):
    """The input check of the worksheet (``zero_ok``: finite and >= 0) and of eq. 4.1 (> 0),
    one definition: ``check(name, value)`` returns a Python float for a Python number (no
    numpy on the scalar path; bool is an int, as before) or a float array, else raises
    InvalidParameter naming ``name``."""
    what = "finite number >= 0" if zero_ok else "number > 0"

    def check(name, value):
        if isinstance(value, FLOAT_SCALARS):
            v = float(value)
            if (0.0 <= v if zero_ok else 0.0 < v) and v < math.inf:
                return v
        else:
            arr = np.asarray(value, dtype=float)
            if all_within(arr, 0.0, zero_ok):
                return arr if arr.ndim else float(arr)
        raise InvalidParameter(f"{name} must be a {what}, got {value}")
    return check


#: ``check(name, value)``: finite and >= 0 (the worksheet's counts).
nonnegative_number = _number_check(True)
#: ``check(name, value)``: finite and > 0 (eq. 4.1's inputs).
positive_number = _number_check(False)
_nonneg = nonnegative_number


def all_within(arr, low: float, inclusive: bool) -> bool:
    """Every value finite and >= low (> low unless ``inclusive``): two reductions, no
    temporaries; a NaN makes the minimum NaN, which fails the comparison."""
    if arr.size == 0:
        return True
    lo, hi = arr.min(), arr.max()
    return bool((lo >= low if inclusive else lo > low) and hi < np.inf)


def require_positive(gpu: GPUSpec, name: str):
    """``gpu.require(name)`` without numpy for a plain positive number (same value)."""
    value = getattr(gpu, name)
    if type(value) in FLOAT_SCALARS and 0 < value < math.inf:
        return value
    return gpu.require(name)


#: How the worksheet's memory row got its bandwidth (:func:`dram_bandwidth_choice`).
DRAM_GIVEN, DRAM_SUSTAINED, DRAM_PIN_CEILING, DRAM_PIN = (
    "given per cycle", "sustained", "pin (ceiling)", "pin")


def dram_bandwidth_choice(gpu: GPUSpec):
    """(global-memory bytes per SM cycle per SM, how it was chosen) for the memory row.

    Volkov 2016 §3.2 and §6.3 (Table 6.4): the streaming peak a kernel attains is the
    *sustained* bandwidth, 80–97 % of the pin bandwidth, and the model should use it;
    Gajger eq. 4.7 computes the pin bandwidth per SM cycle per SM,
    ``GMem_clock × bus width/8 × data rate / (SMs × SM_clock)``. The choice, in order:

    1. ``gmem_bytes_per_cycle_per_sm`` when given (a flag, a sweep, a document's own
       per-cycle figure such as Gajger's Table 6.1, the L2 term) — ``DRAM_GIVEN``;
    2. the sustained ``memory_bandwidth_measured_bytes_per_s / (SMs × SM_clock)``, with the
       pin bandwidth (eq. 4.7) as its ceiling: a sustained figure above the pin is taken at
       the pin (``DRAM_PIN_CEILING``), else ``DRAM_SUSTAINED``;
    3. the pin bandwidth of eq. 4.7 (``DRAM_PIN``).
    """
    value = gpu.gmem_bytes_per_cycle_per_sm
    if value is not None:
        if type(value) in FLOAT_SCALARS and 0 < value < math.inf:
            return value, DRAM_GIVEN
        return gpu.gmem_bandwidth_bytes_per_cycle_per_sm(), DRAM_GIVEN
    sustained = gpu.memory_bandwidth_measured_bytes_per_s
    if sustained is None:
        return gpu.gmem_bandwidth_bytes_per_cycle_per_sm(), DRAM_PIN
    per_cycle = require_positive(gpu, "memory_bandwidth_measured_bytes_per_s") / (
        require_positive(gpu, "sms") * require_positive(gpu, "sm_clock_hz"))
    try:
        pin = gpu.gmem_bandwidth_bytes_per_cycle_per_sm()
    except InvalidParameter:  # no pin figure: the sustained one has no ceiling to meet
        return per_cycle, DRAM_SUSTAINED
    if np.ndim(per_cycle) or np.ndim(pin):
        return np.minimum(per_cycle, pin), DRAM_SUSTAINED
    if per_cycle > pin:
        return pin, DRAM_PIN_CEILING
    return per_cycle, DRAM_SUSTAINED


def _gmem_bytes_per_cycle(gpu: GPUSpec):
    """The memory row's bytes per SM cycle per SM (:func:`dram_bandwidth_choice`), without
    numpy when given directly."""
    value = gpu.gmem_bytes_per_cycle_per_sm
    if value is not None and type(value) in FLOAT_SCALARS and 0 < value < math.inf:
        return value
    return dram_bandwidth_choice(gpu)[0]


def _used(value) -> bool:
    if isinstance(value, float):
        return value > 0
    arr = np.asarray(value)
    return bool(arr.size and arr.max() > 0)  # inputs are checked >= 0 and finite


def _zero(value):
    return 0.0 * value


def _pipe_cycles(gpu: GPUSpec, warp, pipes: dict) -> dict:
    """fp32, int32, fp32_int32 and fp16 cycles per warp on a Volta-or-later SM."""
    fp32, int32, fp16 = pipes["fp32"], pipes["int32"], pipes["fp16"]
    out = {"fp32": _zero(fp32), "int32": _zero(int32), "fp32_int32": _zero(fp32 + int32),
           "fp16": _zero(fp16)}
    if _used(fp32):
        out["fp32"] = warp * fp32 / require_positive(gpu, "cuda_cores_per_sm")
    if _used(int32):
        int_lanes = require_positive(gpu, "int32_units_per_sm")
        out["int32"] = warp * int32 / int_lanes
        shared = gpu.int32_fp32_shared_lanes_per_sm
        if shared is None:
            raise InvalidParameter(
                f"GPU '{gpu.name}': int32_fp32_shared_lanes_per_sm is unknown (how many INT32 "
                f"lanes also execute FP32: 0 on Volta, Turing, GA100 and Hopper, 64 on GA10x "
                f"and Ada); give it explicitly", item="int32_fp32_shared_lanes_per_sm")
        if shared < 0 or shared > int_lanes:
            raise InvalidParameter(
                f"GPU '{gpu.name}': int32_fp32_shared_lanes_per_sm must be within 0.."
                f"{int_lanes} (the INT32 lanes), got {shared}",
                item="int32_fp32_shared_lanes_per_sm")
        if shared > 0:
            lanes = require_positive(gpu, "cuda_cores_per_sm") + int_lanes - shared
            out["fp32_int32"] = warp * (fp32 + int32) / lanes
    if _used(fp16):
        own = warp * fp16 / (require_positive(gpu, "fp16_results_per_cycle_per_sm") / 2.0)
        out["fp16"] = own
        if fp16_shares_fp32_lanes(gpu):
            # FP16x2 runs on the FP32 lanes (both FMA pipes): the lanes' time is the sum
            shared_time = np.where(np.asarray(fp16) > 0, out["fp32"], 0.0)  # per point, as one launch
            out["fp16"] = own + (float(shared_time) if shared_time.ndim == 0 else shared_time)
            if _used(int32) and (gpu.int32_fp32_shared_lanes_per_sm or 0) > 0:
                # where INT32 work shares the lanes too (element by element: a sweep's
                # points without INT32 have no fp32_int32 row, as a single launch has not)
                extra = np.where(np.asarray(int32) > 0, own, 0.0)
                out["fp32_int32"] = out["fp32_int32"] + (float(extra) if extra.ndim == 0 else extra)
    return out


#: Compute capabilities whose FP16x2 instructions run on the FP32 lanes: NVIDIA states it for
#: GA10x (8.6: "FP16x2 operations are dual-issued to both FMAheavy and FMAlite pipe") and
#: GH100 (9.0: "same as GA10x for FMA pipes and FP16x2"), and a separate FP16 pipe for Volta,
#: Turing and GA100 (NVIDIA Developer Forums, "Separate CUDA core pipeline for FP16 and FP32?",
#: 2024, NVIDIA's answer). ASSUMPTION for 8.7, 8.9, 10.x and 12.x, which the answer does not
#: name: the GA10x/GH100 arrangement they inherit (their SMs keep the FMAheavy/FMAlite split).
FP16_ON_FP32_LANES_STATED = ("8.6", "9.0")
FP16_ON_FP32_LANES_ASSUMED = ("8.7", "8.9", "10.0", "10.1", "10.3", "11.0", "12.0", "12.1")


def fp16_shares_fp32_lanes(gpu: GPUSpec) -> bool:
    """True when the GPU's FP16x2 instructions occupy its FP32 lanes (see the constants)."""
    cc = str(gpu.compute_capability or "")
    return cc in FP16_ON_FP32_LANES_STATED or cc in FP16_ON_FP32_LANES_ASSUMED


# -- the tensor row (tensor cores) ----------------------------------------------------------

def tensor_clock_ratio(gpu: GPUSpec, tensor_class: str):
    """SM clocks per tensor clock for ``tensor_class``: SM clock / ``tensor_clock_hz`` (1 when
    the GPU has no tensor clock of its own, and for FP64, whose peak implies the SM clock)."""
    if gpu.tensor_clock_hz is None or tensor_class == "fp64":
        return 1.0
    return gpu.require("sm_clock_hz") / gpu.require("tensor_clock_hz")


def tensor_cycles(gpu: GPUSpec, tensor_macs: dict | None):
    """Cycles per warp the tensor cores need: Σ_c MACs_c / dense MACs per clock per SM of c,
    in SM cycles: × SM clock / tensor clock where the GPU's tensor peaks imply a clock below
    the SM clock (``tensor_clock_hz``; NVIDIA's H100 tensor peaks are quoted at 1830 MHz).

    A class with no work needs no rate; one with work and an unknown rate is an error
    naming the device field (the CLI's ``--tensor-rate CLASS=N`` sets it)."""
    from gpumodeler.core.kernel.mma import TENSOR_CLASSES
    total = 0.0
    for cls, macs in (tensor_macs or {}).items():
        if cls not in TENSOR_CLASSES:
            raise InvalidParameter(f"unknown tensor data-type class {cls!r}; valid: "
                                   f"{', '.join(TENSOR_CLASSES)}")
        macs = _nonneg(f"{cls} tensor multiply-adds", macs)
        if _used(macs):
            total = total + macs / gpu.tensor_macs_per_cycle_per_sm(cls) * tensor_clock_ratio(gpu, cls)
        else:
            total = total + _zero(macs)
    return total


def throughput_bound(gpu: GPUSpec, *, cuda_core_instructions=0.0, issued_instructions=0.0,
                     gmem_bytes=0.0, sfu_instructions=0.0, fp64_instructions=0.0,
                     smem_bank_cycles=0.0, pipe_instructions: dict | None = None,
                     dual_issues=0.0, tensor_macs: dict | None = None,
                     l2_bytes=0.0, l1_bytes=0.0, l1_wavefronts=0.0,
                     lsu_instructions=0.0) -> ThroughputBound:
    """Per-resource worksheet for one warp (counts per warp; see module docstring).

    ``pipe_instructions`` maps pipes (``PIPE_COUNTS``) to instructions per warp; on a GPU
    that issues separate pipes it replaces ``cuda_core_instructions``. ``dual_issues`` is
    the number of dual-issued pairs already subtracted from ``issued_instructions``; a GPU
    without dual issue pays them back. ``tensor_macs`` maps tensor data-type classes
    (core.kernel.mma.TENSOR_CLASSES) to multiply-adds per warp."""
    counts = {
        "cuda_cores": _nonneg("CUDA-core instructions", cuda_core_instructions),
        "issue": _nonneg("issued instructions", issued_instructions),
        "memory": _nonneg("global-memory bytes per warp", gmem_bytes),
        "sfu": _nonneg("SFU instructions", sfu_instructions),
        "fp64": _nonneg("FP64 instructions", fp64_instructions),
        "shared_memory": _nonneg("shared-memory bank cycles", smem_bank_cycles),
    }
    dual = _nonneg("dual issues", dual_issues)
    split = pipe_instructions is not None and gpu.issues_separate_pipes()
    pipes = {}
    if pipe_instructions is not None and split:
        unknown = sorted(set(pipe_instructions) - set(PIPE_COUNTS))
        if unknown:
            raise InvalidParameter(f"unknown pipe(s) {', '.join(unknown)}; valid: "
                                   f"{', '.join(PIPE_COUNTS)}")
        pipes = {p: _nonneg(f"{p} instructions", pipe_instructions.get(p, 0.0))
                 for p in PIPE_COUNTS}

    warp = require_positive(gpu, "warp_size")
    cycles = {}
    if split:
        cycles["cuda_cores"] = _zero(counts["cuda_cores"])
    else:
        cycles["cuda_cores"] = (warp * counts["cuda_cores"] / require_positive(gpu, "cuda_cores_per_sm")
                                if _used(counts["cuda_cores"]) else _zero(counts["cuda_cores"]))
    issued = counts["issue"]
    if _used(dual) and not gpu.dual_issue():
        issued = issued + dual
    cycles["issue"] = (issued / (require_positive(gpu, "schedulers_per_sm")
                                 * require_positive(gpu, "issue_per_scheduler_per_cycle"))
                       if _used(issued) else _zero(issued))
    cycles["memory"] = (counts["memory"] / _gmem_bytes_per_cycle(gpu)
                        if _used(counts["memory"]) else _zero(counts["memory"]))
    cycles["sfu"] = (warp * counts["sfu"] / require_positive(gpu, "sfu_per_sm")
                     if _used(counts["sfu"]) else _zero(counts["sfu"]))
    cycles["fp64"] = (warp * counts["fp64"] / require_positive(gpu, "fp64_units_per_sm")
                      if _used(counts["fp64"]) else _zero(counts["fp64"]))
    cycles["shared_memory"] = (counts["shared_memory"] / require_positive(gpu, "smem_accesses_per_cycle_per_sm")
                               if _used(counts["shared_memory"]) else _zero(counts["shared_memory"]))
    if split:
        cycles.update(_pipe_cycles(gpu, warp, pipes))
    else:
        cycles.update({p: 0.0 for p in ("fp32", "int32", "fp32_int32", "fp16")})
    cycles["tensor"] = tensor_cycles(gpu, tensor_macs)
    cycles["l2"] = l2_cycles(gpu, _nonneg("L2 bytes per warp", l2_bytes))
    cycles["l1"] = l1_cycles(gpu, _nonneg("L1 bytes per warp", l1_bytes),
                             _nonneg("L1 wavefronts per warp", l1_wavefronts))
    cycles["lsu"] = lsu_cycles(gpu, warp, _nonneg("load/store instructions", lsu_instructions))
    return bound_of(cycles, split)


def lsu_cycles(gpu: GPUSpec, warp, lsu_instructions):
    """Cycles per warp the SM's load/store units need: W x global, local and shared
    instructions / ``ldst_units_per_sm`` (each unit takes one thread's access a cycle; the
    module docstring's ``lsu`` row). 0 for none, before Volta (the issue and shared-memory
    rows cover those GPUs, as Gajger's and Volkov's worksheets do) and where the count of
    units is unknown."""
    units = gpu.ldst_units_per_sm
    if units is None or not _used(lsu_instructions) or not gpu.issues_separate_pipes():
        return _zero(lsu_instructions)
    return warp * lsu_instructions / require_positive(gpu, "ldst_units_per_sm")


#: Bytes of the line a wavefront of the L1's data stage reaches (see :func:`l1_cycles` and
#: the module docstring's ``l1`` row): at the GPU's L1 bytes per clock, one cycle at 128.
L1_LINE_BYTES = 128.0


def l1_cycles(gpu: GPUSpec, l1_bytes, l1_wavefronts=0.0):
    """Cycles per warp the SM's L1 needs at its bytes per clock: its data stage's wavefronts
    for the warp's global and local requests (a 128-byte line each, one per line a request
    touches), and at least ``l1_bytes`` (its hits). 0 for neither, and where the L1 data rate
    is unknown (before Volta: the lines there are reissues, the issue row)."""
    per_cycle = gpu.l1_bytes_per_cycle_per_sm
    if per_cycle is None or not (_used(l1_bytes) or _used(l1_wavefronts)):
        return _zero(l1_bytes) + _zero(l1_wavefronts)
    rate = require_positive(gpu, "l1_bytes_per_cycle_per_sm")
    lines = l1_wavefronts * L1_LINE_BYTES
    if np.ndim(l1_bytes) == 0 and np.ndim(lines) == 0:
        return float(max(l1_bytes, lines)) / rate
    return np.maximum(l1_bytes, lines) / rate


def l2_cycles(gpu: GPUSpec, l2_bytes):
    """Cycles per warp the L2 needs for ``l2_bytes`` per warp at the GPU's L2 bandwidth
    spread over its SMs (0 for no bytes, and where the bandwidth is unknown)."""
    bandwidth = gpu.l2_bandwidth_bytes_per_s
    if not _used(l2_bytes) or bandwidth is None:
        return _zero(l2_bytes)
    per_cycle = bandwidth / (require_positive(gpu, "sms") * require_positive(gpu, "sm_clock_hz"))
    return l2_bytes / per_cycle


def bound_of(cycles: dict, split: bool) -> ThroughputBound:
    """max over the worksheet's resources (the first in RESOURCES order binds on a tie)."""
    worst: Real = 0.0
    binding = None
    for r in RESOURCES:  # one launch: Python floats, the first largest binds (as argmax)
        c = cycles[r]
        if type(c) is not float:
            break
        if c > worst:
            worst, binding = c, r
    else:
        if binding is None:
            raise InvalidParameter(_NO_RESOURCE)
        return ThroughputBound(cycles_per_warp={r: cycles[r] for r in RESOURCES},
                               binding=binding, cycles_per_warp_bound=worst,
                               warps_per_cycle=1.0 / worst, pipes=split)
    arrays = {r: np.asarray(cycles[r], dtype=float) for r in RESOURCES}
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    # A resource the kernel does not use is a scalar 0: it cannot be the maximum (> 0).
    used = [r for r in RESOURCES if arrays[r].ndim or arrays[r] != 0]
    worst = None
    for r in used:
        worst = arrays[r] if worst is None else np.maximum(worst, arrays[r])
    if worst is None:
        worst = np.zeros(shape)
    elif worst is arrays[used[0]]:
        worst = worst.copy()  # the bound is not an alias of one resource's cycles
    if worst.shape != shape:
        worst = np.array(np.broadcast_to(worst, shape))
    if worst.size and not worst.min() > 0:
        raise InvalidParameter(_NO_RESOURCE)
    if not shape:
        binding = next(r for r in RESOURCES if arrays[r] == worst)
        return ThroughputBound(
            cycles_per_warp={r: float(a) for r, a in arrays.items()}, binding=binding,
            cycles_per_warp_bound=float(worst), warps_per_cycle=float(1.0 / worst), pipes=split)
    return build(ThroughputBound, {
        "cycles_per_warp": {r: (a if a.shape == shape else np.broadcast_to(a, shape))
                            for r, a in arrays.items()},
        "cycles_per_warp_bound": worst, "warps_per_cycle": 1.0 / worst, "pipes": split,
    }, {"binding": (_binding_names, arrays, used, worst)})


_NO_RESOURCE = ("the warp uses no resource (all instruction counts and bytes are 0); "
                "give at least the issued instructions")
_RESOURCE_NAMES = np.array(RESOURCES, dtype=object)


def _binding_names(arrays: dict, used: list, worst: np.ndarray) -> np.ndarray:
    """Object array of the binding resource per point: the first resource (RESOURCES order,
    as argmax) whose cycles equal the maximum."""
    codes = np.zeros(worst.shape, dtype=np.int8)
    for r in reversed(used):
        codes[np.broadcast_to(arrays[r] == worst, worst.shape)] = RESOURCES.index(r)
    return _RESOURCE_NAMES[codes]
