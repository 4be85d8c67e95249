"""Device parameters as the GUI presents and overrides them (no Qt here, easy to test).

A project override is stored under the name core uses (``PlacedDevice.overrides`` is applied
with ``GPUSpec.with_overrides``, ``Connection.overrides`` with ``replace(LinkSpec, ...)``),
so only the catalog fields the model reads may be overridden for GPUs and links; a host's
values are documentation and may all be overridden. Values are checked here before a
SetOverride is pushed: numbers must parse in the field's unit and be positive where the
model needs them to be.
"""
from __future__ import annotations

import re
from dataclasses import fields as dc_fields

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.db.fields import FIELDS, field_order
from gpumodeler.db.mapping import GPU_FIELD_RENAMES
from gpumodeler.ui.units import QuantityError, format_quantity, parse_quantity

# Catalog field -> override key where core's name differs.
_GPU_RENAMES = GPU_FIELD_RENAMES
_LINK_READ_ONLY = {"link_type": "the link type is fixed by the catalog entry; draw another link"}
# Values that may be zero (a delay); everything else numeric must be > 0.
_MAY_BE_ZERO = {"startup_htod_s", "startup_dtoh_s"}
_GPU_SPEC_FIELDS = {f.name for f in dc_fields(GPUSpec)} - {"name"}
_LINK_SPEC_FIELDS = {f.name for f in dc_fields(LinkSpec)} - {"name", "kind"}

_WORDS = {"sms": "SMs", "sm": "SM", "l1": "L1", "l2": "L2", "fp32": "FP32", "fp64": "FP64",
          "int32": "INT32", "sfu": "SFUs", "nvlink": "NVLink", "ldst": "LD/ST", "cpu": "CPU", "pcie": "PCIe",
          "htod": "host→device", "dtoh": "device→host", "smem": "shared-memory",
          "gmem": "global-memory", "w": "", "hz": "", "s": "", "bytes": "", "bits": ""}


_LABELS = {
    "memory_bandwidth_theoretical_bytes_per_s": "Memory bandwidth (theoretical)",
    "memory_bandwidth_measured_bytes_per_s": "Memory bandwidth (measured)",
    "bandwidth_bytes_per_s": "Bandwidth per direction",
    "gmem_bytes_per_cycle_per_sm": "Global-memory bytes per cycle per SM",
    "shared_mem_per_sm_bytes": "Shared memory per SM",
    "max_shared_mem_per_block_bytes": "Max shared memory per block",
    "lambda_htod": "λ host→device", "lambda_dtoh": "λ device→host",
    "issue_per_scheduler_per_cycle": "Issue rate per scheduler",
    "l2_bytes": "L2 cache", "l1_bytes_per_sm": "L1 cache per SM",
}


class OverrideError(ValueError):
    """A value the user typed that cannot override the field; the message says why."""


def override_key(kind: str, field: str) -> str:
    """The key of ``field`` in a placed device's or connection's ``overrides``."""
    return _GPU_RENAMES.get(field, field) if kind == "gpu" else field


def read_only_reason(kind: str, field: str) -> str | None:
    """Why ``field`` of a ``kind`` cannot be overridden here, or None when it can."""
    if kind == "gpu" and override_key(kind, field) not in _GPU_SPEC_FIELDS:
        return "not used by the model; edit it in the device database (Devices › Add or Edit…)"
    if kind == "link":
        if field in _LINK_READ_ONLY:
            return _LINK_READ_ONLY[field]
        if field not in _LINK_SPEC_FIELDS:
            return "not used by the model; edit it in the device database (Devices › Add or Edit…)"
    return None


def unit_of(kind: str, field: str) -> str:
    return FIELDS.get(kind, {}).get(field, "text")


def field_names(kind: str, record=None) -> list[str]:
    """The documented fields of ``kind`` in display order, then any others the record has."""
    names = list(FIELDS.get(kind, {}))
    if record is not None:
        names += sorted((f for f in record.values if f not in names),
                        key=lambda f: field_order(kind, f))
    return names


def field_label(field: str) -> str:
    """Readable name: "sm_clock_hz" -> "SM clock", "fp32_cores_per_sm" -> "FP32 cores per SM"."""
    if field in _LABELS:
        return _LABELS[field]
    text = " ".join(w for w in (_WORDS.get(w, w) for w in field.split("_")) if w)
    return text[:1].upper() + text[1:] if text else field


# upper bounds of overrides no device comes near (a typo like 1e30 SMs is refused);
# the largest GPUs of 2024 have 144-170 SMs
_MAXIMA = {"sms": 1024}


def parse_override(kind: str, field: str, text: str, latency_tables=None):
    """The value ``text`` gives ``field``; raises :class:`OverrideError` with the reason.
    ``latency_tables``: the keys a latency_table may name (default: the built-in ones;
    the inspector passes the document's, which include the device database's)."""
    reason = read_only_reason(kind, field)
    if reason:
        raise OverrideError(f"{field_label(field)} cannot be overridden: {reason}")
    unit = unit_of(kind, field)
    try:
        value = parse_quantity(text, unit)
    except QuantityError as exc:
        raise OverrideError(f"{field_label(field)} {exc}") from None
    if unit == "text":
        if field == "compute_capability" and not re.fullmatch(r"\d+\.\d+", value):
            raise OverrideError(f"compute capability looks like 5.2, got {value!r}")
        if field == "latency_table":
            if latency_tables is None:
                from gpumodeler.core.kernel.latency_tables import TABLES as latency_tables
            if value not in latency_tables:
                raise OverrideError(f"unknown latency table {value!r}; valid: "
                                    f"{', '.join(latency_tables)}")
        return value
    most = _MAXIMA.get(field, 2**31 - 1 if unit == "count" else None)
    if most is not None and value > most:
        raise OverrideError(f"{field_label(field)} must be ≤ {most:g}, got {text.strip()!r}")
    if field in _MAY_BE_ZERO:
        if value < 0:
            raise OverrideError(f"{field_label(field)} must be ≥ 0, got {text.strip()!r}")
    elif value <= 0:
        raise OverrideError(f"{field_label(field)} must be > 0, got {text.strip()!r}")
    return value


def format_value(kind: str, field: str, value, precise: bool = False) -> str:
    """``value`` of ``field`` as shown in the inspector ("unknown" when None)."""
    return format_quantity(value, unit_of(kind, field), digits=12 if precise else 4)


def short_source(key: str | None) -> str:
    """"gajger2017" -> "Gajger 2017"; "measured-gajger2017" -> "Gajger 2017"."""
    if not key:
        return ""
    bare = re.sub(r"^(measured|calibrated|assumed|vendor|nvidia)-", "", key)
    m = re.fullmatch(r"([a-z]+?)[-_]?(\d{4})[a-z]?", bare)
    if m:
        return f"{m.group(1).capitalize()} {m.group(2)}"
    return key


def short_where(where: str | None) -> str:
    """The table, figure or section without the detail after it: "Table 6.1 (also ...)",
    "Table 2.1, compute capability 5.x column" -> "Table 6.1", "Table 2.1"."""
    if not where:
        return ""
    return re.split(r" \(|; |, |: ", where, maxsplit=1)[0].strip()


def provenance_text(record) -> str:
    """One line saying where a value comes from: "Gajger 2017, Table 6.1", "vendor",
    "measurement: Gajger 2017, Table 6.2"."""
    if record is None or (record.value is None and record.provenance is None):
        return "no source"
    source = short_source(record.source) or (record.source_text or "")
    where = short_where(record.where)
    detail = ", ".join(p for p in (source, where) if p)
    if (record.source or "").startswith("assumed-"):  # a value measured on another device
        return f"assumption: {detail}"
    if record.provenance in (None, "document"):
        return detail or "document"
    if record.provenance == "vendor":
        return "vendor"
    return f"{record.provenance}: {detail}" if detail else record.provenance


def record_tooltip(record, sources: dict) -> str:
    """Everything known about one value record, for a tooltip."""
    lines = []
    if record.provenance:
        lines.append(f"provenance: {record.provenance}")
    if record.source:
        lines.append(f"source: {sources.get(record.source, record.source)}")
    if record.source_text:
        lines.append(f"source: {record.source_text}")
    if record.where:
        lines.append(f"where: {record.where}")
    if record.note:
        lines.append(f"note: {record.note}")
    return "\n".join(lines)
