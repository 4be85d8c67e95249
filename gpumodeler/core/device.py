"""Hardware value objects the model consumes: a GPU and a host<->device link.

These carry exactly the parameters of Gajger's hardware model (MSc thesis 2017, §4.6 and
Fig. 5.20: SMs, SM clock, CUDA cores and schedulers per SM, global-memory throughput per SM,
warp size; for the link: bandwidth and per-direction startup time and λ), extended with the
per-resource units of Volkov's throughput worksheet (PhD 2016, §3.6: SFUs, FP64 units,
shared-memory bank throughput, issue rate). Units are in the names; every count is per SM.

A value nobody knows is ``None``: functions that need it raise
:class:`~gpumodeler.core.errors.InvalidParameter` naming the field, never substitute a
default from another device.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
import math

import numpy as np

from gpumodeler.core.errors import InvalidParameter


def tensor_rate_field(tensor_class: str) -> str:
    """The GPUSpec field of a tensor-core data-type class's dense rate per SM."""
    return f"tensor_{tensor_class}_macs_per_cycle_per_sm"


@dataclass(frozen=True)
class GPUSpec:
    """One GPU model (a SKU), as the kernel-time model sees it.

    ``gmem_bytes_per_cycle_per_sm`` is Gajger's GMem_bandwidth (eq. 4.7). When it is not
    given it is derived from the memory clock, bus width and data rate by
    :meth:`gmem_bandwidth_bytes_per_cycle_per_sm`.
    """

    name: str
    compute_capability: str | None = None
    sms: int | None = None
    sm_clock_hz: float | None = None
    cuda_cores_per_sm: int | None = None
    schedulers_per_sm: int | None = None
    warp_size: int = 32
    gmem_bytes_per_cycle_per_sm: float | None = None
    memory_clock_hz: float | None = None
    memory_bus_width_bits: int | None = None
    memory_data_rate: float | None = None
    # theoretical bandwidth = GMem_clock × bus width/8 × data rate, the numerator of eq. 4.7,
    # for devices whose vendor gives the bandwidth but not the clock/data-rate split
    memory_bandwidth_bytes_per_s: float | None = None
    sfu_per_sm: int | None = None
    fp64_units_per_sm: int | None = None
    # Volta and later issue FP32, INT32 and FP16 to separate pipes (docs/pipes.md): INT32
    # lanes per SM, how many of them are FP32 lanes too (GA10x/Ada: all 64 of them), FP16
    # results per clock per SM (a packed HFMA2 gives two), tensor cores per SM.
    int32_units_per_sm: int | None = None
    int32_fp32_shared_lanes_per_sm: int | None = None
    fp16_results_per_cycle_per_sm: float | None = None
    tensor_cores_per_sm: int | None = None
    # Dense tensor-core multiply-adds per clock per SM of each data-type class of
    # core.kernel.mma.TENSOR_CLASSES (the tensor row of the throughput worksheet,
    # docs/pipes.md), from the architecture whitepapers; unknown stays None.
    tensor_fp16_macs_per_cycle_per_sm: float | None = None
    tensor_fp16_fp32acc_macs_per_cycle_per_sm: float | None = None
    tensor_bf16_macs_per_cycle_per_sm: float | None = None
    tensor_tf32_macs_per_cycle_per_sm: float | None = None
    tensor_fp8_macs_per_cycle_per_sm: float | None = None
    tensor_fp8_fp32acc_macs_per_cycle_per_sm: float | None = None
    tensor_int8_macs_per_cycle_per_sm: float | None = None
    tensor_int4_macs_per_cycle_per_sm: float | None = None
    tensor_int1_macs_per_cycle_per_sm: float | None = None
    tensor_fp64_macs_per_cycle_per_sm: float | None = None
    # The clock the dense tensor rates above run at, where NVIDIA's tensor peaks imply one
    # below the SM clock (H100 SXM5: 989.4 TFLOPS / (2 × 132 SMs × 2048) = 1830 MHz against a
    # 1980 MHz SM clock, whitepaper Table 3). FP64 tensor work (DMMA) is not scaled: its peak
    # implies the SM clock. None: the SM clock.
    tensor_clock_hz: float | None = None
    # Instructions a scheduler can dispatch per issue (2 = dual issue: Kepler–Pascal;
    # 1 on Volta and later). Unknown: the graph's dual edges are trusted.
    dispatch_per_scheduler: int | None = None
    # Volkov Table 2.8: instructions a scheduler issues per cycle (0.5 = one every 2 cycles).
    issue_per_scheduler_per_cycle: float = 1.0
    # Warp-wide conflict-free shared-memory accesses the SM completes per cycle
    # (Volkov Table 6.1 "smem" column in IPC/SM: Fermi 0.5, Kepler/Maxwell 1).
    smem_accesses_per_cycle_per_sm: float | None = None
    latency_table: str | None = None
    # Application timeline and energy (docs/timeline.md): CUDA's asyncEngineCount (1: copies
    # overlap kernels; 2: also each other, one engine per direction), board power (TDP,
    # drawn while busy) and idle power.
    copy_engines: int | None = None
    board_power_w: float | None = None
    idle_power_w: float | None = None
    # Values the models of core.models.registry read besides Gajger's (docs/models.md): the
    # sustained (measured) DRAM bandwidth Volkov §6.3 prefers to the pin value, the L2 size
    # and bandwidth of the L2 term, and a fixed per-kernel launch overhead (calibratable).
    memory_bandwidth_measured_bytes_per_s: float | None = None
    l2_bytes: float | None = None
    l2_bandwidth_bytes_per_s: float | None = None
    # The SM's combined L1 data cache and shared memory from Volta on (the shared-memory
    # carve-out comes out of it; before Volta the L1/texture cache alone), and the bytes per
    # clock its L1 serves: the L1 reuse of core.kernel.sass.reuse and the worksheet's l1 row.
    l1_bytes_per_sm: float | None = None
    l1_bytes_per_cycle_per_sm: float | None = None
    # Load/store units per SM, each taking one thread's global, local or shared access a
    # cycle (the worksheet's lsu row, Volta and later; core.models.throughput).
    ldst_units_per_sm: int | None = None
    launch_overhead_s: float | None = None
    # Volkov §6.4's memory-contention fit, latency = a + b·λ/(c − λ), calibrated from the
    # user's measurements (calibrate contention); Table 6.5's five GPUs need none.
    contention_a_cycles: float | None = None
    contention_b_cycles: float | None = None
    contention_c_bytes_per_s: float | None = None

    def require(self, name: str):
        """Return field ``name``, raising a clear error when it is unknown or not positive."""
        value = getattr(self, name)
        if value is None:
            raise InvalidParameter(
                f"GPU '{self.name}': {name} is unknown; give it explicitly "
                f"(it is never filled in from another device)", item=name)
        if isinstance(value, str):
            return value
        if type(value) is float or type(value) is int:
            # the usual case, a plain number, checked without building an array (a fit calls
            # this tens of thousands of times); float() of an int too large for a float
            # raises OverflowError as the array would
            number = float(value)
            zero, bad = number == 0, not 0 < number < math.inf
        else:
            arr = np.asarray(value, dtype=float)
            zero = arr.ndim == 0 and arr == 0
            bad = bool(np.any(~np.isfinite(arr)) or np.any(arr <= 0))
        if zero:
            # A known zero (8800 GTX: no FP64 units) is not an unknown: say so.
            raise InvalidParameter(
                f"GPU '{self.name}': {name} is 0 (this GPU has none), so a kernel that "
                f"needs it cannot run on it; give another value only to model other hardware",
                item=name)
        if bad:
            raise InvalidParameter(f"GPU '{self.name}': {name} must be > 0, got {value}", item=name)
        return value

    def tensor_macs_per_cycle_per_sm(self, tensor_class: str):
        """Dense tensor-core multiply-adds per clock per SM for a data-type class
        (``'fp16_fp32acc'``), raising a clear error naming the field when unknown."""
        return self.require(tensor_rate_field(tensor_class))

    def compute_capability_major(self) -> int | None:
        """The major compute capability (7 for "7.5"), or None when unknown or malformed."""
        try:
            return int(str(self.compute_capability).split(".")[0])
        except (TypeError, ValueError):
            return None

    def issues_separate_pipes(self) -> bool:
        """Volta and later (compute capability >= 7) issue FP32, INT32, FP16 and tensor
        instructions to separate pipes (docs/pipes.md); earlier GPUs run every CUDA-core
        instruction on one pool of CUDA cores (Gajger eq. 4.5)."""
        major = self.compute_capability_major()
        return major is not None and major >= 7

    def dual_issue(self) -> bool:
        """Whether a scheduler can issue a second, independent instruction of the same warp
        in one cycle: when it has two dispatch units; when that is unknown, not on Volta and
        later (one dispatch unit per scheduler, docs/pipes.md), else the graph's dual edges
        are trusted."""
        if self.dispatch_per_scheduler is not None:
            return self.dispatch_per_scheduler >= 2
        return not self.issues_separate_pipes()

    def gmem_bandwidth_bytes_per_cycle_per_sm(self) -> float:
        """Global-memory bytes per SM clock per SM, Gajger eq. 4.7.

        GMem_bandwidth = GMem_clock × (bus width / 8) × data rate / (SMs × SM_clock).
        Taken, in this order, from the explicit ``gmem_bytes_per_cycle_per_sm`` (Table 6.1
        lists it), from the memory clock, bus width and data rate, or from the theoretical
        bandwidth ``memory_bandwidth_bytes_per_s`` (the same numerator, as vendors state it).
        """
        if self.gmem_bytes_per_cycle_per_sm is not None:
            return self.require("gmem_bytes_per_cycle_per_sm")
        parts = ("memory_clock_hz", "memory_bus_width_bits", "memory_data_rate")
        if all(getattr(self, n) is not None for n in parts):
            numerator = (self.require("memory_clock_hz") * self.require("memory_bus_width_bits") / 8
                         * self.require("memory_data_rate"))
        elif self.memory_bandwidth_bytes_per_s is not None:
            numerator = self.require("memory_bandwidth_bytes_per_s")
        else:
            missing = [n for n in parts if getattr(self, n) is None]
            raise InvalidParameter(
                f"GPU '{self.name}': global-memory throughput is unknown; give "
                f"gmem_bytes_per_cycle_per_sm, memory_bandwidth_bytes_per_s, or all of "
                f"memory_clock_hz, memory_bus_width_bits, memory_data_rate (missing: "
                f"{', '.join(missing)})", item="gmem_bytes_per_cycle_per_sm")
        return numerator / (self.require("sms") * self.require("sm_clock_hz"))

    def with_overrides(self, **values) -> "GPUSpec":
        """A copy with some fields replaced (explicit CLI flags, project overrides)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InvalidParameter(
                f"unknown GPU parameter(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
        return replace(self, **{k: v for k, v in values.items() if v is not None})


@dataclass(frozen=True)
class LinkSpec:
    """A host<->device link with Gajger's per-direction transfer parameters (eq. 5.5).

    ``bandwidth_bytes_per_s`` is the nominal per-direction bandwidth (Table 4.3); the
    effective one in a direction is bandwidth × λ of that direction.
    """

    name: str
    bandwidth_bytes_per_s: float | None = None
    startup_htod_s: float | None = None
    startup_dtoh_s: float | None = None
    lambda_htod: float = 1.0
    lambda_dtoh: float = 1.0
    kind: str = "pcie"
    #: Calibrated transfer models, ((direction, model), ...), each replacing eq. 5.5 in its
    #: direction; a model has ``time_s(n_bytes)`` (core/transfers/models.py).
    transfer_models: tuple = ()

    def transfer_model(self, direction: str):
        """The calibrated model of ``direction``, or None (eq. 5.5 applies)."""
        for d, model in self.transfer_models:
            if d == direction:
                return model
        return None

    def direction(self, direction: str) -> tuple[float, float, float]:
        """(startup_s, bandwidth_bytes_per_s, λ) for 'htod' or 'dtoh'."""
        if direction not in ("htod", "dtoh"):
            raise InvalidParameter(f"transfer direction must be 'htod' or 'dtoh', got {direction!r}")
        bw = self.bandwidth_bytes_per_s
        if bw is None or not bw > 0 or not math.isfinite(bw):
            raise InvalidParameter(f"link '{self.name}': bandwidth_bytes_per_s must be a positive number, got {bw}")
        startup = self.startup_htod_s if direction == "htod" else self.startup_dtoh_s
        lam = self.lambda_htod if direction == "htod" else self.lambda_dtoh
        if startup is None:
            raise InvalidParameter(f"link '{self.name}': startup time for {direction} is unknown; give it explicitly")
        if startup < 0:
            raise InvalidParameter(f"link '{self.name}': startup time must be >= 0 s, got {startup}")
        if not lam > 0:
            raise InvalidParameter(f"link '{self.name}': λ for {direction} must be > 0, got {lam}")
        return startup, bw, lam
