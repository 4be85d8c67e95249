"""The types a project's values must have, checked when a project is read and before use.

A project file stores a device's and a link's overrides, a launch's variables and its
occupancy override as JSON: a hand-edited or foreign file can hold ``{"sms": "132"}``,
``{"copy_engines": "two"}``, a key no link has, ``NaN`` or text where a number belongs.
Each is refused with one line naming the element, the key, the type found and the type
expected (:class:`~gpumodeler.core.errors.InvalidParameter`, ``item`` the element's id),
instead of failing later inside the model (a ``TypeError``) or printing "∞" in a report.

The expected types come from the fields of :class:`~gpumodeler.core.device.GPUSpec` and
:class:`~gpumodeler.core.device.LinkSpec`: a whole number for ``int`` fields (a float
with no fraction, as JSON may write it, is accepted), a number for ``float`` fields, text
for ``str`` fields. Every number a device or a link carries (counts, clocks, rates, powers,
bandwidths, times) is finite and >= 0; a link's λ is > 0.
"""
from __future__ import annotations

import math
import numbers
import sys
from dataclasses import fields

from gpumodeler.core.errors import InvalidParameter, shown

#: what each kind of value is called in messages
_NAMES = {"whole": "a whole number", "number": "a number", "text": "a text"}


def type_name(value) -> str:
    """The JSON type of ``value`` for a message: text, a whole number, a number, …"""
    if isinstance(value, (bool, np_bool())):
        return "true/false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "text"
    if isinstance(value, numbers.Integral):
        return "a whole number"
    if isinstance(value, numbers.Real):
        return "a number" if math.isfinite(value) else "a number that is not finite"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def np_bool():
    """numpy's bool type when numpy is loaded (a flag is no number), else bool."""
    np = sys.modules.get("numpy")
    return np.bool_ if np is not None else bool


def _kind(annotation: object) -> str | None:
    """'whole', 'number' or 'text' from a dataclass field's annotation (text, as the
    modules use postponed annotations); None for a field that is no override."""
    first = str(annotation).split("|")[0].strip()
    return {"int": "whole", "float": "number", "str": "text"}.get(first)


def _spec_kinds(cls) -> dict:
    return {f.name: k for f in fields(cls) if (k := _kind(f.type)) is not None}


_KINDS: dict = {}


def field_kinds(spec: str) -> dict:
    """{field: 'whole' | 'number' | 'text'} of 'gpu' (GPUSpec) or 'link' (LinkSpec)."""
    if spec not in _KINDS:
        from gpumodeler.core.device import GPUSpec, LinkSpec
        _KINDS["gpu"] = _spec_kinds(GPUSpec)
        _KINDS["link"] = _spec_kinds(LinkSpec)
    return _KINDS[spec]


def check_value(value, kind: str, where: str, key: str, *, item=None,
                positive: bool = False, nullable: bool = True, signed: bool = False) -> None:
    """InvalidParameter unless ``value`` is of ``kind`` (and, for numbers, finite and >= 0,
    > 0 with ``positive``, of any sign with ``signed``); ``where`` and ``key`` name it in
    the message."""
    if value is None and nullable:
        return
    expected = _NAMES[kind]
    if kind == "text":
        ok = isinstance(value, str)
    else:
        # numpy's numbers too (they register as numbers.Real / Integral)
        ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np_bool()))
        if ok and kind == "whole" and not isinstance(value, numbers.Integral):
            ok = math.isfinite(value) and float(value).is_integer()
    if not ok:
        raise InvalidParameter(f"{where}: {key} is {type_name(value)} ({shown(value, 40)}); "
                               f"expected {expected}", item=item)
    if kind != "text":
        bound = "" if signed else (" > 0" if positive else " >= 0")
        if not math.isfinite(value):
            raise InvalidParameter(f"{where}: {key} is a number that is not finite "
                                   f"({shown(value)}); expected {expected}{bound}, finite",
                                   item=item)
        if signed:
            return
        bound = bound.strip()
        if value < 0 or (positive and value == 0):
            raise InvalidParameter(f"{where}: {key} is {shown(value, 40)}; expected {expected} "
                                   f"{bound} (a finite number)", item=item)


def check_overrides(overrides, spec: str, where: str, *, item=None, extra=()) -> None:
    """Refuse overrides of a GPU (``spec`` 'gpu'), a link ('link') or a host ('host': any
    key; numbers finite, values numbers or text) that are not an object, name an unknown
    field, or hold a value of another type. ``extra``: further keys allowed (text)."""
    if not isinstance(overrides, dict):
        raise InvalidParameter(f"{where}: the overrides are {type_name(overrides)}; expected an "
                               f"object of field: value", item=item)
    if spec == "host":
        for key, value in overrides.items():
            kind = "text" if isinstance(value, str) else "number"
            check_value(value, kind, where, f"override {key}", item=item)
        return
    kinds = field_kinds(spec)
    allowed = {k: v for k, v in kinds.items() if k != "name"}
    for key, value in overrides.items():
        if key in extra:
            continue
        if key not in allowed:
            valid = ", ".join(sorted(set(allowed) | set(extra)))
            raise InvalidParameter(f"{where}: unknown override {shown(key, 40)}; valid: {valid}",
                                   item=item)
        check_value(value, allowed[key], where, f"override {key}", item=item,
                    positive=key.startswith("lambda_"))


__all__ = ["check_overrides", "check_value", "field_kinds", "type_name"]
