"""The one input shape and the one result shape every registered model shares.

A model (one module per published model, behind :mod:`gpumodeler.core.models.registry`)
takes :class:`ModelInputs` — the GPU, the per-warp kernel values of Gajger §4.6
(:class:`~gpumodeler.core.models.gajger.KernelInputs`), the launch (grid, block, occupancy),
the switchable kernel terms and the model's own extra inputs — and returns a
:class:`ModelResult`: time, bound, binding resource, the model's intermediate quantities,
the kernel terms it applied (with their effect) and notes and warnings a user should see.

Where a model needs an input the launch, the graph and the device do not give, it raises
:class:`MissingModelInput` naming the parameter (``item``), which the CLI maps to the flag
that sets it; it never invents the value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

from gpumodeler.core.array_types import Real
from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter, UnphysicalResult
from gpumodeler.core.models.kernel_inputs import KernelInputs


class MissingModelInput(InvalidParameter):
    """A model needs a value nobody gave (``item`` names the parameter)."""


class ImplausiblePrediction(UnphysicalResult):
    """A prediction that is not a finite positive time (never printed as a result)."""


#: The per-model extra inputs a user can give, with their unit and meaning. Their keys are
#: the ``parameters`` of :class:`ModelInputs` and the ``item`` of :class:`MissingModelInput`.
PARAMETERS = {
    "critical_dram_accesses": "DRAM accesses on the latency bound's critical path (count; "
                              "dL/d(memory latency), from the graph)",
    "contention_a_cycles": "Volkov eq. (§6.4) a: the unloaded memory latency of the fit, cycles "
                           "(replaces the table's DRAM latency in the latency bound, §6.5)",
    "contention_b_cycles": "Volkov eq. (§6.4) b: initial slope of the memory-latency rise, cycles",
    "contention_c_bytes_per_s": "Volkov eq. (§6.4) c: the throughput where latency diverges, B/s",
    "dram_latency_cycles": "unloaded DRAM latency Mem_LD, cycles",
    "dram_latency_model": "a published DRAM-latency model instead of the table's constant "
                          "(mwp-cwp: 'sanchez-gil-7.1', the K40's one-address contention)",
    "departure_delay_cycles": "H&K departure delay between memory transactions, cycles (both kinds)",
    "departure_delay_coal_cycles": "H&K Departure_del_coal: between the transactions of a "
                                   "coalesced access, cycles (GTX 280: 4)",
    "departure_delay_uncoal_cycles": "H&K Departure_del_uncoal: between the transactions of an "
                                     "uncoalesced access, cycles (GTX 280: 40)",
    "uncoalesced_share": "share of the memory instructions that are uncoalesced, 0 to 1 "
                         "(H&K Weight_uncoal; default 0)",
    "issue_cycles": "H&K Issue_cycles: cycles to issue one warp instruction on an SM",
    "instructions": "warp instructions per warp (dual-issued pairs count twice)",
    "memory_instructions": "global/local memory warp instructions per warp",
    "shared_instructions": "shared-memory warp instructions per warp",
    "synch_instructions": "barrier instructions per warp",
    "bsp_comp_cycles": "Amarís comp: computation cycles per thread",
    "bsp_lambda": "Amarís λ (eq. 3.3), calibrated per kernel and board",
    "bsp_l1_hits": "Amarís L1: global accesses per thread served by L1",
    "bsp_l2_hits": "Amarís L2: global accesses per thread served by L2",
    "working_set_bytes": "bytes the kernel touches (for the L2 term)",
}


@dataclass(frozen=True)
class KernelTerms:
    """Switches of the kernel-time terms of :mod:`gpumodeler.core.models.kernel_terms`.

    Defaults follow what the documents support (see that module): the under-filled GPU is
    on, the last-wave tail is off (eq. 4.1 and its λ, which calibrates it away, are the
    documents' default), the launch overhead is on when the GPU's value is known, the L2
    term is on when a working set is given."""

    underfill: bool = True
    tail: bool = False
    launch_overhead: bool = True
    l2: bool = True


@dataclass(frozen=True)
class ModelInputs:
    """One launch of one kernel on one GPU, as every model sees it.

    ``occupancy`` is in warps per SM (the launch's, from the calculator or given);
    ``lam`` is Gajger's λ (eq. 4.1), applied by the gajger model only; ``counts`` are extra
    per-warp counts of the kernel graph (:mod:`gpumodeler.core.kernel.warp_counts` names);
    ``parameters`` the models' own inputs (:data:`PARAMETERS`)."""

    gpu: GPUSpec
    kernel: KernelInputs
    grid_size: Real
    block_size: Real
    occupancy: float
    lam: float = 1.0
    counts: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    terms: KernelTerms = field(default_factory=KernelTerms)

    def param(self, name: str, default=None):
        """A model parameter, validated as a finite number >= 0 when given."""
        value = self.parameters.get(name)
        if value is None:
            return default
        value = float(value)
        if not math.isfinite(value) or value < 0:
            raise InvalidParameter(f"{name} must be a finite number >= 0, got {value}", item=name)
        return value

    def count(self, name: str, default=None):
        """A per-warp count: an explicit parameter first, then the graph's counts."""
        if self.parameters.get(name) is not None:
            return self.param(name)
        value = self.counts.get(name)
        return default if value is None else float(value)


@dataclass(frozen=True)
class TermEffect:
    """One kernel-time term: whether it applied, the time it added (s) and why."""

    name: str
    applied: bool
    delta_s: float = 0.0
    fraction: float = 0.0  # delta relative to the time before the term
    note: str = ""

    def describe(self) -> str:
        if not self.applied:
            return f"{self.name}: off ({self.note})" if self.note else f"{self.name}: off"
        sign = "+" if self.fraction >= 0 else "−"
        return f"{self.name}: {sign}{abs(self.fraction) * 100:.3g} %" + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class ModelResult:
    """What every model returns (scalars; one launch)."""

    model: str
    time_s: float
    time_cycles: float
    bound: str  # e.g. 'latency', 'throughput', 'memory', 'compute', 'not enough warps'
    binding_resource: str
    quantities: dict
    terms: tuple = ()
    notes: tuple = ()
    warnings: tuple = ()
    equations: str = ""
    floor_s: float | None = None  # fastest time the GPU's peak rates allow for the work

    def summary(self) -> dict:
        """JSON-ready dict (the CLI's per-model entry)."""
        return {
            "model": self.model, "time_s": self.time_s, "time_cycles": self.time_cycles,
            "bound": self.bound, "binding_resource": self.binding_resource,
            "quantities": dict(self.quantities),
            "terms": [{"name": t.name, "applied": t.applied, "delta_s": t.delta_s,
                       "fraction": t.fraction, "note": t.note} for t in self.terms],
            "notes": list(self.notes), "warnings": list(self.warnings),
            "equations": self.equations, "peak_rate_floor_s": self.floor_s,
        }
