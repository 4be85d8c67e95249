"""The Application tab's typed values: the Variables field and copy sizes, read in the one
number grammar of every field (:func:`gpumodeler.ui.units.parse_exact_number`: ``16Mi``,
``1,000,000``, ``2^20``, ``1e6``) with every digit kept, and shown so that they read back
the same. Messages name the field, as the form labels it."""
from __future__ import annotations

import re

from gpumodeler.ui.units import QuantityError, number_text, parse_exact_number

#: a comma that starts the next ``name=`` of the variables field (other commas group digits)
_NEXT_VARIABLE = re.compile(r",\s*(?=[A-Za-z_]\w*\s*=)")


def parse_variables(text: str) -> dict:
    """The Variables field: ``name=value`` pairs separated by commas, each value in the one
    number grammar (``N=16Mi, a=128``, ``N=1,000,000``), kept exact
    (:func:`~gpumodeler.ui.units.parse_exact_number`); ValueError naming the field."""
    values = {}
    for part in filter(None, (p.strip() for p in _NEXT_VARIABLE.split(text.strip()))):
        name, eq, value = (x.strip() for x in part.partition("="))
        if not eq or not name.isidentifier():
            raise ValueError(f"Variables: write name=value pairs separated by commas (N=16Mi, "
                             f"a=128), got {part!r}")
        if name in values:
            raise ValueError(f"Variables: {name} is given twice")
        try:
            values[name] = parse_exact_number(value)
        except QuantityError as exc:
            raise ValueError(f"Variables: {name}: {exc}") from None
    return values


def variables_text(variables: dict) -> str:
    """The Variables field's text for ``variables``: every digit kept (16777216, not
    1.67772e+07), so finishing the field again changes nothing."""
    return ", ".join(f"{k}={number_text(v)}" for k, v in variables.items())


def size_text(text: str) -> str:
    """A copy size as the model keeps it: an expression of the variables as typed (``4*N``,
    ``1e9``); a number only the field grammar reads (``16Mi``, ``1,000,000``, ``2^20``) as
    its exact digits; anything else as typed, for the model to refuse with its reason."""
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.kernel.expressions import parse
    text = text.strip()
    try:
        parse(text)
        return text
    except ModelError:
        pass
    try:
        return number_text(parse_exact_number(text))
    except QuantityError:
        return text


_SET_HINT = re.compile(r"\(e\.g\. --set ([A-Za-z_]\w*)=([^)]*)\)")


def field_message(message: str) -> str:
    """A model's message as the Application tab shows it: the command line's hint for a
    missing variable (``give a value (e.g. --set N=128)``) names the field that gives it."""
    return _SET_HINT.sub(r"(e.g. \1=\2 in the Variables field)", str(message))


def merge_device_notes(notes) -> list[str]:
    """Notes that differ only by the device they start with (``gpu1: idle power is
    unknown``, ``gpu2: idle power is unknown``) as one note naming every device
    (``gpu1, gpu2: idle power is unknown``), in their first order; other notes unchanged."""
    merged: dict[str, list[str]] = {}
    for note in notes:
        device, sep, rest = note.partition(": ")
        key = rest if sep and device and " " not in device else note
        who = merged.setdefault(key, [])
        if key is not note:
            who.append(device)
    return [f"{', '.join(who)}: {key}" if who else key for key, who in merged.items()]
