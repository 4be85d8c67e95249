"""The device value fields, their units and the provenance rules (docs/device-sources.md).

One table for the source-file validator, the catalog's editing API and the CLI, so a field
or unit is spelled the same everywhere. Order is the display order.
"""
from __future__ import annotations

from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES, MEMORY_LEVELS

FORMAT = "gpumodeler-devices"
KINDS = ("gpu", "link", "host", "latency_table")
UNITS = ("count", "Hz", "B", "B/s", "B/cycle", "1/cycle", "bit", "W", "s", "ratio", "text", "year",
         "cycle")
#: Where a value from a source file comes from. The first four are implied by the source key
#: prefix (docs/device-sources.md); the next four grade published latency figures
#: (resources/devices/latency-published.json, sources in docs/sources.md): a paper's own
#: raw data or code repository (``published-measurement``), a simulator's calibration file
#: for a named GPU (``simulator-calibration``: a model parameter, not a measured latency), a
#: text quoting a named primary source the build could not read (``secondary``), and a
#: measurement nobody can be held to (``unattributed``: a sanity check, never a default).
SOURCE_PROVENANCES = ("document", "vendor", "measurement", "calibration",
                      "published-measurement", "simulator-calibration", "secondary",
                      "unattributed")
PROVENANCES = SOURCE_PROVENANCES + ("user",)
# What a user may record through the editing API; document/vendor values come from sources.
USER_PROVENANCES = ("user", "measurement", "calibration")

FIELDS: dict[str, dict[str, str]] = {
    "gpu": {
        "vendor": "text",
        "architecture": "text",
        "compute_capability": "text",
        "sms": "count",
        "sm_clock_hz": "Hz",
        "base_clock_hz": "Hz",
        "boost_clock_hz": "Hz",
        "fp32_cores_per_sm": "count",
        "int32_units_per_sm": "count",
        "int32_fp32_shared_lanes_per_sm": "count",
        "fp16_results_per_cycle_per_sm": "1/cycle",
        "fp64_units_per_sm": "count",
        "sfu_per_sm": "count",
        "ldst_units_per_sm": "count",
        "tensor_cores_per_sm": "count",
        "tensor_fp16_macs_per_cycle_per_sm": "1/cycle",
        "tensor_fp16_fp32acc_macs_per_cycle_per_sm": "1/cycle",
        "tensor_bf16_macs_per_cycle_per_sm": "1/cycle",
        "tensor_tf32_macs_per_cycle_per_sm": "1/cycle",
        "tensor_fp8_macs_per_cycle_per_sm": "1/cycle",
        "tensor_fp8_fp32acc_macs_per_cycle_per_sm": "1/cycle",
        "tensor_int8_macs_per_cycle_per_sm": "1/cycle",
        "tensor_int4_macs_per_cycle_per_sm": "1/cycle",
        "tensor_int1_macs_per_cycle_per_sm": "1/cycle",
        "tensor_fp64_macs_per_cycle_per_sm": "1/cycle",
        "tensor_clock_hz": "Hz",
        "schedulers_per_sm": "count",
        "dispatch_per_scheduler": "count",
        "issue_per_scheduler_per_cycle": "1/cycle",
        "warp_size": "count",
        "registers_per_sm": "count",
        "max_registers_per_block": "count",
        "max_registers_per_thread": "count",
        "shared_mem_per_sm_bytes": "B",
        "max_shared_mem_per_block_bytes": "B",
        "l1_bytes_per_sm": "B",
        "l1_bytes_per_cycle_per_sm": "B/cycle",
        "l2_bytes": "B",
        "memory_type": "text",
        "memory_size_bytes": "B",
        "memory_clock_hz": "Hz",
        "memory_bus_width_bits": "bit",
        "memory_data_rate": "count",
        "memory_bandwidth_theoretical_bytes_per_s": "B/s",
        "memory_bandwidth_measured_bytes_per_s": "B/s",
        "gmem_bytes_per_cycle_per_sm": "B/cycle",
        "l2_bandwidth_bytes_per_s": "B/s",
        "launch_overhead_s": "s",
        "contention_a_cycles": "cycle",
        "contention_b_cycles": "cycle",
        "contention_c_bytes_per_s": "B/s",
        "smem_accesses_per_cycle_per_sm": "1/cycle",
        "board_power_w": "W",
        "idle_power_w": "W",
        "copy_engines": "count",
        "latency_table": "text",
        "release_year": "year",
    },
    "link": {
        "link_type": "text",
        "generation": "text",
        "lanes": "count",
        "bandwidth_bytes_per_s": "B/s",
        "startup_htod_s": "s",
        "startup_dtoh_s": "s",
        "lambda_htod": "ratio",
        "lambda_dtoh": "ratio",
    },
    "host": {
        "cpu": "text",
        "cores": "count",
        "threads": "count",
        "cpu_clock_hz": "Hz",
        "memory_size_bytes": "B",
        "memory_type": "text",
        "pcie_generation": "text",
        # the NVLink a CPU has to its GPUs (NVLink-C2C of Grace, NVLink 2.0 of POWER9);
        # absent: the host reaches GPUs over PCIe only
        "nvlink": "text",
    },
    # A per-architecture latency table (its name is the table key, e.g. "maxwell-gajger");
    # the field names mirror core.latency_tables.LatencyTable (see db.mapping).
    "latency_table": {
        "architecture": "text",
        **{f"lat_{c}": "cycle" for c in INSTRUCTION_CLASSES},
        **{f"mem_{level}": "cycle" for level in MEMORY_LEVELS},
        "ilp_cycles": "cycle",
        "branch_taken_cycles": "cycle",
        "branch_not_taken_cycles": "cycle",
        "barrier_cycles": "cycle",
        "block_replacement_cycles": "cycle",
        "cuda_core_default_cycles": "cycle",
    },
}

# Fields `devices list` shows and `search` matches, besides name, aliases and family.
SUMMARY_FIELDS = ("vendor", "architecture", "compute_capability")


def provenance_for_source(key: str | None) -> str | None:
    """The provenance a source key implies by its prefix (docs/device-sources.md)."""
    if key is None:
        return None
    if key.startswith(("vendor-", "nvidia-")):
        return "vendor"
    if key.startswith("measured-"):
        return "measurement"
    if key.startswith("calibrated-"):
        return "calibration"
    return "document"


def field_order(kind: str, field: str) -> tuple[int, str]:
    """Sort key: documented fields in documented order, then any others alphabetically."""
    order = FIELDS.get(kind, {})
    names = list(order)
    return (names.index(field), "") if field in order else (len(names), field)


def check_value_type(unit: str, value) -> str | None:
    """Why ``value`` cannot carry ``unit``, or None when it can (None = unknown always can)."""
    if value is None:
        return None
    if unit == "text":
        return None if isinstance(value, str) else f"a text field needs a string, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"a field in {unit} needs a number, got {value!r}"
    if value != value or value in (float("inf"), float("-inf")):
        return f"a field in {unit} needs a finite number, got {value!r}"
    return None


def record_problem(unit, value, provenance) -> str | None:
    """Why a value record cannot be stored, whatever its field: a unit we do not know, a
    value its unit cannot carry (check_value_type), an unknown provenance; None when it
    can. The rule of the device editors (catalog.Catalog._check_record, which also checks
    the unit is its field's) and of every record a shared file brings (store.refused_devices)."""
    if unit not in UNITS:
        return f"unit must be one of {', '.join(UNITS)}, got {unit!r}"
    why = check_value_type(unit, value)
    if why:
        return why
    if provenance is not None and provenance not in PROVENANCES:
        return f"unknown provenance {provenance!r}; valid: {', '.join(PROVENANCES)}"
    return None
