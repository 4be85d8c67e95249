"""What a device database holds, as value objects: devices and their value records.

A field may carry several records when sources disagree; exactly one is the default, the
value the model uses. ``value is None`` means unknown and is never filled in from elsewhere.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, Sequence

Value = int | float | str | None


@dataclass(frozen=True, slots=True)
class ValueRecord:
    """One value of one field, with where it comes from.

    ``source`` is a key of the database's sources table (its citation is in
    ``DeviceRecord.sources``); ``source_text`` is a free-text origin for values no catalogued
    source backs (a user's own measurement). ``where`` is the table, figure or page.
    ``provenance`` is document, vendor, measurement, calibration or user (None for an
    unknown nobody vouched for).
    """

    value: Value
    unit: str
    source: str | None = None
    where: str | None = None
    provenance: str | None = None
    note: str | None = None
    is_default: bool = False
    source_text: str | None = None

    @property
    def known(self) -> bool:
        return self.value is not None

    def content(self) -> tuple:
        """Everything but the default flag: two records with equal content say the same."""
        return (self.value, self.unit, self.source, self.where, self.provenance, self.note,
                self.source_text)


def _frozen(mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class DeviceRecord:
    """A device as the catalog shows it: identity, origin and every value record.

    ``origin`` is shipped, user or imported; ``shadows_shipped`` tells that a user or
    imported entry hides a shipped device of the same name. ``sources`` maps the source
    keys the records use to their citations.
    """

    kind: str
    name: str
    aliases: tuple[str, ...]
    origin: str
    values: Mapping[str, Sequence[ValueRecord]]  # tuples once made (__post_init__)
    family: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    shadows_shipped: bool = False

    def __post_init__(self):
        object.__setattr__(self, "aliases", tuple(self.aliases))
        object.__setattr__(self, "values", _frozen((k, tuple(v)) for k, v in self.values.items()))
        object.__setattr__(self, "sources", _frozen(self.sources))

    def default_record(self, field_name: str) -> ValueRecord | None:
        """The record the model uses for ``field_name``, or None when the field is absent."""
        records = self.values.get(field_name, ())
        for record in records:
            if record.is_default:
                return record
        return records[0] if records else None

    def value(self, field_name: str) -> Value:
        """The default value of ``field_name``; None when unknown or absent."""
        record = self.default_record(field_name)
        return None if record is None else record.value

    def to_gpu_spec(self):
        """The core GPUSpec of this device (unknown values stay None)."""
        from .device_specs import record_to_gpu_spec  # lazy: core.device loads numpy
        return record_to_gpu_spec(self)

    def to_link_spec(self):
        """The core LinkSpec of this device (unknown values stay None)."""
        from .device_specs import record_to_link_spec  # lazy: core.device loads numpy
        return record_to_link_spec(self)


@dataclass(frozen=True, slots=True)
class DeviceSummary:
    """The columns of a device list: cheap to load for thousands of devices."""

    kind: str
    name: str
    aliases: tuple[str, ...]
    origin: str
    family: str | None = None
    vendor: str | None = None
    architecture: str | None = None
    compute_capability: str | None = None
    shadows_shipped: bool = False
