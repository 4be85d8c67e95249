"""A device record of the database as core's value objects: :class:`~gpumodeler.core.device.GPUSpec`
and :class:`~gpumodeler.core.device.LinkSpec`.

``device`` below is a :class:`gpumodeler.db.records.DeviceRecord` (anything with ``kind``,
``name`` and ``value(field)``); this module does not import the records module, which
imports it (lazily, since core's device module loads numpy) for ``to_gpu_spec`` and
``to_link_spec``.
"""
from __future__ import annotations

import functools
from dataclasses import fields as dc_fields

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter

# Database field -> GPUSpec field, where the names differ (the GUI's overrides use it too).
GPU_FIELD_RENAMES = {"fp32_cores_per_sm": "cuda_cores_per_sm",
                     "memory_bandwidth_theoretical_bytes_per_s": "memory_bandwidth_bytes_per_s"}
_GPU_RENAMES = GPU_FIELD_RENAMES
# Link database field -> LinkSpec field.
_LINK_RENAMES = {"link_type": "kind"}


@functools.cache
def _annotations(spec_cls) -> dict[str, str]:
    """Field name -> its annotation text, per spec class (read once: a device has ~60
    fields, and listing them again for each field was most of a conversion's time)."""
    return {f.name: str(f.type) for f in dc_fields(spec_cls)}


def _convert(spec_cls, spec_field: str, value, device):
    annotation = _annotations(spec_cls)[spec_field]
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


def _spec_kwargs(device, spec_cls, renames: dict[str, str]) -> dict:
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


def record_to_gpu_spec(device) -> GPUSpec:
    """The core GPUSpec of a gpu device record (unknown values stay None)."""
    if device.kind != "gpu":
        raise InvalidParameter(f"device '{device.name}' is a {device.kind}, not a GPU")
    return GPUSpec(**_spec_kwargs(device, GPUSpec, _GPU_RENAMES))


def record_to_link_spec(device) -> LinkSpec:
    """The core LinkSpec of a link device record (unknown values stay None)."""
    if device.kind != "link":
        raise InvalidParameter(f"device '{device.name}' is a {device.kind}, not a link")
    return LinkSpec(**_spec_kwargs(device, LinkSpec, _LINK_RENAMES))
