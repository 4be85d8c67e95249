"""Mapping between rows of a device database and the value objects (records, core specs).

The one place that knows column order and the field names of core's GPUSpec/LinkSpec.
A raw record is a tuple in ValueRecord field order, so thousands of them can be compared
without building objects (merge of large databases).
"""
from __future__ import annotations

import json
from dataclasses import fields as dc_fields
from functools import lru_cache

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter

from .records import DeviceRecord, DeviceSummary, ValueRecord

# device_values columns in ValueRecord order.
VALUE_COLUMNS = ("value", "unit", "source_key", "source_where", "provenance", "note",
                 "is_default", "source_text")
RECORD_SELECT = ", ".join(VALUE_COLUMNS)
IS_DEFAULT = VALUE_COLUMNS.index("is_default")


@lru_cache(maxsize=1 << 16)
def normalize_name(name: str) -> str:
    """The lookup form of a name or alias: case-folded, whitespace collapsed."""
    return " ".join(str(name).split()).casefold()


def raw_from_row(row) -> tuple:
    """A raw record (tuple in ValueRecord order) from a device_values row in VALUE_COLUMNS.
    The default flag stays 0/1 (equal to False/True), to spare a conversion per row."""
    return tuple(row)


# Building ValueRecords by their slots skips the frozen dataclass's __init__, which costs
# twice as much; a merge report of 25 000 fields holds some 70 000 records.
_new_object = object.__new__
(_set_value, _set_unit, _set_source, _set_where, _set_provenance, _set_note, _set_default,
 _set_source_text) = (getattr(ValueRecord, name).__set__ for name in (
    "value", "unit", "source", "where", "provenance", "note", "is_default", "source_text"))


def record_from_raw(raw: tuple) -> ValueRecord:
    record = _new_object(ValueRecord)
    _set_value(record, raw[0])
    _set_unit(record, raw[1])
    _set_source(record, raw[2])
    _set_where(record, raw[3])
    _set_provenance(record, raw[4])
    _set_note(record, raw[5])
    _set_default(record, bool(raw[6]))
    _set_source_text(record, raw[7])
    return record


def raw_from_record(record: ValueRecord) -> tuple:
    return (record.value, record.unit, record.source, record.where, record.provenance,
            record.note, bool(record.is_default), record.source_text)


def content(raw: tuple) -> tuple:
    """A raw record without its default flag."""
    return raw[:IS_DEFAULT] + raw[IS_DEFAULT + 1:]


def value_rows(device_id: int, values: dict[str, list[tuple]]) -> list[tuple]:
    """device_values rows (device_id, field, VALUE_COLUMNS..., row_order) for raw records."""
    rows = []
    order = 0
    for field_name, raws in values.items():
        for raw in raws:
            rows.append((device_id, field_name, *raw[:IS_DEFAULT], int(bool(raw[IS_DEFAULT])),
                         *raw[IS_DEFAULT + 1:], order))
            order += 1
    return rows


INSERT_VALUE_SQL = (
    "INSERT INTO device_values (device_id, field, " + RECORD_SELECT + ", row_order) "
    "VALUES (" + ", ".join("?" * (len(VALUE_COLUMNS) + 3)) + ")")


def aliases_to_json(aliases) -> str:
    return json.dumps(list(aliases), ensure_ascii=False)


def aliases_from_json(text: str) -> tuple[str, ...]:
    return tuple(json.loads(text or "[]"))


def record_from_rows(device: dict, value_rows_, sources: dict[str, str],
                     shadows_shipped: bool = False) -> DeviceRecord:
    """A DeviceRecord from its devices row (a dict) and its device_values rows."""
    values: dict[str, list[ValueRecord]] = {}
    for field_name, *cols in value_rows_:
        values.setdefault(field_name, []).append(record_from_raw(raw_from_row(cols)))
    used = {r.source for rs in values.values() for r in rs if r.source}
    return DeviceRecord(
        kind=device["kind"], name=device["name"],
        aliases=aliases_from_json(device["aliases"]), origin=device["origin"],
        values=values, family=device["family"],
        sources={k: sources[k] for k in sorted(used) if k in sources},
        shadows_shipped=shadows_shipped)


def summary_from_row(row, shadows_shipped: bool = False) -> DeviceSummary:
    kind, name, aliases, origin, family, vendor, architecture, cc = row
    return DeviceSummary(kind, name, aliases_from_json(aliases), origin, family, vendor,
                         architecture, cc, shadows_shipped)


# Database field -> GPUSpec field, where the names differ (the GUI's overrides use it too).
GPU_FIELD_RENAMES = {"fp32_cores_per_sm": "cuda_cores_per_sm",
                     "memory_bandwidth_theoretical_bytes_per_s": "memory_bandwidth_bytes_per_s"}
_GPU_RENAMES = GPU_FIELD_RENAMES
# Link database field -> LinkSpec field.
_LINK_RENAMES = {"link_type": "kind"}


def _convert(spec_cls, spec_field: str, value, device: DeviceRecord):
    annotation = {f.name: f.type for f in dc_fields(spec_cls)}[spec_field]
    if value is None:
        return None
    try:
        if annotation.startswith("int"):
            if float(value) != int(value):
                raise ValueError
            return int(value)
        if annotation.startswith("float"):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise InvalidParameter(
            f"device '{device.name}': {spec_field} = {value!r} is not a valid "
            f"{annotation.split(' ')[0]}") from None


def _spec_kwargs(device: DeviceRecord, spec_cls, renames: dict[str, str]) -> dict:
    """Keyword arguments for ``spec_cls`` from the default values of ``device``.

    A field the database knows nothing about is passed as None, except where core gives the
    field a non-None default (warp_size, issue rate, λ, link kind): there the field is left
    out so core's documented default applies rather than a None core does not expect.
    """
    spec_fields = {f.name: f for f in dc_fields(spec_cls)}
    inverse = {v: k for k, v in renames.items()}
    kwargs = {"name": device.name}
    for spec_field, f in spec_fields.items():
        if spec_field == "name":
            continue
        db_field = inverse.get(spec_field, spec_field)
        value = device.value(db_field)
        if value is None and f.default is not None:
            continue
        kwargs[spec_field] = _convert(spec_cls, spec_field, value, device)
    return kwargs


def record_to_gpu_spec(device: DeviceRecord) -> GPUSpec:
    if device.kind != "gpu":
        raise InvalidParameter(f"device '{device.name}' is a {device.kind}, not a GPU")
    return GPUSpec(**_spec_kwargs(device, GPUSpec, _GPU_RENAMES))


def record_to_link_spec(device: DeviceRecord) -> LinkSpec:
    if device.kind != "link":
        raise InvalidParameter(f"device '{device.name}' is a {device.kind}, not a link")
    return LinkSpec(**_spec_kwargs(device, LinkSpec, _LINK_RENAMES))
