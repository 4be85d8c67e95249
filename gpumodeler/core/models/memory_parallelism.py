"""Memory parallelism: Little's law on the DRAM side of a launch (Volkov 2016 ch. 3 and 6).

Volkov 2016 §3.1 states Little's law for any set of items, ``mean concurrency = mean
latency × throughput``, and §3.2 applies it to instructions, ``instruction throughput =
instructions in execution / instruction latency``; for memory accesses the items are bytes:

    memory throughput (B/cycle/SM) = bytes in flight per SM / memory latency      (§3.2)

Volkov §3.5 turns it into the model's latency bound, ``warp throughput ≤ occupancy /
latency bound``, which is Gajger's eq. 4.3 (``min(occupancy / latency bound, throughput
bound)``). A warp's latency bound is the critical path of its kernel graph, and a global
load on that path already carries the table's DRAM latency (Volkov Table 6.2, ``stream``).
So the Little's-law limit of a memory-bound launch at low occupancy *is* eq. 4.3's latency
side: while a warp runs its ``L`` cycles it has its ``B`` global-memory bytes in flight,
the SM keeps ``occupancy × B`` bytes in flight, and they arrive at

    occupancy × B / L   bytes per cycle per SM,

below the bandwidth ``β`` (sustained, :func:`throughput.dram_bandwidth_choice`) until the
occupancy reaches ``L × β / B`` — Volkov's "linear" occupancy of Table 6.4 (§6.3: latency ×
peak throughput). The default model therefore adds no second memory-latency term (that
would count the DRAM latency twice); this module only names the figures eq. 4.3 implies
so that a prediction can show them: the bytes in flight, the bandwidth they sustain, the
occupancy the bandwidth needs and the factor by which the launch is slower than the
bandwidth alone (``max(1, β / (occupancy × B / L))``). What it leaves out is Volkov §6.4:
the mean latency rises as the throughput nears the peak (the "gradual saturation" that
keeps measured throughputs at the "linear" occupancy at 75–84 % of the peak, Table 6.4);
that is the ``volkov-contention`` model (docs/models.md).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from gpumodeler.core.errors import InvalidParameter


@dataclass(frozen=True)
class MemoryParallelism:
    """Little's law on global memory for one launch, per SM, in SM cycles."""

    bytes_in_flight_per_sm: float  # occupancy × global-memory bytes per warp
    littles_law_bytes_per_cycle: float  # bytes in flight / warp latency bound (§3.2)
    bandwidth_bytes_per_cycle: float  # the bandwidth β the memory row uses
    attained_bytes_per_cycle: float  # min(Little's law, β): eq. 4.3 on the memory side
    needed_occupancy: float  # L × β / B, Volkov's "linear" occupancy (Table 6.4)
    slowdown: float  # β / attained >= 1: time over the bandwidth-only time

    @property
    def latency_bound(self) -> bool:
        """True when the bytes in flight, not the bandwidth, limit the memory throughput."""
        return self.littles_law_bytes_per_cycle < self.bandwidth_bytes_per_cycle

    def as_dict(self, sms: float, clock_hz: float) -> dict:
        """The figures in bytes per second over the GPU (``sms`` × ``clock_hz``) for output."""
        per_s = sms * clock_hz
        return {
            "bytes_in_flight_per_sm": self.bytes_in_flight_per_sm,
            "littles_law_bytes_per_s": self.littles_law_bytes_per_cycle * per_s,
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_cycle * per_s,
            "attained_bytes_per_s": self.attained_bytes_per_cycle * per_s,
            "needed_occupancy_warps_per_sm": self.needed_occupancy,
            "slowdown_vs_bandwidth": self.slowdown,
            "limited_by": "bytes in flight" if self.latency_bound else "bandwidth",
        }


def _positive(name: str, value) -> float:
    v = float(value)
    if not (0 < v < math.inf):
        raise InvalidParameter(f"{name} must be a finite number > 0, got {value}")
    return v


def memory_parallelism(*, occupancy, bytes_per_warp, latency_bound_cycles,
                       bandwidth_bytes_per_cycle_per_sm) -> MemoryParallelism:
    """Little's law for the global memory of one launch (Volkov 2016 §3.1–3.2, §3.5, §6.3).

    ``occupancy`` warps per SM each keep their ``bytes_per_warp`` in flight for the warp's
    ``latency_bound_cycles`` (the kernel graph's critical path, whose loads carry the DRAM
    latency): ``bytes in flight / latency = occupancy × B / L`` bytes per cycle per SM
    (§3.2), capped by the bandwidth β (§3.5: min of the two bounds, Gajger eq. 4.3). The
    occupancy β needs is ``L × β / B`` (§6.3, Table 6.4 "linear"); the slowdown over the
    bandwidth-only time is ``β / min(occupancy × B / L, β)``."""
    n = _positive("occupancy (warps per SM)", occupancy)
    b = _positive("global-memory bytes per warp", bytes_per_warp)
    latency = _positive("latency bound (cycles)", latency_bound_cycles)
    beta = _positive("global-memory bandwidth (bytes per cycle per SM)",
                     bandwidth_bytes_per_cycle_per_sm)
    little = n * b / latency
    attained = min(little, beta)
    return MemoryParallelism(bytes_in_flight_per_sm=n * b, littles_law_bytes_per_cycle=little,
                             bandwidth_bytes_per_cycle=beta, attained_bytes_per_cycle=attained,
                             needed_occupancy=latency * beta / b, slowdown=beta / attained)


__all__ = ["MemoryParallelism", "memory_parallelism"]
