"""How the timeline predicts a step imported from a trace (docs/timeline.md, "Applications
from a trace"; the import itself is :mod:`.trace`): which kernel graph predicts a traced
kernel, and how a measured time is carried to another GPU."""
from __future__ import annotations

import re

from gpumodeler.core.errors import InvalidParameter


def short_kernel_name(name: str) -> str:
    """A kernel's name without return type, template arguments and argument list
    (``void gemm<float>(int, float*)`` -> ``gemm``); a mangled name (``_Z6saxpy2ifPKfPfi``)
    gives its identifier (``saxpy2``)."""
    text = str(name or "").strip()
    m = re.match(r"^_Z(?:N\d*)?(\d+)(\w+)", text)
    if m and int(m.group(1)) <= len(m.group(2)):
        return m.group(2)[:int(m.group(1))]
    text = re.sub(r"^(void|__global__)\s+", "", text)
    text = text.split("(")[0].split("<")[0].strip()
    return text.split("::")[-1].strip()


def graph_for_kernel(project, name: str) -> str | None:
    """The id of the project's kernel graph whose name is the kernel ``name`` (compared
    by :func:`short_kernel_name`, case-sensitive: C++ names are); the first in the
    project's order when several have it; None when none has."""
    wanted = short_kernel_name(name)
    if not wanted:
        return None
    for kid, graph in project.kernels.items():
        if short_kernel_name(graph.name) == wanted:
            return kid
    return None


#: What the scaling of a measured time reads of a GPU: two specs equal in these are the same
#: GPU for it (a project override of another value, say copy engines, changes nothing).
SCALING_FIELDS = ("sms", "sm_clock_hz", "gmem_bytes_per_cycle_per_sm", "memory_clock_hz",
                  "memory_bus_width_bits", "memory_data_rate", "memory_bandwidth_bytes_per_s")


def _same(traced, target) -> bool:
    return traced is target or all(getattr(traced, f) == getattr(target, f)
                                   for f in SCALING_FIELDS)


def _memory_bandwidth(spec) -> float:
    """Bytes per second of global memory: Gajger eq. 4.7's numerator, as
    ``GMem_bandwidth × SMs × SM_clock``."""
    return spec.gmem_bandwidth_bytes_per_cycle_per_sm() * spec.require("sms") \
        * spec.require("sm_clock_hz")


def scaled_kernel_time(measured_s: float, traced, target) -> tuple[float, dict]:
    """A kernel's measured time on GPU ``traced`` carried to GPU ``target`` (GPUSpecs):
    (time, detail), by :func:`kernel_scaling`."""
    return _scaled(measured_s, kernel_scaling(traced, target))


def _scaled(measured_s: float, scaling: tuple) -> tuple[float, dict]:
    factor, detail = scaling
    return (measured_s if factor is None else measured_s * factor), detail


def kernel_scaling(traced, target) -> tuple[float | None, dict]:
    """What carries a kernel's measured time from GPU ``traced`` to GPU ``target``
    (GPUSpecs): (factor, detail); the time is the measured one times the factor, or the
    measured one exactly when the factor is None (the same GPU). A timeline of 10^5 traced
    kernels asks once per pair of GPUs.

    A trace gives a kernel's duration and launch but no per-warp counts, so the profile
    path's derivation (Gajger §4.6: counts from profiler metrics, the latency bound from
    eq. 4.1 and 4.3 inverted) has nothing to start from. The choice made here: the kernel
    stays bound by the same resource, and since the trace does not say which, the time is
    scaled by the less favourable of the two throughput ratios the model's bounds rest on:
    SM issue rate (SMs × SM clock, eq. 4.3's denominator) and memory bandwidth (eq. 4.7),
    ``t' = t × max(SMs·f / SMs'·f', B / B')``. On the traced GPU (equal in
    :data:`SCALING_FIELDS`, known or not) the measured time is kept exactly."""
    if _same(traced, target):
        return None, {"scale": 1.0, "rule": "traced GPU"}
    try:
        compute = (traced.require("sms") * traced.require("sm_clock_hz")) / \
            (target.require("sms") * target.require("sm_clock_hz"))
        memory = _memory_bandwidth(traced) / _memory_bandwidth(target)
    except InvalidParameter as exc:
        raise InvalidParameter(f"cannot carry the measured time from {traced.name} to "
                               f"{target.name}: {exc}") from None
    scale = max(compute, memory)
    return scale, {
        "scale": scale, "compute_ratio": compute, "memory_ratio": memory,
        "rule": "measured time × max(SM-rate ratio, memory-bandwidth ratio)"}


def scaled_copy_time(measured_s: float, traced, target) -> tuple[float, dict]:
    """A copy within one GPU's memory: its measured time scaled by :func:`copy_scaling`."""
    return _scaled(measured_s, copy_scaling(traced, target))


def copy_scaling(traced, target) -> tuple[float | None, dict]:
    """(factor, detail) for a copy within one GPU's memory (as :func:`kernel_scaling`): the
    memory bandwidths' ratio (it reads and writes global memory: eq. 4.7's bandwidth bounds
    it)."""
    if _same(traced, target):
        return None, {"scale": 1.0, "rule": "traced GPU"}
    try:
        scale = _memory_bandwidth(traced) / _memory_bandwidth(target)
    except InvalidParameter as exc:
        raise InvalidParameter(f"cannot carry the measured time from {traced.name} to "
                               f"{target.name}: {exc}") from None
    return scale, {"scale": scale, "rule": "measured time × memory-bandwidth ratio"}


__all__ = ["SCALING_FIELDS", "copy_scaling", "graph_for_kernel", "kernel_scaling", "scaled_copy_time",
           "scaled_kernel_time", "short_kernel_name"]
