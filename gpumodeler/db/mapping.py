"""Mapping between rows of a device database and the value objects (records, core specs).

The one place that knows column order and the field names of core's GPUSpec/LinkSpec
and LatencyTable.
A raw record is a tuple in ValueRecord field order, so thousands of them can be compared
without building objects (merge of large databases).
"""
from __future__ import annotations

import json
from functools import lru_cache

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES, MEMORY_LEVELS, LatencyTable

from .errors import aliases_error
from .device_specs import (  # noqa: F401  (re-exported)
    GPU_FIELD_RENAMES,
    record_to_gpu_spec,
    record_to_link_spec,
)
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
    """The aliases column (a JSON list of names); DatabaseFormatError when it is not one."""
    try:
        aliases = json.loads(text or "[]")
    except (TypeError, ValueError, RecursionError):
        raise aliases_error(text) from None
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise aliases_error(text)
    return tuple(aliases)


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


# --- latency tables (device kind "latency_table") -----------------------------------------
# Database field -> LatencyTable attribute: lat_<class> and mem_<level> fill the
# instruction_cycles and memory_cycles dicts, the other cycle fields keep their names.
LATENCY_SCALAR_FIELDS = ("ilp_cycles", "branch_taken_cycles", "branch_not_taken_cycles",
                         "barrier_cycles", "block_replacement_cycles",
                         "cuda_core_default_cycles")


def latency_table_fields(table: LatencyTable) -> dict[str, object]:
    """The database fields of a core LatencyTable (unknown = None), in FIELDS order."""
    out: dict[str, object] = {"architecture": table.architecture}
    out.update({f"lat_{c}": table.instruction_cycles.get(c) for c in INSTRUCTION_CLASSES})
    out.update({f"mem_{m}": table.memory_cycles.get(m) for m in MEMORY_LEVELS})
    out.update({f: getattr(table, f) for f in LATENCY_SCALAR_FIELDS})
    return out


def record_to_latency_table(device: DeviceRecord) -> LatencyTable:
    """The core LatencyTable of a latency_table device: its default values (unknown stays
    unknown: absent from the dicts, None for the scalars). ``key`` is the device name,
    ``name`` its first alias (else the name); ``source`` lists the citations and places the
    values come from; ``notes`` the distinct notes of the default records."""
    if device.kind != "latency_table":
        raise InvalidParameter(f"device '{device.name}' is a {device.kind}, not a latency table")

    def cycles(field_name):
        value = device.value(field_name)
        if value is not None and (isinstance(value, (str, bool)) or value < 0):
            raise InvalidParameter(f"latency table '{device.name}': {field_name} = {value!r} "
                                   f"is not a number of cycles >= 0")
        return value

    instructions = {c: v for c in INSTRUCTION_CLASSES if (v := cycles(f"lat_{c}")) is not None}
    memory = {m: v for m in MEMORY_LEVELS if (v := cycles(f"mem_{m}")) is not None}
    places: dict[str, list[str]] = {}
    notes: list[str] = []
    for field_name in device.values:
        record = device.default_record(field_name)
        if record is None or record.value is None:
            continue
        origin = (device.sources.get(record.source, record.source) if record.source
                  else record.source_text or record.provenance or "unknown origin")
        if record.where and record.where not in places.setdefault(origin, []):
            places[origin].append(record.where)
        if record.note and record.note not in notes:
            notes.append(record.note)
    source = "; ".join(f"{origin} ({', '.join(where)})" if where else origin
                       for origin, where in places.items())
    architecture = device.value("architecture")
    return LatencyTable(
        key=device.name, name=device.aliases[0] if device.aliases else device.name,
        architecture=str(architecture) if architecture is not None else "",
        source=source, instruction_cycles=instructions, memory_cycles=memory,
        notes=tuple(notes), **{f: cycles(f) for f in LATENCY_SCALAR_FIELDS})
