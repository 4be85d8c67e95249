"""The per-warp inputs every model reads (Gajger §4.6: the application model's warp
parameters), in a module of their own so that the model registry's types can name them."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

from gpumodeler.core.array_types import Real


@dataclass(frozen=True)
class KernelInputs:
    """Per-warp kernel parameters (Gajger §4.6: the application model's warp parameters)."""

    latency_bound: Real
    issued_instructions: Real
    cuda_core_instructions: Real = 0.0
    gmem_bytes: Real = 0.0
    sfu_instructions: Real = 0.0
    fp64_instructions: Real = 0.0
    smem_bank_cycles: Real = 0.0
    # Per-pipe instructions per warp ({pipe: count}, throughput.PIPE_COUNTS) for GPUs that
    # issue FP32/INT32/FP16/tensor separately (Volta+); None = only the CUDA-core total.
    pipe_instructions: dict | None = None
    # Dual-issued pairs already taken off issued_instructions (paid back without dual issue).
    dual_issues: Real = 0.0
    # Tensor-core multiply-adds per warp per data-type class ({class: MACs},
    # core.kernel.mma.TENSOR_CLASSES); None = no tensor work known.
    tensor_macs: dict | None = None
    # Global-memory bytes per warp served by the L2 (cache hits; the worksheet's l2 row).
    l2_bytes: Real = 0.0
    # Global-memory bytes per warp served by the SM's L1 (reuse within a block on a GPU whose
    # L1 caches the loads; the worksheet's l1 row).
    l1_bytes: Real = 0.0
    # The L1 data stage's cycles per warp for the global/local requests, one per 128-byte
    # line a request touches (the worksheet's l1 row on Volta and later).
    l1_wavefronts: Real = 0.0
    # Global, local and shared-memory warp instructions, which the SM's load/store units
    # execute (the worksheet's lsu row on Volta and later).
    lsu_instructions: Real = 0.0

    def worksheet(self) -> dict:
        """These inputs as the throughput worksheet's keyword arguments (every field but the
        latency bound: core.models.throughput.throughput_bound)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "latency_bound"}

    def overridden(self, **values) -> "KernelInputs":
        """A copy with some inputs replaced (a launch's kernel overrides). An overridden
        CUDA-core count replaces the per-pipe mix it was split from, and an overridden
        issue count is taken as the issue count (no dual issues to pay back)."""
        extra: dict[str, Real] = {}
        if "cuda_core_instructions" in values:
            extra["pipe_instructions"] = None
        if "issued_instructions" in values:
            extra["dual_issues"] = 0.0
        return replace(self, **extra, **values)
